"""The oracles of conformance/generated/extra.py (rng_bit_generator's Threefry/Philox, LAPACK
getrf matrices, ragged_dot, scan) and the `shape`/`range` property rules."""
from fractions import Fraction

import numpy as np
import pytest

from stablehlo_ref.conformance.cases import Rule
from stablehlo_ref.conformance.compare import compare_output
from stablehlo_ref.conformance.generated import extra, generate_cases


# Known-answer vectors of Random123 (kat_vectors): threefry2x32_20 and philox4x32_10
@pytest.mark.parametrize("key, ctr, want", [
    ((0, 0), (0, 0), (0x6B200159, 0x99BA4EFE)),
    ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
    ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
])
def test_threefry2x32_known_answers(key, ctr, want):
    assert extra.threefry2x32_int(key, ctr) == want


@pytest.mark.parametrize("key, ctr, want", [
    ((0, 0), (0, 0, 0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xA4093822, 0x299F31D0), (0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
])
def test_philox4x32_known_answers(key, ctr, want):
    assert extra.philox4x32_int(key, ctr) == want


def test_threefry_matches_jax_primitive():
    jax = pytest.importorskip("jax")
    random_ext = pytest.importorskip("jax.extend.random")
    k = np.array([0x12345678, 0x9ABCDEF0], np.uint32)
    x = np.arange(10, dtype=np.uint32) * np.uint32(0x01010101)
    y = x[::-1].copy()
    got = random_ext.threefry_2x32((jax.numpy.uint32(k[0]), jax.numpy.uint32(k[1])), jax.numpy.asarray(np.concatenate([x, y])))
    got = np.asarray(got)
    for i in range(10):
        a, b = extra.threefry2x32_int((int(k[0]), int(k[1])), (int(x[i]), int(y[i])))
        assert (int(got[i]), int(got[10 + i])) == (a, b)


def test_xla_layouts_and_state():
    # 64-bit THREE_FRY: one counter per value, the counter advances by the count
    vals, st = extra.threefry_xla([5, 2**64 - 1], (2,), 64)
    w0 = extra.threefry2x32_int((5, 0), (0xFFFFFFFF, 0xFFFFFFFF))
    w1 = extra.threefry2x32_int((5, 0), (0, 0))              # the counter wraps
    assert vals == [w0[0] | w0[1] << 32, w1[0] | w1[1] << 32] and st == [5, 1]
    # 32-bit THREE_FRY on 2x3: the even dimension 0 pairs the two words of each counter
    vals, st = extra.threefry_xla([7, 10], (2, 3), 32)
    words = [extra.threefry2x32_int((7, 0), (10 + j, 0)) for j in range(3)]
    assert vals == [w[0] for w in words] + [w[1] for w in words] and st == [7, 13]
    # PHILOX with a 3-word state: the 128-bit counter carries into the high word
    vals, st = extra.philox_xla([1, 2**64 - 1, 4], (6,), 32)
    b0 = extra.philox4x32_int((1, 0), (0xFFFFFFFF, 0xFFFFFFFF, 4, 0))
    b1 = extra.philox4x32_int((1, 0), (0, 0, 5, 0))
    assert vals == list(b0) + list(b1[:2]) and st == [1, 1, 5]
    # a 2-word state uses the key as the counter's high word
    vals, st = extra.philox_xla([3, 9], (2,), 64)
    b = extra.philox4x32_int((3, 0), (9, 0, 3, 0))
    assert vals == [b[0] | b[1] << 32, b[2] | b[3] << 32] and st == [3, 10]


def _lu_partial_pivoting(A):
    """Doolittle elimination with partial pivoting (largest |re| + |im|) in exact fractions."""
    n = len(A)
    a = [row[:] for row in A]
    piv = []
    for k in range(n):
        mags = [abs(Fraction(a[i][k])) for i in range(k, n)]
        best = max(mags)
        assert mags.count(best) == 1, "the pivot must be unique"
        p = k + mags.index(best)
        piv.append(p + 1)
        a[k], a[p] = a[p], a[k]
        for i in range(k + 1, n):
            f = a[i][k] / a[k][k]
            a[i][k] = f
            for j in range(k + 1, n):
                a[i][j] -= f * a[k][j]
    return a, piv


@pytest.mark.parametrize("n, seed", [(3, 3), (4, 4), (5, 0)])
def test_getrf_matrices_factor_as_claimed(n, seed):
    A, packed, ipiv = extra._getrf_matrix(n, seed)
    lu, piv = _lu_partial_pivoting(A)
    assert lu == packed and piv == ipiv
    assert all(abs(packed[i][j]) < 1 for i in range(n) for j in range(i))


def test_ragged_dot_oracle_by_hand():
    # mode 1: rows 0-1 use rhs group 0, row 2 group 1
    lhs = [1, 2, 3, 4, 5, 6]                  # 3x2
    rhs = [1, 0, 0, 1, 2, 0, 0, 2]            # 2 groups of 2x2: identity, 2*identity
    shape, res = extra.ragged_dot_oracle(1, lhs, rhs, [2, 1], {"lhs": (3, 2), "rhs": (2, 2, 2)})
    assert shape == (3, 2) and res == [1, 2, 3, 4, 10, 12]
    # mode 2: group j sums over its run of the contracting dimension only
    shape, res = extra.ragged_dot_oracle(2, [1, 2, 3], [1, 10, 100], [1, 2], {"lhs": (1, 3), "rhs": (3, 1)})
    assert shape == (2, 1, 1) and res == [1, 320]


def test_split_dim():
    assert extra._split_dim((2, 3)) == 0
    assert extra._split_dim((3, 4)) == 1
    assert extra._split_dim((3, 5)) == 1          # padding 5 -> 6 costs 3, 3 -> 4 costs 5
    assert extra._split_dim((1, 1)) is None


def test_property_rules():
    r = Rule("range", lo=-2.0, hi=3.0)
    exp = np.zeros((3,), np.float32)
    assert compare_output(np.array([-2.0, 0.5, 2.99], np.float32), exp, "f32", r) is None
    assert compare_output(np.array([-2.0, 3.0, 0.0], np.float32), exp, "f32", r)["index"] == [1]
    assert compare_output(np.array([np.nan, 0.0, 0.0], np.float32), exp, "f32", r) is not None
    ri = Rule("range", lo=-5, hi=7)
    assert compare_output(np.array([-5, 6], np.int8), np.zeros(2, np.int8), "i8", ri) is None
    assert compare_output(np.array([-6, 6], np.int8), np.zeros(2, np.int8), "i8", ri) is not None
    s = Rule("shape")
    assert compare_output(np.array([1, 2], np.uint32), np.zeros(2, np.uint32), "ui32", s) is None
    assert "shape" in compare_output(np.zeros(3, np.uint32), np.zeros(2, np.uint32), "ui32", s)["message"]
    assert r.to_json()["lo"] == -2.0 and "[-2, 3)" in r.describe()


def test_generated_rng_bit_cases_fail_on_a_flipped_bit():
    from stablehlo_ref.conformance import get_backend, run_suite
    cases = [c for c in generate_cases(op="rng_bit_generator") if c.element_type == "ui32" and "default" not in c.id]
    assert {c.variant.split("_")[0] for c in cases} == {"three", "philox"}
    bad = cases[0]
    bad.expected[1] = bad.expected[1].copy()
    bad.expected[1].flat[0] ^= np.uint32(1)
    with get_backend("reference") as b:
        rep = run_suite(b, cases)
    assert rep.counts()["pass"] == len(cases) - 1


def test_custom_call_unknown_target_is_not_implemented():
    import stablehlo_ref
    from stablehlo_ref.errors import NotImplementedOpError
    src = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = stablehlo.custom_call @no_such_target(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}"""
    with pytest.raises(NotImplementedOpError, match="no_such_target"):
        stablehlo_ref.run(stablehlo_ref.parse(src), np.zeros(2, np.float32))


@pytest.mark.parametrize("z", extra.ASIN_ACOS_POINTS)
def test_asin_acos_kernel_oracle_gives_asin(z):
    import mpmath
    re_w, im_w = extra.asin_acos_kernel_oracle(z)
    with mpmath.workprec(200):
        want = mpmath.asin(mpmath.mpc(z.real, z.imag))
        got_re = mpmath.atan2(z.real, re_w)
        got_im = mpmath.sign(z.imag) * im_w
        assert abs(got_re - want.real) < mpmath.mpf(2) ** -150
        assert abs(got_im - want.imag) < mpmath.mpf(2) ** -150
        acos = mpmath.acos(mpmath.mpc(z.real, z.imag))
        assert abs(mpmath.atan2(re_w, z.real) - acos.real) < mpmath.mpf(2) ** -150


def test_imag_of_f8e8m0fnu_has_no_semantics():
    # the spec's imag of a real operand is constant(0, element_type(result)); f8E8M0FNU has no
    # zero, so the interpreter refuses the program rather than return some other value
    import ml_dtypes
    import stablehlo_ref
    from stablehlo_ref.errors import NotImplementedOpError
    src = """func.func @main(%x: tensor<2xf8E8M0FNU>) -> tensor<2xf8E8M0FNU> {
  %0 = stablehlo.imag %x : tensor<2xf8E8M0FNU>
  return %0 : tensor<2xf8E8M0FNU>
}"""
    with pytest.raises(NotImplementedOpError, match="no semantics: f8E8M0FNU has no zero"):
        stablehlo_ref.run(stablehlo_ref.parse(src), np.ones(2, ml_dtypes.float8_e8m0fnu))


def test_imag_of_real_operand_is_positive_zero():
    import stablehlo_ref
    src = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.imag %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}"""
    out = np.asarray(stablehlo_ref.run(stablehlo_ref.parse(src), np.array([np.nan, -1.0, -0.0], np.float32))[0])
    assert out.tolist() == [0.0, 0.0, 0.0] and not np.signbit(out).any()


def test_top_k_complex_is_lexicographic_and_stable():
    # chlo.top_k legalizes to a stable sort by compare GT, lexicographic on (real, imag) for complex
    import stablehlo_ref
    src = """func.func @main(%x: tensor<5xcomplex<f32>>) -> (tensor<3xcomplex<f32>>, tensor<3xi32>) {
  %0:2 = chlo.top_k(%x, k = 3) : tensor<5xcomplex<f32>> -> (tensor<3xcomplex<f32>>, tensor<3xi32>)
  return %0#0, %0#1 : tensor<3xcomplex<f32>>, tensor<3xi32>
}"""
    x = np.array([1 + 2j, 2 - 1j, 1 + 3j, 2 - 1j, -5 + 9j], np.complex64)
    v, i = stablehlo_ref.run(stablehlo_ref.parse(src), x)
    assert np.asarray(i).tolist() == [1, 3, 2] and np.asarray(v).tolist() == [2 - 1j, 2 - 1j, 1 + 3j]


def test_uniform_quantize_with_f8e8m0fnu_expressed_type_has_no_semantics():
    # the zero point and q - zero_point live in the expressed type, which here has no zero and
    # no negative values: refused rather than computed through unrepresentable steps
    import ml_dtypes
    import stablehlo_ref
    from stablehlo_ref.errors import NotImplementedOpError
    q = "tensor<3x!quant.uniform<i8:f8E8M0FNU, 0.5:1>>"
    src = f"""func.func @main(%x: tensor<3xf8E8M0FNU>) -> tensor<3xf8E8M0FNU> {{
  %q = stablehlo.uniform_quantize %x : (tensor<3xf8E8M0FNU>) -> {q}
  %d = stablehlo.uniform_dequantize %q : ({q}) -> tensor<3xf8E8M0FNU>
  return %d : tensor<3xf8E8M0FNU>
}}"""
    with pytest.raises(NotImplementedOpError, match="no semantics: .*f8E8M0FNU has neither zero"):
        stablehlo_ref.run(stablehlo_ref.parse(src), np.array([0.5, 1, 4], ml_dtypes.float8_e8m0fnu))
