"""lgamma and digamma evaluate their series for several argument groups in one call (the
groups concatenated; every root's Taylor expansion at once): the bytes must be those of the
plain form, one series call per group and one Horner scheme per root, which is written out
here as the reference."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter import chlo


def _near_roots_loop(x, out, roots):
    for hi, lo, w, coeffs in roots:
        m = np.abs(x - hi) < w
        if m.any():
            out[m] = chlo._taylor(coeffs, ((x[m] - hi) - lo) / w)
    return out


def _lgamma_pos_plain(x):
    out = np.empty_like(x)
    m1 = x < 1.5
    m2 = (x >= 1.5) & (x < 2.5)
    m3 = (x >= 2.5) & (x < 10)
    m4 = x >= 10
    out[m1] = chlo._lgamma_series1(x[m1] - 1)
    out[m2] = chlo._lgamma_series2(x[m2] - 2)
    if m3.any():
        v = x[m3]
        n = np.floor(v - 1.5)
        prod = np.ones_like(v)
        y = v.copy()
        for _ in range(8):
            more = n > 0
            y = np.where(more, y - 1, y)
            prod = np.where(more, prod * y, prod)
            n = n - 1
        out[m3] = np.log(prod) + chlo._lgamma_series2(y - 2)
    out[m4] = chlo._lgamma_stirling(x[m4])
    return out


def lgamma_plain(x):
    x = np.asarray(x).astype(np.float64)
    with np.errstate(all="ignore"):
        xs = np.where(np.isfinite(x), x, 1.0)
        small = np.abs(xs) < 0.5
        refl = xs <= -0.5
        sm = chlo._lgamma_series1(np.where(small, xs, 0.0)) - np.log(np.abs(np.where(small, xs, 1.0)))
        out = np.where(small, sm, _lgamma_pos_plain(np.where(small | refl, 1.0, xs)))
        if refl.any():
            xr = np.where(refl, xs, -0.75)
            r = chlo._LOG_PI - np.log(np.abs(chlo._sinpi(xr))) - _lgamma_pos_plain(1.0 - xr)
            r = np.where(refl & (xs == np.floor(xs)), np.inf, r)
            out = np.where(refl, r, out)
            neg = refl & (xs > -14)
            if neg.any():
                out[neg] = _near_roots_loop(xs[neg], out[neg], chlo._roots("lgamma"))
        out = np.where(np.isinf(x), np.inf, out)
        out = np.where(np.isnan(x), x, out)
    return out


def _digamma_pos_plain(x):
    out = np.empty_like(x)
    big = x >= 10
    out[big] = chlo._digamma_asym(x[big])
    mid = ~big
    if mid.any():
        v = x[mid]
        hi, lo, _, coeffs = chlo._roots("digamma_pos")
        n = np.maximum(np.ceil(v - (hi + 1.0)), 0.0)
        y = v - n
        s = chlo._taylor(coeffs, (y - hi) - lo)
        c = np.zeros_like(s)
        for k in range(9):
            r = np.where(k < n, 1.0 / (y + k), 0.0)
            s, e = chlo._two_sum(s, r)
            c = c + e
        out[mid] = s + c
    return out


def digamma_plain(x):
    x = np.asarray(x).astype(np.float64)
    with np.errstate(all="ignore"):
        xs = np.where(np.isfinite(x), x, 1.0)
        out = np.empty_like(xs)
        ge1 = xs >= 1
        out[ge1] = _digamma_pos_plain(xs[ge1])
        unit = (xs > 0) & ~ge1
        if unit.any():
            hi, lo, _, coeffs = chlo._roots("digamma_pos")
            v = xs[unit]
            out[unit] = chlo._taylor(coeffs, (v - (hi - 1.0)) - lo) - 1.0 / v
        neg = xs <= 0
        if neg.any():
            v = xs[neg]
            sub = _digamma_pos_plain(1.0 - v) - chlo._PI / chlo._tanpi(v)
            out[neg] = _near_roots_loop(v, sub, chlo._roots("digamma"))
        out = np.where((x <= 0) & (x == np.floor(x)), np.nan, out)
        out = np.where(x == np.inf, np.inf, out)
        out = np.where(x == -np.inf, np.nan, out)
        out = np.where(np.isnan(x), x, out)
    return out


def _near_the_roots(rng, n):
    """Points next to every lgamma and digamma root (inside and at the edge of its window)."""
    pts = []
    for kind in ("lgamma", "digamma"):
        for hi, lo, w, _ in chlo._roots(kind):
            pts += [hi, np.nextafter(hi, 0), hi + 0.999 * w, hi - 0.999 * w, hi + w, hi - w]
            pts += list(hi + rng.uniform(-1.2 * w, 1.2 * w, n))
    return np.array(pts)


def _same_bytes(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.uint64), want.view(np.uint64))


@pytest.mark.parametrize("fn, plain", [(chlo.lgamma, lgamma_plain), (chlo.digamma, digamma_plain)])
def test_joined_series_give_the_plain_bytes(fn, plain):
    rng = np.random.default_rng(7)
    xs = np.concatenate([
        _near_the_roots(rng, 8), rng.uniform(-40, 40, 3000), rng.uniform(-1, 3, 2000),
        rng.uniform(-15, 0, 2000), np.arange(-20, 21, 0.5),
        [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 1e300, -1e300, 0.4999, -0.5]])
    _same_bytes(fn(xs), plain(xs))
    for shape in [(), (1,), (3, 5), (0,), (2, 0)]:
        x = rng.uniform(-14, 14, shape)
        _same_bytes(fn(x), plain(x))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.floats(-60, 60, allow_nan=False) | st.sampled_from([0.5, -0.5, 1.0, -3.0]),
                min_size=1, max_size=12))
def test_joined_series_hypothesis(xs):
    x = np.array(xs)
    _same_bytes(chlo.lgamma(x), lgamma_plain(x))
    _same_bytes(chlo.digamma(x), digamma_plain(x))


# erf and erfc: their series, continued fraction and Taylor table run in place; the plain
# out-of-place form, written out, is the reference
def _erf_series_plain(x):
    x2 = x * x
    acc = np.zeros_like(x)
    fact = [1.0]
    for n in range(1, 20):
        fact.append(fact[-1] * n)
    for n in range(19, -1, -1):
        acc = acc * x2 + (-1) ** n / (fact[n] * (2 * n + 1))
    return 2.0 / np.sqrt(np.pi) * x * acc


def _erfc_cf_tail_plain(x):
    if x.size == 0:
        return x.copy()
    xmin = max(float(np.min(x)), 0.5)
    depth = int(min(3000, 60 + 700.0 / (xmin * xmin)))
    t = x.copy()
    for k in range(depth, 0, -1):
        t = x + (0.5 * k) / t
    return chlo._exp_neg_sq(x) / (np.sqrt(np.pi) * t)


def _erfc_cf_plain(x):
    if x.size == 0:
        return x.copy()
    out = np.empty_like(x)
    near = x < chlo._ERFC_HI
    if np.any(~near):
        out[~near] = _erfc_cf_tail_plain(x[~near])
    if np.any(near):
        centres, table_t = chlo._erfc_table()
        table = table_t.T
        xn = x[near]
        idx = np.clip(((xn - chlo._ERFC_LO) / chlo._ERFC_STEP).astype(np.int64), 0, len(centres) - 1)
        t = xn - centres[idx]
        coef = table[idx]
        acc = coef[:, -1].copy()
        for n in range(chlo._ERFC_TERMS - 2, -1, -1):
            acc = acc * t + coef[:, n]
        out[near] = acc
    return out


def erfc_plain(x):
    x = np.asarray(x).astype(np.float64)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        small = (a < 0.5) | np.isnan(x)
        out[small] = 1.0 - _erf_series_plain(x[small])
        big = ~small
        c = _erfc_cf_plain(np.minimum(a[big], 30.0))
        c = np.where(a[big] >= 27.3, 0.0, c)
        out[big] = np.where(x[big] < 0, 2.0 - c, c)
    return out


def erf_plain(x):
    x = np.asarray(x).astype(np.float64)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        small = (a < 0.5) | np.isnan(x)
        out[small] = _erf_series_plain(x[small])
        big = ~small
        c = _erfc_cf_plain(np.minimum(a[big], 30.0))
        out[big] = np.copysign(1.0 - c, x[big])
    return out


def test_erfc_table_matches_its_definition_by_centre():
    # the table is kept by term (rows) then centre: column i is centre i's Taylor series
    centres, table_t = chlo._erfc_table()
    assert table_t.shape == (chlo._ERFC_TERMS, len(centres))
    np.testing.assert_array_equal(table_t[0], _erfc_cf_tail_plain(centres))


@pytest.mark.parametrize("fn, plain", [(chlo.erf, erf_plain), (chlo.erfc, erfc_plain)])
def test_in_place_erf_forms_give_the_plain_bytes(fn, plain):
    rng = np.random.default_rng(11)
    xs = [rng.uniform(-6, 6, 4000), rng.uniform(-0.6, 0.6, 1000), rng.uniform(4.5, 30, 500),
          np.array([0.0, -0.0, 0.5, -0.5, 5.0, -5.0, 27.3, 30.0, 1e-300, np.inf, -np.inf, np.nan]),
          rng.uniform(5, 9, 7), np.array([6.0]), np.array([]), np.array(0.7), np.array(12.0)]
    for x in xs:
        _same_bytes(fn(x), plain(x))


@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(-40, 40, allow_nan=False), min_size=1, max_size=10))
def test_in_place_erf_forms_hypothesis(xs):
    x = np.array(xs)
    _same_bytes(chlo.erf(x), erf_plain(x))
    _same_bytes(chlo.erfc(x), erfc_plain(x))
