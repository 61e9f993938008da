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
bf16 and f16 on values where every step of the composition is exact (batch_norm_grad_narrow_cases)."""
from __future__ import annotations

from fractions import Fraction
from typing import List

import mpmath

from ..cases import Rule
from .build import make_case
from .formats import float_format, round_value, workprec
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


def all_nn(full, fast) -> List:
    return (batch_norm_inference_cases(full, fast) + batch_norm_training_cases(full, fast) + batch_norm_grad_cases(full, fast)
            + batch_norm_grad_narrow_cases(full, fast))
