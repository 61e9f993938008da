"""Type and shape helpers for the verifier: compatibility with dynamic dimensions (`?` matches
any size), element types with quantization parameters ignored, and small inference rules."""
from __future__ import annotations

from typing import Optional, Sequence

from ..ir.attributes import DenseArrayAttr, DenseElementsAttr, IntegerAttr, BoolAttr
from ..ir.types import ElementType, QuantizedType, TensorType, TupleType, UnrankedTensorType


def is_tensor(t) -> bool:
    return isinstance(t, (TensorType, UnrankedTensorType))


def ranked(t) -> bool:
    return isinstance(t, TensorType)


def elem(t):
    return getattr(t, "element_type", None)


def is_quantized(t) -> bool:
    return isinstance(elem(t), QuantizedType)


def base_elem(et):
    """The element type with quantization parameters dropped (storage:expressed pair)."""
    if isinstance(et, QuantizedType):
        return ("q", et.storage_type, et.expressed_type)
    return et


def dim_ok(a: Optional[int], b: Optional[int]) -> bool:
    return a is None or b is None or a == b


def shapes_compatible(a, b) -> bool:
    if not (ranked(a) and ranked(b)):
        return True
    return a.rank == b.rank and all(dim_ok(x, y) for x, y in zip(a.shape, b.shape))


def shape_matches(t, shape: Sequence[Optional[int]]) -> bool:
    if not ranked(t):
        return True
    return t.rank == len(shape) and all(dim_ok(x, y) for x, y in zip(t.shape, shape))


def elems_equal(a, b, ignore_quant=False) -> bool:
    ea, eb = elem(a), elem(b)
    if ignore_quant:
        return base_elem(ea) == base_elem(eb)
    return ea == eb


def types_compatible(a, b, ignore_quant=False) -> bool:
    """Equal types up to dynamic dimensions (and, if asked, quantization parameters)."""
    if isinstance(a, TupleType) or isinstance(b, TupleType):
        if not (isinstance(a, TupleType) and isinstance(b, TupleType)) or len(a.types) != len(b.types):
            return False
        return all(types_compatible(x, y, ignore_quant) for x, y in zip(a.types, b.types))
    if is_tensor(a) and is_tensor(b):
        return shapes_compatible(a, b) and elems_equal(a, b, ignore_quant)
    if is_tensor(a) != is_tensor(b):
        return False
    return type(a) is type(b) and (a == b or type(a).__name__ == "TokenType")


def ints(attr) -> tuple:
    """The integers of a dense array / dense elements / integer attribute (or a plain tuple)."""
    if attr is None:
        return ()
    if isinstance(attr, DenseArrayAttr):
        return tuple(int(v) for v in attr.values)
    if isinstance(attr, DenseElementsAttr):
        return tuple(int(v) for v in attr.array.reshape(-1))
    if isinstance(attr, IntegerAttr):
        return (int(attr.value),)
    if isinstance(attr, (tuple, list)):
        return tuple(int(v) for v in attr)
    return tuple(attr)


def int_value(attr, default=None):
    if attr is None:
        return default
    if isinstance(attr, (IntegerAttr, BoolAttr)):
        return int(attr.value)
    return int(attr)


def fmt(t) -> str:
    return str(t)


def is_scalar_tensor(t) -> bool:
    return ranked(t) and t.rank == 0


def is_pred(t) -> bool:
    e = elem(t)
    return isinstance(e, ElementType) and e.kind == "bool"


def promotable(from_et, to_et) -> bool:
    """Element type `from_et` may widen to `to_et` in a reduction body (same kind, no narrower)."""
    if from_et == to_et:
        return True
    if isinstance(from_et, QuantizedType) or isinstance(to_et, QuantizedType):
        if isinstance(from_et, QuantizedType) and isinstance(to_et, QuantizedType):
            return (from_et.expressed_type == to_et.expressed_type
                    and from_et.storage_type.bits <= to_et.storage_type.bits
                    and from_et.scales == to_et.scales and from_et.zero_points == to_et.zero_points
                    and from_et.quantized_dimension == to_et.quantized_dimension)
        return False
    if not (isinstance(from_et, ElementType) and isinstance(to_et, ElementType)):
        return True
    if from_et.kind != to_et.kind:
        return False
    return from_et.bits <= to_et.bits


def const_ints(value):
    """The integers of `value` when a `stablehlo.constant` defines it, else None."""
    owner = getattr(value, "owner", None)
    if getattr(owner, "name", None) != "stablehlo.constant":
        return None
    try:
        return ints(owner.attributes.get("value"))
    except (TypeError, ValueError, AttributeError):
        return None
