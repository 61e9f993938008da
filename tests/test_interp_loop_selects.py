"""Selects of small arrays in compiled loop bodies whose predicate is all false or all true
(`plan._array_select`, `plan._mixed_sequence_runner`): the operand they pick is the result
itself, no copy; each gives the bits of the general path (every op through its registered
kernel), also where that array is then updated in place or returned twice. And abs of f32/f64
arrays (`elementwise.abs_specialized`) against the general kernel."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.interpreter import plan
from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
from stablehlo_ref.ir.types import element_type
from stablehlo_ref.text import parse

from loop_helpers import run_both, values

ITERATIONS = 9           # past the compilation and the fused loop's start
TYPES = ["f16", "f32", "f64", "i8", "i32", "ui32", "i64"]


def _ctype(t):
    return "FLOAT" if t.startswith("f") else ("UNSIGNED" if t.startswith("ui") else "SIGNED")


# %m is a mask (an argument: all false, all true or mixed), %k a per-iteration mask that is
# all true in even iterations and all false in odd ones; the selects' results are returned
# twice (%s1), updated in place (%u, of %s2, whose picked operand %v is also returned), read
# by an in-place select (%s4 of %s3) and made of new arrays (%a, %b)
SELECT_LOOP = """func.func @main(%v0: tensor<8x{t}>, %w0: tensor<8x{t}>, %m: tensor<8xi1>, %x: tensor<1x{t}>) -> (tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:6 = stablehlo.while(%i = %c0, %v = %v0, %w = %w0, %y = %v0, %z = %w0, %q = %w0) : tensor<i32>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %two = stablehlo.constant dense<2> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %par = stablehlo.remainder %i, %two : tensor<i32>
    %pv = stablehlo.broadcast_in_dim %par, dims = [] : (tensor<i32>) -> tensor<8xi32>
    %zv = stablehlo.constant dense<0> : tensor<8xi32>
    %k = stablehlo.compare EQ, %pv, %zv, SIGNED : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi1>
    %a = stablehlo.add %v, %w : tensor<8x{t}>
    %b = stablehlo.subtract %v, %w : tensor<8x{t}>
    %s1 = stablehlo.select %m, %a, %b : tensor<8xi1>, tensor<8x{t}>
    %s2 = stablehlo.select %k, %v, %w : tensor<8xi1>, tensor<8x{t}>
    %u = stablehlo.dynamic_update_slice %s2, %x, %i : (tensor<8x{t}>, tensor<1x{t}>, tensor<i32>) -> tensor<8x{t}>
    %d = stablehlo.multiply %a, %w : tensor<8x{t}>
    %s3 = stablehlo.select %k, %b, %d : tensor<8xi1>, tensor<8x{t}>
    %s4 = stablehlo.select %m, %a, %s3 : tensor<8xi1>, tensor<8x{t}>
    %s5 = stablehlo.select %m, %z, %y : tensor<8xi1>, tensor<8x{t}>
    stablehlo.return %i2, %v, %u, %s1, %s1, %s4 : tensor<i32>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>
  }}
  return %r#1, %r#2, %r#3, %r#4, %r#5 : tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>, tensor<8x{t}>
}}"""

MASKS = [np.zeros(8, bool), np.ones(8, bool), np.array([1, 0, 0, 1, 1, 0, 1, 0], bool)]


@pytest.mark.parametrize("t", TYPES)
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.sampled_from([1, 2, ITERATIONS]), mask=st.sampled_from([0, 1, 2]))
def test_uniform_selects_match_the_general_path(t, data, n, mask):
    v = values(t, (8,), data.draw)
    w = values(t, (8,), data.draw)
    x = values(t, (1,), data.draw)
    run_both(SELECT_LOOP.format(t=t, n=n), v, w, MASKS[mask], x)


def test_uniform_predicates_are_counted_in_the_loop(monkeypatch):
    """The compiled body's selects count their predicates' true elements (once per
    predicate in a row of selects), and see all-false, all-true and mixed ones."""
    seen = []
    count = plan._count_true

    def counting(p):
        k = count(p)
        seen.append(0 if k == 0 else (2 if k == p.size else 1))
        return k
    monkeypatch.setattr(plan, "_count_true", counting)
    v = np.linspace(-2, 2, 8).astype(np.float32)
    w = np.float32(0.5) - v[::-1]
    for mask in MASKS:
        run_both(SELECT_LOOP.format(t="f32", n=ITERATIONS), v, w, mask, v[:1])
    assert set(seen) == {0, 1, 2}


def test_uniform_selects_pick_the_operand_and_mixed_ones_copy():
    """`_array_select`'s small-array form: an all-false or all-true predicate gives that
    operand itself, a mixed one a new array of the kernel's values."""
    m = parse("""func.func @main(%p: tensor<8xi1>, %a: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<8xf32> {
  %s = stablehlo.select %p, %a, %b : tensor<8xi1>, tensor<8xf32>
  return %s : tensor<8xf32>
}""")
    op = next(o for o in m.walk() if o.name == "stablehlo.select")
    a = np.arange(8, dtype=np.float32)
    b = -a
    sel = plan._array_select(op)
    assert sel(MASKS[0], a, b) is b
    assert sel(MASKS[1], a, b) is a
    r = sel(MASKS[2], a, b)
    assert r is not a and r is not b
    assert r.tobytes() == np.where(MASKS[2], a, b).tobytes()


ABS_LOOP = """func.func @main(%v0: tensor<{shape}x{t}>) -> (tensor<{shape}x{t}>, tensor<{shape}x{t}>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %v = %v0, %s = %v0) : tensor<i32>, tensor<{shape}x{t}>, tensor<{shape}x{t}>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %a = stablehlo.abs %v : tensor<{shape}x{t}>
    %b = stablehlo.negate %a : tensor<{shape}x{t}>
    %c = stablehlo.add %s, %a : tensor<{shape}x{t}>
    stablehlo.return %i2, %b, %c : tensor<i32>, tensor<{shape}x{t}>, tensor<{shape}x{t}>
  }}
  return %r#1, %r#2 : tensor<{shape}x{t}>, tensor<{shape}x{t}>
}}"""


@pytest.mark.parametrize("t", ["f16", "f32", "f64", "i32"])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.sampled_from([1, ITERATIONS]))
def test_abs_in_loops_matches_the_general_path(t, data, n):
    v = values(t, (6,), data.draw)
    run_both(ABS_LOOP.format(t=t, n=n, shape="6"), v)


@pytest.mark.parametrize("t", ["f32", "f64"])
@settings(max_examples=25, deadline=None)
@given(data=st.data(), shape=st.sampled_from([(), (1,), (5,), (2, 3)]))
def test_abs_specialized_is_the_general_kernel(t, data, shape):
    ty = "tensor<" + "".join(f"{d}x" for d in shape) + t + ">"
    src = f"""func.func @main(%v: {ty}) -> {ty} {{
  %a = stablehlo.abs %v : {ty}
  return %a : {ty}
}}"""
    m = parse(src)
    op = next(o for o in m.walk() if o.name == "stablehlo.abs")
    fn = SPECIALIZERS["stablehlo.abs"](op)
    assert fn is not None
    x = values(t, shape, data.draw)
    with np.errstate(over="ignore"):
        x16 = np.asarray(x).astype(np.float16)
    for arg in (x, x16):
        want = KERNELS["stablehlo.abs"](None, op, arg)
        got = fn(None, op, arg)
        assert got.__class__ is want.__class__
        assert np.asarray(got).dtype == np.asarray(want).dtype
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()
    assert element_type(t).dtype == np.asarray(fn(None, op, x)).dtype


@settings(max_examples=200, deadline=None)
@given(data=st.data(), rank=st.integers(0, 4))
def test_window_maker_is_window(data, rank):
    """`plan._window_maker` makes the windows `plan._window` makes (known and frame starts,
    clamped; slices or, with unit flags, indices), for one, several or no frame starts."""
    starts, frame = [], []
    for k in range(rank):
        n = data.draw(st.integers(1, 5))
        hi = data.draw(st.integers(0, 6))
        if data.draw(st.booleans()):
            starts.append((k, data.draw(st.integers(0, hi)), n, hi))
        else:
            starts.append((k, plan._NOTHING, n, hi))
        frame.append(np.int32(data.draw(st.integers(-3, 10))))
    starts = tuple(starts)
    unit = tuple(data.draw(st.booleans()) for _ in range(rank)) if data.draw(st.booleans()) \
        else None
    assert plan._window_maker(starts, unit)(frame) == plan._window(frame, starts, unit)


# kernels of one or two operands that are not elementwise (dot_general, a reduce by a
# recognized body, transpose, a reduce by a body the kernel runs) between Python-operator
# steps: one merged sequence (`call` entries), with the errors of a kernel in it located at
# its op
KERNEL_LOOP = """func.func @main(%h0: tensor<4x{t}>, %w: tensor<4x4x{t}>) -> (tensor<4x{t}>, tensor<{t}>, tensor<4x4x{t}>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<{zero}> : tensor<{t}>
  %r:5 = stablehlo.while(%i = %c0, %h = %h0, %s = %z, %m = %w, %k = %c0) : tensor<i32>, tensor<4x{t}>, tensor<{t}>, tensor<4x4x{t}>, tensor<i32>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %d = stablehlo.dot_general %h, %m, contracting_dims = [0] x [0] : (tensor<4x{t}>, tensor<4x4x{t}>) -> tensor<4x{t}>
    %e = stablehlo.add %d, %h : tensor<4x{t}>
    %q = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [0] : (tensor<4x{t}>, tensor<{t}>) -> tensor<{t}>
    %s2 = stablehlo.add %s, %q : tensor<{t}>
    %mt = stablehlo.transpose %m, dims = [1, 0] : (tensor<4x4x{t}>) -> tensor<4x4x{t}>
    %mx = stablehlo.reduce(%e init: %z) across dimensions = [0] : (tensor<4x{t}>, tensor<{t}>) -> tensor<{t}>
     reducer(%a: tensor<{t}>, %b: tensor<{t}>) {{
      %x = stablehlo.maximum %a, %b : tensor<{t}>
      %y = stablehlo.minimum %x, %a : tensor<{t}>
      stablehlo.return %y : tensor<{t}>
    }}
    %k2 = stablehlo.custom_call @CHECK(%i2) : (tensor<i32>) -> tensor<i32>
    %s3 = stablehlo.add %s2, %mx : tensor<{t}>
    stablehlo.return %i2, %e, %s3, %mt, %k2 : tensor<i32>, tensor<4x{t}>, tensor<{t}>, tensor<4x4x{t}>, tensor<i32>
  }}
  return %r#1, %r#2, %r#3 : tensor<4x{t}>, tensor<{t}>, tensor<4x4x{t}>
}}"""


def _kernel_loop_handler(fail_at=None):
    seen = []

    def handler(target, op, args):
        seen.append(int(args[0]))
        if len(seen) == fail_at:
            raise ValueError("bad k")
        return [args[0]]
    return handler, seen


@pytest.mark.parametrize("t", ["f32", "f64", "i32"])
@pytest.mark.parametrize("n", [1, 3, ITERATIONS, 20])
def test_kernels_in_sequences_match_the_general_path(t, n):
    from stablehlo_ref.interpreter.evaluator import Interpreter
    dt = element_type(t).dtype
    h = ((np.arange(4) - 1.5) / 3).astype(dt) if t != "i32" else np.arange(4, dtype=dt) - 2
    w = (np.arange(16).reshape(4, 4) % 5 - 2).astype(element_type(t).dtype)
    src = KERNEL_LOOP.format(t=t, n=n, zero="0" if t == "i32" else "0.0")
    handler, _ = _kernel_loop_handler()
    compiled = Interpreter(parse(src), custom_call_handler=handler).call("main", [h, w])
    old = plan._MAX_COMPILED_STEPS
    plan._MAX_COMPILED_STEPS = -1
    try:
        stepwise = Interpreter(parse(src), custom_call_handler=handler).call("main", [h, w])
    finally:
        plan._MAX_COMPILED_STEPS = old
    for a, b in zip(compiled, stepwise):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_kernels_join_sequences_and_errors_are_located(monkeypatch):
    from stablehlo_ref.errors import StableHLOError
    from stablehlo_ref.interpreter.evaluator import Interpreter
    kinds = []
    orig = plan._mixed_sequence_runner

    def spy(seq):
        kinds.extend(e[5] for e in seq if len(e) > 5)
        return orig(seq)
    monkeypatch.setattr(plan, "_mixed_sequence_runner", spy)
    h = np.linspace(-1, 1, 4).astype(np.float32)
    w = np.eye(4, dtype=np.float32)
    handler, seen = _kernel_loop_handler(fail_at=12)     # in the fused part of the loop
    with pytest.raises(StableHLOError) as e:
        Interpreter(parse(KERNEL_LOOP.format(t="f32", n=20, zero="0.0")),
                    custom_call_handler=handler).call("main", [h, w])
    assert "bad k" in str(e.value) and len(seen) == 12
    assert str(e.value.location).endswith(":23:11")     # the custom_call
    assert kinds.count("call") >= 3
