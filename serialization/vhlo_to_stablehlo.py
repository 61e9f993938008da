"""VHLO IR at the current version -> StableHLO IR: types, attributes (struct attributes
rebuilt, attributes equal to their defaults dropped, as upstream does) and ops, converted in
place."""
from __future__ import annotations

from typing import Dict, Optional, Tuple

import numpy as np

from stablehlo_ref import spec as S
from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir import types as T
from stablehlo_ref.ir.core import Operation, Value
from stablehlo_ref.ir.wellformed import _plain_type, read_problem
from stablehlo_ref.serialization.versions import _upgrade_plan
from stablehlo_ref.serialization.builtin_codec import decode_elements, raw_to_float
from stablehlo_ref.serialization.defaults import _EMPTY_ARRAY, _EMPTY_DICT, default_value, window_kind
from stablehlo_ref.serialization.encoding import INT64_MIN
from stablehlo_ref.serialization.op_mapping import _CHANNEL_FIELDS, _DOT_ALGORITHM_FIELDS, _STRUCT_KINDS, tables
from stablehlo_ref.serialization.vhlo_codec import ENUM_SPECS, enum_attr, _SCALAR_TYPES, _float_et, builtin_element_type
from stablehlo_ref.serialization.vhlo_values import (NONE_TYPE_ATTR, VAttr, VType, _bool, _memo_by_value, _raw_f64,
                                                     _storage_range, _string)

_FROM_VHLO_TYPES: Dict[VType, object] = {}


_FROM_VHLO_IDS: Dict[int, tuple] = {}     # id(VType) -> (VType, type): keeps the VType alive


def type_from_vhlo(t: VType):
    """VHLO type -> StableHLO type (memoized by identity, then by value: both are immutable)."""
    e = _FROM_VHLO_IDS.get(id(t))
    if e is not None and e[0] is t:
        return e[1]
    r = _type_from_vhlo_by_value(t)
    if len(_FROM_VHLO_IDS) >= 16384:
        _FROM_VHLO_IDS.clear()
    _FROM_VHLO_IDS[id(t)] = (t, r)
    return r


def _type_from_vhlo_by_value(t: VType):
    return _memo_by_value(_FROM_VHLO_TYPES, t, _type_from_vhlo)


def _type_from_vhlo(t: VType):
    k = t.kind
    if k == "tensor_v1":
        shape, et, enc = t.args
        e = None
        if enc is not None:
            if not (isinstance(enc, VAttr) and enc.kind == "type_extensions_v1"):
                raise SerializationError(f"unsupported tensor encoding {enc}")
            e = A.StructAttr("stablehlo", "bounds", (("bounds", tuple(None if d == INT64_MIN else d for d in enc.args[0])),))
        if any(d < 0 and d != INT64_MIN for d in shape):
            raise SerializationError(f"tensor type with negative dimension {shape}")
        return T.TensorType(tuple(None if d == INT64_MIN else d for d in shape), type_from_vhlo(et), e)
    if k == "complex_v1":
        return T.ELEMENT_TYPES[f"complex<{type_from_vhlo(t.args[0]).name}>"]
    if k == "token_v1":
        return T.TokenType()
    if k == "tuple_v1":
        return T.TupleType(tuple(type_from_vhlo(x) for x in t.args[0]))
    if k == "func_v1":
        return T.FunctionType(tuple(type_from_vhlo(x) for x in t.args[0]), tuple(type_from_vhlo(x) for x in t.args[1]))
    if k == "unranked_tensor_v1":
        return T.UnrankedTensorType(type_from_vhlo(t.args[0]))
    if k == "none_v1":
        return T.NoneType()
    if k in ("quant_v1", "quant_per_axis_v1"):
        st = type_from_vhlo(t.args[1])
        ex = type_from_vhlo(t.args[2])
        signed = bool(t.args[0] & 1)
        if not (isinstance(ex, T.ElementType) and ex.is_float):
            raise SerializationError(f"expressed type of a quantized type must be a floating-point type, got {ex}")
        if isinstance(st, T.ElementType) and st.is_integer:
            # the flags decide signedness (MLIR's storage types are signless): flag 0 over a
            # signless iN is the quant dialect's `uN`; flag 1 over an unsigned type is a contradiction
            if st.is_unsigned and signed:
                raise SerializationError(f"quantized type: signed flag over unsigned storage type {st.name}")
            if not st.is_unsigned and not signed:
                st = T.ELEMENT_TYPES.get("ui" + st.name[1:], st)
        lo, hi = _storage_range(st, signed)
        if k == "quant_v1":
            _, _, _, scale, zp, mn, mx = t.args
            scales, zps, qd = (_raw_f64(scale),), (zp,), None
        else:
            _, _, _, qd, mn, mx, sc, zps = t.args
            scales, zps = tuple(_raw_f64(s) for s in sc), tuple(zps)
        for s in scales:
            if not (0.0 < s < float("inf")):      # (MLIR's quant types refuse these; NaN too)
                raise SerializationError(f"quantized type: illegal scale: {s}")
        if (mn, mx) == (lo, hi):
            mn = mx = None          # the default range, as the text form `i8` (both or neither)
        return T.QuantizedType(st, ex, scales, zps, qd, mn, mx, signed)
    if k == "future_v1":
        return T.OpaqueType("!stablehlo.future<" + ", ".join(str(type_from_vhlo(x)) for x in t.args[0]) + ">")
    if k == "buffer_v1":
        shape, et = t.args
        dims = "".join(("?" if d == INT64_MIN else str(d)) + "x" for d in shape)
        return T.OpaqueType(f"memref<{dims}{type_from_vhlo(et)}>")
    et = builtin_element_type(k)
    if et is not None and k in _SCALAR_TYPES:
        return et
    raise SerializationError(f"VHLO type {k} has no StableHLO equivalent in this implementation")


def _tensor_array(a: VAttr) -> Tuple[np.ndarray, T.TensorType]:
    bt = type_from_vhlo(a.args[0])
    if not isinstance(bt, T.TensorType):
        raise SerializationError(f"tensor_v1 attribute of non-tensor type {a.args[0]}")
    arr = decode_elements(a.args[1].data, bt, lambda m: (_ for _ in ()).throw(SerializationError(m)))
    return arr, bt


def attr_from_vhlo(a, kind: Optional[str] = None):
    """VHLO attribute -> StableHLO/builtin attribute; `kind` is the spec's attribute kind."""
    if not isinstance(a, VAttr):
        return a
    k = a.kind
    if k == "bool_v1":
        if kind == "unit":
            return A.UnitAttr()
        return A.BoolAttr(a.args[0])
    if k == "integer_v1":
        return A.IntegerAttr(a.args[1], type_from_vhlo(a.args[0]))
    if k == "float_v1":
        et = _float_et(a.args[0])
        return A.FloatAttr(raw_to_float(a.args[1], et), et)
    if k == "string_v1":
        if kind == "symbol_ref":
            return A.SymbolRefAttr(a.args[0])
        return A.StringAttr(a.args[0])
    if k == "type_v1":
        return A.TypeAttr(type_from_vhlo(a.args[0]))
    if k == "array_v1":
        sub = "symbol_ref" if kind == "symbol_array" else None
        return A.ArrayAttr(tuple(attr_from_vhlo(x, sub) for x in a.args[0]))
    if k == "dict_v1":
        entries = []
        for kk, v in a.args[0]:
            if not (isinstance(kk, VAttr) and kk.kind == "string_v1"):
                raise SerializationError("dict_v1 key is not a string")
            entries.append((kk.args[0], attr_from_vhlo(v)))
        return A.DictAttr(tuple(entries))
    if k == "tensor_v1":
        arr, bt = _tensor_array(a)
        if kind in ("dense_i64_array", "dense_bool_array"):
            want = "i64" if kind == "dense_i64_array" else "i1"
            if getattr(bt.element_type, "name", None) != want:
                raise SerializationError(f"a {kind.replace('_', ' ')} attribute holds elements of "
                                         f"type {bt.element_type}, not {want}")
            return A.DenseArrayAttr(bt.element_type, tuple(bool(x) for x in arr.reshape(-1)) if bt.element_type.kind == "bool"
                                    else tuple(int(x) for x in arr.reshape(-1)))
        return A.DenseElementsAttr(bt, arr)
    e = ENUM_SPECS.get(k)
    if e is not None:
        if e.text == "integer":         # custom_call's api_version: its i32 value
            return A.IntegerAttr(e.value(a.args[0]), T.ELEMENT_TYPES["i32"])
        if k == "result_accuracy_mode_v1":
            return A.StructAttr(e.dialect, e.name, (("value", a.args[0]),))
        return A.EnumAttr(e.dialect, e.name, a.args[0])
    if k == "output_operand_alias_v1":
        return A.StructAttr("stablehlo", "output_operand_alias", (("output_tuple_indices", a.args[0]),
                                                                  ("operand_index", a.args[1]),
                                                                  ("operand_tuple_indices", a.args[2])))
    if k == "result_accuracy_v1":
        return A.StructAttr("stablehlo", "result_accuracy", (
            ("atol", _raw_f64(a.args[0])), ("rtol", _raw_f64(a.args[1])), ("ulps", a.args[2]),
            ("mode", attr_from_vhlo(a.args[3]))))
    if k == "replica_group_mesh_axes_v1":
        mesh, axes = a.args
        return A.StructAttr("stablehlo", "replica_group_mesh_axes", (
            ("mesh", A.SymbolRefAttr(_vstr(mesh))), ("axes", tuple(attr_from_vhlo(x) for x in _varr(axes)))))
    if k == "axis_ref_v1":
        name, sub = a.args
        fields = [("name", A.StringAttr(_vstr(name)))]
        if sub is not None:
            if not (isinstance(sub, VAttr) and sub.kind == "sub_axis_info_v1"):
                raise SerializationError("axis_ref_v1 sub-axis info is not a sub_axis_info_v1")
            fields.append(("sub_axis_info", attr_from_vhlo(sub)))
        return A.StructAttr("stablehlo", "axis_ref", tuple(fields))
    if k == "mesh_axis_v1":
        return A.StructAttr("stablehlo", "mesh_axis", (("name", A.StringAttr(_vstr(a.args[0]))), ("size", a.args[1])))
    if k == "mesh_v1":
        fields = [("axes", tuple(attr_from_vhlo(x) for x in _varr(a.args[0])))]
        if a.args[1] is not None:
            fields.append(("device_ids", attr_from_vhlo(a.args[1])))
        return A.StructAttr("stablehlo", "mesh", tuple(fields))
    if k == "sub_axis_info_v1":
        return A.StructAttr("stablehlo", "sub_axis_info", (("pre_size", a.args[0]), ("size", a.args[1])))
    raise SerializationError(f"VHLO attribute {k} has no StableHLO equivalent in this implementation")


def _vstr(a) -> str:
    if not (isinstance(a, VAttr) and a.kind == "string_v1"):
        raise SerializationError(f"expected a string_v1 attribute, found {a}")
    return a.args[0]


def _varr(a) -> tuple:
    if not (isinstance(a, VAttr) and a.kind == "array_v1"):
        raise SerializationError(f"expected an array_v1 attribute, found {a}")
    return a.args[0]


def _is_default(op_short: str, name: str, v: VAttr, attrs) -> bool:
    """Whether upstream's VHLO -> StableHLO step drops this attribute."""
    if name == "precision_config":
        return v.kind == "array_v1" and all(x == _DEFAULT_PRECISION for x in v.args[0])
    if name == "backend_config" and op_short == "custom_call":
        return v in (_string(""), _EMPTY_DICT)
    if name in ("operand_layouts", "result_layouts") and op_short == "custom_call":
        # upstream drops the layouts only together
        return attrs.get("operand_layouts") == _EMPTY_ARRAY and attrs.get("result_layouts") == _EMPTY_ARRAY
    wk = window_kind(op_short, name)
    if wk is not None:
        if v.kind != "tensor_v1":
            return False
        arr, _ = _tensor_array(v)
        want = 1 if wk == "dense_i64_array" else 0     # strides and dilations; padding and reversal
        return bool(np.all(arr == want))
    d = default_value(op_short, name, attrs)
    return d is not None and d == v


_DEFAULT_PRECISION = enum_attr("precision")


_FROM_INFO: Dict[Tuple[str, bool], tuple] = {}


def _from_info(name: str, in_func: bool) -> tuple:
    """Per VHLO op name (and whether its parent is a func.func): (StableHLO op spec, attribute
    kinds by name, VHLO attribute names, short name, struct-valued attribute specs)."""
    ospec, venc = tables().by_vhlo[name]
    if name == "vhlo.return_v1" and in_func:
        ospec = S.op("func.return")
    info = (ospec, {a.name: a.kind for a in ospec.attributes}, set(n.rstrip(".") for n in venc.attributes),
            ospec.short_name, [a for a in ospec.attributes if a.kind in _STRUCT_KINDS])
    _FROM_INFO[(name, in_func)] = info
    return info


def op_from_vhlo(op: Operation, vmap: Dict[int, Value], parent: Optional[str]) -> Operation:
    """Current-VHLO op -> StableHLO op (recursively). Converts in place: the VHLO ops, blocks
    and values the reader made become the StableHLO ones (names, attributes and types are
    replaced), so that reading builds each op once. `vmap` collects the ids of the values
    defined so far (an operand must be defined before its use)."""
    _from_vhlo_in_place(op, set(), parent)
    return op


def _convert_attrs(op: Operation, parent: Optional[str]):
    """(StableHLO name, StableHLO attributes) of a non-module VHLO op."""
    info = _FROM_INFO.get((op.name, parent == "func.func"))
    if info is None:
        info = _from_info(op.name, parent == "func.func")
    ospec, kinds, vnames, short, struct_specs = info
    attrs = {}
    struct_vals: Dict[str, Dict[str, object]] = {}
    for name, v in op.attributes.items():
        if name not in vnames:
            attrs[name] = attr_from_vhlo(v)      # discardable
            continue
        if name in kinds:
            kind = kinds[name]
            if _is_default(short, name, v, op.attributes):
                continue
            if kind == "unit":
                if v == _bool(True):
                    attrs[name] = A.UnitAttr()
                continue
            if kind == "custom_call_api_version":
                attrs[name] = attr_from_vhlo(v)
                continue
            if kind == "array" and short in ("custom_call",) and name == "called_computations":
                attrs[name] = attr_from_vhlo(v, "symbol_array")
                continue
            attrs[name] = attr_from_vhlo(v, kind)
        else:
            struct_vals[name] = v
    # rebuild struct attributes
    for a in struct_specs:
        if a.kind == "channel_handle":
            cid = struct_vals.get("channel_id")
            ctype = struct_vals.get("channel_type")
            h = cid.args[1] if cid is not None else 0
            ty = ctype.args[1] if ctype is not None else 0
            if cid is None or (h == 0 and ctype is None):
                continue
            attrs[a.name] = A.StructAttr("stablehlo", "channel_handle", ((_CHANNEL_FIELDS["channel_id"], h),
                                                                          (_CHANNEL_FIELDS["channel_type"], ty)))
        elif a.kind == "dot_algorithm":
            vals = [struct_vals.get(n) for n in _DOT_ALGORITHM_FIELDS]
            if all(v is None or v == NONE_TYPE_ATTR for v in vals):
                continue
            fl = []
            for n, v in zip(_DOT_ALGORITHM_FIELDS, vals):
                if v.kind == "type_v1":
                    fl.append((n, type_from_vhlo(v.args[0])))
                elif v.kind == "bool_v1":
                    fl.append((n, v.args[0]))
                else:
                    fl.append((n, v.args[1]))
            alg = A.StructAttr("stablehlo", "dot_algorithm", tuple(fl))
            problems = A.dot_algorithm_problems(alg)
            if problems:
                # upstream checks the attribute as it is built (text and bytes alike)
                raise SerializationError(problems[0][1])
            attrs[a.name] = alg
        else:
            st = S.struct(a.kind)
            sname = st.mnemonic
            fl = []
            for f in st.fields:
                fname, d = f.name, f.default
                v = struct_vals.get(fname)
                if v is None:
                    fl.append((fname, d))
                elif v.kind == "integer_v1":
                    fl.append((fname, v.args[1]))
                else:
                    arr, _ = _tensor_array(v)
                    fl.append((fname, tuple(int(x) for x in arr.reshape(-1))))
            attrs[a.name] = A.StructAttr(st.dialect, sname, tuple(fl))
    return ospec.name, attrs


# per VHLO op name (and whether its parent is a func.func): the StableHLO name when the op
# carries no VHLO attributes at all (nothing to convert), else None
_PLAIN_NAME: Dict[Tuple[str, bool], Optional[str]] = {}


class _Bare:
    """An op name without attributes, for _convert_attrs."""
    __slots__ = ("name", "attributes")

    def __init__(self, name):
        self.name = name
        self.attributes = {}


# per (VHLO op name as stored, whether its parent is a func.func): see plain_leaf_name
_PLAIN_LEAF: Dict[Tuple[str, bool], Optional[str]] = {}


def plain_leaf_name(name: str, in_func: bool) -> Optional[str]:
    """The StableHLO name of an op stored as VHLO op `name` without attributes, properties or
    regions, when reading it takes nothing but renames: its upgrade to the current encoding
    touches no attribute and its conversion gives no attribute. Else None. (The reader builds
    such ops as StableHLO ops directly.)"""
    key = (name, in_func)
    r = _PLAIN_LEAF.get(key, 0)
    if r != 0:
        return r
    r = None
    try:
        plan = _upgrade_plan(name)
        if plan is not None and not any(ch.member_kind == "attribute" for e in plan[1] for ch in e.changes):
            current = plan[1][-1].name if plan[1] else name
            sname, attrs = _convert_attrs(_Bare(current), "func.func" if in_func else None)
            if not attrs:
                r = sname
    except (SerializationError, KeyError, IndexError, ValueError, TypeError, AttributeError):
        r = None
    _PLAIN_LEAF[key] = r
    return r


def is_func_op(name: str) -> bool:
    """Whether VHLO op `name` (as stored) becomes a func.func."""
    t = tables().by_vhlo.get(name)
    return t is not None and t[0].name == "func.func"


# good_type(t) by id(t): (t, whether it holds)
_GOOD_TYPES: Dict[int, tuple] = {}
# (op name, operand count, result count) of leaf ops read_problem finds nothing wrong with
_GOOD_SHAPES: Dict[tuple, bool] = {}


def good_type(t) -> bool:
    """Whether a value of type `t` passes every check read_problem makes of value types (a
    plain IR type, and not an element or function type, which stablehlo ops refuse)."""
    e = _GOOD_TYPES.get(id(t))
    if e is not None and e[0] is t:
        return e[1]
    ok = isinstance(t, T.Type) and not isinstance(t, (T.ElementType, T.FunctionType)) and _plain_type(t)
    if len(_GOOD_TYPES) >= 16384:
        _GOOD_TYPES.clear()
    _GOOD_TYPES[id(t)] = (t, ok)
    return ok


def leaf_shape_ok(op) -> bool:
    """read_problem(op) is None, for an op without attributes and regions, located at a
    Location, whose values' types all pass good_type (what the reader's direct path checks
    before it asks): read_problem of such an op depends on nothing but its name and operand
    and result counts, so the answer is remembered per (name, counts) when it is None."""
    if read_problem(op) is not None:
        return False
    _GOOD_SHAPES[(op.name, len(op.operands), len(op.results))] = True
    return True


def from_vhlo_direct(root: Operation, direct_names: set, unchecked: set) -> list:
    """op_from_vhlo for a tree whose leaf ops the reader built as StableHLO ops already (their
    names in `direct_names`; the ids of those it could not clear of read_problem's check in
    `unchecked`): converts the others in place and returns, in pre-order, the ops that need
    read_problem's check. (Every operand refers to a value defined before it: the reader
    refuses anything else, so the operand check of _from_vhlo_in_place is not repeated.)"""
    checks: list = []
    _from_vhlo_in_place(root, None, None, (direct_names, unchecked, checks))
    return checks


def _from_vhlo_in_place(op: Operation, defined: set, parent: Optional[str], direct=None):
    if direct is not None:
        direct[2].append(op)
    if op.name == "builtin.module":
        op.attributes = {k: attr_from_vhlo(v) for k, v in op.attributes.items()}
        child_parent = "builtin.module"
    elif op.name.startswith("sdy.") or op.name == "builtin.unrealized_conversion_cast":
        # another dialect's op: builtin types and its own attributes already
        child_parent = op.name
        for r in op.results:
            if isinstance(r.type, VType):
                r.type = type_from_vhlo(r.type)
    else:
        if op.attributes:
            child_parent, op.attributes = _convert_attrs(op, parent)
        else:
            key = (op.name, parent == "func.func")
            child_parent = _PLAIN_NAME.get(key)
            if child_parent is None:
                child_parent, op.attributes = _convert_attrs(op, parent)
                if not op.attributes:
                    _PLAIN_NAME[key] = child_parent
        op.name = child_parent
        for r in op.results:
            r.type = type_from_vhlo(r.type)
    if defined is not None:
        add = defined.add
        for r in op.results:
            add(id(r))
        for o in op.operands:
            if id(o) not in defined:
                raise KeyError(f"{op.name}: an operand is used before it is defined")
    for r in op.regions:
        for b in r.blocks:
            b.parent = r
            for a in b.arguments:
                if isinstance(a.type, VType):
                    a.type = type_from_vhlo(a.type)
                if defined is not None:
                    defined.add(id(a))
            if direct is None:
                for o in b.operations:
                    _from_vhlo_in_place(o, defined, child_parent)
                continue
            names, unchecked, checks = direct
            for o in b.operations:
                if o.name in names:
                    if id(o) in unchecked:
                        checks.append(o)
                else:
                    _from_vhlo_in_place(o, defined, child_parent, direct)
