"""StableHLO IR -> VHLO IR at the current version: types, attributes (struct attributes spread
out, absent attributes filled with their defaults) and ops, with a short path that makes light
`LeafOp`s directly at the target version for ops that need nothing more."""
from __future__ import annotations

from typing import Dict, Optional

import numpy as np

from stablehlo_ref import spec as S
from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir import types as T
from stablehlo_ref.ir.core import Block, Operation, Region, Value
from stablehlo_ref.ir.locations import op_location, source_location
from stablehlo_ref.serialization.builtin_codec import float_to_raw
from stablehlo_ref.serialization.defaults import default_value
from stablehlo_ref.serialization.encoding import INT64_MIN
from stablehlo_ref.serialization.numbering import Direct, LeafOp as VLeaf
from stablehlo_ref.ir.sdy import SdyAttr
from stablehlo_ref.serialization.op_mapping import _STRUCT_KINDS, _ver, tables
from stablehlo_ref.serialization.versions import _check_type_at, _down_plan, _ok_set
from stablehlo_ref.serialization.vhlo_codec import ENUM_SPECS, VHLO_ENUM_OF_KIND, enum_attr, vhlo_element_kind
from stablehlo_ref.serialization.vhlo_values import (VAttr, VType, VValue, _bool, _f64_raw, _i64, _i64_tensor,
                                                     _memo_by_value, _storage_range, _string, _tensor)

_API_VERSIONS = S.enum("custom_call_api_version")   # the IR holds it as its i32 value
_TO_VHLO_IDS: Dict[int, tuple] = {}     # id(type) -> (type, VType): keeps the type alive
_TO_VHLO_VALUES: Dict[object, VType] = {}


def type_to_vhlo(t) -> VType:
    """StableHLO type -> VHLO type; memoized (by identity, then by value) so that equal types
    become one VType object, which numbering then finds by identity."""
    e = _TO_VHLO_IDS.get(id(t))
    if e is not None and e[0] is t:
        return e[1]
    vt = _memo_by_value(_TO_VHLO_VALUES, t, _type_to_vhlo)
    if len(_TO_VHLO_IDS) >= 16384:
        _TO_VHLO_IDS.clear()
    _TO_VHLO_IDS[id(t)] = (t, vt)
    return vt


def _type_to_vhlo(t) -> VType:
    if isinstance(t, VType):
        return t
    if isinstance(t, T.ElementType):
        if t.kind == "complex":
            return VType("complex_v1", (type_to_vhlo(T.ELEMENT_TYPES[t.name[8:-1]]),))
        return VType(vhlo_element_kind(t))
    if isinstance(t, T.TensorType):
        enc = None
        if t.encoding is not None:
            e = t.encoding
            if isinstance(e, A.StructAttr) and e.name in ("bounds", "type_extensions"):
                enc = VAttr("type_extensions_v1", (tuple(INT64_MIN if d is None else d for d in e.get("bounds")),))
            else:
                raise SerializationError(f"tensor encoding {e} cannot be written in a portable artifact")
        shape = tuple(INT64_MIN if d is None else d for d in t.shape)
        return VType("tensor_v1", (shape, type_to_vhlo(t.element_type), enc))
    if isinstance(t, T.QuantizedType):
        signed = t.storage_type.kind == "signed"
        lo, hi = _storage_range(t.storage_type, signed)
        mn = lo if t.storage_min is None else t.storage_min
        mx = hi if t.storage_max is None else t.storage_max
        st, ex = type_to_vhlo(t.storage_type), type_to_vhlo(t.expressed_type)
        flags = 1 if signed else 0
        if t.quantized_dimension is None:
            return VType("quant_v1", (flags, st, ex, _f64_raw(t.scales[0]), t.zero_points[0], mn, mx))
        return VType("quant_per_axis_v1", (flags, st, ex, t.quantized_dimension, mn, mx,
                                           tuple(_f64_raw(s) for s in t.scales), tuple(t.zero_points)))
    if isinstance(t, T.TokenType):
        return VType("token_v1")
    if isinstance(t, T.TupleType):
        return VType("tuple_v1", (tuple(type_to_vhlo(x) for x in t.types),))
    if isinstance(t, T.FunctionType):
        return VType("func_v1", (tuple(type_to_vhlo(x) for x in t.inputs), tuple(type_to_vhlo(x) for x in t.results)))
    if isinstance(t, T.UnrankedTensorType):
        return VType("unranked_tensor_v1", (type_to_vhlo(t.element_type),))
    if isinstance(t, T.NoneType):
        return VType("none_v1")
    if isinstance(t, T.OpaqueType):
        return _opaque_type_to_vhlo(t)
    raise SerializationError(f"type {t} cannot be written in a portable artifact")


def _parse_types(text: str):
    from stablehlo_ref.text.parser import Parser
    p = Parser(text)
    out = [p.parse_type()]
    while p.sc.accept(","):
        out.append(p.parse_type())
    return out


def _opaque_type_to_vhlo(t) -> VType:
    text = t.text.strip()
    try:
        if text.startswith("memref<") and text.endswith(">"):
            tt = _parse_types("tensor<" + text[7:])[0]
            vt = type_to_vhlo(tt)
            return VType("buffer_v1", (vt.args[0], vt.args[1]))
        if text.startswith("!stablehlo.future<") and text.endswith(">"):
            inner = text[len("!stablehlo.future<"):-1]
            return VType("future_v1", (tuple(type_to_vhlo(x) for x in _parse_types(inner)),))
    except SerializationError:
        raise
    except Exception:
        pass
    raise SerializationError(f"type {text} cannot be written in a portable artifact")


def attr_to_vhlo(a, where: str = "") -> VAttr:
    if isinstance(a, (VAttr, SdyAttr)):     # (sdy attributes keep their own encoding)
        return a
    if isinstance(a, A.BoolAttr):
        return _bool(a.value)
    if isinstance(a, A.IntegerAttr):
        t = a.type if a.type is not None else T.ELEMENT_TYPES["i64"]
        if t.kind == "bool":
            return _bool(bool(a.value))
        return VAttr("integer_v1", (type_to_vhlo(t), int(a.value)))
    if isinstance(a, A.FloatAttr):
        return VAttr("float_v1", (type_to_vhlo(a.type), float_to_raw(a.value, a.type)))
    if isinstance(a, A.StringAttr):
        if a.type is not None:
            raise SerializationError(f"{where}: typed string attributes cannot be written in a portable artifact")
        return _string(a.value)
    if isinstance(a, A.SymbolRefAttr):
        if a.nested:
            raise SerializationError(f"{where}: nested symbol references cannot be written in a portable artifact")
        return _string(a.root)
    if isinstance(a, A.TypeAttr):
        return VAttr("type_v1", (type_to_vhlo(a.type),))
    if isinstance(a, A.ArrayAttr):
        return VAttr("array_v1", (tuple(attr_to_vhlo(x, where) for x in a.elements),))
    if isinstance(a, A.DictAttr):
        return VAttr("dict_v1", (tuple((_string(k), attr_to_vhlo(v, where))
                                       for k, v in sorted(a.entries, key=lambda kv: kv[0].encode())),))
    if isinstance(a, A.DenseElementsAttr):
        if isinstance(a.type.element_type, T.QuantizedType):
            raise SerializationError(f"{where}: quantized dense constants cannot be written")
        return _tensor(type_to_vhlo(a.type), a.array, a.type)
    if isinstance(a, A.DenseArrayAttr):
        n = len(a.values)
        bt = T.TensorType((n,), a.element_type)
        return _tensor(type_to_vhlo(bt), np.array(a.values, dtype=a.element_type.dtype), bt)
    if isinstance(a, A.EnumAttr):
        kind = VHLO_ENUM_OF_KIND.get(a.kind)
        if kind is None or a.value not in ENUM_SPECS[kind].names:
            raise SerializationError(f"{where}: enum {a.kind} {a.value} has no VHLO encoding")
        return VAttr(kind, (a.value,))
    if isinstance(a, A.StructAttr):
        if a.name == "output_operand_alias":
            f = _struct_fields(a)
            return VAttr("output_operand_alias_v1", (tuple(f["output_tuple_indices"]), int(f["operand_index"]),
                                                     tuple(f["operand_tuple_indices"])))
        if a.name == "result_accuracy":
            f = _struct_fields(a)
            mode = f["mode"]
            if isinstance(mode, A.StructAttr):
                mode = mode.get("value")
            elif isinstance(mode, A.EnumAttr):
                mode = mode.value
            return VAttr("result_accuracy_v1", (_f64_raw(float(f["atol"])), _f64_raw(float(f["rtol"])),
                                                int(f["ulps"]), VAttr("result_accuracy_mode_v1", (mode,))))
        if a.name == "result_accuracy_mode":
            return VAttr("result_accuracy_mode_v1", (a.get("value"),))
        if a.name in ("replica_group_mesh_axes", "axis_ref", "mesh_axis", "mesh"):
            return _mesh_struct_to_vhlo(a, where)
    if isinstance(a, A.UnitAttr):
        raise SerializationError(f"{where}: unit attributes cannot be written in a portable artifact")
    if isinstance(a, A.DenseResourceAttr):
        raise SerializationError(
            f"{where}: dense_resource<{a.key}> has no VHLO encoding (upstream refuses it too); "
            "inline it first: `stablehlo-ref convert --inline-resources`, or "
            "stablehlo_ref.inline_resources(module)")
    if isinstance(a, A.ComplexAttr):
        raise SerializationError(f"{where}: a #complex.number attribute has no VHLO encoding "
                                 "(VHLO has no complex attribute; a complex constant is a dense<...> tensor)")
    raise SerializationError(f"{where}: attribute {a!r} has no VHLO encoding")


def _struct_fields(a: A.StructAttr) -> dict:
    """The fields of a struct attribute by name, those it leaves out at their spec defaults."""
    st = S.struct_by_mnemonic(a.dialect, a.name)
    f = {fs.name: fs.default for fs in st.fields}
    f.update(a.fields)
    return f


def _plain_str(x) -> str:
    return x.value if isinstance(x, A.StringAttr) else str(x)


def _mesh_struct_to_vhlo(a: A.StructAttr, where: str) -> VAttr:
    f = dict(a.fields)
    if a.name == "replica_group_mesh_axes":
        mesh = f.get("mesh")
        mesh = mesh.root if isinstance(mesh, A.SymbolRefAttr) else str(mesh)
        return VAttr("replica_group_mesh_axes_v1", (_string(mesh), VAttr("array_v1", (tuple(
            _mesh_struct_to_vhlo(x, where) for x in f.get("axes", ())),))))
    if a.name == "axis_ref":
        sub = f.get("sub_axis_info")
        if isinstance(sub, A.StructAttr):
            sub = (int(sub.get("pre_size")), int(sub.get("size")))
        return VAttr("axis_ref_v1", (_string(_plain_str(f["name"])), None if sub is None else VAttr("sub_axis_info_v1", tuple(sub))))
    if a.name == "mesh_axis":
        return VAttr("mesh_axis_v1", (_string(_plain_str(f["name"])), int(f["size"])))
    if a.name == "mesh":
        ids = f.get("device_ids")
        return VAttr("mesh_v1", (VAttr("array_v1", (tuple(_mesh_struct_to_vhlo(x, where) for x in f.get("axes", ())),)),
                                 None if ids is None else attr_to_vhlo(ids, where)))
    raise SerializationError(f"{where}: attribute #{a.dialect}.{a.name} has no VHLO encoding")


def _struct_fields_to_vhlo(value) -> VAttr:
    if isinstance(value, bool):
        return _bool(value)
    if isinstance(value, int):
        return _i64(value)
    if isinstance(value, tuple):
        return _i64_tensor(list(value))
    if isinstance(value, T.Type):
        return VAttr("type_v1", (type_to_vhlo(value),))
    if isinstance(value, A.Attribute):
        return attr_to_vhlo(value)
    raise SerializationError(f"struct field value {value!r} has no VHLO encoding")


# where the text parser found an op or argument -> the FileLineColLoc upstream gives it
_source_loc = source_location


def block_arg_locations(block: Block) -> list:
    """Block-argument locations: explicit ones as written; an argument parsed without
    `loc(...)` is located at its `%name` (when the parser recorded that position in
    `block.arg_sources`, one `file:line:col` string or None per argument)."""
    sources = getattr(block, "arg_sources", None)
    if not sources:
        return list(block.arg_locations)
    return [loc if loc is not None else _source_loc(src)
            for loc, src in zip(block.arg_locations, list(sources) + [None] * len(block.arg_locations))]


class _Where:
    """An op's description for error messages, formatted only when a message is made."""

    __slots__ = ("op", "attr")

    def __init__(self, op: Operation, attr: Optional[str] = None):
        self.op = op
        self.attr = attr

    def __str__(self):
        op = self.op
        s = f"{op.name}" + (f" at {op.where()}" if op.location is not None else "")
        return s if self.attr is None else f"{s}: attribute {self.attr}"


_TO_INFO: Dict[str, tuple] = {}


def _to_info(name: str) -> tuple:
    """Per StableHLO op name: (attribute kinds by name, latest VHLO encoding, its attribute
    names, short name)."""
    info = _TO_INFO.get(name)
    if info is None:
        if not S.has_op(name) or name not in tables().encodings:
            raise SerializationError(f"op {name} cannot be written in a portable artifact (no VHLO encoding)")
        ospec = S.op(name)
        venc = tables().latest(name)
        info = _TO_INFO[name] = ({a.name: a.kind for a in ospec.attributes}, venc,
                                 [n.rstrip(".") for n in venc.attributes], name.split(".", 1)[1])
    return info


# per (target, writer version): per StableHLO op name, (VHLO name at target, rewrites
# counted) when an op of that name with no attributes and no regions converts and downgrades
# with no rewrite of its contents, else None
_LEAF_PLANS: Dict[tuple, Dict[str, Optional[tuple]]] = {}


def leaf_context(target_str: str, writer_version: Optional[str], steps: Optional[Dict[int, int]],
                 direct: Optional[Direct] = None) -> tuple:
    """`op_to_vhlo`'s `leaf` argument for writing at target (a checked, patch-0 version). With
    `direct`, leaf ops are not converted at all (see numbering.Direct)."""
    plans = _LEAF_PLANS.get((target_str, writer_version))
    if plans is None:
        plans = _LEAF_PLANS[(target_str, writer_version)] = {}
    return (plans, target_str, writer_version, steps, _ver(target_str), direct)


class NotDirect(Exception):
    """The direct path cannot write this module (it holds sdy ops, which need casts between
    the VHLO and builtin worlds): convert it with light leaf ops instead."""


def _leaf_plan(name: str, target_str: str, writer_version: Optional[str]) -> Optional[tuple]:
    plan = None
    try:
        info = _to_info(name)
        if not info[2]:
            ospec, encs, want, i, j, short, reqs = _down_plan(info[1].name, target_str)
            if not reqs:
                target = _ver(target_str)
                writer = _ver(writer_version) if writer_version else None
                n = 0
                ok = True
                for k in range(i, j, -1):
                    newer = encs[k]
                    for ch in newer.changes:
                        if ch.member_kind == "attribute" and ch.change == "removed" and ch.member == "padding":
                            ok = False
                        elif ch.member_kind in ("operand", "result") and ch.variadic:
                            ok = False
                    if writer is None or target < _ver(newer.from_) <= writer:
                        n += 1
                if ok:
                    plan = (want.name, n)
    except SerializationError:
        plan = None          # the general path says what is wrong
    return plan


def op_to_vhlo(op: Operation, vmap: Dict[int, Value], leaf: Optional[tuple] = None) -> Operation:
    """Convert one op (recursively) to the current VHLO encoding. With `leaf` (from
    `leaf_context`), ops without attributes and regions whose downgrade to target only renames
    them become `LeafOp`s made at target directly (downgrade_op skips them; their rewrite
    counts go to steps)."""
    if op.name.startswith("sdy."):
        return _foreign_op(op, vmap, leaf)
    if leaf is not None and not op.attributes and not op.regions:
        plans = leaf[0]
        plan = plans.get(op.name, 0)
        if plan == 0:
            plan = plans[op.name] = _leaf_plan(op.name, leaf[1], leaf[2])
        if plan is not None:
            loc = op.location
            if loc is None or loc is A.UNKNOWN_LOC:
                loc = _source_loc(op.source) or A.UNKNOWN_LOC
            ok = _ok_set(leaf[4])
            results = []
            for r in op.results:
                vt = type_to_vhlo(r.type)
                if vt not in ok:
                    _check_type_at(vt, leaf[4], f"{op.name}: result")
                nv = VValue(vt)
                vmap[id(r)] = nv
                results.append(nv)
            get = vmap.get
            operands = [get(id(o)) for o in op.operands]
            if None in operands:
                raise SerializationError(f"{_Where(op)}: operand is used before it is defined")
            new = VLeaf(plan[0], operands, results, loc)
            if plan[1] and leaf[3] is not None:
                leaf[3][id(new)] = plan[1]
            return new
    where = _Where(op)
    if op.name == "builtin.module":
        new = Operation(op.name, [], [], dict(op.attributes), location=op_location(op))
    else:
        info = _TO_INFO.get(op.name)
        kinds, venc, vnames, short = info if info is not None else _to_info(op.name)
        if op.attributes or vnames:
            attrs = _attrs_to_vhlo(op, where, kinds, vnames, short)
        else:
            attrs = {}
        loc = op.location
        if loc is None or loc is A.UNKNOWN_LOC:
            loc = _source_loc(op.source) or A.UNKNOWN_LOC
        new = Operation(venc.name, [], [type_to_vhlo(r.type) for r in op.results], attrs, location=loc)
    direct = leaf[5] if leaf is not None else None
    for v, nv in zip(op.results, new.results):
        vmap[id(v)] = nv
        if direct is not None:
            direct.twin(nv, v)
    operands, get = new.operands, vmap.get
    for o in op.operands:
        nv = get(id(o))
        if nv is None:
            raise SerializationError(f"{where}: operand is used before it is defined")
        if nv is o:
            # the result of a direct leaf op (kept as it is): a VHLO-typed stand-in for it
            nv = direct.aka.get(id(o))
            if nv is None:
                nv = VValue(type_to_vhlo(o.type))
                direct.twin(o, nv)
        operands.append(nv)
    _regions_to_vhlo(op, new, vmap, leaf, type_to_vhlo)
    return new


def _foreign_op(op: Operation, vmap: Dict[int, Value], leaf) -> Operation:
    """An sdy op goes into the artifact as it is (builtin types, sdy attributes); its regions'
    StableHLO ops become VHLO (serialization/sdy_codec.py adds the casts between the two)."""
    if leaf is not None and leaf[5] is not None:
        raise NotDirect()
    loc = op.location
    if loc is None or loc is A.UNKNOWN_LOC:
        loc = _source_loc(op.source) or A.UNKNOWN_LOC
    new = Operation(op.name, [], [r.type for r in op.results], dict(op.attributes), location=loc)
    for v, nv in zip(op.results, new.results):
        vmap[id(v)] = nv
    for o in op.operands:
        nv = vmap.get(id(o))
        if nv is None:
            raise SerializationError(f"{_Where(op)}: operand is used before it is defined")
        new.operands.append(nv)
    _regions_to_vhlo(op, new, vmap, leaf, lambda t: t)   # its block arguments keep builtin types
    return new


def _regions_to_vhlo(op: Operation, new: Operation, vmap: Dict[int, Value], leaf, arg_type) -> None:
    """`op`'s regions converted into `new`: block arguments typed by `arg_type`, the ops VHLO."""
    for r in op.regions:
        nr = Region()
        for b in r.blocks:
            nb = Block([arg_type(a.type) for a in b.arguments], arg_locations=block_arg_locations(b))
            direct = leaf[5] if leaf is not None else None
            for a, na in zip(b.arguments, nb.arguments):
                vmap[id(a)] = na
                if direct is not None:
                    direct.twin(na, a)
            if leaf is None:
                for o in b.operations:
                    nb.operations.append(op_to_vhlo(o, vmap, leaf))
            elif direct is not None:
                _ops_to_vhlo_direct(b.operations, nb.operations, vmap, leaf)
            else:
                _ops_to_vhlo(b.operations, nb.operations, vmap, leaf)
            nr.blocks.append(nb)
        new.regions.append(nr)


def _ops_to_vhlo(ops, out: list, vmap: Dict[int, Value], leaf: tuple):
    """op_to_vhlo for each op of a block, appended to `out`; the leaf path inline."""
    plans, steps, target = leaf[0], leaf[3], leaf[4]
    ok = _ok_set(target)
    unknown, flc = A.UNKNOWN_LOC, A.FileLineColLoc
    get = vmap.get
    append = out.append
    last_t = last_vt = None
    for op in ops:
        plan = None
        if not op.attributes and not op.regions and not op.name.startswith("sdy."):
            plan = plans.get(op.name, 0)
            if plan == 0:
                plan = plans[op.name] = _leaf_plan(op.name, leaf[1], leaf[2])
        if plan is None:
            append(op_to_vhlo(op, vmap, leaf))
            continue
        loc = op.location
        if loc is None or loc is unknown:
            # source_location, inline: "file:line:col" as the text parser records it
            src = op.source
            loc = None
            if src.__class__ is str:
                parts = src.rsplit(":", 2)
                if len(parts) == 3 and parts[1].isdigit() and parts[2].isdigit():
                    loc = flc(parts[0], int(parts[1]), int(parts[2]))
            elif src is not None:
                loc = _source_loc(src)
            if loc is None:
                loc = unknown
        results = []
        for r in op.results:
            t = r.type
            if t is last_t:
                vt = last_vt
            else:
                vt = type_to_vhlo(t)
                if vt not in ok:
                    _check_type_at(vt, target, f"{op.name}: result")
                last_t, last_vt = t, vt
            nv = VValue(vt)
            vmap[id(r)] = nv
            results.append(nv)
        operands = [get(id(o)) for o in op.operands]
        if None in operands:
            raise SerializationError(f"{_Where(op)}: operand is used before it is defined")
        new = VLeaf(plan[0], operands, results, loc)
        if plan[1] and steps is not None:
            steps[id(new)] = plan[1]
        append(new)


def _ops_to_vhlo_direct(ops, out: list, vmap: Dict[int, Value], leaf: tuple):
    """_ops_to_vhlo for the direct path: a leaf op is checked (its result types at target, its
    operands defined) and put in `out` as it is; its results stand for themselves in `vmap`."""
    plans, steps, target, direct = leaf[0], leaf[3], leaf[4], leaf[5]
    ok = _ok_set(target)
    names, seen = direct.names, direct.plans
    append = out.append
    last_t = None
    for op in ops:
        name = op.name
        plan = None
        if not op.attributes and not op.regions:
            plan = seen.get(name, 0)
            if plan == 0:
                if name.startswith("sdy."):
                    plan = None
                else:
                    plan = plans.get(name, 0)
                    if plan == 0:
                        plan = plans[name] = _leaf_plan(name, leaf[1], leaf[2])
                    if plan is not None:
                        names[name] = plan[0]
                    # (the rewrite count to record, when steps are counted)
                    plan = seen[name] = None if plan is None else (plan[0], plan[1] if steps is not None else 0)
        if plan is None:
            append(op_to_vhlo(op, vmap, leaf))
            continue
        for r in op.results:
            t = r.type
            if t is not last_t:
                vt = type_to_vhlo(t)
                if vt not in ok:
                    _check_type_at(vt, target, f"{name}: result")
                last_t = t
            vmap[id(r)] = r
        for o in op.operands:
            if id(o) not in vmap:
                raise SerializationError(f"{_Where(op)}: operand is used before it is defined")
        if plan[1]:
            steps[id(op)] = plan[1]
        append(op)


def _attrs_to_vhlo(op: Operation, where: _Where, kinds, vnames, short) -> Dict[str, VAttr]:
    """The VHLO attributes of `op` (latest encoding): converted, struct fields spread out,
    defaults filled in, discardable attributes last."""
    attrs: Dict[str, VAttr] = {}
    fields: Dict[str, object] = {}
    discardable: Dict[str, VAttr] = {}
    for name, a in op.attributes.items():
        kind = kinds.get(name)
        if kind is None:
            discardable[name] = attr_to_vhlo(a, _Where(op, name))
            continue
        if kind in _STRUCT_KINDS and isinstance(a, A.StructAttr):
            if kind == "channel_handle":
                fields["channel_id"] = a.get("handle", 0)
                fields["channel_type"] = a.get("type", 0)
            else:
                fields.update(a.fields)
            continue
        if name not in vnames:
            raise SerializationError(f"{where}: attribute {name} cannot be expressed in VHLO")
        if kind == "unit" or isinstance(a, A.UnitAttr):
            if not isinstance(a, A.UnitAttr):
                raise SerializationError(f"{where}: attribute {name} must be a unit attribute")
            attrs[name] = _bool(True)
            continue
        if kind == "custom_call_api_version" and isinstance(a, A.IntegerAttr):
            vals = _API_VERSIONS.vhlo_table
            if not 0 <= a.value < len(vals) or vals[a.value] is None:
                raise SerializationError(f"{where}: api_version {a.value} is not a known custom call API version")
            attrs[name] = enum_attr(_API_VERSIONS.name, vals[a.value])
            continue
        if name in ("version",) and op.name == "stablehlo.composite" and isinstance(a, A.IntegerAttr):
            attrs[name] = VAttr("integer_v1", (type_to_vhlo(a.type or T.ELEMENT_TYPES["i64"]), a.value))
            continue
        attrs[name] = attr_to_vhlo(a, _Where(op, name))
    for n in vnames:
        if n in attrs:
            continue
        if n in fields:
            attrs[n] = _struct_fields_to_vhlo(fields[n])
            continue
    for n in vnames:
        if n not in attrs:
            d = default_value(short, n, attrs)
            if d is None:
                if short == "select_and_scatter" and n == "window_dimensions":
                    raise SerializationError(f"{where}: select_and_scatter needs window_dimensions to be serialized")
                raise SerializationError(f"{where}: required attribute {n} is missing")
            attrs[n] = d
    attrs.update(discardable)
    return attrs


# ============================================================ version checks and conversions
