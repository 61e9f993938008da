"""Generated cases of batch_norm_inference, batch_norm_training and batch_norm_grad, with expected values from
mpmath at 256 bits (exact means and variances as fractions; the square root and the division
in mpmath), rounded once to the result type. They never call the interpreter.

The spec defines both ops by a composition of elementwise ops (subtract, add, sqrt, divide,
multiply, reduce), each rounding in the operand type, and leaves the order of the batch
reductions implementation-defined; so the cases are compared within 1 ULP or an absolute
error of 8 * (N + 4) * eps * (the magnitude of the terms), N the number of elements reduced per
feature (the error of that composition in the operand type), and the inputs are moderate
values (uniform in [-4, 4], variances in [0.5, 4]) with no cancellation near zero except
what the bound covers. Element types: bf16, f16, f32, f64 (in the 2- to 4-bit-mantissa
formats, the composition's rounding errors are as large as the result); batch_norm_grad in
bf16 and f16 on values where every step of the composition is exact (batch_norm_grad_narrow_cases).
In the 4-, 6- and 8-bit floats, all three ops on values searched so that every step of the
spec's composition is exact in the type (`*_narrow_cases`, `batch_norm_grad_low_precision_cases`;
f8E8M0FNU: inference only, training and grad have no semantics there, see below)."""
from __future__ import annotations

from fractions import Fraction
from itertools import combinations
from math import isqrt
from typing import List

import mpmath

from ..cases import Rule
from .build import make_case
from .formats import UNSPECIFIED, float_format, round_value, workprec
from .program import ProgramBuilder, tensor
from .structural import _indices, _size
from .values import float_random, make_array, rng_for

TYPES = ("bf16", "f16", "f32", "f64")
EPSILON = 0.001          # the attribute is an f32; 0.001 rounds to f32 first (the spec's value)


def _types(op, fast):
    from stablehlo_ref import spec
    from .values import admitted
    return [t for t in admitted(spec.op(op).operands[0].type) if t in TYPES and (fast is None or t in fast)]


def _eps_attr() -> float:
    import numpy as np
    return float(np.float32(EPSILON))


def _feature_slices(shape, fi):
    """For each feature, the row-major positions of its elements."""
    out = [[] for _ in range(shape[fi])]
    for n, idx in enumerate(_indices(shape)):
        out[idx[fi]].append(n)
    return out


CONFIGS = [("2x3x2_f1", (2, 3, 2), 1), ("4x2_f1", (4, 2), 1), ("2x2x3_f2", (2, 2, 3), 2)]


def batch_norm_inference_cases(full, fast) -> List:
    op = "stablehlo.batch_norm_inference"
    out = []
    for et in _types(op, fast):
        fmt = float_format(et)
        for name, shape, fi in (CONFIGS if full else CONFIGS[:1]):
            rng = rng_for(f"bni/{et}/{name}")
            nf = shape[fi]
            x = float_random(fmt, rng, _size(shape), True)
            scale, offset, mean = (float_random(fmt, rng, nf, True) for _ in range(3))
            var = [round_value(abs(v) / 2 + 0.5, fmt) for v in float_random(fmt, rng, nf, True)]
            exp, mags = [], []
            with workprec():
                eps = mpmath.mpf(_eps_attr())
                for n, idx in enumerate(_indices(shape)):
                    f = idx[fi]
                    norm = (mpmath.mpf(x[n]) - mean[f]) / mpmath.sqrt(mpmath.mpf(var[f]) + eps)
                    exp.append(round_value(scale[f] * norm + offset[f], fmt))
                    mags.append(float(abs(scale[f] * norm)) + abs(offset[f]) + abs(x[n]) + abs(mean[f]))
            atol = 8 * 5 * fmt.eps * max(mags)
            ts, tf = tensor(shape, et), tensor((nf,), et)
            b = ProgramBuilder([ts, tf, tf, tf, tf])
            r = b.op(op, [(b.arg(i), t) for i, t in enumerate([ts, tf, tf, tf, tf])], [ts],
                     f"epsilon = {EPSILON} : f32, feature_index = {fi} : i64")[0]
            out.append(make_case(op, et, name, b.text([(r, ts)]),
                                 [make_array(x, et, shape)] + [make_array(v, et, (nf,)) for v in (scale, offset, mean, var)],
                                 [make_array(exp, et, shape)], [et],
                                 [Rule("close", atol=atol, max_ulp=1, check="generated")], "mpmath", "nn",
                                 f"scale * (x - mean) / sqrt(variance + epsilon) + offset at 256 bits, rounded once; "
                                 f"the spec's composition rounds at every step: |error| <= {atol:.3g}"))
    return out


def batch_norm_training_cases(full, fast) -> List:
    op = "stablehlo.batch_norm_training"
    out = []
    for et in _types(op, fast):
        fmt = float_format(et)
        for name, shape, fi in (CONFIGS if full else CONFIGS[:1]):
            rng = rng_for(f"bnt/{et}/{name}")
            nf = shape[fi]
            x = float_random(fmt, rng, _size(shape), True)
            scale, offset = (float_random(fmt, rng, nf, True) for _ in range(2))
            groups = _feature_slices(shape, fi)
            n_per = len(groups[0])
            means = [sum(Fraction(x[p]) for p in g) / len(g) for g in groups]
            vars_ = [sum((Fraction(x[p]) - m) ** 2 for p in g) / len(g) for g, m in zip(groups, means)]
            outv, mags = [0.0] * len(x), []
            with workprec():
                eps = mpmath.mpf(_eps_attr())
                for f, g in enumerate(groups):
                    # the spec's batch_var is computed from the rounded batch_mean's definition:
                    # mean(square(x - mean)); exact here, the tolerance covers the roundings
                    den = mpmath.sqrt(mpmath.mpf(vars_[f].numerator) / vars_[f].denominator + eps)
                    for p in g:
                        norm = (mpmath.mpf(x[p]) - mpmath.mpf(means[f].numerator) / means[f].denominator) / den
                        outv[p] = round_value(scale[f] * norm + offset[f], fmt)
                        mags.append(float(abs(scale[f] * norm)) + abs(offset[f]) + abs(x[p]) / float(den))
            mean_r = [round_value(m, fmt) for m in means]
            var_r = [round_value(v, fmt) for v in vars_]
            big = max(abs(v) for v in x)
            k = 8 * (n_per + 4) * fmt.eps
            atol_out = k * max(mags)
            atol_mean = k * big
            atol_var = k * 2 * big * big
            ts, tf = tensor(shape, et), tensor((nf,), et)
            b = ProgramBuilder([ts, tf, tf])
            res = b.op(op, [(b.arg(0), ts), (b.arg(1), tf), (b.arg(2), tf)], [ts, tf, tf],
                       f"epsilon = {EPSILON} : f32, feature_index = {fi} : i64")
            out.append(make_case(op, et, name, b.text([(res[0], ts), (res[1], tf), (res[2], tf)]),
                                 [make_array(x, et, shape), make_array(scale, et, (nf,)), make_array(offset, et, (nf,))],
                                 [make_array(outv, et, shape), make_array(mean_r, et, (nf,)), make_array(var_r, et, (nf,))],
                                 [et, et, et],
                                 [Rule("close", atol=a, max_ulp=1, check="generated") for a in (atol_out, atol_mean, atol_var)],
                                 "mpmath", "nn",
                                 "batch mean and (biased) variance exact, the normalization at 256 bits, each rounded "
                                 "once; the reduction order is implementation-defined and the spec's composition "
                                 f"rounds at every step: |error| <= {k:.3g} * magnitude"))
    return out


def batch_norm_grad_cases(full, fast) -> List:
    """The spec's batch_norm_grad (XLA's batchnorm_expander formulas, with the given mean and
    variance, not batch statistics): with c = x - mean, d = variance + epsilon (epsilon in the
    operand type, as the spec's constant), N elements per feature,
      grad_operand = scale / sqrt(d) / N * (N * g - sum(g) - sum(g * c) * c / d)
      grad_scale = sum(g * c) / sqrt(d),   grad_offset = sum(g).
    Sums exact (Fractions), the square root at 256 bits, one rounding. The spec's composition
    rounds at every step (and i6 may cancel), so each output is compared within 1 ULP or
    8 * (N + 4) * eps times the largest magnitude of its terms."""
    op = "stablehlo.batch_norm_grad"
    out = []
    # f32 and f64 only: with bf16's and f16's 8- and 11-bit significands, that bound (the
    # composition has three sums and a cancelling difference) is as large as the results
    # (atol 5..47 on results of size 1..10): no check at all. bf16 and f16 get cases on
    # values where every step is exact instead (batch_norm_grad_narrow_cases)
    for et in [t for t in _types(op, fast) if t in ("f32", "f64")]:
        fmt = float_format(et)
        for name, shape, fi in (CONFIGS if full else CONFIGS[:1]):
            rng = rng_for(f"bng/{et}/{name}")
            nf = shape[fi]
            x = float_random(fmt, rng, _size(shape), True)
            g = float_random(fmt, rng, _size(shape), True)
            scale, mean = (float_random(fmt, rng, nf, True) for _ in range(2))
            var = [round_value(abs(v) / 2 + 0.5, fmt) for v in float_random(fmt, rng, nf, True)]
            eps = Fraction(round_value(_eps_attr(), fmt))
            groups = _feature_slices(shape, fi)
            n_per = len(groups[0])
            go = [0.0] * len(x)
            gs, gb, mag_o, mag_s, mag_b = [], [], [], [], []
            with workprec():
                for f, grp in enumerate(groups):
                    d = Fraction(var[f]) + eps
                    c = {p: Fraction(x[p]) - Fraction(mean[f]) for p in grp}
                    sum_g = sum(Fraction(g[p]) for p in grp)
                    sum_gc = sum(Fraction(g[p]) * c[p] for p in grp)
                    sd = mpmath.sqrt(mpmath.mpf(d.numerator) / d.denominator)
                    for p in grp:
                        i6 = n_per * Fraction(g[p]) - sum_g - sum_gc * c[p] / d          # exact
                        v = mpmath.mpf(scale[f]) / sd / n_per * (mpmath.mpf(i6.numerator) / i6.denominator)
                        go[p] = round_value(v, fmt)
                        terms = (n_per * abs(g[p]) + sum(abs(Fraction(g[q])) for q in grp)
                                 + sum(abs(Fraction(g[q]) * c[q]) for q in grp) * abs(c[p]) / d)
                        mag_o.append(float(abs(scale[f]) / sd / n_per * float(terms)))
                    gs.append(round_value(mpmath.mpf(sum_gc.numerator) / sum_gc.denominator / sd, fmt))
                    gb.append(round_value(sum_g, fmt))
                    mag_s.append(float(sum(abs(Fraction(g[q]) * c[q]) for q in grp)) / float(sd))
                    mag_b.append(float(sum(abs(Fraction(g[q])) for q in grp)))
            k = 8 * (n_per + 4) * fmt.eps
            ts, tf = tensor(shape, et), tensor((nf,), et)
            b = ProgramBuilder([ts, tf, tf, tf, ts])
            res = b.op(op, [(b.arg(i), t) for i, t in enumerate([ts, tf, tf, tf, ts])], [ts, tf, tf],
                       f"epsilon = {EPSILON} : f32, feature_index = {fi} : i64")
            out.append(make_case(op, et, name, b.text([(res[0], ts), (res[1], tf), (res[2], tf)]),
                                 [make_array(x, et, shape)] + [make_array(v, et, (nf,)) for v in (scale, mean, var)]
                                 + [make_array(g, et, shape)],
                                 [make_array(go, et, shape), make_array(gs, et, (nf,)), make_array(gb, et, (nf,))],
                                 [et, et, et],
                                 [Rule("close", atol=k * max(m), max_ulp=1, check="generated") for m in (mag_o, mag_s, mag_b)],
                                 "mpmath", "nn",
                                 "the spec's formulas with exact sums, the square root at 256 bits, rounded once; "
                                 f"the composition rounds at every step: |error| <= {k:.3g} * magnitude of the terms"))
    return out


# batch_norm_grad in bf16 and f16: values on which every step of the spec's composition but
# the last product is exact in the type, in every reduction order (N = 4 elements per feature)
EXACT_STEP_VARIANCE = 4.0        # + epsilon rounds back to 4 in bf16 and f16: stddev = 2 exactly


def batch_norm_grad_exact_steps(x, g, scale, mean, shape, fi, fmt):
    """The spec's batch_norm_grad composition on values chosen so that each step is exact in
    `fmt` (integers x and mean with |x - mean| <= 2, g and scale multiples of 1/2 in [-2, 2],
    variance 4, N = 4): returns (grad_operand, grad_scale, grad_offset, mag_o, mag_s), the
    results rounded once (only grad_operand's last product rounds) and the magnitudes that
    bound an implementation which adds epsilon to the variance without rounding."""
    groups = _feature_slices(shape, fi)
    n = len(groups[0])
    assert n == 4, "the exact-step values need N = 4 elements per feature"
    eps_t = Fraction(round_value(_eps_attr(), fmt))
    d = Fraction(round_value(Fraction(EXACT_STEP_VARIANCE) + eps_t, fmt))     # add(variance, epsilon)
    assert d == 4, "variance + epsilon must round to 4 in the type"
    sd = Fraction(2)                                                          # sqrt(4), exact
    go = [0.0] * len(x)
    gs, gb, mag_o, mag_s = [], [], [], []
    for f, grp in enumerate(groups):
        c = {p: Fraction(x[p]) - Fraction(mean[f]) for p in grp}
        assert all(abs(v) <= 2 and v.denominator == 1 for v in c.values())
        i2 = sum(Fraction(g[p]) for p in grp)
        i3 = sum(Fraction(g[p]) * c[p] for p in grp)
        for p in grp:
            i1 = Fraction(g[p]) * n
            i5 = i3 * c[p] / d
            i6 = i1 - i2 - i5
            k = Fraction(scale[f]) / sd / n
            go[p] = round_value(k * i6, fmt)
            mag_o.append(float(abs(k) * (abs(i5) + abs(i6))))
        gs.append(round_value(sum(Fraction(g[p]) * (c[p] / sd) for p in grp), fmt))
        gb.append(round_value(i2, fmt))
        mag_s.append(float(sum(abs(Fraction(g[p]) * c[p]) for p in grp) / sd))
    return go, gs, gb, mag_o, mag_s


def batch_norm_grad_narrow_cases(full, fast) -> List:
    """batch_norm_grad in bf16 and f16 (batch_norm_grad_exact_steps): the expected values are
    the spec's composition, exact at every step but the last product, which rounds once; in
    every reduction order the same. Compared within 1 ULP (the last rounding, should an
    implementation compute that product another way), or an absolute error of
    2 * (epsilon / variance) * the terms' magnitude: what an implementation that keeps
    variance + epsilon unrounded (4.001 instead of the type's 4; the reference computes in
    f64) moves the results by; grad_offset exactly."""
    op = "stablehlo.batch_norm_grad"
    out = []
    for et in [t for t in _types(op, fast) if t in ("bf16", "f16")]:
        fmt = float_format(et)
        for name, shape, fi in (CONFIGS if full else CONFIGS[:1]):
            rng = rng_for(f"bng-exact/{et}/{name}")
            nf = shape[fi]
            size = _size(shape)
            mean = [float(v) for v in rng.integers(-2, 3, nf)]
            groups = _feature_slices(shape, fi)
            x = [0.0] * size
            for f, grp in enumerate(groups):
                for p in grp:
                    x[p] = mean[f] + float(rng.integers(-2, 3))
            g = [float(v) / 2 for v in rng.integers(-4, 5, size)]
            scale = [float(v) / 2 for v in rng.integers(-4, 5, nf)]
            var = [EXACT_STEP_VARIANCE] * nf
            go, gs, gb, mag_o, mag_s = batch_norm_grad_exact_steps(x, g, scale, mean, shape, fi, fmt)
            delta = 2 * max(_eps_attr(), round_value(_eps_attr(), fmt)) / EXACT_STEP_VARIANCE
            atol_o, atol_s = delta * max(mag_o), delta * max(mag_s)
            ts, tf = tensor(shape, et), tensor((nf,), et)
            b = ProgramBuilder([ts, tf, tf, tf, ts])
            res = b.op(op, [(b.arg(i), t) for i, t in enumerate([ts, tf, tf, tf, ts])], [ts, tf, tf],
                       f"epsilon = {EPSILON} : f32, feature_index = {fi} : i64")
            out.append(make_case(op, et, f"{name}_exact_steps", b.text([(res[0], ts), (res[1], tf), (res[2], tf)]),
                                 [make_array(x, et, shape)] + [make_array(v, et, (nf,)) for v in (scale, mean, var)]
                                 + [make_array(g, et, shape)],
                                 [make_array(go, et, shape), make_array(gs, et, (nf,)), make_array(gb, et, (nf,))],
                                 [et, et, et],
                                 [Rule("close", atol=atol_o, max_ulp=1, check="generated"),
                                  Rule("close", atol=atol_s, max_ulp=1, check="generated"),
                                  Rule("exact", check="generated")],
                                 "python-exact", "nn",
                                 "values on which every step of the spec's composition is exact in the type (integer "
                                 "x, mean; g, scale in halves; variance 4, which + epsilon rounds back to 4; N = 4) "
                                 "but the last product, rounded once: within 1 ULP, or "
                                 f"|error| <= {atol_o:.3g} / {atol_s:.3g} (variance + epsilon kept unrounded); "
                                 "grad_offset exact"))
    return out


# ---------------------------------------------------------------- 4-, 6- and 8-bit floats
# The spec's compositions step by step in Fractions, every step required exact in the type
# (each sum in every order: every subset sum), on small values searched per feature; the
# result is then the composition's value in the type. f8E8M0FNU (positive powers of two,
# no zero) gets batch_norm_inference only: training and grad start every batch sum from
# constant(0) and subtract a batch mean (or a batch sum of grad_output) from each element,
# so no batch avoids a zero or negative step; the interpreter refuses them (no semantics).

SIGN_PATTERNS = [(1, 1, -1, -1), (1, -1, 1, -1), (1, -1, -1, 1), (-1, 1, 1, -1), (-1, 1, -1, 1), (-1, -1, 1, 1)]


def _narrow_types(op, fast):
    from stablehlo_ref import spec
    from .values import admitted, bits, kind
    return [t for t in admitted(spec.op(op).operands[0].type)
            if kind(t) == "float" and bits(t) <= 8 and (fast is None or t in fast)]


class _Inexact(Exception):
    pass


def _ex(fmt, v):
    """v (a Fraction) if the format holds it exactly, else _Inexact."""
    r = round_value(v, fmt)
    if r is UNSPECIFIED or r != r or r in (float("inf"), float("-inf")) or Fraction(r) != v:
        raise _Inexact
    return v


def _ex_sum(fmt, terms):
    """The sum of terms, every partial sum (in any order: every subset) exact in the format;
    the empty sum is the reduction's init value 0."""
    terms = list(terms)
    for r in range(len(terms) + 1):
        for sub in combinations(terms, r):
            _ex(fmt, sum(sub, Fraction(0)))
    return sum(terms, Fraction(0))


def _sqrt_ex(fmt, d):
    """sqrt(d) when it is an exact, nonzero value of the format."""
    if d <= 0:
        raise _Inexact
    num, den = isqrt(d.numerator), isqrt(d.denominator)
    if num * num != d.numerator or den * den != d.denominator:
        raise _Inexact
    return _ex(fmt, Fraction(num, den))


def _eps_t(fmt):
    return Fraction(round_value(_eps_attr(), fmt))


def _pool(fmt, cands):
    out = []
    for v in cands:
        try:
            out.append(_ex(fmt, Fraction(v)))
        except _Inexact:
            pass
    return out


SIGNED_POOL = [Fraction(k, 2) for k in range(-6, 7)] + [Fraction(3), Fraction(-3), Fraction(4), Fraction(-4)]
POW2_POOL = [Fraction(1, 4), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(4)]


def _bn_inference_steps(fmt, x, scale, offset, mean, var):
    """The spec's batch_norm_inference on one element, every step exact: centered =
    x - mean, stddev = sqrt(variance + epsilon), normalized = centered / stddev, result =
    scale * normalized + offset. Returns (result, the magnitude an unrounded epsilon moves)."""
    c = _ex(fmt, x - mean)
    d = Fraction(round_value(var + _eps_t(fmt), fmt))
    sd = _sqrt_ex(fmt, d)
    nrm = _ex(fmt, c / sd)
    p = _ex(fmt, scale * nrm)
    return _ex(fmt, p + offset), abs(p)


def _search(rng, tries, make, check):
    """The first of `tries` random candidates (make(rng)) that `check` accepts (no _Inexact)
    with no zero among its scored values, else the accepted one with the most nonzero values."""
    best, best_score = None, -1
    for _ in range(tries):
        cand = make(rng)
        try:
            res = check(cand)
        except (_Inexact, ZeroDivisionError):
            continue
        score = sum(1 for v in res[0] if v != 0)
        if score > best_score:
            best, best_score = (cand, res), score
            if score == len(res[0]):
                break
    return best


def _pick(rng, pool):
    return pool[int(rng.integers(0, len(pool)))]


def _narrow_tolerance(var_vals, mags):
    """An implementation that keeps variance + epsilon unrounded (the f32 epsilon; the
    reference computes in f64) moves a result by at most 2 * epsilon / variance of its
    magnitude: within 1 ULP or that."""
    delta = 2 * _eps_attr() / float(min(var_vals))
    return delta * max([float(m) for m in mags] + [0.0])


def batch_norm_inference_narrow_cases(full, fast) -> List:
    op = "stablehlo.batch_norm_inference"
    out = []
    for et in _narrow_types(op, fast):
        fmt = float_format(et)
        e8m0 = et == "f8E8M0FNU"
        pool = _pool(fmt, POW2_POOL if e8m0 else SIGNED_POOL)
        varpool = _pool(fmt, [Fraction(1), Fraction(4), Fraction(1, 4)])
        for name, shape, fi in (CONFIGS if full else CONFIGS[:1]):
            rng = rng_for(f"bni-narrow/{et}/{name}")
            groups = _feature_slices(shape, fi)
            x = [Fraction(0)] * _size(shape)
            res, mags = [Fraction(0)] * _size(shape), []
            feats = []
            for grp in groups:
                def make(r, grp=grp):
                    # feature parameters, and per element an order in which to try the pool's x
                    return ([_pick(r, pool) for _ in range(4)] + [_pick(r, varpool)],
                            [[pool[int(k)] for k in r.permutation(len(pool))] for _ in grp])

                def check(cand):
                    (sc, of, mn, _unused, vr), orders = cand
                    xs, got = [], []
                    for order in orders:       # elements are independent: each its first exact x
                        for xv in order:
                            try:
                                got.append(_bn_inference_steps(fmt, xv, sc, of, mn, vr))
                            except (_Inexact, ZeroDivisionError):
                                continue
                            xs.append(xv)
                            break
                        else:
                            raise _Inexact
                    return [g[0] for g in got], [g[1] for g in got], xs
                found = _search(rng, 400, make, check)
                if found is None:
                    break
                (params, _orders), (rv, mg, xs) = found
                feats.append(params)
                for p, xv, r_, m_ in zip(grp, xs, rv, mg):
                    x[p], res[p] = xv, r_
                    mags.append(m_)
            if len(feats) != len(groups):
                continue
            scale, offset, mean, var = ([f[i] for f in feats] for i in (0, 1, 2, 4))
            atol = _narrow_tolerance(var, mags)
            nf = shape[fi]
            ts, tf = tensor(shape, et), tensor((nf,), et)
            b = ProgramBuilder([ts, tf, tf, tf, tf])
            r = b.op(op, [(b.arg(i), t) for i, t in enumerate([ts, tf, tf, tf, tf])], [ts],
                     f"epsilon = {EPSILON} : f32, feature_index = {fi} : i64")[0]
            fl = lambda vs: [float(v) for v in vs]
            out.append(make_case(op, et, f"{name}_exact_steps", b.text([(r, ts)]),
                                 [make_array(fl(x), et, shape)]
                                 + [make_array(fl(v), et, (nf,)) for v in (scale, offset, mean, var)],
                                 [make_array(fl(res), et, shape)], [et],
                                 [Rule("close", atol=atol, max_ulp=1, check="generated")], "python-exact-steps", "nn",
                                 "values on which every step of the spec's composition is exact in the type "
                                 "(variance 1/4, 1 or 4, which + epsilon rounds back in the type): within 1 ULP, or "
                                 f"|error| <= {atol:.3g} (variance + epsilon kept unrounded)"))
    return out


def _bn_training_steps(fmt, xs, scale, offset):
    """The spec's batch_norm_training on one feature's elements, every step exact: mean =
    sum(x) / N, centered = x - mean, variance = sum(centered^2) / N, then inference's steps."""
    n = _ex(fmt, Fraction(len(xs)))
    mean = _ex(fmt, _ex_sum(fmt, xs) / n)
    cs = [_ex(fmt, xv - mean) for xv in xs]
    var = _ex(fmt, _ex_sum(fmt, [_ex(fmt, c * c) for c in cs]) / n)
    got = [_bn_inference_steps(fmt, xv, scale, offset, mean, var) for xv in xs]
    return [g[0] for g in got], [g[1] for g in got], mean, var


def batch_norm_training_narrow_cases(full, fast) -> List:
    op = "stablehlo.batch_norm_training"
    out = []
    for et in [t for t in _narrow_types(op, fast) if t != "f8E8M0FNU"]:
        fmt = float_format(et)
        pool = _pool(fmt, SIGNED_POOL)
        for name, shape, fi in (CONFIGS if full else CONFIGS[:1]):
            rng = rng_for(f"bnt-narrow/{et}/{name}")
            groups = _feature_slices(shape, fi)
            x = [Fraction(0)] * _size(shape)
            res, mags, feats = [Fraction(0)] * _size(shape), [], []
            for grp in groups:
                def make(r, grp=grp):
                    # x = m + a * signs, two signs of each: variance a^2, a square the type may hold
                    signs = SIGN_PATTERNS[int(r.integers(0, len(SIGN_PATTERNS)))]
                    m, a = _pick(r, pool), _pick(r, [Fraction(1, 2), Fraction(1), Fraction(2)])
                    return _pick(r, pool), _pick(r, pool), [m + a * sg for sg in signs]

                def check(cand):
                    sc, of, xs = cand
                    return _bn_training_steps(fmt, xs, sc, of)
                found = _search(rng, 400, make, check)
                if found is None:
                    break
                (sc, of, xs), (rv, mg, mean, var) = found
                feats.append((sc, of, mean, var))
                for p, xv, r_ in zip(grp, xs, rv):
                    x[p], res[p] = xv, r_
                mags += mg
            if len(feats) != len(groups):
                continue
            scale, offset, mean, var = ([f[i] for f in feats] for i in range(4))
            atol = _narrow_tolerance(var, mags)
            nf = shape[fi]
            ts, tf = tensor(shape, et), tensor((nf,), et)
            b = ProgramBuilder([ts, tf, tf])
            rs = b.op(op, [(b.arg(0), ts), (b.arg(1), tf), (b.arg(2), tf)], [ts, tf, tf],
                      f"epsilon = {EPSILON} : f32, feature_index = {fi} : i64")
            fl = lambda vs: [float(v) for v in vs]
            out.append(make_case(op, et, f"{name}_exact_steps", b.text([(rs[0], ts), (rs[1], tf), (rs[2], tf)]),
                                 [make_array(fl(x), et, shape), make_array(fl(scale), et, (nf,)),
                                  make_array(fl(offset), et, (nf,))],
                                 [make_array(fl(res), et, shape), make_array(fl(mean), et, (nf,)),
                                  make_array(fl(var), et, (nf,))],
                                 [et, et, et],
                                 [Rule("close", atol=atol, max_ulp=1, check="generated"),
                                  Rule("exact", check="generated"), Rule("close", atol=0.0, max_ulp=1, check="generated")],
                                 "python-exact-steps", "nn",
                                 "values on which every step of the spec's composition is exact in the type (every "
                                 "batch sum in every order, the mean, the centred squares, a variance that is a square "
                                 "the type holds): output within 1 ULP or "
                                 f"|error| <= {atol:.3g} (variance + epsilon kept unrounded); batch_mean exact; "
                                 "batch_var within 1 ULP (another variance formula may round)"))
    return out


def _bn_grad_steps(fmt, xs, gs_, scale, mean, var):
    """The spec's batch_norm_grad on one feature, every step exact: centered = x - mean,
    stddev = sqrt(variance + epsilon), normalized = centered / stddev, i1 = g * N, i2 = sum(g),
    i3 = sum(g * centered), i4 = i3 * centered, i5 = i4 / (variance + epsilon),
    i6 = i1 - i2 - i5, grad_operand = scale / stddev / N * i6, grad_scale =
    sum(g * normalized), grad_offset = i2."""
    n = _ex(fmt, Fraction(len(xs)))
    d = Fraction(round_value(var + _eps_t(fmt), fmt))
    sd = _sqrt_ex(fmt, d)
    cs = [_ex(fmt, xv - mean) for xv in xs]
    nrm = [_ex(fmt, c / sd) for c in cs]
    i2 = _ex_sum(fmt, gs_)
    i3 = _ex_sum(fmt, [_ex(fmt, g * c) for g, c in zip(gs_, cs)])
    k = _ex(fmt, _ex(fmt, scale / sd) / n)
    go, mag = [], []
    for g, c in zip(gs_, cs):
        i1 = _ex(fmt, g * n)
        i5 = _ex(fmt, _ex(fmt, i3 * c) / d)
        i6 = _ex(fmt, _ex(fmt, i1 - i2) - i5)
        go.append(_ex(fmt, k * i6))
        mag.append(abs(k) * (abs(i5) + abs(i6)))
    gsc = _ex_sum(fmt, [_ex(fmt, g * v) for g, v in zip(gs_, nrm)])
    return go, mag, gsc, i2, sum((abs(g * c) for g, c in zip(gs_, cs)), Fraction(0)) / sd


def batch_norm_grad_low_precision_cases(full, fast) -> List:
    op = "stablehlo.batch_norm_grad"
    out = []
    for et in [t for t in _narrow_types(op, fast) if t != "f8E8M0FNU"]:
        fmt = float_format(et)
        pool = _pool(fmt, SIGNED_POOL)
        small = _pool(fmt, [Fraction(k, 2) for k in range(-2, 3)])
        varpool = _pool(fmt, [Fraction(1), Fraction(4), Fraction(1, 4)])
        for name, shape, fi in (CONFIGS if full else CONFIGS[:1]):
            rng = rng_for(f"bng-narrow/{et}/{name}")
            groups = _feature_slices(shape, fi)
            size = _size(shape)
            x, g = [Fraction(0)] * size, [Fraction(0)] * size
            go = [Fraction(0)] * size
            feats, mag_o, mag_s = [], [], []
            for grp in groups:
                def make(r, grp=grp):
                    return (_pick(r, pool), _pick(r, pool), _pick(r, varpool),
                            [_pick(r, pool) for _ in grp], [_pick(r, small) for _ in grp])

                def check(cand):
                    sc, mn, vr, xs, gv = cand
                    o, m, gsc, gof, ms = _bn_grad_steps(fmt, xs, gv, sc, mn, vr)
                    return o + [gsc, gof], m, gsc, gof, ms
                found = _search(rng, 300, make, check)
                if found is None:
                    break
                (sc, mn, vr, xs, gv), (o, m, gsc, gof, ms) = found
                feats.append((sc, mn, vr, gsc, gof))
                for p, xv, gv_, ov in zip(grp, xs, gv, o[:len(grp)]):
                    x[p], g[p], go[p] = xv, gv_, ov
                mag_o += m
                mag_s.append(ms)
            if len(feats) != len(groups):
                continue
            scale, mean, var, gsc, gof = ([f[i] for f in feats] for i in range(5))
            atol_o, atol_s = _narrow_tolerance(var, mag_o), _narrow_tolerance(var, mag_s)
            nf = shape[fi]
            ts, tf = tensor(shape, et), tensor((nf,), et)
            b = ProgramBuilder([ts, tf, tf, tf, ts])
            rs = b.op(op, [(b.arg(i), t) for i, t in enumerate([ts, tf, tf, tf, ts])], [ts, tf, tf],
                      f"epsilon = {EPSILON} : f32, feature_index = {fi} : i64")
            fl = lambda vs: [float(v) for v in vs]
            out.append(make_case(op, et, f"{name}_exact_steps", b.text([(rs[0], ts), (rs[1], tf), (rs[2], tf)]),
                                 [make_array(fl(x), et, shape)] + [make_array(fl(v), et, (nf,)) for v in (scale, mean, var)]
                                 + [make_array(fl(g), et, shape)],
                                 [make_array(fl(go), et, shape), make_array(fl(gsc), et, (nf,)),
                                  make_array(fl(gof), et, (nf,))],
                                 [et, et, et],
                                 [Rule("close", atol=atol_o, max_ulp=1, check="generated"),
                                  Rule("close", atol=atol_s, max_ulp=1, check="generated"),
                                  Rule("exact", check="generated")],
                                 "python-exact-steps", "nn",
                                 "values on which every step of the spec's composition is exact in the type (every "
                                 "batch sum in every order): within 1 ULP, or "
                                 f"|error| <= {atol_o:.3g} / {atol_s:.3g} (variance + epsilon kept unrounded); "
                                 "grad_offset exact"))
    return out


def all_nn(full, fast) -> List:
    return (batch_norm_inference_cases(full, fast) + batch_norm_training_cases(full, fast) + batch_norm_grad_cases(full, fast)
            + batch_norm_grad_narrow_cases(full, fast) + batch_norm_inference_narrow_cases(full, fast)
            + batch_norm_training_narrow_cases(full, fast) + batch_norm_grad_low_precision_cases(full, fast))
