"""Scalar loops run as generated straight-line Python (`interpreter.scalar_codegen`): the
loop-level tests of tests/test_scalar_loops.py again, with every loop generated from its
first iteration (`GENERATE_AFTER = 0`), so that the generated runner is checked against the
general path and op by op bit for bit on the same random bodies; and the runner's own cases
(a loop with a condition, no iteration, the step limit, entries it cannot write)."""
import operator

import numpy as np
import pytest

import stablehlo_ref
from stablehlo_ref.errors import StableHLOError
from stablehlo_ref.interpreter import control, scalar_codegen
from stablehlo_ref.limits import Limits
from stablehlo_ref.text import parse

import test_scalar_loops as base
from loop_helpers import generate_from
from test_scalar_loops import (  # noqa: F401 - collected here again, generated
    test_counted_loop_limits, test_counted_loop_matches_general_path,
    test_fori_shape_and_limits, test_random_f32_bodies_match_the_kernels,
    test_random_sliced_bodies_match_the_kernels, test_sliced_counted_loop_matches_general_path,
    test_sliced_counter_at_its_types_edges, test_unrounded_bounded_unary_in_a_whole_loop,
    test_whole_loop_matches_general_path)


GENERATED = []
FAILED = []


@pytest.fixture(autouse=True)
def generate_at_once(monkeypatch):
    generate_from(monkeypatch, scalar_codegen, "generated_loop", 0, GENERATED, FAILED)
    yield
    assert not FAILED, FAILED


def _generated(src, args, **kw):
    """(results with loops generated, with scalar_codegen off, the general path)."""
    del GENERATED[:]
    fast = stablehlo_ref.run(parse(src), *args, **kw)
    assert GENERATED and all(GENERATED), "the loop was not generated"
    scalar_codegen.ENABLED = False
    try:
        plain = stablehlo_ref.run(parse(src), *args, **kw)
    finally:
        scalar_codegen.ENABLED = True
    old = control.scalar_loop
    control.scalar_loop = lambda ctx, op, args: None
    try:
        general = stablehlo_ref.run(parse(src), *args, **kw)
    finally:
        control.scalar_loop = old
    return fast, plain, general


# a loop with a condition that is not a count (Collatz steps of a scalar): the generated
# runner computes the condition in each iteration and counts iterations for the limit
COLLATZ = """func.func @main(%x0: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %r:2 = stablehlo.while(%x = %x0, %c = %x0) : tensor<i32>, tensor<i32>
   cond {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %ne = stablehlo.compare NE, %x, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %ne : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %three = stablehlo.constant dense<3> : tensor<i32>
    %zero = stablehlo.constant dense<0> : tensor<i32>
    %m = stablehlo.remainder %x, %two : tensor<i32>
    %even = stablehlo.compare EQ, %m, %zero, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %h = stablehlo.divide %x, %two : tensor<i32>
    %t = stablehlo.multiply %x, %three : tensor<i32>
    %t1 = stablehlo.add %t, %one : tensor<i32>
    %n = stablehlo.select %even, %h, %t1 : tensor<i1>, tensor<i32>
    %c2 = stablehlo.add %c, %one : tensor<i32>
    stablehlo.return %n, %c2 : tensor<i32>, tensor<i32>
  }
  return %r#0, %r#1 : tensor<i32>, tensor<i32>
}"""


@pytest.mark.parametrize("x0", [1, 2, 7, 27, 97, 871])
def test_loop_with_a_condition(x0):
    fast, plain, general = _generated(COLLATZ, [np.int32(x0)])
    for a, b, c in zip(fast, plain, general):
        assert base._same(a, b) and base._same(a, c), (x0, a, b, c)
    steps = {1: 0, 2: 1, 7: 16, 27: 111, 97: 118, 871: 178}[x0]
    assert int(fast[1]) == x0 + steps


def test_loop_with_a_condition_stops_at_the_step_limit():
    # 27 takes 111 steps: the limit is met in the generated loop, as in the others
    for runner in (True, False):
        scalar_codegen.ENABLED = runner
        try:
            with pytest.raises(StableHLOError, match="loop iterations"):
                stablehlo_ref.run(parse(COLLATZ), np.int32(27), limits=Limits(max_steps=110))
            out = stablehlo_ref.run(parse(COLLATZ), np.int32(27), limits=Limits(max_steps=111))
        finally:
            scalar_codegen.ENABLED = True
        assert int(out[0]) == 1 and int(out[1]) == 27 + 111


def test_counted_loop_of_no_iterations():
    src = base.COUNTED.format(t="i32", bound=5, ct="SIGNED")
    for i0 in (5, 9):
        fast, plain, general = _generated(src, [np.int32(i0), np.float32(0.5)])
        for a, b, c in zip(fast, plain, general):
            assert base._same(a, b) and base._same(a, c)


def test_generated_source_writes_operators_inline():
    # an add of two np.float32 is the swapped operator (the general kernel's NaN payload),
    # integer adds the operator itself, a select a conditional expression
    del GENERATED[:]
    stablehlo_ref.run(parse(base.COUNTED.format(t="i32", bound=70, ct="SIGNED")),
                      np.int32(0), np.float32(0.5))
    src = [g for g in GENERATED if g][0].source
    assert "for " in src and " if " in src and " else " in src
    assert "f[" in src   # (slots loaded and stored around the loop)


def test_entries_it_cannot_write_leave_the_loop_to_the_list_runner():
    def frame_reader(f, _=None):        # a function of the frame without `parts`
        return f[0]
    body = [(frame_reader, (0,), 0, -2, 1)]
    assert scalar_codegen.generated_loop((operator.lt, 0, 2), True, body, (), (), {}, {}) is None
    ok = [(operator.add, 0, 2, -1, 1)]
    inner = scalar_codegen.generated_loop((operator.lt, 0, 2), True, ok, ((0, 1),), (), {}, {})
    f = [np.int32(3), None, np.int32(4)]
    assert inner(f, range(5), 10, None, None) == 0
    assert f[0] == np.int32(23) and f[0].__class__ is np.int32


# a counted loop whose body is its counter alone: the counter's values are precomputed and
# the generated loop has nothing left to run (found by CI: `for` with an empty block)
COUNTER_ONLY = """func.func @main(%i0: tensor<i32>, %a: tensor<f32>) -> (tensor<i32>, tensor<f32>) {
  %r:2 = stablehlo.while(%i = %i0, %x = %a) : tensor<i32>, tensor<f32>
   cond {
    %c = stablehlo.constant dense<300> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %s = stablehlo.sine %x : tensor<f32>
    stablehlo.return %i2, %x : tensor<i32>, tensor<f32>
  }
  return %r#0, %r#1 : tensor<i32>, tensor<f32>
}"""


@pytest.mark.parametrize("i0", [0, 250, 300])
def test_loop_of_its_counter_alone(i0):
    fast, plain, general = _generated(COUNTER_ONLY, [np.int32(i0), np.float32(0.5)])
    for a, b, c in zip(fast, plain, general):
        assert base._same(a, b) and base._same(a, c)
    assert int(fast[0]) == 300
