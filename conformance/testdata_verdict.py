"""Verdicts on the upstream `testdata` files where this project's interpreter and upstream's
XLA-computed expected values disagree (tests/known_failures/testdata.txt): for each, the
exact result from this suite's oracles (Fractions, or 64-bit-mantissa long double for the
FFTs, then one rounding), and how far each side is from it, in ULPs of the result type.

    python -m stablehlo_ref.conformance.testdata_verdict [STABLEHLO_TESTS/testdata]

Needs the upstream corpus (../shared/stablehlo-tests); prints one line per file."""
from __future__ import annotations

import math
import sys
from fractions import Fraction
from pathlib import Path

import mpmath
import numpy as np

from .generated import oracles as O
from .generated.formats import float_format, round_value, workprec

FILES = ["conv_general_dilated_float32_2_3_9_float32_12_1_3.mlir", "cosh_float32_20_20_chlo.mlir",
         "cumprod_complex64_8_9.mlir", "dot_general_bfloat16_4_3_complex64_3_6.mlir",
         "dot_general_float16_4_3_complex128_3_6.mlir", "dot_general_float32_4_3_complex128_3_6.mlir",
         "dot_general_int16_4_3_complex64_3_6.mlir", "dot_general_int64_4_3_complex64_3_6.mlir",
         "fft_complex64_14_15_16_17.mlir", "fft_float32_14_15_16_17.mlir"]


def _constants(module, fname):
    fn = module.functions[fname]
    ret = fn.regions[0].blocks[0].terminator
    return [np.asarray(v.owner.attributes["value"].array) for v in ret.operands]


def _ulps(a, b, part):
    """ULP distance per element of two arrays of the float type `part` (f32 or f64)."""
    it = np.int32 if part == "f32" else np.int64
    dt = np.float32 if part == "f32" else np.float64
    ia = np.asarray(a, dt).view(it).astype(object)
    ib = np.asarray(b, dt).view(it).astype(object)
    m = 1 << (31 if part == "f32" else 63)
    fa = np.array([x if x >= 0 else -(x + m) for x in ia.ravel()], dtype=object)
    fb = np.array([x if x >= 0 else -(x + m) for x in ib.ravel()], dtype=object)
    return np.array([abs(x - y) for x, y in zip(fa, fb)], dtype=object).reshape(np.shape(a))


def _round_parts(vals, part):
    fmt = float_format(part)
    return np.array([round_value(v, fmt) for v in vals], dtype=np.float64)


def _fr(x):
    return Fraction(float(x))


def exact_cosh(inputs):
    (x,) = inputs
    with workprec():
        return {"": _round_parts([O.cosh(float(v)) for v in x.ravel()], "f32").reshape(x.shape)}, "f32"


def exact_dot(inputs, part):
    lhs, rhs = inputs
    fmt = float_format(part)

    def conv(v):      # stablehlo.convert to complex<part>: each part rounded once
        v = complex(v) if np.iscomplexobj(v) else (int(v) if np.issubdtype(np.asarray(v).dtype, np.integer) else float(v))
        if isinstance(v, complex):
            return (Fraction(round_value(v.real, fmt)), Fraction(round_value(v.imag, fmt)))
        return (Fraction(round_value(Fraction(v) if isinstance(v, int) else v, fmt)), Fraction(0))
    L = [[conv(lhs[i, k]) for k in range(lhs.shape[1])] for i in range(lhs.shape[0])]
    R = [[conv(rhs[k, j]) for j in range(rhs.shape[1])] for k in range(rhs.shape[0])]
    re, im = [], []
    for i in range(lhs.shape[0]):
        for j in range(rhs.shape[1]):
            sr = si = Fraction(0)
            for k in range(lhs.shape[1]):
                a, b = L[i][k]
                c, d = R[k][j]
                sr += a * c - b * d
                si += a * d + b * c
            re.append(sr)
            im.append(si)
    shape = (lhs.shape[0], rhs.shape[1])
    return {"real": _round_parts(re, part).reshape(shape), "imag": _round_parts(im, part).reshape(shape)}, part


def exact_conv(inputs):
    lhs, rhs = inputs            # [b, f, 0] x [o, i, 0], feature_group_count 3, rhs_dilate 2
    B, F, W = lhs.shape
    OC, IC, K = rhs.shape
    groups = 3
    opg = OC // groups
    out_w = W - (K - 1) * 2
    vals = []
    for b in range(B):
        for o in range(OC):
            g = o // opg
            for x in range(out_w):
                s = Fraction(0)
                for i in range(IC):
                    for k in range(K):
                        s += _fr(lhs[b, g * IC + i, x + 2 * k]) * _fr(rhs[o, i, k])
                vals.append(s)
    return {"": _round_parts(vals, "f32").reshape(B, OC, out_w)}, "f32"


def exact_cumprod(inputs):
    (x,) = inputs                # cumulative product along dim 0 (window 8 padded low 7)
    n, m = x.shape
    re, im = np.zeros((n, m)), np.zeros((n, m))
    fmt = float_format("f32")
    for j in range(m):
        a, b = Fraction(1), Fraction(0)
        for i in range(n):
            c, d = _fr(x[i, j].real), _fr(x[i, j].imag)
            a, b = a * c - b * d, a * d + b * c
            re[i, j] = round_value(a, fmt)
            im[i, j] = round_value(b, fmt)
    return {"real": re, "imag": im}, "f32"


def _twiddles(n, sign):
    with mpmath.workprec(128):
        c = [mpmath.cos(2 * mpmath.pi * k / n) for k in range(n)]
        s = [sign * mpmath.sin(2 * mpmath.pi * k / n) for k in range(n)]
    C = np.array([[np.longdouble(mpmath.nstr(c[(j * k) % n], 40)) for k in range(n)] for j in range(n)])
    S = np.array([[np.longdouble(mpmath.nstr(s[(j * k) % n], 40)) for k in range(n)] for j in range(n)])
    return C, S


def exact_rfft(inputs):
    (x,) = inputs                # RFFT of length 17 along the last axis, f32 -> complex<f32>
    n = 17
    C, S = _twiddles(n, -1)
    xl = x.astype(np.longdouble)
    re = np.einsum("...k,jk->...j", xl, C[: n // 2 + 1])
    im = np.einsum("...k,jk->...j", xl, S[: n // 2 + 1])
    return {"real": re.astype(np.float32).astype(np.float64), "imag": im.astype(np.float32).astype(np.float64)}, "f32"


def exact_irfft(inputs):
    (x,) = inputs                # IRFFT, lengths [15, 16, 32] over the last three axes
    re = x.real.astype(np.longdouble)
    im = x.imag.astype(np.longdouble)
    for axis, n in ((1, 15), (2, 16)):          # inverse complex DFTs
        C, S = _twiddles(n, 1)
        re, im = (np.moveaxis(np.tensordot(re, C, axes=([axis], [1])) - np.tensordot(im, S, axes=([axis], [1])), -1, axis),
                  np.moveaxis(np.tensordot(re, S, axes=([axis], [1])) + np.tensordot(im, C, axes=([axis], [1])), -1, axis))
    n = 32                                      # inverse real DFT of a Hermitian half spectrum
    C, S = _twiddles(n, 1)
    w = np.full(17, 2, dtype=np.longdouble)
    w[0] = w[16] = 1
    out = np.einsum("...k,kj->...j", re * w, C[:17]) - np.einsum("...k,kj->...j", im * w, S[:17])
    out = out / np.longdouble(15 * 16 * 32)
    return {"": out.astype(np.float32).astype(np.float64)}, "f32"


def verdicts(root: Path):
    from stablehlo_ref.conformance import extract_cases, get_backend
    from stablehlo_ref.text import parse
    b = get_backend("reference")
    lines = []
    for f in FILES:
        text = (root / f).read_text(encoding="utf-8")
        module = parse(text, f)
        inputs = _constants(module, "inputs")
        (xla_expected,) = _constants(module, "expected")
        if f.startswith("cosh"):
            exact, part = exact_cosh(inputs)
        elif f.startswith("conv"):
            exact, part = exact_conv(inputs)
        elif f.startswith("cumprod"):
            exact, part = exact_cumprod(inputs)
        elif f.startswith("dot_general"):
            exact, part = exact_dot(inputs, "f64" if "complex128" in f else "f32")
        elif f == "fft_float32_14_15_16_17.mlir":
            exact, part = exact_rfft(inputs)
        else:
            exact, part = exact_irfft(inputs)
        case = extract_cases(text, f"testdata/{f}")[0]
        ours = b.run(case.program, [])
        res = []
        for label, ex in exact.items():
            idx = [i for i, l in enumerate(case.labels) if l.endswith(label) or not label]
            o = np.asarray(ours[idx[0]]).astype(np.float64)
            x = np.asarray(getattr(xla_expected, label) if label else xla_expected).astype(np.float64)
            ux, uo = _ulps(x, ex, part), _ulps(o, ex, part)
            scale = float(np.max(np.abs(ex))) or 1.0
            res.append(f"{label or 'value'}: XLA max {max(ux.ravel())} ULP (max abs err {float(np.max(np.abs(x - ex))):.3g}), "
                       f"reference max {max(uo.ravel())} ULP (max abs err {float(np.max(np.abs(o - ex))):.3g}); |result| max {scale:.3g}")
        lines.append(f"{f}: " + "; ".join(res))
        print(lines[-1], flush=True)
    return lines


if __name__ == "__main__":
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[1].parent / "shared" / "stablehlo-tests" / "testdata"
    verdicts(root)
