"""Shared by the tests of compiled loop bodies: run a program compiled (its loop blocks
compiled and fused after a few iterations) and again with no block ever compiled (every op
through its registered kernel), and require the same results bit for bit."""
import numpy as np
from hypothesis import strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter import plan
from stablehlo_ref.ir.types import element_type
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


def values(t, shape, draw):
    """Values of type t: floats as raw bit patterns (every NaN payload, signalling NaNs,
    subnormals, infinities, -0.0) mixed with ordinary numbers; integers with their extremes."""
    dt = element_type(t).dtype
    size = int(np.prod(shape))
    if t.startswith("f"):
        bits = dt.itemsize * 8
        udt = np.dtype(f"u{dt.itemsize}")
        nice = [np.array(v, dtype=dt).view(udt).item() for v in
                (0.0, -0.0, 1.0, -1.5, 3.0, 0.25, 1e-3, 65504.0 if bits == 16 else 1e30,
                 float("inf"), -float("inf"), float("nan"))]
        elems = st.one_of(st.integers(0, (1 << bits) - 1), st.sampled_from(nice))
        vals = draw(st.lists(elems, min_size=size, max_size=size))
        return np.array(vals, dtype=udt).view(dt).reshape(shape)
    info = np.iinfo(dt)
    elems = st.one_of(st.integers(int(info.min), int(info.max)),
                      st.sampled_from([int(info.min), int(info.max), 0, 1, 3,
                                       -1 if info.min else 2]))
    vals = draw(st.lists(elems, min_size=size, max_size=size))
    return np.array(vals, dtype=object).astype(dt).reshape(shape)


def generate_from(monkeypatch, module, name, after, generated, failed):
    """Makes codegen `module` generate from its `after`-th run, and records in `generated`
    what its function `name` returns (None: not generated) and in `failed` what it raises
    (the runners fall back to their lists; a test must not: check `failed` is empty)."""
    real = getattr(module, name)

    def spy(*a, **k):
        try:
            got = real(*a, **k)
        except Exception as e:
            failed.append(e)
            raise
        generated.append(got)
        return got
    monkeypatch.setattr(module, "GENERATE_AFTER", after)
    monkeypatch.setattr(module, name, spy)
    del failed[:]


def record_calls(monkeypatch, module, name):
    """The argument tuples of every call of `module.name` from now on (it still runs)."""
    made = []
    orig = getattr(module, name)

    def wrapped(*a):
        made.append(a)
        return orig(*a)
    monkeypatch.setattr(module, name, wrapped)
    return made
