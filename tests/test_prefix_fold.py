"""Prefix reduce_windows (a cumulative op: window W >= n along one axis, padding (W - 1, 0),
unit strides) whose body is not one primitive op, as jax's cumlogsumexp lowers: run as an
inclusive scan of log2(n) steps (`windows._prefix_fold`) where body(init, init) is init bit
for bit, else by the tree reduction of each window. Checked against values every order of
reduction gives (exact integer bodies), the window's order (a body that keeps its second
operand), numpy's accumulate in f64 for logaddexp, and a long prefix that the tree reduction
could not hold (n x W elements)."""
import numpy as np
import pytest

from stablehlo_ref.interpreter import run
from stablehlo_ref.text import parse


def _program(shape, axis, et, body, init, n_window=None):
    rank = len(shape)
    n = shape[axis]
    w = n_window or n
    dims = ", ".join(str(w if d == axis else 1) for d in range(rank))
    pad = ", ".join(f"[{w - 1}, 0]" if d == axis else "[0, 0]" for d in range(rank))
    t = "x".join(map(str, shape)) + "x" + et
    return f"""func.func @main(%x: tensor<{t}>) -> tensor<{t}> {{
  %init = stablehlo.constant dense<{init}> : tensor<{et}>
  %r = "stablehlo.reduce_window"(%x, %init) <{{padding = dense<[{pad}]> : tensor<{rank}x2xi64>,
      window_dimensions = array<i64: {dims}>}}> ({{
  ^bb0(%a: tensor<{et}>, %b: tensor<{et}>):
{body}
  }}) : (tensor<{t}>, tensor<{et}>) -> tensor<{t}>
  return %r : tensor<{t}>
}}"""


# logaddexp as jax writes it (max + log1p(exp(-|a - b|)), the sum where a - b is NaN)
LOGADDEXP = """    %0 = stablehlo.maximum %a, %b : tensor<f32>
    %1 = stablehlo.subtract %a, %b : tensor<f32>
    %2 = stablehlo.compare NE, %1, %1, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %3 = stablehlo.add %a, %b : tensor<f32>
    %4 = stablehlo.abs %1 : tensor<f32>
    %5 = stablehlo.negate %4 : tensor<f32>
    %6 = stablehlo.exponential %5 : tensor<f32>
    %7 = stablehlo.log_plus_one %6 : tensor<f32>
    %8 = stablehlo.add %0, %7 : tensor<f32>
    %9 = stablehlo.select %2, %3, %8 : tensor<i1>, tensor<f32>
    stablehlo.return %9 : tensor<f32>"""

# max by compare and select (not a primitive op): exact in any order
SELECT_MAX = """    %0 = stablehlo.compare GT, %a, %b, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %1 = stablehlo.select %0, %a, %b : tensor<i1>, tensor<i32>
    stablehlo.return %1 : tensor<i32>"""

# a - (0 - b): wrapping integer addition written with two ops
SUB_ADD = """    %z = stablehlo.constant dense<0> : tensor<i32>
    %0 = stablehlo.subtract %z, %b : tensor<i32>
    %1 = stablehlo.subtract %a, %0 : tensor<i32>
    stablehlo.return %1 : tensor<i32>"""

# a + b + 1: body(init, init) is not init for init 0 (the tree reduction decides); every
# reduction of W elements and the init value combines W times, whatever the order
ADD_ONE = """    %c = stablehlo.constant dense<1> : tensor<i32>
    %0 = stablehlo.add %a, %b : tensor<i32>
    %1 = stablehlo.add %0, %c : tensor<i32>
    stablehlo.return %1 : tensor<i32>"""

# the second operand: each window's last element (its order kept)
SECOND = """    %0 = stablehlo.add %b, %b : tensor<i32>
    %1 = stablehlo.subtract %0, %b : tensor<i32>
    stablehlo.return %1 : tensor<i32>"""


@pytest.mark.parametrize("shape,axis", [((37,), 0), ((5, 40), 1), ((40, 3, 2), 0), ((4, 9, 6), 1)])
def test_exact_bodies_match_accumulate(shape, axis):
    rng = np.random.default_rng(7)
    x = rng.integers(-2 ** 31, 2 ** 31 - 1, shape, dtype=np.int64).astype(np.int32)
    (got,) = run(parse(_program(shape, axis, "i32", SELECT_MAX, -2 ** 31)), x)
    assert np.array_equal(got, np.maximum.accumulate(x, axis=axis))
    (got,) = run(parse(_program(shape, axis, "i32", SUB_ADD, 0)), x)
    assert np.array_equal(got, np.add.accumulate(x, axis=axis, dtype=np.int32))
    (got,) = run(parse(_program(shape, axis, "i32", SECOND, 0)), x)
    assert np.array_equal(got, x)


@pytest.mark.parametrize("extra", [0, 5])
def test_body_not_fixing_init_takes_the_tree(extra):
    n = 11
    x = np.arange(1, n + 1, dtype=np.int32)
    (got,) = run(parse(_program((n,), 0, "i32", ADD_ONE, 0, n + extra)), x)
    w = n + extra
    assert np.array_equal(got, np.cumsum(x) + w)


@pytest.mark.parametrize("shape,axis", [((64, 50), 1), ((50, 64), 0), ((300,), 0)])
def test_logaddexp_close_to_f64(shape, axis):
    x = (np.random.default_rng(3).standard_normal(shape) * 4).astype(np.float32)
    x.reshape(-1)[::17] = -np.inf
    (got,) = run(parse(_program(shape, axis, "f32", LOGADDEXP, "0xFF800000")), x)
    ref = np.logaddexp.accumulate(x.astype(np.float64), axis=axis)
    ulp = np.spacing(np.abs(ref).astype(np.float32)).astype(np.float64)
    finite = np.isfinite(ref)
    assert np.array_equal(np.isfinite(got), finite)
    # an inclusive scan's error grows with log2(n): a few ulp
    assert (np.abs(got[finite] - ref[finite]) / ulp[finite]).max() <= 8


def test_long_prefix_runs_without_the_window_view():
    n = 200_000
    x = np.random.default_rng(5).standard_normal(n).astype(np.float32)
    (got,) = run(parse(_program((n,), 0, "f32", LOGADDEXP, "0xFF800000")), x)
    ref = np.logaddexp.accumulate(x.astype(np.float64))
    assert np.max(np.abs(got - ref) / np.abs(ref)) < 1e-5
