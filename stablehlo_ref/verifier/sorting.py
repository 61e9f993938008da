"""Verifier of stablehlo.sort: inputs, results, dimension and the comparator region."""
from __future__ import annotations

from .registry import verifier
from .shapes import (elem, elems_equal, int_value, is_pred, ranked, region_args, region_returns,
                     shapes_compatible, types_compatible)


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
    args = region_args(op.regions[0])
    check(len(args) == 2 * len(ins), "C5", f"comparator must take {2 * len(ins)} arguments, takes {len(args)}")
    for i, t in enumerate(ins):
        for a in (args[2 * i], args[2 * i + 1]):
            check(ranked(a) and a.rank == 0 and elems_equal(a, t), "C5",
                  f"comparator argument {a} must be a 0-d tensor of {elem(t)}")
    rets = region_returns(op.regions[0])
    if rets is not None:
        check(len(rets) == 1 and ranked(rets[0]) and rets[0].rank == 0 and is_pred(rets[0]), "C5",
              "comparator must return a 0-d tensor of i1")
