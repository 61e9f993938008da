"""Integer matrix products through float BLAS (`linalg.acc_matmul`): the same integers as
numpy's integer loop wherever the bound admits the float path, the integer loop elsewhere;
and the kernels that use it (dot_general, convolution) give the integer loop's results."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter import linalg
from stablehlo_ref.interpreter.linalg import acc_matmul
from stablehlo_ref.interpreter import run
from stablehlo_ref.text import parse


def _operands(rng, dtype, shape_a, shape_b, lo, hi):
    return (rng.integers(lo, hi, shape_a, endpoint=True).astype(dtype),
            rng.integers(lo, hi, shape_b, endpoint=True).astype(dtype))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.sampled_from([np.int64, np.uint64]),
       st.sampled_from([0, 3, 11, 12, 13, 25, 26, 27, 40]), st.integers(1, 3),
       st.integers(1, 300), st.integers(1, 40), st.integers(1, 40))
def test_acc_matmul_equals_the_integer_loop(seed, dtype, bits, batch, k, m, n):
    # magnitudes of about 2^bits on both sides: the bound k * |a| * |b| falls below 2^24
    # (f32), between 2^24 and 2^53 (f64) or above 2^53 (the integer loop), by the draw
    rng = np.random.default_rng(seed)
    hi = 2 ** bits
    lo = 0 if dtype is np.uint64 else -hi
    a, b = _operands(rng, dtype, (batch, m, k), (batch, k, n), lo, hi)
    # the extremes of the range present, so that the bound is reached where it is close
    a.flat[0], b.flat[-1] = hi, hi
    want = np.matmul(a, b)
    got = acc_matmul(a, b)
    assert got.dtype == want.dtype
    assert np.array_equal(got, want)


def test_acc_matmul_takes_each_path():
    """Which path each bound takes (the paths are observed through the float dtype numpy's
    matmul receives), and vectors on either side."""
    seen = []
    real = np.matmul

    def spy(x, y):
        seen.append(x.dtype)
        return real(x, y)
    rng = np.random.default_rng(1)
    k = 256
    cases = [(127, np.float32),            # 256 * 127 * 127 < 2^24
             (300, np.float64),            # 256 * 300^2 = 2.3e7 > 2^24
             (2 ** 23, None)]              # 256 * 2^46 > 2^53: the integer loop
    for mag, want in cases:
        a, b = _operands(rng, np.int64, (64, k), (k, 64), -mag, mag)
        a[0, 0] = b[0, 0] = mag
        seen.clear()
        linalg.np.matmul = spy
        try:
            got = acc_matmul(a, b)
        finally:
            linalg.np.matmul = real
        assert seen == [np.dtype(want) if want else np.dtype(np.int64)]
        assert np.array_equal(got, real(a, b))
    # vectors on either side: a (k,) x (k, n) and (m, k) x (k,)
    a, b = _operands(rng, np.int64, (k,), (k, 200), -9, 9)
    assert np.array_equal(acc_matmul(a, b), real(a, b))
    a, b = _operands(rng, np.int64, (200, k), (k,), -9, 9)
    assert np.array_equal(acc_matmul(a, b), real(a, b))


def test_acc_matmul_leaves_floats_and_small_products_alone():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((8, 8))
    assert np.array_equal(acc_matmul(a, a), np.matmul(a, a))
    ai = rng.integers(-5, 5, (4, 4)).astype(np.int64)          # below _INT_BLAS_MIN
    assert np.array_equal(acc_matmul(ai, ai), np.matmul(ai, ai))
    empty = np.zeros((0, 4), np.int64)
    assert acc_matmul(empty, ai).shape == (0, 4)


_INT8_DOT = """
func.func @main(%a: tensor<96x256xi8>, %b: tensor<256x80xi8>) -> (tensor<96x80xi32>, tensor<96x80xi8>) {
  %0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<96x256xi8>, tensor<256x80xi8>) -> tensor<96x80xi32>
  %1 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<96x256xi8>, tensor<256x80xi8>) -> tensor<96x80xi8>
  return %0, %1 : tensor<96x80xi32>, tensor<96x80xi8>
}
"""


@pytest.mark.parametrize("runs", [1, 20])
def test_int8_dot_general_wraps_as_the_integer_loop(runs):
    """i8 x i8 -> i32 (quantized matmuls) and -> i8 (wrapping): the results of an int64
    product wrapped to the result type, on the first run and once the block is compiled."""
    rng = np.random.default_rng(3)
    a = rng.integers(-128, 127, (96, 256), endpoint=True).astype(np.int8)
    b = rng.integers(-128, 127, (256, 80), endpoint=True).astype(np.int8)
    a[0, :] = -128
    b[:, 0] = -128
    exact = a.astype(np.int64) @ b.astype(np.int64)
    m = parse(_INT8_DOT)
    for _ in range(runs):
        r32, r8 = run(m, a, b)
    assert r32.dtype == np.int32 and np.array_equal(r32, exact.astype(np.int32))
    assert r8.dtype == np.int8 and np.array_equal(r8, exact.astype(np.int8))


_INT_CONV = """
func.func @main(%x: tensor<2x12x12x16xi32>, %w: tensor<3x3x16x8xi32>) -> tensor<2x12x12x8xi32> {
  %0 = stablehlo.convolution(%x, %w) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x12x12x16xi32>, tensor<3x3x16x8xi32>) -> tensor<2x12x12x8xi32>
  return %0 : tensor<2x12x12x8xi32>
}
"""


@pytest.mark.parametrize("mag", [100, 2 ** 20, 2 ** 31 - 1])
def test_integer_convolution_equals_direct_sums(mag):
    """An i32 convolution (through the window matmul) against the sums written out, with
    magnitudes for the f32 path, the f64 path and the integer loop (which wraps to i32)."""
    rng = np.random.default_rng(4)
    x = rng.integers(-mag, mag, (2, 12, 12, 16), endpoint=True).astype(np.int32)
    w = rng.integers(-mag, mag, (3, 3, 16, 8), endpoint=True).astype(np.int32)
    xp = np.pad(x.astype(np.int64), [(0, 0), (1, 1), (1, 1), (0, 0)])
    want = np.zeros((2, 12, 12, 8), np.int64)
    for i in range(3):
        for j in range(3):
            want += np.einsum("nhwc,co->nhwo", xp[:, i:i + 12, j:j + 12, :], w[i, j].astype(np.int64))
    (got,) = run(parse(_INT_CONV), x, w)
    assert got.dtype == np.int32 and np.array_equal(got, want.astype(np.int32))
