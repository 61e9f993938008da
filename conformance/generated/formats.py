"""Float formats and one correct rounding (round to nearest, ties to even) from an exact or
high-precision value to any element type of the spec, written without numpy's or the
interpreter's arithmetic: the oracles' only way to produce a float result.

A value to round is a `Fraction` (exact), an `mpmath.mpf` (computed at `PREC` bits: rounding
it once is correct unless the true value lies within 2**-PREC relative of a tie, which no
case relies on), or a Python float holding a special (NaN, an infinity, a signed zero).
`round_value` returns the Python float of the rounded value (exactly representable in the
target format) or `UNSPECIFIED` when the spec does not fix the result in that format
(overflow in a format without infinities, NaN in one without NaN, values below the smallest
`f8E8M0FNU`)."""
from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Optional

import mpmath
import numpy as np

PREC = 256            # bits of mpmath's working precision for transcendental oracles


class _Unspecified:
    def __repr__(self):
        return "UNSPECIFIED"


UNSPECIFIED = _Unspecified()


@dataclass(frozen=True)
class FloatFormat:
    name: str                 # spec text name (f32, bf16, f8E4M3FN, tf32 ...)
    dtype: np.dtype           # storage dtype (tf32 is stored in float32)
    precision: int            # significand bits including the implicit one
    emin: int                 # exponent of the smallest normal number
    max: float                # largest finite value
    has_inf: bool
    has_nan: bool
    has_neg_zero: bool
    has_subnormals: bool
    has_zero: bool = True
    unsigned: bool = False

    @property
    def smallest_subnormal(self) -> float:
        return math.ldexp(1.0, self.emin - self.precision + 1) if self.has_subnormals else math.ldexp(1.0, self.emin)

    @property
    def tiny(self) -> float:
        return math.ldexp(1.0, self.emin)

    @property
    def eps(self) -> float:
        return math.ldexp(1.0, 1 - self.precision)


@lru_cache(maxsize=None)
def float_format(name: str) -> FloatFormat:
    """The format of a spec float type, from its spec entry (exponent and mantissa bits) and
    ml_dtypes' description of the storage type; the two are checked against each other."""
    from stablehlo_ref import spec
    import ml_dtypes
    e = spec.element_type(name)
    if e.kind != "float":
        raise ValueError(f"{name} is not a float type")
    if name == "tf32":         # no numpy type: an IEEE-like format held in float32
        p = e.mantissa_bits + 1
        emax = 2 ** (e.exponent_bits - 1) - 1
        return FloatFormat(name, np.dtype(np.float32), p, 1 - emax,
                           math.ldexp(2.0 - math.ldexp(1.0, 1 - p), emax), True, True, True, True)
    dt = np.dtype(getattr(ml_dtypes, e.numpy) if hasattr(ml_dtypes, e.numpy) else e.numpy)
    fi = ml_dtypes.finfo(dt)      # numpy's finfo knows no ml_dtypes float on some numpy versions
    p = int(fi.nmant) + 1
    if p - 1 != e.mantissa_bits:
        raise ValueError(f"{name}: spec says {e.mantissa_bits} mantissa bits, {dt} has {p - 1}")
    with np.errstate(all="ignore"):
        specials = np.array([np.inf, np.nan, -0.0, 0.0], np.float64).astype(dt).astype(np.float64)
    sub = float(fi.smallest_subnormal)
    tiny = float(fi.tiny)
    return FloatFormat(name, dt, p, int(round(math.log2(tiny))), float(fi.max),
                       has_inf=bool(np.isinf(specials[0])), has_nan=bool(np.isnan(specials[1])),
                       has_neg_zero=bool(np.signbit(specials[2])), has_subnormals=sub < tiny,
                       has_zero=bool(specials[3] == 0.0), unsigned=name == "f8E8M0FNU")


def to_fraction(x) -> Fraction:
    if isinstance(x, Fraction):
        return x
    if isinstance(x, int):
        return Fraction(x)
    if isinstance(x, float):
        return Fraction(x)
    if not isinstance(x, mpmath.mpf) and hasattr(x, "_mpf_"):     # a constant (pi)
        x = +x
    if isinstance(x, mpmath.mpf):
        sign, man, exp, _ = x._mpf_
        f = Fraction(man) * (Fraction(2) ** exp)
        return -f if sign else f
    raise TypeError(type(x))


def round_value(x, fmt: FloatFormat):
    """The value `x` rounded once to `fmt` (see the module docstring)."""
    if isinstance(x, float) and (math.isnan(x) or math.isinf(x)):
        if math.isnan(x):
            return x if fmt.has_nan else UNSPECIFIED
        return x if fmt.has_inf else UNSPECIFIED
    if not isinstance(x, (mpmath.mpf, float, Fraction, int)) and hasattr(x, "_mpf_"):
        x = +x
    if isinstance(x, mpmath.mpf) and not mpmath.isfinite(x):
        return round_value(float(x), fmt)
    if isinstance(x, mpmath.mpf) and x != 0:
        # magnitudes far outside the format: decide before building a huge Fraction
        m = x._mpf_[2] + x._mpf_[3]
        if m > 1100:
            return (-math.inf if x < 0 else math.inf) if fmt.has_inf else UNSPECIFIED
        if m < -1200:
            return _zero(x < 0, fmt) if fmt.has_subnormals else UNSPECIFIED
    if isinstance(x, float) and x == 0.0:
        return _zero(math.copysign(1.0, x) < 0, fmt)
    q = to_fraction(x)
    if q == 0:
        return _zero(False, fmt)
    neg = q < 0
    a = -q if neg else q
    # e = floor(log2(a))
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:
        e -= 1
    if e < fmt.emin and not fmt.has_subnormals:
        return UNSPECIFIED
    if e >= math.frexp(fmt.max)[1]:         # at or beyond 2**(emax+1): above the largest finite value
        if fmt.has_inf:
            return -math.inf if neg else math.inf
        return UNSPECIFIED
    qe = max(e, fmt.emin) - (fmt.precision - 1)
    m = a / (Fraction(2) ** qe)
    n = m.numerator // m.denominator
    rem = m - n
    if rem > Fraction(1, 2) or (rem == Fraction(1, 2) and n % 2 == 1):
        n += 1
    if n == 0:
        return _zero(neg, fmt)
    try:
        r = math.ldexp(n, qe)
    except OverflowError:                  # f64 rounding up to 2**1024
        r = math.inf
    if r > fmt.max:
        if fmt.has_inf:
            return -math.inf if neg else math.inf
        return UNSPECIFIED
    if neg and fmt.unsigned:
        return UNSPECIFIED
    return -r if neg else r


def _zero(neg: bool, fmt: FloatFormat):
    if not fmt.has_zero:
        return UNSPECIFIED
    return -0.0 if (neg and fmt.has_neg_zero) else 0.0


def to_array(values, fmt: FloatFormat) -> np.ndarray:
    """Rounded Python floats (exactly representable in fmt) as an array of the storage dtype."""
    with np.errstate(all="ignore"):
        return np.array(values, dtype=np.float64).astype(fmt.dtype)


def representable(x: float, fmt: FloatFormat) -> bool:
    r = round_value(x, fmt)
    return r is not UNSPECIFIED and (r == x or (math.isnan(x) and isinstance(r, float) and math.isnan(r))) and \
        (x != 0.0 or math.copysign(1, r) == math.copysign(1, x))


def mp(x) -> "mpmath.mpf":
    """An exactly representable input value as an mpmath number (at PREC bits)."""
    return mpmath.mpf(x)


def workprec():
    return mpmath.workprec(PREC)


def bits_pattern_values(fmt: FloatFormat) -> Optional[list]:
    """Every value of a format of at most 8 bits (Python floats; NaN once), for exhaustive
    unary cases; None for wider formats."""
    if fmt.dtype.itemsize != 1:
        return None
    vals = np.arange(256, dtype=np.uint8).view(fmt.dtype).astype(np.float64)
    out, seen_nan, seen = [], False, set()
    for v in vals.tolist():
        if math.isnan(v):
            if not seen_nan:
                out.append(v)
                seen_nan = True
            continue
        key = (v, math.copysign(1, v))
        if key not in seen:
            seen.add(key)
            out.append(v)
    return out
