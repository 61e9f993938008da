"""Scalar oracles: what the spec says one element of an op's result is, computed from the
exact input values with Python integers, `fractions.Fraction` (exact) or mpmath (at
`formats.PREC` bits), never with the interpreter under test or numpy's arithmetic. A float
result is handed to `formats.round_value`, which rounds it once to the result type.

Float inputs arrive as Python floats (every element type of the spec converts to f64
exactly). Functions return a Fraction (exact), an mpf (transcendental), a Python float (a
special: NaN, an infinity, a signed zero, or a value that is exact as it stands), or
`UNSPECIFIED` where the spec leaves the element implementation-defined."""
from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from .formats import UNSPECIFIED, to_fraction

NAN = math.nan
INF = math.inf


def _neg(x: float) -> bool:
    return math.copysign(1.0, x) < 0


def _zero_or(q: Fraction):
    return 0.0 if q == 0 else q


# ------------------------------------------------------------------- IEEE arithmetic, exact

def add(x, y):
    if math.isnan(x) or math.isnan(y):
        return NAN
    if math.isinf(x) or math.isinf(y):
        if math.isinf(x) and math.isinf(y) and x != y:
            return NAN
        return x if math.isinf(x) else y
    if x == 0 and y == 0:
        return -0.0 if (_neg(x) and _neg(y)) else 0.0
    return _zero_or(Fraction(x) + Fraction(y))


def subtract(x, y):
    return add(x, -y)


def multiply(x, y):
    if math.isnan(x) or math.isnan(y):
        return NAN
    sign = _neg(x) != _neg(y)
    if math.isinf(x) or math.isinf(y):
        if x == 0 or y == 0:
            return NAN
        return -INF if sign else INF
    if x == 0 or y == 0:
        return -0.0 if sign else 0.0
    return Fraction(x) * Fraction(y)


def divide(x, y):
    if math.isnan(x) or math.isnan(y):
        return NAN
    sign = _neg(x) != _neg(y)
    if math.isinf(x):
        return NAN if math.isinf(y) else (-INF if sign else INF)
    if math.isinf(y):
        return -0.0 if sign else 0.0
    if y == 0:
        return NAN if x == 0 else (-INF if sign else INF)
    if x == 0:
        return -0.0 if sign else 0.0
    return Fraction(x) / Fraction(y)


def remainder(x, y):
    """fmod: x - trunc(x / y) * y, exact; the sign follows the dividend."""
    if math.isnan(x) or math.isnan(y) or math.isinf(x) or y == 0:
        return NAN
    if math.isinf(y) or x == 0:
        return x
    qx, qy = Fraction(x), Fraction(y)
    t = qx / qy
    n = t.numerator // t.denominator if t >= 0 else -((-t.numerator) // t.denominator)
    r = qx - n * qy
    return (-0.0 if _neg(x) else 0.0) if r == 0 else r


def maximum(x, y):
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == 0 and y == 0:
        return -0.0 if (_neg(x) and _neg(y)) else 0.0
    return x if x > y else y


def minimum(x, y):
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == 0 and y == 0:
        return -0.0 if (_neg(x) or _neg(y)) else 0.0
    return x if x < y else y


def negate(x):
    return -x


def abs_(x):
    return abs(x)


def sign(x):
    if math.isnan(x) or x == 0:
        return x
    return -1.0 if x < 0 else 1.0


def floor(x):
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    r = float(math.floor(x))
    return -0.0 if r == 0 and _neg(x) else r


def ceil(x):
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    r = float(math.ceil(x))
    return -0.0 if r == 0 and _neg(x) else r


def round_afz(x):
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    q = abs(Fraction(x))
    n = math.floor(q + Fraction(1, 2))
    return math.copysign(float(n), x)


def round_even(x):
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    n = round(Fraction(x))            # Fraction.__round__ rounds half to even, exactly
    return math.copysign(float(n), x)


def sqrt(x):
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0 or math.isinf(x):
        return x
    return mpmath.sqrt(mpmath.mpf(x))


def rsqrt(x):
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0:
        return -INF if _neg(x) else INF
    if math.isinf(x):
        return 0.0
    return 1 / mpmath.sqrt(mpmath.mpf(x))


def cbrt(x):
    if math.isnan(x) or math.isinf(x) or x == 0:
        return x
    r = mpmath.cbrt(mpmath.mpf(abs(x)))
    return -r if x < 0 else r


def clamp(lo, x, hi):
    if math.isnan(lo) or math.isnan(x) or math.isnan(hi):
        return NAN
    return minimum(maximum(x, lo), hi)


def select(p, t, f):
    return t if p else f


# ------------------------------------------------------------------- transcendental (mpmath)

def exponential(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return 0.0 if x < 0 else INF
    if x == 0:
        return 1.0
    return mpmath.exp(mpmath.mpf(x))


def expm1(x):
    if math.isnan(x) or x == 0:
        return x
    if math.isinf(x):
        return -1.0 if x < 0 else INF
    return mpmath.expm1(mpmath.mpf(x))


def log(x):
    if math.isnan(x) or x < 0:
        return NAN
    if x == 0:
        return -INF
    if math.isinf(x):
        return INF
    if x == 1:
        return 0.0
    return mpmath.log(mpmath.mpf(x))


def log1p(x):
    if math.isnan(x) or x < -1:
        return NAN
    if x == -1:
        return -INF
    if math.isinf(x) or x == 0:
        return x
    return mpmath.log1p(mpmath.mpf(x))


def logistic(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return 0.0 if x < 0 else 1.0
    return 1 / (1 + mpmath.exp(-mpmath.mpf(x)))


def _periodic(fn, x, zero_keeps_sign=True):
    if math.isnan(x) or math.isinf(x):
        return NAN
    if x == 0:
        return x if zero_keeps_sign else 1.0
    return fn(mpmath.mpf(x))


def sine(x):
    return _periodic(mpmath.sin, x)


def cosine(x):
    return _periodic(mpmath.cos, x, zero_keeps_sign=False)


def tan(x):
    return _periodic(mpmath.tan, x)


def tanh(x):
    if math.isnan(x) or x == 0:
        return x
    if math.isinf(x):
        return math.copysign(1.0, x)
    return mpmath.tanh(mpmath.mpf(x))


def sinh(x):
    if math.isnan(x) or x == 0 or math.isinf(x):
        return x
    return mpmath.sinh(mpmath.mpf(x))


def cosh(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return INF
    return mpmath.cosh(mpmath.mpf(x)) if x != 0 else 1.0


def asinh(x):
    if math.isnan(x) or x == 0 or math.isinf(x):
        return x
    return mpmath.asinh(mpmath.mpf(x))


def acosh(x):
    if math.isnan(x) or x < 1:
        return NAN
    if math.isinf(x):
        return INF
    return 0.0 if x == 1 else mpmath.acosh(mpmath.mpf(x))


def atanh(x):
    if math.isnan(x) or abs(x) > 1:
        return NAN
    if abs(x) == 1:
        return math.copysign(INF, x)
    return x if x == 0 else mpmath.atanh(mpmath.mpf(x))


def asin(x):
    if math.isnan(x) or abs(x) > 1:
        return NAN
    return x if x == 0 else mpmath.asin(mpmath.mpf(x))


def acos(x):
    if math.isnan(x) or abs(x) > 1:
        return NAN
    return 0.0 if x == 1 else mpmath.acos(mpmath.mpf(x))


def atan(x):
    if math.isnan(x) or x == 0:
        return x
    if math.isinf(x):
        return math.copysign(1, x) * mpmath.pi / 2
    return mpmath.atan(mpmath.mpf(x))


def atan2(y, x):
    """IEEE 754 / C99 atan2, including the signed zeros and infinities."""
    if math.isnan(x) or math.isnan(y):
        return NAN
    pi = mpmath.pi
    if y == 0:
        if x > 0 or (x == 0 and not _neg(x)):
            return y                       # +-0
        return -pi if _neg(y) else pi      # x < 0 or x == -0
    if math.isinf(y):
        if math.isinf(x):
            r = pi / 4 if x > 0 else 3 * pi / 4
        else:
            r = pi / 2
        return -r if y < 0 else r
    if math.isinf(x):
        if x > 0:
            return -0.0 if y < 0 else 0.0
        return -pi if y < 0 else pi
    if x == 0:
        return -pi / 2 if y < 0 else pi / 2
    return mpmath.atan2(mpmath.mpf(y), mpmath.mpf(x))


def erf(x):
    if math.isnan(x) or x == 0:
        return x
    if math.isinf(x) or abs(x) > 40:
        return math.copysign(1.0, x)
    return mpmath.erf(mpmath.mpf(x))


def erfc(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x) or abs(x) > 40:     # beyond 40 the result rounds to 0 or 2 in every format
        return 0.0 if x > 0 else 2.0
    return mpmath.erfc(mpmath.mpf(x)) if x != 0 else 1.0


def power(x, y):
    """pow for floats on the cases generated (C99 pow's specials for the ones used)."""
    if y == 0:
        return 1.0
    if math.isnan(x) or math.isnan(y):
        return 1.0 if x == 1 else NAN
    if x == 1:
        return 1.0
    if math.isinf(y) or math.isinf(x):
        return UNSPECIFIED          # not generated: C99's table, left to the specials list
    if x == 0:
        odd = float(y).is_integer() and int(y) % 2 == 1
        if y < 0:
            return math.copysign(INF, x) if odd else INF
        return x if odd else 0.0
    if x < 0:
        if not float(y).is_integer():
            return NAN
        r = to_fraction(x) ** int(y) if abs(y) < 64 else mpmath.power(mpmath.mpf(x), mpmath.mpf(y))
        return r
    if float(y).is_integer() and abs(y) < 64:
        return Fraction(x) ** int(y)
    return mpmath.power(mpmath.mpf(x), mpmath.mpf(y))


def lgamma(x):
    if math.isnan(x):
        return NAN
    if math.isinf(x):
        return INF
    if x <= 0 and float(x).is_integer():
        return INF
    if x == 1 or x == 2:
        return 0.0
    return mpmath.re(mpmath.loggamma(mpmath.mpf(x))) if x > 0 else mpmath.log(abs(mpmath.gamma(mpmath.mpf(x))))


def digamma(x):
    if math.isnan(x):
        return NAN
    if x <= 0 and float(x).is_integer():
        return UNSPECIFIED         # a pole: implementations give NaN or +-inf
    if math.isinf(x):
        return INF if x > 0 else NAN
    return mpmath.digamma(mpmath.mpf(x))


def erf_inv(x):
    if math.isnan(x) or abs(x) > 1:
        return NAN
    if abs(x) == 1:
        return math.copysign(INF, x)
    return x if x == 0 else mpmath.erfinv(mpmath.mpf(x))


def bessel_i1e(x):
    if math.isnan(x) or x == 0:
        return x
    if math.isinf(x):
        return math.copysign(0.0, x)
    m = mpmath.mpf(x)
    return mpmath.besseli(1, m) * mpmath.exp(-abs(m))


def square(x):
    return multiply(x, x)


def next_after(x, y, fmt):
    """The neighbour of x towards y in `fmt` (exact by construction: a step of one ULP)."""
    if math.isnan(x) or math.isnan(y):
        return NAN
    if x == y:
        return y
    if x == 0:
        s = fmt.smallest_subnormal
        return s if y > 0 else -s
    up = (y > x)
    a = abs(x)
    e = math.frexp(a)[1] - 1
    q = max(e, fmt.emin) - (fmt.precision - 1)
    step = math.ldexp(1.0, q)
    away = up == (x > 0)
    if not away and a == math.ldexp(1.0, e) and e > fmt.emin:
        step /= 2                   # stepping down across a binade boundary
    if math.isinf(x):
        return math.copysign(fmt.max, x)
    r = a + step if away else a - step
    if r > fmt.max:
        return math.copysign(INF, x) if fmt.has_inf else UNSPECIFIED
    return math.copysign(r, x) if r != 0 else math.copysign(0.0, x)


# ------------------------------------------------------------------- integers

def wrap(v: int, bits: int, signed: bool) -> int:
    v &= (1 << bits) - 1
    if signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return v


def int_div(x, y):
    if y == 0:
        return UNSPECIFIED          # the spec does not define division by zero
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


def int_rem(x, y):
    if y == 0:
        return UNSPECIFIED
    return x - int_div(x, y) * y


def int_pow(x, y):
    if y < 0:
        return UNSPECIFIED          # negative integer exponents: not fixed by the spec
    return x ** y


def clz(v: int, bits: int) -> int:
    u = v & ((1 << bits) - 1)
    return bits - u.bit_length()


def popcnt(v: int, bits: int) -> int:
    return bin(v & ((1 << bits) - 1)).count("1")


def shift_left(x, s, bits):
    u = s & ((1 << bits) - 1)       # the shift amount as unsigned
    return 0 if u >= bits else x << u


def shift_right_logical(x, s, bits):
    u = s & ((1 << bits) - 1)
    return 0 if u >= bits else (x & ((1 << bits) - 1)) >> u


def shift_right_arithmetic(x, s, bits, signed):
    u = s & ((1 << bits) - 1)
    if not signed:
        # an unsigned operand's sign bit is its top bit
        x = wrap(x, bits, True)
    if u >= bits:
        return -1 if x < 0 else 0
    return x >> u


def mulhi(x, y, bits):
    return (x * y) >> bits


# ------------------------------------------------------------------- complex (principal branches)
# Each takes a Python complex with finite parts and returns an mpmath mpc (or exact parts).
# A point ON a branch cut is ambiguous (the sign of a zero part picks the side, and C99 and
# mpmath disagree there): those raise ValueError, which the generators treat as "left out".

def _on_real_cut(z, inside):
    """z lies on the real axis (imaginary part a zero) at a real value where `inside` fails."""
    return z.imag == 0 and not inside(z.real)


def _on_imag_cut(z, inside):
    return z.real == 0 and not inside(z.imag)


def _cut(msg):
    raise ValueError(f"on a branch cut: {msg}")


def c_acos(z):
    if _on_real_cut(z, lambda r: -1 <= r <= 1):
        _cut("acos, real axis outside [-1, 1]")
    return mpmath.acos(mpmath.mpc(z))


def c_asin(z):
    if _on_real_cut(z, lambda r: -1 <= r <= 1):
        _cut("asin, real axis outside [-1, 1]")
    return mpmath.asin(mpmath.mpc(z))


def c_atan(z):
    if _on_imag_cut(z, lambda r: -1 < r < 1):
        _cut("atan, imaginary axis outside (-i, i)")
    return mpmath.atan(mpmath.mpc(z))


def c_acosh(z):
    if _on_real_cut(z, lambda r: r >= 1):
        _cut("acosh, real axis below 1")
    return mpmath.acosh(mpmath.mpc(z))


def c_asinh(z):
    if _on_imag_cut(z, lambda r: -1 <= r <= 1):
        _cut("asinh, imaginary axis outside [-i, i]")
    return mpmath.asinh(mpmath.mpc(z))


def c_atanh(z):
    if _on_real_cut(z, lambda r: -1 < r < 1):
        _cut("atanh, real axis outside (-1, 1)")
    return mpmath.atanh(mpmath.mpc(z))


def c_cbrt(z):
    """The principal cube root exp(log(z) / 3) (upstream's reference: |z|^(1/3) at angle
    atan2(im, re) / 3); the cut is the negative real axis."""
    if z == 0:
        return mpmath.mpc(0)
    if _on_real_cut(z, lambda r: r > 0):
        _cut("cbrt, negative real axis")
    return mpmath.exp(mpmath.log(mpmath.mpc(z)) / 3)


def c_atan2(y, x):
    """Complex atan2 as upstream's reference interpreter defines it:
    atan2(y, x) = -i log((x + i y) / sqrt(x^2 + y^2)), principal sqrt and log."""
    y, x = mpmath.mpc(y), mpmath.mpc(x)
    s = x * x + y * y                       # exact at the working precision for these inputs
    if s == 0:
        raise ZeroDivisionError("complex atan2: x^2 + y^2 = 0")
    if s.imag == 0 and s.real < 0:
        _cut("complex atan2: sqrt of a negative real")
    w = (x + 1j * y) / mpmath.sqrt(s)
    if abs(w.imag) <= abs(w) * mpmath.mpf(2) ** -(mpmath.mp.prec - 8) and w.real < 0:
        _cut("complex atan2: log of a negative real")
    return -1j * mpmath.log(w)


def _lex_gt(a, b):
    return a.real > b.real if a.real != b.real else a.imag > b.imag


def c_maximum(a, b):
    """Lexicographic maximum of the (real, imaginary) pairs (the spec); exact."""
    r = a if _lex_gt(a, b) else b
    return (r.real, r.imag)             # one of the operands, exactly (signed zeros kept)


def c_minimum(a, b):
    r = a if _lex_gt(b, a) else b
    return (r.real, r.imag)
