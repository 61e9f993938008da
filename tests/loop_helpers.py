"""Shared by the tests of compiled loop bodies: run a program compiled (its loop blocks
compiled and fused after a few iterations) and again with no block ever compiled (every op
through its registered kernel), and require the same results bit for bit."""
import numpy as np

import stablehlo_ref
from stablehlo_ref.interpreter import plan
from stablehlo_ref.text import parse


def run_both(src, *args):
    """The program's results compiled and fused, checked against the step-by-step run: same
    count, dtypes, shapes and bytes (NaN payloads included)."""
    compiled = stablehlo_ref.run(parse(src), *args)
    old = plan._MAX_COMPILED_STEPS
    plan._MAX_COMPILED_STEPS = -1
    try:
        stepwise = stablehlo_ref.run(parse(src), *args)
    finally:
        plan._MAX_COMPILED_STEPS = old
    assert len(compiled) == len(stepwise)
    for a, b in zip(compiled, stepwise):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        assert a.tobytes() == b.tobytes(), (a, b)
    return compiled
