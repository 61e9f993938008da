"""Merged sequences written as straight-line Python (`interpreter.sequence_codegen`): every
entry kind of `plan._mixed_sequence_runner` run by the list runner and by the generated code
on the same frames (random arrays, scalars, predicates all true / all false / mixed,
in-place selects with the array held elsewhere or not) gives the same values in the same
slots; an error is tagged with the index of the step that raised it; the loop tests of
tests/test_interp_loop_in_place.py and test_interp_loop_selects.py run again with every
sequence generated from its first run."""
import operator

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.interpreter import plan, sequence_codegen

from loop_helpers import generate_from
from test_interp_loop_in_place import *   # noqa: F401,F403 - collected here again, generated
from test_interp_loop_selects import *    # noqa: F401,F403


GENERATED = []
FAILED = []


@pytest.fixture(autouse=True)
def generate_at_once(monkeypatch):
    generate_from(monkeypatch, sequence_codegen, "generated_sequence", 1, GENERATED, FAILED)
    yield
    assert not FAILED, FAILED


def _kernel1(ctx, op, x):
    return np.negative(x)


def _kernel2(ctx, op, x, y):
    return x * 2 + y


def _bound1(ctx, x):
    return x - 1


def _bound2(ctx, x, y):
    return np.maximum(x, y)


def _call3(ctx, x, y, z):
    return x + y + z


def _fused(ctx, f, x):
    return x + f[0]


def _where(ctx, p, x, y):
    return np.where(p, x, y)


def _call_list1(ctx, op, x):
    return [x * 3]


def _call_list2(ctx, op, x, y):
    return (x - y,)


class _Op:
    name = "test.op"


OP = _Op()


def _entries(draw):
    """A random sequence over slots 0-3 (inputs) and 4-15 (made here): (fn, a, b, c, out,
    kind, op) entries of every kind the mixed runner knows."""
    entries = []
    avail = [0, 1, 2]
    preds = [3]
    for out in range(4, 4 + draw(st.integers(1, 12))):
        kind = draw(st.sampled_from(["op", "op", "kernel1", "kernel2", "bound1", "bound2",
                                     "call3", "fused", "select", "putmask", "in_place",
                                     "call1", "call2"]))
        a, b, c = (draw(st.sampled_from(avail)) for _ in range(3))
        p = draw(st.sampled_from(preds))
        if kind == "op":
            fn = draw(st.sampled_from([operator.add, operator.mul, operator.sub, np.minimum]))
            e = (fn, a, b, -1, out)
        elif kind == "kernel1":
            e = (_kernel1, a, -1, -2, out, "kernel", OP)
        elif kind == "kernel2":
            e = (_kernel2, a, b, -2, out, "kernel", OP)
        elif kind == "bound1":
            e = (_bound1, a, -1, -2, out)
        elif kind == "bound2":
            e = (_bound2, a, b, -2, out)
        elif kind == "call3":
            e = (_call3, a, b, c, out)
        elif kind == "fused":
            e = (_fused, a, -1, -2, out, "fused", OP)
        elif kind == "select":
            e = (_where, p, a, b, out, "select", OP)
        elif kind == "putmask":
            e = (_where, p, a, b, out, "putmask", OP)
        elif kind == "in_place":
            # (its false operand made just before it, read by nothing else)
            entries.append((operator.add, a, b, -1, out))
            out += 100
            e = (_where, p, c, out - 100, out, "putmask_in_place", OP)
        elif kind == "call1":
            e = (_call_list1, a, -1, -2, out, "call", OP)
        else:
            e = (_call_list2, a, b, -2, out, "call", OP)
        entries.append(e)
        avail.append(out)
    return entries


@st.composite
def _cases(draw):
    entries = _entries(draw)
    shape = draw(st.sampled_from([(), (5,)]))
    scalar = shape == ()
    vals = [np.float32(draw(st.floats(-4, 4, width=32))) if scalar
            else np.asarray(draw(st.lists(st.floats(-4, 4, width=32), min_size=5,
                                          max_size=5)), np.float32)
            for _ in range(3)]
    pk = draw(st.sampled_from(["all", "none", "mixed"]))
    if scalar:
        pred = np.bool_(pk != "none")
    else:
        pred = np.array([pk == "all" or (pk == "mixed" and i % 2 == 0) for i in range(5)])
    return entries, vals + [pred]


def _frame(inputs):
    f = [None] * 240
    for i, v in enumerate(inputs):
        f[i] = v.copy() if v.__class__ is np.ndarray else v
    return f


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_cases())
def test_generated_sequence_matches_the_list_runner(case):
    entries, inputs = case
    kinds = tuple(plan._sequence_kind(e) for e in entries)
    gen = sequence_codegen.generated_sequence(kinds, plan._SEQUENCE_ENV)
    assert gen is not None
    sequence_codegen.ENABLED = False
    try:
        listed = plan._sequence_runner(entries)
        want = _frame(inputs)
        with np.errstate(all="ignore"):
            listed(None, want)
    finally:
        sequence_codegen.ENABLED = True
    got = _frame(inputs)
    with np.errstate(all="ignore"):
        gen(None, got)
    for s, (x, y) in enumerate(zip(want, got)):
        if x is None or y is None:
            assert x is y, s
            continue
        assert x.__class__ is y.__class__ and np.asarray(x).dtype == np.asarray(y).dtype, s
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes(), (s, x, y)


def test_in_place_select_writes_into_an_array_nothing_else_holds():
    entries = [(operator.add, 0, 1, -1, 4),
               (_where, 3, 2, 4, 5, "putmask_in_place", OP)]
    gen = sequence_codegen.generated_sequence(tuple(plan._sequence_kind(e) for e in entries),
                                              plan._SEQUENCE_ENV)
    f = _frame([np.ones(4, np.float32), np.ones(4, np.float32), np.zeros(4, np.float32),
                np.array([True, False, True, False])])
    gen(None, f)
    assert f[4] is None and f[5].tolist() == [0, 2, 0, 2]
    # held elsewhere too: a new array, the held one untouched
    entries = [(_where, 3, 2, 1, 5, "putmask_in_place", OP)]
    gen = sequence_codegen.generated_sequence(tuple(plan._sequence_kind(e) for e in entries),
                                              plan._SEQUENCE_ENV)
    held = np.ones(4, np.float32)
    f = _frame([np.ones(4, np.float32), held, np.zeros(4, np.float32),
                np.array([True, False, True, False])])
    f[1] = held
    gen(None, f)
    assert held.tolist() == [1, 1, 1, 1] and f[5].tolist() == [0, 1, 0, 1]


def test_an_error_names_the_step_that_raised_it():
    def bad(ctx, op, x):
        raise ValueError("no")
    entries = [(operator.add, 0, 1, -1, 4), (_kernel2, 4, 0, -2, 5, "kernel", OP),
               (_where, 3, 0, 1, 6, "select", OP), (bad, 5, -1, -2, 7, "kernel", OP),
               (operator.add, 7, 1, -1, 8)]
    runner = plan._sequence_runner(entries)
    f = _frame([np.ones(2, np.float32), np.ones(2, np.float32), np.ones(2, np.float32),
                np.array([True, False])])
    for _ in range(3):        # (the list runner, then the generated one)
        with pytest.raises(ValueError) as info:
            runner(None, f)
        assert info.value._stablehlo_sequence_index == 3
    assert GENERATED and GENERATED[-1] is not None


def test_slots_must_be_ints():
    kinds = ((0, operator.add, "0]; import os; f[1", 1, -1, 2, None),)
    assert sequence_codegen.generated_sequence(kinds, plan._SEQUENCE_ENV) is None


def test_long_sequences_are_left_to_the_list_runner(monkeypatch):
    monkeypatch.setattr(sequence_codegen, "MAX_STEPS", 3)
    kinds = tuple(plan._sequence_kind((operator.add, 0, 1, -1, 4 + i)) for i in range(4))
    assert sequence_codegen.generated_sequence(kinds, plan._SEQUENCE_ENV) is None
    assert sequence_codegen.generated_sequence(kinds[:3], plan._SEQUENCE_ENV) is not None
