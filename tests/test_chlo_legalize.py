"""CHLO legalization (stablehlo_ref/transforms/chlo_legalize.py): the legalized program has no
chlo op, verifies, prints and parses, and our interpreter's results on it agree with the
direct CHLO kernels within per-op tolerances (the decompositions are approximations)."""
import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref as shlo
from stablehlo_ref.errors import NotImplementedOpError, StableHLOError
from stablehlo_ref.text import print_module
from stablehlo_ref.transforms import legalize_chlo

_DT = {"f32": np.float32, "f16": np.float16, "bf16": ml_dtypes.bfloat16, "f64": np.float64}
# (op, domain (lo, hi), rtol, atol) for f32/f64; narrow types compute in f32 and round
_UNARY = [("square", (-1e3, 1e3), 0, 0), ("erf", (-5, 5), 2e-6, 1e-6), ("erfc", (-5, 5), 5e-6, 1e-7),
          ("erf_inv", (-1, 1), 5e-6, 1e-6), ("lgamma", (-20, 30), 1e-5, 2e-5), ("digamma", (-20, 30), 1e-5, 1e-5),
          ("acosh", (1, 1e4), 1e-6, 0), ("asinh", (-1e4, 1e4), 1e-6, 0), ("atanh", (-1, 1), 1e-6, 1e-7),
          ("acos", (-1, 1), 1e-6, 1e-7), ("asin", (-1, 1), 1e-6, 1e-7), ("atan", (-1e3, 1e3), 1e-6, 0),
          ("cosh", (-80, 80), 2e-6, 0), ("sinh", (-80, 80), 2e-6, 1e-7), ("tan", (-3, 3), 0, 0)]


def _program(op, et, rt, n):
    return f"""func.func @main(%x: tensor<{n}x{et}>) -> tensor<{n}x{rt}> {{
  %0 = chlo.{op} %x : tensor<{n}x{et}> -> tensor<{n}x{rt}>
  return %0 : tensor<{n}x{rt}>
}}"""


def _legalized(src):
    m = shlo.parse(src)
    counts = legalize_chlo(m)
    assert not [o.name for o in m.walk() if o.name.startswith("chlo.")]
    shlo.verify(m)
    return shlo.parse(print_module(m)), counts


def _compare(want, got, rtol, atol, et):
    w, g = np.asarray(want).astype(np.float64), np.asarray(got).astype(np.float64)
    assert np.array_equal(np.isnan(w), np.isnan(g))
    if et in ("f16", "bf16"):           # both round an f32 value: allow one step of the type
        rtol, atol = max(rtol, 2 * float(ml_dtypes.finfo(_DT[et]).eps)), max(atol, 1e-6)
    np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


@pytest.mark.parametrize("et", ["f32", "f16", "bf16"])
@pytest.mark.parametrize("op,domain,rtol,atol", _UNARY, ids=[u[0] for u in _UNARY])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_unary_decomposition_matches_the_chlo_kernel(op, domain, rtol, atol, et, data):
    lo, hi = domain
    xs = data.draw(st.lists(st.floats(lo, hi, allow_nan=False, width=32), min_size=4, max_size=12))
    # Subnormal inputs are left out: upstream's decompositions compute in the input type, and
    # some (lgamma's reflection through sin(pi*x)) keep only the few bits a subnormal has, so
    # they differ from the direct kernels by design there (lgamma(1.4e-45) in f32: 103.33
    # against 103.28).
    tiny = float(ml_dtypes.finfo(_DT[et]).tiny)
    xs = [v if v == 0 or abs(v) >= tiny else 0.0 for v in xs]
    x = np.array(xs + [0.0], dtype=np.float64).astype(_DT[et])
    src = _program(op, et, et, len(x))
    want = shlo.run(shlo.parse(src), x)[0]
    m, counts = _legalized(src)
    assert counts == {f"chlo.{op}": 1}
    _compare(want, shlo.run(m, x)[0], rtol, atol, et)


@pytest.mark.parametrize("op", ["lgamma", "digamma", "acosh", "asinh", "atanh", "asin", "acos", "atan", "cosh", "sinh"])
def test_f64_decompositions(op):
    rng = np.random.default_rng(1)
    x = {"acosh": 1 + rng.exponential(3, 32), "atanh": rng.uniform(-1, 1, 32), "asin": rng.uniform(-1, 1, 32),
         "acos": rng.uniform(-1, 1, 32)}.get(op, rng.uniform(-20, 20, 32))
    src = _program(op, "f64", "f64", 32)
    want = shlo.run(shlo.parse(src), x)[0]
    m, _ = _legalized(src)
    np.testing.assert_allclose(shlo.run(m, x)[0], want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", ["is_inf", "is_pos_inf", "is_neg_inf"])
def test_inf_predicates(op):
    x = np.array([np.inf, -np.inf, np.nan, 0, -1, 3.5, np.finfo(np.float32).max], np.float32)
    src = _program(op, "f32", "i1", len(x))
    m, _ = _legalized(src)
    assert shlo.run(m, x)[0].tolist() == shlo.run(shlo.parse(src), x)[0].tolist()


@settings(max_examples=20, deadline=None)
@given(st.lists(st.floats(width=32), min_size=6, max_size=6), st.lists(st.floats(width=32), min_size=6, max_size=6))
def test_next_after_is_bit_exact(xs, ys):
    src = """func.func @main(%x: tensor<6xf32>, %y: tensor<6xf32>) -> tensor<6xf32> {
  %0 = chlo.next_after %x, %y : tensor<6xf32>, tensor<6xf32> -> tensor<6xf32>
  return %0 : tensor<6xf32>
}"""
    x, y = np.array(xs, np.float32), np.array(ys, np.float32)
    want = shlo.run(shlo.parse(src), x, y)[0]
    m, _ = _legalized(src)
    got = shlo.run(m, x, y)[0]
    nan = np.isnan(want)
    assert np.array_equal(nan, np.isnan(got))
    assert got[~nan].view(np.uint32).tolist() == want[~nan].view(np.uint32).tolist()


@settings(max_examples=20, deadline=None)
@given(st.lists(st.integers(-4, 4), min_size=12, max_size=12), st.integers(1, 6))
def test_top_k_is_exact(vals, k):
    src = f"""func.func @main(%x: tensor<2x6xf32>) -> (tensor<2x{k}xf32>, tensor<2x{k}xi32>) {{
  %0:2 = chlo.top_k(%x, k = {k}) : tensor<2x6xf32> -> (tensor<2x{k}xf32>, tensor<2x{k}xi32>)
  return %0#0, %0#1 : tensor<2x{k}xf32>, tensor<2x{k}xi32>
}}"""
    x = np.array(vals, np.float32).reshape(2, 6)
    want = shlo.run(shlo.parse(src), x)
    m, counts = _legalized(src)
    got = shlo.run(m, x)
    assert counts == {"chlo.top_k": 1}
    assert [g.tolist() for g in got] == [w.tolist() for w in want]


def test_broadcast_binary_ops_complex_square_conj_and_constants():
    src = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3xf32>, %z: tensor<3xcomplex<f32>>) -> (tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>, tensor<2x3xf32>) {
  %0 = chlo.broadcast_add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = chlo.broadcast_compare %a, %b {comparison_direction = #chlo<comparison_direction GT>} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %2 = chlo.broadcast_next_after %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = chlo.square %z : tensor<3xcomplex<f32>> -> tensor<3xcomplex<f32>>
  %4 = chlo.conj %z : tensor<3xcomplex<f32>> -> tensor<3xcomplex<f32>>
  %5 = "chlo.constant_like"(%a) {value = 2.5 : f32} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<2x3xf32>, tensor<2x3xi1>, tensor<2x3xf32>, tensor<3xcomplex<f32>>, tensor<3xcomplex<f32>>, tensor<2x3xf32>
}"""
    a = np.arange(6, dtype=np.float32).reshape(2, 3) - 2
    b = np.array([0.5, -1, 3], np.float32)
    z = np.array([1 + 2j, -3 + 0.5j, 2 - 2j], np.complex64)
    want = shlo.run(shlo.parse(src), a, b, z)
    m, counts = _legalized(src)
    got = shlo.run(m, a, b, z)
    assert counts["chlo.broadcast_next_after"] == 1 and counts["chlo.next_after"] == 1
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-6)


def test_every_chlo_op_of_the_spec_has_a_decomposition():
    from stablehlo_ref.spec import load
    from stablehlo_ref.transforms.chlo_legalize import REWRITES
    names = {n for n in load().ops if n.startswith("chlo.")}
    assert names and names <= set(REWRITES), sorted(names - set(REWRITES))


def test_unsupported_cases_raise_with_the_module_unchanged():
    src = """func.func @main(%x: tensor<3xf32>, %n: tensor<3xi32>, %d: tensor<?x4xf32>) -> (tensor<3xf32>, tensor<3xi32>, tensor<?x2xf32>) {
  %0 = chlo.erf %x : tensor<3xf32> -> tensor<3xf32>
  %1 = chlo.erf %n : tensor<3xi32> -> tensor<3xi32>
  %2:2 = chlo.top_k(%d, k = 2) : tensor<?x4xf32> -> (tensor<?x2xf32>, tensor<?x2xi32>)
  return %0, %1, %2#0 : tensor<3xf32>, tensor<3xi32>, tensor<?x2xf32>
}"""
    m = shlo.parse(src)
    before = print_module(m)
    with pytest.raises(NotImplementedOpError, match=r"chlo.erf .*i32"):
        legalize_chlo(m)
    assert print_module(m) == before
    m = shlo.parse(src.replace("chlo.erf %n", "chlo.square %n"))
    before = print_module(m)
    with pytest.raises(StableHLOError, match="dynamic shape"):
        legalize_chlo(m)
    assert print_module(m) == before


def test_elementwise_decompositions_on_dynamic_shapes():
    """`?` dimensions (jax.jit(f).lower on symbolic shapes writes them): the decompositions'
    constants become scalars broadcast to the operand's runtime shape with
    dynamic_broadcast_in_dim, as upstream's getConstantLike does."""
    src = """func.func @main(%x: tensor<?x4xf32>, %n: tensor<?x4xf32>, %z: tensor<?xcomplex<f32>>) -> (tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xcomplex<f32>>) {
  %0 = chlo.erf %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %1 = chlo.lgamma %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %2 = chlo.asinh %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %3 = chlo.polygamma %n, %x : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x4xf32>
  %4 = chlo.bessel_i1e %x : tensor<?x4xf32> -> tensor<?x4xf32>
  %5 = chlo.asin %z : tensor<?xcomplex<f32>> -> tensor<?xcomplex<f32>>
  return %0, %1, %2, %3, %4, %5 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?xcomplex<f32>>
}"""
    rng = np.random.default_rng(9)
    m, _ = _legalized(src)
    assert any(o.name == "stablehlo.dynamic_broadcast_in_dim" for o in m.walk())
    for rows in (1, 5):
        x = rng.uniform(0.1, 6, (rows, 4)).astype(np.float32)
        n = rng.integers(0, 4, (rows, 4)).astype(np.float32)
        z = (rng.normal(size=3) + 1j * rng.normal(size=3)).astype(np.complex64)
        want = shlo.run(shlo.parse(src), x, n, z)
        got = shlo.run(m, x, n, z)
        for w, g in zip(want, got):
            assert g.shape == w.shape
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=2e-5)


# ------------------------------------------------------------------ f64 erf family, bessel_i1e,
# zeta, polygamma, mulhi, broadcast_select

_SPECIAL = [0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, math.nan, 0.5, -0.5, 8.0, -8.0, 26.0, 1e-30, -3.0]


def _run_both(src, *xs):
    want = shlo.run(shlo.parse(src), *xs)[0]
    m, counts = _legalized(src)
    return want, shlo.run(m, *xs)[0], counts


@pytest.mark.parametrize("op,lo,hi,rtol", [("erf", -7, 7, 2e-15), ("erfc", -7, 30, 2e-13),
                                           ("bessel_i1e", -60, 60, 2e-15)])
def test_f64_erf_erfc_bessel_i1e_use_the_f64_approximations(op, lo, hi, rtol):
    x = np.concatenate([np.random.default_rng(3).uniform(lo, hi, 200), _SPECIAL, [1e300, -1e300, 5e-324]])
    want, got, counts = _run_both(_program(op, "f64", "f64", len(x)), x)
    assert counts == {f"chlo.{op}": 1}
    # Cephes' f64 approximations: within a few ULP of the direct kernels (erfc's tail carries
    # exp(-x*x), whose relative error grows with x*x: 2e-13 at x = 26); NaN and infinities agree
    _compare(want, got, rtol, 1e-300, "f64")


@pytest.mark.parametrize("et", ["f32", "f16", "bf16"])
@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_bessel_i1e_in_f32_and_narrower(et, data):
    xs = data.draw(st.lists(st.floats(-90, 90, allow_nan=False, width=32), min_size=4, max_size=12))
    tiny = float(ml_dtypes.finfo(_DT[et]).tiny)
    x = np.array([v if abs(v) >= tiny else 0.0 for v in xs] + [math.inf, -math.inf, math.nan, 8.0],
                 np.float64).astype(_DT[et])
    want, got, _ = _run_both(_program("bessel_i1e", et, et, len(x)), x)
    _compare(want, got, 2e-6, 1e-7, et)


def test_f64_erf_inv():
    near_one = 1 - np.logspace(-9, -1, 20)
    x = np.concatenate([np.random.default_rng(4).uniform(-0.999, 0.999, 200),
                        [0.0, -0.0, 1.0, -1.0, 2.0, -math.inf, math.nan, 1e-300], near_one, -near_one])
    want, got, counts = _run_both(_program("erf_inv", "f64", "f64", len(x)), x)
    assert counts == {"chlo.erf_inv": 1}
    # Giles' f64 polynomials: a few ULP for |x| <= 0.999; nearer +-1 the decomposition's
    # log1p(-x*x) loses the bits x*x rounds away (1e-10 relative at 1 - 7e-9, against mpmath's
    # erfinv, which the direct kernel matches to 1e-16)
    _compare(want[:208], got[:208], 1e-14, 1e-300, "f64")
    _compare(want[208:], got[208:], 2e-10, 0, "f64")


def _binary_program(op, et, n):
    return f"""func.func @main(%a: tensor<{n}x{et}>, %b: tensor<{n}x{et}>) -> tensor<{n}x{et}> {{
  %0 = chlo.{op} %a, %b : tensor<{n}x{et}>, tensor<{n}x{et}> -> tensor<{n}x{et}>
  return %0 : tensor<{n}x{et}>
}}"""


# zeta(x, q): the domain edges (x < 1, x = 1, q <= 0 integer or not, NaN) agree exactly.
# q = +inf is left out: the decomposition's Euler-Maclaurin correction is inf * 0 = NaN there
# (as upstream's), where the direct kernel returns the limit 0.
_ZETA_EDGES = ([1.0, 0.5, 2.0, 2.0, 3.0, 2.5, math.nan, 2.0, 3.0, 1.5, 4.0, 64.0],
               [1.0, 1.0, 0.0, -2.0, -2.0, -1.5, 1.0, 1e-8, -1.3, 1e4, 0.25, 1.5])


@pytest.mark.parametrize("et,rtol", [("f64", 1e-13), ("f32", 2e-6), ("f16", 0), ("bf16", 0)])
def test_zeta(et, rtol):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(1.01, 30, 60), _ZETA_EDGES[0]]).astype(_DT[et])
    q = np.concatenate([rng.uniform(0.05, 50, 60), _ZETA_EDGES[1]]).astype(_DT[et])
    want, got, counts = _run_both(_binary_program("zeta", et, len(x)), x, q)
    assert counts == {"chlo.zeta": 1}
    _compare(want, got, rtol, 1e-300 if et == "f64" else 1e-30, et)


@pytest.mark.parametrize("et,rtol", [("f64", 1e-12), ("f32", 1e-5), ("f16", 0), ("bf16", 0)])
def test_polygamma(et, rtol):
    """polygamma(n, x) = (-1)^(n+1) n! zeta(n+1, x), digamma for n = 0, NaN unless n is a
    natural number: legalized through chlo.lgamma, chlo.zeta and chlo.digamma."""
    rng = np.random.default_rng(6)
    n = np.concatenate([rng.integers(0, 6, 60).astype(float), [-1, 0.5, 0, 1, 2, 3, 1, 1, 1]])
    x = np.concatenate([rng.uniform(0.1, 12, 60), [1, 1, 0, -2, -2.5, 0.01, math.nan, 100, -0.5]])
    n, x = n.astype(_DT[et]), x.astype(_DT[et])
    want, got, counts = _run_both(_binary_program("polygamma", et, len(x)), n, x)
    assert counts == {"chlo.polygamma": 1, "chlo.lgamma": 1, "chlo.zeta": 1, "chlo.digamma": 1}
    # polygamma's values reach 1e6 near x = 0.01 and lgamma/digamma's Lanczos forms are
    # accurate to ~1e-6 relative in f32
    _compare(want, got, rtol, 1e-300 if et == "f64" else 1e-5, et)


@pytest.mark.parametrize("et", ["i8", "ui8", "i16", "ui16", "i32", "ui32", "i64", "ui64"])
def test_mulhi_is_exact(et):
    dt = np.dtype(_INT[et])
    info = np.iinfo(dt)
    rng = np.random.default_rng(7)
    a = rng.integers(info.min, info.max, 64, dtype=dt, endpoint=True)
    b = rng.integers(info.min, info.max, 64, dtype=dt, endpoint=True)
    edges = [info.min, info.max, 0, 1, info.max // 2 + 1, info.min + 1 if info.min else 2]
    a[:6], b[:6] = edges, edges[::-1]
    want, got, counts = _run_both(_binary_program("mulhi", et, len(a)), a, b)
    # signed 64-bit legalizes through the unsigned one (a second chlo.mulhi)
    assert counts == {"chlo.mulhi": 2 if et == "i64" else 1}
    assert got.dtype == want.dtype and got.tolist() == want.tolist()


_INT = {"i8": np.int8, "ui8": np.uint8, "i16": np.int16, "ui16": np.uint16, "i32": np.int32,
        "ui32": np.uint32, "i64": np.int64, "ui64": np.uint64}


def test_broadcast_select_and_broadcast_zeta():
    src = """func.func @main(%p: tensor<3xi1>, %a: tensor<2x3xf32>, %b: tensor<f32>, %q: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = chlo.broadcast_select %p, %a, %b : (tensor<3xi1>, tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %1 = chlo.broadcast_zeta %a, %q : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}"""
    p = np.array([True, False, True])
    a = np.array([[2, 3, 4], [5, 6, 1.5]], np.float32)
    b = np.array(-7, np.float32)
    q = np.array([1, 2.5, 0.5], np.float32)
    want = shlo.run(shlo.parse(src), p, a, b, q)
    m, counts = _legalized(src)
    got = shlo.run(m, p, a, b, q)
    assert counts == {"chlo.broadcast_select": 1, "chlo.broadcast_zeta": 1, "chlo.zeta": 1}
    assert got[0].tolist() == want[0].tolist()
    np.testing.assert_allclose(got[1], want[1], rtol=2e-6)


# ------------------------------------------------------------------ complex inverse functions

def _complex_grid(dt, big):
    vals = [0.5, 1.0, 2.0, 1e-3, 3.7] + ([1e10] if big else [1e4])
    parts = [0.0] + vals + [-v for v in vals]
    re, im = np.meshgrid(parts, parts)
    rng = np.random.default_rng(8)
    z = np.concatenate([(re + 1j * im).ravel(), rng.normal(0, 3, 100) + 1j * rng.normal(0, 3, 100)])
    return z.astype(dt)


@pytest.mark.parametrize("et,rtol,atol", [("complex<f64>", 2e-15, 1e-15), ("complex<f32>", 1e-6, 1e-6)])
@pytest.mark.parametrize("op", ["asin", "acos", "asinh", "acosh", "atan", "atanh", "sinh", "cosh"])
def test_complex_decompositions(op, et, rtol, atol):
    """Complex asin, acos, asinh, acosh go through chlo._asin_acos_kernel (itself rewritten on
    the next round), atan through chlo.atanh, as upstream's generated patterns do. Finite
    inputs whose imaginary part is +0 or nonzero: on a branch cut upstream's kernel reads -0 as
    +0 where the direct kernels (numpy, C99 Annex G) take the side the sign names, and at
    infinities and NaN parts the two conventions differ (asinh(nan + 1e300j): numpy nan+nanj,
    upstream 691+nanj). sinh and cosh use e^(z + log 1/2) -/+ e^(log 1/2 - z) for complex z,
    exact to an absolute eps only (sinh(1e-30) is 0), hence atol."""
    dt = np.complex128 if et == "complex<f64>" else np.complex64
    z = _complex_grid(dt, big=et == "complex<f64>")
    src = _program(op, et, et, len(z))
    with np.errstate(all="ignore"):
        want = shlo.run(shlo.parse(src), z)[0]
    m, counts = _legalized(src)
    via = {"asin": "_asin_acos_kernel", "acos": "_asin_acos_kernel", "asinh": "_asin_acos_kernel",
           "acosh": "_asin_acos_kernel", "atan": "atanh"}.get(op)
    assert counts == {f"chlo.{op}": 1, **({f"chlo.{via}": 1} if via else {})}
    with np.errstate(all="ignore"):
        got = shlo.run(m, z)[0]
    scale = np.maximum(np.abs(want.astype(np.complex128)), 1.0)
    for part in (np.real, np.imag):
        w, g = part(want).astype(np.float64), part(got).astype(np.float64)
        with np.errstate(invalid="ignore"):
            ok = (w == g) | (np.isnan(w) & np.isnan(g)) | (np.abs(w - g) <= atol * scale + rtol * np.abs(w))
        assert ok.all(), (op, z[~ok][:3], want[~ok][:3], got[~ok][:3])


# ------------------------------------------------------------------ scan

_SCAN = """func.func @main(%x: tensor<{n}x{m}xi32>, %y: tensor<{n}x{m}xf32>, %c: tensor<{c}xi32>) -> (tensor<{n}x{m}xi32>, tensor<{n}x{m}xf32>, tensor<{c}xi32>) {{
  %0:3 = chlo.scan(%x, %y) inits(%c) dimension={d} attributes {{is_reverse = {rev}}} {{
  ^bb0(%a: tensor<{c}xi32>, %f: tensor<{c}xf32>, %b: tensor<{c}xi32>):
    %1 = stablehlo.add %a, %b : tensor<{c}xi32>
    %2 = chlo.square %1 : tensor<{c}xi32> -> tensor<{c}xi32>
    %3 = chlo.erf %f : tensor<{c}xf32> -> tensor<{c}xf32>
    stablehlo.return %2, %3, %1 : tensor<{c}xi32>, tensor<{c}xf32>, tensor<{c}xi32>
  }} : (tensor<{n}x{m}xi32>, tensor<{n}x{m}xf32>, tensor<{c}xi32>) -> (tensor<{n}x{m}xi32>, tensor<{n}x{m}xf32>, tensor<{c}xi32>)
  return %0#0, %0#1, %0#2 : tensor<{n}x{m}xi32>, tensor<{n}x{m}xf32>, tensor<{c}xi32>
}}
"""


@settings(max_examples=12, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 1), st.booleans(), st.integers(0, 2 ** 32 - 1))
def test_scan_becomes_a_while_loop(n, m, d, rev, seed):
    """chlo.scan (with CHLO ops in its body, legalized too) as a stablehlo.while over the
    position: integer outputs and carries equal the direct kernel's exactly; the float output
    goes through the body's erf, decomposed on one side and the direct kernel on the other,
    so it compares with erf's tolerance."""
    c = m if d == 0 else n
    src = _SCAN.format(n=n, m=m, c=c, d=d, rev=str(rev).lower())
    rng = np.random.default_rng(seed)
    x = rng.integers(-50, 50, (n, m)).astype(np.int32)
    y = rng.uniform(-3, 3, (n, m)).astype(np.float32)
    ci = rng.integers(-50, 50, c).astype(np.int32)
    want = shlo.run(shlo.parse(src), x, y, ci)
    m_, counts = _legalized(src)
    assert counts == {"chlo.scan": 1, "chlo.square": 1, "chlo.erf": 1}
    assert [o.name for o in m_.walk() if o.name == "stablehlo.while"] == ["stablehlo.while"]
    got = shlo.run(m_, x, y, ci)
    assert got[0].tolist() == want[0].tolist() and got[2].tolist() == want[2].tolist()
    np.testing.assert_allclose(got[1], want[1], rtol=2e-6, atol=1e-6)


def test_scan_without_inputs_uses_scan_dim_size():
    src = """func.func @main(%z: tensor<i64>) -> (tensor<4xi64>, tensor<i64>) {
  %0:2 = chlo.scan() inits(%z) dimension=0 attributes {scan_dim_size = 4 : i64} {
  ^bb0(%c: tensor<i64>):
    %one = stablehlo.constant dense<1> : tensor<i64>
    %n = stablehlo.add %c, %one : tensor<i64>
    stablehlo.return %n, %n : tensor<i64>, tensor<i64>
  } : (tensor<i64>) -> (tensor<4xi64>, tensor<i64>)
  return %0#0, %0#1 : tensor<4xi64>, tensor<i64>
}"""
    m, counts = _legalized(src)
    out, carry = shlo.run(m, np.array(10, np.int64))
    assert out.tolist() == [11, 12, 13, 14] and int(carry) == 14


# ------------------------------------------------------------------ ragged_dot

def _ragged_src(dn, lt, rt, gt, ot, precision=""):
    return (f'func.func @main(%a: {lt}, %b: {rt}, %g: {gt}) -> {ot} {{\n'
            f'  %r = "chlo.ragged_dot"(%a, %b, %g) {{{precision}ragged_dot_dimension_numbers = #chlo.ragged_dot<{dn}>}}'
            f' : ({lt}, {rt}, {gt}) -> {ot}\n  return %r : {ot}\n}}')


_RAGGED_CASES = [
    # mode 1: ragged lhs rows, one rhs per group
    ("lhs_batching_dimensions = [], rhs_batching_dimensions = [], lhs_contracting_dimensions = [1], "
     "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = [0]",
     (6, 5), (3, 5, 4), (3,), (6, 4)),
    # mode 1 with a batch dimension and per-batch group sizes
    ("lhs_batching_dimensions = [0], rhs_batching_dimensions = [1], lhs_contracting_dimensions = [2], "
     "rhs_contracting_dimensions = [2], lhs_ragged_dimensions = [1], rhs_group_dimensions = [0]",
     (2, 6, 5), (3, 2, 5, 4), (2, 3), (2, 6, 4)),
    # mode 2: ragged contracting dimension, one result per group
    ("lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
     "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [2], rhs_group_dimensions = []",
     (2, 3, 6), (2, 6, 4), (3,), (3, 2, 3, 4)),
    # mode 3: ragged batch dimension
    ("lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], "
     "rhs_contracting_dimensions = [1], lhs_ragged_dimensions = [0], rhs_group_dimensions = []",
     (6, 3, 5), (6, 5, 4), (3,), (6, 3, 4)),
]


@pytest.mark.parametrize("case", range(len(_RAGGED_CASES)))
@pytest.mark.parametrize("precision", ["", "precision_config = [#chlo<precision DEFAULT>, #chlo<precision HIGHEST>], "])
@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1))
def test_ragged_dot(case, precision, seed):
    """Random group sizes (some empty) that fill the ragged dimension, as jax's ragged_dot
    requires (past the groups, mode 1 gives zeros on both sides; mode 3's upstream form is a
    plain dot_general, which the direct kernel zeroes there, so sizes always add up)."""
    dn, ls, rs, gs, os_ = _RAGGED_CASES[case]
    t = lambda s, e="f32": f"tensor<{'x'.join(map(str, s))}x{e}>"
    src = _ragged_src(dn, t(ls), t(rs), t(gs, "i32"), t(os_), precision)
    rng = np.random.default_rng(seed)
    lhs = rng.integers(-4, 5, ls).astype(np.float32)
    rhs = rng.integers(-4, 5, rs).astype(np.float32)
    ragged_len = ls[{0: 0, 1: 1, 2: 2, 3: 0}[case]]
    groups = []
    for _ in range(int(np.prod(gs[:-1]))):
        cuts = np.sort(rng.integers(0, ragged_len + 1, gs[-1] - 1))
        groups.append(np.diff(np.concatenate([[0], cuts, [ragged_len]])))
    g = np.array(groups, np.int32).reshape(gs)
    want = shlo.run(shlo.parse(src), lhs, rhs, g)[0]
    m, counts = _legalized(src)
    assert counts == {"chlo.ragged_dot": 1}
    # small integers: every product and sum is exact in f32, so the results are equal
    assert shlo.run(m, lhs, rhs, g)[0].tolist() == want.tolist()
