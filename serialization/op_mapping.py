"""Which VHLO encodings encode each StableHLO op (from the spec's `vhlo:` entries): the
encodings of an op oldest first, the op and encoding of a VHLO op name, the VHLO attribute
names in properties order, and the StableHLO struct attributes that VHLO spreads out as
attributes of the op."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from stablehlo_ref import spec as S

# struct attribute kinds whose fields VHLO carries as attributes of the op (spec: `vhlo: flattened`)
_STRUCT_KINDS = frozenset(st.name for st in S.structs() if st.vhlo == "flattened")
_DOT_ALGORITHM_FIELDS = S.struct("dot_algorithm").field_names
# VHLO's names of the channel handle's fields
_CHANNEL_FIELDS = {"channel_id": "handle", "channel_type": "type"}


def flattened_structs(op_name: str) -> List[Tuple[S.AttributeSpec, S.StructSpec]]:
    """The attributes of StableHLO op `op_name` whose struct VHLO spreads out, with the struct."""
    return [(a, S.struct(a.kind)) for a in S.op(op_name).attributes if a.kind in _STRUCT_KINDS]


class _Tables:
    def __init__(self):
        self.by_vhlo: Dict[str, Tuple[S.OpSpec, S.VhloSpec]] = {}
        self.encodings: Dict[str, List[S.VhloSpec]] = {}
        self.by_short: Dict[str, str] = {}      # short name -> op name (stablehlo's first)
        for o in S.ops():
            if not o.vhlo:
                continue
            self.encodings[o.name] = list(o.vhlo)
            if o.short_name not in self.by_short or o.name.startswith("stablehlo."):
                self.by_short[o.short_name] = o.name
            for v in o.vhlo:
                if v.name not in self.by_vhlo or o.name.startswith("stablehlo."):
                    self.by_vhlo[v.name] = (o, v)
        s = S.load()
        self.type_since = {n.split(".", 1)[1]: f for n, f, _ in s.vhlo_types}
        self.attr_since = {n.split(".", 1)[1]: f for n, f, _ in s.vhlo_attributes}

    def stablehlo_name(self, short: str) -> Optional[str]:
        """The op with a VHLO encoding named `short` after its dialect (stablehlo's first)."""
        return self.by_short.get(short)

    def latest(self, op_name: str) -> S.VhloSpec:
        return self.encodings[op_name][-1]


_TABLES: Optional[_Tables] = None


def tables() -> _Tables:
    global _TABLES
    if _TABLES is None:
        _TABLES = _Tables()
    return _TABLES


def _sorted_names(names) -> List[str]:
    return sorted((n.rstrip(".") for n in names), key=lambda n: n.encode())


def inherent_names(op_name: str) -> Optional[List[str]]:
    """The VHLO op's declared attributes in properties order (by name), or None if unknown."""
    names = _INHERENT.get(op_name, False)
    if names is False:
        if op_name == "builtin.module":
            names = ["sym_name", "sym_visibility"]
        elif op_name == "builtin.unrealized_conversion_cast":
            names = []
        elif op_name.startswith("sdy.") and S.has_op(op_name):
            # ODS properties of an sdy op: its attributes, sorted by name
            names = _sorted_names(a.name for a in S.op(op_name).attributes)
        else:
            t = tables().by_vhlo.get(op_name)
            names = None if t is None else _sorted_names(t[1].attributes)
        _INHERENT[op_name] = names
    return names


_INHERENT: Dict[str, Optional[List[str]]] = {}


_VERSIONS: Dict[str, tuple] = {}


def _ver(v: str):
    r = _VERSIONS.get(v)
    if r is None:
        r = _VERSIONS[v] = S.parse_version(v)
    return r


# values (VType/VAttr) already checked to be expressible at a target version, per target
