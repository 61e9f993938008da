"""Type, shape and region helpers shared by the verifier modules: compatibility with dynamic
dimensions (`?` matches any size), element types with quantization parameters ignored, small
inference rules, the checks several ops share (the spec's same-type traits, reduction bodies,
constant shape operands) and reading region arguments and terminators."""
from __future__ import annotations

import re
from typing import Optional, Sequence

from .. import spec
from ..errors import LimitError
from ..limits import DEFAULT as DEFAULT_LIMITS, check_tensor
from ..ir.attributes import BoolAttr, DenseArrayAttr, DenseElementsAttr, IntegerAttr, StructAttr
from ..ir.types import ELEMENT_TYPES, ElementType, QuantizedType, TensorType, TupleType, UnrankedTensorType, elem


def is_tensor(t) -> bool:
    return isinstance(t, (TensorType, UnrankedTensorType))


def ranked(t) -> bool:
    return isinstance(t, TensorType)


def is_quantized(t) -> bool:
    return isinstance(elem(t), QuantizedType)


def base_elem(et):
    """The element type with quantization parameters dropped (storage:expressed pair)."""
    if isinstance(et, QuantizedType):
        return ("q", et.storage_type, et.expressed_type)
    return et


def dim_ok(a: Optional[int], b: Optional[int]) -> bool:
    return a is None or b is None or a == b


def _within_bounds(shape, bs) -> bool:
    return bs is None or all(b is None or d is None or d <= b for d, b in zip(shape, bs))


def shapes_compatible(a, b) -> bool:
    """Same rank and equal sizes where both are static; a static size must also fit the other
    type's bound (`tensor<5xf32>` is not compatible with `tensor<?xf32, #stablehlo.bounds<4>>`)."""
    if not (ranked(a) and ranked(b)):
        return True
    return (a.rank == b.rank and all(dim_ok(x, y) for x, y in zip(a.shape, b.shape))
            and _within_bounds(a.shape, bounds(b)) and _within_bounds(b.shape, bounds(a)))


def merge_dims_with_bounds(types):
    """The most specific shape and bounds of `types` (ranked, equal rank), as upstream infers an
    elementwise result: a static size wins and must fit every bound, bounds combine by min.
    Returns (shape, bounds) or a message saying which dimension conflicts."""
    shape = list(types[0].shape)
    bs = list(bounds(types[0]) or [None] * len(shape))
    for t in types[1:]:
        tb = bounds(t) or [None] * t.rank
        for d in range(len(shape)):
            ls, rs, lb, rb = shape[d], t.shape[d], bs[d] if d < len(bs) else None, tb[d] if d < len(tb) else None
            if ls is not None or rs is not None:
                if ls is not None and rs is not None and ls != rs:
                    return f"Mismatched dimension sizes {ls} and {rs} in dimension {d}"
                size = ls if ls is not None else rs
                bound = lb if lb is not None else rb
                if bound is not None and size > bound:
                    return f"Mismatched dimension size {size} and bound {bound} in dimension {d}"
                shape[d], bs[d] = size, None
            else:
                bs[d] = min(lb, rb) if lb is not None and rb is not None else (lb if lb is not None else rb)
    return shape, bs


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


MAX_INT_LIST = 1 << 20     # the longest integer list attribute the verifier reads element by element


def ints(attr) -> tuple:
    """The integers of a dense array / dense elements / integer attribute (or a plain tuple)."""
    if attr is None:
        return ()
    if isinstance(attr, DenseArrayAttr):
        return tuple(int(v) for v in attr.values)
    if isinstance(attr, DenseElementsAttr):
        # sizes from the type first: a splat `dense<0> : tensor<99999999999xi64>` is not expanded
        n = check_tensor(attr.array.shape, 64, "integer list attribute",
                         limits=DEFAULT_LIMITS.replace(max_tensor_elements=MAX_INT_LIST))
        return tuple(int(v) for v in attr.array.reshape(-1)) if n else ()
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
    except (TypeError, ValueError, AttributeError, LimitError):
        return None

# ------------------------------------------------------------------ checks shared by several ops

def same_type_traits(op, check, cid: str) -> None:
    """The spec's same-operands-and-result type / shape / element type traits of `op`, reported
    under constraint `cid` ("" for ops whose spec entry has no constraint ids)."""
    s = spec.op(op.name)
    vals = [v for v in op.operands + op.results if is_tensor(v.type)]
    if len(vals) < 2:
        return
    if s.has_trait("same_operands_and_result_type") or s.has_trait("same_operands_and_result_shape"):
        # the result is inferred from the operands (sizes and bounds merged) and must fit it
        ins = [v.type for v in op.operands if ranked(v.type)]
        if len(ins) >= 1 and all(t.rank == ins[0].rank for t in ins):
            merged = merge_dims_with_bounds(ins)
            check(not isinstance(merged, str), cid, f"failed to infer returned types: {merged}")
    if s.has_trait("same_operands_and_result_type"):
        first = vals[0].type
        check(all(types_compatible(first, v.type, ignore_quant=True) for v in vals[1:]), cid,
              f"operands and result must have the same type (got {types_of(op.operands + op.results)})")
    if s.has_trait("same_operands_and_result_shape"):
        first = vals[0].type
        check(all(shapes_compatible(first, v.type) for v in vals[1:]), cid,
              f"operands and result must have the same shape (got {types_of(op.operands + op.results)})")
    if s.has_trait("same_operands_and_result_element_type"):
        first = vals[0].type
        check(all(elems_equal(first, v.type, ignore_quant=True) for v in vals[1:]), cid,
              f"operands and result must have the same element type (got {types_of(op.operands + op.results)})")


SAME_TYPE_TRAITS = ("same_operands_and_result_type", "same_operands_and_result_shape",
                    "same_operands_and_result_element_type")


def types_of(vals):
    return ", ".join(str(v.type) for v in vals)


def bounds(t):
    """The `#stablehlo.bounds<...>` of a tensor type (None entries unbounded), or None."""
    enc = getattr(t, "encoding", None)
    if isinstance(enc, StructAttr) and enc.name == "bounds":
        return tuple(enc.get("bounds", ()) or ())
    return None


def future_members(t):
    """The member type texts of a `!stablehlo.future<T1, T2, ...>` type (the parser keeps it
    opaque), split at top-level commas; None for any other type."""
    text = getattr(t, "text", None)
    if not isinstance(text, str) or not text.startswith("!stablehlo.future"):
        return None
    body = text[len("!stablehlo.future"):].strip()
    if not (body.startswith("<") and body.endswith(">")):
        return []
    out, depth, cur = [], 0, ""
    for ch in body[1:-1]:
        if ch in "<([{":
            depth += 1
        elif ch in ">)]}":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


_SIMPLE_TENSOR_TEXT = re.compile(r"tensor<((?:(?:\d+|\?)x)*)([a-z][a-z0-9]*)>")


def simple_tensor_type(text: str):
    """`tensor<2x?xf32>` -> its TensorType; None for any spelling this does not cover (bounds,
    quantized or unranked element types), which the caller then leaves unchecked."""
    m = _SIMPLE_TENSOR_TEXT.fullmatch(text.replace(" ", ""))
    if not m or m.group(2) not in ELEMENT_TYPES:
        return None
    dims = tuple(None if d == "?" else int(d) for d in m.group(1).split("x")[:-1])
    return TensorType(dims, ELEMENT_TYPES[m.group(2)])


def region_returns(region):
    if not region.blocks or not region.blocks[-1].operations:
        return None
    term = region.blocks[-1].operations[-1]
    return [v.type for v in term.operands]


def region_args(region):
    return [a.type for a in region.blocks[0].arguments] if region.blocks else []


def _fp_or_equal(a, b) -> bool:
    """Element types equal, or both floating point (a reduction body may accumulate in another
    float precision than its arguments)."""
    ea, eb = elem(a), elem(b)
    if isinstance(ea, ElementType) and isinstance(eb, ElementType) and ea.kind == eb.kind == "float":
        return True
    return ea == eb


def _promotable_fp(from_et, to_et) -> bool:
    if isinstance(from_et, ElementType) and isinstance(to_et, ElementType) and from_et.kind == to_et.kind == "float":
        return True
    return promotable(from_et, to_et)


def reducer_body(check, op, region, inputs, inits, cid, allowed=()):
    """The reduction-body rule reduce, reduce_window, scatter, select_and_scatter and the reducing
    collectives share. For n inputs the body takes 2n arguments (n accumulators, then n input
    elements) and returns n tensors; result i has argument i's type, argument n+i's type up to
    float precision and init value i's shape; its element type is promotable from init value i's,
    and argument n+i's from input i's. Argument n+i has at most len(`allowed`) dimensions, which
    appear in order among `allowed` (the op's kept/window dimensions; none for a 0-d body).
    Returns the body's result types (None when the body has no terminator)."""
    n = len(inits)
    args = region_args(region)
    rets = region_returns(region)
    check(len(args) == 2 * n, cid, f"body must take {2 * n} arguments, takes {len(args)}")
    if rets is None:
        return None
    check(len(rets) > 0, cid, "The reduction-region expected to return some value(s)")
    check(len(rets) == n, cid, f"body must return {n} value(s), returns {len(rets)}")
    for i, t in enumerate(rets):
        check(is_tensor(t), cid, f"body result #{i} must be a tensor, got {t}")
    for i in range(n):
        acc, a, x = rets[i], args[i], args[n + i]
        check(types_compatible(acc, a), cid,
              f"body result #{i} ({acc}) must have the type of argument #{i} ({a})")
        check(shapes_compatible(acc, x) and _fp_or_equal(acc, x), cid,
              f"body argument #{n + i} ({x}) must have the type of result #{i} ({acc})")
        check(shapes_compatible(inits[i], acc), cid,
              f"body result #{i} ({acc}) must have the shape of init value {inits[i]}")
        check(_promotable_fp(elem(inits[i]), elem(acc)), cid,
              f"body result #{i} type {acc} is not promotable from {inits[i]}")
        check(_promotable_fp(elem(inputs[i]), elem(x)), cid,
              f"body argument #{n + i} type {x} is not promotable from {elem(inputs[i])}")
        if ranked(x):
            check(x.rank <= len(allowed), cid,
                  f"The rank of reduction-region's argument at index {n + i} is expected to be <= {len(allowed)}, got {x.rank}")
            k = 0
            for s in allowed:
                if k < x.rank and dim_ok(s, x.shape[k]):
                    k += 1
            check(k == x.rank, cid, f"The shape of reduction-region's argument at index {n + i} is not compatible "
                  f"with that of reduce-op's input-parameter at index {i}")
    return rets


def sorted_distinct(xs):
    return list(xs) == sorted(set(xs))


def constant_output_shape(op, check, value, r, cid):
    """A constant shape operand must describe the result type."""
    shape = const_ints(value)
    if shape is None or not ranked(r):
        return
    fmt = "[" + ", ".join(map(str, shape)) + "]"
    check(all(x >= 0 for x in shape) and len(shape) == r.rank and all(dim_ok(x, y) for x, y in zip(shape, r.shape)),
          cid, f"output shape {fmt} is incompatible with return type of operation '{r}'")
