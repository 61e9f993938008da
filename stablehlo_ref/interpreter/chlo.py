"""CHLO kernels: the special functions (lgamma, digamma, polygamma, zeta, erf, erfc, erf_inv,
bessel_i1e), inverse trigonometric and hyperbolic functions, next_after, the is_*inf tests,
conj, constants, square, mulhi, and the numpy-style broadcasting binary ops.

Every real special function is computed in float64 with vectorized series, continued
fractions or asymptotic expansions (no per-element Python), then rounded once to the result
type. For f32, f16 and bf16 results, lgamma, digamma, erf, erfc and erf_inv first evaluate a cheaper f64 form
whose error is bounded and compute an element again the accurate way only where that bound
leaves its rounding open: the same bytes, several times faster. Edge cases (poles, domain errors, infinities) follow the semantics of upstream's CHLO
decompositions."""
from __future__ import annotations

import math

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from .elementwise import make_complex
from .numerics import contiguous, elem, from_compute
from .registry import KERNELS, args, kernel, register_table

_PI = np.pi
_EULER = 0.57721566490153286061
_LOG_PI = 1.1447298858494002
_HALF_LOG_2PI = 0.91893853320467274178
# B_2, B_4, ..., B_26
_BERNOULLI = [1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
              43867 / 798, -174611 / 330, 854513 / 138, -236364091 / 2730, 8553103 / 6]


def _rt(op, i=0):
    return elem(op.results[i].type)


def _f64(x):
    return np.asarray(x).astype(np.float64)


def _real_unary(op, x, fn, complex_fn=None, narrow=None):
    """`fn` in f64, rounded once to the result type; `narrow(x, dtype)` instead, where given,
    for f32, f16 and bf16 results (a cheaper form that rounds to the same values)."""
    # (numpy floating-point warnings are off for the whole run: set by the evaluator)
    et = _rt(op)
    if narrow is not None and et.name in _NARROW:
        return narrow(_f64(x), et.dtype)
    if et.is_complex:
        if complex_fn is None:
            raise NotImplementedOpError(op.name, f"dtype {et}")
        z = np.asarray(x).astype(np.complex128)
        return np.asarray(complex_fn(z)).astype(et.dtype)
    if not et.is_float:
        raise NotImplementedOpError(op.name, f"dtype {et}")
    return from_compute(fn(_f64(x)), et)


# ------------------------------------------------------------------ special functions (f64)

_NARROW = ("f32", "f16", "bf16")


def _sinpi(x):
    """sin(pi x) with exact argument reduction (x finite)."""
    r = np.fmod(x, 2.0)                 # exact
    r = np.where(r > 1, r - 2, np.where(r < -1, r + 2, r))   # [-1, 1], exact
    s = np.where(r > 0.5, 1 - r, np.where(r < -0.5, -1 - r, r))  # [-0.5, 0.5], exact
    return np.sin(_PI * s)


def _tanpi(x):
    """tan(pi x) with exact argument reduction (period 1)."""
    r = x - np.round(x)                 # [-0.5, 0.5], exact
    return np.tan(_PI * r)


def hurwitz_zeta(s, q):
    """zeta(s, q) = sum_k (q + k)^-s for s > 1 by Euler-Maclaurin summation."""
    s = _f64(s)
    q = _f64(q)
    s, q = np.broadcast_arrays(s, q)
    with np.errstate(all="ignore"):
        n_extra = np.where(q < 0, np.minimum(np.ceil(-np.where(np.isfinite(q), q, 0)), 4096), 0)
        n_terms = (12 + n_extra).astype(np.int64)
        total = np.zeros(s.shape)
        for k in range(int(n_terms.max()) if n_terms.size else 0):
            term = np.power(q + k, -s)
            total = total + np.where(k < n_terms, term, 0.0)
        a = q + n_terms
        total = total + np.power(a, 1 - s) / (s - 1) + 0.5 * np.power(a, -s)
        fact = s.copy()             # s (s+1) ... (s+2j-2) / (2j)!
        apow = np.power(a, -s - 1)
        for j, b in enumerate(_BERNOULLI, start=1):
            if j > 1:
                fact = fact * (s + 2 * j - 3) * (s + 2 * j - 2) / ((2 * j - 1) * (2 * j))
            else:
                fact = fact / 2
            total = total + b * fact * apow
            apow = apow / (a * a)
    return total


# double-double arithmetic (pairs hi + lo, |lo| <= ulp(hi) / 2), vectorized: for the
# Hurwitz sum at negative q with odd s, whose terms cancel
def _two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(a):
    c = 134217729.0 * a                   # |a| < 1 here: no overflow
    hi = c - (c - a)
    return hi, a - hi


def _two_prod(a, b):
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _dd_mul(ah, al, bh, bl):
    p, e = _two_prod(ah, bh)
    return _two_sum(p, e + (ah * bl + al * bh))


def _dd_add(ah, al, bh, bl):
    s, e = _two_sum(ah, bh)
    return _two_sum(s, e + (al + bl))


def _dd_norm(h, l, e):
    """(h + l) * 2^e with h brought into [0.5, 1) (exponent moved into the integer e)."""
    f, x = np.frexp(h)
    return f, np.ldexp(l, -x), e + x


def _dd_inv_pow(bh, bl, s):
    """(bh + bl)^-s for double-doubles bh + bl != 0 and integers s >= 1, as a double-double,
    to ~2^-100 relative (binary powering with the exponent kept apart, so no step over- or
    underflows; only the final scaling can)."""
    bh, e0 = np.frexp(bh)
    bl = np.ldexp(bl, -e0)
    be = e0.astype(np.int64)
    rh, rl, re = np.ones_like(bh), np.zeros_like(bh), np.zeros(bh.shape, np.int64)
    k = s.astype(np.int64)
    while np.any(k > 0):
        odd = (k & 1) == 1
        ph, pl = _dd_mul(rh, rl, bh, bl)
        ph, pl, pe = _dd_norm(ph, pl, re + be)
        rh, rl, re = np.where(odd, ph, rh), np.where(odd, pl, rl), np.where(odd, pe, re)
        k = k >> 1
        if np.any(k > 0):
            bh, bl = _dd_mul(bh, bl, bh, bl)
            bh, bl, be = _dd_norm(bh, bl, 2 * be)
    q1 = 1.0 / rh                                           # 1 / (rh + rl), then one correction
    p, e = _two_prod(q1, rh)
    r = ((1.0 - p) - e) - q1 * rl
    qh, ql = _two_sum(q1, q1 * r)
    return np.ldexp(qh, -re), np.ldexp(ql, -re)


NEG_Q_MAX_TERMS = 4096


NEG_Q_TAIL_TERMS = 12


def _hurwitz_zeta_neg_q_odd(s, q):
    """zeta(s, q) = sum_k (q + k)^-s for q < 0 not an integer and odd integer s > 1, on flat
    arrays. The m = ceil(-q) terms with q + k < 0 are negative and cancel against the positive
    ones of nearly opposite bases (exactly, for half-integer q), which a direct sum in f64
    does not survive. So every term up to 12 bases past the mirror image of the negative ones
    is formed in double-double (bases q + n as double-doubles, binary powering), each negative
    term added to the positive term of the base nearest its mirror image first, and only the
    Euler-Maclaurin remainder past them, (q + K)^(1-s) / (s - 1) in size, in f64 (its base's
    rounding corrected to first order); one rounding at the end. The error is then a few
    units of 2^-53 times that remainder, over the result: far below an ULP except right at
    the zeros of zeta(s, .) at negative q."""
    s = np.asarray(s, np.float64)
    q = np.asarray(q, np.float64)
    m = np.ceil(-q)
    J0 = np.floor(-2 * q - m + 0.5)          # the negative base q + k pairs with q + m + J0 - k
    hi, lo = np.zeros_like(q), np.zeros_like(q)
    zero = np.zeros_like(q)
    with np.errstate(all="ignore"):
        for k in range(int(m.max()) if m.size else 0):
            live = k < m
            b = np.where(live, q + k, -1.0)                      # exact: |q + k| <= |q|
            j = J0 - k
            paired = live & (j >= 0)
            ch, cl = _two_sum(q, np.where(paired, m + j, 1.0 - q))
            ph, pl = _dd_inv_pow(ch, cl, s)
            bh, bl = _dd_inv_pow(b, zero, s)                     # b^-s (negative for odd s)
            sh, sl = _dd_add(ph, pl, bh, bl)                     # c^-s + b^-s first
            th, tl = np.where(paired, sh, bh), np.where(paired, sl, bl)
            hi, lo = _dd_add(hi, lo, np.where(live, th, 0.0), np.where(live, tl, 0.0))
        # an unpaired first positive base q + m (when -(q + m - 1)'s mirror lies past it)
        first = (J0 - m + 1 >= 1)
        fh, fl = _two_sum(q, m)
        fh, fl = _dd_inv_pow(fh, fl, s)
        hi, lo = _dd_add(hi, lo, np.where(first, fh, 0.0), np.where(first, fl, 0.0))
        start = m + np.maximum(J0, -1) + 1                       # the first base past the pairs
        for t in range(NEG_Q_TAIL_TERMS):
            th, tl = _two_sum(q, start + t)
            th, tl = _dd_inv_pow(th, tl, s)
            hi, lo = _dd_add(hi, lo, th, tl)
        ah, al = _two_sum(q, start + NEG_Q_TAIL_TERMS)
        rest = hurwitz_zeta(s, ah) - s * al * hurwitz_zeta(s + 1, ah)
        hi, lo = _dd_add(hi, lo, rest, zero)
    return hi


def _zeta_ints(kmax):
    return hurwitz_zeta(np.arange(2, kmax + 1, dtype=np.float64), np.ones(kmax - 1))


_ZETA_K = _zeta_ints(64)          # zeta(2) .. zeta(64)


# the coefficients of the two series below, highest first
_SERIES1 = [(-1) ** k * _ZETA_K[k - 2] / k for k in range(63, 1, -1)]
_SERIES2 = [(-1) ** k * (_ZETA_K[k - 2] - 1.0) / k for k in range(63, 1, -1)]


def _series(coeffs, z):
    """acc = (acc + c) * z for each c of `coeffs`, from acc = 0: in place on a float64 array
    (the same roundings; nothing to do for no elements)."""
    acc = np.zeros_like(z)
    if acc.__class__ is not np.ndarray or acc.dtype != np.float64 or z.__class__ is not np.ndarray:
        for c in coeffs:
            acc = (acc + c) * z
        return acc
    if acc.size:
        add, mul = np.add, np.multiply
        for c in coeffs:
            add(acc, c, out=acc)
            mul(acc, z, out=acc)
    return acc


def _lgamma_series1(z):
    """lgamma(1 + z), |z| <= 0.5."""
    return (_series(_SERIES1, z) - _EULER) * z


def _lgamma_series2(z):
    """lgamma(2 + z), |z| <= 0.5."""
    return (_series(_SERIES2, z) + (1 - _EULER)) * z


def _lgamma_stirling(x):
    """lgamma(x), x >= 10."""
    inv = 1.0 / x
    inv2 = inv * inv
    acc = np.zeros_like(x)
    for k in range(10, 0, -1):
        b = _BERNOULLI[k - 1]
        acc = acc * inv2 + b / (2 * k * (2 * k - 1))
    return (x - 0.5) * np.log(x) - x + _HALF_LOG_2PI + acc * inv


def _lgamma_pos(x, series1_too=None):
    """lgamma(x) for x >= 0.5 (finite). `series1_too`: also `_lgamma_series1` of that array
    (one series call for both), returned second."""
    out = np.empty_like(x)
    m1 = x < 1.5
    m2 = (x >= 1.5) & (x < 2.5)
    m3 = (x >= 2.5) & (x < 10)
    m4 = x >= 10
    if series1_too is None:
        out[m1] = _lgamma_series1(x[m1] - 1)
    else:
        out[m1], series1_too = _joined(_lgamma_series1, [x[m1] - 1, series1_too])
    z2 = x[m2] - 2
    if not m3.any():
        out[m2] = _lgamma_series2(z2)
    else:
        v = x[m3]
        n = np.floor(v - 1.5)              # shifts down to [1.5, 2.5)
        prod = np.ones_like(v)
        y = v.copy()
        for _ in range(8):
            more = n > 0
            y = np.where(more, y - 1, y)
            prod = np.where(more, prod * y, prod)
            n = n - 1
        out[m2], s3 = _joined(_lgamma_series2, [z2, y - 2])
        out[m3] = np.log(prod) + s3
    out[m4] = _lgamma_stirling(x[m4])
    return out if series1_too is None else (out, series1_too)


def _lgamma_reflect(x):
    """log|Gamma(x)| for x < -0.5 by reflection (inaccurate near its zeros only)."""
    return _LOG_PI - np.log(np.abs(_sinpi(x))) - _lgamma_pos(1.0 - x)


def _taylor(coeffs, t):
    """sum_{k>=1} coeffs[k-1] t^k (Horner; in place on a float64 array: the same roundings)."""
    acc = np.full_like(t, coeffs[-1])
    if acc.__class__ is np.ndarray and acc.dtype == np.float64 and t.__class__ is np.ndarray:
        if acc.size:
            add, mul = np.add, np.multiply
            for c in coeffs[-2::-1]:
                mul(acc, t, out=acc)
                add(acc, c, out=acc)
        return acc * t
    for c in coeffs[-2::-1]:
        acc = acc * t + c
    return acc * t


def _near_roots(x, out, roots):
    """Replace out where x lies within a root's window by the Taylor expansion there, a series
    in the offset over the window (see `compute_roots`; where windows overlap, the last
    root's). All roots at once: each element's window test, and
    its root's Horner steps on a row of per-element coefficients, are the operations a loop
    over the roots does for it (the same roundings), in a few numpy calls rather than a
    Horner scheme's hundred per root."""
    table = _root_arrays(roots)
    if table is None or x.ndim != 1:
        for hi, lo, w, coeffs in roots:
            m = np.abs(x - hi) < w
            if m.any():
                t = (x[m] - hi) - lo
                out[m] = _taylor(coeffs, t / w)
        return out
    HI, LO, W, CT = table
    near = np.abs(x[:, None] - HI) < W           # (elements, roots)
    hit = near.any(axis=1)
    if not hit.any():
        return out
    idx = (len(HI) - 1) - np.argmax(near[hit, ::-1], axis=1)    # the last root that holds it
    t = (x[hit] - HI[idx]) - LO[idx]
    t /= W[idx]                                  # (the series is in t / window)
    cols = CT[:, idx]                            # the coefficients by power, then element
    acc = cols[-1].copy()
    add, mul = np.add, np.multiply
    for c in cols[-2::-1]:
        mul(acc, t, out=acc)
        add(acc, c, out=acc)
    out[hit] = acc * t
    return out


_ROOT_ARRAYS = {}


def _root_arrays(roots):
    """(hi, lo, window, coefficients by power (terms, roots)) of a list of roots, as arrays
    (kept per list); None where the roots' series differ in length."""
    hit = _ROOT_ARRAYS.get(id(roots))
    if hit is not None and hit[0] is roots:
        return hit[1]
    if len({len(r[3]) for r in roots}) != 1:
        table = None
    else:
        table = (np.array([r[0] for r in roots]), np.array([r[1] for r in roots]),
                 np.array([r[2] for r in roots]),
                 np.ascontiguousarray(np.array([r[3] for r in roots], dtype=np.float64).T))
    _ROOT_ARRAYS[id(roots)] = (roots, table)
    return table


def _joined(fn, parts):
    """[fn(p) for p in parts] by one call of fn on the parts' concatenation: the same values
    for an fn that computes each element from that element alone (all the series here), at
    the numpy call overhead of one call."""
    if len(parts) == 1:
        return [fn(parts[0])]
    r = fn(np.concatenate([p.reshape(-1) for p in parts]))
    out, i = [], 0
    for p in parts:
        out.append(r[i:i + p.size].reshape(p.shape))
        i += p.size
    return out


_ROOTS = {}
_X0 = (1.4616321449683622, 1.2688171337848788e-17)     # the positive zero of digamma, hi + lo
# the roots and their Taylor coefficients as `compute_roots` gives them, saved once so that a
# fresh process does not spend 2-3 s of decimal arithmetic on them; a slow test recomputes
# them and compares every float
ROOTS_TABLE = "gamma_roots.json"
_ROOT_KINDS = ("digamma_pos", "digamma", "lgamma")


def _roots(kind):
    """The roots of `kind` (see `compute_roots`): read from ROOTS_TABLE beside this module,
    or computed where that file is missing or does not hold them."""
    r = _ROOTS.get(kind)
    if r is not None:
        return r
    if not _ROOTS:
        # every kind at once: lgamma and digamma each read the whole file otherwise
        _ROOTS.update(_read_roots_table() or {})
    if kind not in _ROOTS:
        _ROOTS[kind] = compute_roots(kind)
    return _ROOTS[kind]


def _entry(e):
    return (float(e[0]), float(e[1]), float(e[2]), np.array(e[3], dtype=np.float64))


def _read_roots_table():
    import json
    from pathlib import Path
    try:
        raw = json.loads((Path(__file__).with_name(ROOTS_TABLE)).read_text())
        return {"digamma_pos": _entry(raw["digamma_pos"]),
                "digamma": [_entry(e) for e in raw["digamma"]],
                "lgamma": [_entry(e) for e in raw["lgamma"]]}
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def roots_table_json() -> str:
    """ROOTS_TABLE's text, computed anew (floats in Python's shortest round-trip form)."""
    import json

    def entry(e):
        return [e[0], e[1], e[2], [float(c) for c in e[3]]]
    # one root a line; json writes the infinities of overflowing coefficients as Infinity,
    # which its reader takes back
    lines = ['"digamma_pos": ' + json.dumps(entry(compute_roots("digamma_pos")))]
    for kind in ("digamma", "lgamma"):
        lines.append(f'"{kind}": [\n' + ",\n".join(json.dumps(entry(e)) for e in compute_roots(kind)) + "]")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def compute_roots(kind):
    """[(hi, lo, window, Taylor coefficients)] of the zeros of lgamma or digamma (kind), in
    decimal arithmetic (see gamma_roots). digamma: its zero in each (-n, -n + 1), n = 1..30;
    digamma_pos: its positive zero x0 (120 terms, used on [x0 - 1/2, x0 + 1)); lgamma: both zeros in each
    (-n - 1, -n), n = 2..13 (from -14 on, the zeros lie within 1e-11 of an integer). Windows: half
    the distance to the nearest singularity (the integers), where the series gains a bit per
    term; 64 terms. For these two kinds the coefficients are of the series in s = t / window
    (c_k window^k, formed in decimal): from -9 on the zeros lie within 1e-5 of the integers,
    and the coefficients of t itself, about window^-k, overflow to inf there (lgamma gave NaN
    and inf next to those zeros)."""
    from decimal import Decimal
    from . import gamma_roots as G
    nterms = 64
    if kind == "digamma_pos":
        r = G.newton_dec(G.digamma_dec, lambda v: G.hurwitz_dec(2, v)[0], _X0[0])
        hi, lo = G.split(r)
        z = G.hurwitz_dec(121, r)
        return (hi, lo, 0.0, np.array([float(z[k - 1]) * (1 if k % 2 else -1) for k in range(1, 121)]))
    elif kind == "digamma":
        out = []
        for n in range(1, 31):
            a, b = float(np.nextafter(-n, 0)), float(np.nextafter(-n + 1, -n))
            r0 = G.bisect(lambda v: float(_digamma_reflect(np.array([v]))[0]), a, b)
            r = G.newton_dec(G.digamma_dec, lambda v: G.hurwitz_dec(2, v)[0], r0)
            hi, lo = G.split(r)
            z = G.hurwitz_dec(nterms + 1, r)          # zeta(2..nterms+1, r)
            d = min(hi + n, -n + 1 - hi)
            w = Decimal(0.5 * d)
            coeffs = np.array([float(z[k - 1] * w ** k) * (1 if k % 2 else -1)
                               for k in range(1, nterms + 1)])
            out.append((hi, lo, 0.5 * d, coeffs))
        return out
    else:
        dig = compute_roots("digamma")
        out = []
        for n in range(2, 14):
            rd = dig[n][0]                             # digamma's zero in (-n - 1, -n): |Gamma|'s minimum
            for a, b in ((float(np.nextafter(-n - 1, 0)), rd), (rd, float(np.nextafter(-n, -n - 1)))):
                r0 = G.bisect(lambda v: float(_lgamma_reflect(np.array([v]))[0]), a, b)
                r = G.newton_dec(G.lgamma_dec, G.digamma_dec, r0, bracket=(-n - 1, -n))
                hi, lo = G.split(r)
                z = G.hurwitz_dec(nterms, r)           # zeta(2..nterms, r)
                d = min(hi + n + 1, -n - hi)
                w = Decimal(0.5 * d)
                coeffs = [float(G.digamma_dec(r) * w)]
                coeffs += [float(z[k - 2] * w ** k / k) * (1 if k % 2 == 0 else -1)
                           for k in range(2, nterms + 1)]
                out.append((hi, lo, 0.5 * d, np.array(coeffs)))
        return out


def lgamma(x):
    x = _f64(x)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x)
        xs = np.where(finite, x, 1.0)
        small = np.abs(xs) < 0.5
        refl = xs <= -0.5
        # |x| < 0.5: lgamma(1 + x) - log|x| (the series in x itself: 1 + x would round);
        # x <= -0.5: by reflection (`_lgamma_reflect`); one `_lgamma_pos` for both sides
        any_refl = bool(refl.any())
        pos_in = np.where(small | refl, 1.0, xs).reshape(-1)
        if any_refl:
            xr = np.where(refl, xs, -0.75)
            pos_in = np.concatenate([pos_in, (1.0 - xr).reshape(-1)])
        pos, s1 = _lgamma_pos(pos_in, np.where(small, xs, 0.0))
        sm = s1 - np.log(np.abs(np.where(small, xs, 1.0)))
        out = np.where(small, sm, pos[:xs.size].reshape(xs.shape))
        if any_refl:
            r = _LOG_PI - np.log(np.abs(_sinpi(xr))) - pos[xs.size:].reshape(xs.shape)
            r = np.where(refl & (xs == np.floor(xs)), np.inf, r)
            out = np.where(refl, r, out)
            neg = refl & (xs > -14)
            if neg.any():
                sub = out[neg]
                out[neg] = _near_roots(xs[neg], sub, _roots("lgamma"))
        out = np.where(np.isinf(x), np.inf, out)
        out = np.where(np.isnan(x), x, out)
    return out


def _digamma_asym(x):
    inv2 = 1.0 / (x * x)
    acc = np.zeros_like(x)
    for k in range(10, 0, -1):
        acc = acc * inv2 + _BERNOULLI[k - 1] / (2 * k)
    return np.log(x) - 0.5 / x - acc * inv2


def _digamma_pos(x, taylor_too=None):
    """digamma(x), x >= 1 (finite): the expansion about its zero x0 on [1, x0 + 1); above,
    shifted down into [x0, x0 + 1) (exactly: x - n) with the recurrence's reciprocals summed
    with compensation (all terms positive there); the asymptotic series from 10.
    `taylor_too`: also that expansion at those offsets from x0 (one Horner scheme for both),
    returned second."""
    out = np.empty_like(x)
    big = x >= 10
    out[big] = _digamma_asym(x[big])
    mid = ~big
    hi, lo, _, coeffs = _roots("digamma_pos")
    if taylor_too is not None:
        if not mid.any():
            return out, _taylor(coeffs, taylor_too)
    if mid.any():
        v = x[mid]
        n = np.maximum(np.ceil(v - (hi + 1.0)), 0.0)
        y = v - n
        if taylor_too is None:
            s = _taylor(coeffs, (y - hi) - lo)
        else:
            s, taylor_too = _joined(lambda t: _taylor(coeffs, t), [(y - hi) - lo, taylor_too])
        c = np.zeros_like(s)
        for k in range(9):
            more = k < n
            r = np.where(more, 1.0 / (y + k), 0.0)
            s, e = _two_sum(s, r)
            c = c + e
        out[mid] = s + c
    return out if taylor_too is None else (out, taylor_too)


def _digamma_reflect(x):
    """digamma(x), x < 1 by reflection (inaccurate near its zeros only)."""
    return _digamma_pos(1.0 - x) - _PI / _tanpi(x)


def digamma(x):
    x = _f64(x)
    with np.errstate(all="ignore"):
        finite = np.isfinite(x)
        xs = np.where(finite, x, 1.0)
        out = np.empty_like(xs)
        ge1 = xs >= 1
        unit = (xs > 0) & ~ge1
        neg = xs <= 0
        # one `_digamma_pos` for x >= 1 and the reflection's 1 - x (x <= 0), whose expansion
        # about x0 also gives 0 < x < 1: digamma(x + 1) - 1/x, about x0 - 1 (x + 1 itself
        # would round)
        hi, lo, _, coeffs = _roots("digamma_pos")
        vu = xs[unit]
        vn = xs[neg]
        pos, tu = _digamma_pos(np.concatenate([xs[ge1], 1.0 - vn]),
                               (vu - (hi - 1.0)) - lo)
        k = int(np.count_nonzero(ge1))
        out[ge1] = pos[:k]
        out[unit] = tu - 1.0 / vu
        if vn.size:
            sub = pos[k:] - _PI / _tanpi(vn)      # _digamma_reflect(vn)
            out[neg] = _near_roots(vn, sub, _roots("digamma"))
        pole = (x <= 0) & (x == np.floor(x))
        out = np.where(pole, np.nan, out)
        out = np.where(x == np.inf, np.inf, out)
        out = np.where(x == -np.inf, np.nan, out)
        out = np.where(np.isnan(x), x, out)
    return out


def zeta(s, q):
    s = _f64(s)
    q = _f64(q)
    s, q = np.broadcast_arrays(s, q)
    with np.errstate(all="ignore"):
        out = hurwitz_zeta(s, q)
        neg_odd = ((q < 0) & (q != np.floor(q)) & (q >= -NEG_Q_MAX_TERMS) & (s > 1) & (s == np.floor(s))
                   & (np.fmod(s, 2) == 1) & (s < 2.0 ** 53))
        if np.any(neg_odd):
            out = np.array(out, copy=True)
            out[neg_odd] = _hurwitz_zeta_neg_q_odd(s[neg_odd], q[neg_odd])
        out = np.where(s < 1, np.nan, out)
        q_le0 = q <= 0
        s_int = s == np.floor(s)
        out = np.where(q_le0 & ~s_int, np.nan, out)
        at_pole = q_le0 & (q == np.floor(q))
        s_even = s_int & (np.fmod(s, 2) == 0)
        out = np.where(at_pole, np.where(s_even, np.inf, np.nan), out)
        out = np.where(np.isnan(s) | np.isnan(q), np.nan, out)
        # last, as in CHLO's decomposition: zeta(1, q) = +inf for every q, NaN included
        out = np.where(s == 1, np.inf, out)
    return out


_FACTORIALS = np.array([float(math.factorial(k)) for k in range(171)] + [np.inf])


def polygamma(n, x):
    n = _f64(n)
    x = _f64(x)
    n, x = np.broadcast_arrays(n, x)
    with np.errstate(all="ignore"):
        sign = 2 * np.fmod(n, 2) - 1
        # n! from a table of correctly rounded factorials (exp(lgamma(n + 1)) would carry
        # lgamma's absolute error, relative error ~ eps * n log n, into every result)
        idx = np.where((n >= 0) & (n <= 170) & (n == np.floor(n)), n, 171).astype(np.int64)
        out = sign * _FACTORIALS[idx] * zeta(n + 1, x)
        out = np.where(n == 0, digamma(x), out)
        bad = (n != np.floor(n)) | (n < 0)
        out = np.where(bad, np.nan, out)
    return out


# lgamma and digamma for f32, f16 and bf16 results. The accurate kernels above spend their time
# in numpy's per-call overhead (Horner schemes of 62-120 steps, masks and gathers per regime),
# which for small arrays is nearly all of it. The forms below take one path for every element,
# a few dozen numpy calls in all. With p = x (x >= 0) or 1 - x (x < 0: the reflection formulas
# lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), digamma(x) = digamma(1 - x) - pi / tan(pi x)),
#   lgamma(p)  = S(p + 6) - log(p (p + 1) ... (p + 5)),      S: Stirling's series, 12 terms
#   digamma(p) = A(p + 6) - sum_{k < 6} 1 / (p + k),          A: the asymptotic series, 12 terms
# the six factors taken in pairs, (p + k)(p + 5 - k) = q + k (5 - k) with q = p (p + 5), so that
# their product and the sum of their reciprocals cost a handful of calls. Past the shift both
# series stop with an error below their first term left out (DLMF 5.11(ii): for real arguments
# the remainder is bounded by that term and has its sign): for y >= 6, 7.7e-17 (S) and 3.2e-16
# (A) in absolute terms.
#
# The difference cancels where the result is small against its terms. For lgamma on
# 1/2 <= p <= 7/2 (zeros at 1 and 2, |lgamma| < 0.13 between) the Taylor series of
# h(t) = lgamma(3 + t) - log 2 is taken instead, with c = round(p) in {1, 2, 3}, t = p - c:
#   lgamma(p) = lgamma(3 + t) - log(p (p + 1) ... (2 + t)) = h(t) - log1p(w),
# 1 + w being that product (of two factors for c = 1, one for c = 2, none for c = 3) over 2:
#   w = t (3/2 + t/2) (c = 1), t/2 (c = 2), -1/2 (c = 3)
# (t exact, w within an ULP, relative). Both terms vanish with t at p = 1 and 2, with
# slopes psi(3) = 0.92 against 3/2 and 1/2, so the relative error stays a few units there; h's
# series converges as (|t| / 3)^k (lgamma(3 + t)'s nearest singularity is at t = -3), and 20
# terms leave a remainder below 2^-55 of |lgamma(p)| for |t| <= 1/2. For digamma next to its
# positive zero x0 = 1.4616... (|x - x0| <= 1/16) the Taylor series about x0 (12 terms of its
# accurate path's, remainder below 2^-55 of the value) replaces the difference. Each Taylor
# series runs in the same Horner loop as the asymptotic one, one row each of a 2-D array.
#
# Error: counting a correctly rounded operation as u = 2^-53 relative and a libm call (log,
# log1p, sin, tan) as 2u, and writing M for the size of the terms the result is formed from
# (S or |h|, |log(...)|, |log(pi / |sin|)|; A, the reciprocals' sum, |pi / tan|, or |f| in
# digamma's Taylor window), the cheap value f is within 23u M of the exact value and the
# accurate path within 16 ULP (32u |f|) of it. An element's rounding is taken from f unless
# f +- 2^-42 (M + |f|) round differently: a margin of more than 64 over both errors together.
# Where the terms cancel by more than 2^20 (next to any zero: at negative x, the reflection's)
# and wherever f is not finite (infinities, NaN, the poles), the element is computed again by
# the accurate path; except that in an array with negative elements the poles x <= 0 are found
# from x itself (sin(pi x) = 0) and take the accurate path's +inf (lgamma) or NaN (digamma).
_GAMMA_NARROW_TOL = 2.0 ** -42
_GAMMA_NARROW_CANCEL = 2.0 ** 20
_ASYMPTOTIC_TERMS = 12
_LGAMMA_TAYLOR_TERMS = 20
_DIGAMMA_WINDOW = 1 / 16
# w = (b t + a) t + g for c = 1, 2, 3 (columns; column 0 unused): rows a, b, g
_LGAMMA_W = np.array([[0.0, 1.5, 0.5, 0.0], [0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 0.0, -0.5]])
_GAMMA_NARROW_COLS = {}


def _gamma_narrow_cols(kind):
    """The coefficients of the rows' Horner schemes, one (rows, 1) column per power (the
    constant term first; the shorter row padded with zeros): lgamma's rows are Stirling's series
    in 1 / y^2 and h's Taylor series in t; digamma's the asymptotic series in 1 / y^2 and its
    Taylor series about x0 (from its accurate path's table), with x0 as hi + lo."""
    hit = _GAMMA_NARROW_COLS.get(kind)
    if hit is not None:
        return hit
    n = _ASYMPTOTIC_TERMS
    if kind == "lgamma":
        k = np.arange(2, _LGAMMA_TAYLOR_TERMS + 1)
        zeta3 = hurwitz_zeta(k.astype(np.float64), np.full(k.size, 3.0))     # zeta(k, 3)
        taylor = [1.5 - _EULER] + list((-1.0) ** k * zeta3 / k)
        rows = [[_BERNOULLI[j - 1] / (2 * j * (2 * j - 1)) for j in range(1, n + 1)], taylor]
        centre = None
    else:
        hi, lo, _, coeffs = _roots("digamma_pos")
        rows = [[_BERNOULLI[j - 1] / (2 * j) for j in range(1, n + 1)], list(coeffs[:n])]
        centre = (hi, lo)
    width = max(len(r) for r in rows)
    rows = [list(r) + [0.0] * (width - len(r)) for r in rows]
    cols = tuple(np.array(c, dtype=np.float64)[:, None] for c in zip(*rows))
    _GAMMA_NARROW_COLS[kind] = hit = (cols, centre)
    return hit


def _rows_horner(cols, v):
    """sum_k cols[k] v^k for each row of v (rows, n), the rows' coefficients side by side."""
    acc = v * cols[-1]
    acc += cols[-2]
    for c in cols[-3::-1]:
        acc *= v
        acc += c
    return acc


def _shift_product(p):
    """(q, the product p (p + 1) ... (p + 5)) with q = p (p + 5): the factors in pairs,
    (p + k)(p + 5 - k) = q + k (5 - k)."""
    q = p + 5.0
    q *= p
    t = q + 4.0
    prod = q + 6.0
    prod *= t
    prod *= q
    return q, prod


def _gamma_narrow_finish(x, f, m, dtype, accurate, exact=None):
    """f rounded to `dtype`, where f lies within 2^-42 (m + |f|) of `accurate(x)` (elements of
    `exact`: f is exact); the elements whose rounding that interval leaves open, whose terms
    (size m) cancel by more than 2^20, or whose f is not finite, computed again by
    `accurate`."""
    af = np.abs(f)
    d = m + af
    d *= _GAMMA_NARROW_TOL
    r = f.astype(dtype)
    # compared as values, not bytes: +-0 are equal (f is an exact zero with the accurate path's
    # sign at lgamma's 1 and 2) and NaN is unequal to itself. Every other element kept has
    # d < |f|, so both ends have f's sign
    lo = f - d
    f += d
    unsure = lo.astype(dtype) != f.astype(dtype)
    af *= _GAMMA_NARROW_CANCEL
    unsure |= af < m
    if exact is not None:
        np.copyto(unsure, False, where=exact)
    redo = np.flatnonzero(unsure)
    if redo.size:
        r.put(redo, accurate(x.take(redo)).astype(dtype))
    return r


def lgamma_narrow(x, dtype):
    """lgamma(x) rounded to `dtype` (f32, f16 or bf16), the bytes of `lgamma(x).astype(dtype)`:
    see the forms above."""
    x = _f64(x)
    shape = x.shape
    x = x.reshape(-1)
    cols, _ = _gamma_narrow_cols("lgamma")
    with np.errstate(all="ignore"):
        neg = x < 0
        any_neg = bool(neg.any())
        p = np.where(neg, 1.0 - x, x) if any_neg else x
        v = np.empty((2, x.size))
        c = np.round(p)                           # (fmax, fmin: NaN to 1, a valid index)
        np.fmax(c, 1.0, out=c)
        np.fmin(c, 3.0, out=c)
        t = np.subtract(p, c, out=v[1])           # exact where |t| <= 1/2
        a, b, g = _LGAMMA_W[:, c.astype(np.intp)]
        w = b * t
        w += a
        w *= t
        w += g
        _, prod = _shift_product(p)
        y = p + 6.0
        inv = 1.0 / y
        np.multiply(inv, inv, out=v[0])
        acc = _rows_horner(cols, v)
        s = y - 0.5                               # S(y) = (y - 1/2) log y - y + log(2 pi) / 2 + ...
        s *= np.log(y)
        s -= y
        tail = acc[0]
        tail *= inv
        tail += _HALF_LOG_2PI
        s += tail
        h = acc[1]
        h *= t
        taylor = np.abs(t) <= 0.5
        # lgamma(p) = h - log1p(w) or S - log(prod)
        lg = np.log(prod)
        np.copyto(lg, np.log1p(w), where=taylor)
        np.copyto(s, h, where=taylor)
        f = s - lg
        np.abs(s, out=s)
        np.abs(lg, out=lg)
        m = s
        m += lg
        pole = None
        if any_neg:
            # log|Gamma(x)| = log(pi / |sin(pi x)|) - lgamma(1 - x); x - round(x) is exact, and
            # zero only at the integers: at those <= 0 (the poles) lgamma is +inf
            r = x - np.round(x)
            np.abs(r, out=r)
            pole = r == 0
            pole &= x <= 0
            r *= _PI
            sn = np.sin(r)                        # |sin(pi x)|
            np.divide(_PI, sn, out=sn)
            np.log(sn, out=sn)
            np.subtract(sn, f, out=f, where=neg)
            np.add(m, sn, out=m, where=neg)
            np.copyto(f, np.inf, where=pole)
        # lgamma(1) is -0 on the accurate path (-gamma * 0), and +0 here
        np.copyto(f, -0.0, where=x == 1.0)
        r = _gamma_narrow_finish(x, f, m, dtype, lgamma, pole)
    return r.reshape(shape)


def digamma_narrow(x, dtype):
    """digamma(x) rounded to `dtype` (f32, f16 or bf16), the bytes of
    `digamma(x).astype(dtype)`: see the forms above."""
    x = _f64(x)
    shape = x.shape
    x = x.reshape(-1)
    cols, (hi, lo) = _gamma_narrow_cols("digamma")
    with np.errstate(all="ignore"):
        neg = x < 0
        any_neg = bool(neg.any())
        p = np.where(neg, 1.0 - x, x) if any_neg else x
        # sum_{k < 6} 1 / (p + k) = (2 p + 5) (1 / q + 1 / (q + 4) + 1 / (q + 6))
        q, _ = _shift_product(p)
        rs = 1.0 / q
        t = q + 4.0
        np.divide(1.0, t, out=t)
        rs += t
        np.add(q, 6.0, out=t)
        np.divide(1.0, t, out=t)
        rs += t
        np.multiply(p, 2.0, out=t)
        t += 5.0
        rs *= t
        y = p + 6.0
        inv = 1.0 / y
        v = np.empty((2, x.size))
        np.multiply(inv, inv, out=v[0])
        np.subtract(x, hi, out=v[1])              # exact near x0; then its low part
        v[1] -= lo
        acc = _rows_horner(cols, v)
        a = np.log(y)                             # A(y) = log y - 1 / (2 y) - sum ... / y^2k
        inv *= 0.5
        a -= inv
        tail = acc[0]
        tail *= v[0]
        a -= tail
        f = a - rs
        m = a
        m += rs                                   # (A > 0: A(6) = 1.71)
        pole = None
        if any_neg:
            # digamma(x) = digamma(1 - x) - pi / tan(pi x); x - round(x) is exact, and zero only
            # at the integers: at those <= 0 (the poles) digamma is NaN
            c = x - np.round(x)
            c *= _PI
            c = np.tan(c)
            pole = c == 0
            pole &= x <= 0
            np.divide(_PI, c, out=c)
            np.subtract(f, c, out=f, where=neg)
            np.abs(c, out=c)
            np.add(m, c, out=m, where=neg)
            np.copyto(f, np.nan, where=pole)
        taylor = acc[1]
        taylor *= v[1]
        near = np.abs(v[1]) <= _DIGAMMA_WINDOW
        np.copyto(f, taylor, where=near)
        np.copyto(m, np.abs(taylor), where=near)
        r = _gamma_narrow_finish(x, f, m, dtype, digamma, pole)
    return r.reshape(shape)


def _exp_neg_sq(x):
    """exp(-x*x) without the rounding error of forming x*x."""
    hi = (x * 134217729.0) - ((x * 134217729.0) - x)     # Veltkamp split
    hi = np.where(np.isfinite(hi), hi, x)
    lo = x - hi
    return np.exp(-hi * hi) * np.exp(-(2 * hi * lo + lo * lo))


def _erf_series_coefficients():
    fact = [1.0]
    for n in range(1, 20):
        fact.append(fact[-1] * n)
    return tuple((-1) ** n / (fact[n] * (2 * n + 1)) for n in range(19, -1, -1))


_ERF_SERIES = _erf_series_coefficients()      # highest power first


def _erf_series(x):
    """erf(x) for |x| < 0.5 by its Taylor series (Horner in x^2; in place on a float64
    array: the same roundings as acc = acc * x2 + c)."""
    x2 = x * x
    acc = np.zeros_like(x)
    if acc.__class__ is np.ndarray and acc.dtype == np.float64 and x2.__class__ is np.ndarray:
        add, mul = np.add, np.multiply
        for c in _ERF_SERIES:
            mul(acc, x2, out=acc)
            add(acc, c, out=acc)
    else:
        for c in _ERF_SERIES:
            acc = acc * x2 + c
    return 2.0 / np.sqrt(_PI) * x * acc


def _erfc_cf_tail(x):
    """erfc(x) for x >= 0.5 by the continued fraction, evaluated from the tail (slow to
    converge near 0.5: used for x >= 5 only, and for the table's centre values)."""
    if x.size == 0:
        return x.copy()
    xmin = max(float(np.min(x)), 0.5)
    depth = int(min(3000, 60 + 700.0 / (xmin * xmin)))
    t = np.array(x, dtype=np.float64, copy=True)
    div, add = np.divide, np.add
    for k in range(depth, 0, -1):
        div(0.5 * k, t, out=t)            # t = x + (0.5 k) / t, in place
        add(x, t, out=t)
    return _exp_neg_sq(x) / (np.sqrt(_PI) * t)


# erfc on [0.5, 5) by Taylor expansions around centres 1/8 apart: erfc^(n)(c) =
# -(2/sqrt(pi)) (-1)^(n-1) H_(n-1)(c) exp(-c^2), with H the physicists' Hermite polynomials.
_ERFC_LO, _ERFC_HI, _ERFC_STEP, _ERFC_TERMS = 0.5, 5.0, 0.125, 22
_ERFC_TABLE = None


def _erfc_table():
    global _ERFC_TABLE
    if _ERFC_TABLE is None:
        n_centres = int(round((_ERFC_HI - _ERFC_LO) / _ERFC_STEP))
        centres = _ERFC_LO + _ERFC_STEP * (np.arange(n_centres) + 0.5)
        table = np.empty((n_centres, _ERFC_TERMS))
        table[:, 0] = _erfc_cf_tail(centres)
        e = np.exp(-centres * centres) * (2.0 / np.sqrt(_PI))
        h_prev, h = np.zeros_like(centres), np.ones_like(centres)     # H_-1 (unused), H_0
        fact = 1.0
        for n in range(1, _ERFC_TERMS):
            # coefficient of t^n: erfc^(n)(c) / n! with erfc^(n) = -(2/sqrt(pi)) (-1)^(n-1) H_(n-1) e^-c^2
            fact *= n
            table[:, n] = -((-1.0) ** (n - 1)) * h * e / fact
            h_prev, h = h, 2 * centres * h - 2 * (n - 1) * h_prev
        # (by term, then centre: a term's coefficients for many elements are one row)
        _ERFC_TABLE = (centres, np.ascontiguousarray(table.T))
    return _ERFC_TABLE


def _erfc_cf(x):
    """erfc(x) for x >= 0.5."""
    if x.size == 0:
        return x.copy()
    out = np.empty_like(x)
    near = x < _ERFC_HI
    if np.any(~near):
        out[~near] = _erfc_cf_tail(x[~near])
    if np.any(near):
        centres, table = _erfc_table()
        xn = x[near]
        idx = np.clip(((xn - _ERFC_LO) / _ERFC_STEP).astype(np.int64), 0, len(centres) - 1)
        t = xn - centres[idx]
        coef = table[:, idx]
        acc = coef[-1].copy()
        add, mul = np.add, np.multiply
        for n in range(_ERFC_TERMS - 2, -1, -1):
            mul(acc, t, out=acc)          # acc = acc * t + coef[n], in place
            add(acc, coef[n], out=acc)
        out[near] = acc
    return out


def erfc(x):
    x = _f64(x)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        small = (a < 0.5) | np.isnan(x)
        out[small] = 1.0 - _erf_series(x[small])
        big = ~small
        ab = np.minimum(a[big], 30.0)
        c = _erfc_cf(ab)
        c = np.where(a[big] >= 27.3, 0.0, c)
        out[big] = np.where(x[big] < 0, 2.0 - c, c)
    return out


def erf(x):
    x = _f64(x)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        small = (a < 0.5) | np.isnan(x)
        out[small] = _erf_series(x[small])
        big = ~small
        c = _erfc_cf(np.minimum(a[big], 30.0))
        out[big] = np.copysign(1.0 - c, x[big])
    return out


# erf and erfc rounded to a narrow float (f32, f16, bf16): a cheaper f64 form whose error is
# bounded, each element computed again by `erf` / `erfc` where the bound leaves its rounding
# open (as `erf_inv_narrow` does). The cheap form: for |x| < 0.5 the first `_ERF_FAST_TERMS`
# terms of the Taylor series (the rest below 2^-40 relative there); for 0.5 <= |x| <= 10.1
# erfc(x) = exp(-x^2) g(x), g = exp(x^2) erfc(x) smooth and slowly varying, by one polynomial
# in v, a linear map of u = (x - 1) / (x + 1) onto [-1, 1] (u takes [0.5, inf) to a finite
# interval, where g is analytic). Its coefficients are fitted at Chebyshev nodes to `erfc`
# itself when first needed, and the fit's error measured on a fine grid: the fast form is
# used only where that error is far inside the bound (else `erf` / `erfc` run as they are).
_ERF_FAST_TERMS = 10
_ERFC_FIT_LO, _ERFC_FIT_HI, _ERFC_FIT_DEGREE = 0.5, 10.1, 20
_ERF_NARROW_TOL = 2.0 ** -36          # relative bound taken for the cheap form's error
_ERFC_FIT = []


def _rounded_within(f, tol, dtype, u):
    """`f` (f64) rounded to `dtype`, and where that rounding is open: both ends of the
    interval of relative half-width `tol` around an element do not round to the same value
    (compared as the unsigned ints `u` of the type's width). A value known to lie in that
    interval rounds as `f` does wherever the rounding is not open."""
    r = f.astype(dtype)
    d = np.abs(f)
    d *= tol
    return r, (f - d).astype(dtype).view(u) != (f + d).astype(dtype).view(u)


def _erfc_fit():
    """(coefficients of the polynomial in v, highest power first, u at the ends) or None."""
    if not _ERFC_FIT:
        fit = None
        try:
            with np.errstate(all="ignore"):
                u_lo = (_ERFC_FIT_LO - 1) / (_ERFC_FIT_LO + 1)
                u_hi = (_ERFC_FIT_HI - 1) / (_ERFC_FIT_HI + 1)
                nodes = np.cos(np.pi * (np.arange(160) + 0.5) / 160)
                u = (nodes + 1) / 2 * (u_hi - u_lo) + u_lo
                x = (1 + u) / (1 - u)
                g = erfc(x) * np.exp(x * x)
                cheb = np.polynomial.chebyshev.chebfit(nodes, g, _ERFC_FIT_DEGREE)
                coef = tuple(float(c) for c in np.polynomial.chebyshev.cheb2poly(cheb)[::-1])
                fit = (coef, u_lo, u_hi)
                # the error of the form as `_erfc_fast` evaluates it, on a fine grid
                xs = np.linspace(_ERFC_FIT_LO, _ERFC_FIT_HI, 4001)
                exact = erfc(xs)
                err = np.max(np.abs(_erfc_fast(xs, fit) / exact - 1))
                if not err <= _ERF_NARROW_TOL / 64:
                    fit = None
        except (ValueError, FloatingPointError, np.linalg.LinAlgError):
            fit = None
        _ERFC_FIT.append(fit)
    return _ERFC_FIT[0]


def _erfc_fast(a, fit):
    """erfc(a) for a in [0.5, 10.1] (f64 array) by the fitted form."""
    coef, u_lo, u_hi = fit
    v = (a - 1) / (a + 1)
    v -= u_lo
    v *= 2 / (u_hi - u_lo)
    v -= 1
    acc = np.full(a.shape, coef[0])
    mul, add = np.multiply, np.add
    for c in coef[1:]:
        mul(acc, v, out=acc)
        add(acc, c, out=acc)
    e = a * a
    np.negative(e, out=e)
    np.exp(e, out=e)
    acc *= e
    return acc


def _erf_series_fast(x):
    """erf(x) for |x| < 0.5: the series' first `_ERF_FAST_TERMS` terms."""
    x2 = x * x
    acc = np.full(x.shape, _ERF_SERIES[-_ERF_FAST_TERMS])
    for c in _ERF_SERIES[-_ERF_FAST_TERMS + 1:]:
        acc *= x2
        acc += c
    acc *= x
    acc *= 2.0 / np.sqrt(_PI)
    return acc


def _erf_family_narrow(x, dtype, complement: bool):
    """erf(x) (or erfc(x)) of f64 `x` rounded to `dtype`: the bytes of
    `erf(x).astype(dtype)` (`erfc`)."""
    accurate = erfc if complement else erf
    u = _UINT_OF_SIZE.get(np.dtype(dtype).itemsize)
    fit = _erfc_fit() if u is not None else None
    if fit is None or x.size < 64:
        return accurate(x).astype(dtype)
    shape = x.shape
    x = x.reshape(-1)
    # (index arrays rather than boolean masks: a mask of scattered elements costs several
    # times as much to read and write through)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        small = np.flatnonzero(a < 0.5)
        big = np.flatnonzero((a >= 0.5) & (a <= _ERFC_FIT_HI))
        f = np.zeros(x.shape)
        if small.size:
            s = _erf_series_fast(x.take(small))
            f.put(small, 1.0 - s if complement else s)
        if big.size:
            c = _erfc_fast(a.take(big), fit)
            xb = x.take(big)
            if complement:
                np.copyto(c, 2.0 - c, where=xb < 0)
            else:
                c = np.copysign(1.0 - c, xb)
            f.put(big, c)
        r, unsure = _rounded_within(f, _ERF_NARROW_TOL, dtype, u)
        unsure |= ~(a <= _ERFC_FIT_HI)    # NaN, and |x| > 10.1: as `erf` computes them
        redo = np.flatnonzero(unsure)
        if redo.size:
            r.put(redo, accurate(x.take(redo)).astype(dtype))
    return r.reshape(shape)


def erf_narrow(x, dtype):
    """erf(x) rounded to `dtype` (f32, f16 or bf16), the bytes of `erf(x).astype(dtype)`
    (see `_erf_family_narrow`)."""
    return _erf_family_narrow(_f64(x), dtype, False)


def erfc_narrow(x, dtype):
    """erfc(x) rounded to `dtype`, the bytes of `erfc(x).astype(dtype)`."""
    return _erf_family_narrow(_f64(x), dtype, True)


# erf^-1 by rational approximations (the coefficients of Boost.Math's erf_inv for mantissas of
# at most 64 bits, which SciPy's special.erfinv also evaluates): with p = |y|, q = 1 - p,
#   p <= 0.5:            x = p (p + 10) (Y + P(p) / Q(p))
#   q >= 0.25:           x = sqrt(-2 log q) / (Y + P(q - 0.25) / Q(q - 0.25))
#   q < 0.25, t = sqrt(-log q) in [lo, next lo):  x = t (Y + P(t - shift) / Q(t - shift))
# (P, Q from the constant term up). Plain f64 evaluation of these is off by up to ~2.7 ULP; the
# last steps (the square root, the sum with Y, the product or quotient) run in double-double
# arithmetic here, which brings every result within 1.3 ULP of the exact value in f64.
_ERFINV_SMALL = (0.0891314744949340820313, (
    -0.000508781949658280665617, -0.00836874819741736770379, 0.0334806625409744615033,
    -0.0126926147662974029034, -0.0365637971411762664006, 0.0219878681111168899165,
    0.00822687874676915743155, -0.00538772965071242932965), (
    1.0, -0.970005043303290640362, -1.56574558234175846809, 1.56221558398423026363,
    0.662328840472002992063, -0.71228902341542847553, -0.0527396382340099713954,
    0.0795283687341571680018, -0.00233393759374190016776, 0.000886216390456424707504))
_ERFINV_MID = (2.249481201171875, (
    -0.202433508355938759655, 0.105264680699391713268, 8.37050328343119927838,
    17.6447298408374015486, -18.8510648058714251895, -44.6382324441786960818,
    17.445385985570866523, 21.1294655448340526258, -3.67192254707729348546), (
    1.0, 6.24264124854247537712, 3.9713437953343869095, -28.6608180499800029974,
    -20.1432634680485188801, 48.5609213108739935468, 10.8268667355460159008,
    -22.6436933413139721736, 1.72114765761200282724))
# (lo, shift, Y, P, Q) by t = sqrt(-log q); q >= 2^-53 for |y| < 1 in f64, so t < 6.07: Boost's
# pieces for t >= 18 are never reached
_ERFINV_TAIL = (
    (0.0, 1.125, 0.807220458984375, (
        -0.131102781679951906451, -0.163794047193317060787, 0.117030156341995252019,
        0.387079738972604337464, 0.337785538912035898924, 0.142869534408157156766,
        0.0290157910005329060432, 0.00214558995388805277169, -0.679465575181126350155e-6,
        0.285225331782217055858e-7, -0.681149956853776992068e-9), (
        1.0, 3.46625407242567245975, 5.38168345707006855425, 4.77846592945843778382,
        2.59301921623620271374, 0.848854343457902036425, 0.152264338295331783612,
        0.01105924229346489121)),
    (3.0, 3.0, 0.93995571136474609375, (
        -0.0350353787183177984712, -0.00222426529213447927281, 0.0185573306514231072324,
        0.00950804701325919603619, 0.00187123492819559223345, 0.000157544617424960554631,
        0.460469890584317994083e-5, -0.230404776911882601748e-9, 0.266339227425782031962e-11), (
        1.0, 1.3653349817554063097, 0.762059164553623404043, 0.220091105764131249824,
        0.0341589143670947727934, 0.00263861676657015992959, 0.764675292302794483503e-4)),
    (6.0, 6.0, 0.98362827301025390625, (
        -0.0167431005076633737133, -0.00112951438745580278863, 0.00105628862152492910091,
        0.000209386317487588078668, 0.149624783758342370182e-4, 0.449696789927706453732e-6,
        0.462596163522878599135e-8, -0.281128735628831791805e-13, 0.99055709973310326855e-16), (
        1.0, 0.591429344886417493481, 0.138151865749083321638, 0.0160746087093676504695,
        0.000964011807005165528527, 0.275335474764726041141e-4, 0.282243172016108031869e-6)),
)


def _pq_columns(P, Q):
    """P and Q side by side, one (2, 1) column per power (the shorter padded with zeros)."""
    n = max(len(P), len(Q))
    P = tuple(P) + (0.0,) * (n - len(P))
    Q = tuple(Q) + (0.0,) * (n - len(Q))
    return tuple(np.array([[a], [b]]) for a, b in zip(P, Q))


_ERFINV_SMALL_PQ = _pq_columns(*_ERFINV_SMALL[1:])
_ERFINV_MID_PQ = _pq_columns(*_ERFINV_MID[1:])
_ERFINV_TAIL_PQ = tuple((lo, shift, y0, _pq_columns(P, Q)) for lo, shift, y0, P, Q in _ERFINV_TAIL)


def _ratio(cols, z):
    """P(z) / Q(z) from _pq_columns(P, Q): both by Horner's scheme at once, on a (2, n) array."""
    acc = cols[-1] * z
    for c in cols[-2:0:-1]:
        acc += c
        acc *= z
    acc += cols[0]
    return acc[0] / acc[1]


def _dd_sqrt(v):
    """sqrt(v) (v > 0) as hi + lo."""
    hi = np.sqrt(v)
    sq = hi * hi
    h, l = _split(hi)                     # _two_prod(hi, hi) with one split
    sq_lo = ((h * h - sq) + h * l + l * h) + l * l
    return hi, ((v - sq) - sq_lo) / (2.0 * hi)


def erf_inv(y):
    """erf^-1(y) in f64 (then rounded once to the result type by the caller), within 1.3 ULP
    of the exact value (tests/test_chlo_special_accuracy.py checks 2 against mpmath): see the
    rational approximations above. -1 and 1 give -inf and inf, |y| > 1 and NaN give NaN, -0
    stays -0. Numpy only: this kernel used SciPy's special.erfinv before, whose import cost
    90-220 ms at the first erf_inv of a process, most of a first run of jax.random.normal."""
    return _erf_inv(_f64(y), True)


# the plain evaluation (no double-double steps) is within a few f64 ULPs (2^-52 relative) of
# the refined one: 2^-40 relative leaves a margin of thousands of them
_ERFINV_PLAIN_TOL = 2.0 ** -40
_UINT_OF_SIZE = {2: np.uint16, 4: np.uint32}


def erf_inv_narrow(y, dtype):
    """erf_inv(y) rounded to `dtype` (f32, f16 or bf16), the bytes of
    `erf_inv(y).astype(dtype)`: the rational approximations evaluated plainly, without the
    double-double steps, rounded; an element is computed again by `erf_inv` unless both ends
    of the interval +-2^-40 relative around its plain value round to the same value (rounding
    is monotonic, and the refined value lies inside that interval: it then rounds the same).
    For f32 about one element in 2^15 is computed again."""
    y = _f64(y)
    u = _UINT_OF_SIZE.get(np.dtype(dtype).itemsize)
    if u is None:
        return erf_inv(y).astype(dtype)
    x = _erf_inv_stacked(y) if 0 < y.size <= _ERFINV_STACK_MAX else _erf_inv(y, False)
    with np.errstate(all="ignore"):
        r, unsure = _rounded_within(x, _ERFINV_PLAIN_TOL, dtype, u)
        if unsure.any():
            r[unsure] = erf_inv(y[unsure]).astype(dtype)
    return r


# the rational approximations of every piece side by side, one (2 * pieces, 1) column per
# power (each piece's P and Q rows padded with zeros at the top: Horner's steps through a
# leading zero give 0 * z + c = c exactly, so each row's value is the one `_ratio` gives)
def _stacked_columns():
    pieces = [_ERFINV_SMALL_PQ, _ERFINV_MID_PQ] + [cols for _, _, _, cols in _ERFINV_TAIL_PQ]
    k = max(len(c) for c in pieces)
    return tuple(np.concatenate([c[j] if j < len(c) else np.zeros((2, 1)) for c in pieces])
                 for j in range(k))


_ERFINV_STACKED = _stacked_columns()
# arrays of at most this many elements evaluate every piece on every element at once (about
# 25 numpy calls in all; the masked pieces of `_erf_inv` cost about 60 calls on any size,
# ~80 us on a few dozen elements: jax.random.normal's draws in a loop)
_ERFINV_STACK_MAX = 256


def _erfinv_pieces(p, q):
    """The masks of erf_inv's pieces: |y| <= 0.5, then 1 - |y| >= 0.25, then the tail."""
    small = p <= 0.5
    return small, (q >= 0.25) & ~small, (q < 0.25) & (q > 0)


def _erfinv_tail_interval(t, i):
    """Where t = sqrt(-log q) lies in the i-th tail piece's interval."""
    tails = _ERFINV_TAIL_PQ
    m = t >= tails[i][0]
    if i + 1 < len(tails):
        m &= t < tails[i + 1][0]
    return m


# the pieces' last steps in plain f64 (the ratio r of the piece's P / Q given)
def _erfinv_small_plain(p, r):
    y0 = _ERFINV_SMALL[0]
    return p * (10.0 * y0 + (p * (y0 + r) + 10.0 * r))


def _erfinv_mid_plain(q, r):
    return np.sqrt(-2.0 * np.log(q)) / (_ERFINV_MID[0] + r)


def _erfinv_finish(out, y, p):
    """+-1 give +-inf, |y| > 1 NaN, the sign of y (-0 stays -0), NaN payloads pass through."""
    out[p == 1] = np.inf
    out[~(p <= 1)] = np.nan
    np.copysign(out, y, out=out)
    nan = np.isnan(y)
    out[nan] = y[nan]
    return out


def _erf_inv_stacked(y):
    """`_erf_inv(y, False)` (the same values, bit for bit) for a small f64 array: each
    piece's argument in two rows of one array, the ratios of all pieces by one Horner
    evaluation, each element's value taken from its own piece."""
    out = np.empty_like(y)
    tails = _ERFINV_TAIL_PQ
    with np.errstate(all="ignore"):
        p = np.abs(y)
        q = 1.0 - p
        small, mid, tail = _erfinv_pieces(p, q)
        t = np.sqrt(-np.log(q))
        z = np.empty((2 * (2 + len(tails)), y.size))
        z[0] = z[1] = p.reshape(-1)
        z[2] = z[3] = (q - 0.25).reshape(-1)
        for i, (_, shift, _, _) in enumerate(tails):
            z[4 + 2 * i] = z[5 + 2 * i] = (t - shift).reshape(-1)
        cols = _ERFINV_STACKED
        acc = cols[-1] * z
        for c in cols[-2:0:-1]:
            acc += c
            acc *= z
        acc += cols[0]
        ratio = (acc[0::2] / acc[1::2]).reshape((2 + len(tails),) + y.shape)
        out[small] = _erfinv_small_plain(p, ratio[0])[small]
        out[mid] = _erfinv_mid_plain(q, ratio[1])[mid]
        for i, (_, _, y0, _) in enumerate(tails):
            m = tail & _erfinv_tail_interval(t, i)
            out[m] = (t * (y0 + ratio[2 + i]))[m]
        return _erfinv_finish(out, y, p)


def _erf_inv(y, refine: bool):
    """`erf_inv` of f64 `y`; without `refine` the approximations' last steps in plain f64
    (off by up to ~2.7 ULP: for `erf_inv_narrow`)."""
    out = np.empty_like(y)
    with np.errstate(all="ignore"):
        p = np.abs(y)
        q = 1.0 - p                       # exact where it is used (p > 0.5)
        small, mid, tail = _erfinv_pieces(p, q)
        if small.any():
            # p (p + 10) (Y + R) = p h with h = 10 Y + (p (Y + R) + 10 R): 10 Y is exact (Y has
            # 24 bits) and the bracket is small, so h = hi + lo and p h come out near exact
            ps = p[small]
            y0 = _ERFINV_SMALL[0]
            r = _ratio(_ERFINV_SMALL_PQ, ps)
            if not refine:
                out[small] = _erfinv_small_plain(ps, r)
            else:
                h, h_lo = _two_sum(10.0 * y0, ps * (y0 + r) + 10.0 * r)
                pr, pr_lo = _two_prod(ps, h)
                out[small] = pr + (pr_lo + ps * h_lo)
        if mid.any():
            qs = q[mid]
            if not refine:
                out[mid] = _erfinv_mid_plain(qs, _ratio(_ERFINV_MID_PQ, qs - 0.25))
            else:
                g, g_lo = _dd_sqrt(-2.0 * np.log(qs))
                d, d_lo = _two_sum(_ERFINV_MID[0], _ratio(_ERFINV_MID_PQ, qs - 0.25))
                x = g / d                     # (g + g_lo) / (d + d_lo), one correction step
                pr, pr_lo = _two_prod(x, d)
                out[mid] = x + (((g - pr) - pr_lo) + g_lo - x * d_lo) / d
        if tail.any():
            if not refine:
                t = np.sqrt(-np.log(q[tail]))
            else:
                t, t_lo = _dd_sqrt(-np.log(q[tail]))
            res = np.empty_like(t)
            for i, (_, shift, y0, cols) in enumerate(_ERFINV_TAIL_PQ):
                m = _erfinv_tail_interval(t, i)
                if m.any():
                    tm = t[m]
                    if not refine:
                        res[m] = tm * (y0 + _ratio(cols, tm - shift))
                        continue
                    s, s_lo = _two_sum(y0, _ratio(cols, tm - shift))
                    pr, pr_lo = _two_prod(tm, s)
                    res[m] = pr + (pr_lo + (tm * s_lo + t_lo[m] * s))
            out[tail] = res
        return _erfinv_finish(out, y, p)


def bessel_i1e(x):
    x = _f64(x)
    out = np.empty_like(x)
    with np.errstate(all="ignore"):
        a = np.abs(x)
        small = (a <= 25) | np.isnan(a)
        v = a[small]
        h = v / 2
        h2 = h * h
        term = h.copy()
        total = h.copy()
        for k in range(1, 130):
            term = term * h2 / (k * (k + 1))
            total = total + term
        out[small] = total * np.exp(-v)
        big = ~small
        v = np.where(np.isinf(a[big]), 1e300, a[big])
        term = np.ones_like(v)
        total = np.ones_like(v)
        for k in range(1, 50):
            term = term * -(4.0 - (2 * k - 1) ** 2) / (8.0 * k * v)
            total = total + term
        out[big] = np.where(np.isinf(a[big]), 0.0, total / np.sqrt(2 * _PI * v))
        out = np.copysign(out, x)
        out = np.where(np.isnan(x), x, out)
    return out


def next_after(x, y, et):
    """The next representable value of et after x in the direction of y (bit arithmetic on
    the format's own width: f4/f6 values sit in the low bits of a byte). Formats without -0
    (FNUZ) step from the smallest negative value to +0 (their -0 pattern is NaN); f8E8M0FNU
    has no sign bit: its bit patterns are in value order."""
    dt = np.dtype(et.dtype)
    udt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    bits = et.bits
    x = contiguous(np.asarray(x, dtype=dt))
    y = contiguous(np.asarray(y, dtype=dt))
    x, y = np.broadcast_arrays(x, y)
    x = contiguous(x)
    y = contiguous(y)
    mask = np.uint64((1 << bits) - 1)
    xi = x.view(udt).astype(np.uint64) & mask
    yi = y.view(udt).astype(np.uint64) & mask
    fx = x.astype(np.float64)
    fy = y.astype(np.float64)
    nan_bits = np.asarray(np.array(np.nan, dtype=dt)).view(udt).astype(np.uint64) & mask
    with np.errstate(all="ignore"):
        if et.name == "f8E8M0FNU":
            res = np.where(fy > fx, xi + np.uint64(1), xi - np.uint64(1))
        else:
            sign = np.uint64(1 << (bits - 1))
            xa = xi & ~sign
            ya = yi & ~sign
            toward_zero = (xa > ya) | ((xi & sign) != (yi & sign))
            res = np.where(toward_zero, xi - np.uint64(1), xi + np.uint64(1))
            res = np.where(xa == 0, np.where(ya == 0, yi, (yi & sign) | np.uint64(1)), res)
            if "FNUZ" in et.name:
                res = np.where((res & ~sign) == 0, np.uint64(0), res)        # no -0: +0
        res = np.where(fx == fy, yi, res)
        res = np.where(np.isnan(fx) | np.isnan(fy), nan_bits, res)
    return (res & mask).astype(udt).view(dt).reshape(x.shape)


# ------------------------------------------------------------------ kernels: unary math


def _binary_float(op, a, b, fn):
    et = _rt(op)
    if not et.is_float:
        raise NotImplementedOpError(op.name, f"dtype {et}")
    return from_compute(fn(_f64(a), _f64(b)), et)


@kernel("chlo.next_after")
def k_next_after(ctx, op, x, y):
    et = _rt(op)
    if not et.is_float:
        raise NotImplementedOpError(op.name, f"dtype {et}")
    return next_after(x, y, et)


# complex inverse functions with principal branches

def casin(z):
    return np.arcsin(z)


def cacos(z):
    return np.arccos(z)


@kernel("chlo._asin_acos_kernel")
def k_asin_acos_kernel(ctx, op, x):
    # w with asin(z) = complex(atan2(re z, re w), sign(im z) * im w):
    # re w = re(sqrt(1 - z) sqrt(1 + z)), im w = |im asin(z)|
    et = _rt(op)
    z = np.asarray(x).astype(np.complex128)
    with np.errstate(all="ignore"):
        out = make_complex(np.real(np.sqrt(1 - z) * np.sqrt(1 + z)), np.abs(np.imag(np.arcsin(z))))
    return out.astype(et.dtype)


@kernel("chlo.square")
def k_square(ctx, op, x):
    et = _rt(op)
    with np.errstate(all="ignore"):
        if et.is_complex:
            z = np.asarray(x)
            re, im = z.real, z.imag
            real = np.where(np.isfinite(re) & (np.abs(re) == np.abs(im)), 0.0, (re - im) * (re + im))
            imag = 2 * (re * im)
            return make_complex(real, imag).astype(et.dtype)
        if et.is_integer or et.is_bool:
            return KERNELS["stablehlo.multiply"](ctx, op, x, x)
        if x.__class__ is np.ndarray and x.dtype == et.dtype and et.name in ("f32", "f64"):
            # x * x in the type itself: the square of an f32 is exact in f64, so rounding it
            # once is the f32 product numpy computes (NaN payloads, overflow and subnormals
            # alike: tests/test_interp_math.py compares all kinds of bit patterns)
            return np.multiply(x, x)
        return from_compute(_f64(x) * _f64(x), et)


@kernel("chlo.mulhi")
def k_mulhi(ctx, op, a, b):
    et = _rt(op)
    if not et.is_integer:
        raise NotImplementedOpError(op.name, f"dtype {et}")
    n = et.bits
    if n < 64:
        wide = np.int64 if et.is_signed else np.uint64
        p = a.astype(wide) * b.astype(wide)
        return from_compute(p >> wide(n), et)
    # 64 x 64 -> high 64 bits from 32-bit halves
    au = a.astype(np.uint64) if not et.is_signed else a.view(np.uint64)
    bu = b.astype(np.uint64) if not et.is_signed else b.view(np.uint64)
    m32 = np.uint64(0xFFFFFFFF)
    s32 = np.uint64(32)
    al, ah = au & m32, au >> s32
    bl, bh = bu & m32, bu >> s32
    ll = al * bl
    lh = al * bh
    hl = ah * bl
    hh = ah * bh
    mid = (ll >> s32) + (lh & m32) + (hl & m32)
    hi = hh + (lh >> s32) + (hl >> s32) + (mid >> s32)
    if et.is_signed:
        # signed correction: hi(a*b) = hi_u - (a<0 ? b : 0) - (b<0 ? a : 0)
        hi = hi - np.where(a < 0, bu, np.uint64(0)) - np.where(b < 0, au, np.uint64(0))
        return hi.view(np.int64).astype(et.dtype)
    return hi.astype(et.dtype)


@kernel("chlo.is_inf")
def k_is_inf(ctx, op, x):
    return np.isinf(_f64(x))


@kernel("chlo.is_pos_inf")
def k_is_pos_inf(ctx, op, x):
    return _f64(x) == np.inf


@kernel("chlo.is_neg_inf")
def k_is_neg_inf(ctx, op, x):
    return _f64(x) == -np.inf


@kernel("chlo.conj")
def k_conj(ctx, op, x):
    et = _rt(op)
    if et.is_complex:
        return np.conj(x).astype(et.dtype)
    return np.array(x, copy=True)


def _attr_array(attr, et, shape):
    arr = getattr(attr, "array", None)
    if arr is None:
        v = getattr(attr, "value", None)
        if v is None:
            raise InterpreterError(f"unsupported constant attribute {attr!r}")
        arr = np.asarray(v)
    arr = np.asarray(arr)
    if et.is_complex:
        arr = arr.astype(et.dtype)
    elif arr.dtype != np.dtype(et.dtype):
        with np.errstate(all="ignore"):
            arr = arr.astype(np.float64).astype(et.dtype) if arr.dtype.kind in "fc" else arr.astype(et.dtype)
    return np.broadcast_to(arr.reshape(arr.shape if arr.size != 1 else ()), shape).copy()


@kernel("chlo.constant")
def k_constant(ctx, op):
    t = op.results[0].type
    return _attr_array(op.attributes["value"], elem(t), tuple(t.shape))


@kernel("chlo.constant_like")
def k_constant_like(ctx, op, x):
    t = op.results[0].type
    return _attr_array(op.attributes["value"], elem(t), tuple(np.shape(x)))


# ------------------------------------------------------------------ broadcasting binary ops

def _bcast(op, arrays):
    """Broadcast operands to the result shape (numpy-style, or along broadcast_dimensions)."""
    rt = op.results[0].type
    rshape = getattr(rt, "shape", None)
    dims_attr = op.attributes.get("broadcast_dimensions")
    dims = list(getattr(dims_attr, "values", []) or []) if dims_attr is not None else None
    arrays = [np.asarray(a) for a in arrays]
    rank = max(a.ndim for a in arrays)
    if rshape is not None and all(d is not None and d >= 0 for d in rshape):
        rank = len(rshape)
    out = []
    for a in arrays:
        if a.ndim < rank and dims and len(dims) == a.ndim:
            shape = [1] * rank
            for i, d in enumerate(dims):
                shape[d] = a.shape[i]
            a = a.reshape(shape)
        out.append(a)
    try:
        target = np.broadcast_shapes(*[a.shape for a in out])
    except ValueError:
        raise InterpreterError(f"{op.name}: operands are not broadcast-compatible: "
                               f"{[a.shape for a in arrays]}") from None
    return [np.broadcast_to(a, target) for a in out]


def _bcast_kernel(name):
    """chlo.broadcast_X: the kernel of X (looked up when it runs) on the operands broadcast."""
    def k(ctx, op, *args):
        return contiguous(KERNELS[name](ctx, op, *_bcast(op, args)))
    return k


for _name in ("add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "power", "atan2",
              "and", "or", "xor", "shift_left", "shift_right_logical", "shift_right_arithmetic", "complex",
              "compare", "select"):
    kernel(f"chlo.broadcast_{_name}")(_bcast_kernel(f"stablehlo.{_name}"))
for _name in ("next_after", "polygamma", "zeta"):
    kernel(f"chlo.broadcast_{_name}")(_bcast_kernel(f"chlo.{_name}"))


# ------------------------------------------------------------------ ragged_dot

def _ragged_masks(group_sizes, nbatch, length):
    """For each group j, a boolean mask of shape batch + (length,) selecting the positions of
    the ragged dimension that belong to group j (groups are consecutive runs)."""
    gs = np.asarray(group_sizes).astype(np.int64)
    ends = np.cumsum(gs, axis=-1)
    starts = ends - gs
    idx = np.arange(length)
    return [(idx >= starts[..., j, None]) & (idx < ends[..., j, None]) for j in range(gs.shape[-1])]


def _place(mask, nbatch, axis, ndim):
    """Reshape a batch + (length,) mask so it broadcasts along `axis` of an ndim array whose
    leading nbatch axes are the batch dimensions."""
    shape = [1] * ndim
    for i in range(nbatch):
        shape[i] = mask.shape[i]
    shape[axis] = mask.shape[-1]
    return mask.reshape(shape)


@kernel("chlo.ragged_dot")
def k_ragged_dot(ctx, op, lhs, rhs, group_sizes):
    """Three modes, by where the lhs ragged dimension is: a non-contracting one (each run of
    rows uses its own rhs group), a contracting one (one result per group, stacked first),
    or a batch one (a plain batched product; positions past the groups are zero)."""
    from ..errors import InterpreterError
    from ..ir.types import ELEMENT_TYPES
    from .linalg import dot_general_arrays
    from .numerics import from_compute
    d = dict(op.attributes["ragged_dot_dimension_numbers"].fields)
    lb, rb = tuple(d["lhs_batching_dimensions"]), tuple(d["rhs_batching_dimensions"])
    lc, rc = tuple(d["lhs_contracting_dimensions"]), tuple(d["rhs_contracting_dimensions"])
    ragged = tuple(d["lhs_ragged_dimensions"])
    rgroup = tuple(d["rhs_group_dimensions"])
    et = _rt(op)
    if len(ragged) != 1:
        raise InterpreterError("chlo.ragged_dot: exactly one lhs ragged dimension is required")
    r = ragged[0]
    ce = ELEMENT_TYPES["complex<f64>" if et.is_complex else "f64" if et.is_float else
                       "ui64" if et.is_unsigned else "i64"]
    from .elementwise import convert_array
    lhs = convert_array(lhs, elem(op.operands[0].type), ce)
    rhs = convert_array(rhs, elem(op.operands[1].type), ce)
    nb = len(lb)
    rshape = tuple(op.results[0].type.shape)
    if r in lc:                                  # mode 2: ragged contracting dimension
        outs = []
        for m in _ragged_masks(group_sizes, nb, lhs.shape[r]):
            shape = [1] * lhs.ndim
            for k, bd in enumerate(lb[:m.ndim - 1]):
                shape[bd] = m.shape[k]
            shape[r] = m.shape[-1]
            masked = np.where(m.reshape(shape), lhs, np.zeros((), lhs.dtype))
            outs.append(dot_general_arrays(masked, rhs, lb, rb, lc, rc, ce))
        out = np.stack(outs, axis=0)
    elif r in lb:                                # mode 3: ragged batch dimension
        out = dot_general_arrays(lhs, rhs, lb, rb, lc, rc, ce)
        total = int(np.sum(group_sizes))
        pos = lb.index(r)
        keep = np.arange(out.shape[pos]) < total
        shape = [1] * out.ndim
        shape[pos] = out.shape[pos]
        out = np.where(keep.reshape(shape), out, np.zeros((), out.dtype))
    else:                                        # mode 1: ragged non-contracting dimension
        if len(rgroup) != 1:
            raise InterpreterError("chlo.ragged_dot: a ragged lhs non-contracting dimension "
                                   "needs one rhs group dimension")
        g = rgroup[0]
        drop = lambda dims: tuple(x - (x > g) for x in dims)
        lfree = [x for x in range(lhs.ndim) if x not in lb and x not in lc]
        axis = nb + lfree.index(r)
        out = None
        for j, m in enumerate(_ragged_masks(group_sizes, nb, lhs.shape[r])):
            part = dot_general_arrays(lhs, np.take(rhs, j, axis=g), lb, drop(rb), lc, drop(rc), ce)
            part = np.where(_place(m, m.ndim - 1, axis, part.ndim), part, np.zeros((), part.dtype))
            out = part if out is None else out + part
    if tuple(out.shape) != rshape:
        raise InterpreterError(f"chlo.ragged_dot: result shape {tuple(out.shape)} does not match "
                               f"the declared {rshape}")
    return out.astype(et.dtype) if et.is_complex else from_compute(out, et)


# Kernels that differ only by the functions they hand to a shared helper, as tables registered
# in a loop (onnx's OpRunBinaryNumpy pattern): op name -> the helper's arguments after the operands.
_REAL_UNARY_KERNELS = {
    "chlo.lgamma": args(lgamma, narrow=lgamma_narrow),
    "chlo.digamma": args(digamma, narrow=digamma_narrow),
    "chlo.erf": args(erf, narrow=erf_narrow),
    "chlo.erfc": args(erfc, narrow=erfc_narrow),
    "chlo.erf_inv": args(erf_inv, narrow=erf_inv_narrow),
    "chlo.bessel_i1e": args(bessel_i1e),
    "chlo.asin": args(np.arcsin, casin),
    "chlo.acos": args(np.arccos, cacos),
    "chlo.atan": args(np.arctan, np.arctan),
    "chlo.asinh": args(np.arcsinh, np.arcsinh),
    "chlo.acosh": args(np.arccosh, np.arccosh),
    "chlo.atanh": args(np.arctanh, np.arctanh),
    "chlo.sinh": args(np.sinh, np.sinh),
    "chlo.cosh": args(np.cosh, np.cosh),
    "chlo.tan": args(np.tan, np.tan),
}
register_table(_REAL_UNARY_KERNELS, _real_unary, 1)

_BINARY_FLOAT_KERNELS = {
    "chlo.polygamma": args(polygamma),
    "chlo.zeta": args(zeta),
}
register_table(_BINARY_FLOAT_KERNELS, _binary_float, 2)
