"""Attributes of the IR: builtin ones (integers, floats, strings, arrays, dense elements, ...),
StableHLO enums and structs (`#stablehlo<comparison_direction EQ>`, `#stablehlo.gather<...>`),
locations, and opaque attributes of dialects we do not model (kept as text)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Tuple

import numpy as np

from .. import spec
from .types import ELEMENT_TYPES, ElementType, TensorType, Type


class Attribute:
    __slots__ = ()


@dataclass(frozen=True)
class IntegerAttr(Attribute):
    value: int
    type: Optional[Type] = None     # None means the default i64 of a bare integer


@dataclass(frozen=True)
class FloatAttr(Attribute):
    """A float of type `type`; the value is held rounded to that type's precision, as MLIR's
    APFloat holds it (so `1.0e-3 : f32` is the f32 nearest to 0.001)."""

    value: float
    type: Type

    def __post_init__(self):
        dt = getattr(self.type, "dtype", None)
        if dt is not None and getattr(self.type, "kind", None) == "float" and dt != np.float64:
            with np.errstate(all="ignore"):
                object.__setattr__(self, "value", float(np.asarray(self.value, dtype=np.float64).astype(dt)))

    def __eq__(self, other):
        if not isinstance(other, FloatAttr) or other.type != self.type:
            return False
        a, b = self.value, other.value
        return (a == b and np.signbit(a) == np.signbit(b)) or (a != a and b != b)

    def __hash__(self):
        return hash(("f", repr(self.value), self.type))


@dataclass(frozen=True)
class ComplexAttr(Attribute):
    """MLIR's complex number attribute, `#complex.number<:f32 1.0, 2.0> : complex<f32>`: one
    complex scalar of type `type` (complex<f32> or complex<f64>), its parts held rounded to the
    part type's precision as MLIR's APFloats hold them."""

    real: float
    imag: float
    type: Type

    def __post_init__(self):
        part = self.part_type
        with np.errstate(all="ignore"):
            for f in ("real", "imag"):
                v = float(getattr(self, f))
                if part is not None and part.dtype != np.float64:
                    v = float(np.asarray(v, dtype=np.float64).astype(part.dtype))
                object.__setattr__(self, f, v)

    @property
    def part_type(self) -> Optional[ElementType]:
        """The float type of the real and imaginary parts (f32 for complex<f32>)."""
        name = getattr(self.type, "name", "")
        return ELEMENT_TYPES.get(name[8:-1]) if name.startswith("complex<") else None

    @property
    def value(self) -> complex:
        return complex(self.real, self.imag)

    def __eq__(self, other):
        if not isinstance(other, ComplexAttr) or other.type != self.type:
            return False
        return all((a == b and np.signbit(a) == np.signbit(b)) or (a != a and b != b)
                   for a, b in ((self.real, other.real), (self.imag, other.imag)))

    def __hash__(self):
        return hash(("c", repr(self.real), repr(self.imag), self.type))


@dataclass(frozen=True)
class BoolAttr(Attribute):
    value: bool


@dataclass(frozen=True)
class StringAttr(Attribute):
    value: str
    type: Optional[Type] = None


@dataclass(frozen=True)
class UnitAttr(Attribute):
    pass


@dataclass(frozen=True)
class ArrayAttr(Attribute):
    elements: Tuple[Attribute, ...]


@dataclass(frozen=True)
class DenseArrayAttr(Attribute):
    """`array<i64: 1, 2>`: element_type is an ElementType (i1, i8..i64, f32, f64)."""

    element_type: ElementType
    values: Tuple

    def __eq__(self, other):
        return (isinstance(other, DenseArrayAttr) and other.element_type == self.element_type
                and len(other.values) == len(self.values)
                and all(a == b or (a != a and b != b) for a, b in zip(self.values, other.values)))

    def __hash__(self):
        return hash((self.element_type, tuple(repr(v) for v in self.values)))


@dataclass(frozen=True)
class DictAttr(Attribute):
    """A dictionary attribute; entries are kept sorted by name, as MLIR keeps them."""

    entries: Tuple[Tuple[str, Attribute], ...]

    def __post_init__(self):
        ents = tuple(self.entries)
        if any(ents[i][0] > ents[i + 1][0] for i in range(len(ents) - 1)):
            ents = tuple(sorted(ents, key=lambda kv: kv[0]))
        object.__setattr__(self, "entries", ents)

    def get(self, key, default=None):
        for k, v in self.entries:
            if k == key:
                return v
        return default

    def as_dict(self) -> dict:
        return dict(self.entries)


@dataclass(frozen=True)
class TypeAttr(Attribute):
    type: Type


@dataclass(frozen=True)
class SymbolRefAttr(Attribute):
    root: str
    nested: Tuple[str, ...] = ()


class DenseElementsAttr(Attribute):
    """`dense<...> : tensor<...>`: `array` is a numpy array of the tensor's storage dtype and
    shape (read-only). Equality is by type and bit pattern."""

    __slots__ = ("type", "array", "_hash")

    def __init__(self, type: TensorType, array: np.ndarray):
        self.type = type
        self.array = array
        self._hash = None

    def __eq__(self, other):
        if not isinstance(other, DenseElementsAttr) or other.type != self.type:
            return False
        a, b = self.array, other.array
        if a.shape != b.shape:
            return False
        if a.size and (_broadcast_one(a) or _broadcast_one(b)):
            # a splat held as a broadcast view: compare one element, never materialize
            if not (self.is_splat and other.is_splat):
                return False
            return _first_bytes(a) == _first_bytes(b)
        return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()

    def __hash__(self):
        if self._hash is None:
            head = np.asarray(self.array.flat[:64])     # a sample: no copy of a large constant
            self._hash = hash((self.type, np.ascontiguousarray(head).tobytes()))
        return self._hash

    def __repr__(self):
        return f"DenseElementsAttr({self.type}, {self.array!r})"

    @property
    def is_splat(self) -> bool:
        if self.array.size == 0:
            return False
        if _broadcast_one(self.array):
            return True             # a splat kept as a broadcast view of its one value
        a = np.ascontiguousarray(self.array).reshape(-1)
        raw = a.view(np.uint8).reshape(a.size, -1)
        return bool(np.all(raw == raw[:1]))


def _broadcast_one(a: np.ndarray) -> bool:
    """A view of one value broadcast to the whole shape (every stride 0): how splats are held."""
    return a.ndim > 0 and not any(a.strides)


def _first_bytes(a: np.ndarray) -> bytes:
    return np.asarray(a.flat[0]).tobytes() if a.size else b""


@dataclass(frozen=True)
class DenseResourceAttr(Attribute):
    """`dense_resource<key> : tensor<...>`; the blob lives in the module's resource section."""

    type: TensorType
    key: str


@dataclass(frozen=True)
class EnumAttr(Attribute):
    """A StableHLO/CHLO enum: `#stablehlo<comparison_direction EQ>` -> (stablehlo, comparison_direction, EQ)."""

    dialect: str
    kind: str
    value: str


@dataclass(frozen=True)
class StructAttr(Attribute):
    """A dialect struct attribute such as `#stablehlo.gather<offset_dims = [1], ...>`.
    `fields` keeps (name, value) pairs in text order; values are ints, bools, tuples of ints,
    strings or Attributes."""

    dialect: str
    name: str
    fields: Tuple[Tuple[str, object], ...]

    def get(self, key, default=None):
        for k, v in self.fields:
            if k == key:
                return v
        return default


@dataclass(frozen=True)
class OpaqueAttr(Attribute):
    """An attribute of a dialect we do not model (`#foo.bar<...>`), kept as its text."""

    text: str


@dataclass(frozen=True)
class AffineMapAttr(Attribute):
    text: str


# custom_call's api_version enum, in value order (the IR keeps the value as an i32 IntegerAttr)
CUSTOM_CALL_API_VERSIONS = spec.enum("custom_call_api_version").names   # i32 value = index


def _struct_default(kind: str, value):
    """A struct field's spec default as the parser holds it: enum-valued fields (result_accuracy's
    mode) as their `#stablehlo.<enum>` struct, lists as tuples, numbers as they are."""
    if kind in spec.load().enums:
        return StructAttr(spec.enum(kind).dialect, kind, (("value", value),))
    return value


# Dialect struct attributes whose fields have defaults (omitted when default in text), by
# their text mnemonic: (field, default) pairs in text order, from spec/attributes.yaml.
STRUCT_FIELDS = {st.mnemonic: tuple((f.name, _struct_default(f.kind, f.default)) for f in st.fields)
                 for st in spec.structs() if all(f.has_default for f in st.fields)}


def dot_algorithm_problems(alg: StructAttr) -> list:
    """(constraint id, message) for each way a #stablehlo.dot_algorithm is invalid by itself
    (upstream checks these when the attribute is built, i.e. while parsing)."""
    out = []
    f = dict(alg.fields)
    counts = []
    for k in ("lhs_component_count", "rhs_component_count", "num_primitive_operations"):
        v = f.get(k, 0) or 0
        if isinstance(v, bool) or not isinstance(v, int):
            # a bare integer, as MLIR's struct parser reads it (`-1 : i64` is not one)
            return [("", f"expected an integer for {k}")]
        counts.append(v)
    lc, rc, n = counts
    if lc <= 0:
        out.append(("C22", "lhs component count must be positive"))
    if rc <= 0:
        out.append(("C23", "rhs component count must be positive"))
    if n <= 0:
        out.append(("C24", "num primitive operations must be positive"))
    lt, rt, at = (getattr(f.get(k), "name", str(f.get(k))) for k in
                  ("lhs_precision_type", "rhs_precision_type", "accumulation_type"))
    imprecise = bool(getattr(f.get("allow_imprecise_accumulation"), "value", f.get("allow_imprecise_accumulation")))
    if not out and not _known_dot_algorithm(lt, rt, at, lc, rc, n, imprecise):
        out.append(("", f"dot algorithm not known to be supported on any hardware: {{lhs:'{lt}', rhs:'{rt}', accum:'{at}', "
                        f"lhs_components:{lc}, rhs_components:{rc}, primitive_ops:{n}, imprecise:{int(imprecise)}}}"))
    return out


# The (lhs, rhs, accumulation, primitive operations) combinations of dot algorithms known to be
# supported by some hardware (single component each); any pair of f8 types accumulating in f32
# with one primitive operation is also known, with or without imprecise accumulation.
_KNOWN_DOT_ALGORITHMS = {
    ("f16", "f16", "f16", 1), ("f16", "f16", "f32", 1), ("bf16", "bf16", "bf16", 1), ("bf16", "bf16", "f32", 1),
    ("bf16", "bf16", "f32", 3), ("bf16", "bf16", "f32", 6), ("bf16", "bf16", "f32", 9), ("tf32", "tf32", "f32", 1),
    ("tf32", "tf32", "f32", 3), ("f32", "f32", "f32", 1), ("f64", "f64", "f64", 1),
}
_ANY_F8 = {"f8E3M4", "f8E4M3", "f8E4M3FN", "f8E5M2", "f8E4M3FNUZ", "f8E4M3B11FNUZ", "f8E5M2FNUZ"}


def _known_dot_algorithm(lt, rt, at, lc, rc, n, imprecise):
    if lc != 1 or rc != 1:
        return False
    if lt in _ANY_F8 and rt in _ANY_F8 and at == "f32" and n == 1:
        return True
    return not imprecise and (lt, rt, at, n) in _KNOWN_DOT_ALGORITHMS


# ------------------------------------------------------------------ locations

class Location(Attribute):
    __slots__ = ()


@dataclass(frozen=True)
class UnknownLoc(Location):
    pass


@dataclass(frozen=True)
class FileLineColLoc(Location):
    filename: str
    line: int
    column: int
    end_line: Optional[int] = None
    end_column: Optional[int] = None


@dataclass(frozen=True)
class NameLoc(Location):
    name: str
    child: Optional[Location] = None


@dataclass(frozen=True)
class CallSiteLoc(Location):
    callee: Location
    caller: Location


@dataclass(frozen=True)
class FusedLoc(Location):
    locations: Tuple[Location, ...]
    metadata: Optional[Attribute] = None


UNKNOWN_LOC = UnknownLoc()


def describe_location(loc) -> Optional[str]:
    """A `file:line:col` string for diagnostics, if the location names a source position."""
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename}:{loc.line}:{loc.column}"
    if isinstance(loc, NameLoc):
        return describe_location(loc.child) if loc.child else None
    if isinstance(loc, CallSiteLoc):
        return describe_location(loc.callee)
    if isinstance(loc, FusedLoc):
        for sub in loc.locations:
            d = describe_location(sub)
            if d:
                return d
    return None
