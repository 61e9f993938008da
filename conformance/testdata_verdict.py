"""Verdicts on upstream `testdata` files where this project's interpreter and the file's
expected value (computed by XLA upstream) disagree: for each such file, the op under test is
found in the program, its exact result is recomputed from the values that reach it with this
suite's oracles (exact integer/Fraction arithmetic rounded once; mpmath for transcendental
elementwise ops; 64-bit-mantissa long double with 128-bit twiddles for FFTs), and each side
(the file's expected value and this interpreter's result) is measured against it and judged
against the spec's accuracy:

- ops the spec defines exactly (integer arithmetic, max/min, exact elementwise ops): 0 ULP;
- transcendental elementwise ops: this suite's ULP bounds (conformance/README.md, "Accuracy");
- dot_general, convolution, reduce and reduce_window sums/products and fft, whose order of
  evaluation the spec leaves to the implementation: the worst-case error bound of evaluating
  them in the result type in any order, gamma_n * sum|terms| (Higham), n the number of
  roundings on the way to one result element, plus the final rounding.

    python -m stablehlo_ref.conformance.testdata_verdict [FILE | DIR ...]
    python -m stablehlo_ref.conformance.testdata_verdict --disagreeing DIR

With no arguments, the files pinned in tests/known_failures/testdata.txt (upstream corpus in
../shared/stablehlo-tests); `--disagreeing DIR` runs every file under DIR and judges those
whose check fails. Programs without an oracle get a "no oracle for <op>" line."""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Dict, List, Optional, Sequence, Tuple

import mpmath
import numpy as np

from stablehlo_ref.errors import StableHLOError
from stablehlo_ref.interpreter.conv import _dilate, _ints, _pad
from stablehlo_ref.interpreter.numerics import elem, ulp_difference
from stablehlo_ref.interpreter.reduction import recognize_binary_body
from stablehlo_ref.interpreter.windows import _array_attr, _padding_attr, pad_dilate, window_view
from stablehlo_ref.ir.types import ELEMENT_TYPES

from .generated import elementwise as EWM
from .generated import oracles as O
from .generated.formats import UNSPECIFIED, float_format, round_value

REPO = Path(__file__).resolve().parents[1]
PINNED = REPO / "tests" / "known_failures" / "testdata.txt"
CORPUS = REPO.parent / "shared" / "stablehlo-tests"

# ops an output may pass through on its way from the op under test (exactly)
_PASSTHROUGH = {"stablehlo.real": "real", "stablehlo.imag": "imag"}
MAX_ELEMENTWISE = 200_000        # elements an mpmath elementwise oracle evaluates
MAX_EXACT_MACS = 20_000_000      # multiply-adds of an exact (Python-integer) dot or convolution
MAX_FFT_WORK = 2_000_000_000     # long double multiply-adds of an FFT oracle


class NoOracle(Exception):
    """The op (or its operands) has no exact oracle here."""


@dataclass
class Exact:
    """The exact result of the op under test, rounded once to the result type, per part
    ("" for a real result, "real"/"imag" for a complex one), with what each side may differ
    from it by: `ulp` ULPs, or `abs_bound` (elementwise, plus one ULP of the result for the
    final rounding)."""
    parts: Dict[str, np.ndarray]
    criterion: str
    ulp: Optional[int] = None
    abs_bound: Optional[Dict[str, np.ndarray]] = None
    oracle: str = "exact (Fractions / Python integers), rounded once"


def _gamma(n: int, u: float) -> float:
    nu = n * u
    return nu / (1 - nu) if nu < 1 else math.inf


# ----------------------------------------------------------------------- exact values

def _split(a: np.ndarray):
    """(real part, imaginary part or None, is_integer) of an operand as float64 / int arrays."""
    a = np.asarray(a)
    if a.dtype.kind in "iub":
        return a.astype(object), None, True
    if a.dtype.kind == "c":
        return a.real.astype(np.float64), a.imag.astype(np.float64), False
    return a.astype(np.float64), None, False


def _scaled(parts: Sequence[Optional[np.ndarray]], is_int: bool):
    """Python-int object arrays M_i and one exponent e with part_i == M_i * 2**e exactly."""
    if is_int:
        return [None if p is None else np.array(p.tolist(), dtype=object).reshape(p.shape) for p in parts], 0
    present = [p for p in parts if p is not None]
    for p in present:
        if not np.all(np.isfinite(p)):
            raise NoOracle("non-finite operand values")
    mants, exps = [], []
    emin = 0
    first = True
    for p in parts:
        if p is None:
            mants.append(None)
            exps.append(None)
            continue
        m, e = np.frexp(p)
        mi = (m * 2.0 ** 53).astype(np.int64)
        e = e.astype(np.int64) - 53
        nz = mi != 0
        if nz.any():
            lo = int(e[nz].min())
            emin = lo if first else min(emin, lo)
            first = False
        mants.append(mi)
        exps.append(e)
    out = []
    for mi, e in zip(mants, exps):
        if mi is None:
            out.append(None)
            continue
        flat = [int(m) << int(x - emin) if m else 0 for m, x in zip(mi.ravel().tolist(), e.ravel().tolist())]
        out.append(np.array(flat, dtype=object).reshape(mi.shape))
    return out, emin


def _round_ints(M: np.ndarray, e: int, et_name: str) -> np.ndarray:
    """M * 2**e (object ints) rounded once to the float type `et_name` (float64 array; NaN where
    the spec leaves the value open), or wrapped to an integer type."""
    et = ELEMENT_TYPES[et_name]
    flat = M.ravel().tolist()
    if not (et.is_float or et.is_complex):
        b = et.bits
        return np.array([O.wrap(int(v) if e == 0 else int(Fraction(v) * Fraction(2) ** e), b, et.is_signed)
                         for v in flat], dtype=object).reshape(M.shape)
    fmt = float_format(et_name)
    scale = Fraction(2) ** e
    out = []
    for v in flat:
        r = round_value(Fraction(v) * scale, fmt) if v else 0.0
        out.append(math.nan if r is UNSPECIFIED else r)
    return np.array(out, dtype=np.float64).reshape(M.shape)


def _part_name(et_name: str) -> str:
    return {"complex<f32>": "f32", "complex<f64>": "f64"}.get(et_name, et_name)


def _unit(et_name: str) -> float:
    return math.ldexp(1.0, -float_format(_part_name(et_name)).precision)


def _bilinear(op, operands, rt, apply, count, what):
    """An exact bilinear op (dot_general, convolution): `apply(x, y)` contracts two arrays
    (object ints exactly, float64 magnitudes for the bound); `count` the terms per element."""
    xr, xi, xint = _split(operands[0])
    yr, yi, yint = _split(operands[1])
    (Xr, Xi), ex = _scaled([xr, xi], xint)
    (Yr, Yi), ey = _scaled([yr, yi], yint)
    et = rt.name
    e = ex + ey
    if et in ("complex<f32>", "complex<f64>") or Xi is not None or Yi is not None:
        if not rt.is_complex:
            raise NoOracle(f"{what} of complex operands into {et}")
        zero = lambda a: np.zeros(a.shape, dtype=object) if a is not None else None  # noqa: E731
        Xi = Xi if Xi is not None else zero(Xr)
        Yi = Yi if Yi is not None else zero(Yr)
        re = apply(Xr, Yr) - apply(Xi, Yi)
        im = apply(Xr, Yi) + apply(Xi, Yr)
        part = _part_name(et)
        exact = {"real": _round_ints(re, e, part), "imag": _round_ints(im, e, part)}
        n = 2 * count
    else:
        exact = {"": _round_ints(apply(Xr, Yr), e, et)}
        n = count
    if not (rt.is_float or rt.is_complex):
        return Exact(exact, "integer arithmetic: exact", ulp=0)
    mag = apply(np.abs(np.asarray(operands[0])).astype(np.float64), np.abs(np.asarray(operands[1])).astype(np.float64))
    g = _gamma(n, _unit(et))
    bound = {k: g * np.asarray(mag, dtype=np.float64) for k in exact}
    return Exact(exact, f"any-order accumulation bound gamma_{n} * sum|terms| in {_part_name(et)}",
                 abs_bound=bound)


def _dot_general(op, operands, rt):
    d = dict(op.attributes["dot_dimension_numbers"].fields)
    lb, rb = list(d["lhs_batching_dimensions"]), list(d["rhs_batching_dimensions"])
    lc, rc = list(d["lhs_contracting_dimensions"]), list(d["rhs_contracting_dimensions"])
    lhs, rhs = (np.asarray(a) for a in operands)
    lf = [i for i in range(lhs.ndim) if i not in lb and i not in lc]
    rf = [i for i in range(rhs.ndim) if i not in rb and i not in rc]
    B = [lhs.shape[i] for i in lb]
    C = int(np.prod([lhs.shape[i] for i in lc], dtype=np.int64))
    out_shape = B + [lhs.shape[i] for i in lf] + [rhs.shape[i] for i in rf]
    nb = int(np.prod(B, dtype=np.int64))
    nlf = int(np.prod([lhs.shape[i] for i in lf], dtype=np.int64))
    nrf = int(np.prod([rhs.shape[i] for i in rf], dtype=np.int64))

    if nb * nlf * nrf * C > MAX_EXACT_MACS:
        raise NoOracle(f"dot_general of {nb * nlf * nrf * C} multiply-adds (more than {MAX_EXACT_MACS} for the exact oracle)")

    def apply(x, y):
        x3 = np.transpose(x, lb + lf + lc).reshape(nb, nlf, C)
        y3 = np.transpose(y, rb + rc + rf).reshape(nb, C, nrf)
        if C == 0:
            return np.zeros([nb, nlf, nrf], dtype=x.dtype).reshape(out_shape)
        return np.matmul(x3, y3).reshape(out_shape)
    return _bilinear(op, operands, rt, apply, max(C, 1), "dot_general")


def rt_shape(op):
    shape = getattr(op.results[0].type, "shape", None)
    if shape is None or None in tuple(shape):
        raise NoOracle(f"{op.name} with a dynamic result shape")
    return tuple(int(d) for d in shape)


def _py(a: np.ndarray) -> np.ndarray:
    """An object array's numpy integers (np.pad's fill) as Python ints, which do not overflow."""
    if a.dtype != object or a.size == 0:
        return a
    return np.array([int(v) for v in a.ravel().tolist()], dtype=object).reshape(a.shape)


def _convolution(op, operands, rt):
    a = op.attributes
    if "QuantizedType" in type(getattr(op.operands[0].type, "element_type", None)).__name__:
        raise NoOracle("quantized convolution")
    dims = dict(a["dimension_numbers"].fields)
    ns = len(dims["input_spatial_dimensions"])
    pad_attr = a.get("padding")
    padding = [(0, 0)] * ns if pad_attr is None else [(int(lo), int(hi)) for lo, hi in np.asarray(pad_attr.array).reshape(-1, 2)]
    rev_attr = a.get("window_reversal")
    reversal = [bool(v) for v in rev_attr.values] if rev_attr is not None else [False] * ns
    strides = _ints(a.get("window_strides"), 1, ns)
    ldil, rdil = _ints(a.get("lhs_dilation"), 1, ns), _ints(a.get("rhs_dilation"), 1, ns)
    G = int(a["feature_group_count"].value) if a.get("feature_group_count") is not None else 1
    Bg = int(a["batch_group_count"].value) if a.get("batch_group_count") is not None else 1
    ib, if_, isp = dims["input_batch_dimension"], dims["input_feature_dimension"], list(dims["input_spatial_dimensions"])
    ki, ko, ksp = dims["kernel_input_feature_dimension"], dims["kernel_output_feature_dimension"], list(dims["kernel_spatial_dimensions"])
    ob, of, osp = dims["output_batch_dimension"], dims["output_feature_dimension"], list(dims["output_spatial_dimensions"])
    if G > 1 and Bg > 1:
        raise NoOracle("convolution with feature_group_count > 1 and batch_group_count > 1")
    sp = list(range(2, 2 + ns))
    wshape = np.asarray(operands[1]).shape
    terms = int(np.prod([wshape[ki]] + [wshape[d] for d in ksp], dtype=np.int64))
    macs = int(np.prod(rt_shape(op), dtype=np.int64)) * terms
    if macs > MAX_EXACT_MACS:
        raise NoOracle(f"convolution of {macs} multiply-adds (more than {MAX_EXACT_MACS} for the exact oracle)")

    def apply(lhs, rhs):
        x = np.transpose(lhs, [ib, if_] + isp)
        w = np.transpose(rhs, [ko, ki] + ksp)
        if any(reversal):
            w = np.flip(w, axis=[2 + i for i, r in enumerate(reversal) if r])
        x = _py(_pad(_dilate(x, sp, ldil), sp, padding))
        w = _py(_dilate(w, sp, rdil))
        N, Cin = x.shape[:2]
        Oc, I = w.shape[:2]
        ksize = w.shape[2:]
        out_sp = [max(0, (x.shape[2 + d] - ksize[d]) // strides[d] + 1) if x.shape[2 + d] >= ksize[d] else 0
                  for d in range(ns)]
        Nb = N // Bg
        res = np.zeros([Nb, Oc] + out_sp, dtype=x.dtype)
        if all(out_sp) and all(ksize) and I:
            win = np.lib.stride_tricks.sliding_window_view(x, ksize, axis=sp)
            win = win[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in strides)]
            win = win[(slice(None), slice(None)) + tuple(slice(0, n) for n in out_sp)]
            P, Kp = int(np.prod(out_sp)), int(np.prod(ksize))
            win = np.moveaxis(win, 1, 1 + ns).reshape(N, P, Cin, Kp)
            wk = w.reshape(Oc, I, Kp)
            out = np.zeros((Nb, P, Oc), dtype=x.dtype)
            Og, Ob = Oc // G, Oc // Bg
            for b in range(Bg):
                xb = win[b * Nb:(b + 1) * Nb]
                for g in range(G):
                    lo = g * Og if Bg == 1 else b * Ob
                    hi = lo + (Og if Bg == 1 else Ob)
                    xg = np.ascontiguousarray(xb[:, :, g * I:(g + 1) * I, :]).reshape(Nb, P, I * Kp)
                    out[:, :, lo:hi] = np.matmul(xg, wk[lo:hi].reshape(hi - lo, I * Kp).T)
                    if Bg > 1:
                        break
            res = np.moveaxis(out.reshape([Nb] + out_sp + [Oc]), -1, 1)
        perm = [0] * (2 + ns)
        perm[ob], perm[of] = 0, 1
        for i, dd in enumerate(osp):
            perm[dd] = 2 + i
        return np.transpose(res, perm)
    return _bilinear(op, operands, rt, apply, max(terms, 1), "convolution")


# ----------------------------------------------------------------------- fft

def _twiddles(n, sign):
    with mpmath.workprec(128):
        c = [mpmath.cos(2 * mpmath.pi * k / n) for k in range(n)]
        s = [sign * mpmath.sin(2 * mpmath.pi * k / n) for k in range(n)]
    idx = np.outer(np.arange(n), np.arange(n)) % n
    C = np.array([np.longdouble(mpmath.nstr(v, 40)) for v in c])[idx]
    S = np.array([np.longdouble(mpmath.nstr(v, 40)) for v in s])[idx]
    return C, S


def _cdft(re, im, axis, n, sign, m_out=None):
    """Complex DFT of length n along `axis` (input zero-padded / cropped to n), keeping the
    first m_out outputs."""
    re, im = _fit(re, axis, n), _fit(im, axis, n)
    C, S = _twiddles(n, sign)
    if m_out is not None:
        C, S = C[:m_out], S[:m_out]
    r = np.tensordot(re, C, axes=([axis], [1])) - np.tensordot(im, S, axes=([axis], [1]))
    i = np.tensordot(re, S, axes=([axis], [1])) + np.tensordot(im, C, axes=([axis], [1]))
    return np.moveaxis(r, -1, axis), np.moveaxis(i, -1, axis)


def _fit(x, axis, n):
    k = x.shape[axis]
    if k == n:
        return x
    if k > n:
        return np.take(x, np.arange(n), axis=axis)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (0, n - k)
    return np.pad(x, pad)


def _fft(op, operands, rt):
    kind = str(getattr(op.attributes.get("fft_type"), "value", op.attributes.get("fft_type") or "FFT"))
    lengths = [int(v) for v in op.attributes["fft_length"].values]
    (x,) = operands
    x = np.asarray(x)
    if not np.all(np.isfinite(x)):
        raise NoOracle("non-finite operand values")
    k = len(lengths)
    axes = list(range(x.ndim - k, x.ndim))
    if any(n == 0 for n in lengths):
        raise NoOracle("fft of length 0")
    work = x.size * sum(lengths) * 4
    if work > MAX_FFT_WORK:
        raise NoOracle(f"fft of {work} multiply-adds (more than {MAX_FFT_WORK} for the long double oracle)")
    re = x.real.astype(np.longdouble)
    im = x.imag.astype(np.longdouble) if np.iscomplexobj(x) else np.zeros_like(re)
    mag = np.abs(x).astype(np.float64)
    N = int(np.prod(lengths))
    if kind in ("FFT", "IFFT"):
        sign = -1 if kind == "FFT" else 1
        for ax, n in zip(axes, lengths):
            re, im = _cdft(re, im, ax, n, sign)
        if kind == "IFFT":
            re, im = re / N, im / N
        total = mag.sum(axis=tuple(axes), keepdims=True) / (N if kind == "IFFT" else 1)
    elif kind == "RFFT":
        for j, (ax, n) in enumerate(zip(axes[::-1], lengths[::-1])):
            re, im = _cdft(re, im, ax, n, -1, n // 2 + 1 if j == 0 else None)
        total = mag.sum(axis=tuple(axes), keepdims=True)
    elif kind == "IRFFT":
        for ax, n in zip(axes[:-1], lengths[:-1]):
            re, im = _cdft(re, im, ax, n, 1)
        n = lengths[-1]
        m = n // 2 + 1
        re, im = _fit(re, axes[-1], m), _fit(im, axes[-1], m)
        w = np.full(m, 2, dtype=np.longdouble)
        w[0] = 1
        if n % 2 == 0:
            w[-1] = 1
        C, S = _twiddles(n, 1)
        re = np.moveaxis(np.tensordot(re * w, C[:m], axes=([axes[-1]], [0])) -
                         np.tensordot(im * w, S[:m], axes=([axes[-1]], [0])), -1, axes[-1]) / N
        im = None
        wm = np.concatenate([[1.0], np.full(m - 1, 2.0)])
        total = (_fit(mag, axes[-1], m) * wm).sum(axis=tuple(axes), keepdims=True) / N
    else:
        raise NoOracle(f"fft_type {kind}")
    part = _part_name(rt.name)
    dt = np.float32 if part == "f32" else np.float64
    if im is None:
        parts = {"": re.astype(dt).astype(np.float64)}
    else:
        parts = {"real": re.astype(dt).astype(np.float64), "imag": im.astype(dt).astype(np.float64)}
    n_round = sum(n + 2 for n in lengths) + 1
    g = _gamma(n_round, _unit(part)) * math.sqrt(2)
    shape = next(iter(parts.values())).shape
    bound = {p: np.broadcast_to(g * total, shape) for p in parts}
    return Exact(parts, f"bound of a row-column DFT in {part}: gamma_{n_round} * sqrt2 * sum|x|"
                 + (" / N" if kind in ("IFFT", "IRFFT") else ""), abs_bound=bound,
                 oracle="64-bit-mantissa long double DFT with 128-bit twiddles, rounded once")


# ----------------------------------------------------------------------- reductions

def _reduce_exact(name, win, axes, init, rt, count):
    """Exact reduction over `axes` of the (window) view `win` with `init`, by body op `name`."""
    et = rt.name
    xr, xi, xint = _split(win)
    ir, ii, _ = _split(np.asarray(init))
    if name in ("stablehlo.maximum", "stablehlo.minimum"):
        if xi is not None:
            raise NoOracle(f"complex {name} reduction")
        fn, pair = (np.max, np.maximum) if name == "stablehlo.maximum" else (np.min, np.minimum)
        dt = object if xint else np.float64
        xr = np.asarray(xr, dtype=dt)
        res = pair(fn(xr, axis=axes), np.asarray(ir, dtype=dt).reshape(())) if xr.size else \
            np.full(win.shape[:win.ndim - len(axes)], np.asarray(ir, dtype=dt).reshape(()), dtype=dt)
        return Exact({"": np.asarray(res, dtype=dt)}, f"{name.split('.')[1]} is exact", ulp=0)
    if name == "stablehlo.add":
        (Xr, Xi, Ir, Ii), e = _scaled([xr, xi, ir, ii], xint)
        if not (rt.is_float or rt.is_complex) and not xint:
            raise NoOracle("float sum into a non-float type")
        parts = {}
        for p, X, I in (("real" if Xi is not None else "", Xr, Ir), ("imag", Xi, Ii)):
            if X is None:
                continue
            parts[p] = _round_ints(X.sum(axis=axes) + I, e, _part_name(et))
        if xint:
            return Exact(parts, "integer arithmetic: exact", ulp=0)
        mag = np.abs(np.asarray(win)).astype(np.float64).sum(axis=axes) + abs(complex(np.asarray(init).reshape(())))
        g = _gamma(count, _unit(et))
        return Exact(parts, f"any-order summation bound gamma_{count} * sum|x| in {_part_name(et)}",
                     abs_bound={p: g * mag for p in parts})
    if name == "stablehlo.multiply":
        if xint:
            prod = np.multiply.reduce(np.asarray(_py(np.asarray(xr, dtype=object))), axis=axes) if axes else xr
            prod = np.asarray(prod, dtype=object) * int(np.asarray(init).reshape(()))
            return Exact({"": _round_ints(np.asarray(prod, dtype=object), 0, et)}, "integer arithmetic: exact", ulp=0)
        if not np.all(np.isfinite(np.asarray(win))):
            raise NoOracle("non-finite operand values")
        out_shape = win.shape[:win.ndim - len(axes)]
        flat = np.asarray(win).reshape(out_shape + (-1,))
        iv = complex(np.asarray(init).reshape(()))
        m = int(np.prod(out_shape))
        flat2 = flat.reshape(m, -1)
        fmt = float_format(_part_name(et))
        re_o, im_o, bd = [], [], []
        cplx = xi is not None
        u = _unit(et)
        w = flat2.shape[1] + 1
        grow = math.expm1(w * math.log1p(math.sqrt(2) * _gamma(2, u))) if cplx else _gamma(w, u)
        for row in flat2:
            a, b = Fraction(iv.real), Fraction(iv.imag)
            for z in row.tolist():
                c, d = (Fraction(z.real), Fraction(z.imag)) if cplx else (Fraction(float(z)), Fraction(0))
                a, b = a * c - b * d, a * d + b * c
            re_o.append(round_value(a, fmt))
            im_o.append(round_value(b, fmt))
            bd.append(grow * abs(iv) * float(np.prod(np.abs(row).astype(np.float64))))
        re_o = np.array([math.nan if v is UNSPECIFIED else v for v in re_o]).reshape(out_shape)
        bd = np.array(bd).reshape(out_shape)
        if not cplx:
            return Exact({"": re_o}, f"product bound gamma_{w} * prod|x| in {_part_name(et)}",
                         abs_bound={"": bd})
        im_o = np.array([math.nan if v is UNSPECIFIED else v for v in im_o]).reshape(out_shape)
        return Exact({"real": re_o, "imag": im_o},
                     f"complex product bound ((1+sqrt2*gamma_2)^{w} - 1) * prod|z| in {_part_name(et)}",
                     abs_bound={"real": bd, "imag": bd})
    raise NoOracle(f"reduction body {name}")


def _reduce_window(op, operands, rt):
    if len(operands) != 2:
        raise NoOracle("variadic reduce_window")
    x, init = (np.asarray(a) for a in operands)
    name = recognize_binary_body(op.regions[0])
    if name is None:
        raise NoOracle("reduce_window with a body other than one add/multiply/maximum/minimum")
    rank = x.ndim
    window = _array_attr(op, "window_dimensions", rank, 1)
    strides = _array_attr(op, "window_strides", rank, 1)
    base = _array_attr(op, "base_dilations", rank, 1)
    wdil = _array_attr(op, "window_dilations", rank, 1)
    padded = pad_dilate(x, init.reshape(()), _padding_attr(op, rank), base)
    view = window_view(padded, window, strides, wdil)
    if view is None:
        raise NoOracle("reduce_window with no window in bounds")
    return _reduce_exact(name, view, tuple(range(rank, 2 * rank)), init, rt, int(np.prod(window)) + 1)


def _reduce(op, operands, rt):
    if len(operands) != 2:
        raise NoOracle("variadic reduce")
    x, init = (np.asarray(a) for a in operands)
    name = recognize_binary_body(op.regions[0])
    if name is None:
        raise NoOracle("reduce with a body other than one add/multiply/maximum/minimum")
    dims = tuple(int(v) for v in op.attributes["dimensions"].values)
    keep = [i for i in range(x.ndim) if i not in dims]
    xv = np.transpose(x, keep + list(dims))
    axes = tuple(range(len(keep), x.ndim))
    return _reduce_exact(name, xv, axes, init, rt, int(np.prod([x.shape[d] for d in dims])) + 1)


# ----------------------------------------------------------------------- elementwise

def _scalar(v, k):
    if k == "complex":
        return complex(v)
    if k == "float":
        return float(v)
    if k == "bool":
        return bool(v)
    return int(v)


# complex oracles (mpmath) of CHLO ops whose generated cases cover real types only; their
# bound is the suite's for complex results of inexact ops (Elementwise.ulp_complex)
_COMPLEX_MP = {"chlo.sinh": mpmath.sinh, "chlo.cosh": mpmath.cosh, "chlo.tan": mpmath.tan,
               "chlo.asinh": mpmath.asinh, "chlo.acosh": mpmath.acosh, "chlo.atanh": mpmath.atanh,
               "chlo.asin": mpmath.asin, "chlo.acos": mpmath.acos, "chlo.atan": mpmath.atan}
_MULTIPLY = ("stablehlo.multiply", "chlo.broadcast_multiply")


def _elementwise(op, operands, rt):
    e = EWM.BY_NAME.get(op.name) or EWM.BY_NAME.get(EWM.BROADCAST_BINARY.get(op.name, ""))
    if e is None or len(operands) != e.arity:
        raise NoOracle(op.name)
    et = elem(op.operands[0].type).name
    from .generated.values import kind
    k = kind(et)
    if k == "complex" and e.c is None and op.name in _COMPLEX_MP:
        fn = _COMPLEX_MP[op.name]
        e = replace(e, c=lambda z: fn(mpmath.mpc(z)))
    if {"float": e.f, "complex": e.c, "bool": e.b}.get(k, e.i) is None:
        raise NoOracle(f"{op.name} on {et}")
    arrs = np.broadcast_arrays(*[np.asarray(a) for a in operands])
    if arrs[0].size > MAX_ELEMENTWISE:
        raise NoOracle(f"{op.name} on {arrs[0].size} elements (more than {MAX_ELEMENTWISE})")
    out_et = rt.name
    vals = [EWM.eval_element(e, et, [_scalar(a.flat[i], k) for a in arrs], out_et) for i in range(arrs[0].size)]
    shape = arrs[0].shape
    ulp = EWM._ulp(e, et)
    crit = "exact (0 ULP)" if not ulp else f"this suite's bound, {ulp} ULP ({EWM.TRANSCENDENTAL_NOTE.split(';')[0]})"
    if rt.is_complex:
        re = np.array([math.nan if v is UNSPECIFIED else complex(v).real for v in vals]).reshape(shape)
        im = np.array([math.nan if v is UNSPECIFIED else complex(v).imag for v in vals]).reshape(shape)
        parts = {"real": re, "imag": im}
        if op.name in _MULTIPLY:
            # a complex product rounds a*c, b*d and their difference: |error| per part within
            # gamma_2 * (|a*c| + |b*d|) (Higham, Lemma 3.5), <= gamma_2 * |x| * |y|
            x, y = (np.asarray(a) for a in np.broadcast_arrays(*operands))
            m = _gamma(2, _unit(out_et)) * (np.abs(x) * np.abs(y)).astype(np.float64)
            return Exact(parts, "complex multiplication's bound gamma_2 * |x| * |y| per part", ulp=0,
                         abs_bound={"real": m, "imag": m})
        if ulp:
            eps = float_format(_part_name(out_et)).eps
            mags = np.hypot(re, im)
            scale = float(np.nanmax(mags)) if np.isfinite(mags).any() else 0.0
            m = np.full(re.shape, ulp * eps * scale)      # as the suite's complex rule: eps * max|z|
            return Exact(parts, crit + " per part, or that many eps * max|z|", ulp=ulp,
                         abs_bound={"real": m, "imag": m}, oracle="mpmath, rounded once")
        return Exact(parts, crit, ulp=0)
    if rt.is_float:
        parts = {"": np.array([math.nan if v is UNSPECIFIED else float(v) for v in vals]).reshape(shape)}
    else:
        parts = {"": np.array([None if v is UNSPECIFIED else v for v in vals], dtype=object).reshape(shape)}
    return Exact(parts, crit, ulp=ulp, oracle="mpmath, rounded once" if ulp else "exact, rounded once")


def _scatter(op, operands, rt):
    """Single-input scatter whose update body is add / multiply / maximum / minimum: every
    target element's exact combination of the input with the updates that reach it. Which
    update reaches which element comes from the interpreter's scatter planner (indexing, not
    arithmetic); the values are combined exactly."""
    from stablehlo_ref.interpreter.indexing import _scatter_dims, _TargetPlan
    if len(operands) != 3:
        raise NoOracle("variadic scatter")
    x, idx, upd = (np.asarray(a) for a in operands)
    name = recognize_binary_body(op.regions[0])
    if name is None:
        raise NoOracle("scatter with a body other than one add/multiply/maximum/minimum")
    targets, valid = _TargetPlan(x.shape, idx.shape, upd.shape, **_scatter_dims(op)).targets(idx)
    targets = np.asarray(targets).reshape(-1)
    uflat = upd.reshape(-1)
    if valid is not None:
        targets, uflat = targets[valid], uflat[valid]
    xflat = x.reshape(-1)
    order = np.argsort(targets, kind="stable")
    targets, uflat = targets[order], uflat[order]
    # each target's window: [input element, its updates...], padded with the body's identity
    uniq, starts, counts = np.unique(targets, return_index=True, return_counts=True)
    width = int(counts.max()) + 1 if counts.size else 1
    ident = {"stablehlo.add": 0, "stablehlo.multiply": 1}.get(name)
    if ident is None:          # max/min: pad with the input element itself (idempotent)
        win = np.repeat(xflat[uniq][:, None], width, axis=1)
    else:
        win = np.full((uniq.size, width), ident, dtype=x.dtype)
        win[:, 0] = xflat[uniq]
    for j in range(uniq.size):
        win[j, 1:1 + counts[j]] = uflat[starts[j]:starts[j] + counts[j]]
    if ident is None:
        if x.dtype.kind == "c":
            raise NoOracle(f"complex {name} scatter")
        red = (np.max if name == "stablehlo.maximum" else np.min)(win.astype(object if x.dtype.kind in "iub" else np.float64), axis=1)
        ex = Exact({"": np.asarray(red)}, f"{name.split('.')[1]} is exact", ulp=0) if uniq.size else None
    else:
        one = np.asarray(ident, dtype=x.dtype)
        ex = _reduce_exact(name, win, (1,), one, rt, width) if uniq.size else None
    parts = {}
    bounds = {}
    base_re, base_im, _ = _split(xflat)
    for key in (["real", "imag"] if x.dtype.kind == "c" else [""]):
        full = np.array((base_im if key == "imag" else base_re), dtype=object if x.dtype.kind in "iub" else np.float64)
        b = np.zeros(full.shape)
        if ex is not None:
            full[uniq] = ex.parts[key]
            if ex.abs_bound is not None:
                b[uniq] = ex.abs_bound[key]
        parts[key] = full.reshape(x.shape)
        bounds[key] = b.reshape(x.shape)
    if ex is None:
        return Exact(parts, "no update reaches the input: exact", ulp=0)
    return Exact(parts, ex.criterion.replace("summation", "scatter-add") + " per target element",
                 ulp=ex.ulp, abs_bound=bounds if ex.abs_bound is not None else None,
                 oracle="exact, rounded once (targets from the interpreter's scatter planner)")


def _convert(op, operands, rt):
    """stablehlo.convert to a float or complex type: the exact input value rounded once."""
    (x,) = operands
    x = np.asarray(x)
    if not (rt.is_float or rt.is_complex):
        raise NoOracle(f"stablehlo.convert to {rt.name}")
    if x.dtype.kind == "c" and not rt.is_complex:
        raise NoOracle("stablehlo.convert of complex to real")
    if x.size > MAX_ELEMENTWISE:
        raise NoOracle(f"stablehlo.convert on {x.size} elements (more than {MAX_ELEMENTWISE})")
    fmt = float_format(_part_name(rt.name))

    def one(v):
        if isinstance(v, float) and not math.isfinite(v):
            r = round_value(v, fmt)
        else:
            r = round_value(Fraction(v), fmt)
            if r == 0 and (isinstance(v, float) and math.copysign(1.0, v) < 0):
                r = -0.0
        return math.nan if r is UNSPECIFIED else r
    re, im, is_int = _split(x)
    conv = lambda a: np.array([one(int(v) if is_int else float(v)) for v in a.ravel().tolist()],  # noqa: E731
                              dtype=np.float64).reshape(a.shape)
    if rt.is_complex:
        parts = {"real": conv(re), "imag": conv(im) if im is not None else np.zeros(re.shape)}
    else:
        parts = {"": conv(re)}
    return Exact(parts, "one correct rounding (0 ULP)", ulp=0, oracle="exact value, rounded once")


ORACLES = {"stablehlo.convert": _convert, "stablehlo.scatter": _scatter, "stablehlo.dot_general": _dot_general, "stablehlo.convolution": _convolution,
           "stablehlo.fft": _fft, "stablehlo.reduce_window": _reduce_window, "stablehlo.reduce": _reduce}


def oracle_for(op_name: str):
    if op_name in ORACLES:
        return ORACLES[op_name]
    if op_name in EWM.BY_NAME or op_name in EWM.BROADCAST_BINARY:
        return _elementwise
    return None


# ----------------------------------------------------------------------- judging

def _ulp_of(x: np.ndarray, part: str) -> np.ndarray:
    fmt = float_format(part)
    _, e = np.frexp(np.where(np.isfinite(x), x, 0.0))
    return np.ldexp(1.0, np.maximum(e - 1, fmt.emin) - fmt.precision + 1)


def _measure(side, exact: Exact, key: str, part_et: str):
    """(max ULP, max abs error, number of elements outside the bound) of one side."""
    ex = exact.parts[key]
    et = ELEMENT_TYPES[part_et]
    side = np.asarray(side)
    if not (et.is_float or et.is_complex):
        d = [0 if e is None else abs(int(a) - int(e)) for a, e in zip(side.ravel().tolist(), ex.ravel().tolist())]
        return max(d, default=0), float(max(d, default=0)), sum(1 for v in d if v)
    s = side.astype(np.float64)
    known = ~np.isnan(ex)
    if not known.any():
        return 0, 0.0, 0
    u = ulp_difference(s[known].astype(et.dtype), ex[known].astype(et.dtype), et).astype(object)
    with np.errstate(all="ignore"):
        err = np.abs(s[known] - ex[known])
    err = np.where(np.isnan(err), np.inf, err)
    ok = np.zeros(err.shape, dtype=bool)
    if exact.ulp is not None:
        ok |= np.array([int(v) <= exact.ulp for v in u.tolist()], dtype=bool).reshape(err.shape)
    if exact.abs_bound is not None:
        bound = np.asarray(exact.abs_bound[key])[known] + _ulp_of(ex[known], part_et)
        ok |= err <= bound
    return max(int(v) for v in u.ravel().tolist()), float(err.max()), int((~ok).sum())


def _quantized(t) -> bool:
    return "Quantized" in type(getattr(t, "element_type", None)).__name__


def _find_op(module, value, part: str, stack: list):
    """(op under test, result index, part) for a value `@main` returns, through real/imag
    and calls into private functions."""
    for _ in range(64):
        op = value.owner
        if op is None or not hasattr(op, "name"):
            if stack:                                      # a callee's argument
                call, block = stack.pop()
                idx = [id(a) for a in block.arguments].index(id(value))
                value = call.operands[idx]
                continue
            raise NoOracle("a checked value that no op computes")
        if op.name in _PASSTHROUGH and not part:
            part = _PASSTHROUGH[op.name]
            value = op.operands[0]
            continue
        if op.name == "func.call":
            ref = op.attributes["callee"]
            name = getattr(ref, "root", None) or getattr(ref, "value", None) or str(ref).lstrip("@")
            if name not in module.functions:
                raise NoOracle(f"call of an unknown function @{name}")
            callee = module.functions[name]
            block = callee.regions[0].blocks[0]
            ri = [id(r) for r in op.results].index(id(value))
            stack.append((op, block))
            value = block.terminator.operands[ri]
            continue
        return op, [id(r) for r in op.results].index(id(value)), part, list(stack)
    raise NoOracle("call chain too deep")


def _operand_value(op, i, store, stack):
    v = op.operands[i]
    stack = list(stack)
    for _ in range(64):
        if id(v) in store:
            return store[id(v)]
        if stack:
            call, block = stack.pop()
            ids = [id(a) for a in block.arguments]
            if id(v) in ids:
                v = call.operands[ids.index(id(v))]
                continue
        break
    raise NoOracle(f"operand {i} of {op.name} not traced")


def judge_case(case, force: bool = False) -> Tuple[bool, List[str]]:
    """(whether the interpreter's result disagrees with the expected value, report lines);
    `force` judges agreeing cases too."""
    from stablehlo_ref.runtrace import HookedInterpreter
    from stablehlo_ref.text import parse
    from .compare import compare_case, describe_mismatch
    if case.num_processes != 1 or case.infeed:
        return True, [f"{case.id}: no verdict (multi-process or infeed case: no oracle for it)"]
    module = parse(case.program, case.id)
    store = {}

    def hook(op, values):
        for r, v in zip(op.results, values):
            store[id(r)] = v
    outputs = HookedInterpreter(module, [hook]).call("main", [])
    mismatch = compare_case(case, list(outputs))
    head = f"{case.id}:"
    if mismatch is None and not force:
        return False, [f"{head} agrees with its expected value (no verdict needed)"]
    lines = [f"{head} " + ("agrees with its expected value" if mismatch is None
                           else f"disagrees: {describe_mismatch(mismatch)}")]
    ret = module.functions["main"].regions[0].blocks[0].terminator
    cache = {}
    verdict_x, verdict_o, judged = [], [], 0
    for i, value in enumerate(ret.operands):
        label = case.labels[i] if i < len(case.labels) else str(i)
        op = None
        try:
            op, ri, part, stack = _find_op(module, value, "", [])
            fn = oracle_for(op.name)
            if fn is None:
                raise NoOracle(op.name)
            if ri != 0:
                raise NoOracle(f"{op.name} (result {ri} of a multi-result op)")
            if any(_quantized(v.type) for v in list(op.operands) + list(op.results)):
                raise NoOracle(f"{op.name} on quantized types")
            if id(op) not in cache:
                operands = [_operand_value(op, j, store, stack) for j in range(len(op.operands))]
                cache[id(op)] = fn(op, operands, elem(op.results[0].type))
            exact = cache[id(op)]
            key = part if part in exact.parts else ""
            if key not in exact.parts:
                raise NoOracle(f"{op.name} part {part}")
        except NoOracle as e:
            lines.append(f"  output {label}: no oracle for {e}")
            continue
        except (StableHLOError, ValueError, TypeError, KeyError, IndexError, ZeroDivisionError, OverflowError) as e:
            lines.append(f"  output {label}: no oracle for {getattr(op, 'name', 'this program')} "
                         f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''})")
            continue
        pet = case.element_types[i]
        src = case.expected_from[i] if i < len(case.expected_from) else "constant"
        xu, xa, xbad = _measure(case.expected[i], exact, key, pet)
        ou, oa, obad = _measure(outputs[i], exact, key, pet)
        judged += 1
        verdict_x.append(xbad == 0)
        verdict_o.append(obad == 0)
        scale = float(np.nanmax(np.abs(exact.parts[key].astype(np.float64)))) if exact.parts[key].size else 0.0
        who = "expected (file)" if src == "constant" else "expected (reference-computed)"
        lines.append(f"  output {label} ({op.name}, oracle: {exact.oracle}; accuracy: {exact.criterion}):")
        lines.append(f"    {who}: max {xu} ULP, max abs err {xa:.3g}, "
                     f"{'within' if not xbad else f'OUTSIDE ({xbad} elements)'}")
        lines.append(f"    this interpreter: max {ou} ULP, max abs err {oa:.3g}, "
                     f"{'within' if not obad else f'OUTSIDE ({obad} elements)'}; |exact| max {scale:.3g}")
    if judged:
        x, o = all(verdict_x), all(verdict_o)
        if x and o:
            v = "both within the spec's accuracy"
        elif o:
            v = "the interpreter is within the spec's accuracy; the expected value is not"
        elif x:
            v = "the expected value is within the spec's accuracy; the interpreter is NOT"
        else:
            v = "neither side is within the spec's accuracy"
        lines.append(f"  verdict: {v}")
    else:
        lines.append("  verdict: none (no oracle)")
    return mismatch is not None, lines


def judge_file(path: Path, rel: str, only_disagreeing: bool = False, force: bool = False) -> List[str]:
    from .cases import extract_cases
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return [f"{rel}: cannot read ({e})"]
    errors: list = []
    try:
        cases = extract_cases(text, rel, errors)
    except StableHLOError as e:
        return [] if only_disagreeing else [f"{rel}: no case ({str(e).splitlines()[0]})"]
    out = []
    if not cases and not only_disagreeing:
        out.append(f"{rel}: no checked case" + (f" ({errors[0][1]})" if errors else ""))
    for case in cases:
        try:
            bad, lines = judge_case(case, force)
        except StableHLOError as e:
            bad, lines = True, [f"{case.id}: the interpreter cannot run it "
                                f"({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}); no verdict"]
        except Exception as e:   # noqa: BLE001 - never a traceback: say which case and why
            bad, lines = True, [f"{case.id}: no verdict (internal error: {type(e).__name__}: {e})"]
        if bad or not only_disagreeing:
            out.extend(lines)
    return out


def pinned_files(corpus: Path = CORPUS) -> List[Tuple[Path, str]]:
    """(path, rel) of each file named in tests/known_failures/testdata.txt."""
    seen = []
    for line in PINNED.read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        rel = line.split("\t", 1)[0].split("#", 1)[0].strip()
        if rel not in [r for _, r in seen]:
            seen.append((corpus / rel, rel))
    return seen


def _files_under(arg: str) -> List[Tuple[Path, str]]:
    p = Path(arg)
    if p.is_file():
        return [(p, f"{p.parent.name}/{p.name}")]
    if p.is_dir():
        base = p.resolve().parent
        return [(f, f.relative_to(base).as_posix()) for f in sorted(p.resolve().rglob("*.mlir"))]
    raise FileNotFoundError(arg)


USAGE = ("usage: python -m stablehlo_ref.conformance.testdata_verdict [--disagreeing | --all-verdicts] [FILE | DIR ...]\n"
         "  no FILE/DIR: the files pinned in tests/known_failures/testdata.txt\n"
         "  --disagreeing: report only the cases whose check fails (needs FILE or DIR)\n"
         "  --all-verdicts: judge agreeing cases too")


def main(argv: Optional[Sequence[str]] = None, out=None) -> int:
    out = out or sys.stdout
    argv = list(sys.argv[1:] if argv is None else argv)
    disagreeing = force = False
    paths = []
    for a in argv:
        if a in ("-h", "--help"):
            print(USAGE, file=out)
            return 0
        if a == "--disagreeing":
            disagreeing = True
        elif a == "--all-verdicts":
            force = True
        elif a.startswith("-"):
            print(f"error: unknown option {a} (see --help)", file=sys.stderr)
            return 2
        else:
            paths.append(a)
    if disagreeing and force:
        print("error: --disagreeing and --all-verdicts exclude each other", file=sys.stderr)
        return 2
    if disagreeing and not paths:
        print("error: --disagreeing needs a directory (or files) to run (see --help)", file=sys.stderr)
        return 2
    try:
        if paths:
            files = []
            for a in paths:
                found = _files_under(a)
                if not found:
                    print(f"error: no .mlir files under {a}", file=sys.stderr)
                    return 2
                files.extend(found)
        else:
            files = pinned_files()
            missing = [str(p) for p, _ in files if not p.is_file()]
            if missing:
                print(f"error: the pinned files need the upstream corpus; not found: {missing[0]}", file=sys.stderr)
                return 2
    except FileNotFoundError as e:
        print(f"error: no such file or directory: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    for path, rel in files:
        for line in judge_file(path, rel, only_disagreeing=disagreeing, force=force):
            print(line, file=out, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
