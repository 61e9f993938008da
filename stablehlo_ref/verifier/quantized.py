"""Quantization rules of the verifier: well-formed quantized element types (storage type,
scale range, quantization dimension), and the per-op rules on quantization parameters of the
movement ops (broadcast_in_dim, transpose, reshape), elementwise binary ops and dot_general, and
the verifiers of uniform_quantize and uniform_dequantize."""
from __future__ import annotations

import numpy as np

from ..ir.types import ElementType, OpaqueType, QuantizedType, TupleType
from .registry import verifier
from .shapes import bounds, elem, future_members, is_quantized, ranked, shapes_compatible


def _per_axis(et) -> bool:
    return isinstance(et, QuantizedType) and et.quantized_dimension is not None


def element_type_problem(et):
    """What is wrong with a quantized element type on its own, or None."""
    if not isinstance(et, QuantizedType):
        return None
    st, ex = et.storage_type, et.expressed_type
    if not isinstance(st, ElementType) or st.kind not in ("signed", "unsigned") or st.name.startswith("si"):
        return f"illegal quantized storage type {st}"
    if not isinstance(ex, ElementType) or ex.kind != "float":
        return f"illegal quantized expressed type {ex}"
    if et.quantized_dimension is not None and et.quantized_dimension < 0:
        return f"illegal quantized dimension: {et.quantized_dimension}"
    try:
        import ml_dtypes         # (imported at first use: see ir/types.py)
        info = ml_dtypes.finfo(ex.dtype)
        lo, hi = float(info.smallest_subnormal), float(info.max)
    except (TypeError, ValueError, AttributeError):
        lo, hi = None, None
    for s in et.scales:
        if not s > 0:
            return f"scale {s:e} must be positive"
        if lo is not None and not (lo <= s <= hi):
            return f"scale {s:e} out of expressed type range [{lo:e}, {hi:e}]"
    if st.kind == "signed":
        tmin, tmax = -(1 << (st.bits - 1)), (1 << (st.bits - 1)) - 1
    else:
        tmin, tmax = 0, (1 << st.bits) - 1
    smin = et.storage_min if et.storage_min is not None else tmin
    smax = et.storage_max if et.storage_max is not None else tmax
    if not (tmin <= smin < smax <= tmax):
        return f"illegal storage type range [{smin}:{smax}] for {st}"
    for z in et.zero_points:
        # StableHLO's quantized element types keep the zero point inside the storage range
        if not smin <= z <= smax:
            return f"zero point {z} is outside the storage range [{smin}, {smax}] of {et}"
    return None


def bounds_problem(t):
    """What is wrong with a tensor type's `#stablehlo.bounds` encoding, or None: one bound per
    dimension, a bound only on a dynamic dimension, and no negative bound."""
    bs = bounds(t)
    if bs is None or not ranked(t):
        return None
    if len(bs) != t.rank:
        return f"Bounds length is {len(bs)}, expected to be equal to rank({t.rank}) of the tensor {t}"
    for i, (d, b) in enumerate(zip(t.shape, bs)):
        if b is None:
            continue
        if d is not None:
            return f"Static dimension {i} cannot have a bound, use ? to indicate a missing bound in tensor {t}"
        if b < 0:
            return f"bound {b} of dimension {i} must be non-negative in tensor {t}"
    return None


def tensor_type_problem(t):
    """What is wrong with a tensor type's bounds or quantized element type (including per-axis
    parameters against the shape), or None."""
    msg = bounds_problem(t)
    if msg:
        return msg
    et = elem(t)
    msg = element_type_problem(et)
    if msg or not _per_axis(et) or not ranked(t):
        return msg
    d = et.quantized_dimension
    if d >= t.rank:
        return f"quantization dimension {d} is out of range for {t}"
    n = t.shape[d]
    if n is not None and len(et.scales) != n:
        return f"{len(et.scales)} quantization scales do not match the size {n} of dimension {d} of {t}"
    return None


def _same_params(a, b) -> bool:
    return (a.storage_type == b.storage_type and a.expressed_type == b.expressed_type
            and a.storage_min == b.storage_min and a.storage_max == b.storage_max)


def _same_scales(a, b) -> bool:
    return tuple(a.scales) == tuple(b.scales) and tuple(a.zero_points) == tuple(b.zero_points)


def check_movement(check, cid, a, r, allow_dim_change=True, allow_scale_change=False):
    """C1 of the movement ops: same quantized element type except (per axis) the dimension,
    and for broadcast the per-axis scales."""
    ea, er = elem(a), elem(r)
    if not (isinstance(ea, QuantizedType) or isinstance(er, QuantizedType)):
        return
    check(isinstance(ea, QuantizedType) and isinstance(er, QuantizedType) and _same_params(ea, er), cid,
          f"result element type must be the operand's (got {a}, {r})")
    check(_per_axis(ea) == _per_axis(er), cid, f"operand and result must both be per-tensor or both per-axis ({a}, {r})")
    if not _per_axis(ea) or not allow_scale_change:
        check(_same_scales(ea, er), cid, "expect same quantization scale and zero_point")
    if _per_axis(ea) and not allow_dim_change:
        check(ea.quantized_dimension == er.quantized_dimension, cid, "expect same quantization dimension")


def check_broadcast_dims(check, cid, a, r, dims):
    """C6 of broadcast_in_dim / dynamic_broadcast_in_dim."""
    ea, er = elem(a), elem(r)
    if not (_per_axis(ea) and _per_axis(er)) or not ranked(a) or not ranked(r):
        return
    qd = ea.quantized_dimension
    if qd >= len(dims):
        return
    check(er.quantized_dimension == dims[qd], cid,
          f"result quantization_dimension {er.quantized_dimension} not same as broadcast_dimensions[{qd}] = {dims[qd]}")
    sa, sr = a.shape[qd], r.shape[dims[qd]]
    if sa == 1 and sr is not None and sr != 1:
        check(all(s == ea.scales[0] for s in er.scales) and all(z == ea.zero_points[0] for z in er.zero_points), cid,
              "mismatch result scale and operand scale for a broadcast quantization dimension")
    else:
        check(_same_scales(ea, er), cid, "mismatch result and operand quantization scales and zero points")


def check_transpose(check, a, r, perm):
    ea, er = elem(a), elem(r)
    if _per_axis(ea) and _per_axis(er) and er.quantized_dimension < len(perm):
        rd = er.quantized_dimension
        check(ea.quantized_dimension == perm[rd], "C4",
              f"operand quantization_dimension {ea.quantized_dimension} is not same as permutation[{rd}] = {perm[rd]}")


def check_reshape(check, a, r):
    ea, er = elem(a), elem(r)
    if not (_per_axis(ea) and _per_axis(er) and ranked(a) and ranked(r)):
        return
    if not (a.is_static and r.is_static):
        return
    da, dr = ea.quantized_dimension, er.quantized_dimension
    if da >= a.rank or dr >= r.rank:
        return
    prod = lambda xs: int(np.prod(xs, dtype=np.int64)) if xs else 1
    check(prod(a.shape[:da]) == prod(r.shape[:dr]), "C3",
          "product of dimensions before quantization dimension must match between operand and result")
    check(a.shape[da] == r.shape[dr], "C3", "quantization dimension of operand and result must have the same size")
    check(prod(a.shape[da + 1:]) == prod(r.shape[dr + 1:]), "C3",
          "product of dimensions after quantization dimension must match between operand and result")


def check_binary(check, lhs, rhs, res, c_result, c_lhs, c_rhs):
    """The per-axis rules of the quantized elementwise binary ops (add's C5-C7), under the ids
    the caller gives."""
    el, er, eo = elem(lhs), elem(rhs), elem(res)
    check(_per_axis(eo) == (_per_axis(el) or _per_axis(er)), c_result,
          "result must be per-axis quantized exactly when lhs or rhs is")
    if _per_axis(el):
        check(el.quantized_dimension == eo.quantized_dimension, c_lhs,
              "quantization_dimension of lhs and result are not same")
    if _per_axis(er):
        check(er.quantized_dimension == eo.quantized_dimension, c_rhs,
              "quantization_dimension of rhs and result are not same")


def check_dot_general(check, lhs, rhs, res, rc):
    """C14-C20 of dot_general."""
    el, er, eo = elem(lhs), elem(rhs), elem(res)
    if not (is_quantized(lhs) or is_quantized(rhs) or is_quantized(res)):
        return
    check(isinstance(er, QuantizedType) and is_quantized(lhs) == is_quantized(res), "C14",
          "rhs should be quantized for quantized operations and is_quantized(lhs)=is_quantized(result) should hold")
    check(all(z == 0 for z in er.zero_points), "C15", "Zero point of rhs should be 0")
    if _per_axis(er):
        check(er.quantized_dimension not in rc, "C16", "Quantization dimension of rhs should not be in the contracting dimension of rhs")
    if isinstance(el, QuantizedType):
        check(el.storage_type == er.storage_type, "C17", "mismatched lhs and rhs quantization storage types")
        check(el.expressed_type == er.expressed_type == eo.expressed_type, "C18",
              "mismatched lhs, rhs and result quantization expressed types")
        if not _per_axis(er):
            check(not _per_axis(eo), "C19", "mismatched rhs and result quantization granularity")
    else:
        check(el == er.expressed_type == eo, "C20", "mismatched lhs, rhs expressed and result element types")


@verifier("stablehlo.uniform_quantize")
def uniform_quantize(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    ea, er = elem(a), elem(r)
    if isinstance(er, QuantizedType):
        want = ea.expressed_type if isinstance(ea, QuantizedType) else ea
        check(er.expressed_type == want, "C2",
              f"Expressed type of result expected to be '{want}', but got '{er.expressed_type}'")


@verifier("stablehlo.uniform_dequantize")
def uniform_dequantize(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    ea = elem(a)
    if isinstance(ea, QuantizedType):
        check(elem(r) == ea.expressed_type, "C2",
              f"result element type must be the operand's expressed type {ea.expressed_type}, got {r}")


_KNOWN_DIALECT_TYPES = ("!stablehlo.future", "!stablehlo.token")


def type_problem(t):
    """What is wrong with any type on its own (tuples element by element), or None: tensor
    bounds and quantization, and a `!stablehlo.X` type that StableHLO does not define."""
    if isinstance(t, TupleType):
        for x in t.types:
            msg = type_problem(x)
            if msg:
                return msg
        return None
    if isinstance(t, OpaqueType):
        head = t.text.split("<", 1)[0]
        if head.startswith("!stablehlo.") and head not in _KNOWN_DIALECT_TYPES:
            return f"unknown stablehlo type: {head[len('!stablehlo.'):]}"
        for m in future_members(t) or ():
            # a future holds the results of an asynchronous op: ranked tensors only
            if not m.startswith("tensor<") or m.startswith("tensor<*"):
                return f"future element type must be a ranked tensor, but got '{m}'"
        return None
    if ranked(t):
        return tensor_type_problem(t)
    return None
