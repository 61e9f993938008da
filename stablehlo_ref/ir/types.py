"""Types of the IR: element types (every StableHLO one), tensors, tokens, tuples, functions,
quantized types, and opaque types of other dialects. All types are immutable and hashable."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple, Union

import ml_dtypes
import numpy as np


class Type:
    """Base class of every IR type."""

    __slots__ = ()


@dataclass(frozen=True)
class ElementType(Type):
    """A scalar type: integers (i1, si2..si64 spelled i2..i64, ui2..ui64), floats (f4..f64,
    bf16, f8 variants), complex, and `index`."""

    name: str          # text spelling, e.g. "i8", "ui4", "f8E4M3FN", "complex<f32>"
    kind: str          # bool | signed | unsigned | float | complex | index
    bits: int
    dtype_name: str    # numpy / ml_dtypes name used for storage

    def __str__(self) -> str:
        return self.name

    @property
    def dtype(self) -> np.dtype:
        return _DTYPES[self.name]

    @property
    def is_integer(self) -> bool:
        return self.kind in ("bool", "signed", "unsigned", "index")

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_complex(self) -> bool:
        return self.kind == "complex"

    @property
    def is_bool(self) -> bool:
        return self.kind == "bool"

    @property
    def is_signed(self) -> bool:
        return self.kind in ("signed", "index")

    @property
    def is_unsigned(self) -> bool:
        return self.kind == "unsigned"


_ELEMENT_TABLE = [
    # name, kind, bits, storage dtype name
    ("i1", "bool", 1, "bool"),
    ("i2", "signed", 2, "int2"), ("i4", "signed", 4, "int4"), ("i8", "signed", 8, "int8"),
    ("i16", "signed", 16, "int16"), ("i32", "signed", 32, "int32"), ("i64", "signed", 64, "int64"),
    ("ui2", "unsigned", 2, "uint2"), ("ui4", "unsigned", 4, "uint4"), ("ui8", "unsigned", 8, "uint8"),
    ("ui16", "unsigned", 16, "uint16"), ("ui32", "unsigned", 32, "uint32"), ("ui64", "unsigned", 64, "uint64"),
    ("index", "index", 64, "int64"),
    ("f4E2M1FN", "float", 4, "float4_e2m1fn"),
    ("f6E2M3FN", "float", 6, "float6_e2m3fn"),
    ("f6E3M2FN", "float", 6, "float6_e3m2fn"),
    ("f8E3M4", "float", 8, "float8_e3m4"),
    ("f8E4M3", "float", 8, "float8_e4m3"),
    ("f8E4M3FN", "float", 8, "float8_e4m3fn"),
    ("f8E4M3FNUZ", "float", 8, "float8_e4m3fnuz"),
    ("f8E4M3B11FNUZ", "float", 8, "float8_e4m3b11fnuz"),
    ("f8E5M2", "float", 8, "float8_e5m2"),
    ("f8E5M2FNUZ", "float", 8, "float8_e5m2fnuz"),
    ("f8E8M0FNU", "float", 8, "float8_e8m0fnu"),
    ("bf16", "float", 16, "bfloat16"),
    ("f16", "float", 16, "float16"),
    ("f32", "float", 32, "float32"),
    ("tf32", "float", 19, "float32"),
    ("f64", "float", 64, "float64"),
    ("complex<f32>", "complex", 64, "complex64"),
    ("complex<f64>", "complex", 128, "complex128"),
]

ELEMENT_TYPES: dict[str, ElementType] = {}
_DTYPES: dict[str, np.dtype] = {}
for _name, _kind, _bits, _dt in _ELEMENT_TABLE:
    ELEMENT_TYPES[_name] = ElementType(_name, _kind, _bits, _dt)
    _DTYPES[_name] = np.dtype(getattr(ml_dtypes, _dt)) if hasattr(ml_dtypes, _dt) and _dt not in (
        "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
        "float16", "float32", "float64", "complex64", "complex128") else np.dtype(_dt)
# MLIR also spells signed integers with an explicit `si` prefix.
for _b in (2, 4, 8, 16, 32, 64):
    ELEMENT_TYPES[f"si{_b}"] = ELEMENT_TYPES[f"i{_b}"]

_BY_DTYPE = {}
for _name in ("i1", "i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64",
              "f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FN", "f8E4M3FNUZ",
              "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "bf16", "f16", "f32", "f64",
              "complex<f32>", "complex<f64>"):
    _BY_DTYPE[_DTYPES[_name]] = ELEMENT_TYPES[_name]


def element_type(name: str) -> ElementType:
    """The element type spelled `name` in MLIR text (KeyError if unknown)."""
    return ELEMENT_TYPES[name]


def element_type_for_dtype(dtype) -> ElementType:
    dt = np.dtype(dtype)
    try:
        return _BY_DTYPE[dt]
    except KeyError:
        raise KeyError(f"no StableHLO element type for numpy dtype {dt}") from None


# ---------------------------------------------------------------- composite types

@dataclass(frozen=True)
class QuantizedType(Type):
    """`!quant.uniform<storage[:expressed][, axis]{scales...}>` (per-tensor or per-axis)."""

    storage_type: ElementType
    expressed_type: ElementType
    scales: Tuple[float, ...]
    zero_points: Tuple[int, ...]
    quantized_dimension: Optional[int] = None
    storage_min: Optional[int] = None
    storage_max: Optional[int] = None
    signed: bool = True

    @property
    def name(self) -> str:
        return str(self)

    @property
    def kind(self) -> str:
        return "quantized"

    @property
    def dtype(self) -> np.dtype:
        return self.storage_type.dtype

    def __str__(self) -> str:
        from ..text.printer import format_float
        st = self.storage_type.name
        if self.storage_min is not None:
            st += f"<{self.storage_min}:{self.storage_max}>"
        head = f"{st}:{self.expressed_type.name}"
        def one(s, z):
            return format_float(s, self.expressed_type) + (f":{z}" if z != 0 else "")
        if self.quantized_dimension is None:
            return f"!quant.uniform<{head}, {one(self.scales[0], self.zero_points[0])}>"
        body = ",".join(one(s, z) for s, z in zip(self.scales, self.zero_points))
        return f"!quant.uniform<{head}:{self.quantized_dimension}, {{{body}}}>"


Dim = Optional[int]  # None means dynamic (`?`)


@dataclass(frozen=True)
class TensorType(Type):
    shape: Tuple[Dim, ...]
    element_type: Union[ElementType, QuantizedType]
    encoding: Optional[object] = None   # an Attribute, e.g. #stablehlo.bounds<...>

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def is_static(self) -> bool:
        return all(d is not None for d in self.shape)

    @property
    def num_elements(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    def __str__(self) -> str:
        dims = "".join(("?" if d is None else str(d)) + "x" for d in self.shape)
        enc = f", {self.encoding}" if self.encoding is not None else ""
        return f"tensor<{dims}{self.element_type}{enc}>"


@dataclass(frozen=True)
class UnrankedTensorType(Type):
    element_type: Union[ElementType, QuantizedType]

    def __str__(self) -> str:
        return f"tensor<*x{self.element_type}>"


@dataclass(frozen=True)
class TokenType(Type):
    dialect: str = "stablehlo"   # `!stablehlo.token`; also `!vhlo.token_v1`-like spellings

    def __str__(self) -> str:
        return f"!{self.dialect}.token"


@dataclass(frozen=True)
class TupleType(Type):
    types: Tuple[Type, ...]

    def __str__(self) -> str:
        return "tuple<" + ", ".join(str(t) for t in self.types) + ">"


@dataclass(frozen=True)
class FunctionType(Type):
    inputs: Tuple[Type, ...]
    results: Tuple[Type, ...]

    def __str__(self) -> str:
        ins = "(" + ", ".join(str(t) for t in self.inputs) + ")"
        if len(self.results) == 1 and not isinstance(self.results[0], FunctionType):
            return f"{ins} -> {self.results[0]}"
        return f"{ins} -> (" + ", ".join(str(t) for t in self.results) + ")"


@dataclass(frozen=True)
class NoneType(Type):
    def __str__(self) -> str:
        return "none"


@dataclass(frozen=True)
class OpaqueType(Type):
    """A type of a dialect we do not model (`!foo.bar<...>`), kept as its text."""

    text: str

    def __str__(self) -> str:
        return self.text


def scalar_tensor(et: ElementType) -> TensorType:
    return TensorType((), et)
