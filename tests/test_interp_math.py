"""Math kernels: CHLO special functions against long-double / scipy oracles, convolution
against a direct sum, fft/triangular_solve/cholesky against numpy, and hypothesis
properties of elementwise integer wraparound and float rounding."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter import chlo, conv
from stablehlo_ref.interpreter.numerics import from_compute
from stablehlo_ref.ir.types import ELEMENT_TYPES

F64 = ELEMENT_TYPES["f64"]


def _ulps(a, b):
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    return np.abs(a - b) / np.spacing(np.maximum(np.abs(b), np.finfo(np.float64).tiny))


def _erf_reference(x):
    L = np.longdouble
    xl = x.astype(L)
    a = np.abs(xl)
    t = a.copy()
    for k in range(6000, 0, -1):
        t = a + (L(k) / 2) / t
    cf = np.exp(-a * a) / (np.sqrt(np.arccos(L(-1))) * t)
    term = xl.copy()
    tot = xl.copy()
    for n in range(1, 300):
        term = term * (-xl * xl) / n
        tot += term / (2 * n + 1)
    ser = 2 / np.sqrt(np.arccos(L(-1))) * tot
    erf = np.where(a < 1, ser, np.sign(xl) * (1 - cf))
    erfc = np.where(a < 1, 1 - ser, np.where(xl > 0, cf, 2 - cf))
    return erf.astype(np.float64), erfc.astype(np.float64)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_erf_erfc_few_ulp():
    x = np.linspace(-6, 6, 4001)
    e, c = _erf_reference(x)
    assert _ulps(chlo.erf(x), e).max() <= 4
    assert _ulps(chlo.erfc(x), c).max() <= 6


def test_special_values():
    assert np.isnan(chlo.erf_inv(np.array([1.5, -2.0, np.nan]))).all()
    assert list(chlo.erf_inv(np.array([1.0, -1.0]))) == [np.inf, -np.inf]
    assert list(chlo.lgamma(np.array([np.inf, -np.inf, 0.0, -3.0]))) == [np.inf] * 4
    assert np.isnan(chlo.digamma(np.array([0.0, -2.0, -np.inf]))).all()
    assert chlo.lgamma(np.array([1.0, 2.0])).tolist() == [0.0, 0.0]
    assert np.isnan(chlo.zeta(np.array([0.5]), np.array([1.0])))[0]
    assert chlo.zeta(np.array([1.0]), np.array([2.0]))[0] == np.inf
    assert np.isnan(chlo.polygamma(np.array([1.5, -1.0]), np.array([2.0, 2.0]))).all()


def test_against_scipy():
    sp = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(-20.5, 30, 3001), np.geomspace(1e-8, 1e3, 500)])
    x = x[np.abs(x - np.round(x)) > 1e-6]
    for ours, ref, tol in [(chlo.lgamma, sp.gammaln, 1e-13), (chlo.digamma, sp.digamma, 1e-12),
                           (chlo.bessel_i1e, sp.i1e, 1e-14)]:
        got, want = ours(x), ref(x)
        err = np.abs(got - want) / np.maximum(np.abs(want), 1.0)
        assert err.max() < tol, ours.__name__
    y = np.linspace(-0.999999, 0.999999, 2001)
    assert (np.abs(chlo.erf_inv(y) - sp.erfinv(y)) <= 1e-14 * np.maximum(1, np.abs(sp.erfinv(y)))).all()
    s = np.array([2.0, 3.5, 5.0, 1.1])
    q = np.array([1.0, 0.3, 7.0, 2.0])
    np.testing.assert_allclose(chlo.zeta(s, q), sp.zeta(s, q), rtol=1e-13)
    n = np.array([1.0, 2.0, 3.0])
    xx = np.array([0.7, 3.2, 11.0])
    np.testing.assert_allclose(chlo.polygamma(n, xx), sp.polygamma(n.astype(int), xx), rtol=1e-12)


def test_next_after_bits():
    f32 = ELEMENT_TYPES["f32"]
    x = np.array([0.0, -0.0, 1.0, 1.0, np.inf, np.nan, 5.0], np.float32)
    y = np.array([1.0, -1.0, 2.0, 0.0, 0.0, 1.0, 5.0], np.float32)
    got = chlo.next_after(x, y, f32)
    want = np.nextafter(x, y)
    np.testing.assert_array_equal(got.view(np.uint32)[:5], want.view(np.uint32)[:5])
    assert np.isnan(got[5]) and got[6] == 5.0


def _conv_direct(x, w, stride, pad):
    # NCH x OIH, one spatial dim, direct sum
    xp = np.pad(x, ((0, 0), (0, 0), pad))
    n, c, h = xp.shape
    o, i, k = w.shape
    out_h = (h - k) // stride + 1
    out = np.zeros((n, o, out_h))
    for p in range(out_h):
        out[:, :, p] = np.einsum("nck,ock->no", xp[:, :, p * stride:p * stride + k], w)
    return out


def test_convolution_matches_direct_sum():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 11))
    w = rng.standard_normal((4, 3, 3))
    dims = dict(input_batch_dimension=0, input_feature_dimension=1, input_spatial_dimensions=[2],
                kernel_output_feature_dimension=0, kernel_input_feature_dimension=1,
                kernel_spatial_dimensions=[2], output_batch_dimension=0,
                output_feature_dimension=1, output_spatial_dimensions=[2])
    got = conv.convolve(x, w, strides=[2], padding=[(1, 2)], lhs_dilation=[1], rhs_dilation=[1],
                        reversal=None, dims=dims, feature_group_count=1, batch_group_count=1, et=F64)
    np.testing.assert_allclose(got, _conv_direct(x, w, 2, (1, 2)), rtol=1e-12)
    # feature groups: two independent halves
    w2 = rng.standard_normal((4, 1, 3))
    x2 = rng.standard_normal((1, 2, 7))
    got = conv.convolve(x2, w2, strides=[1], padding=[(0, 0)], lhs_dilation=[1], rhs_dilation=[1],
                        reversal=None, dims=dims, feature_group_count=2, batch_group_count=1, et=F64)
    want = np.concatenate([_conv_direct(x2[:, :1], w2[:2], 1, (0, 0)),
                           _conv_direct(x2[:, 1:], w2[2:], 1, (0, 0))], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-12)


# ------------------------------------------------------------------ hypothesis: elementwise

INT_TYPES = ["i8", "i16", "i32", "i64", "ui8", "ui32", "ui64", "i4", "ui4"]


def _int_range(name):
    et = ELEMENT_TYPES[name]
    if et.is_signed:
        return -(1 << (et.bits - 1)), (1 << (et.bits - 1)) - 1
    return 0, (1 << et.bits) - 1


def _wrap(v, et):
    m = v & ((1 << et.bits) - 1)
    if et.is_signed and m >= 1 << (et.bits - 1):
        m -= 1 << et.bits
    return m


def _fake_op(et, shape, name="stablehlo.test"):
    from stablehlo_ref.ir.types import TensorType

    class _R:
        type = TensorType(tuple(shape), et)

    class _Op:
        results = [_R()]
        operands = [_R(), _R()]
        attributes = {}

    _Op.name = name
    return _Op()


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(INT_TYPES), st.data())
def test_integer_wraparound_matches_python_ints(name, data):
    from stablehlo_ref.interpreter import KERNELS
    et = ELEMENT_TYPES[name]
    lo, hi = _int_range(name)
    ints = st.one_of(st.sampled_from([lo, hi, 0, 1, lo + 1, hi - 1]), st.integers(lo, hi))
    vals = data.draw(st.lists(st.tuples(ints, ints), min_size=1, max_size=8))
    wide = np.uint64 if name == "ui64" else np.int64
    a = np.array([p[0] for p in vals], dtype=wide).astype(et.dtype)
    b = np.array([p[1] for p in vals], dtype=wide).astype(et.dtype)
    op = _fake_op(et, a.shape)
    for kern, pyop in [(KERNELS["stablehlo.add"], lambda x, y: x + y),
                       (KERNELS["stablehlo.subtract"], lambda x, y: x - y),
                       (KERNELS["stablehlo.multiply"], lambda x, y: x * y)]:
        got = kern(None, op, a, b)
        want = [_wrap(pyop(x, y), et) for x, y in vals]
        assert [int(v) for v in got] == want, kern.__name__


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 1e-310, 1.0, -1.0, 0.5, 2.5,
           1e300, -1e300, 3.0, -7.25]


@settings(max_examples=80, deadline=None)
@given(st.lists(st.one_of(st.sampled_from(SPECIAL), st.floats(allow_nan=True, allow_infinity=True)),
                min_size=1, max_size=16),
       st.sampled_from(["f16", "bf16", "f32", "f64"]))
@np.errstate(all="ignore")   # (kernels run as the interpreter runs them)
def test_chlo_float_functions_round_once_and_keep_specials(xs, name):
    from stablehlo_ref.interpreter.chlo import _real_unary
    et = ELEMENT_TYPES[name]
    x = np.array(xs, dtype=np.float64).astype(et.dtype)

    op = _fake_op(et, x.shape, 'chlo.test')

    for fn, ref in [(chlo.erf, None), (np.arcsinh, np.arcsinh), (np.sinh, np.sinh)]:
        got = _real_unary(op, x, fn)
        assert got.dtype == np.dtype(et.dtype)
        want = fn(x.astype(np.float64)) if ref is None else ref(x.astype(np.float64))
        with np.errstate(all="ignore"):
            want = np.asarray(want).astype(et.dtype)
        same = (got.astype(np.float64) == want.astype(np.float64)) | (np.isnan(got.astype(np.float64)) & np.isnan(want.astype(np.float64)))
        assert same.all()
    e = chlo.erf(x.astype(np.float64))
    xf = x.astype(np.float64)
    assert np.all(np.isnan(e) == np.isnan(xf))
    assert np.all(e[xf == np.inf] == 1.0) and np.all(e[xf == -np.inf] == -1.0)
    assert np.all(np.signbit(e[xf == 0]) == np.signbit(xf[xf == 0]))
    assert np.all(np.abs(e[np.isfinite(e)]) <= 1.0)


def _ragged_program(dn, lt, rt, gt, ot):
    import stablehlo_ref
    return stablehlo_ref.parse(
        f'func.func @main(%a: {lt}, %b: {rt}, %g: {gt}) -> {ot} {{\n'
        f'  %r = "chlo.ragged_dot"(%a, %b, %g) {{ragged_dot_dimension_numbers = #chlo.ragged_dot<{dn}>}}'
        f' : ({lt}, {rt}, {gt}) -> {ot}\n  return %r : {ot}\n}}')


def test_ragged_dot_modes_against_loops():
    import stablehlo_ref
    rng = np.random.default_rng(0)
    gs = np.array([2, 3, 1], np.int64)
    runs = [(0, 2), (2, 5), (5, 6)]
    # mode 1: ragged rows, one rhs per group
    lhs = rng.standard_normal((6, 5))
    rhs = rng.standard_normal((3, 5, 4))
    m = _ragged_program("lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
                        "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]",
                        "tensor<6x5xf64>", "tensor<3x5x4xf64>", "tensor<3xi64>", "tensor<6x4xf64>")
    got = stablehlo_ref.run(m, lhs, rhs, gs)[0]
    want = np.concatenate([lhs[s:e] @ rhs[j] for j, (s, e) in enumerate(runs)])
    assert np.allclose(got, want)
    # mode 2: ragged contracting dimension, one result per group
    lhs = rng.standard_normal((2, 3, 6))
    rhs = rng.standard_normal((2, 6, 4))
    m = _ragged_program("lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
                        "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [2], rhs_group_dimensions = []",
                        "tensor<2x3x6xf64>", "tensor<2x6x4xf64>", "tensor<3xi64>", "tensor<3x2x3x4xf64>")
    got = stablehlo_ref.run(m, lhs, rhs, gs)[0]
    want = np.stack([np.einsum("bmk,bkn->bmn", lhs[:, :, s:e], rhs[:, s:e]) for s, e in runs])
    assert np.allclose(got, want)


def test_dot_general_converts_operands_to_the_result_type_first():
    import stablehlo_ref
    m = stablehlo_ref.parse(
        "func.func @main(%a: tensor<1x2xi64>, %b: tensor<2x1xi64>) -> tensor<1x1xf32> {\n"
        "  %r = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
        "(tensor<1x2xi64>, tensor<2x1xi64>) -> tensor<1x1xf32>\n  return %r : tensor<1x1xf32>\n}")
    a = np.array([[(1 << 62) + (1 << 38) + 1, 1]], np.int64)
    b = np.array([[1], [0]], np.int64)
    assert int(stablehlo_ref.run(m, a, b)[0].astype(np.float64)[0, 0]) == (1 << 62) + (1 << 39)


@pytest.mark.parametrize("name,dt,it", [("f32", np.float32, np.uint32), ("f64", np.float64, np.uint64)])
def test_chlo_square_in_the_type_is_the_f64_square_rounded(name, dt, it):
    """chlo.square of f32/f64 computed as x * x in the type: the bits of the exact square
    rounded once, for every kind of bit pattern (NaN payloads, infinities, subnormals,
    overflow)."""
    from stablehlo_ref.interpreter.numerics import from_compute
    from stablehlo_ref.ir.types import element_type
    import stablehlo_ref as shlo
    rng = np.random.default_rng(12)
    bits = rng.integers(0, np.iinfo(it).max, 200000, dtype=it, endpoint=True)
    x = np.concatenate([bits.view(dt), np.array([np.nan, -np.inf, 1e-40, 3e38, -0.0], dt)])
    m = shlo.parse(f"""func.func @main(%x: tensor<{x.size}x{name}>) -> tensor<{x.size}x{name}> {{
  %0 = chlo.square %x : tensor<{x.size}x{name}> -> tensor<{x.size}x{name}>
  return %0 : tensor<{x.size}x{name}>
}}""")
    got = shlo.run(m, x)[0]
    with np.errstate(all="ignore"):
        want = from_compute(x.astype(np.float64) * x.astype(np.float64), element_type(name))
    assert got.dtype == want.dtype and got.view(it).tolist() == want.view(it).tolist()
