"""Constants for the f64 lgamma / digamma kernels near the zeros of those functions,
computed in 40-digit `decimal` arithmetic. They are computed once and saved
(`chlo.ROOTS_TABLE`, rewritten with `chlo.roots_table_json()`; a slow test recomputes it and
compares every float), so a run reads them instead of spending seconds on them.

Near a zero r of f (lgamma or digamma), any formula that subtracts two O(1) terms (the
reflection formulas) loses all relative accuracy. There the kernels evaluate the Taylor
expansion f(x) = sum_k a_k t^k with t = (x - r_hi) - r_lo, where r = r_hi + r_lo is the
zero to about 2^-106 (so t, and with it f(x), keeps full relative accuracy). The zeros and
the coefficients come from the functions' own series, written here:

* zeta(s, x) (Hurwitz, integer s >= 2, any non-pole x): the first N terms summed directly,
  the rest by Euler-Maclaurin from y = x + N (>= 40);
* digamma(x) = log(y) - 1/(2y) - sum_j B_2j / (2j y^2j) - sum_{k<N} 1/(x + k);
* log|Gamma(x)| = lgamma(y) (Stirling) - sum_{k<N} log|x + k|;
* psi^(m)(x) = (-1)^(m+1) m! zeta(m + 1, x).

The zeros are found by Newton steps in decimal from f64 brackets (bisection on the sign of
the f64 reflection formula, which is accurate away from the zero)."""
from __future__ import annotations

from decimal import Decimal, localcontext
from fractions import Fraction
from functools import lru_cache
from typing import Callable, List, Tuple

PREC = 40
_SHIFT = 40                  # Euler-Maclaurin / asymptotic series from x + N >= 40
_NB = 24                     # Bernoulli terms B_2 .. B_48


@lru_cache(maxsize=None)
def bernoulli_even(count: int) -> Tuple[Fraction, ...]:
    """B_2, B_4, ..., B_2count (exact), from sum_{k<m+1} C(m+1, k) B_k = 0."""
    b = [Fraction(1)]
    for m in range(1, 2 * count + 1):
        acc = Fraction(0)
        c = 1                          # C(m+1, k)
        for k in range(m):
            acc += c * b[k]
            c = c * (m + 1 - k) // (k + 1)
        b.append(-acc / (m + 1))
    return tuple(b[2 * j] for j in range(1, count + 1))


def _d(fr: Fraction) -> Decimal:
    return Decimal(fr.numerator) / Decimal(fr.denominator)


@lru_cache(maxsize=None)
def pi_dec() -> Decimal:
    """pi by Machin's formula, 16 atan(1/5) - 4 atan(1/239), in integers scaled by 10^60."""
    scale = 10 ** (PREC + 20)

    def atan_inv(n):
        total, term, k, sign = 0, scale // n, 1, 1
        n2 = n * n
        while term:
            total += sign * (term // k)
            term //= n2
            k += 2
            sign = -sign
        return total

    with localcontext() as ctx:
        ctx.prec = PREC + 10
        return Decimal(16 * atan_inv(5) - 4 * atan_inv(239)) / Decimal(scale)


def _shift(x: Decimal):
    if not -1e4 < x < 1e300:
        raise ArithmeticError(f"argument {x} out of the plan-time range")
    n = 0
    y = x
    while y < _SHIFT:
        y += 1
        n += 1
    return y, n


def digamma_dec(x: Decimal) -> Decimal:
    with localcontext() as ctx:
        ctx.prec = PREC + 10
        y, n = _shift(x)
        acc = y.ln() - 1 / (2 * y)
        y2 = y * y
        p = y2
        for j, b in enumerate(bernoulli_even(_NB), start=1):
            acc -= _d(b) / (2 * j * p)
            p *= y2
        for k in range(n):
            acc -= 1 / (x + k)
        return +acc


def lgamma_dec(x: Decimal) -> Decimal:
    """log|Gamma(x)|."""
    with localcontext() as ctx:
        ctx.prec = PREC + 10
        y, n = _shift(x)
        acc = (y - Decimal("0.5")) * y.ln() - y + (2 * pi_dec()).ln() / 2
        y2 = y * y
        p = y
        for j, b in enumerate(bernoulli_even(_NB), start=1):
            acc += _d(b) / (2 * j * (2 * j - 1) * p)
            p *= y2
        for k in range(n):
            acc -= abs(x + k).ln()
        return +acc


def hurwitz_dec(smax: int, x: Decimal) -> List[Decimal]:
    """[zeta(s, x) for s = 2 .. smax] (x not a pole)."""
    with localcontext() as ctx:
        ctx.prec = PREC + 10
        y, n = _shift(x)
        sums = [Decimal(0)] * (smax + 1)
        for k in range(n):
            inv = 1 / (x + k)
            p = inv * inv
            for s in range(2, smax + 1):
                sums[s] += p
                p *= inv
        bern = [_d(b) for b in bernoulli_even(_NB)]
        inv_y = 1 / y
        out = []
        for s in range(2, smax + 1):
            ys = inv_y ** s
            tail = y * ys / (s - 1) + ys / 2
            fact = Decimal(s)                 # s (s+1) ... (s+2j-2) / (2j)!
            p = ys * inv_y
            for j, b in enumerate(bern, start=1):
                if j > 1:
                    fact = fact * (s + 2 * j - 3) * (s + 2 * j - 2) / ((2 * j - 1) * (2 * j))
                else:
                    fact = fact / 2
                tail += b * fact * p
                p *= inv_y * inv_y
            out.append(+(sums[s] + tail))
        return out


def newton_dec(f: Callable[[Decimal], Decimal], df: Callable[[Decimal], Decimal], x0: float, steps: int = 4,
               bracket=None) -> Decimal:
    """Newton steps from x0 (a zero located to f64 resolution); a step leaving `bracket` is an error."""
    x = Decimal(x0)
    with localcontext() as ctx:
        ctx.prec = PREC + 10
        for _ in range(steps):
            x = x - f(x) / df(x)
            if bracket is not None and not (bracket[0] < x < bracket[1]):
                raise ArithmeticError(f"Newton step left {bracket} from {x0!r}")
    return x


def split(x: Decimal) -> Tuple[float, float]:
    """x as hi + lo in f64 (hi = x rounded, lo = the remainder rounded)."""
    hi = float(x)
    with localcontext() as ctx:
        ctx.prec = PREC + 10
        lo = float(x - Decimal(hi))
    return hi, lo


def bisect(f: Callable[[float], float], a: float, b: float) -> float:
    """A sign change of f in (a, b) to f64 resolution (f(a), f(b) of opposite signs)."""
    fa = f(a)
    for _ in range(200):
        m = 0.5 * (a + b)
        if m in (a, b):
            break
        fm = f(m)
        if (fm < 0) == (fa < 0):
            a, fa = m, fm
        else:
            b = m
    return 0.5 * (a + b)
