"""Verifier of stablehlo.reduce: input/init counts and types, dimensions, the reduction body and
the reduced result shape."""
from __future__ import annotations

from .registry import verifier
from .shapes import elems_equal, ints, ranked, reducer_body, shape_matches, shapes_compatible, types_of


@verifier("stablehlo.reduce")
def reduce(op, check):
    n = len(op.operands) // 2
    ins, inits = [v.type for v in op.operands[:n]], [v.type for v in op.operands[n:]]
    dims = ints(op.attributes.get("dimensions"))
    check(n >= 1 and len(op.operands) % 2 == 0 and len(op.results) == n, "C3",
          "inputs, init_values and results must have the same count")
    check(all(shapes_compatible(ins[0], t) for t in ins), "C1", f"all inputs must have the same shape (got {types_of(op.operands[:n])})")
    check(all(elems_equal(a, b) for a, b in zip(ins, inits)), "C2",
          f"each input must have its init value's element type (got {types_of(op.operands)})")
    if ranked(ins[0]):
        check(all(0 <= d < ins[0].rank for d in dims), "C4", f"dimensions {list(dims)} out of range for {ins[0]}")
    check(len(set(dims)) == len(dims), "C5", f"dimensions {list(dims)} has repeated entries")
    allowed = [s for i, s in enumerate(ins[0].shape) if i not in dims] if ranked(ins[0]) else []
    rets = reducer_body(check, op, op.regions[0], ins, inits, "C6", allowed)
    if ranked(ins[0]):
        expect = [s for i, s in enumerate(ins[0].shape) if i not in dims]
        for r in op.results:
            check(shape_matches(r.type, expect), "C7", f"result type {r.type} does not match the reduced shape {expect}")
    if rets is not None:
        for r, t in zip(op.results, rets):
            check(elems_equal(r.type, t), "C8", f"result type {r.type} must have the body's element type ({t})")
