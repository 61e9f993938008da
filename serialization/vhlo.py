"""The VHLO dialect: its attribute and type codecs, and the mapping between StableHLO IR and
VHLO IR, with upgrades (on read) and downgrades (on write) between versions.

VHLO ops are `stablehlo_ref.ir` Operations named `vhlo.<op>_vN`; their attributes and types are
`VAttr` / `VType` values (a mnemonic plus its fields). Which VHLO op encodes which StableHLO op,
its members and version window, and what changed between encodings come from the spec; this
module holds only what the spec does not: the binary codes of VHLO attributes/types, enum
numbering, and default values of attributes (upstream's legalization adds them when absent and
removes them again on the way back).
"""
from __future__ import annotations

from typing import Dict, List, Optional, Tuple

import numpy as np

from stablehlo_ref import spec as S
from stablehlo_ref.errors import SerializationError
from stablehlo_ref.ir import attributes as A
from stablehlo_ref.ir import types as T
from stablehlo_ref.ir.core import Block, Module, Operation, Region, Value
from stablehlo_ref.ir.locations import op_location, source_location
from stablehlo_ref.serialization import bytecode as B


# ============================================================ values

class _VValue:
    """An immutable (kind, args) value (never assign to one); the hash is computed once
    (numbering looks every attribute and type up several times)."""

    __slots__ = ("kind", "args", "_h")

    def __init__(self, kind: str, args: tuple = ()):
        self.kind = kind    # mnemonic without the dialect, e.g. "tensor_v1"
        self.args = args
        self._h = None

    def __eq__(self, other):
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented if not isinstance(other, _VValue) else False
        return self.kind == other.kind and hash(self) == hash(other) and self.args == other.args

    def __hash__(self):
        h = self._h
        if h is None:
            h = self._h = hash((self.kind, self.args))
        return h

    def __repr__(self):
        return f"{type(self).__name__}(kind={self.kind!r}, args={self.args!r})"


class VType(_VValue):
    __slots__ = ()

    def __str__(self):
        return f"!vhlo.{self.kind}" + (f"<{', '.join(map(str, self.args))}>" if self.args else "")


class VAttr(_VValue):
    __slots__ = ()

    def __str__(self):
        return f"#vhlo.{self.kind}<{', '.join(map(str, self.args))}>"


class Blob:
    """Raw tensor data: bytes, or a byte-format memoryview of the file (reading) or of the
    array (writing), so that large constants are never copied. Equality by content; the hash
    samples at most ~1 KB of the data (a full hash of a 100 MB constant would cost more
    than writing it), and equal hashes fall back to a full comparison."""

    __slots__ = ("data", "_h")

    def __init__(self, data):
        self.data = data
        self._h = None

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, Blob):
            return False
        a, b = self.data, other.data
        if len(a) != len(b) or hash(self) != hash(other):
            return False
        if isinstance(a, bytes) and isinstance(b, bytes):
            return a == b
        return bool(np.array_equal(np.frombuffer(a, np.uint8), np.frombuffer(b, np.uint8)))

    def __hash__(self):
        h = self._h
        if h is None:
            d = self.data
            n = len(d)
            if n <= 1024:
                h = hash(bytes(d))
            else:
                step = n // 16
                h = hash((n,) + tuple(bytes(d[i * step:i * step + 64]) for i in range(16)) + (bytes(d[n - 64:]),))
            self._h = h
        return h

    def __len__(self):
        return len(self.data)

    def __repr__(self):
        return f"Blob({len(self.data)} bytes)"


# ============================================================ codes

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

ENUMS = {
    "comparison_direction_v1": ["EQ", "NE", "GE", "GT", "LE", "LT"],
    "comparison_type_v1": ["NOTYPE", "FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"],
    "api_version_v1": list(A.CUSTOM_CALL_API_VERSIONS),
    "fft_type_v1": ["FFT", "IFFT", "RFFT", "IRFFT"],
    "precision_v1": ["DEFAULT", "HIGH", "HIGHEST"],
    "rng_algorithm_v1": ["DEFAULT", "THREE_FRY", "PHILOX"],
    "rng_distribution_v1": [None, "UNIFORM", "NORMAL"],
    "transpose_v1": ["TRANSPOSE_INVALID", "NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"],
    "result_accuracy_mode_v1": ["DEFAULT", "HIGHEST", "TOLERANCE"],
}
# StableHLO enum kind (as the text parser names it) -> VHLO enum attribute
_ENUM_OF_KIND = {"comparison_direction": "comparison_direction_v1", "comparison_type": "comparison_type_v1",
                 "precision": "precision_v1", "fft_type": "fft_type_v1", "rng_algorithm": "rng_algorithm_v1",
                 "rng_distribution": "rng_distribution_v1", "transpose": "transpose_v1",
                 "result_accuracy_mode": "result_accuracy_mode_v1"}
_KIND_OF_ENUM = {v: k for k, v in _ENUM_OF_KIND.items()}

_SCALAR_TYPES = {"bool_v1", "bf16_v1", "f16_v1", "f32_v1", "f64_v1", "f8E4M3FN_v1", "f8E5M2_v1", "index_v1",
                 "i4_v1", "i8_v1", "i16_v1", "i32_v1", "i64_v1", "ui4_v1", "ui8_v1", "ui16_v1", "ui32_v1",
                 "ui64_v1", "token_v1", "witness_v1", "f8E4M3FNUZ_v1", "f8E5M2FNUZ_v1", "f8E4M3B11FNUZ_v1",
                 "i2_v1", "ui2_v1", "none_v1", "tf31_v1", "f8E4M3_v1", "f8E3M4_v1", "f4E2M1FN_v1",
                 "f6E2M3FN_v1", "f6E3M2FN_v1", "f8E8M0FNU_v1"}


def _elem_vhlo_name(et: T.ElementType) -> str:
    if et.name == "i1":
        return "bool_v1"
    if et.name == "tf32":
        return "tf31_v1"
    return et.name + "_v1"


def _vhlo_elem_builtin(kind: str) -> Optional[T.ElementType]:
    if kind == "bool_v1":
        return T.ELEMENT_TYPES["i1"]
    if kind == "tf31_v1":
        return T.ELEMENT_TYPES["tf32"]
    name = kind[:-3]
    return T.ELEMENT_TYPES.get(name)


def _int_width(t: VType) -> Tuple[int, bool]:
    """(bit width, signed) of a VHLO integer type (index: 64, signed)."""
    if t.kind == "index_v1":
        return 64, True
    et = _vhlo_elem_builtin(t.kind)
    if et is None or not et.is_integer or et.kind == "bool":
        raise SerializationError(f"integer attribute of non-integer VHLO type {t.kind}")
    return et.bits, et.kind == "signed"


def _float_et(t: VType) -> T.ElementType:
    et = _vhlo_elem_builtin(t.kind)
    if et is None or not et.is_float:
        raise SerializationError(f"float attribute of non-float VHLO type {t.kind}")
    return et


# ============================================================ codec

class VhloCodec(B.DialectCodec):
    name = "vhlo"

    def owns_attr(self, a):
        return isinstance(a, VAttr)

    def owns_type(self, t):
        return isinstance(t, VType)

    def read_attr(self, r: B.DialectReader):
        at = r.cur.pos
        code = r.varint("a VHLO attribute code")
        if code == 0 or code >= len(_ATTR_CODES):
            r.cur.fail(f"unknown vhlo attribute code: {code}", at)
        kind = _ATTR_CODES[code]
        if kind in ENUMS:
            at = r.cur.pos
            v = r.varint("an enum value")
            vals = ENUMS[kind]
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

    def read_type(self, r: B.DialectReader):
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

    def write_attr(self, a: VAttr, w: B.DialectWriter):
        kind, args = a.kind, a.args
        if kind not in _ATTR_CODE:
            raise SerializationError(f"cannot write unknown VHLO attribute {kind}")
        w.varint(_ATTR_CODE[kind])
        if kind in ENUMS:
            w.varint(ENUMS[kind].index(args[0]))
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

    def write_type(self, t: VType, w: B.DialectWriter):
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


# ============================================================ types: StableHLO <-> VHLO

def _f64_raw(x: float) -> int:
    return int(np.array([x], dtype=np.float64).view(np.uint64)[0])


def _raw_f64(r: int) -> float:
    return float(np.array([r], dtype=np.uint64).view(np.float64)[0])


def _storage_range(et: T.ElementType, signed: bool) -> Tuple[int, int]:
    if signed:
        return -(1 << (et.bits - 1)), (1 << (et.bits - 1)) - 1
    return 0, (1 << et.bits) - 1


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
        return VType(_elem_vhlo_name(t))
    if isinstance(t, T.TensorType):
        enc = None
        if t.encoding is not None:
            e = t.encoding
            if isinstance(e, A.StructAttr) and e.name in ("bounds", "type_extensions"):
                enc = VAttr("type_extensions_v1", (tuple(B.INT64_MIN if d is None else d for d in e.get("bounds")),))
            else:
                raise SerializationError(f"tensor encoding {e} cannot be written in a portable artifact")
        shape = tuple(B.INT64_MIN if d is None else d for d in t.shape)
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


def _memo_by_value(cache: dict, t, convert):
    """convert(t), remembered by value in `cache` (bounded); unhashable values are not kept."""
    try:
        r = cache.get(t)
    except TypeError:
        return convert(t)
    if r is None:
        r = convert(t)
        if len(cache) >= 4096:
            cache.clear()
        cache[t] = r
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
            e = A.StructAttr("stablehlo", "bounds", (("bounds", tuple(None if d == B.INT64_MIN else d for d in enc.args[0])),))
        if any(d < 0 and d != B.INT64_MIN for d in shape):
            raise SerializationError(f"tensor type with negative dimension {shape}")
        return T.TensorType(tuple(None if d == B.INT64_MIN else d for d in shape), type_from_vhlo(et), e)
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
        lo, hi = _storage_range(st, signed)
        if k == "quant_v1":
            _, _, _, scale, zp, mn, mx = t.args
            scales, zps, qd = (_raw_f64(scale),), (zp,), None
        else:
            _, _, _, qd, mn, mx, sc, zps = t.args
            scales, zps = tuple(_raw_f64(s) for s in sc), tuple(zps)
        return T.QuantizedType(st, ex, scales, zps, qd, None if mn == lo else mn, None if mx == hi else mx, signed)
    if k == "future_v1":
        return T.OpaqueType("!stablehlo.future<" + ", ".join(str(type_from_vhlo(x)) for x in t.args[0]) + ">")
    if k == "buffer_v1":
        shape, et = t.args
        dims = "".join(("?" if d == B.INT64_MIN else str(d)) + "x" for d in shape)
        return T.OpaqueType(f"memref<{dims}{type_from_vhlo(et)}>")
    et = _vhlo_elem_builtin(k)
    if et is not None and k in _SCALAR_TYPES:
        return et
    raise SerializationError(f"VHLO type {k} has no StableHLO equivalent in this implementation")


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


# ============================================================ attributes: StableHLO <-> VHLO

I64 = VType("i64_v1")
I1 = VType("bool_v1")


def _i64(v: int) -> VAttr:
    return VAttr("integer_v1", (I64, int(v)))


def _i64_tensor(values, shape=None) -> VAttr:
    arr = np.asarray(values, dtype=np.int64).reshape(-1)
    shape = (arr.size,) if shape is None else tuple(shape)
    return _tensor(VType("tensor_v1", (shape, I64, None)), arr, T.TensorType(shape, T.ELEMENT_TYPES["i64"]))


def _tensor(vt: VType, arr: np.ndarray, bt: T.TensorType) -> VAttr:
    return VAttr("tensor_v1", (vt, Blob(B.encode_elements(arr, bt))))


def _bool_tensor(values) -> VAttr:
    arr = np.asarray(values, dtype=np.bool_).reshape(-1)
    bt = T.TensorType((arr.size,), T.ELEMENT_TYPES["i1"])
    return _tensor(VType("tensor_v1", ((arr.size,), I1, None)), arr, bt)


def _string(s: str) -> VAttr:
    return VAttr("string_v1", (s,))


def _bool(b: bool) -> VAttr:
    return VAttr("bool_v1", (bool(b),))


NONE_TYPE_ATTR = VAttr("type_v1", (VType("none_v1"),))
DEFAULT_ACCURACY = VAttr("result_accuracy_v1", (0, 0, 0, VAttr("result_accuracy_mode_v1", ("DEFAULT",))))


def attr_to_vhlo(a, where: str = "") -> VAttr:
    if isinstance(a, VAttr):
        return a
    if isinstance(a, A.BoolAttr):
        return _bool(a.value)
    if isinstance(a, A.IntegerAttr):
        t = a.type if a.type is not None else T.ELEMENT_TYPES["i64"]
        if t.kind == "bool":
            return _bool(bool(a.value))
        return VAttr("integer_v1", (type_to_vhlo(t), int(a.value)))
    if isinstance(a, A.FloatAttr):
        return VAttr("float_v1", (type_to_vhlo(a.type), B.float_to_raw(a.value, a.type)))
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
        kind = _ENUM_OF_KIND.get(a.kind)
        if kind is None or a.value not in ENUMS[kind]:
            raise SerializationError(f"{where}: enum {a.kind} {a.value} has no VHLO encoding")
        return VAttr(kind, (a.value,))
    if isinstance(a, A.StructAttr):
        if a.name == "output_operand_alias":
            f = dict(a.fields)
            return VAttr("output_operand_alias_v1", (tuple(f.get("output_tuple_indices", ())),
                                                     int(f.get("operand_index", 0)),
                                                     tuple(f.get("operand_tuple_indices", ()))))
        if a.name == "result_accuracy":
            f = dict(a.fields)
            mode = f.get("mode", "DEFAULT")
            if isinstance(mode, A.StructAttr):
                mode = mode.get("value")
            elif isinstance(mode, A.EnumAttr):
                mode = mode.value
            return VAttr("result_accuracy_v1", (_f64_raw(float(f.get("atol", 0.0))), _f64_raw(float(f.get("rtol", 0.0))),
                                                int(f.get("ulps", 0)), VAttr("result_accuracy_mode_v1", (mode,))))
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
    raise SerializationError(f"{where}: attribute {a!r} has no VHLO encoding")


def _tensor_array(a: VAttr) -> Tuple[np.ndarray, T.TensorType]:
    bt = type_from_vhlo(a.args[0])
    if not isinstance(bt, T.TensorType):
        raise SerializationError(f"tensor_v1 attribute of non-tensor type {a.args[0]}")
    arr = B.decode_elements(a.args[1].data, bt, lambda m: (_ for _ in ()).throw(SerializationError(m)))
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
        return A.FloatAttr(B.raw_to_float(a.args[1], et), et)
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
            return A.DenseArrayAttr(bt.element_type, tuple(bool(x) for x in arr.reshape(-1)) if bt.element_type.kind == "bool"
                                    else tuple(int(x) for x in arr.reshape(-1)))
        return A.DenseElementsAttr(bt, arr)
    if k in ENUMS:
        if k == "api_version_v1":
            return A.IntegerAttr(ENUMS[k].index(a.args[0]), T.ELEMENT_TYPES["i32"])
        if k == "result_accuracy_mode_v1":
            return A.StructAttr("stablehlo", "result_accuracy_mode", (("value", a.args[0]),))
        return A.EnumAttr("stablehlo", _KIND_OF_ENUM[k], a.args[0])
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


# ============================================================ the spec's VHLO tables

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


# ============================================================ defaults

def _n_spatial(attrs) -> int:
    a = attrs.get("input_spatial_dimensions")
    if a is None:
        return 0
    return int(np.prod(a.args[0].args[0])) if a.args[0].args[0] else 0


def _window_rank(attrs) -> int:
    a = attrs.get("window_dimensions")
    return int(a.args[0].args[0][0]) if a is not None and a.args[0].args[0] else 0


_DEFAULT_OPS = {
    "sym_visibility": {"func"}, "arg_attrs": {"func"}, "res_attrs": {"func"},
    "lower": {"cholesky"}, "is_stable": {"sort"}, "dimension": {"sort"},
    "version": {"composite"}, "composite_attributes": {"composite"},
    "has_side_effect": {"custom_call"}, "backend_config": {"custom_call"}, "api_version": {"custom_call"},
    "called_computations": {"custom_call"}, "operand_layouts": {"custom_call"}, "result_layouts": {"custom_call"},
    "output_operand_aliases": {"custom_call"}, "result_tilings": {"custom_call"},
    "indices_are_sorted": {"gather", "dynamic_gather", "scatter"}, "unique_indices": {"scatter"},
    "infeed_config": {"infeed"}, "layout": {"infeed"}, "outfeed_config": {"outfeed"},
    "is_host_transfer": {"send", "recv"}, "source_target_pairs": {"send", "recv"},
    "compare_type": {"compare"},
    "use_global_device_ids": {"all_gather", "all_reduce", "reduce_scatter", "collective_reduce"},
    "has_dynamic_root": {"collective_broadcast", "collective_reduce"},
    "known_expanding_dimensions": {"dynamic_broadcast_in_dim"}, "known_nonexpanding_dimensions": {"dynamic_broadcast_in_dim"},
}


def default_value(op_short: str, name: str, attrs: Dict[str, VAttr]) -> Optional[VAttr]:
    """The VHLO value upstream fills in for attribute `name` of `op_short` when absent."""
    ops = _DEFAULT_OPS.get(name)
    if ops is not None and op_short not in ops:
        return None
    if name == "sym_visibility":
        return _string("")
    if name in ("arg_attrs", "res_attrs", "called_computations", "operand_layouts", "result_layouts",
                "output_operand_aliases", "result_tilings", "layout"):
        return VAttr("array_v1", ((),))
    if name in ("channel_id", "channel_type"):
        return _i64(0)
    if name in ("use_global_device_ids", "has_dynamic_root", "lower", "indices_are_sorted", "unique_indices",
                "is_host_transfer", "has_side_effect"):
        return _bool(False)
    if name == "is_stable":
        return _bool(False)
    if name == "compare_type":
        return VAttr("comparison_type_v1", ("NOTYPE",))
    if name == "version":
        return _i64(0)
    if name == "composite_attributes":
        return VAttr("dict_v1", ((),))
    if name == "backend_config" and attrs.get("api_version") == VAttr("api_version_v1", ("API_VERSION_TYPED_FFI",)):
        return VAttr("dict_v1", ((),))       # upstream's getBackendConfigOrDefault()
    if name in ("backend_config", "infeed_config", "outfeed_config"):
        return _string("")
    if name == "api_version":
        return VAttr("api_version_v1", ("API_VERSION_ORIGINAL",))
    if name == "precision_config":
        return VAttr("array_v1", ((VAttr("precision_v1", ("DEFAULT",)),) * 2,))
    if name in _DOT_ALGORITHM_FIELDS:
        return NONE_TYPE_ATTR
    if name == "result_accuracy":
        return DEFAULT_ACCURACY
    if name in ("known_expanding_dimensions", "known_nonexpanding_dimensions", "source_target_pairs",
                "operand_batching_dims", "start_indices_batching_dims", "input_batching_dims",
                "scatter_indices_batching_dims"):
        return _i64_tensor([])
    if name == "dimension" and op_short == "sort":
        return _i64(-1)
    if op_short in ("convolution", "dynamic_conv"):
        n = _n_spatial(attrs)
        if name in ("window_strides", "lhs_dilation", "rhs_dilation"):
            return _i64_tensor([1] * n)
        if name == "padding":
            return _i64_tensor([0] * (2 * n), (n, 2))
        if name == "window_reversal":
            return _bool_tensor([False] * n)
    if op_short in ("reduce_window", "select_and_scatter"):
        n = _window_rank(attrs)
        if name in ("window_strides", "base_dilations", "window_dilations"):
            return _i64_tensor([1] * n)
        if name == "padding":
            return _i64_tensor([0] * (2 * n), (n, 2))
    return None


def _is_default(op_short: str, name: str, v: VAttr, attrs) -> bool:
    """Whether upstream's VHLO -> StableHLO step drops this attribute."""
    if name == "precision_config":
        return v.kind == "array_v1" and all(x == VAttr("precision_v1", ("DEFAULT",)) for x in v.args[0])
    if name == "backend_config" and op_short == "custom_call":
        return v in (_string(""), VAttr("dict_v1", ((),)))
    if name in ("operand_layouts", "result_layouts") and op_short == "custom_call":
        empty = VAttr("array_v1", ((),))
        return attrs.get("operand_layouts") == empty and attrs.get("result_layouts") == empty
    if name in ("window_strides", "lhs_dilation", "rhs_dilation", "base_dilations", "window_dilations",
                "padding", "window_reversal") and op_short in ("convolution", "dynamic_conv", "reduce_window",
                                                               "select_and_scatter"):
        if v.kind != "tensor_v1":
            return False
        arr, _ = _tensor_array(v)
        want = 0 if name in ("padding", "window_reversal") else 1
        return bool(np.all(arr == want))
    d = default_value(op_short, name, attrs)
    return d is not None and d == v


# ============================================================ StableHLO -> VHLO (current)

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


class VValue:
    """The result of a `VLeaf` (just its VHLO type)."""
    __slots__ = ("type",)

    def __init__(self, t):
        self.type = t


VLeaf = B.LeafOp


# per (target, writer version): per StableHLO op name, (VHLO name at target, rewrites
# counted) when an op of that name with no attributes and no regions converts and downgrades
# with no rewrite of its contents, else None
_LEAF_PLANS: Dict[tuple, Dict[str, Optional[tuple]]] = {}


def leaf_context(target_str: str, writer_version: Optional[str], steps: Optional[Dict[int, int]]) -> tuple:
    """`op_to_vhlo`'s `leaf` argument for writing at target (a checked, patch-0 version)."""
    plans = _LEAF_PLANS.get((target_str, writer_version))
    if plans is None:
        plans = _LEAF_PLANS[(target_str, writer_version)] = {}
    return (plans, target_str, writer_version, steps, _ver(target_str))


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
    for v, nv in zip(op.results, new.results):
        vmap[id(v)] = nv
    operands, get = new.operands, vmap.get
    for o in op.operands:
        nv = get(id(o))
        if nv is None:
            raise SerializationError(f"{where}: operand is used before it is defined")
        operands.append(nv)
    for r in op.regions:
        nr = Region()
        for b in r.blocks:
            nb = Block([type_to_vhlo(a.type) for a in b.arguments], arg_locations=block_arg_locations(b))
            for a, na in zip(b.arguments, nb.arguments):
                vmap[id(a)] = na
            if leaf is None:
                for o in b.operations:
                    nb.operations.append(op_to_vhlo(o, vmap, leaf))
            else:
                _ops_to_vhlo(b.operations, nb.operations, vmap, leaf)
            nr.blocks.append(nb)
        new.regions.append(nr)
    return new


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
        if not op.attributes and not op.regions:
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
            vals = ENUMS["api_version_v1"]
            if not 0 <= a.value < len(vals):
                raise SerializationError(f"{where}: api_version {a.value} is not a known custom call API version")
            attrs[name] = VAttr("api_version_v1", (vals[a.value],))
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

_VERSIONS: Dict[str, tuple] = {}


def _ver(v: str):
    r = _VERSIONS.get(v)
    if r is None:
        r = _VERSIONS[v] = S.parse_version(v)
    return r


# values (VType/VAttr) already checked to be expressible at a target version, per target
_OK_AT: Dict[tuple, set] = {}


def _ok_set(target) -> set:
    ok = _OK_AT.get(target)
    if ok is None or len(ok) > 16384:
        ok = _OK_AT[target] = set()
    return ok


def _check_type_at(t, target, where):
    if isinstance(t, VType):
        ok = _ok_set(target)
        if t in ok:
            return
        _check_type_at_uncached(t, target, where)
        ok.add(t)


def _check_type_at_uncached(t, target, where):
    if isinstance(t, VType):
        since = tables().type_since.get(t.kind)
        if since is not None and _ver(since) > target:
            raise SerializationError(f"{where}: type !vhlo.{t.kind} needs StableHLO {since} or newer")
        for x in t.args:
            _check_any_at(x, target, where)


def _check_any_at(x, target, where):
    if isinstance(x, VType):
        _check_type_at(x, target, where)
    elif isinstance(x, VAttr):
        since = tables().attr_since.get(x.kind)
        if since is not None and _ver(since) > target:
            raise SerializationError(f"{where}: attribute #vhlo.{x.kind} needs StableHLO {since} or newer")
        for y in x.args:
            _check_any_at(y, target, where)
    elif isinstance(x, tuple):
        for y in x:
            _check_any_at(y, target, where)


def _elem(t):
    if isinstance(t, VType) and t.kind == "tensor_v1":
        return t.args[1]
    return t


def downgrade_op(op: Operation, target_str: str, steps: Optional[Dict[int, int]] = None,
                 writer_version: Optional[str] = None):
    """Rewrite a current-VHLO op in place to the encoding valid at target (recursively).
    `steps[id(op)]` counts the rewrites of each op (upstream recreates the op for each); with
    `writer_version`, only rewrites that a serializer of that version would do are counted
    (encodings newer than it did not exist there, so the op was created old)."""
    writer = _ver(writer_version) if writer_version else None
    target = _ver(target_str)
    for r in op.regions:
        for b in r.blocks:
            for o in b.operations:
                if o.__class__ is not VLeaf:
                    downgrade_op(o, target_str, steps, writer_version)
            for a in b.arguments:
                _check_type_at(a.type, target, f"block argument of {op.name}")
    if op.name == "builtin.module":
        return
    plan = _DOWN_PLANS.get((op.name, target_str))
    if plan is None:
        plan = _down_plan(op.name, target_str)
    ospec, encs, want, i, j, short, reqs = plan
    where = f"{ospec.name}"
    while i > j:
        newer, older = encs[i], encs[i - 1]
        for ch in newer.changes:
            m = ch.member
            if ch.member_kind == "attribute" and ch.change == "added":
                v = op.attributes.get(m)
                d = default_value(short, m, op.attributes)
                if v is not None and v != d:
                    raise SerializationError(f"{where}: attribute {m} = {_describe(v)} cannot be expressed in "
                                             f"StableHLO {target_str} ({older.name} has no {m}; needs {newer.from_})")
                op.attributes.pop(m, None)
            elif ch.member_kind == "attribute" and ch.change == "removed":
                if m == "padding":
                    lhs = op.operands[0].type
                    n = max(len(lhs.args[0]) - 2, 0) if isinstance(lhs, VType) and lhs.kind == "tensor_v1" else 0
                    op.attributes[m] = _i64_tensor([0] * (2 * n), (n, 2))
            elif ch.member_kind in ("operand", "result") and ch.variadic:
                count = len(op.operands) if ch.member_kind == "operand" else len(op.results)
                if count != 1:
                    raise SerializationError(f"{where}: {count} {ch.member_kind}s cannot be expressed in StableHLO "
                                             f"{target_str} ({older.name} takes exactly one; variadic needs {newer.from_})")
            elif ch.member_kind == "region" and ch.change == "added":
                if op.regions:
                    raise SerializationError(f"{where}: regions cannot be expressed in StableHLO {target_str} "
                                             f"({older.name} has none; needs {newer.from_})")
        op.name = older.name
        if steps is not None and (writer is None or target < _ver(newer.from_) <= writer):
            steps[id(op)] = steps.get(id(op), 0) + 1
        i -= 1
    # constraints (spec: downgrade_requires)
    for req in reqs:
        if "element types" in req.text:
            for a, r in zip(op.operands, op.results):
                if _elem(a.type) != _elem(r.type):
                    raise SerializationError(f"{where}: a reduction accumulating in a wider type needs StableHLO "
                                             f"{req.below} or newer (target {target_str})")
        elif "future" in req.text:
            if any(isinstance(o.type, VType) and o.type.kind == "future_v1" for o in op.operands):
                raise SerializationError(f"{where}: future-typed inputs need StableHLO {req.below} or newer")
        elif "backend_config" in req.text:
            bc = op.attributes.get("backend_config")
            if (bc is not None and bc.kind == "dict_v1") or op.attributes.get("api_version") == VAttr("api_version_v1", ("API_VERSION_TYPED_FFI",)):
                raise SerializationError(f"{where}: a dictionary backend_config or API_VERSION_TYPED_FFI needs "
                                         f"StableHLO {req.below} or newer (target {target_str})")
    if op.attributes:
        ok = _ok_set(target)
        for name, a in op.attributes.items():
            try:
                if a in ok:
                    continue
            except TypeError:
                pass
            _check_any_at(a, target, f"{where}: attribute {name}")
            try:
                ok.add(a)
            except TypeError:
                pass
    for r in op.results:
        _check_type_at(r.type, target, f"{where}: result")


_DOWN_PLANS: Dict[Tuple[str, str], tuple] = {}


def _down_plan(name: str, target_str: str) -> tuple:
    """Per (VHLO op name, target): (op spec, its encodings, the encoding at target, index of
    `name`, index of that encoding, short name, the downgrade requirements that apply)."""
    ospec, _cur = tables().by_vhlo[name]
    encs = tables().encodings[ospec.name]
    want = ospec.vhlo_at(target_str)
    if want is None:
        raise SerializationError(f"{ospec.name}: op {ospec.name} is not available in StableHLO {target_str} "
                                 f"(its VHLO encodings cover {encs[0].from_} .. {encs[-1].to})")
    target = _ver(target_str)
    names = [e.name for e in encs]
    plan = (ospec, encs, want, names.index(name), names.index(want.name), ospec.name.split(".", 1)[1],
            tuple(req for req in want.downgrade_requires if not target >= _ver(req.below)))
    _DOWN_PLANS[(name, target_str)] = plan
    return plan


def _describe(v) -> str:
    if isinstance(v, VAttr) and v.kind == "tensor_v1":
        return f"tensor of {len(v.args[1])} bytes"
    return str(v)


_UPGRADE_PLANS: Dict[str, object] = {}


def _upgrade_plan(name: str):
    """(short op name, the encodings newer than `name`) for a known VHLO op, else None."""
    plan = _UPGRADE_PLANS.get(name, False)
    if plan is False:
        t = tables().by_vhlo.get(name)
        if t is None:
            plan = None
        else:
            ospec = t[0]
            encs = tables().encodings[ospec.name]
            i = [e.name for e in encs].index(name)
            plan = (ospec.name.split(".", 1)[1], tuple(encs[i + 1:]))
        _UPGRADE_PLANS[name] = plan
    return plan


def upgrade_op(op: Operation):
    """Rewrite a VHLO op of any version in place to the current encoding (recursively)."""
    for r in op.regions:
        for b in r.blocks:
            for o in b.operations:
                upgrade_op(o)
    if op.name == "builtin.module":
        return
    plan = _upgrade_plan(op.name)
    if plan is None:
        raise SerializationError(f"unknown VHLO op {op.name} (this reader knows StableHLO up to {S.current_version()})")
    short, newer_encs = plan
    for newer in newer_encs:
        for ch in newer.changes:
            if ch.member_kind == "attribute" and ch.change == "added":
                if ch.member not in op.attributes:
                    op.attributes[ch.member] = default_value(short, ch.member, op.attributes)
            elif ch.member_kind == "attribute" and ch.change == "removed":
                op.attributes.pop(ch.member, None)
        op.name = newer.name


def _strip_discardable_vhlo(a):
    return attr_from_vhlo(a)


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
            if cid is None or h == 0 and ty == 0 and ctype is None:
                if cid is not None and h != 0:
                    pass
                else:
                    continue
            attrs[a.name] = A.StructAttr("stablehlo", "channel_handle", (("handle", h), ("type", ty)))
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
            attrs[a.name] = A.StructAttr("stablehlo", "dot_algorithm", tuple(fl))
        else:
            sname = {"conv_dimension_numbers": "conv", "dot_dimension_numbers": "dot",
                     "gather_dimension_numbers": "gather", "scatter_dimension_numbers": "scatter"}[a.kind]
            fl = []
            for fname, d in A.STRUCT_FIELDS[sname]:
                v = struct_vals.get(fname)
                if v is None:
                    fl.append((fname, d))
                elif v.kind == "integer_v1":
                    fl.append((fname, v.args[1]))
                else:
                    arr, _ = _tensor_array(v)
                    fl.append((fname, tuple(int(x) for x in arr.reshape(-1))))
            attrs[a.name] = A.StructAttr("stablehlo", sname, tuple(fl))
    return ospec.name, attrs


# per VHLO op name (and whether its parent is a func.func): the StableHLO name when the op
# carries no VHLO attributes at all (nothing to convert), else None
_PLAIN_NAME: Dict[Tuple[str, bool], Optional[str]] = {}


def _from_vhlo_in_place(op: Operation, defined: set, parent: Optional[str]):
    if op.name == "builtin.module":
        op.attributes = {k: attr_from_vhlo(v) for k, v in op.attributes.items()}
        child_parent = "builtin.module"
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
                a.type = type_from_vhlo(a.type)
                add(id(a))
            for o in b.operations:
                _from_vhlo_in_place(o, defined, child_parent)


def _optional(ospec: S.OpSpec, name: str) -> bool:
    for a in ospec.attributes:
        if a.name == name:
            return a.optional or a.default is not None
    return False
