"""The VHLO dialect's attribute and type encodings in MLIR bytecode: the binary code of each
VHLO attribute and type, and how each one's fields are written. Enum cases and their numbering
come from spec/attributes.yaml, element-type names from spec/element_types.yaml."""
from __future__ import annotations

from typing import Optional, Tuple

from stablehlo_ref import spec as S
from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import types as T
from stablehlo_ref.serialization.dialect_codec import DialectCodec, DialectReader, DialectWriter
from stablehlo_ref.serialization.vhlo_values import Blob, VAttr, VType

_ATTR_CODES = ["", "array_v1", "bool_v1", "comparison_direction_v1", "comparison_type_v1", "api_version_v1",
               "dict_v1", "fft_type_v1", "float_v1", "integer_v1", "output_operand_alias_v1", "precision_v1",
               "rng_algorithm_v1", "rng_distribution_v1", "string_v1", "tensor_v1", "transpose_v1", "type_v1",
               "type_extensions_v1", "result_accuracy_mode_v1", "result_accuracy_v1", "sub_axis_info_v1",
               "axis_ref_v1", "replica_group_mesh_axes_v1", "mesh_axis_v1", "mesh_v1"]
_ATTR_CODE = {k: i for i, k in enumerate(_ATTR_CODES) if k}

_TYPE_CODES = ["bool_v1", "complex_v1", "bf16_v1", "f16_v1", "f32_v1", "f64_v1", "f8E4M3FN_v1", "f8E5M2_v1",
               "func_v1", "index_v1", "i4_v1", "i8_v1", "i16_v1", "i32_v1", "i64_v1", "ui4_v1", "ui8_v1",
               "ui16_v1", "ui32_v1", "ui64_v1", "tensor_v1", "tensor_v1+enc", "token_v1", "tuple_v1", "quant_v1",
               "unranked_tensor_v1", "witness_v1", "f8E4M3FNUZ_v1", "f8E5M2FNUZ_v1", "f8E4M3B11FNUZ_v1",
               "quant_per_axis_v1", "i2_v1", "ui2_v1", "none_v1", "tf31_v1", "f8E4M3_v1", "f8E3M4_v1",
               "f4E2M1FN_v1", "f6E2M3FN_v1", "f6E3M2FN_v1", "f8E8M0FNU_v1", "buffer_v1", "future_v1"]
_TYPE_CODE = {k: i for i, k in enumerate(_TYPE_CODES)}

def _short(vhlo_name: str) -> str:
    """"vhlo.precision_v1" -> "precision_v1" (VAttr/VType kinds carry no dialect prefix)."""
    return vhlo_name.split(".", 1)[1]


# VHLO enum attribute kind -> its spec (spec/attributes.yaml: cases in VHLO order, defaults)
ENUM_SPECS = {_short(e.vhlo_name): e for e in S.enums()}
# kind -> case names indexed by VHLO value (None where no case has that value), and back
_ENUM_CASES = {k: e.vhlo_table for k, e in ENUM_SPECS.items()}
_ENUM_VALUES = {k: {c.name: c.value for c in e.cases} for k, e in ENUM_SPECS.items()}
# StableHLO enum kind (an `#stablehlo<kind CASE>` EnumAttr) -> VHLO enum kind; enums that the IR
# holds as integers (custom_call's api_version) are not EnumAttrs
VHLO_ENUM_OF_KIND = {e.name: k for k, e in ENUM_SPECS.items() if e.text != "integer"}


def enum_attr(enum_name: str, case: Optional[str] = None) -> VAttr:
    """The VHLO attribute of case `case` (default: the enum's default) of spec enum `enum_name`."""
    e = S.enum(enum_name)
    return VAttr(_short(e.vhlo_name), (e.default if case is None else case,))


# element types: VHLO type kind <-> builtin element type (spec/element_types.yaml `vhlo:`);
# complex types are complex_v1 of their component and are not in these tables
_VHLO_OF_ELEMENT = {et.text: _short(et.vhlo) for et in S.element_types() if et.kind != "complex"}
_ELEMENT_OF_VHLO = {k: T.ELEMENT_TYPES[text] for text, k in _VHLO_OF_ELEMENT.items()}
# VHLO types without fields: the element types and the token, witness and none types
_SCALAR_TYPES = frozenset(_ELEMENT_OF_VHLO) | {"token_v1", "witness_v1", "none_v1"}


def vhlo_element_kind(et: T.ElementType) -> str:
    """The VHLO type kind of a (non-complex) builtin element type: i1 -> "bool_v1"."""
    return _VHLO_OF_ELEMENT[et.name]


def builtin_element_type(kind: str) -> Optional[T.ElementType]:
    """The builtin element type of a VHLO type kind, or None if it is not an element type."""
    return _ELEMENT_OF_VHLO.get(kind)


def _int_width(t: VType) -> Tuple[int, bool]:
    """(bit width, signed) of a VHLO integer type (index: 64, signed)."""
    if t.kind == "index_v1":
        return 64, True
    et = builtin_element_type(t.kind)
    if et is None or not et.is_integer or et.kind == "bool":
        raise SerializationError(f"integer attribute of non-integer VHLO type {t.kind}")
    return et.bits, et.kind == "signed"


def _float_et(t: VType) -> T.ElementType:
    et = builtin_element_type(t.kind)
    if et is None or not et.is_float:
        raise SerializationError(f"float attribute of non-float VHLO type {t.kind}")
    return et


class VhloCodec(DialectCodec):
    name = "vhlo"

    def owns_attr(self, a):
        return isinstance(a, VAttr)

    def owns_type(self, t):
        return isinstance(t, VType)

    def read_attr(self, r: DialectReader):
        at = r.cur.pos
        code = r.varint("a VHLO attribute code")
        if code == 0 or code >= len(_ATTR_CODES):
            r.cur.fail(f"unknown vhlo attribute code: {code}", at)
        kind = _ATTR_CODES[code]
        vals = _ENUM_CASES.get(kind)
        if vals is not None:
            at = r.cur.pos
            v = r.varint("an enum value")
            if v >= len(vals) or vals[v] is None:
                r.cur.fail(f"invalid {kind} enum value {v}", at)
            return VAttr(kind, (vals[v],))
        if kind == "array_v1":
            return VAttr(kind, (tuple(r.list(r.attr, "array")),))
        if kind == "bool_v1":
            at = r.cur.pos
            v = r.varint("a boolean")
            if v > 1:
                r.cur.fail(f"boolean value {v} is neither 0 nor 1", at)
            return VAttr(kind, (bool(v),))
        if kind == "dict_v1":
            return VAttr(kind, (tuple(r.list(lambda: (r.attr(), r.attr()), "dictionary")),))
        if kind == "float_v1":
            t = r.type()
            et = _float_et(t)
            return VAttr(kind, (t, r.apint(et.bits)))
        if kind == "integer_v1":
            t = r.type()
            width, signed = _int_width(t)
            raw = r.apint(width)
            if signed and raw >> (width - 1):
                raw -= 1 << width
            return VAttr(kind, (t, raw))
        if kind == "output_operand_alias_v1":
            outs = tuple(r.list(r.svarint, "output tuple indices"))
            idx = r.svarint()
            ins = tuple(r.list(r.svarint, "operand tuple indices"))
            return VAttr(kind, (outs, idx, ins))
        if kind == "string_v1":
            return VAttr(kind, (r.string(),))
        if kind == "tensor_v1":
            t = r.type()
            return VAttr(kind, (t, Blob(r.blob("tensor data"))))
        if kind == "type_v1":
            return VAttr(kind, (r.type(),))
        if kind == "type_extensions_v1":
            return VAttr(kind, (tuple(r.list(r.svarint, "bounds")),))
        if kind == "result_accuracy_v1":
            atol = r.apint(64)
            rtol = r.apint(64)
            ulps = r.svarint()
            return VAttr(kind, (atol, rtol, ulps, r.attr()))
        if kind == "sub_axis_info_v1":
            return VAttr(kind, (r.svarint(), r.svarint()))
        if kind == "axis_ref_v1":
            name = r.attr()
            has = r.varint("a flag")
            return VAttr(kind, (name, r.attr() if has else None))
        if kind == "replica_group_mesh_axes_v1":
            return VAttr(kind, (r.attr(), r.attr()))
        if kind == "mesh_axis_v1":
            return VAttr(kind, (r.attr(), r.svarint()))
        if kind == "mesh_v1":
            return VAttr(kind, (r.attr(), r.optional_attr()))
        r.cur.fail(f"unknown vhlo attribute code: {code}", at)

    def read_type(self, r: DialectReader):
        at = r.cur.pos
        code = r.varint("a VHLO type code")
        if code >= len(_TYPE_CODES):
            r.cur.fail(f"unknown vhlo type code: {code}", at)
        kind = _TYPE_CODES[code]
        if kind in _SCALAR_TYPES:
            return VType(kind)
        if kind == "complex_v1":
            return VType(kind, (r.type(),))
        if kind == "func_v1":
            ins = tuple(r.list(r.type, "function inputs"))
            return VType(kind, (ins, tuple(r.list(r.type, "function outputs"))))
        if kind == "tensor_v1":
            shape = tuple(r.list(r.svarint, "tensor shape"))
            return VType(kind, (shape, r.type(), None))
        if kind == "tensor_v1+enc":
            enc = r.attr()
            shape = tuple(r.list(r.svarint, "tensor shape"))
            return VType("tensor_v1", (shape, r.type(), enc))
        if kind in ("tuple_v1", "future_v1"):
            return VType(kind, (tuple(r.list(r.type, "types")),))
        if kind == "quant_v1":
            flags = r.varint()
            st = r.type()
            ex = r.type()
            scale = r.apint(64)
            zp = r.svarint()
            return VType(kind, (flags, st, ex, scale, zp, r.svarint(), r.svarint()))
        if kind == "quant_per_axis_v1":
            flags = r.varint()
            st = r.type()
            ex = r.type()
            qd = r.varint()
            mn = r.svarint()
            mx = r.svarint()
            scales = tuple(r.list(lambda: r.apint(64), "scales"))
            zps = tuple(r.list(r.svarint, "zero points"))
            return VType(kind, (flags, st, ex, qd, mn, mx, scales, zps))
        if kind == "unranked_tensor_v1":
            return VType(kind, (r.type(),))
        if kind == "buffer_v1":
            shape = tuple(r.list(r.svarint, "buffer shape"))
            return VType(kind, (shape, r.type()))
        r.cur.fail(f"unknown vhlo type code: {code}", at)

    def write_attr(self, a: VAttr, w: DialectWriter):
        kind, args = a.kind, a.args
        if kind not in _ATTR_CODE:
            raise SerializationError(f"cannot write unknown VHLO attribute {kind}")
        w.varint(_ATTR_CODE[kind])
        values = _ENUM_VALUES.get(kind)
        if values is not None:
            w.varint(values[args[0]])
        elif kind == "array_v1":
            w.list(args[0], w.attr)
        elif kind == "bool_v1":
            w.varint(1 if args[0] else 0)
        elif kind == "dict_v1":
            w.varint(len(args[0]))
            for k, v in args[0]:
                w.attr(k)
                w.attr(v)
        elif kind == "float_v1":
            w.type(args[0])
            w.apint(args[1], _float_et(args[0]).bits)
        elif kind == "integer_v1":
            w.type(args[0])
            w.apint(args[1], _int_width(args[0])[0])
        elif kind == "output_operand_alias_v1":
            w.list(args[0], w.svarint)
            w.svarint(args[1])
            w.list(args[2], w.svarint)
        elif kind == "string_v1":
            w.string(args[0])
        elif kind == "tensor_v1":
            w.type(args[0])
            w.blob(args[1].data)
        elif kind == "type_v1":
            w.type(args[0])
        elif kind == "type_extensions_v1":
            w.list(args[0], w.svarint)
        elif kind == "result_accuracy_v1":
            w.apint(args[0], 64)
            w.apint(args[1], 64)
            w.svarint(args[2])
            w.attr(args[3])
        elif kind == "sub_axis_info_v1":
            w.svarint(args[0])
            w.svarint(args[1])
        elif kind == "axis_ref_v1":
            w.attr(args[0])
            w.varint(1 if args[1] is not None else 0)
            if args[1] is not None:
                w.attr(args[1])
        elif kind == "replica_group_mesh_axes_v1":
            w.attr(args[0])
            w.attr(args[1])
        elif kind == "mesh_axis_v1":
            w.attr(args[0])
            w.svarint(args[1])
        elif kind == "mesh_v1":
            w.attr(args[0])
            w.optional_attr(args[1])

    def write_type(self, t: VType, w: DialectWriter):
        kind, args = t.kind, t.args
        if kind == "tensor_v1":
            if args[2] is not None:
                w.varint(_TYPE_CODE["tensor_v1+enc"])
                w.attr(args[2])
            else:
                w.varint(_TYPE_CODE["tensor_v1"])
            w.list(args[0], w.svarint)
            w.type(args[1])
            return
        if kind not in _TYPE_CODE:
            raise SerializationError(f"cannot write unknown VHLO type {kind}")
        w.varint(_TYPE_CODE[kind])
        if kind in _SCALAR_TYPES:
            return
        if kind in ("complex_v1", "unranked_tensor_v1"):
            w.type(args[0])
        elif kind == "func_v1":
            w.list(args[0], w.type)
            w.list(args[1], w.type)
        elif kind in ("tuple_v1", "future_v1"):
            w.list(args[0], w.type)
        elif kind == "quant_v1":
            flags, st, ex, scale, zp, mn, mx = args
            w.varint(flags)
            w.type(st)
            w.type(ex)
            w.apint(scale, 64)
            w.svarint(zp)
            w.svarint(mn)
            w.svarint(mx)
        elif kind == "quant_per_axis_v1":
            flags, st, ex, qd, mn, mx, scales, zps = args
            w.varint(flags)
            w.type(st)
            w.type(ex)
            w.varint(qd)
            w.svarint(mn)
            w.svarint(mx)
            w.list(scales, lambda s: w.apint(s, 64))
            w.list(zps, w.svarint)
        elif kind == "buffer_v1":
            w.list(args[0], w.svarint)
            w.type(args[1])
