"""Verifiers of the data-movement ops: constant, iota, broadcast_in_dim, broadcast, reshape,
transpose, concatenate, slice, dynamic_slice, dynamic_update_slice, pad, reverse, tuple,
get_tuple_element and optimization_barrier."""
from __future__ import annotations

from ..ir.types import QuantizedType, TensorType, TupleType
from . import quantized
from .registry import verifier
from .shapes import (bounds, elems_equal, int_value, ints, is_quantized, ranked, shape_matches,
                     types_compatible, types_of)


@verifier("stablehlo.constant")
def constant(op, check):
    v = op.attributes.get("value")
    r = op.results[0].type
    vt = getattr(v, "type", None)
    if isinstance(vt, TensorType) and isinstance(r, TensorType):
        # a quantized constant's value is written in the storage type
        re = r.element_type
        check(vt.shape == r.shape and (vt.element_type == re or isinstance(re, QuantizedType)
                                       and vt.element_type in (re, re.storage_type)), "C1",
              f"the type of value ({vt}) must be the result type ({r})")


@verifier("stablehlo.iota")
def iota(op, check):
    r = op.results[0].type
    d = int_value(op.attributes.get("iota_dimension"), 0)
    if ranked(r):
        check(0 <= d < r.rank, "C1", f"iota_dimension {d} is not a dimension of {r}")


@verifier("stablehlo.broadcast_in_dim")
def broadcast_in_dim(op, check):
    a, r = op.operands[0].type, op.results[0].type
    dims = ints(op.attributes.get("broadcast_dimensions"))
    check(elems_equal(a, r, ignore_quant=True), "C1", f"result element type must be the operand's (got {a}, {r})")
    quantized.check_movement(check, "C1", a, r, allow_scale_change=True)
    if not ranked(a):
        return
    check(len(dims) == a.rank, "C2",
          f"broadcast_dimensions has {len(dims)} entries but the operand has rank {a.rank}")
    if not ranked(r):
        return
    check(all(0 <= d < r.rank for d in dims), "C3", f"broadcast_dimensions {list(dims)} out of range for {r}")
    check(len(set(dims)) == len(dims), "C4", f"broadcast_dimensions {list(dims)} has repeated entries")
    for i, d in enumerate(dims):
        sa, sr = a.shape[i], r.shape[d]
        check(sa is None or sr is None or sa == 1 or sa == sr, "C5",
              f"operand dimension {i} of size {sa} cannot broadcast to result dimension {d} of size {sr}")
    quantized.check_broadcast_dims(check, "C6", a, r, dims)


@verifier("stablehlo.broadcast")
def broadcast(op, check):
    """Legacy op: its spec entry states no constraints, so the diagnostics are unlabelled."""
    a, r = op.operands[0].type, op.results[0].type
    sizes = ints(op.attributes.get("broadcast_sizes"))
    check(elems_equal(a, r, True), "", f"result element type must be the operand's (got {a}, {r})")
    check(all(s >= 0 for s in sizes), "", "broadcast_sizes must be non-negative")
    if ranked(a) and ranked(r):
        check(shape_matches(r, list(sizes) + list(a.shape)), "",
              f"result shape must be broadcast_sizes then the operand shape (got {a}, {r})")


@verifier("stablehlo.reshape")
def reshape(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(elems_equal(a, r, True), "C1", f"result element type must be the operand's (got {a}, {r})")
    quantized.check_movement(check, "C1", a, r)
    if ranked(r) and not r.is_static:
        check(bounds(r) is not None and sum(d is None for d in r.shape) == 1, "",
              f"result #0 must be statically shaped or single bounded dimension tensor, got {r}")
    if ranked(a) and ranked(r) and a.is_static and r.is_static:
        check(a.num_elements == r.num_elements, "C2",
              f"operand ({a}) and result ({r}) must have the same number of elements")
    quantized.check_reshape(check, a, r)


@verifier("stablehlo.transpose")
def transpose(op, check):
    a, r = op.operands[0].type, op.results[0].type
    perm = ints(op.attributes.get("permutation"))
    check(elems_equal(a, r, True), "C1", f"result element type must be the operand's (got {a}, {r})")
    quantized.check_movement(check, "C1", a, r)
    if not ranked(a):
        return
    check(sorted(perm) == list(range(a.rank)), "C2",
          f"permutation {list(perm)} is not a permutation of 0..{a.rank - 1}")
    if ranked(r):
        check(shape_matches(r, [a.shape[p] for p in perm]), "C3",
              f"result type {r} does not match the permuted operand type {a}")
    quantized.check_transpose(check, a, r, perm)


@verifier("stablehlo.concatenate")
def concatenate(op, check):
    ins = [v.type for v in op.operands]
    check(len(ins) >= 1, "C3", "expects at least one input")
    d = int_value(op.attributes.get("dimension"), 0)
    r = op.results[0].type
    check(all(elems_equal(ins[0], t, True) for t in ins), "C1",
          f"all inputs must have the same element type (got {types_of(op.operands)})")
    rk = [t for t in ins if ranked(t)]
    if not rk:
        return
    rank = rk[0].rank
    check(all(t.rank == rank for t in rk), "C2", f"all inputs must have the same rank (got {types_of(op.operands)})")
    check(0 <= d < rank, "C4", f"dimension {d} is out of range for rank {rank}")
    for i in range(rank):
        if i == d:
            continue
        sizes = {t.shape[i] for t in rk if t.shape[i] is not None}
        check(len(sizes) <= 1, "C2", f"inputs differ in size along dimension {i} (got {types_of(op.operands)})")
    check(elems_equal(ins[0], r, True), "C5", f"result element type must be the inputs' (got {r})")
    if ranked(r) and len(rk) == len(ins):
        along = None if any(t.shape[d] is None for t in rk) else sum(t.shape[d] for t in rk)
        expect = [along if i == d else next((t.shape[i] for t in rk if t.shape[i] is not None), None)
                  for i in range(rank)]
        check(shape_matches(r, expect), "C6", f"result type {r} does not match the concatenated shape")


@verifier("stablehlo.slice")
def slice_(op, check):
    a, r = op.operands[0].type, op.results[0].type
    st, li, sd = (ints(op.attributes.get(k)) for k in ("start_indices", "limit_indices", "strides"))
    check(elems_equal(a, r), "C1", f"operand and result must have the same element type (got {a}, {r})")
    if not ranked(a):
        return
    check(len(st) == len(li) == len(sd) == a.rank, "C2",
          f"start_indices, limit_indices and strides must each have {a.rank} entries")
    bnds = bounds(a)
    for i in range(a.rank):
        size = a.shape[i]
        check(0 <= st[i] <= li[i] and (size is None or li[i] <= size), "C3",
              f"slice [{st[i]}, {li[i]}) is out of bounds for dimension {i} of size {size}")
        if size is None and bnds and i < len(bnds) and bnds[i] is not None:
            check(li[i] <= bnds[i], "C3", f"limit index {li[i]} is larger than dimension bound {bnds[i]} in dimension {i}")
    check(all(s > 0 for s in sd), "C4", f"strides {list(sd)} must be positive")
    if ranked(r):
        expect = [-(-(l - s) // k) for s, l, k in zip(st, li, sd)]
        check(shape_matches(r, expect), "C5", f"result type {r} does not match the slice shape {expect}")


@verifier("stablehlo.dynamic_slice")
def dynamic_slice(op, check):
    a, r = op.operands[0].type, op.results[0].type
    idx = op.operands[1:]
    sizes = ints(op.attributes.get("slice_sizes"))
    check(elems_equal(a, r), "C1", f"operand and result must have the same element type (got {a}, {r})")
    if ranked(a):
        check(len(idx) == a.rank and len(sizes) == a.rank, "C2",
              f"expects {a.rank} start indices and slice sizes, got {len(idx)} and {len(sizes)}")
    check(all(types_compatible(idx[0].type, v.type) for v in idx), "C3", "all start indices must have the same type")
    if ranked(a):
        for i, s in enumerate(sizes):
            check(s >= 0 and (a.shape[i] is None or s <= a.shape[i]), "C4",
                  f"slice size {s} is out of range for dimension {i} of size {a.shape[i]}")
    check(shape_matches(r, sizes), "C5", f"result type {r} must have shape {list(sizes)}")


@verifier("stablehlo.dynamic_update_slice")
def dynamic_update_slice(op, check):
    a, u = op.operands[0].type, op.operands[1].type
    idx = op.operands[2:]
    r = op.results[0].type
    check(types_compatible(a, r), "C1", f"operand and result must have the same type (got {a}, {r})")
    check(elems_equal(a, u), "C2", f"update must have the operand's element type (got {a}, {u})")
    if ranked(a) and ranked(u):
        check(a.rank == u.rank, "C3", f"update must have the operand's rank (got {a}, {u})")
    if ranked(a):
        check(len(idx) == a.rank, "C4", f"expects {a.rank} start indices, got {len(idx)}")
    check(all(types_compatible(idx[0].type, v.type) for v in idx), "C5", "all start indices must have the same type")
    if ranked(a) and ranked(u):
        check(all(x is None or y is None or x <= y for x, y in zip(u.shape, a.shape)), "C6",
              f"update {u} is larger than operand {a}")


@verifier("stablehlo.pad")
def pad(op, check):
    a, pv, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    lo, hi, it = (ints(op.attributes.get(k)) for k in ("edge_padding_low", "edge_padding_high", "interior_padding"))
    check(elems_equal(a, pv, True) and elems_equal(a, r, True), "C1",
          f"operand, padding_value and result must have the same element type (got {a}, {pv}, {r})")
    if not ranked(a):
        return
    check(len(lo) == len(hi) == len(it) == a.rank, "C2",
          f"edge_padding_low, edge_padding_high and interior_padding must each have {a.rank} entries")
    check(all(x >= 0 for x in it), "C3", f"interior_padding {list(it)} must be non-negative")
    expect = [None if s is None else l + s + i * max(s - 1, 0) + h for s, l, h, i in zip(a.shape, lo, hi, it)]
    check(all(e is None or e >= 0 for e in expect), "C4", f"padding gives a negative result size {expect}")
    for d, (b, l, h, i) in enumerate(zip(bounds(a) or (), lo, hi, it)):
        if b is not None and a.shape[d] is None:
            check(l + b + i * max(b - 1, 0) + h >= 0, "C4", f"Padding result in negative bound for dimension {d}")
    check(shape_matches(r, expect), "C4", f"result type {r} does not match the padded shape {expect}")


@verifier("stablehlo.reverse")
def reverse(op, check):
    a, r = op.operands[0].type, op.results[0].type
    dims = ints(op.attributes.get("dimensions"))
    check(types_compatible(a, r, True), "C1", f"operand and result must have the same type (got {a}, {r})")
    check(len(set(dims)) == len(dims), "C2", f"dimensions {list(dims)} has repeated entries")
    if ranked(r):
        check(all(0 <= d < r.rank for d in dims), "C3", f"dimensions {list(dims)} out of range for {r}")


@verifier("stablehlo.get_tuple_element")
def get_tuple_element(op, check):
    t, r = op.operands[0].type, op.results[0].type
    i = int_value(op.attributes.get("index"), 0)
    if isinstance(t, TupleType):
        check(0 <= i < len(t.types), "C1", f"index {i} is out of range for {t}")
        check(types_compatible(t.types[i], r), "C2", f"result type {r} must be tuple element {i} type {t.types[i]}")


@verifier("stablehlo.tuple")
def tuple_(op, check):
    r = op.results[0].type
    if isinstance(r, TupleType):
        check(len(r.types) == len(op.operands) and all(types_compatible(a.type, b) for a, b in zip(op.operands, r.types)),
              "C1", f"result type {r} must be the tuple of the operand types")


@verifier("stablehlo.optimization_barrier")
def optimization_barrier(op, check):
    ins, outs = [v.type for v in op.operands], [v.type for v in op.results]
    check(len(ins) == len(outs) and all(types_compatible(a, b) for a, b in zip(ins, outs)), "C1",
          f"results ({', '.join(map(str, outs))}) must have the operand types ({', '.join(map(str, ins))})")
