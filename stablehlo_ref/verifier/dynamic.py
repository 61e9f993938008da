"""Verifiers of the dynamic-shape ops: dynamic_broadcast_in_dim, dynamic_reshape, dynamic_pad,
dynamic_iota, real_dynamic_slice and set/get_dimension_size (shape operands that are constants
must describe the result type)."""
from __future__ import annotations

from . import quantized
from .registry import verifier
from .shapes import (const_ints, constant_output_shape, elems_equal, int_value, ints, ranked, shape_matches,
                     types_compatible)
from .movement import broadcast_in_dim


@verifier("stablehlo.dynamic_broadcast_in_dim")
def dynamic_broadcast_in_dim(op, check):
    broadcast_in_dim(op, check)
    od = op.operands[1].type
    r = op.results[0].type
    check(not ranked(od) or od.is_static, "", f"operand #1 must be statically shaped, got {od}")
    if ranked(od) and ranked(r) and od.rank == 1 and od.shape[0] is not None:
        check(od.shape[0] == r.rank, "C7", f"output_dimensions has {od.shape[0]} entries but the result has rank {r.rank}")
    constant_output_shape(op, check, op.operands[1], r, "C7")
    a = op.operands[0].type
    shape = const_ints(op.operands[1])
    dims = ints(op.attributes.get("broadcast_dimensions"))
    if shape is not None and ranked(a) and len(dims) == a.rank:
        for i, d in enumerate(dims):
            if 0 <= d < len(shape) and a.shape[i] is not None:
                check(a.shape[i] in (1, shape[d]), "C5",
                      f"size of operand dimension {i} ({a.shape[i]}) is not equal to 1 or value of shape at index {d} ({shape[d]})")
    exp = ints(op.attributes.get("known_expanding_dimensions"))
    non = ints(op.attributes.get("known_nonexpanding_dimensions"))
    check(len(set(exp + non)) == len(exp + non), "C8", "a dimension is listed twice as expanding or non-expanding")
    if ranked(a):
        check(all(0 <= d < a.rank for d in exp), "C9", f"known_expanding_dimensions {list(exp)} out of range")
        check(all(0 <= d < a.rank for d in non), "C10", f"known_nonexpanding_dimensions {list(non)} out of range")


@verifier("stablehlo.dynamic_reshape")
def dynamic_reshape(op, check):
    a, r = op.operands[0].type, op.results[0].type
    os_ = op.operands[1].type
    check(elems_equal(a, r, True), "C1", f"operand and result must have compatible element types (got {a}, {r})")
    if ranked(a) and ranked(r) and a.is_static and r.is_static:
        check(a.num_elements == r.num_elements, "C2", f"operand ({a}) and result ({r}) must have the same number of elements")
    check(not ranked(os_) or os_.is_static, "", f"operand #1 must be statically shaped, got {os_}")
    quantized.check_movement(check, "C1", a, r)
    quantized.check_reshape(check, a, r)
    if ranked(os_) and ranked(r) and os_.rank == 1 and os_.shape[0] is not None:
        check(os_.shape[0] == r.rank, "C4", f"result rank {r.rank} must equal the number of elements in output_shape ({os_.shape[0]})")
    constant_output_shape(op, check, op.operands[1], r, "C4")
    shape = const_ints(op.operands[1])
    if shape is not None and ranked(a) and a.is_static and all(x >= 0 for x in shape):
        n = 1
        for x in shape:
            n *= x
        check(n == a.num_elements, "C2", f"output shape {list(shape)} holds {n} elements, the operand {a.num_elements}")


def _dimension(op, check, cid):
    a = op.operands[0].type
    d = int_value(op.attributes.get("dimension"), 0)
    check(d >= 0, cid, f"dimension {d} must be non-negative")
    if ranked(a):
        check(d < a.rank, cid, f"dimension {d} is out of range for {a}")


@verifier("stablehlo.get_dimension_size")
def get_dimension_size(op, check):
    _dimension(op, check, "C1")


@verifier("stablehlo.set_dimension_size")
def set_dimension_size(op, check):
    """Legacy op: its spec entry states no constraints, so the diagnostics are unlabelled."""
    _dimension(op, check, "")
    if len(op.operands) > 1:
        s = op.operands[1].type
        check(not ranked(s) or s.rank == 0, "", f"size operand should be of rank 0, got {s}")


@verifier("stablehlo.dynamic_pad")
def dynamic_pad(op, check):
    a, pv, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    check(elems_equal(a, pv, True) and elems_equal(a, r, True), "C1", "operand, padding_value and result must have the same element type")
    if ranked(a):
        for v in op.operands[2:]:
            t = v.type
            if ranked(t) and t.rank == 1 and t.shape[0] is not None:
                check(t.shape[0] == a.rank, "C2", f"padding operands size ({t.shape[0]}) must match operand rank ({a.rank})")
    lo, hi, it = (const_ints(v) for v in op.operands[2:5])
    if it is not None:
        check(all(x >= 0 for x in it), "C3", f"interior_padding must be non-negative, but got {min(it)}")
    if ranked(a) and ranked(r) and None not in (lo, hi, it) and len(lo) == len(hi) == len(it) == a.rank == r.rank:
        for i, (s_, l, h, n) in enumerate(zip(a.shape, lo, hi, it)):
            if s_ is None or r.shape[i] is None:
                continue
            want = l + s_ + n * max(s_ - 1, 0) + h
            check(r.shape[i] == want, "C4", f"expected output dimension at index {i} to equal {want}, but got {r.shape[i]}")


@verifier("stablehlo.dynamic_iota")
def dynamic_iota(op, check):
    s, r = op.operands[0].type, op.results[0].type
    d = int_value(op.attributes.get("iota_dimension"), 0)
    if ranked(s) and s.rank == 1 and s.shape[0] is not None:
        check(0 <= d < s.shape[0], "C1", f"iota_dimension {d} must be below the number of entries of output_shape ({s.shape[0]})")
        if ranked(r):
            check(r.rank == s.shape[0], "C2", f"result rank {r.rank} must be the number of entries of output_shape ({s.shape[0]})")
    elif ranked(r):
        check(0 <= d < r.rank, "C1", f"iota_dimension {d} is out of range for {r}")
    sizes = const_ints(op.operands[0])
    if sizes is not None and ranked(r):
        check(shape_matches(r, sizes), "C2", f"result {r} does not have the shape {list(sizes)}")


@verifier("stablehlo.real_dynamic_slice")
def real_dynamic_slice(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(elems_equal(a, r), "", f"operand and result must have the same element type (got {a}, {r})")
    check(all(types_compatible(op.operands[1].type, v.type) for v in op.operands[2:]), "",
          "start_indices, limit_indices and strides must have the same type")
    if ranked(a):
        for v in op.operands[1:]:
            t = v.type
            if ranked(t) and t.rank == 1 and t.shape[0] is not None:
                check(t.shape[0] == a.rank, "", f"index operands must have {a.rank} entries, got {t}")
    st, li, sd = (const_ints(v) for v in op.operands[1:4])
    if sd is not None:
        check(all(x > 0 for x in sd), "", f"strides {list(sd)} must be positive")
    if st is not None and li is not None:
        check(all(0 <= x <= y for x, y in zip(st, li)), "", "start indices must be non-negative and not above the limits")
