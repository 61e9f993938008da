"""JAX's floor_mod / floor_divide sequences (truncating remainder / divide with a sign
correction), and sums of converted booleans, run as one numpy op in compiled loop bodies
(`interpreter/jax_idioms.py`): the
bits of the general path (every op through its registered kernel), for every signed integer
type, divisors that are and are not powers of two, rank 0 and arrays, integer extremes; and
the patterns are left alone where they are not exact (divisor 0, negative, not constant)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter import jax_idioms, plan
from stablehlo_ref.text import parse

from loop_helpers import run_both as _run_both

ITERATIONS = 12          # past the compilation and the fused loop's start

# the functions as jax.numpy writes them (`x % d`, `x // d` on integers); {s}: the shape
# prefix ("" or "8x"), {t}: the element type
FUNCS = """
  func.func private @remainder(%arg0: tensor<{s}{t}>, %arg1: tensor<{t}>) -> tensor<{s}{t}> {{
    %0 = stablehlo.convert %arg1 : tensor<{t}>
    %c = stablehlo.constant dense<0> : tensor<{t}>
    %1 = stablehlo.compare EQ, %0, %c, SIGNED : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %c_0 = stablehlo.constant dense<1> : tensor<{t}>
    %2 = stablehlo.select %1, %c_0, %0 : tensor<i1>, tensor<{t}>
    %3 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<{t}>) -> tensor<{s}{t}>
    %4 = stablehlo.remainder %arg0, %3 : tensor<{s}{t}>
    %c_1 = stablehlo.constant dense<0> : tensor<{t}>
    %5 = stablehlo.broadcast_in_dim %c_1, dims = [] : (tensor<{t}>) -> tensor<{s}{t}>
    %6 = stablehlo.compare NE, %4, %5, SIGNED : (tensor<{s}{t}>, tensor<{s}{t}>) -> tensor<{s}i1>
    %8 = stablehlo.compare LT, %4, %5, SIGNED : (tensor<{s}{t}>, tensor<{s}{t}>) -> tensor<{s}i1>
    %9 = stablehlo.compare LT, %2, %c_1, SIGNED : (tensor<{t}>, tensor<{t}>) -> tensor<i1>
    %10 = stablehlo.broadcast_in_dim %9, dims = [] : (tensor<i1>) -> tensor<{s}i1>
    %11 = stablehlo.compare NE, %8, %10, UNSIGNED : (tensor<{s}i1>, tensor<{s}i1>) -> tensor<{s}i1>
    %12 = stablehlo.and %11, %6 : tensor<{s}i1>
    %13 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<{t}>) -> tensor<{s}{t}>
    %14 = stablehlo.add %4, %13 : tensor<{s}{t}>
    %15 = stablehlo.select %12, %14, %4 : tensor<{s}i1>, tensor<{s}{t}>
    return %15 : tensor<{s}{t}>
  }}
  func.func private @floor_divide(%arg0: tensor<{s}{t}>, %arg1: tensor<{t}>) -> tensor<{s}{t}> {{
    %0 = stablehlo.convert %arg1 : tensor<{t}>
    %1 = stablehlo.broadcast_in_dim %0, dims = [] : (tensor<{t}>) -> tensor<{s}{t}>
    %2 = stablehlo.divide %arg0, %1 : tensor<{s}{t}>
    %3 = stablehlo.sign %arg0 : tensor<{s}{t}>
    %4 = stablehlo.sign %0 : tensor<{t}>
    %5 = stablehlo.broadcast_in_dim %4, dims = [] : (tensor<{t}>) -> tensor<{s}{t}>
    %6 = stablehlo.compare NE, %3, %5, SIGNED : (tensor<{s}{t}>, tensor<{s}{t}>) -> tensor<{s}i1>
    %8 = stablehlo.remainder %arg0, %1 : tensor<{s}{t}>
    %c = stablehlo.constant dense<0> : tensor<{t}>
    %9 = stablehlo.broadcast_in_dim %c, dims = [] : (tensor<{t}>) -> tensor<{s}{t}>
    %10 = stablehlo.compare NE, %8, %9, SIGNED : (tensor<{s}{t}>, tensor<{s}{t}>) -> tensor<{s}i1>
    %11 = stablehlo.and %6, %10 : tensor<{s}i1>
    %c_0 = stablehlo.constant dense<1> : tensor<{t}>
    %12 = stablehlo.broadcast_in_dim %c_0, dims = [] : (tensor<{t}>) -> tensor<{s}{t}>
    %13 = stablehlo.subtract %2, %12 : tensor<{s}{t}>
    %14 = stablehlo.select %11, %13, %2 : tensor<{s}i1>, tensor<{s}{t}>
    return %14 : tensor<{s}{t}>
  }}
"""

# a loop that steps x by `step` (wrapping) and keeps x % d and x // d of every iteration
# (summed, wrapping) and of the last; {extra}: more of the body's results (see below)
LOOP = """module {{
  func.func @main(%x0: tensor<{s}{t}>, %step: tensor<{s}{t}>) -> (tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>{extra_t}) {{
    %c0 = stablehlo.constant dense<0> : tensor<i32>
    %z = stablehlo.constant dense<0> : tensor<{s}{t}>
    %r:6 = stablehlo.while(%i = %c0, %x = %x0, %sm = %z, %sq = %z, %m = %z, %q = %z) : tensor<i32>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>
     cond {{
      %n = stablehlo.constant dense<{n}> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    }} do {{
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i2 = stablehlo.add %i, %one : tensor<i32>
      %x2 = stablehlo.add %x, %step : tensor<{s}{t}>
      %d = stablehlo.constant dense<{d}> : tensor<{t}>
      %m2 = func.call @remainder(%x2, %d) : (tensor<{s}{t}>, tensor<{t}>) -> tensor<{s}{t}>
      %q2 = func.call @floor_divide(%x2, %d) : (tensor<{s}{t}>, tensor<{t}>) -> tensor<{s}{t}>
      %sm2 = stablehlo.add %sm, %m2 : tensor<{s}{t}>
      %sq2 = stablehlo.add %sq, %q2 : tensor<{s}{t}>
      stablehlo.return %i2, %x2, %sm2, %sq2, %m2, %q2 : tensor<i32>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>
    }}
    return %r#2, %r#3, %r#4, %r#5{extra} : tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>{extra_t}
  }}
{funcs}
}}"""

SIGNED = ["i8", "i16", "i32", "i64"]


def _src(t, shape, d, n=ITERATIONS):
    s = "".join(f"{k}x" for k in shape)
    return LOOP.format(s=s, t=t, d=d, n=n, extra="", extra_t="", funcs=FUNCS.format(s=s, t=t))


class _Count:
    """Counts the fused steps that `jax_idioms` makes (and so shows the pattern matched)."""

    def __init__(self, monkeypatch):
        self.n = 0
        real = jax_idioms._fused

        def counting(*a, **k):
            self.n += 1
            return real(*a, **k)
        monkeypatch.setattr(jax_idioms, "_fused", counting)


def _ints(t, shape, draw):
    info = np.iinfo(np.dtype(t.replace("i", "int")))
    size = int(np.prod(shape))
    elems = st.one_of(st.integers(int(info.min), int(info.max)),
                      st.sampled_from([int(info.min), int(info.max), int(info.min) + 1,
                                       int(info.max) - 1, 0, 1, -1, 2, -2, 3, -3, 7, -7]))
    vals = draw(st.lists(elems, min_size=size, max_size=size))
    return np.array(vals, dtype=object).astype(np.dtype(t.replace("i", "int"))).reshape(shape)


@pytest.mark.parametrize("t", SIGNED)
@pytest.mark.parametrize("shape", [(), (8,)])
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_floor_mod_and_div_match_the_general_path(t, shape, data):
    """Divisors small and large (the type's maximum, its largest power of two), powers of
    two (a mask and a shift) and not."""
    top = int(np.iinfo(np.dtype(t.replace("i", "int"))).max)
    d = data.draw(st.one_of(st.sampled_from([1, 2, 3, 4, 7, 8, 10, 64, 100, 127, top,
                                             (top + 1) // 2, top // 3]),
                            st.integers(1, top)))
    x = _ints(t, shape, data.draw)
    step = _ints(t, shape, data.draw)
    if not shape:
        x, step = x[()], step[()]
    _run_both(_src(t, shape, d), x, step)


@pytest.mark.parametrize("t", SIGNED)
@pytest.mark.parametrize("shape", [(), (8,)])
def test_the_patterns_are_fused(t, shape, monkeypatch):
    """Both patterns match (two fused steps) for a positive constant divisor, and the result
    is still the general path's (values through the wrap-around)."""
    c = _Count(monkeypatch)
    info = np.iinfo(np.dtype(t.replace("i", "int")))
    x = np.full(shape, info.min + 5, dtype=np.dtype(t.replace("i", "int")))
    step = np.full(shape, info.max // 3, dtype=x.dtype)
    if not shape:
        x, step = x[()], step[()]
    _run_both(_src(t, shape, 6), x, step)
    assert c.n == 2


@pytest.mark.parametrize("d", [0, -1, -2, -3])
def test_divisors_that_are_not_positive_are_left_alone(d, monkeypatch):
    """d < 0 (sign corrections the numpy forms for d > 0 do not make) and a floor_divide by
    0 run the sequence as it is; jnp's remainder by 0 divides by 1 (its own select of the
    divisor), a positive constant: that one is fused."""
    c = _Count(monkeypatch)
    x = np.array([-128, -7, -1, 0, 1, 5, 100, 127], np.int8)
    step = np.array([1, -3, 7, 127, -128, 2, 0, -1], np.int8)
    _run_both(_src("i8", (8,), d), x, step)
    assert c.n == (1 if d == 0 else 0)


def test_a_pattern_value_read_elsewhere_is_kept(monkeypatch):
    """A value inside the patterns that the block also uses (the truncating remainder, which
    the body also adds up: the same op on the same operands, one value) is still computed
    while both patterns are fused; the results are the general path's."""
    c = _Count(monkeypatch)
    s, t = "8x", "i32"
    src = LOOP.format(s=s, t=t, d=3, n=ITERATIONS, extra="", extra_t="",
                      funcs=FUNCS.format(s=s, t=t))
    # return the truncating remainder from the loop body as well: it replaces %sm's update
    src = src.replace("%sm2 = stablehlo.add %sm, %m2",
                      "%tr = stablehlo.remainder %x2, %x2b : tensor<8xi32>\n"
                      "      %sm2 = stablehlo.add %sm, %tr")
    src = src.replace("%d = stablehlo.constant dense<3> : tensor<i32>",
                      "%d = stablehlo.constant dense<3> : tensor<i32>\n"
                      "      %x2b = stablehlo.constant dense<3> : tensor<8xi32>")
    x = np.array([-2**31, -7, -1, 0, 1, 5, 100, 2**31 - 1], np.int32)
    step = np.array([1, -3, 7, 127, -128, 2, 0, -1], np.int32)
    _run_both(src, x, step)
    assert c.n == 2


def test_values_of_another_form_run_the_original_steps():
    """The fused step's fallback: a 0-d array (not a numpy scalar) and an array of another
    dtype run the pattern's original steps, whose result it returns."""
    calls = []

    def original(ctx, f):
        calls.append(1)
        f[0] = "original"
    fn = jax_idioms._fused(False, 4, np.int32, original, 0)
    f = [None]
    assert fn(None, f, np.array(5, np.int32)) == "original"
    assert fn(None, f, np.arange(3, dtype=np.int64)) == "original"
    assert len(calls) == 2
    x = np.array([-9, -4, -1, 0, 3, 2**31 - 1], np.int32)
    assert fn(None, f, x).tolist() == [v % 4 for v in x.tolist()]
    assert fn(None, f, np.int32(-9)) == np.int32(3)
    div = jax_idioms._fused(True, 3, np.int32, original, 0)
    assert div(None, f, x).tolist() == [v // 3 for v in x.tolist()]
    assert div(None, f, np.int32(-7)).__class__ is np.int32


# `c + (v != 1)` in jnp: a sum of an integer and a converted boolean
COUNT_LOOP = """func.func @main(%v0: tensor<{s}{t}>, %k: tensor<{s}{t}>) -> (tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0> : tensor<{s}{t}>
  %r:4 = stablehlo.while(%i = %c0, %v = %v0, %c = %z, %d = %z) : tensor<i32>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %v2 = stablehlo.add %v, %k : tensor<{s}{t}>
    %p = stablehlo.compare {cmp}, %v2, %k, {ctype} : (tensor<{s}{t}>, tensor<{s}{t}>) -> tensor<{s}i1>
    %cv = stablehlo.convert %p : (tensor<{s}i1>) -> tensor<{s}{t}>
    %c2 = stablehlo.add %c, %cv : tensor<{s}{t}>
    %d2 = stablehlo.add %cv, %d : tensor<{s}{t}>
    %d3 = stablehlo.add %d2, %cv : tensor<{s}{t}>
    stablehlo.return %i2, %v2, %c2, %d3 : tensor<i32>, tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>
  }}
  return %r#1, %r#2, %r#3 : tensor<{s}{t}>, tensor<{s}{t}>, tensor<{s}{t}>
}}"""

INT_TYPES = ["i8", "i16", "i32", "i64", "ui8", "ui32", "ui64"]


def _any_ints(t, shape, draw):
    dt = np.dtype(t.replace("ui", "uint").replace("i", "int") if not t.startswith("ui")
                  else t.replace("ui", "uint"))
    info = np.iinfo(dt)
    size = int(np.prod(shape))
    elems = st.one_of(st.integers(int(info.min), int(info.max)),
                      st.sampled_from([int(info.min), int(info.max), 0, 1, 2]))
    vals = draw(st.lists(elems, min_size=size, max_size=size))
    return np.array(vals, dtype=object).astype(dt).reshape(shape)


@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("shape", [(), (5,), (2, 3)])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), cmp=st.sampled_from(["NE", "LT", "GE"]))
def test_sums_of_converted_booleans_match_the_general_path(t, shape, data, cmp):
    """`c + convert(p)`, `convert(p) + d` and a third add of the same convert: the general
    path's bits, through the integer's wrap-around; numpy scalars (rank 0) take the original
    steps."""
    s = "".join(f"{k}x" for k in shape)
    src = COUNT_LOOP.format(s=s, t=t, n=ITERATIONS, cmp=cmp,
                            ctype="UNSIGNED" if t.startswith("ui") else "SIGNED")
    v = _any_ints(t, shape, data.draw)
    k = _any_ints(t, shape, data.draw)
    if not shape:
        v, k = v[()], k[()]
    _run_both(src, v, k)


def test_a_sum_of_a_converted_boolean_is_fused(monkeypatch):
    """Each of the three adds of the converted boolean becomes one step (arrays)."""
    n = [0]
    real = jax_idioms._fused_add_bool

    def counting(*a, **k):
        n[0] += 1
        return real(*a, **k)
    monkeypatch.setattr(jax_idioms, "_fused_add_bool", counting)
    src = COUNT_LOOP.format(s="6x", t="i32", n=ITERATIONS, cmp="NE", ctype="SIGNED")
    v = np.array([2**31 - 1, -2**31, 0, 1, -1, 7], np.int32)
    _run_both(src, v, np.array([1, -1, 3, 2**31 - 1, 5, 0], np.int32))
    assert n[0] == 3


@pytest.mark.parametrize("t", INT_TYPES)
def test_bool_to_int_convert_specializer_matches_the_kernel(t):
    from stablehlo_ref.interpreter.elementwise import convert_specialized
    from stablehlo_ref.interpreter.registry import KERNELS
    src = f"""func.func @main(%p: tensor<4xi1>) -> tensor<4x{t}> {{
      %c = stablehlo.convert %p : (tensor<4xi1>) -> tensor<4x{t}>
      return %c : tensor<4x{t}>
    }}"""
    op = parse(src).functions["main"].regions[0].blocks[0].operations[0]
    assert op.name == "stablehlo.convert"
    fn = convert_specialized(op)
    general = KERNELS["stablehlo.convert"]
    for x in (np.array([True, False, True, False]), np.bool_(True), np.bool_(False),
              np.array(True)):
        got, want = fn(None, op, x), general(None, op, x)
        got = got[0] if isinstance(got, list) else got
        want = want[0] if isinstance(want, list) else want
        assert got.__class__ is want.__class__ and got.dtype == want.dtype
        assert np.asarray(got).tobytes() == np.asarray(want).tobytes()


def test_mask_and_shift_operand_arrays_follow_the_shape():
    """A power-of-two floor_mod / floor_div of small arrays takes an operand array of the
    array's shape (kept for the last shape): arrays of changing shapes, and one too large
    for it (a scalar operand), give numpy's floored `%` and `//`."""
    def original(ctx, f):
        raise AssertionError("not the original steps")
    mod = jax_idioms._fused(False, 8, np.int16, original, 0)
    div = jax_idioms._fused(True, 4, np.int16, original, 0)
    rng = np.random.default_rng(3)
    big = jax_idioms._FULL_OPERAND_ELEMENTS + 1
    for shape in [(6,), (2, 3), (6,), (1,), (big,), (6,), (3, 0)]:
        x = rng.integers(-2**15, 2**15, size=shape).astype(np.int16)
        got_m, got_d = mod(None, [None], x), div(None, [None], x)
        assert got_m.dtype == got_d.dtype == np.int16
        assert got_m.shape == got_d.shape == shape
        assert got_m.tobytes() == (x % np.int16(8)).tobytes()
        assert got_d.tobytes() == (x // np.int16(4)).tobytes()


# `jnp.any(v != k)` / `jnp.all(v == k)` in a loop's condition, k a constant array
ANY_LOOP = """func.func @main(%v0: tensor<{s}{t}>, %step: tensor<{s}{t}>) -> (tensor<{s}{t}>, tensor<i32>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = stablehlo.while(%i = %c0, %v = %v0) : tensor<i32>, tensor<{s}{t}>
   cond {{
    %k = stablehlo.constant dense<{k}> : tensor<{s}{t}>
    %p = stablehlo.compare {cmp}, {lhs}, {rhs}, {ctype} : (tensor<{s}{t}>, tensor<{s}{t}>) -> tensor<{s}i1>
    %init = stablehlo.constant dense<{init}> : tensor<i1>
    %a = stablehlo.reduce(%p init: %init) applies stablehlo.{red} across dimensions = {dims} : (tensor<{s}i1>, tensor<i1>) -> tensor<i1>
    %go = {go}
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %both = stablehlo.and %go, %lt : tensor<i1>
    stablehlo.return %both : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %v2 = stablehlo.add %v, %step : tensor<{s}{t}>
    stablehlo.return %i2, %v2 : tensor<i32>, tensor<{s}{t}>
  }}
  return %r#1, %r#0 : tensor<{s}{t}>, tensor<i32>
}}"""


def _any_src(t, shape, k, red, init=None, swap=False, dims=None, n=16):
    s = "".join(f"{d}x" for d in shape)
    cmp = "NE" if red == "or" else "EQ"
    go = "stablehlo.add %a, %a : tensor<i1>" if red == "or" \
        else "stablehlo.not %a : tensor<i1>"
    if init is None:
        init = "false" if red == "or" else "true"
    lhs, rhs = ("%k", "%v") if swap else ("%v", "%k")
    if dims is None:
        dims = list(range(len(shape)))
    return ANY_LOOP.format(s=s, t=t, k=np.asarray(k).tolist(), cmp=cmp, lhs=lhs, rhs=rhs,
                           ctype="UNSIGNED" if t.startswith("ui") else "SIGNED", init=init,
                           red=red, dims=dims, go=go, n=n)


@pytest.mark.parametrize("t", INT_TYPES)
@pytest.mark.parametrize("shape", [(5,), (2, 3)])
@pytest.mark.parametrize("red", ["or", "and"])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), stop=st.integers(0, 20), swap=st.booleans(),
       init=st.sampled_from([None, "true", "false"]))
def test_any_not_equal_conditions_match_the_general_path(t, shape, red, data, stop, swap, init):
    """A loop that runs while some element differs from a constant (`or` of NE, or `not`
    of `and` of EQ): the constant reached after `stop` steps (past the compilation or not,
    or never within the limit), either operand order, either init; the general path's
    bits and iteration count."""
    v = _any_ints(t, shape, data.draw)
    step = _any_ints(t, shape, data.draw)
    k = v.copy()
    with np.errstate(over="ignore"):
        for _ in range(stop):
            k = k + step
    _run_both(_any_src(t, shape, k, red, init, swap), v, step)


def test_any_not_equal_is_fused_and_partial_reductions_are_not(monkeypatch):
    n = [0]
    real = jax_idioms._fused_any_ne

    def counting(*a, **k):
        n[0] += 1
        return real(*a, **k)
    monkeypatch.setattr(jax_idioms, "_fused_any_ne", counting)
    v = np.arange(6, dtype=np.int32).reshape(2, 3)
    step = np.array([[1, 0, 2], [0, 1, 1]], np.int32)
    k = v + 9 * step
    got = _run_both(_any_src("i32", (2, 3), k, "or"), v, step)
    assert int(got[1]) == 9 and n[0] == 1
    _run_both(_any_src("i32", (2, 3), k, "and"), v, step)
    assert n[0] == 2
    # a reduction over some of the dimensions only: not fused
    src = _any_src("i32", (2, 3), k, "or", dims=[0, 1]).replace(
        "across dimensions = [0, 1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<i1>",
        "across dimensions = [1] : (tensor<2x3xi1>, tensor<i1>) -> tensor<2xi1>").replace(
        "%go = stablehlo.add %a, %a : tensor<i1>",
        "%f = stablehlo.constant dense<false> : tensor<i1>\n"
        "    %a0 = stablehlo.reduce(%a init: %f) applies stablehlo.or across dimensions = [0]"
        " : (tensor<2xi1>, tensor<i1>) -> tensor<i1>\n"
        "    %go = stablehlo.add %a0, %a0 : tensor<i1>")
    got = _run_both(src, v, step)
    assert int(got[1]) == 9 and n[0] == 2


def test_any_not_equal_fallback_runs_the_original_steps():
    """Values of another form (another dtype or shape, a numpy scalar, an init that is not
    a numpy bool) run the original steps, whose result the fused step returns."""
    calls = []

    def original(ctx, f):
        calls.append(1)
        f[0] = "original"
    k = np.array([1, 2, 3], np.int32)
    fn = jax_idioms._fused_any_ne(k.tobytes(), k.dtype, k.shape, True, 1, original, 0)
    f = [None, np.False_]
    assert fn(None, f, np.array([1, 2, 3], np.int32)) is np.False_
    assert fn(None, f, np.array([1, 2, 4], np.int32)) is np.True_
    assert fn(None, f, np.array([1, 2, 3], np.int32)[::-1].copy()[::-1]) is np.False_
    f[1] = np.True_
    assert fn(None, f, np.array([1, 2, 3], np.int32)) is np.True_
    assert not calls
    for x, init in ((np.array([1, 2, 3], np.int64), np.False_),
                    (np.array([1, 2, 3, 4], np.int32), np.False_),
                    (np.int32(1), np.False_),
                    (np.array([1, 2, 3], np.int32), np.array(False))):
        f[1] = init
        assert fn(None, f, x) == "original"
    assert len(calls) == 4
    alls = jax_idioms._fused_any_ne(k.tobytes(), k.dtype, k.shape, False, 1, original, 0)
    f[1] = np.True_
    assert alls(None, f, k.copy()) is np.True_
    assert alls(None, f, np.array([1, 2, 0], np.int32)) is np.False_
