"""Which VHLO encodings encode each StableHLO op (from the spec's `vhlo:` entries): the
encodings of an op oldest first, the op and encoding of a VHLO op name, the VHLO attribute
names in properties order, and the StableHLO struct attributes that VHLO spreads out as
attributes of the op."""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from stablehlo_ref import spec as S

_STRUCT_KINDS = {"conv_dimension_numbers", "dot_dimension_numbers", "gather_dimension_numbers",
                 "scatter_dimension_numbers", "dot_algorithm", "channel_handle"}
_DOT_ALGORITHM_FIELDS = ("lhs_precision_type", "rhs_precision_type", "accumulation_type", "lhs_component_count",
                         "rhs_component_count", "num_primitive_operations", "allow_imprecise_accumulation")
_CHANNEL_FIELDS = {"channel_id": "handle", "channel_type": "type"}


class _Tables:
    def __init__(self):
        self.by_vhlo: Dict[str, Tuple[S.OpSpec, S.VhloSpec]] = {}
        self.encodings: Dict[str, List[S.VhloSpec]] = {}
        for o in S.ops():
            if not o.vhlo:
                continue
            self.encodings[o.name] = list(o.vhlo)
            for v in o.vhlo:
                if v.name not in self.by_vhlo or o.name.startswith("stablehlo."):
                    self.by_vhlo[v.name] = (o, v)
        s = S.load()
        self.type_since = {n.split(".", 1)[1]: f for n, f, _ in s.vhlo_types}
        self.attr_since = {n.split(".", 1)[1]: f for n, f, _ in s.vhlo_attributes}

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
