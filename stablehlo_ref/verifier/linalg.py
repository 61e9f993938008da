"""Verifiers of the linear-algebra ops: dot_general (dimension numbers, quantization, algorithms),
dot, cholesky, triangular_solve and fft."""
from __future__ import annotations

from ..ir.attributes import StructAttr, dot_algorithm_problems
from ..ir.types import ElementType
from . import quantized
from .registry import verifier
from .shapes import dim_ok, elem, elems_equal, ints, is_quantized, ranked, shape_matches, types_compatible


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
        check(elems_equal(lhs, rhs), "C13",
              f"lhs and rhs must have the same element type (got {lhs}, {rhs})")


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
        check(all(getattr(e, "value", None) == "DEFAULT" for e in getattr(pc, "elements", ()) or ()), "C21",
              "precision_config must be DEFAULT when an algorithm is specified")
        for cid, msg in dot_algorithm_problems(alg):
            check(False, cid, msg)
    pc = op.attributes.get("precision_config")
    if pc is not None and hasattr(pc, "elements"):
        check(len(pc.elements) <= 2, "C11", f"precision_config must have 0 or 2 entries, got {len(pc.elements)}")


@verifier("stablehlo.dot")
def dot(op, check):
    """Legacy op: its spec entry states no constraints, so the diagnostics are unlabelled."""
    lhs, rhs, res = op.operands[0].type, op.operands[1].type, op.results[0].type
    if ranked(lhs) and ranked(rhs):
        check(lhs.rank in (1, 2) and rhs.rank in (1, 2), "", f"dot operands must have rank 1 or 2 (got {lhs}, {rhs})")
        check(dim_ok(lhs.shape[-1], rhs.shape[0]), "", f"contracting dimension sizes differ ({lhs}, {rhs})")
        if ranked(res):
            expect = list(lhs.shape[:-1]) + list(rhs.shape[1:])
            check(shape_matches(res, expect), "", f"result type {res} does not match the inferred shape {expect}")
    pc = op.attributes.get("precision_config")
    if pc is not None and hasattr(pc, "elements"):
        check(len(pc.elements) <= 2, "", f"precision_config must have 0 or 2 entries, got {len(pc.elements)}")


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
    check(a.rank >= 2, "C2", f"operand 'a' must have rank >= 2, but got {a}")
    check(a.rank == b.rank, "C2", f"operands 'a' and 'b' must have the same rank, got {a}, {b}")
    check(dim_ok(a.shape[-1], a.shape[-2]), "C3", f"the last two dimensions of 'a' must be equal, got {a}")
    check(getattr(op.attributes.get("transpose_a"), "value", None) != "TRANSPOSE_INVALID", "",
          "Invalid transpose option value for triangular solve")
    check(elems_equal(a, b, True), "C1", f"operands 'a' and 'b' must have the same element type, got {a}, {b}")
    left = getattr(op.attributes.get("left_side"), "value", False)
    shared = b.shape[-2] if left else b.shape[-1]
    check(dim_ok(a.shape[-1], shared), "C3", f"shared dimension of operands 'a' and 'b' must be compatible, got {a} and {b}")
    check(all(dim_ok(x, y) for x, y in zip(a.shape[:-2], b.shape[:-2])), "C3",
          f"batch dimensions of the operands must be compatible, got {a} and {b}")
    check(types_compatible(b, r, True), "C4", f"result type {r} must be the type of 'b' ({b})")


@verifier("stablehlo.fft")
def fft(op, check):
    a, r = op.operands[0].type, op.results[0].type
    kind = getattr(op.attributes.get("fft_type"), "value", None)
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
        check(isinstance(er, ElementType) and er.is_float and 2 * er.bits == ea.bits, "C2",
              f"IRFFT gives the float component type of {ea}, got {r}")
        if ranked(a) and len(n) <= a.rank:
            back = a.shape[a.rank - len(n):]
            for x, y in zip(back[:-1], n[:-1]):
                check(dim_ok(x, y), "C4", f"IRFFT requires non-final dimensions to be compatible with fft_length. "
                      f"Got: {list(a.shape)} but wanted {list(n)}, and {x} != {y}.")
            last = back[-1]
            check(n[-1] == 0 and dim_ok(last, 0) or dim_ok(last, n[-1] // 2 + 1), "C5",
                  f"IRFFT requires innermost dimension to be compatible with fft_length[-1]/2+1. "
                  f"Got: {last} but fft_length is {list(n)}.")
            if ranked(r):
                expect = list(a.shape[:-1]) + [n[-1]]
                check(shape_matches(r, expect), "C5", f"result {r} does not match the inferred shape {expect}")
    else:
        check(isinstance(ea, ElementType) and ea.is_complex, "C2", f"FFT/IFFT take a complex tensor as input, but is given {a}")
        check(types_compatible(a, r), "C5", f"result {r} must have the operand type {a}")
