"""Shardy (`sdy`) in portable artifacts, as JAX writes them (jax.export with the Shardy
partitioner: `serialize_portable_artifact(..., allow_other_dialects)`).

Such an artifact mixes VHLO with the sdy dialect: `sdy.*` ops stay sdy ops (their properties are
their attributes, sorted by name), their attributes are written with Shardy's own bytecode
encoding (shardy/dialect/sdy/ir/bytecode.td: a varint code naming the attribute, then its
parameters), and `builtin.unrealized_conversion_cast` ops stand between VHLO-typed values and the
builtin-typed operands and results of sdy ops. Func argument/result attributes such as
`sdy.sharding` keep their sdy value inside the VHLO dictionary.

- `SdyCodec`: the sdy attribute encodings (reader and writer).
- `insert_casts(root)`: after StableHLO -> VHLO, put the casts where upstream's conversion puts
  them (right after the value's definition, or at the top of its block for a block argument;
  the latest made first), one per value and direction.
- `remove_casts(root)`: after VHLO -> StableHLO, drop them again (each is an identity)."""
from __future__ import annotations

from typing import Dict, List, Optional

from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import sdy as Y
from stablehlo_ref.ir.attributes import StringAttr, SymbolRefAttr
from stablehlo_ref.ir.core import Operation
from stablehlo_ref.serialization.dialect_codec import DialectCodec
from stablehlo_ref.serialization.vhlo_values import VType

CAST = "builtin.unrealized_conversion_cast"

# bytecode codes (shardy/dialect/sdy/ir/bytecode.td, "assigned index")
_CODES = {"manual_axes": 0, "mesh_axis": 1, "mesh": 2, "sub_axis_info": 3, "axis_ref": 4,
          "dimension_sharding": 5, "sharding": 6, "sharding_per_value": 7, "dim_mapping": 8,
          "tensor_mapping": 9, "op_sharding_rule": 10, "axis_ref_list": 11}
_SHARDING_V2, _PER_VALUE_V2, _SHARDING_V3 = 15, 16, 17


def _svarints(w, values):
    w.varint(len(values))
    for v in values:
        w.svarint(v)


def _read_svarints(r) -> tuple:
    n = r.varint("a list length")
    if n > r.cur.remaining:
        r.fail(f"list of {n} integers does not fit the entry")
    return tuple(r.svarint() for _ in range(n))


def _expect(r, a, kind: str):
    if not isinstance(a, Y.SdyAttr) or a.kind != kind:
        r.fail(f"expected an sdy {kind} attribute, found {a!r}")
    return a


class SdyCodec(DialectCodec):
    name = "sdy"

    def owns_attr(self, a) -> bool:
        return isinstance(a, Y.SdyAttr)

    # ------------------------------------------------------------------ write
    def write_attr(self, a: Y.SdyAttr, w):
        k, p = a.kind, a.params
        if k == "sharding":
            mesh_or_ref, dims, replicated, unreduced, red = p
            code = _CODES[k] if not unreduced else (_SHARDING_V2 if red == "sum" else _SHARDING_V3)
            w.varint(code)
            w.attr(mesh_or_ref)
            w.list(dims, w.attr)
            w.list(replicated, w.attr)
            if unreduced:
                w.list(unreduced, w.attr)
                if red != "sum":
                    w.svarint(Y.REDUCTION_OPS.index(red))
            return
        if k == "sharding_per_value":
            w.varint(_PER_VALUE_V2 if any(s.params[3] for s in p[0]) else _CODES[k])
            w.list(p[0], w.attr)
            return
        code = _CODES.get(k)
        if code is None:
            raise SerializationError(f"sdy attribute {k} has no bytecode encoding here")
        w.varint(code)
        if k == "manual_axes":
            w.list([StringAttr(n) for n in p[0]], w.attr)
        elif k == "mesh_axis":
            w.string(p[0])
            w.svarint(p[1])
        elif k == "mesh":
            w.list(p[0], w.attr)
            _svarints(w, p[1])
        elif k == "sub_axis_info":
            w.svarint(p[0])
            w.svarint(p[1])
        elif k == "axis_ref":
            w.string(p[0])
            w.optional_attr(p[1])
        elif k == "dimension_sharding":
            w.list(p[0], w.attr)
            w.byte(1 if p[1] else 0)
            w.varint(0 if p[2] is None else (int(p[2]) << 1) | 1)
        elif k == "dim_mapping":
            _svarints(w, p[0])
        elif k in ("tensor_mapping", "axis_ref_list"):
            w.list(p[0], w.attr)
        elif k == "op_sharding_rule":
            sizes, ins, outs, red, need, perm, blocked, custom = p
            _svarints(w, sizes)
            w.list(ins, w.attr)
            w.list(outs, w.attr)
            for fs in (red, need, perm, blocked):
                _svarints(w, fs)
            w.byte(1 if custom else 0)

    # ------------------------------------------------------------------ read
    def read_attr(self, r):
        code = r.varint("an sdy attribute code")
        if code in (_CODES["sharding"], _SHARDING_V2, _SHARDING_V3):
            mesh_or_ref = r.attr()
            if not isinstance(mesh_or_ref, SymbolRefAttr):
                _expect(r, mesh_or_ref, "mesh")
            dims = tuple(_expect(r, x, "dimension_sharding") for x in r.list(r.attr))
            replicated = tuple(_expect(r, x, "axis_ref") for x in r.list(r.attr))
            unreduced, red = (), "sum"
            if code != _CODES["sharding"]:
                unreduced = tuple(_expect(r, x, "axis_ref") for x in r.list(r.attr))
                if code == _SHARDING_V3:
                    i = r.svarint()
                    if not 0 <= i < len(Y.REDUCTION_OPS):
                        r.fail(f"unknown sdy reduction op {i}")
                    red = Y.REDUCTION_OPS[i]
            return Y.sharding(mesh_or_ref, dims, replicated, unreduced, red)
        if code in (_CODES["sharding_per_value"], _PER_VALUE_V2):
            return Y.SdyAttr("sharding_per_value", (tuple(_expect(r, x, "sharding") for x in r.list(r.attr)),))
        if code == 0:
            names = []
            for x in r.list(r.attr):
                if not isinstance(x, StringAttr):
                    r.fail("sdy manual_axes: expected string attributes")
                names.append(x.value)
            return Y.SdyAttr("manual_axes", (tuple(names),))
        if code == 1:
            return Y.mesh_axis(r.string(), r.svarint())
        if code == 2:
            axes = tuple(_expect(r, x, "mesh_axis") for x in r.list(r.attr))
            return Y.SdyAttr("mesh", (axes, _read_svarints(r)))
        if code == 3:
            return Y.SdyAttr("sub_axis_info", (r.svarint(), r.svarint()))
        if code == 4:
            name = r.string()
            sub = r.optional_attr()
            if sub is not None:
                _expect(r, sub, "sub_axis_info")
            return Y.SdyAttr("axis_ref", (name, sub))
        if code == 5:
            axes = tuple(_expect(r, x, "axis_ref") for x in r.list(r.attr))
            closed = r.byte("a bool") != 0
            v = r.varint("an optional priority")
            return Y.dim_sharding(axes, closed, (v >> 1) if v & 1 else None)
        if code == 8:
            return Y.SdyAttr("dim_mapping", (_read_svarints(r),))
        if code == 9:
            return Y.SdyAttr("tensor_mapping", (tuple(_expect(r, x, "dim_mapping") for x in r.list(r.attr)),))
        if code == 10:
            sizes = _read_svarints(r)
            ins = tuple(_expect(r, x, "tensor_mapping") for x in r.list(r.attr))
            outs = tuple(_expect(r, x, "tensor_mapping") for x in r.list(r.attr))
            groups = [_read_svarints(r) for _ in range(4)]
            custom = r.byte("a bool") != 0
            return Y.SdyAttr("op_sharding_rule", (sizes, ins, outs, *groups, custom))
        if code == 11:
            return Y.SdyAttr("axis_ref_list", (tuple(_expect(r, x, "axis_ref") for x in r.list(r.attr)),))
        r.fail(f"sdy attribute code {code} is not supported by this reader (it reads meshes, shardings, "
               "manual axes and sharding rules)")


# ---------------------------------------------------------------------- casts

def _world(op_name: str) -> Optional[str]:
    if op_name.startswith("vhlo."):
        return "vhlo"
    if op_name.startswith("sdy."):
        return "builtin"
    return None


def insert_casts(root, type_to_vhlo, type_from_vhlo) -> None:
    """Put `builtin.unrealized_conversion_cast` ops between VHLO-typed values and sdy ops (and
    between sdy results and VHLO ops), as upstream's conversion leaves them."""
    defs: Dict[int, tuple] = {}         # id(value) -> (block, defining op or None)
    made: Dict[tuple, object] = {}      # (id(value), world) -> cast result
    pending: Dict[int, List[tuple]] = {}   # id(block) -> [(anchor op or None, cast op)]

    def cast_of(v, world, user):
        key = (id(v), world)
        r = made.get(key)
        if r is not None:
            return r
        t = type_to_vhlo(v.type) if world == "vhlo" else type_from_vhlo(v.type)
        block, anchor = defs[id(v)]
        # a cast into VHLO is made for (and located at) its first VHLO user; a cast out of VHLO
        # for the value itself (located at its definition)
        if world == "vhlo":
            loc = user.location
        else:
            loc = anchor.location if anchor is not None else block_arg_loc(block, v)
        c = Operation(CAST, [v], [t], location=loc if loc is not None else _unknown())
        pending.setdefault(id(block), []).append((anchor, c))
        made[key] = c.results[0]
        return c.results[0]

    def walk_block(block):
        for a in block.arguments:
            defs[id(a)] = (block, None)
        for op in block.operations:
            world = _world(op.name)
            if world is not None:
                ops_ = op.operands
                for i, v in enumerate(ops_):
                    is_vhlo = isinstance(v.type, VType)
                    if (world == "vhlo") != is_vhlo and id(v) in defs:
                        ops_[i] = cast_of(v, world, op)
            for r in op.results:
                defs[id(r)] = (block, op)
            for reg in op.regions:
                for b in reg.blocks:
                    walk_block(b)
        return block

    blocks = []

    def collect(op):
        for reg in op.regions:
            for b in reg.blocks:
                blocks.append(b)
                for o in b.operations:
                    collect(o)

    for reg in root.regions:
        for b in reg.blocks:
            walk_block(b)
    if not pending:
        return
    collect(root)
    for b in blocks:
        casts = pending.get(id(b))
        if not casts:
            continue
        after: Dict[int, list] = {}
        for anchor, c in casts:
            after.setdefault(id(anchor) if anchor is not None else None, []).append(c)
        out = list(reversed(after.get(None, [])))
        for op in b.operations:
            out.append(op)
            extra = after.get(id(op))
            if extra:
                out.extend(reversed(extra))
        b.operations = out


def block_arg_loc(block, v):
    locs = getattr(block, "arg_locations", None) or []
    i = block.arguments.index(v)
    return locs[i] if i < len(locs) and locs[i] is not None else None


def _unknown():
    from stablehlo_ref.ir.attributes import UNKNOWN_LOC
    return UNKNOWN_LOC


def remove_casts(root) -> None:
    """Drop `builtin.unrealized_conversion_cast` ops (identities once both sides are StableHLO)."""
    repl: Dict[int, object] = {}

    def strip(op):
        for reg in op.regions:
            for b in reg.blocks:
                keep = []
                for o in b.operations:
                    if o.name == CAST and len(o.operands) == 1 and len(o.results) == 1:
                        src = o.operands[0]
                        repl[id(o.results[0])] = repl.get(id(src), src)
                        continue
                    if repl:
                        o.operands = [repl.get(id(v), v) for v in o.operands]
                    keep.append(o)
                    strip(o)
                b.operations = keep

    strip(root)


def has_sdy(root) -> bool:
    """Whether a module op holds sdy ops (meshes among its top-level ops, or any sdy op)."""
    stack = [root]
    while stack:
        o = stack.pop()
        if o.name.startswith("sdy.") or o.name == CAST:
            return True
        for reg in o.regions:
            for b in reg.blocks:
                stack.extend(b.operations)
    return False
