"""Types of the IR: element types (every StableHLO one), tensors, tokens, tuples, functions,
quantized types, and opaque types of other dialects. All types are immutable and hashable."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple, Union

import numpy as np

from .. import spec as _spec
from .floats import format_float


class Type:
    """Base class of every IR type."""

    __slots__ = ()
    # what the interpreter keeps on a type object it has checked (types are immutable and
    # shared by the parses of a process): see `interpreter.plan.once_bytes` (a pair that
    # matches no limits until then)
    _ob = (None, 0)


@dataclass(frozen=True)
class ElementType(Type):
    """A scalar type: integers (i1, si2..si64 spelled i2..i64, ui2..ui64), floats (f4..f64,
    bf16, f8 variants), complex, and `index`."""

    name: str          # text spelling, e.g. "i8", "ui4", "f8E4M3FN", "complex<f32>"
    kind: str          # bool | signed | unsigned | float | complex | index
    bits: int
    dtype_name: str    # numpy / ml_dtypes name used for storage

    def __eq__(self, other):
        # (the dataclass's field-by-field comparison, after the identity check that decides
        # it for the shared element types)
        if self is other:
            return True
        if other.__class__ is not ElementType:
            return NotImplemented
        return (self.name, self.kind, self.bits, self.dtype_name) == \
            (other.name, other.kind, other.bits, other.dtype_name)

    def __str__(self) -> str:
        return self.name

    @property
    def dtype(self) -> np.dtype:
        try:
            return _DTYPES[self.name]
        except KeyError:
            return _ml_dtype(self.name)

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


# Element types from spec/element_types.yaml: tf32 has no numpy type and is held in float32.
# The types numpy has are made here; the others (bf16, f8*, f4, sub-byte ints) come from
# ml_dtypes, imported at their first use: its import costs 0.5-1 s (it registers hundreds of
# ufunc loops), most of a command-line run of a program that uses none of them.
ELEMENT_TYPES: dict[str, ElementType] = {}
_DTYPES: dict[str, np.dtype] = {}
_BY_DTYPE = {}
_ML_NAMES: dict[str, str] = {}        # element type -> ml_dtypes attribute, until loaded
for _e in _spec.element_types():
    _dt = _e.numpy or "float32"
    ELEMENT_TYPES[_e.text] = ElementType(_e.text, _e.kind, _e.bits, _dt)
    if hasattr(np, _dt):
        _DTYPES[_e.text] = np.dtype(_dt)
        if _e.numpy is not None and _e.kind != "index":
            _BY_DTYPE[_DTYPES[_e.text]] = ELEMENT_TYPES[_e.text]
    else:
        _ML_NAMES[_e.text] = _dt
# MLIR also spells signed integers with an explicit `si` prefix.
for _b in (2, 4, 8, 16, 32, 64):
    ELEMENT_TYPES[f"si{_b}"] = ELEMENT_TYPES[f"i{_b}"]


def load_ml_dtypes() -> None:
    """Import ml_dtypes and make the element types it stores (once; also what
    `element_type_for_dtype` needs before it can know an ml_dtypes array's type)."""
    if not _ML_NAMES:
        return
    import ml_dtypes
    for text, name in list(_ML_NAMES.items()):
        dt = np.dtype(getattr(ml_dtypes, name))
        _DTYPES[text] = dt
        if ELEMENT_TYPES[text].kind != "index":
            _BY_DTYPE[dt] = ELEMENT_TYPES[text]
        del _ML_NAMES[text]


def _ml_dtype(name: str) -> np.dtype:
    load_ml_dtypes()
    return _DTYPES[name]


def element_type(name: str) -> ElementType:
    """The element type spelled `name` in MLIR text (KeyError if unknown)."""
    return ELEMENT_TYPES[name]


def element_type_for_dtype(dtype) -> ElementType:
    dt = np.dtype(dtype)
    try:
        return _BY_DTYPE[dt]
    except KeyError:
        pass
    load_ml_dtypes()
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

    def __eq__(self, other):
        # (the dataclass's field-by-field comparison, after an identity check: the parser
        # gives equal types of one module one object)
        if self is other:
            return True
        if other.__class__ is not TensorType:
            return NotImplemented
        return (self.shape, self.element_type, self.encoding) == \
            (other.shape, other.element_type, other.encoding)

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


def elem(t, storage: bool = False):
    """The element type of a tensor type, ranked or unranked (an element type, plain or
    quantized, is its own); None for a type without one (token, tuple, function, opaque).
    `storage`: a quantized element type gives its storage type (how the values are held)."""
    c = t.__class__
    et = t.element_type if c is TensorType or c is UnrankedTensorType or isinstance(t, (TensorType, UnrankedTensorType)) else t
    if et.__class__ is ElementType:
        return et
    if isinstance(et, QuantizedType):
        return et.storage_type if storage else et
    return et if isinstance(et, ElementType) else None
