"""The oracles of the generated suite's windowed, contracting and linear-algebra cases
(conformance/generated/windows.py, linalg.py) against hand-computed results (upstream's
interpret tests, worked by hand) and, where a second oracle exists, against numpy."""
from __future__ import annotations

import cmath

import numpy as np
import pytest

from stablehlo_ref.conformance.generated import linalg, reductions, windows
from stablehlo_ref.conformance.generated.linalg import conv_oracle, dft, dft_nd
from stablehlo_ref.conformance.generated.windows import select_and_scatter_oracle, window_positions

# the generators of one op, full suite (generate_cases(op=...) would build every module's cases)
GEN = {"reduce_window": windows.reduce_window_cases, "scatter": windows.scatter_cases,
       "fft": linalg.fft_cases, "cholesky": linalg.cholesky_cases,
       "triangular_solve": linalg.triangular_solve_cases, "reduce": reductions.reduce_cases}


def generate_cases(op, full=True):
    return GEN[op](True, None)


def test_window_positions_by_hand():
    # rank 1, 5 elements, window 3, stride 2, padding 1 on each side: padded [p 0 1 2 3 4 p]
    rshape, cells = window_positions((5,), (3,), (2,), [(1, 1)], (1,), (1,))
    assert rshape == (3,)
    assert cells[(0,)] == [None, (0,), (1,)]
    assert cells[(1,)] == [(1,), (2,), (3,)]
    assert cells[(2,)] == [(3,), (4,), None]
    # base dilation 2 puts holes between elements: [0 h 1 h 2]; window 2 with dilation 2
    rshape, cells = window_positions((3,), (2,), (1,), [(0, 0)], (2,), (2,))
    assert rshape == (3,)
    assert cells[(0,)] == [(0,), (1,)] and cells[(1,)] == [None, None] and cells[(2,)] == [(1,), (2,)]


def test_reduce_window_case_by_hand():
    c = [c for c in generate_cases(op="reduce_window", full=True) if c.id == "generated/stablehlo.reduce_window/i64/add_w3_rank1_s2"][0]
    x = [int(v) for v in c.inputs[0]]
    assert [int(v) for v in c.expected[0]] == [sum(x[0:3]), sum(x[2:5]), sum(x[4:7])]


def test_select_and_scatter_oracle_upstream_example():
    # stablehlo/tests/interpret/select_and_scatter.mlir: window 3x1, strides 2x1, padding [[0, 1], [0, 0]]
    operand = [1, 5, 2, 5, 3, 6, 4, 4]
    source = [5, 6, 7, 8]
    got = select_and_scatter_oracle(operand, (4, 2), source, (3, 1), (2, 1), [(0, 1), (0, 0)], 0)
    assert got == [0, 0, 0, 0, 5, 14, 7, 0]


def test_scatter_cases_by_hand():
    c = [c for c in generate_cases(op="scatter", full=True) if c.id == "generated/stablehlo.scatter/i64/rows_add_out_of_bounds_skipped"][0]
    base, idx, upd = c.inputs[0].tolist(), c.inputs[1].ravel().tolist(), c.inputs[2].tolist()
    assert idx == [1, 5, -1]
    want = [row[:] for row in base]
    want[1] = [a + b for a, b in zip(base[1], upd[0])]      # rows 5 and -1 are out of bounds: skipped
    assert c.expected[0].tolist() == want


def test_conv_oracle_upstream_example():
    # stablehlo/tests/interpret/convolution.mlir (si64): lhs 1x4x4x1, rhs ones 3x3x1x1, stride 4, lhs_dilate 2
    lhs = [1, 2, 5, 6, 3, 4, 7, 8, 10, 11, 14, 15, 12, 13, 16, 17]
    shape, out, _ = conv_oracle(lhs, [1] * 9, (1, 4, 4, 1), (3, 3, 1, 1), "b01f", "01io", "b01f",
                             (4, 4), ((0, 0), (0, 0)), (2, 2), (1, 1), (0, 0), 1, 1)
    assert shape == (1, 2, 2, 1) and out == [10, 26, 46, 62]


def test_conv_oracle_against_numpy_correlation():
    rng = np.random.default_rng(5)
    lhs = rng.integers(-3, 4, (2, 5, 4, 3))             # b, 0, 1, f
    rhs = rng.integers(-3, 4, (2, 3, 3, 2))             # 0, 1, i, o
    shape, out, _ = conv_oracle(lhs.ravel().tolist(), rhs.ravel().tolist(), lhs.shape, rhs.shape, "b01f", "01io",
                             "b01f", (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), (0, 0), 1, 1)
    win = np.lib.stride_tricks.sliding_window_view(lhs, (2, 3), axis=(1, 2))    # b, y, x, f, ky, kx
    want = np.einsum("byxfkl,klfo->byxo", win, rhs)
    assert shape == want.shape and out == want.ravel().tolist()
    # feature groups: each half of the output features sees its half of the input features
    lhs_g = rng.integers(-3, 4, (1, 4, 3, 3))          # b, f, 0, 1
    rhs_g = rng.integers(-3, 4, (4, 2, 2, 2))          # o, i, 0, 1
    shape, out, _ = conv_oracle(lhs_g.ravel().tolist(), rhs_g.ravel().tolist(), lhs_g.shape, rhs_g.shape, "bf01",
                             "oi01", "bf01", (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1), (0, 0), 2, 1)
    wg = np.lib.stride_tricks.sliding_window_view(lhs_g, (2, 2), axis=(2, 3))   # b, f, y, x, ky, kx
    want = np.concatenate([np.einsum("bfyxkl,ofkl->boyx", wg[:, 2 * g:2 * g + 2], rhs_g[2 * g:2 * g + 2])
                           for g in range(2)], axis=1)
    assert shape == want.shape and out == want.ravel().tolist()


def test_dft_against_numpy_fft_and_by_hand():
    # stablehlo/tests/interpret/fft.mlir: FFT of [(1, 2), (3, -4)] is [(4, -2), (-2, 6)]
    got = dft([1 + 2j, 3 - 4j])
    assert all(cmath.isclose(a, b, abs_tol=1e-12) for a, b in zip(got, [4 - 2j, -2 + 6j]))
    x = np.random.default_rng(1).normal(size=(3, 5)) + 1j * np.random.default_rng(2).normal(size=(3, 5))
    np.testing.assert_allclose(dft_nd(x.ravel().tolist(), (3, 5), 2), np.fft.fft2(x).ravel(), atol=1e-12)
    np.testing.assert_allclose(dft_nd(x.ravel().tolist(), (3, 5), 1, inverse=True), np.fft.ifft(x).ravel(), atol=1e-12)


def test_fft_cases_agree_with_numpy():
    for c in generate_cases(op="fft", full=True):
        x = c.inputs[0].astype(np.complex128)
        ftype = c.variant.split("_")[0]
        nd = 2 if c.variant.endswith(("2x3", "2x4")) and ftype in ("fft", "rfft") else 1
        axes = tuple(range(-nd, 0))
        want = {"fft": lambda: np.fft.fftn(x, axes=axes), "ifft": lambda: np.fft.ifftn(x, axes=axes),
                "rfft": lambda: np.fft.rfftn(x.real, axes=axes),
                "irfft": lambda: np.fft.irfftn(x, s=c.expected[0].shape[-nd:], axes=axes)}[ftype]()
        rule = c.rules[0]
        got = c.expected[0].astype(want.dtype)
        assert np.all(np.abs(got - want) <= rule.atol), c.id


@pytest.mark.parametrize("op", ["cholesky", "triangular_solve"])
def test_factor_cases_are_consistent(op):
    """The expected factor / solution reproduces the input exactly (Python numbers), and
    numpy's LAPACK result agrees within the case's tolerance."""
    for c in generate_cases(op=op, full=True):
        if c.element_type in ("bf16", "f16"):
            continue
        if op == "cholesky":
            a, mask = c.inputs[0].astype(np.complex128), c.inputs[1]
            r = c.expected[0].astype(np.complex128)
            lower = c.variant.startswith("lower")
            L = r if lower else np.conj(np.swapaxes(r, -1, -2))
            A = L @ np.conj(np.swapaxes(L, -1, -2))
            np.testing.assert_array_equal(np.where(mask, A, 0), np.where(mask, a, 0))
            full_a = np.where(mask, a, 0)
            full_a = full_a + np.conj(np.swapaxes(full_a, -1, -2)) - np.eye(a.shape[-1]) * np.diagonal(full_a, axis1=-2, axis2=-1)[..., None, :]
            want = np.linalg.cholesky(full_a)
            want = want if lower else np.conj(np.swapaxes(want, -1, -2))
            assert np.all(np.abs(want - r) <= c.rules[0].atol), c.id
        else:
            a, b = c.inputs[0].astype(np.complex128), c.inputs[1].astype(np.complex128)
            x = c.expected[0].astype(np.complex128)
            left = c.variant.startswith("left")
            trans = "none" if c.variant.endswith("no_transpose") else c.variant.rsplit("_", 1)[1]
            if "unit" in c.variant:
                np.testing.assert_array_equal(np.diagonal(a), 1)
            op_a = {"transpose": a.T, "adjoint": np.conj(a.T)}.get(trans, a)
            np.testing.assert_array_equal(op_a @ x if left else x @ op_a, b)
            want = np.linalg.solve(op_a, b) if left else np.linalg.solve(op_a.T, b.T).T
            assert np.all(np.abs(want - x) <= c.rules[0].atol), c.id


def test_dot_general_rounded_is_one_rounding_of_the_exact_sum():
    from fractions import Fraction
    c = [c for c in linalg.dot_general_rounded_cases(False, None) if c.element_type == "f32"][0]
    lhs, rhs = c.inputs[0].astype(np.float64), c.inputs[1].astype(np.float64)
    exact = [[sum(Fraction(float(lhs[i, k])) * Fraction(float(rhs[k, j])) for k in range(5)) for j in range(3)]
             for i in range(2)]
    for i in range(2):
        for j in range(3):
            e = c.expected[0][i, j]
            up, down = np.nextafter(e, np.float32(np.inf)), np.nextafter(e, np.float32(-np.inf))
            d = abs(exact[i][j] - Fraction(float(e)))
            # correctly rounded: no neighbour of the expected f32 is nearer the exact sum
            assert d <= abs(exact[i][j] - Fraction(float(up))) and d <= abs(exact[i][j] - Fraction(float(down)))
    assert np.all(np.abs((lhs @ rhs).astype(np.float32) - c.expected[0]) <= c.rules[0].atol)


def test_reduce_bodies_by_hand():
    cases = {c.variant: c for c in generate_cases(op="reduce", full=True) if c.element_type == "i8"}
    x = cases["mul_dim0"].inputs[0].astype(np.int64)
    want = ((x[0] * x[1] * x[2] + 128) % 256) - 128
    assert cases["mul_dim0"].expected[0].tolist() == want.tolist()
    x = cases["and_dim0"].inputs[0]
    assert cases["and_dim0"].expected[0].tolist() == (x[0] & x[1] & x[2]).tolist()
    assert int(cases["and_dim0"].inputs[1]) == -1
    x = cases["or_dim0"].inputs[0]
    assert cases["or_dim0"].expected[0].tolist() == (x[0] | x[1] | x[2]).tolist()


def test_einsum_oracle_against_numpy_einsum():
    from stablehlo_ref.conformance.generated.linalg import EINSUM_CONFIGS, UNARY_EINSUM_CONFIGS, einsum_oracle
    rng = np.random.default_rng(3)
    for cfg in EINSUM_CONFIGS + UNARY_EINSUM_CONFIGS:
        arrays = [rng.integers(-3, 4, s) for s in cfg[1:]]
        shape, out, _ = einsum_oracle(cfg[0], [a.ravel().tolist() for a in arrays], cfg[1:])
        want = np.einsum(cfg[0], *arrays)
        assert shape == want.shape and out == want.ravel().tolist(), cfg[0]
    # by hand: the diagonal of a 2x2 block per trailing index
    shape, out, _ = einsum_oracle("aab->ab", [[1, 2, 3, 4, 5, 6, 7, 8]], [(2, 2, 2)])
    assert shape == (2, 2) and out == [1, 2, 7, 8]
