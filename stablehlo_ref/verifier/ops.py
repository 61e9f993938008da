"""Per-op verifiers, each constraint labelled with the spec's id (C1, C2, ...). Ops whose spec
traits say "same operand and result type/shape" get the trait check from `_trait_checks`; the
functions below add what each op's constraints require beyond that."""
from __future__ import annotations

from .. import spec
from ..ir.attributes import (EnumAttr, FloatAttr, IntegerAttr, StringAttr, StructAttr, SymbolRefAttr,
                             dot_algorithm_problems)
from ..ir.types import ElementType, FunctionType, QuantizedType, TensorType, TokenType, TupleType
from . import quantized
from .core import Check, VERIFIERS, verifier
from .shapes import (base_elem, const_ints, dim_ok, elem, elems_equal, int_value, ints, is_pred, is_quantized,
                     is_scalar_tensor, is_tensor, promotable, ranked, shape_matches, shapes_compatible,
                     types_compatible)


def _types(vals):
    return ", ".join(str(v.type) for v in vals)


# ------------------------------------------------------------------ trait-driven checks

def _trait_check(op, check: Check):
    s = spec.op(op.name)
    vals = [v for v in op.operands + op.results if is_tensor(v.type)]
    if len(vals) < 2:
        return
    if s.has_trait("same_operands_and_result_type"):
        first = vals[0].type
        check(all(types_compatible(first, v.type, ignore_quant=True) for v in vals[1:]), "C1",
              f"operands and result must have the same type (got {_types(op.operands + op.results)})")
    if s.has_trait("same_operands_and_result_shape"):
        first = vals[0].type
        check(all(shapes_compatible(first, v.type) for v in vals[1:]), "C1",
              f"operands and result must have the same shape (got {_types(op.operands + op.results)})")
    if s.has_trait("same_operands_and_result_element_type"):
        first = vals[0].type
        check(all(elems_equal(first, v.type, ignore_quant=True) for v in vals[1:]), "C1",
              f"operands and result must have the same element type (got {_types(op.operands + op.results)})")


def _register_trait_checks():
    for name in spec.ops():
        name = name if isinstance(name, str) else name.name
        s = spec.op(name)
        if name in VERIFIERS:
            continue
        if any(s.has_trait(t) for t in ("same_operands_and_result_type", "same_operands_and_result_shape",
                                          "same_operands_and_result_element_type")):
            VERIFIERS[name] = _trait_check


# ------------------------------------------------------------------ elementwise

@verifier("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.divide",
          "stablehlo.maximum", "stablehlo.minimum", "stablehlo.atan2", "stablehlo.power", "stablehlo.remainder")
def binary_arith(op, check):
    lhs, rhs, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    types = f"got {lhs}, {rhs}, {res}"
    check(shapes_compatible(lhs, rhs) and shapes_compatible(lhs, res), "C1",
          f"operands and result must have the same shape ({types})")
    if not (is_quantized(lhs) or is_quantized(rhs) or is_quantized(res)):
        check(elems_equal(lhs, rhs) and elems_equal(lhs, res), "C1",
              f"operands and result must have the same type ({types})")
    else:
        check(is_quantized(lhs) and is_quantized(rhs) and is_quantized(res), "C2",
              f"with quantization, operands and result must all be quantized ({types})")
        el, er, eo = elem(lhs), elem(rhs), elem(res)
        check(el.storage_type == er.storage_type == eo.storage_type, "C3",
              f"operands and result must share a storage type ({types})")
        check(el.expressed_type == er.expressed_type == eo.expressed_type, "C4",
              f"operands and result must share an expressed type ({types})")
        quantized.check_binary(check, lhs, rhs, res)


_BOOL_INT = ("stablehlo.and", "stablehlo.or", "stablehlo.xor", "stablehlo.not", "stablehlo.popcnt",
             "stablehlo.count_leading_zeros", "stablehlo.shift_left", "stablehlo.shift_right_arithmetic",
             "stablehlo.shift_right_logical")


@verifier(*_BOOL_INT)
def bitwise(op, check):
    _trait_check(op, check)


@verifier("stablehlo.abs")
def abs_(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    ea, er = elem(a), elem(r)
    if isinstance(ea, ElementType) and ea.is_complex:
        check(isinstance(er, ElementType) and er.is_float and er.bits * 2 == ea.bits, "C2",
              f"result of complex abs must be the component float type (got {a}, {r})")
    elif not is_quantized(a):
        check(ea == er, "C2", f"operand and result must have the same element type (got {a}, {r})")


@verifier("stablehlo.real", "stablehlo.imag")
def real_imag(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    ea, er = elem(a), elem(r)
    if isinstance(ea, ElementType) and ea.is_complex:
        check(isinstance(er, ElementType) and er.is_float and er.bits * 2 == ea.bits, "C2",
              f"result must be the complex operand's component type (got {a}, {r})")
    else:
        check(ea == er, "C2", f"result must have the operand's element type (got {a}, {r})")


@verifier("stablehlo.complex")
def complex_(op, check):
    a, b, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    check(types_compatible(a, b), "C1", f"lhs and rhs must have the same type (got {a}, {b})")
    check(shapes_compatible(a, r), "C2", f"result must have the operands' shape (got {a}, {r})")
    ea, er = elem(a), elem(r)
    check(isinstance(er, ElementType) and er.is_complex and er.bits == 2 * ea.bits, "C3",
          f"result element type must be complex of the operand element type (got {a}, {r})")


@verifier("stablehlo.is_finite")
def is_finite(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    check(is_pred(r), "C1", f"result must be a tensor of i1 (got {r})")


@verifier("stablehlo.convert")
def convert(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")


@verifier("stablehlo.compare")
def compare(op, check):
    a, b, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    check(elems_equal(a, b, ignore_quant=True), "C1",
          f"lhs and rhs must have the same element type (got {a}, {b})")
    check(shapes_compatible(a, b) and shapes_compatible(a, r), "C2",
          f"lhs, rhs and result must have the same shape (got {a}, {b}, {r})")
    check(is_pred(r), "C2", f"result must be a tensor of i1 (got {r})")
    ct = op.attributes.get("compare_type")
    et = elem(a)
    if isinstance(ct, EnumAttr) and isinstance(et, ElementType):
        allowed = {"signed": ("SIGNED",), "index": ("SIGNED",), "unsigned": ("UNSIGNED",), "bool": ("UNSIGNED",),
                   "float": ("FLOAT", "TOTALORDER"), "complex": ("FLOAT",)}.get(et.kind, ())
        check(ct.value in allowed or ct.value == "TOTALORDER", "C3", f"compare_type {ct.value} does not fit element type {et}")


@verifier("stablehlo.select")
def select(op, check):
    p, t, f, r = (v.type for v in (*op.operands, op.results[0]))
    check(is_pred(p), "C1", f"pred must be a tensor of i1 (got {p})")
    check(not ranked(p) or p.rank == 0 or shapes_compatible(p, t), "C1",
          f"pred must be a scalar or have the shape of on_true (got {p}, {t})")
    check(types_compatible(t, f, ignore_quant=True) and types_compatible(t, r, ignore_quant=True), "C2",
          f"on_true, on_false and result must have the same type (got {t}, {f}, {r})")


@verifier("stablehlo.clamp")
def clamp(op, check):
    lo, x, hi = (v.type for v in op.operands)
    r = op.results[0].type
    check(not ranked(lo) or lo.rank == 0 or shapes_compatible(lo, x), "C1",
          f"min must be a scalar or have the operand's shape (got {lo}, {x})")
    check(not ranked(hi) or hi.rank == 0 or shapes_compatible(hi, x), "C2",
          f"max must be a scalar or have the operand's shape (got {hi}, {x})")
    check(elems_equal(lo, x, True) and elems_equal(hi, x, True), "C3",
          f"min, operand and max must have the same element type (got {lo}, {x}, {hi})")
    check(types_compatible(x, r, True), "C4", f"operand and result must have the same type (got {x}, {r})")


@verifier("stablehlo.bitcast_convert")
def bitcast_convert(op, check):
    a, r = op.operands[0].type, op.results[0].type
    ea, er = elem(a), elem(r)
    sa = ea.storage_type if isinstance(ea, QuantizedType) else ea
    sr = er.storage_type if isinstance(er, QuantizedType) else er
    if not (isinstance(sa, ElementType) and isinstance(sr, ElementType)):
        return
    check(sa.is_complex == sr.is_complex, "C2", f"complex may only be bitcast to complex (got {a}, {r})")
    if not (ranked(a) and ranked(r)):
        return
    wa, wr = sa.bits, sr.bits
    if wa == wr:
        check(shapes_compatible(a, r), "C1", f"operand and result must have the same shape (got {a}, {r})")
    elif wa > wr:
        check(r.rank == a.rank + 1 and shape_matches(TensorType(r.shape[:-1], er), a.shape)
              and dim_ok(r.shape[-1], wa // wr) and wa % wr == 0, "C1",
              f"narrowing bitcast must add a last dimension of size {wa // max(wr, 1)} (got {a}, {r})")
    else:
        check(a.rank == r.rank + 1 and shape_matches(TensorType(a.shape[:-1], ea), r.shape)
              and dim_ok(a.shape[-1], wr // wa) and wr % wa == 0, "C1",
              f"widening bitcast must drop a last dimension of size {wr // max(wa, 1)} (got {a}, {r})")


@verifier("stablehlo.reduce_precision")
def reduce_precision(op, check):
    _trait_check(op, check)
    check(int_value(op.attributes.get("exponent_bits"), 1) >= 1, "C2", "exponent_bits must be at least 1")
    check(int_value(op.attributes.get("mantissa_bits"), 0) >= 0, "C3", "mantissa_bits must be non-negative")


# ------------------------------------------------------------------ constants and shapes

@verifier("stablehlo.constant")
def constant(op, check):
    v = op.attributes.get("value")
    r = op.results[0].type
    vt = getattr(v, "type", None)
    if isinstance(vt, TensorType) and isinstance(r, TensorType):
        check(vt.shape == r.shape and (vt.element_type == r.element_type or is_quantized(r)), "C1",
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
    a, r = op.operands[0].type, op.results[0].type
    sizes = ints(op.attributes.get("broadcast_sizes"))
    check(elems_equal(a, r, True), "C1", f"result element type must be the operand's (got {a}, {r})")
    check(all(s >= 0 for s in sizes), "C1", "broadcast_sizes must be non-negative")
    if ranked(a) and ranked(r):
        check(shape_matches(r, list(sizes) + list(a.shape)), "C1",
              f"result shape must be broadcast_sizes then the operand shape (got {a}, {r})")


@verifier("stablehlo.reshape")
def reshape(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(elems_equal(a, r, True), "C1", f"result element type must be the operand's (got {a}, {r})")
    quantized.check_movement(check, "C1", a, r)
    if ranked(r) and not r.is_static:
        check(_bounds(r) is not None and sum(d is None for d in r.shape) == 1, "",
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
          f"all inputs must have the same element type (got {_types(op.operands)})")
    rk = [t for t in ins if ranked(t)]
    if not rk:
        return
    rank = rk[0].rank
    check(all(t.rank == rank for t in rk), "C2", f"all inputs must have the same rank (got {_types(op.operands)})")
    check(0 <= d < rank, "C4", f"dimension {d} is out of range for rank {rank}")
    for i in range(rank):
        if i == d:
            continue
        sizes = {t.shape[i] for t in rk if t.shape[i] is not None}
        check(len(sizes) <= 1, "C2", f"inputs differ in size along dimension {i} (got {_types(op.operands)})")
    check(elems_equal(ins[0], r, True), "C5", f"result element type must be the inputs' (got {r})")
    if ranked(r) and len(rk) == len(ins):
        along = None if any(t.shape[d] is None for t in rk) else sum(t.shape[d] for t in rk)
        expect = [along if i == d else next((t.shape[i] for t in rk if t.shape[i] is not None), None)
                  for i in range(rank)]
        check(shape_matches(r, expect), "C6", f"result type {r} does not match the concatenated shape")


def _bounds(t):
    """The `#stablehlo.bounds<...>` of a tensor type (None entries unbounded), or None."""
    enc = getattr(t, "encoding", None)
    if isinstance(enc, StructAttr) and enc.name == "bounds":
        return tuple(enc.get("bounds", ()) or ())
    return None


@verifier("stablehlo.slice")
def slice_(op, check):
    a, r = op.operands[0].type, op.results[0].type
    st, li, sd = (ints(op.attributes.get(k)) for k in ("start_indices", "limit_indices", "strides"))
    check(elems_equal(a, r), "C1", f"operand and result must have the same element type (got {a}, {r})")
    if not ranked(a):
        return
    check(len(st) == len(li) == len(sd) == a.rank, "C2",
          f"start_indices, limit_indices and strides must each have {a.rank} entries")
    bounds = _bounds(a)
    for i in range(a.rank):
        size = a.shape[i]
        check(0 <= st[i] <= li[i] and (size is None or li[i] <= size), "C3",
              f"slice [{st[i]}, {li[i]}) is out of bounds for dimension {i} of size {size}")
        if size is None and bounds and i < len(bounds) and bounds[i] is not None:
            check(li[i] <= bounds[i], "C3", f"limit index {li[i]} is larger than dimension bound {bounds[i]} in dimension {i}")
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


@verifier("stablehlo.get_dimension_size")
def get_dimension_size(op, check):
    a = op.operands[0].type
    d = int_value(op.attributes.get("dimension"), 0)
    if ranked(a):
        check(0 <= d < a.rank, "C1", f"dimension {d} is out of range for {a}")


# ------------------------------------------------------------------ linear algebra

def _dot_check(check, lhs, rhs, res, lb, rb, lc, rc, first="C1"):
    check(len(lb) == len(rb), "C1", f"lhs and rhs must have the same number of batching dimensions ({list(lb)} vs {list(rb)})")
    check(len(lc) == len(rc), "C2", f"lhs and rhs must have the same number of contracting dimensions ({list(lc)} vs {list(rc)})")
    check(len(set(lb + lc)) == len(lb + lc), "C3", "lhs batching and contracting dimensions must be distinct")
    check(len(set(rb + rc)) == len(rb + rc), "C4", "rhs batching and contracting dimensions must be distinct")
    if ranked(lhs):
        check(all(0 <= d < lhs.rank for d in lb), "C5", f"lhs batching dimensions {list(lb)} out of range for {lhs}")
        check(all(0 <= d < lhs.rank for d in lc), "C6", f"lhs contracting dimensions {list(lc)} out of range for {lhs}")
    if ranked(rhs):
        check(all(0 <= d < rhs.rank for d in rb), "C7", f"rhs batching dimensions {list(rb)} out of range for {rhs}")
        check(all(0 <= d < rhs.rank for d in rc), "C8", f"rhs contracting dimensions {list(rc)} out of range for {rhs}")
    if ranked(lhs) and ranked(rhs):
        check(all(dim_ok(lhs.shape[a], rhs.shape[b]) for a, b in zip(lb, rb)), "C9",
              f"batching dimension sizes differ ({lhs}, {rhs})")
        check(all(dim_ok(lhs.shape[a], rhs.shape[b]) for a, b in zip(lc, rc)), "C10",
              f"contracting dimension sizes differ ({lhs}, {rhs})")
        if ranked(res):
            expect = ([lhs.shape[d] for d in lb] + [s for i, s in enumerate(lhs.shape) if i not in lb and i not in lc]
                      + [s for i, s in enumerate(rhs.shape) if i not in rb and i not in rc])
            check(shape_matches(res, expect), "C12", f"result type {res} does not match the inferred shape {expect}")
    if not (is_quantized(lhs) or is_quantized(rhs) or is_quantized(res)):
        check(elems_equal(lhs, rhs) or _bool_or_int_mix(lhs, rhs), "C13",
              f"lhs and rhs must have the same element type (got {lhs}, {rhs})")


def _bool_or_int_mix(a, b):
    return False


@verifier("stablehlo.dot_general")
def dot_general(op, check):
    lhs, rhs, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    dn = op.attributes.get("dot_dimension_numbers")
    if not isinstance(dn, StructAttr):
        return
    g = lambda k: tuple(dn.get(k, ()) or ())
    _dot_check(check, lhs, rhs, res, g("lhs_batching_dimensions"), g("rhs_batching_dimensions"),
               g("lhs_contracting_dimensions"), g("rhs_contracting_dimensions"))
    quantized.check_dot_general(check, lhs, rhs, res, g("rhs_contracting_dimensions"))
    alg = op.attributes.get("algorithm")
    if isinstance(alg, StructAttr):
        pc = op.attributes.get("precision_config")
        check(all(getattr(e, "value", "DEFAULT") == "DEFAULT" for e in getattr(pc, "elements", ()) or ()), "C21",
              "precision_config must be DEFAULT when an algorithm is specified")
        for cid, msg in dot_algorithm_problems(alg):
            check(False, cid, msg)
    pc = op.attributes.get("precision_config")
    if pc is not None and hasattr(pc, "elements"):
        check(len(pc.elements) <= 2, "C11", f"precision_config must have 0 or 2 entries, got {len(pc.elements)}")


@verifier("stablehlo.dot")
def dot(op, check):
    lhs, rhs, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    if ranked(lhs) and ranked(rhs):
        check(lhs.rank in (1, 2) and rhs.rank in (1, 2), "C1", f"dot operands must have rank 1 or 2 (got {lhs}, {rhs})")
        check(dim_ok(lhs.shape[-1], rhs.shape[0]), "C2", f"contracting dimension sizes differ ({lhs}, {rhs})")
        if ranked(res):
            expect = list(lhs.shape[:-1]) + list(rhs.shape[1:])
            check(shape_matches(res, expect), "C3", f"result type {res} does not match the inferred shape {expect}")
    pc = op.attributes.get("precision_config")
    if pc is not None and hasattr(pc, "elements"):
        check(len(pc.elements) <= 2, "C4", f"precision_config must have 0 or 2 entries, got {len(pc.elements)}")


# ------------------------------------------------------------------ regions

def _region_returns(region):
    if not region.blocks or not region.blocks[-1].operations:
        return None
    term = region.blocks[-1].operations[-1]
    return [v.type for v in term.operands]


def _region_args(region):
    return [a.type for a in region.blocks[0].arguments] if region.blocks else []


def _reducer_body(check, op, region, inits, cid, scalar=False):
    n = len(inits)
    args = _region_args(region)
    rets = _region_returns(region)
    check(len(args) == 2 * n, cid, f"body must take {2 * n} arguments, takes {len(args)}")
    if rets is not None:
        check(len(rets) == n, cid, f"body must return {n} value(s), returns {len(rets)}")
        for i, t in enumerate(rets):
            check(is_tensor(t), cid, f"body result #{i} must be a tensor, got {t}")
    for i in range(n):
        for j in (i, i + n):
            a = args[j]
            check((ranked(a) and a.rank == 0) if scalar else shapes_compatible(a, inits[i]), cid, f"body argument #{j} ({a}) must have the shape of {inits[i]}")
            check(promotable(elem(inits[i]), elem(a)), cid,
                  f"body argument #{j} type {a} is not promotable from {inits[i]}")
        if rets is not None:
            check(types_compatible(args[i], rets[i]), cid,
                  f"body result #{i} ({rets[i]}) must have the type of argument #{i} ({args[i]})")
    return rets


@verifier("stablehlo.reduce")
def reduce(op, check):
    n = len(op.operands) // 2
    ins, inits = [v.type for v in op.operands[:n]], [v.type for v in op.operands[n:]]
    dims = ints(op.attributes.get("dimensions"))
    check(n >= 1 and len(op.operands) % 2 == 0 and len(op.results) == n, "C3",
          "inputs, init_values and results must have the same count")
    check(all(shapes_compatible(ins[0], t) for t in ins), "C1", f"all inputs must have the same shape (got {_types(op.operands[:n])})")
    check(all(elems_equal(a, b) for a, b in zip(ins, inits)), "C2",
          f"each input must have its init value's element type (got {_types(op.operands)})")
    if ranked(ins[0]):
        check(all(0 <= d < ins[0].rank for d in dims), "C4", f"dimensions {list(dims)} out of range for {ins[0]}")
    check(len(set(dims)) == len(dims), "C5", f"dimensions {list(dims)} has repeated entries")
    if ranked(ins[0]):
        kept = ins[0].rank - len(set(dims))
        for j, a in enumerate(_region_args(op.regions[0])):
            check(not ranked(a) or a.rank <= kept, "C6",
                  f"The rank of reduction-region's argument at index {j} is expected to be <= {kept}, got {a.rank}")
    rets = _reducer_body(check, op, op.regions[0], inits, "C6")
    if ranked(ins[0]):
        expect = [s for i, s in enumerate(ins[0].shape) if i not in dims]
        for r in op.results:
            check(shape_matches(r.type, expect), "C7", f"result type {r.type} does not match the reduced shape {expect}")
    if rets is not None:
        for r, t in zip(op.results, rets):
            check(elems_equal(r.type, t), "C8", f"result type {r.type} must have the body's element type ({t})")


@verifier("stablehlo.reduce_window")
def reduce_window(op, check):
    n = len(op.operands) // 2
    ins, inits = [v.type for v in op.operands[:n]], [v.type for v in op.operands[n:]]
    check(n >= 1 and len(op.operands) % 2 == 0 and len(op.results) == n, "C1",
          "inputs, init_values and results must have the same count")
    check(all(shapes_compatible(ins[0], t) for t in ins), "C2", "all inputs must have the same shape")
    check(all(elems_equal(a, b) for a, b in zip(ins, inits)), "C3", "each input must have its init value's element type")
    a = ins[0]
    if not ranked(a):
        return
    R = a.rank
    wd = ints(op.attributes.get("window_dimensions"))
    check(len(wd) == R, "C4", f"window_dimensions must have {R} entries, has {len(wd)}")
    check(all(x > 0 for x in wd), "C5", f"window_dimensions {list(wd)} must be positive")
    out = {}
    for key, c1, c2 in (("window_strides", "C6", "C7"), ("base_dilations", "C8", "C9"), ("window_dilations", "C10", "C11")):
        v = op.attributes.get(key)
        vals = ints(v) if v is not None else (1,) * R
        check(len(vals) == R, c1, f"{key} must have {R} entries, has {len(vals)}")
        check(all(x > 0 for x in vals), c2, f"{key} {list(vals)} must be positive")
        out[key] = vals
    p = op.attributes.get("padding")
    if p is not None:
        shp = tuple(getattr(getattr(p, "type", None), "shape", ()))
        check(shp == (R, 2) or (R == 0 and shp in ((0, 2), (0,))), "C12", f"padding must have shape [{R}, 2], has {list(shp)}")
        pv = ints(p)
        pads = [(pv[2 * i], pv[2 * i + 1]) for i in range(R)]
    else:
        pads = [(0, 0)] * R
    rets = _reducer_body(check, op, op.regions[0], inits, "C13")
    check(all(shapes_compatible(op.results[0].type, r.type) for r in op.results), "C14", "all results must have the same shape")
    expect = []
    for i in range(R):
        s = a.shape[i]
        if s is None:
            expect.append(None)
            continue
        dil = (s - 1) * out["base_dilations"][i] + 1 if s > 0 else 0
        padded = dil + pads[i][0] + pads[i][1]
        win = (wd[i] - 1) * out["window_dilations"][i] + 1
        expect.append(0 if padded < win else (padded - win) // out["window_strides"][i] + 1)
    for r in op.results:
        check(shape_matches(r.type, expect), "C15", f"result type {r.type} does not match the inferred shape {expect}")
    if rets is not None:
        for r, t in zip(op.results, rets):
            check(elems_equal(r.type, t), "C16", f"result type {r.type} must have the body's element type ({t})")


@verifier("stablehlo.map")
def map_(op, check):
    r = op.results[0].type
    check(len(op.operands) >= 1, "C2", "expects at least one input")
    check(all(shapes_compatible(v.type, r) for v in op.operands), "C1", f"all inputs must have the result's shape")
    dims = ints(op.attributes.get("dimensions"))
    if ranked(r):
        check(list(dims) == list(range(r.rank)), "C3", f"dimensions must be 0..{r.rank - 1} in order, got {list(dims)}")
    args = _region_args(op.regions[0])
    check(len(args) == len(op.operands), "C4", f"computation must take {len(op.operands)} arguments, takes {len(args)}")
    for a, v in zip(args, op.operands):
        check(ranked(a) and a.rank == 0 and elems_equal(a, v.type), "C4",
              f"computation argument {a} must be a 0-d tensor of {elem(v.type)}")
    rets = _region_returns(op.regions[0])
    if rets is not None:
        check(len(rets) == 1 and ranked(rets[0]) and rets[0].rank == 0 and elems_equal(rets[0], r), "C4",
              f"computation must return one 0-d tensor of {elem(r)}")


@verifier("stablehlo.sort")
def sort(op, check):
    ins = [v.type for v in op.operands]
    check(len(ins) >= 1, "C1", "expects at least one input")
    check(len(op.results) == len(ins) and all(types_compatible(a, r.type) for a, r in zip(ins, op.results)), "C2",
          "results must have the types of the inputs")
    check(all(shapes_compatible(ins[0], t) for t in ins), "C3", "all inputs must have the same shape")
    d = int_value(op.attributes.get("dimension"), -1)
    if ranked(ins[0]):
        R = ins[0].rank
        check(-R <= d < R or (R == 0 and d in (-1, 0)), "C4", f"dimension {d} is out of range for rank {R}")
    args = _region_args(op.regions[0])
    check(len(args) == 2 * len(ins), "C5", f"comparator must take {2 * len(ins)} arguments, takes {len(args)}")
    for i, t in enumerate(ins):
        for a in (args[2 * i], args[2 * i + 1]):
            check(ranked(a) and a.rank == 0 and elems_equal(a, t), "C5",
                  f"comparator argument {a} must be a 0-d tensor of {elem(t)}")
    rets = _region_returns(op.regions[0])
    if rets is not None:
        check(len(rets) == 1 and ranked(rets[0]) and rets[0].rank == 0 and is_pred(rets[0]), "C5",
              "comparator must return a 0-d tensor of i1")


@verifier("stablehlo.while")
def while_(op, check):
    ts = [v.type for v in op.operands]
    cond, body = op.regions
    ca = _region_args(cond)
    check(len(ca) == len(ts) and all(types_compatible(a, b) for a, b in zip(ca, ts)), "C1",
          "cond must take the loop value types")
    cr = _region_returns(cond)
    if cr is not None:
        check(len(cr) == 1 and ranked(cr[0]) and cr[0].rank == 0 and is_pred(cr[0]), "C1",
              f"cond must return a 0-d tensor of i1, returns ({', '.join(map(str, cr))})")
    ba = _region_args(body)
    check(len(ba) == len(ts) and all(types_compatible(a, b) for a, b in zip(ba, ts)), "C2",
          "body must take the loop value types")
    br = _region_returns(body)
    if br is not None:
        check(len(br) == len(ts) and all(types_compatible(a, b) for a, b in zip(br, ts)), "C2",
              "body must return the loop value types")
    check(len(op.results) == len(ts) and all(types_compatible(r.type, t) for r, t in zip(op.results, ts)), "C3",
          "results must have the operand types")


def _branches(op, check, regions, ids):
    c_args, c_same, c_res = ids
    rets = []
    for i, r in enumerate(regions):
        check(not _region_args(r), c_args, f"branch {i} must take no arguments")
        rets.append(_region_returns(r))
    known = [r for r in rets if r is not None]
    for r in known[1:]:
        check(len(r) == len(known[0]) and all(types_compatible(a, b) for a, b in zip(r, known[0])), c_same,
              "all branches must return the same types")
    if known:
        check(len(op.results) == len(known[0]) and all(types_compatible(v.type, t) for v, t in zip(op.results, known[0])),
              c_res, "results must have the types the branches return")


@verifier("stablehlo.if")
def if_(op, check):
    p = op.operands[0].type
    check(ranked(p) and p.rank == 0 and is_pred(p), "C1", f"pred must be a 0-d tensor of i1, got {p}")
    _branches(op, check, op.regions, ("C1", "C2", "C3"))


@verifier("stablehlo.case")
def case(op, check):
    p = op.operands[0].type
    check(ranked(p) and p.rank == 0, "C1", f"index must be a 0-d tensor of i32, got {p}")
    check(len(op.regions) >= 1, "C1", "expects at least one branch")
    _branches(op, check, op.regions, ("C2", "C3", "C4"))


# ------------------------------------------------------------------ gather / scatter

def _sorted_distinct(xs):
    return list(xs) == sorted(set(xs))


@verifier("stablehlo.gather")
def gather(op, check):
    a, idx, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    dn = op.attributes.get("dimension_numbers")
    if not isinstance(dn, StructAttr):
        return
    g = lambda k: tuple(dn.get(k, ()) or ())
    off, col, obd, sibd, sim = (g("offset_dims"), g("collapsed_slice_dims"), g("operand_batching_dims"),
                                g("start_indices_batching_dims"), g("start_index_map"))
    ivd = int(dn.get("index_vector_dim", 0) or 0)
    ss = ints(op.attributes.get("slice_sizes"))
    check(elems_equal(a, r, True), "C23", f"operand and result must have the same element type (got {a}, {r})")
    if ranked(a):
        check(a.rank == len(off) + len(col) + len(obd), "C1",
              f"operand rank {a.rank} must equal the number of offset_dims, collapsed_slice_dims and operand_batching_dims ({len(off) + len(col) + len(obd)})")
    if ranked(idx):
        check(0 <= ivd <= idx.rank, "C2", f"index_vector_dim {ivd} is out of range for {idx}")
        n = 1 if ivd == idx.rank else idx.shape[ivd]
        check(n is None or len(sim) == n, "C3", f"start_index_map has {len(sim)} entries but the index vector has {n}")
    check(_sorted_distinct(off), "C4", f"offset_dims {list(off)} must be sorted and distinct")
    check(all(d >= 0 for d in off) and (not ranked(r) or all(d < r.rank for d in off)), "C5",
          f"offset_dims {list(off)} out of range for {r}")
    check(len(set(col + obd)) == len(col + obd), "C6", "collapsed_slice_dims and operand_batching_dims must be distinct")
    check(list(col) == sorted(col), "C7", f"collapsed_slice_dims {list(col)} must be sorted")
    if ranked(a):
        check(all(0 <= d < a.rank for d in col), "C8", f"collapsed_slice_dims {list(col)} out of range for {a}")
    check(all(0 <= d < len(ss) and ss[d] <= 1 for d in col), "C9", "slices must be at most 1 wide in collapsed dimensions")
    check(list(obd) == sorted(obd), "C10", f"operand_batching_dims {list(obd)} must be sorted")
    if ranked(a):
        check(all(0 <= d < a.rank for d in obd), "C11", f"operand_batching_dims {list(obd)} out of range for {a}")
    check(all(0 <= d < len(ss) and ss[d] <= 1 for d in obd), "C12", "slices must be at most 1 wide in operand batching dimensions")
    check(len(set(sibd)) == len(sibd), "C13", f"start_indices_batching_dims {list(sibd)} must be distinct")
    if ranked(idx):
        check(all(0 <= d < idx.rank for d in sibd), "C14", f"start_indices_batching_dims {list(sibd)} out of range for {idx}")
    check(ivd not in sibd, "C15", "index_vector_dim must not be a start_indices batching dimension")
    check(len(obd) == len(sibd), "C16", "operand_batching_dims and start_indices_batching_dims must have the same length")
    if ranked(a) and ranked(idx):
        check(all(dim_ok(a.shape[x], idx.shape[y]) for x, y in zip(obd, sibd)), "C17", "paired batching dimensions differ in size")
    check(len(set(sim + obd)) == len(sim + obd), "C18", "start_index_map and operand_batching_dims must be distinct")
    if ranked(a):
        check(all(0 <= d < a.rank for d in sim), "C19", f"start_index_map {list(sim)} out of range for {a}")
        check(len(ss) == a.rank, "C20", f"slice_sizes must have {a.rank} entries, has {len(ss)}")
        check(all(0 <= s and (d is None or s <= d) for s, d in zip(ss, a.shape)), "C21",
              f"slice_sizes {list(ss)} out of range for {a}")
    if ranked(a) and ranked(idx) and ranked(r):
        batch = [s for i, s in enumerate(idx.shape) if i != ivd]
        offs = [s for i, s in enumerate(ss) if i not in col and i not in obd]
        rank = len(batch) + len(off)
        if r.rank == rank and len(offs) == len(off):
            it_b, it_o = iter(batch), iter(offs)
            expect = [next(it_o) if i in off else next(it_b) for i in range(rank)]
            check(shape_matches(r, expect), "C22", f"result type {r} does not match the inferred shape {expect}")
        else:
            check(False, "C22", f"result rank {r.rank} does not match the inferred rank {rank}")


@verifier("stablehlo.scatter")
def scatter(op, check):
    nin = len(op.results)
    ins = [v.type for v in op.operands[:nin]]
    idx = op.operands[nin].type
    ups = [v.type for v in op.operands[nin + 1:]]
    dn = op.attributes.get("scatter_dimension_numbers")
    check(nin >= 1 and len(ups) == nin, "C5", "there must be as many updates as inputs (and at least one)")
    check(all(shapes_compatible(ins[0], t) for t in ins), "C1", "all inputs must have the same shape")
    check(all(shapes_compatible(ups[0], t) for t in ups), "C3", "all updates must have the same shape")
    check(all(elems_equal(a, b) for a, b in zip(ins, ups)), "C6", "updates must have the inputs' element types")
    if not isinstance(dn, StructAttr):
        return
    g = lambda k: tuple(dn.get(k, ()) or ())
    uwd, iwd, ibd, sibd, sd2od = (g("update_window_dims"), g("inserted_window_dims"), g("input_batching_dims"),
                                  g("scatter_indices_batching_dims"), g("scatter_dims_to_operand_dims"))
    ivd = int(dn.get("index_vector_dim", 0) or 0)
    a, u = ins[0], ups[0]
    if ranked(a):
        check(a.rank == len(uwd) + len(iwd) + len(ibd), "C2",
              f"input rank {a.rank} must equal the number of update_window_dims, inserted_window_dims and input_batching_dims")
    check(_sorted_distinct(uwd), "C7", f"update_window_dims {list(uwd)} must be sorted and distinct")
    if ranked(u):
        check(all(0 <= d < u.rank for d in uwd), "C8", f"update_window_dims {list(uwd)} out of range for {u}")
    check(len(set(iwd + ibd)) == len(iwd + ibd), "C9", "inserted_window_dims and input_batching_dims must be distinct")
    check(list(iwd) == sorted(iwd), "C10", "inserted_window_dims must be sorted")
    if ranked(a):
        check(all(0 <= d < a.rank for d in iwd), "C11", f"inserted_window_dims {list(iwd)} out of range for {a}")
    check(list(ibd) == sorted(ibd), "C12", "input_batching_dims must be sorted")
    if ranked(a):
        check(all(0 <= d < a.rank for d in ibd), "C13", f"input_batching_dims {list(ibd)} out of range for {a}")
    check(len(set(sibd)) == len(sibd), "C14", "scatter_indices_batching_dims must be distinct")
    if ranked(idx):
        check(all(0 <= d < idx.rank for d in sibd), "C15", f"scatter_indices_batching_dims out of range for {idx}")
    check(ivd not in sibd, "C16", "index_vector_dim must not be a scatter_indices batching dimension")
    check(len(ibd) == len(sibd), "C17", "input_batching_dims and scatter_indices_batching_dims must have the same length")
    if ranked(a) and ranked(idx):
        check(all(dim_ok(a.shape[x], idx.shape[y]) for x, y in zip(ibd, sibd)), "C18", "paired batching dimensions differ in size")
    if ranked(idx):
        check(0 <= ivd <= idx.rank, "C22", f"index_vector_dim {ivd} is out of range for {idx}")
        n = 1 if ivd == idx.rank else idx.shape[ivd]
        check(n is None or len(sd2od) == n, "C19", f"scatter_dims_to_operand_dims has {len(sd2od)} entries but the index vector has {n}")
    check(len(set(sd2od + ibd)) == len(sd2od + ibd), "C20", "scatter_dims_to_operand_dims and input_batching_dims must be distinct")
    if ranked(a):
        check(all(0 <= d < a.rank for d in sd2od), "C21", f"scatter_dims_to_operand_dims out of range for {a}")
    if ranked(a) and ranked(idx) and ranked(u):
        batch = [s for i, s in enumerate(idx.shape) if i != ivd]
        check(u.rank == len(batch) + len(uwd), "C4", f"updates rank {u.rank} must be {len(batch) + len(uwd)}")
        win_dims = [i for i in range(a.rank) if i not in iwd and i not in ibd]
        sc = [i for i in range(u.rank) if i not in uwd]
        for k, ud in enumerate(uwd):
            if k < len(win_dims):
                check(u.shape[ud] is None or a.shape[win_dims[k]] is None or u.shape[ud] <= a.shape[win_dims[k]], "C4",
                      f"update window dimension {ud} is larger than the input")
        for k, ud in enumerate(sc):
            if k < len(batch):
                check(dim_ok(u.shape[ud], batch[k]), "C4", f"update scatter dimension {ud} must match the indices' size {batch[k]}")
    rets = _reducer_body(check, op, op.regions[0], ins, "C23", scalar=True)
    check(all(shapes_compatible(r.type, i) for r, i in zip(op.results, ins)), "C24", "results must have the inputs' shapes")
    if rets is not None:
        for r, t in zip(op.results, rets):
            check(elems_equal(r.type, t), "C25", f"result type {r.type} must have the body's element type ({t})")


# ------------------------------------------------------------------ functions

@verifier("func.return")
def func_return(op, check):
    parent = check.func
    if parent is None:
        return
    ft = parent.attributes.get("function_type")
    ft = getattr(ft, "type", None)
    if not isinstance(ft, FunctionType):
        return
    got = [v.type for v in op.operands]
    check(len(got) == len(ft.results) and all(types_compatible(a, b) for a, b in zip(got, ft.results)), "",
          f"returned types ({', '.join(map(str, got))}) do not match the function's result types "
          f"({', '.join(map(str, ft.results))})")


@verifier("func.call")
def func_call(op, check):
    callee = op.attributes.get("callee")
    name = callee.root if isinstance(callee, SymbolRefAttr) else getattr(callee, "value", None)
    if check.module is None or name is None:
        return
    fns = check.module.functions
    check(name in fns, "", f"'{name}' does not reference a valid function")
    ft = getattr(fns[name].attributes.get("function_type"), "type", None)
    if not isinstance(ft, FunctionType):
        return
    check(len(op.operands) == len(ft.inputs), "", f"expects {len(ft.inputs)} operand(s) for @{name}, got {len(op.operands)}")
    for i, (v, t) in enumerate(zip(op.operands, ft.inputs)):
        check(types_compatible(v.type, t), "", f"operand #{i} type {v.type} does not match @{name}'s input type {t}")
    check(len(op.results) == len(ft.results), "", f"expects {len(ft.results)} result(s) from @{name}, got {len(op.results)}")
    for i, (v, t) in enumerate(zip(op.results, ft.results)):
        check(types_compatible(v.type, t), "", f"result #{i} type {v.type} does not match @{name}'s result type {t}")


@verifier("func.func")
def func_func(op, check):
    ft = getattr(op.attributes.get("function_type"), "type", None)
    if isinstance(ft, FunctionType):
        for t in list(ft.inputs) + list(ft.results):
            msg = quantized.element_type_problem(elem(t)) if is_tensor(t) else None
            check(msg is None, "", f"function type {t}: {msg}")
    if not isinstance(ft, FunctionType) or not op.regions or not op.regions[0].blocks:
        return
    args = _region_args(op.regions[0])
    check(len(args) == len(ft.inputs) and all(types_compatible(a, b) for a, b in zip(args, ft.inputs)), "",
          "entry block arguments do not match the function type")


@verifier("stablehlo.dynamic_broadcast_in_dim")
def dynamic_broadcast_in_dim(op, check):
    broadcast_in_dim(op, check)
    od = op.operands[1].type
    r = op.results[0].type
    check(not ranked(od) or od.is_static, "", f"operand #1 must be statically shaped, got {od}")
    if ranked(od) and ranked(r) and od.rank == 1 and od.shape[0] is not None:
        check(od.shape[0] == r.rank, "C7", f"output_dimensions has {od.shape[0]} entries but the result has rank {r.rank}")
    _constant_output_shape(op, check, op.operands[1], r, "C7")
    a = op.operands[0].type
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
    _constant_output_shape(op, check, op.operands[1], r, "C4")
    shape = const_ints(op.operands[1])
    if shape is not None and ranked(a) and a.is_static and all(x >= 0 for x in shape):
        n = 1
        for x in shape:
            n *= x
        check(n == a.num_elements, "C2", f"output shape {list(shape)} holds {n} elements, the operand {a.num_elements}")


def _constant_output_shape(op, check, value, r, cid):
    """A constant shape operand must describe the result type."""
    shape = const_ints(value)
    if shape is None or not ranked(r):
        return
    fmt = "[" + ", ".join(map(str, shape)) + "]"
    check(all(x >= 0 for x in shape) and len(shape) == r.rank and all(dim_ok(x, y) for x, y in zip(shape, r.shape)),
          cid, f"output shape {fmt} is incompatible with return type of operation '{r}'")


@verifier("stablehlo.set_dimension_size", "stablehlo.get_dimension_size")
def dimension_size(op, check):
    a = op.operands[0].type
    d = int_value(op.attributes.get("dimension"), 0)
    check(d >= 0, "C1", f"dimension {d} must be non-negative")
    if ranked(a):
        check(d < a.rank, "C1", f"dimension {d} is out of range for {a}")
    if len(op.operands) > 1:
        s = op.operands[1].type
        check(not ranked(s) or s.rank == 0, "C2", f"size operand should be of rank 0, got {s}")


def _batch_norm(op, check):
    a = op.operands[0].type
    fi = int_value(op.attributes.get("feature_index"), 0)
    check(fi >= 0, "C1", f"feature_index {fi} must be non-negative")
    if not ranked(a):
        return
    check(fi < a.rank, "C1", f"feature_index {fi} must be smaller than the operand rank {a.rank}")
    n = a.shape[fi]
    vals = list(op.operands[1:]) + list(op.results)
    for v in vals:
        t = v.type
        check(elems_equal(t, a, True), "C2", f"{t} must have the operand's element type {elem(a)}")
        if ranked(t) and t.rank == 1:
            check(dim_ok(t.shape[0], n), "C3", f"1-d operands must have {n} entries (the feature count), got {t}")
        elif ranked(t):
            check(shapes_compatible(t, a), "C7", f"{t} must have the operand's shape {a}")


for _n in ("stablehlo.batch_norm_inference", "stablehlo.batch_norm_training", "stablehlo.batch_norm_grad"):
    VERIFIERS[_n] = _batch_norm


@verifier("stablehlo.cholesky")
def cholesky(op, check):
    a, r = op.operands[0].type, op.results[0].type
    check(types_compatible(a, r, True), "C1", f"a and result must have the same type (got {a}, {r})")
    if ranked(a):
        check(a.rank >= 2, "C2", f"a must have rank 2 or more, got {a}")
        check(dim_ok(a.shape[-1], a.shape[-2]), "C3", f"the last two dimensions of a must be equal, got {a}")


@verifier("stablehlo.triangular_solve")
def triangular_solve(op, check):
    a, b, r = op.operands[0].type, op.operands[1].type, op.results[0].type
    if not (ranked(a) and ranked(b)):
        return
    check(a.rank >= 2, "C1", f"operand 'a' must have rank >= 2, but got {a}")
    check(a.rank == b.rank, "C2", f"operands 'a' and 'b' must have the same rank, got {a}, {b}")
    check(dim_ok(a.shape[-1], a.shape[-2]), "C3", f"the last two dimensions of 'a' must be equal, got {a}")
    left = getattr(op.attributes.get("left_side"), "value", False)
    shared = b.shape[-2] if left else b.shape[-1]
    check(dim_ok(a.shape[-1], shared), "C4", f"shared dimension of operands 'a' and 'b' must be compatible, got {a} and {b}")
    check(all(dim_ok(x, y) for x, y in zip(a.shape[:-2], b.shape[:-2])), "C5",
          f"batch dimensions of the operands must be compatible, got {a} and {b}")
    check(types_compatible(b, r, True), "C6", f"result type {r} must be the type of 'b' ({b})")


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


@verifier("stablehlo.fft")
def fft(op, check):
    a, r = op.operands[0].type, op.results[0].type
    kind = getattr(op.attributes.get("fft_type"), "value", "FFT")
    n = ints(op.attributes.get("fft_length"))
    check(1 <= len(n) <= 3, "C3", f"fft_length must have 1 to 3 entries, has {len(n)}")
    if ranked(a):
        check(len(n) <= a.rank, "C1", f"operand rank must not be less than fft rank of {len(n)} for operand of type {a}")
    ea, er = elem(a), elem(r)
    if kind == "RFFT":
        check(isinstance(ea, ElementType) and ea.name in ("f32", "f64"), "C2", f"RFFT requires f32 or f64 input, got {ea}")
        check(isinstance(er, ElementType) and er.is_complex and er.bits == 2 * ea.bits, "C2", f"RFFT result must be complex of {ea}")
        if ranked(a):
            check(all(dim_ok(x, y) for x, y in zip(a.shape[-len(n):], n)), "C4",
                  f"RFFT requires innermost dimensions {list(a.shape[-len(n):])} to equal fft_length {list(n)}")
            if ranked(r):
                expect = list(a.shape[:-1]) + [n[-1] // 2 + 1]
                check(shape_matches(r, expect), "C5", f"result {r} does not match the inferred shape {expect}")
    elif kind == "IRFFT":
        check(isinstance(ea, ElementType) and ea.is_complex, "C2", f"IRFFT takes a complex tensor, given {a}")
        check(isinstance(er, ElementType) and er.is_float, "C2", f"IRFFT gives a float tensor, got {r}")
    else:
        check(isinstance(ea, ElementType) and ea.is_complex, "C2", f"FFT/IFFT take a complex tensor as input, but is given {a}")
        check(types_compatible(a, r), "C5", f"result {r} must have the operand type {a}")


@verifier("stablehlo.dynamic_gather")
def dynamic_gather(op, check):
    # Same structure as gather, with slice_sizes an operand (checked only when constant-folded upstream).
    a, idx = op.operands[0].type, op.operands[1].type
    dn = op.attributes.get("dimension_numbers")
    if not isinstance(dn, StructAttr):
        return
    g = lambda k: tuple(dn.get(k, ()) or ())
    off, col, obd, sim = g("offset_dims"), g("collapsed_slice_dims"), g("operand_batching_dims"), g("start_index_map")
    r = op.results[0].type
    if ranked(a):
        check(a.rank == len(off) + len(col) + len(obd), "C1",
              f"offset_dims size ({len(off)}) plus collapsed_slice_dims size ({len(col)}) plus operand_batching_dims size ({len(obd)}) is not equal to operand rank ({a.rank})")
    check(_sorted_distinct(off), "C4", f"offset_dims {list(off)} must be sorted and distinct")
    if ranked(r):
        check(all(0 <= d < r.rank for d in off), "C5", f"offset_dims {list(off)} out of range for {r}")
    check(list(col) == sorted(set(col)), "C6", f"collapsed_slice_dims {list(col)} must be sorted and distinct")
    check(len(set(sim + obd)) == len(sim + obd), "C9", "start_index_map and operand_batching_dims must be distinct")
    if ranked(a):
        check(all(0 <= d < a.rank for d in col), "C7", f"collapsed_slice_dims {list(col)} out of range for {a}")
        check(all(0 <= d < a.rank for d in sim), "C10", f"start_index_map {list(sim)} out of range for {a}")
    ss = op.operands[2].type
    if ranked(ss) and ranked(a) and ss.rank == 1 and ss.shape[0] is not None:
        check(ss.shape[0] == a.rank, "C11", f"slice_sizes size ({ss.shape[0]}) not equal to operand rank ({a.rank})")
    check(elems_equal(a, r, True), "C14", f"operand and result must have the same element type")
    sizes = const_ints(op.operands[2])
    if sizes is not None and ranked(a) and len(sizes) == a.rank:
        check(all(0 <= d < len(sizes) and sizes[d] <= 1 for d in col), "C8",
              "slice_sizes of collapsed_slice_dims must be at most 1")
        check(all(0 <= d < len(sizes) and sizes[d] <= 1 for d in obd), "C12",
              f"Expects that for each dim in operand_batching_dims, slice_sizes[dim] should be <= 1")
        for i, (s_, d) in enumerate(zip(sizes, a.shape)):
            check(s_ >= 0 and (d is None or s_ <= d), "C13",
                  f"slice size ({s_}) is out of bounds for operand dimension ({d}) at index {i}")


@verifier("stablehlo.composite")
def composite(op, check):
    name = getattr(op.attributes.get("name"), "value", "")
    import re
    check(re.fullmatch(r"[A-Za-z_][\w$]*(\.[\w$]+)+", name) is not None, "C1",
          f"name '{name}' must be a valid namespaced op name")
    callee = op.attributes.get("decomposition")
    if isinstance(callee, SymbolRefAttr) and check.module is not None:
        fns = check.module.functions
        check(callee.root in fns, "C2", f"decomposition @{callee.root} does not reference a function")
        ft = getattr(fns[callee.root].attributes.get("function_type"), "type", None)
        if isinstance(ft, FunctionType):
            check(len(ft.inputs) == len(op.operands) and all(types_compatible(v.type, t) for v, t in zip(op.operands, ft.inputs)),
                  "C3", f"operand types must match the decomposition's input types ({', '.join(map(str, ft.inputs))})")
            check(len(ft.results) == len(op.results) and all(types_compatible(v.type, t) for v, t in zip(op.results, ft.results)),
                  "C4", f"result types must match the decomposition's result types ({', '.join(map(str, ft.results))})")


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


@verifier("stablehlo.infeed")
def infeed(op, check):
    rs = [r.type for r in op.results]
    check(len(rs) >= 1, "C1", "result is expected to be at least of size 1, but got 0")
    check(all(not isinstance(t, TokenType) for t in rs[:-1]), "C2",
          "all result types except the last are expected to be tensors")
    check(isinstance(rs[-1], TokenType), "C3", f"last element of result types is expected to be of token type, but got {rs[-1]}")
    layout = op.attributes.get("layout")
    if op.name == "stablehlo.infeed" and layout is not None and hasattr(layout, "elements"):
        n = len(rs) - 1
        check(len(layout.elements) == n, "",
              f"layout-attribute size must be {n} (which is the number of op-results - 1 (for token result)), "
              f"but got {len(layout.elements)}")
        for item in layout.elements:
            check(hasattr(item, "elements"), "", f"layout-attribute elements are expected to be arrays, but got {item}")
            for leaf in item.elements:
                check(isinstance(leaf, IntegerAttr), "",
                      f"layout-attribute's leaf elements are expected to be of type integer, but got {leaf}")


@verifier("stablehlo.recv")
def recv(op, check):
    rs = [r.type for r in op.results]
    check(len(rs) >= 1 and isinstance(rs[-1], TokenType), "",
          "the last result is expected to be of token type")
    check(all(not isinstance(t, TokenType) for t in rs[:-1]), "", "all results except the last are expected to be tensors")
    _source_target_pairs(op, check)
    _host_transfer_channel(op, check, "HOST_TO_DEVICE")


@verifier("stablehlo.send")
def send(op, check):
    check(len(op.operands) >= 1 and isinstance(op.operands[-1].type, TokenType), "",
          "the last operand is expected to be a token")
    _source_target_pairs(op, check)
    _host_transfer_channel(op, check, "DEVICE_TO_HOST")


def _source_target_pairs(op, check):
    arr = getattr(op.attributes.get("source_target_pairs"), "array", None)
    if arr is None or arr.size == 0:
        return
    check(arr.ndim == 2 and arr.shape[1] == 2, "C1", f"source_target_pairs must have shape (N, 2), got {tuple(arr.shape)}")
    src, dst = [int(x) for x in arr[:, 0]], [int(x) for x in arr[:, 1]]
    check(len(set(src)) == len(src), "C2", "duplicate sources not allowed")
    check(len(set(dst)) == len(dst), "C3", "duplicate targets not allowed")
    check(all(x >= 0 for x in src + dst), "C4", "process ids in source_target_pairs must be non-negative")


def _host_transfer_channel(op, check, host_kind):
    """send/recv: the channel type matches is_host_transfer (1 = DEVICE_TO_DEVICE, 2 = DEVICE_TO_HOST,
    3 = HOST_TO_DEVICE)."""
    ch = op.attributes.get("channel_handle")
    t = ch.get("type") if isinstance(ch, StructAttr) else None
    if t is None:
        return
    t = int(t)
    host = getattr(op.attributes.get("is_host_transfer"), "value", False)
    names = {1: "DEVICE_TO_DEVICE", 2: "DEVICE_TO_HOST", 3: "HOST_TO_DEVICE"}
    cid = "C5"
    if host:
        check(names.get(t) == host_kind, cid, f"channel_type should be {host_kind} when is_host_transfer is true")
    else:
        check(t in (0, 1), cid, "channel_type should be DEVICE_TO_DEVICE when is_host_transfer is false")


from . import chlo, collective, conv, misc  # noqa: E402,F401  (register the other verifier families)

_register_trait_checks()
