"""Verifiers of the random-number ops: rng and rng_bit_generator."""
from __future__ import annotations

from ..ir.types import ElementType
from .registry import verifier
from .shapes import const_ints, elem, elems_equal, ranked, shape_matches, types_compatible


@verifier("stablehlo.rng")
def rng(op, check):
    a, b, shape = (v.type for v in op.operands)
    r = op.results[0].type
    check(elems_equal(a, b) and elems_equal(a, r), "C1", f"a, b and result must have the same element type (got {a}, {b}, {r})")
    dist = getattr(op.attributes.get("rng_distribution"), "value", None)
    if dist == "NORMAL":
        e = elem(r)
        check(isinstance(e, ElementType) and e.is_float, "C2", f"NORMAL distribution requires a float result, got {r}")
    if ranked(shape) and shape.rank == 1 and shape.shape[0] is not None and ranked(r):
        check(shape.shape[0] == r.rank, "C3", f"shape operand has {shape.shape[0]} entries but the result has rank {r.rank}")
    sizes = const_ints(op.operands[2])
    if sizes is not None:
        check(shape_matches(r, sizes), "C3", f"result {r} does not have the shape {list(sizes)}")


@verifier("stablehlo.rng_bit_generator")
def rng_bit_generator(op, check):
    s, so = op.operands[0].type, op.results[0].type
    check(types_compatible(s, so), "C1", f"initial_state and output_state must have the same type (got {s}, {so})")
    alg = getattr(op.attributes.get("rng_algorithm"), "value", None)
    if ranked(s) and s.is_static:
        n = s.num_elements
        if alg == "THREE_FRY":
            check(n == 2, "C2", f"THREE_FRY requires an initial state of 2 elements, got {s}")
        elif alg == "PHILOX":
            check(n in (2, 3), "C2", f"PHILOX requires an initial state of 2 or 3 elements, got {s}")
