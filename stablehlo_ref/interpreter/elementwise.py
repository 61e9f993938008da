"""Elementwise kernels: arithmetic, math functions, logic, bit operations, comparisons,
select/clamp and conversions, for every element type, on whole arrays."""
from __future__ import annotations

import operator
import sys

import numpy as np

from ..errors import NotImplementedOpError
from .numerics import (NATIVE_IN_TYPE, contiguous, compute_dtype, elem, from_compute,
                       to_compute, wrap_int)
from .registry import KERNELS, args, kernel, op_cache, register_table, specializer
from ..ir.types import ElementType as _ElementType, TensorType as _TensorType


def make_complex(re, im):
    """complex(re, im) without the NaNs that `re + 1j * im` makes from infinite parts."""
    if np.iscomplexobj(re) or np.iscomplexobj(im):
        # (only an unverified program gets here: `stablehlo.complex` takes real parts)
        from ..errors import InterpreterError
        raise InterpreterError("stablehlo.complex: the parts must be real, got complex operands")
    re, im = np.broadcast_arrays(np.asarray(re, dtype=np.float64), np.asarray(im, dtype=np.float64))
    out = np.empty(re.shape, dtype=np.complex128)
    out.real = re
    out.imag = im
    return out


def _rt(op, i=0):
    return elem(op.results[i].type)


def _ot(op, i=0):
    return elem(op.operands[i].type)


# Float types whose numpy arithmetic is IEEE-correctly rounded for + - * / (f16
# computes through f32, which has more than 2p+2 bits, so the result is the same as rounding
# once); the same ops on 8..64-bit numpy integers wrap around natively.
_NATIVE_FLOATS = frozenset(("f16", "f32", "f64"))


def _int_binary(fn, a, b, et):
    return from_compute(fn(to_compute(a, et), to_compute(b, et)), et)


_BF16_EXACT_MIN = 64      # bf16 arrays of at least this many elements: `_bf16_exact`


def _bf16_exact(a, b, fn, et):
    """+ - * / of two bf16 arrays of one shape as `_binary` computes them (in f64, rounded
    once to bf16), at a third of the cost: in f32, rounded to bf16. f32 arithmetic rounds the
    exact result once, as f64's does, and on the same side of every bf16 rounding boundary
    (those are f32 values; rounding is monotonic; an f64 rounding onto a boundary means the
    exact value lies within an f64 half-ulp of it, which f32 rounds onto it too), so the two
    round to the same bf16 value wherever the f32 result is not a boundary itself (low 16
    bits 0x8000): those elements are computed the f64 way. A sum or difference needs no
    such check: with exponents at most 15 apart it is exact in f32 (8-bit significands), and
    further apart the smaller operand moves the larger by less than 2^-15 of it, far from
    any boundary. None (the whole op goes the f64 way) where the shapes differ, the result
    is small, or it holds a NaN (whose payload numpy's loops choose)."""
    if a.shape != b.shape or a.size < _BF16_EXACT_MIN:
        return None
    r = fn(a.astype(_F32), b.astype(_F32))
    if np.isnan(r).any():
        # (the NaN a NaN operand or two give depends on numpy's loop, SIMD or not, on f32
        # and f64 alike: the whole op goes the f64 way, as it always did)
        return None
    out = r.astype(et.dtype)
    if fn is np.add or fn is np.subtract:
        return out
    redo = (r.view(np.uint32) & np.uint32(0xFFFF)) == np.uint32(0x8000)
    if redo.any():
        out[redo] = from_compute(fn(to_compute(a[redo], et), to_compute(b[redo], et)), et)
    return out


def _binary(op, a, b, int_fn, float_fn, bool_fn=None, complex_fn=None, name="", exact=False):
    """`exact`: the op is one of + - * /, which numpy computes in the operands' own
    type with one correct rounding (floats) or wrap-around (integers >= 8 bits)."""
    et = _rt(op)
    kind = et.kind
    if exact and a.dtype == b.dtype == et.dtype:
        if kind == "float" and et.name in _NATIVE_FLOATS:
            return float_fn(a, b)
        if et.name == "bf16" and a.__class__ is _ND and b.__class__ is _ND:
            got = _bf16_exact(a, b, float_fn, et)
            if got is not None:
                return got
        if (kind == "signed" or kind == "unsigned") and et.bits >= 8 and int_fn is not None \
                and int_fn is not np.divide:
            return int_fn(a, b)
    if kind == "bool":
        if bool_fn is None:
            raise NotImplementedOpError(op.name, f"dtype {et}")
        return bool_fn(a, b)
    if et.is_integer:
        return _int_binary(int_fn, a, b, et)
    if kind == "complex":
        return (complex_fn or float_fn)(a, b).astype(et.dtype, copy=False)
    ca, cb = to_compute(a, et), to_compute(b, et)
    return from_compute(float_fn(ca, cb), et)


def _int_div(x, y, et):
    x = x.astype(np.int64) if et.is_signed else x.astype(np.uint64)
    y = y.astype(np.int64) if et.is_signed else y.astype(np.uint64)
    zero = y == 0
    ys = np.where(zero, 1, y)
    if et.is_signed:
        # INT_MIN / -1 wraps to INT_MIN (divide by 1 instead); floor division turned into
        # truncation toward zero
        ys = np.where((ys == -1) & (x == np.iinfo(np.int64).min), 1, ys)
        q = x // ys
        q = q + ((q < 0) & (q * ys != x))
        q = np.where(zero, -1, q)
    else:
        q = np.where(zero, np.iinfo(np.uint64).max, x // ys)
    return q


def _int_rem(x, y, et):
    x = x.astype(np.int64) if et.is_signed else x.astype(np.uint64)
    y = y.astype(np.int64) if et.is_signed else y.astype(np.uint64)
    zero = y == 0
    ys = np.where(zero, 1, y)
    if et.is_signed:
        r = np.fmod(x, ys)
    else:
        r = x % ys
    return np.where(zero, x, r)


def _scalar_int_div_rem(a, b, et, rem: bool):
    """Integer divide or remainder of two rank-0 values in Python integers (the spec's
    semantics: truncation toward zero, x / 0 = -1 (all ones unsigned), x % 0 = x,
    INT_MIN / -1 = INT_MIN, INT_MIN % -1 = 0), as a numpy scalar of et's dtype."""
    bits = et.bits
    signed = et.is_signed
    x, y = int(a), int(b)
    if y == 0:
        v = x if rem else (-1 if signed else (1 << bits) - 1)
    else:
        q = abs(x) // abs(y)
        if (x < 0) != (y < 0):
            q = -q
        v = x - q * y if rem else q
    v &= (1 << bits) - 1
    if signed and v >= 1 << (bits - 1):
        v -= 1 << bits
    return et.dtype.type(v)


def _native_int_div_rem(a, b, et, rem: bool):
    """Integer divide or remainder of two arrays (of rank 1 or more, one shape) of et's own
    dtype, et of 8 or more bits, computed in that dtype: the truncated remainder is `fmod`
    (`%` unsigned), the truncated quotient `(x - fmod(x, y)) // y` (an exact division: floor
    and truncation agree; x - fmod(x, y) lies between 0 and x, no overflow), and numpy's
    INT_MIN // -1 is INT_MIN, INT_MIN fmod -1 is 0, as the spec has them. Divisors of 0 give
    numpy's 0, replaced by the spec's x / 0 = -1 (all ones unsigned) and x % 0 = x.
    The values `_int_div` and `_int_rem` give, wrapped to et's dtype."""
    signed = et.kind != "unsigned"         # (signed or index: et is an integer type)
    if rem:
        out = np.fmod(a, b) if signed else a % b
        if not b.all():
            zero = b == 0
            out[zero] = a[zero]
        return out
    out = (a - np.fmod(a, b)) // b if signed else a // b
    if not b.all():
        out[b == 0] = -1 if signed else np.iinfo(a.dtype).max
    return out


@kernel("stablehlo.divide")
def divide(ctx, op, a, b):
    et = _rt(op)
    if et.is_integer and not et.is_bool:
        if a.ndim == 0 and b.ndim == 0:
            return _scalar_int_div_rem(a, b, et, False)
        if a.__class__ is np.ndarray and b.__class__ is np.ndarray and a.shape == b.shape \
                and et.bits >= 8 and a.dtype == b.dtype == et.dtype:
            return _native_int_div_rem(a, b, et, False)
        return wrap_int(_int_div(a, b, et), et)
    return _binary(op, a, b, None, np.divide, complex_fn=_complex_divide, exact=True)


def _complex_divide(a, b):
    # in complex128, then rounded once: complex64's own division underflows intermediate
    # products of subnormal parts (0+1e-45j / (1.4e-18+1e-15j) loses its imaginary part)
    return np.divide(a.astype(np.complex128), b.astype(np.complex128))


@kernel("stablehlo.remainder")
def remainder(ctx, op, a, b):
    et = _rt(op)
    if et.is_integer and not et.is_bool:
        if a.ndim == 0 and b.ndim == 0:
            return _scalar_int_div_rem(a, b, et, True)
        if a.__class__ is np.ndarray and b.__class__ is np.ndarray and a.shape == b.shape \
                and et.bits >= 8 and a.dtype == b.dtype == et.dtype:
            return _native_int_div_rem(a, b, et, True)
        return wrap_int(_int_rem(a, b, et), et)
    if et.is_complex:
        raise NotImplementedOpError(op.name, f"dtype {et}")
    return _binary(op, a, b, None, np.fmod)


_SCALAR_INTS = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
                "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}


def _int_div_rem_specializer(rem: bool):
    """For native integer types: two numpy scalars of the result's dtype (a loop over
    scalars) are divided with numpy's own scalar operators, the floored quotient or
    remainder corrected to truncation, with the spec's cases (x / 0, x % 0, INT_MIN / -1)
    taken first: the values `_scalar_int_div_rem` gives, without its Python-integer round
    trip. Arrays of the dtype whose divisors hold no 0 (and, signed, no -1; checked once when
    the divisor is known when compiling) are computed in the dtype itself: the truncated
    remainder is `fmod`, and the truncated quotient `(x - fmod(x, y)) // y` (an exact division,
    so floor and truncation agree; x - fmod(x, y) lies between 0 and x: no overflow).
    Anything else takes the general kernel."""
    def specialize(op, known=None):
        rt = _rt(op)
        scalar = _SCALAR_INTS.get(getattr(rt, "name", None))
        if scalar is None or _ot(op, 0) != rt or _ot(op, 1) != rt:
            return None
        general = KERNELS["stablehlo.remainder" if rem else "stablehlo.divide"]
        signed = rt.is_signed
        zero_quotient = scalar(-1) if signed else scalar(np.iinfo(scalar).max)
        dt = np.dtype(scalar)
        ND = np.ndarray
        fmod = np.fmod
        kb = known[1] if known is not None and len(known) == 2 else None
        kb_use = None                   # the known divisor, checked, as the kernel uses it
        kb_full = None                  # a known divisor of one value, as the whole array
        if kb is not None:
            kba = np.asarray(kb)
            if kba.dtype == dt and kba.size and kba.all() and not (signed and (kba == -1).any()):
                first = kba.reshape(-1)[0]
                kb_use = first if (kba == first).all() else kba
                if kb_use is first and kba.ndim:
                    # (numpy's fmod and % of two arrays of one shape cost less than of an
                    # array and a scalar; its // of an array by a scalar costs less)
                    kb_full = kba

        def divisor(a, b):
            """b as the array path uses it, or None where the general kernel must run."""
            if a.__class__ is not ND or a.dtype != dt or not a.ndim:
                return None
            if b is kb:
                return kb_use
            if b.__class__ is ND and b.dtype == dt and b.shape == a.shape and b.all() \
                    and not (signed and (b == -1).any()):
                return b
            return None

        if rem:
            def int_rem(ctx, op, a, b):
                if a.__class__ is scalar and b.__class__ is scalar:
                    if not b:
                        return a
                    r = a % b                # floored: the sign of b (INT_MIN % -1 is 0)
                    if signed and r and (r < 0) ^ (a < 0):
                        r = r - b            # |r - b| < |b|: no overflow
                    return r
                d = divisor(a, b)
                if d is not None:
                    if kb_full is not None and b is kb and a.shape == kb_full.shape:
                        d = kb_full
                    return fmod(a, d) if signed else a % d
                return general(ctx, op, a, b)
            return int_rem

        def int_div(ctx, op, a, b):
            if a.__class__ is scalar and b.__class__ is scalar:
                if not b:
                    return zero_quotient
                if not signed:
                    return a // b
                if b != -1:
                    q = a // b               # floored; truncate toward zero
                    if (a < 0) ^ (b < 0) and a % b:
                        q = q + 1
                    return q
                return general(ctx, op, a, b)
            d = divisor(a, b)
            if d is not None:
                if not signed:
                    return a // d
                if kb_full is not None and b is kb and a.shape == kb_full.shape:
                    return (a - fmod(a, kb_full)) // d
                return (a - fmod(a, d)) // d
            return general(ctx, op, a, b)
        return int_div
    return specialize


@specializer("stablehlo.sign")
def sign_specialized(op, known=None):
    """sign of native integer arrays: numpy's sign in the dtype itself (what the general
    kernel computes, since integers compute in their own dtype), without its dispatch."""
    rt = _rt(op)
    scalar = _SCALAR_INTS.get(getattr(rt, "name", None))
    if scalar is None or _ot(op) != rt:
        return None
    dt = np.dtype(scalar)
    general = KERNELS["stablehlo.sign"]
    ND = np.ndarray
    np_sign = np.sign

    def int_sign(ctx, op, x):
        if x.__class__ is ND and x.dtype == dt and x.ndim:
            return np_sign(x)
        return general(ctx, op, x)
    return int_sign


# (the remainder's specializer, for integers and floats, is registered after
# `_binary_float_specializer`)
_int_divide_specializer = _int_div_rem_specializer(False)


@specializer("stablehlo.divide")
def divide_specialized(op, known=None):
    """Integer division (`_int_div_rem_specializer`); for f16/f32/f64, two arrays or numpy
    scalars of the result's dtype are divided by numpy's divide itself, what the general
    kernel computes for them (one correctly rounded division in the type), without its type
    look-ups (~5 us a call: every layer norm and softmax divides); anything else takes the
    general kernel."""
    got = _int_divide_specializer(op, known)
    if got is not None:
        return got
    et = _rt(op)
    if getattr(et, "name", None) not in _NATIVE_FLOATS or _ot(op, 0) != et \
            or _ot(op, 1) != et:
        return None
    dt = et.dtype
    general = KERNELS["stablehlo.divide"]
    ND = _ND
    scalar = dt.type
    divide = np.divide

    def divide_float(ctx, op, a, b):
        ac = a.__class__
        bc = b.__class__
        if (ac is ND and a.dtype == dt or ac is scalar) and (bc is ND and b.dtype == dt or bc is scalar):
            return divide(a, b)
        return general(ctx, op, a, b)
    return divide_float


# f32 arrays whose maximum / minimum numpy takes in f32 itself: the same values as in f64
# rounded back (both exact; a NaN operand gives a NaN either way)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)
_ND = np.ndarray


@kernel("stablehlo.maximum")
def maximum(ctx, op, a, b):
    if a.__class__ is _ND and b.__class__ is _ND and a.dtype == _F32 and b.dtype == _F32 \
            and a.ndim and a.shape == b.shape and getattr(_rt(op), "name", None) == "f32":
        return np.maximum(a, b)
    et = _rt(op)
    if et.is_complex:
        return _complex_max(a, b).astype(et.dtype)
    return _binary(op, a, b, np.maximum, np.maximum, np.logical_or)


def _complex_max(a, b):
    """The spec's complex maximum: lexicographic on (real, imag); a NaN operand wins."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    take_a = (a.real > b.real) | ((a.real == b.real) & (a.imag >= b.imag))
    nan = np.isnan(a) | np.isnan(b)
    out = np.where(take_a, a, b)
    return np.where(nan, np.where(np.isnan(a), a, b), out)


def _complex_min(a, b):
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    take_a = (a.real < b.real) | ((a.real == b.real) & (a.imag <= b.imag))
    nan = np.isnan(a) | np.isnan(b)
    out = np.where(take_a, a, b)
    return np.where(nan, np.where(np.isnan(a), a, b), out)


@kernel("stablehlo.minimum")
def minimum(ctx, op, a, b):
    if a.__class__ is _ND and b.__class__ is _ND and a.dtype == _F32 and b.dtype == _F32 \
            and a.ndim and a.shape == b.shape and getattr(_rt(op), "name", None) == "f32":
        return np.minimum(a, b)
    et = _rt(op)
    if et.is_complex:
        return _complex_min(a, b).astype(et.dtype)
    return _binary(op, a, b, np.minimum, np.minimum, np.logical_and)


def _max_min_specializer(name, ufunc):
    """maximum / minimum of a result type of `numerics.NATIVE_IN_TYPE`: for two arrays of
    rank >= 1 of its dtype and one shape, numpy's ufunc itself (what the general kernel
    computes for them: the f32 shortcut, f64 in f64, integers converted to a wider type and
    back, no value changed), and for two numpy scalars or 0-d arrays of its dtype, without
    the kernel's type look-ups on every call; anything else (another dtype or shape, f16 and
    the other floats, which the general path computes in f32) takes the general kernel."""
    def specialize(op, known=None):
        et = _rt(op)
        if getattr(et, "name", None) not in NATIVE_IN_TYPE or _ot(op, 0) != et \
                or _ot(op, 1) != et:
            return None
        dt = et.dtype
        general = KERNELS[name]
        ND = _ND
        scalar = dt.type
        narrow = dt == _F32

        def max_min(ctx, op, a, b):
            if a.__class__ is ND and b.__class__ is ND and a.dtype == dt and b.dtype == dt \
                    and a.ndim and a.shape == b.shape:
                return ufunc(a, b)
            ac = a.__class__
            bc = b.__class__
            if (ac is scalar or ac is ND and not a.ndim and a.dtype == dt) \
                    and (bc is scalar or bc is ND and not b.ndim and b.dtype == dt):
                # two numpy scalars or 0-d arrays of the type (a loop over scalars): as the
                # general kernel computes rank 0, f32 in f64 (a signaling NaN comes out
                # quiet) and the rest in the type, as a scalar (the general kernel's
                # dispatch costs ~5 us)
                if narrow:
                    return scalar(ufunc(float(a), float(b)))
                return ufunc(a, b)
            return general(ctx, op, a, b)
        return max_min
    return specialize


specializer("stablehlo.maximum")(_max_min_specializer("stablehlo.maximum", np.maximum))
specializer("stablehlo.minimum")(_max_min_specializer("stablehlo.minimum", np.minimum))


def _int_power(x, y, et):
    x = x.astype(np.int64) if et.is_signed else x.astype(np.uint64)
    y = y.astype(np.int64) if et.is_signed else y.astype(np.uint64)
    # exponentiation by squaring with wrap-around; negative exponents per spec:
    # x**-n is 1 for x == 1, (-1)**n for x == -1, and 0 otherwise.
    result = np.ones_like(x)
    base = x.copy()
    e = np.where(y < 0, 0, y) if et.is_signed else y.copy()
    while np.any(e > 0):
        odd = (e & 1) == 1
        result = np.where(odd, result * base, result)
        base = base * base
        e = e >> 1
    if et.is_signed:
        neg = y < 0
        neg_val = np.where(x == 1, 1, np.where(x == -1, np.where((y & 1) == 1, -1, 1), 0))
        result = np.where(neg, neg_val, result)
    return result


@kernel("stablehlo.power")
def power(ctx, op, a, b):
    et = _rt(op)
    if et.is_integer and not et.is_bool:
        return wrap_int(_int_power(a, b, et), et)
    return _binary(op, a, b, None, np.power)


@kernel("stablehlo.atan2")
def atan2(ctx, op, a, b):
    et = _rt(op)
    if et.is_complex:
        # atan2 on complex: -i * log((b + i a) / sqrt(a^2 + b^2))
        r = -1j * np.log((b + 1j * a) / np.sqrt(a * a + b * b))
        return r.astype(et.dtype)
    if not et.is_float:
        raise NotImplementedOpError(op.name, f"dtype {et} (atan2 takes floats or complex)")
    return _binary(op, a, b, None, np.arctan2)


# ufuncs whose f32 result numpy computes exactly (sign operations, rounding to integers) or
# correctly rounded (sqrt: rounding the f64 root to f32 gives the same value, 53 >= 2*24 + 2),
# so that f32 arrays take them in f32 instead of the f64 round trip
_EXACT_IN_F32 = frozenset((np.negative, np.abs, np.sqrt, np.floor, np.ceil, np.rint))


def _unary(op, x, float_fn, int_fn=None, complex_fn=None, bool_fn=None):
    # (numpy floating-point warnings are switched off by the evaluator for the whole run)
    if x.__class__ is _ND and x.dtype == _F32 and x.ndim and float_fn in _EXACT_IN_F32 \
            and getattr(_rt(op), "name", None) == "f32":
        return float_fn(x)
    et = _rt(op)
    kind = et.kind
    if kind == "float":
        return from_compute(float_fn(to_compute(x, et)), et)
    if kind == "bool":
        if bool_fn is None:
            raise NotImplementedOpError(op.name, f"dtype {et}")
        return bool_fn(x)
    if kind == "complex":
        fn = complex_fn or float_fn
        return np.asarray(fn(x)).astype(et.dtype, copy=False)
    if int_fn is None:
        raise NotImplementedOpError(op.name, f"dtype {et}")
    return from_compute(int_fn(to_compute(x, et)), et)


@kernel("stablehlo.abs")
def abs_(ctx, op, x):
    et_in = _ot(op)
    et = _rt(op)
    if et_in.is_complex:
        return np.abs(x).astype(et.dtype)
    return _unary(op, x, np.abs, np.abs)


def cexp(z):
    """exp of complex z; exp(x/2)^2 avoids spurious overflow, a zero imaginary part stays
    exact, and infinite real with infinite imaginary parts give NaN."""
    xr, yi = z.real, z.imag
    e2 = np.exp(xr / 2)
    real = np.where(yi == 0, e2 * e2, e2 * np.cos(yi) * e2)
    imag = np.where(yi == 0, yi, e2 * np.sin(yi) * e2)
    return make_complex(real, imag)


@kernel("stablehlo.exponential_minus_one")
def expm1(ctx, op, x):
    def cexpm1(z):
        # accurate for small |z|: expm1(x)*cos(y) + (cos(y)-1) + i*exp(x)*sin(y)
        xr, yi = z.real, z.imag
        re = np.expm1(xr) * np.cos(yi) - 2 * np.sin(yi / 2) ** 2
        im = np.exp(xr) * np.sin(yi)
        return make_complex(re, im)
    return _unary(op, x, np.expm1, complex_fn=cexpm1)


@kernel("stablehlo.log_plus_one")
def log1p(ctx, op, x):
    def clog1p(z):
        xr, yi = z.real, z.imag
        xp1 = xr + 1
        # near 0: log|1+z| = log1p(x (2 + x) + y^2) / 2; elsewhere a scaled hypot
        near = (np.abs(xr) < 0.5) & (np.abs(yi) < 0.5)
        re_near = 0.5 * np.log1p(xr * (2 + xr) + yi * yi)
        ax, ay = np.abs(xp1), np.abs(yi)
        mx = np.maximum(ax, ay)
        mn = np.minimum(ax, ay)
        ratio = np.where(mx == 0, 0.0, mn / np.where(mx == 0, 1.0, mx))
        ratio = np.where(np.isinf(mx), 0.0, ratio)
        re_far = np.log(mx) + 0.5 * np.log1p(ratio * ratio)
        re = np.where(near, re_near, re_far)
        im = np.arctan2(yi, xp1)
        return make_complex(re, im)
    return _unary(op, x, np.log1p, complex_fn=clog1p)


@kernel("stablehlo.round_nearest_afz")
def round_afz(ctx, op, x):
    def afz(v):
        # v - trunc(v) is exact, unlike |v| + 0.5 (which rounds up 0.49999999999999994)
        t = np.trunc(v)
        r = np.where(np.abs(v - t) >= 0.5, t + np.copysign(1.0, v), t)
        return np.copysign(r, v)
    return _unary(op, x, afz)


@kernel("stablehlo.sign")
def sign(ctx, op, x):
    def fsign(v):
        # NaN -> NaN, -0.0 -> -0.0, +0.0 -> +0.0
        return np.where(np.isnan(v), v, np.where(v == 0, v, np.sign(v)))

    def csign(z):
        a = np.abs(z)
        return np.where(a == 0, 0, z / np.where(a == 0, 1, a))
    return _unary(op, x, fsign, int_fn=np.sign, complex_fn=csign)


@kernel("stablehlo.is_finite")
def is_finite(ctx, op, x):
    return np.isfinite(x.astype(np.float64) if x.dtype.kind == "V" or x.dtype.itemsize == 1 else x)


@kernel("stablehlo.not")
def not_(ctx, op, x):
    et = _rt(op)
    if et.is_bool:
        return np.logical_not(x)
    if et.bits >= 8 and x.dtype == et.dtype:
        return np.invert(x)
    return wrap_int(np.invert(to_compute(x, et)), et)


def _bitwise(op, a, b, fn):
    et = _rt(op)
    if et.is_bool or (et.bits >= 8 and a.dtype == b.dtype == et.dtype):
        return fn(a, b)                 # exact in the storage type itself
    return wrap_int(fn(to_compute(a, et), to_compute(b, et)), et)


def _unsigned_view(x, et):
    bits = et.bits
    xi = x.astype(np.int64) if et.is_signed else x.astype(np.uint64)
    return xi.astype(np.uint64) & np.uint64((1 << bits) - 1 if bits < 64 else 0xFFFFFFFFFFFFFFFF)


_UNSIGNED_OF_SIZE = {1: np.dtype(np.uint8), 2: np.dtype(np.uint16), 4: np.dtype(np.uint32),
                     8: np.dtype(np.uint64)}


def _native_logical_shift(a, b, et, left):
    """Logical shifts on 8..64-bit integers in their own width: the operands' bits read as
    unsigned (a negative shift amount becomes one >= the width), amounts >= the width give 0."""
    udt = _UNSIGNED_OF_SIZE[et.dtype.itemsize]
    ua = a.view(udt)
    ub = b.view(udt)
    if not ub.size or ub.max() < et.bits:   # (the common case: every amount within the width)
        r = np.left_shift(ua, ub) if left else np.right_shift(ua, ub)
        return r.view(et.dtype)
    big = ub >= et.bits
    s = np.minimum(ub, udt.type(et.bits - 1))
    r = np.left_shift(ua, s) if left else np.right_shift(ua, s)
    r = np.where(big, udt.type(0), r)
    return r.view(et.dtype)


_UNIFORM_OPS = frozenset(("stablehlo.broadcast_in_dim", "stablehlo.broadcast", "stablehlo.reshape"))


def uniform_value(v, depth=8) -> bool:
    """Whether every element of the SSA value `v` is one value by how it is defined: a splat
    constant (held as a broadcast view, or of at most 64 elements all alike), a rank-0 value,
    or a broadcast/reshape of such a value (the broadcast of a scalar shift amount threefry
    makes in its loop). False when not known."""
    t = v.type
    shape = getattr(t, "shape", None)
    if shape is not None and len(shape) == 0:
        return True
    if depth <= 0:
        return False
    owner = getattr(v, "owner", None)
    name = getattr(owner, "name", None)
    if name in _UNIFORM_OPS:
        return len(owner.operands) == 1 and uniform_value(owner.operands[0], depth - 1)
    if name == "stablehlo.constant":
        arr = getattr(owner.attributes.get("value"), "array", None)
        if not isinstance(arr, np.ndarray) or not arr.size:
            return False
        if not any(arr.strides) or arr.size == 1:
            return True
        if arr.size <= 64:
            flat = np.ascontiguousarray(arr).reshape(-1)
            raw = flat.view(np.uint8).reshape(flat.size, -1)
            return bool(np.all(raw == raw[:1]))
    return False


def _uniform_amount(op) -> bool:
    """Whether `op`'s shift amount (its second operand) is one value for every element,
    decided once per op."""
    cache = op_cache(op)
    u = cache.get("uniform_amount")
    if u is None:
        u = cache["uniform_amount"] = len(op.operands) == 2 and uniform_value(op.operands[1])
    return u


def _uniform_shift(a, b, et, left):
    """A logical shift of 8..64-bit integers (a, b of et's dtype, one shape) by an amount
    known to be one value for all elements (`uniform_value`): the amount read from one
    element, a shift by that scalar where it is within the width (the same bits as the
    element-wise shift); None otherwise (the caller shifts element-wise)."""
    if not b.size:
        return None
    s = b.item(0) if b.ndim else b.item()
    if s < 0 or s >= et.bits:
        return None
    udt = _UNSIGNED_OF_SIZE[et.dtype.itemsize]
    ua = a.view(udt)
    r = np.left_shift(ua, udt.type(s)) if left else np.right_shift(ua, udt.type(s))
    return r.view(et.dtype)


def _uniform_shift_kernel(op, et, name, left):
    """A logical shift of 8..64-bit integers by an amount not known when compiling but one
    value for every element (`uniform_value`, e.g. a broadcast of a loop-carried scalar): the
    amount read from one element and checked at each run, a shift by that scalar; the general
    kernel for amounts past the width and for operands of other types or shapes."""
    if not et.is_integer or et.is_bool or et.bits < 8 or len(op.operands) != 2 \
            or elem(op.operands[0].type) != et or elem(op.operands[1].type) != et:
        return None
    shape = getattr(op.results[0].type, "shape", None)
    if not shape or None in shape or tuple(op.operands[1].type.shape) != tuple(shape) \
            or not uniform_value(op.operands[1]):
        return None
    shape = tuple(shape)
    udt = _UNSIGNED_OF_SIZE[et.dtype.itemsize]
    to_u = udt.type
    bits = et.bits
    dt = et.dtype
    shift = np.left_shift if left else np.right_shift
    general = KERNELS[name]
    ND = np.ndarray

    def logical_shift_uniform(ctx, op, a, b):
        if a.__class__ is not ND or b.__class__ is not ND or a.dtype != dt or b.dtype != dt \
                or a.shape != shape or b.shape != shape:
            return general(ctx, op, a, b)
        s = b.item(0)
        if s < 0 or s >= bits:
            return general(ctx, op, a, b)
        return shift(a.view(udt), to_u(s)).view(dt)
    return logical_shift_uniform


def _logical_shift_specializer(name, left):
    """A logical shift of 8..64-bit integers by a shift amount known when compiling (a
    broadcast constant, as in threefry): the amounts read, clamped and checked against the
    width once; one amount for every element shifts by a scalar."""
    def specialize(op, known=None):
        et = _rt(op)
        b = known[1] if known else None
        if b is None:
            return _uniform_shift_kernel(op, et, name, left)
        if not et.is_integer or et.is_bool or et.bits < 8 or b.dtype != et.dtype \
                or elem(op.operands[0].type) != et:
            return None
        udt = _UNSIGNED_OF_SIZE[et.dtype.itemsize]
        ub = np.asarray(b).view(udt)
        big = ub >= et.bits
        amount = np.minimum(ub, udt.type(et.bits - 1))
        any_big = bool(big.any())
        if ub.size and (ub == ub.reshape(-1)[0]).all():
            amount = udt.type(amount.reshape(-1)[0])
            if any_big:
                return None                # every amount past the width: the general kernel
        shift = np.left_shift if left else np.right_shift
        zero = udt.type(0)
        general = KERNELS[name]
        shape = np.shape(b)
        dt = et.dtype

        def logical_shift_known(ctx, op, a, b):
            if a.dtype != dt or np.shape(a) != shape:
                return general(ctx, op, a, b)
            r = shift(a.view(udt), amount)
            if any_big:
                r = np.where(big, zero, r)
            return r.view(dt)
        return logical_shift_known
    return specialize


def _check_shift_type(op, et):
    # shifts are defined on integers only (booleans are not integers in the spec); CHLO's
    # broadcast forms admit any tensor and reach here with floats, complex and i1 as well
    if not et.is_integer or et.is_bool:
        raise NotImplementedOpError(op.name, f"dtype {et} (shifts take integers)")


@kernel("stablehlo.shift_left")
def shift_left(ctx, op, a, b):
    et = _rt(op)
    _check_shift_type(op, et)
    bits = et.bits
    if bits >= 8 and not et.is_bool and a.dtype == b.dtype == et.dtype:
        if a.ndim and a.shape == b.shape and _uniform_amount(op):
            r = _uniform_shift(a, b, et, True)
            if r is not None:
                return r
        return _native_logical_shift(a, b, et, True)
    ua = _unsigned_view(a, et)
    sb = b.astype(np.int64) if et.is_signed else b.astype(np.uint64)
    big = (sb < 0) | (sb >= bits) if et.is_signed else (sb >= bits)
    s = np.where(big, 0, sb).astype(np.uint64)
    r = np.where(big, np.uint64(0), ua << s)
    return wrap_int(r, et) if bits < 64 else r.astype(et.dtype)


@kernel("stablehlo.shift_right_logical")
def shift_right_logical(ctx, op, a, b):
    et = _rt(op)
    _check_shift_type(op, et)
    bits = et.bits
    if bits >= 8 and not et.is_bool and a.dtype == b.dtype == et.dtype:
        if a.ndim and a.shape == b.shape and _uniform_amount(op):
            r = _uniform_shift(a, b, et, False)
            if r is not None:
                return r
        return _native_logical_shift(a, b, et, False)
    ua = _unsigned_view(a, et)
    sb = b.astype(np.int64) if et.is_signed else b.astype(np.uint64)
    big = (sb < 0) | (sb >= bits) if et.is_signed else (sb >= bits)
    s = np.where(big, 0, sb).astype(np.uint64)
    r = np.where(big, np.uint64(0), ua >> s)
    return wrap_int(r, et) if bits < 64 else r.astype(et.dtype)


@kernel("stablehlo.shift_right_arithmetic")
def shift_right_arithmetic(ctx, op, a, b):
    et = _rt(op)
    _check_shift_type(op, et)
    bits = et.bits
    # sign-extend the value as a signed integer of `bits` width
    ua = _unsigned_view(a, et).astype(np.int64) if bits < 64 else a.view(np.int64) if a.dtype.itemsize == 8 else a.astype(np.int64)
    if bits < 64:
        ua = np.where(ua >= (1 << (bits - 1)), ua - (1 << bits), ua)
    sb = b.astype(np.int64) if et.is_signed else b.astype(np.uint64).astype(np.int64)
    big = (sb < 0) | (sb >= bits)
    s = np.where(big, bits - 1, sb)
    s = np.minimum(s, 63)
    r = ua >> s
    if et.is_unsigned:
        return wrap_int(r.astype(np.uint64) if bits == 64 else r, et) if bits < 64 else r.view(np.uint64).astype(et.dtype)
    return wrap_int(r, et)


@kernel("stablehlo.popcnt")
def popcnt(ctx, op, x):
    et = _rt(op)
    u = _unsigned_view(x, et)
    return wrap_int(np.bitwise_count(u).astype(np.int64), et)


@kernel("stablehlo.count_leading_zeros")
def clz(ctx, op, x):
    et = _rt(op)
    bits = et.bits
    u = _unsigned_view(x, et)
    v = u.copy()
    # bit length via repeated halving of the search window (loop over bit positions, not elements)
    length = np.zeros(u.shape, dtype=np.int64)
    for shift in (32, 16, 8, 4, 2, 1):
        m = v >= (np.uint64(1) << np.uint64(shift))
        length = np.where(m, length + shift, length)
        v = np.where(m, v >> np.uint64(shift), v)
    length = np.where(u > 0, length + 1, 0)
    return wrap_int(bits - length, et)


# ------------------------------------------------------------------ complex parts

@kernel("stablehlo.real")
def real(ctx, op, x):
    et = _rt(op)
    if x.__class__ is _ND:
        # (an array's own parts: what np.real and np.iscomplexobj read, without their calls)
        return x.real.astype(et.dtype) if x.dtype.kind == "c" else x.copy()
    return np.real(x).astype(et.dtype) if np.iscomplexobj(x) else x.copy()


@kernel("stablehlo.imag")
def imag(ctx, op, x):
    et = _rt(op)
    if x.__class__ is _ND and x.dtype.kind == "c":
        return x.imag.astype(et.dtype)
    if np.iscomplexobj(x):
        return np.imag(x).astype(et.dtype)
    if et.name == "f8E8M0FNU":
        # the spec's imag of a float is constant(0, element_type(result)); f8E8M0FNU has no zero
        raise NotImplementedOpError("stablehlo.imag", "no semantics: f8E8M0FNU has no zero, the result of imag "
                                    "on a real operand")
    return np.zeros(x.shape, dtype=et.dtype)


@kernel("stablehlo.complex")
def complex_(ctx, op, a, b):
    et = _rt(op)
    return make_complex(a, b).astype(et.dtype)


# ------------------------------------------------------------------ compare / select / clamp



def _is_e8m0(dt) -> bool:
    # (ml_dtypes' float8_e8m0fnu: numpy has no dtype of that name)
    return dt is not None and dt.name == "float8_e8m0fnu"


def total_order_key(x: np.ndarray, et=None):
    """Map floats to signed integers that sort in IEEE totalOrder (sub-byte floats use their
    own width, whose sign bit is not the storage byte's top bit)."""
    if (et is not None and et.name == "f8E8M0FNU") or _is_e8m0(getattr(x, "dtype", None)):
        # no sign bit: the bit pattern orders the values (0xFF, NaN, last)
        return contiguous(x).view(np.uint8).astype(np.int64)
    if et is not None and et.bits < 8:
        u = storage_bits(x, et).astype(np.int64)
        sign_bit = 1 << (et.bits - 1)
        mag = u & (sign_bit - 1)
        return np.where(u & sign_bit, -mag - 1, mag)
    dt = x.dtype
    udt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    sdt = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}[dt.itemsize]
    bits = contiguous(x).view(udt).astype(np.int64) if dt.itemsize < 8 else contiguous(x).view(sdt)
    width = dt.itemsize * 8
    if dt.itemsize < 8:
        sign = (bits >> (width - 1)) & 1
        mag = bits & ((1 << (width - 1)) - 1)
        return np.where(sign == 1, -mag - 1, mag)
    return np.where(bits < 0, np.int64(-0x7FFFFFFFFFFFFFFF - 1) - bits - 1, bits)


_SAME_WIDTH_INT = {np.dtype(np.float16): np.int16, np.dtype(np.float32): np.int32,
                   np.dtype(np.float64): np.int64}


def same_width_total_order_key(x: np.ndarray):
    """IEEE totalOrder keys of f16/f32/f64 `x` as signed integers of the same width (half
    the memory traffic of `total_order_key`'s int64 for f32), or None for other dtypes."""
    it = _SAME_WIDTH_INT.get(x.dtype)
    if it is None:
        return None
    bits = contiguous(x).view(it)
    # negative floats: flip every bit but the sign, so that more negative sorts lower
    return bits ^ ((bits >> (8 * bits.itemsize - 1)) & it(np.iinfo(it).max))


def _direct_comparison(op):
    """The numpy comparison to apply to the stored operands as they are, when that is exact
    for the op (native floats without TOTALORDER, integers of 8+ bits compared in their own
    signedness, booleans, complex EQ/NE); otherwise None. Decided once per op."""
    direction = op.attributes["comparison_direction"].value
    ctype_attr = op.attributes.get("compare_type")
    ctype = ctype_attr.value if ctype_attr is not None else None
    et = _ot(op)
    fn = _COMPARISONS.get(direction)
    if fn is None:
        return None
    if et.is_float:
        if ctype != "TOTALORDER" and et.name not in _NATIVE_FLOATS:
            # a narrower float is compared as the general path compares it: both operands
            # widened to its compute dtype (f64, exact), one function per direction
            return _widened_comparison(direction, fn)
        ok = ctype != "TOTALORDER"
    elif et.is_complex:
        ok = direction in ("EQ", "NE")
    elif et.is_bool:
        ok = True
    else:
        ok = et.bits >= 8 and compute_dtype(et) == et.dtype and not (
            ctype == "UNSIGNED" and et.is_signed or ctype == "SIGNED" and et.is_unsigned)
    return fn if ok else None


_WIDENED = {}


def _widened_comparison(direction, fn):
    """`fn` on both operands converted to f64, as `compare` computes a float type that
    numpy has no native comparison for (`to_compute`: f64 is every such type's compute
    dtype, and an f64 operand is compared as it is); one function per direction."""
    got = _WIDENED.get(direction)
    if got is None:
        f64 = np.dtype(np.float64)

        def widened(a, b):
            return fn(a if a.dtype == f64 else a.astype(f64), b if b.dtype == f64 else b.astype(f64))
        got = _WIDENED[direction] = widened
    return got


_NO_PLAN = object()
# (direction, compare type, id(operand element type)) -> (that element type, the direct
# comparison or None), as `_direct_comparison` decides it
_COMPARE_PLANS = {}


@kernel("stablehlo.compare", "chlo.compare")
def compare(ctx, op, a, b):
    cache = getattr(op, "_cache", None)
    if cache is None:
        cache = op_cache(op)
    fast = cache.get("compare", _NO_PLAN)
    if fast is _NO_PLAN:
        # (`_direct_comparison`, decided once per (direction, compare type, element type):
        # element types are shared objects, the entry holds its own so that its id stays it)
        attrs = op.attributes
        direction = attrs["comparison_direction"].value
        ctype_attr = attrs.get("compare_type")
        t = op.operands[0].type
        et = t.element_type if t.__class__ is _TensorType else None
        if et.__class__ is _ElementType:
            key = (direction, ctype_attr.value if ctype_attr is not None else None, id(et))
            plan = _COMPARE_PLANS.get(key)
            if plan is None or plan[0] is not et:
                if len(_COMPARE_PLANS) > 10_000:
                    _COMPARE_PLANS.clear()
                plan = _COMPARE_PLANS[key] = (et, _direct_comparison(op))
            fast = cache["compare"] = plan[1]
        else:
            fast = cache["compare"] = _direct_comparison(op)
    if fast is not None and a.dtype == b.dtype:
        if not a.shape and not b.shape and a.dtype.type in _PY_EXACT:
            # (one element each, of a type whose Python value is exact and compares as
            # numpy compares it: the comparison in Python, numpy's own bool scalar)
            py = _PY_COMPARISONS.get(fast)
            if py is not None:
                return _TRUE if py(a.item(), b.item()) else _FALSE
        return fast(a, b)
    direction = op.attributes["comparison_direction"].value
    ctype_attr = op.attributes.get("compare_type")
    ctype = ctype_attr.value if ctype_attr is not None else None
    et = _ot(op)
    if ctype == "TOTALORDER" and et.is_float:
        x = same_width_total_order_key(a) if et.name in _NATIVE_FLOATS \
            and a.dtype == b.dtype and a.dtype == et.dtype else None
        if x is not None:
            # keys of the operands' own width (f32: int32), ordered as totalOrder as
            # `total_order_key`'s int64 ones are
            y = same_width_total_order_key(b)
        else:
            x, y = total_order_key(a, et), total_order_key(b, et)
    elif et.is_complex:
        x, y = a, b
        if direction not in ("EQ", "NE"):
            raise NotImplementedOpError(op.name, f"{direction} on {et}")
    elif et.is_float:
        # comparing in the native type is exact; narrower floats widen first
        x, y = (a, b) if et.name in _NATIVE_FLOATS and a.dtype == b.dtype else (to_compute(a, et), to_compute(b, et))
    else:
        x, y = a, b
        if et.is_bool or ctype == "UNSIGNED" and et.is_signed:
            x, y = _unsigned_view(a, et) if not et.is_bool else a, _unsigned_view(b, et) if not et.is_bool else b
        elif ctype == "SIGNED" and et.is_unsigned:
            x = _signed_view(a, et)
            y = _signed_view(b, et)
        else:
            x, y = to_compute(a, et), to_compute(b, et)
    fn = _COMPARISONS.get(direction)
    if fn is None:
        raise NotImplementedOpError(op.name, f"direction {direction}")
    return fn(x, y)


_COMPARISONS = {"EQ": np.equal, "NE": np.not_equal, "LT": np.less, "LE": np.less_equal,
                "GT": np.greater, "GE": np.greater_equal}
# the direct comparisons as Python compares the operands' `item()`s, for the numpy types
# whose items are exact (Python ints, bools, and floats holding the value; NaN unordered)
_PY_COMPARISONS = {np.equal: operator.eq, np.not_equal: operator.ne, np.less: operator.lt,
                   np.less_equal: operator.le, np.greater: operator.gt,
                   np.greater_equal: operator.ge}
_PY_EXACT = frozenset((np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                       np.uint32, np.uint64, np.float16, np.float32, np.float64))
_TRUE, _FALSE = np.True_, np.False_


def _signed_view(x, et):
    bits = et.bits
    u = x.astype(np.uint64).astype(np.int64) if bits < 64 else x.view(np.int64)
    if bits < 64:
        u = np.where(u >= (1 << (bits - 1)), u - (1 << bits), u)
    return u


@kernel("stablehlo.select")
def select(ctx, op, pred, on_true, on_false):
    if not pred.shape and on_true.shape == on_false.shape and on_true.dtype == on_false.dtype:
        # (one predicate for the whole result: the chosen operand itself, the values and
        # dtype np.where gives; values are never written into in place while shared)
        return on_true if pred else on_false
    return np.where(pred, on_true, on_false).astype(on_true.dtype, copy=False)


_CLAMP_KINDS = frozenset(("signed", "unsigned", "float"))


def _clamp_native(et, lo, x, hi):
    """Whether `clamp` computes in the operands' own dtype (f64, integers of 8+ bits: the
    compute dtype is the stored one, so `to_compute` and `from_compute` keep the values)."""
    dt = x.dtype
    return lo.dtype == dt and hi.dtype == dt and et.kind in _CLAMP_KINDS \
        and dt == et.dtype and compute_dtype(et) == dt


@kernel("stablehlo.clamp")
def clamp(ctx, op, lo, x, hi):
    et = _rt(op)
    if _clamp_native(et, lo, x, hi):
        out = np.minimum(np.maximum(x, lo), hi)
        return out if out.__class__ is np.ndarray else np.asarray(out)
    if et.is_complex:
        # the spec: minimum(maximum(operand, min), max), both lexicographic on (real, imag)
        return np.broadcast_to(_complex_min(_complex_max(x, lo), hi), x.shape).astype(et.dtype)
    cx, clo, chi = to_compute(x, et), to_compute(lo, et), to_compute(hi, et)
    return from_compute(np.minimum(np.maximum(cx, clo), chi), et)


# ------------------------------------------------------------------ conversions

def int_to_float(x: np.ndarray, src, nearest: bool = False) -> np.ndarray:
    """Integers as float64 that round correctly once more to any narrower float: 64-bit
    integers beyond 2^53 are rounded to odd (the inexact ones get an odd last mantissa bit),
    so the second rounding sees the sticky bit. `nearest` keeps f64's own rounding."""
    if src.bits < 64 or nearest:
        return x.astype(np.float64)
    f = x.astype(np.float64)
    if not f.size or np.abs(f).max() <= 2.0 ** 53:
        return f
    big = np.abs(f) > 2.0 ** 53
    # the residual x - f, in wrap-around integer arithmetic (|residual| < 2^11 here)
    fc = np.where(big, f, 0.0)
    lim = 2.0 ** 64 if src.is_unsigned else 2.0 ** 63
    top = fc >= lim
    fi = np.where(top, 0.0, fc)
    fint = fi.astype(np.uint64) if src.is_unsigned else fi.astype(np.int64)
    resid = (x.astype(fint.dtype) - fint).view(np.int64)
    resid = np.where(top, -1, resid)
    odd = (f.view(np.uint64) & np.uint64(1)) == 1
    step = big & (resid != 0) & ~odd
    toward = np.where(resid > 0, np.inf, -np.inf)
    return np.where(step, np.nextafter(f, toward), f)


def convert_array(x: np.ndarray, src, dst) -> np.ndarray:
    """`stablehlo.convert` semantics between any two element types."""
    with np.errstate(all="ignore"):
        return _convert(x, src, dst)


def _convert(x: np.ndarray, src, dst) -> np.ndarray:
    # (numpy floating-point warnings off: by the evaluator, or by convert_array)
    if dst.is_bool:
        if src.is_complex:
            return np.real(x) != 0
        return x.astype(np.float64) != 0 if src.is_float else x.astype(np.int64) != 0 if not src.is_bool else x.copy()
    if dst.is_integer:
        if src.is_bool or src.is_integer:
            xi = x.astype(np.int64) if not (src.is_unsigned and src.bits == 64) else x.astype(np.uint64)
            if src.is_unsigned and src.bits == 64 and dst.bits == 64 and dst.is_signed:
                return xi.view(np.int64) if xi.dtype == np.uint64 else xi
            return wrap_int(xi, dst)
        f = np.real(x).astype(np.float64) if src.is_complex else x.astype(np.float64)
        f = np.trunc(f)
        # out-of-range and NaN follow the reference: saturate to the destination range, NaN -> 0
        info_min = -(1 << (dst.bits - 1)) if dst.is_signed else 0
        info_max = (1 << (dst.bits - 1)) - 1 if dst.is_signed else (1 << dst.bits) - 1
        nan = np.isnan(f)
        f = np.where(nan, 0, f)
        if dst.bits == 64:
            lo = np.float64(info_min)
            hi = np.float64(info_max)
            big = f >= hi
            small = f <= lo
            safe = np.clip(f, lo, np.nextafter(hi, 0))
            out = safe.astype(np.int64 if dst.is_signed else np.uint64)
            out = np.where(big, np.array(info_max).astype(out.dtype), out)
            out = np.where(small, np.array(info_min).astype(out.dtype), out)
            return out.astype(dst.dtype)
        f = np.clip(f, info_min, info_max)
        return wrap_int(f.astype(np.int64), dst)
    if dst.is_complex:
        if src.is_complex:
            return x.astype(dst.dtype)
        if src.is_integer and not src.is_bool:
            return int_to_float(x, src, dst.name == "complex<f64>").astype(dst.dtype)
        return x.astype(np.float64).astype(dst.dtype)
    # dst float
    if src.is_complex:
        x = np.real(x)
    if src.is_bool:
        return x.astype(np.float32).astype(dst.dtype)
    if src.is_integer:
        return int_to_float(x, src, dst.name == "f64").astype(dst.dtype)
    if x.dtype == dst.dtype:
        return x.copy()
    if dst.name in ("f32", "f64", "f16"):
        return x.astype(dst.dtype)
    # narrow float destinations: ml_dtypes rounds correctly from f32/f64
    return x.astype(np.float64).astype(dst.dtype) if x.dtype.itemsize <= 4 else x.astype(dst.dtype)


def _exact_cast(src, dst) -> bool:
    """Whether numpy's astype from src's storage to dst's is the spec's convert: booleans
    and integers into an integer type of 8+ bits that holds every value of the source."""
    if not dst.is_integer or dst.is_bool or dst.bits < 8 or dst.kind == "index":
        return False
    if src.is_bool:
        return True
    if not src.is_integer or src.bits < 8 or src.kind == "index":
        return False
    if src.is_signed == dst.is_signed:
        return dst.bits >= src.bits
    return src.is_unsigned and dst.bits > src.bits


def _wrapping_cast(src, dst) -> bool:
    """Whether numpy's astype from src's storage to dst's is the spec's convert between
    integer types of 8 to 64 bits stored in their own width: the value wrapped into the
    destination's width (two's complement), as `_convert` computes it through a 64-bit integer
    and `wrap_int`'s astype."""
    for t in (src, dst):
        if t.kind not in ("signed", "unsigned") or t.bits not in (8, 16, 32, 64) \
                or t.dtype.itemsize * 8 != t.bits:
            return False
    return True


# (id(source element type), id(destination)) -> (source, destination, the numpy dtype an
# exact cast goes to or None): element types are shared objects, so a pair of them is
# decided once for every op and every parse (the entry holds both: their ids stay theirs)
_CONVERT_PLANS = {}


@kernel("stablehlo.convert")
def convert(ctx, op, x):
    cache = getattr(op, "_cache", None)
    if cache is None:
        cache = op_cache(op)
    plan = cache.get("convert")
    if plan is None:
        src = elem(op.operands[0].type)
        dst = elem(op.results[0].type)
        plan = _CONVERT_PLANS.get((id(src), id(dst)))
        if plan is None or plan[0] is not src or plan[1] is not dst:
            if len(_CONVERT_PLANS) > 10_000:
                _CONVERT_PLANS.clear()
            # (a convert to the same type is a copy, as `_convert` makes it)
            plan = _CONVERT_PLANS[(id(src), id(dst))] = \
                (src, dst, dst.dtype if src == dst or _exact_cast(src, dst) or _wrapping_cast(src, dst)
                           else None)
        cache["convert"] = plan
    src, dst, cast = plan
    if cast is not None and x.dtype == src.dtype:
        return x.astype(cast)
    return _convert(x, src, dst)


_SCALAR_TYPES = {**_SCALAR_INTS, "f16": np.float16, "f32": np.float32, "f64": np.float64,
                 "i1": np.bool_}


# whether numpy takes a Python float operand of an f32 scalar operator as an f32 (NEP 50,
# numpy 2), not as an f64 (numpy 1's value-based promotion of two scalars)
_WEAK_PYTHON_FLOATS = (np.float32(1) * 0.1).__class__ is np.float32


@specializer("stablehlo.convert")
def convert_specialized(op, known=None):
    """convert between native types on numpy scalars (a loop over scalars), and of integers
    narrower than 64 bits or booleans to f16/f32/f64 on arrays: a scalar of the same type is
    the value itself (scalars are immutable); integers and booleans reach the float through
    f64 (exact for them), rounded once, as `_convert` does; anything else takes the general
    kernel."""
    src, dst = _ot(op), _rt(op)
    s_scalar = _SCALAR_TYPES.get(getattr(src, "name", None))
    d_scalar = _SCALAR_TYPES.get(getattr(dst, "name", None))
    if s_scalar is None or d_scalar is None:
        return None
    general = KERNELS["stablehlo.convert"]
    if s_scalar is d_scalar:
        def same_type(ctx, op, x):
            if x.__class__ is s_scalar:
                return x
            return general(ctx, op, x)
        return same_type
    if src.is_bool and d_scalar in _SCALAR_INTS.values():
        # booleans to a native integer: numpy's astype, as the general kernel casts them
        # (`_exact_cast`), on arrays and numpy scalars of the source's dtype
        b_dt = np.dtype(np.bool_)
        i_dt = np.dtype(d_scalar)
        ND, BOOL = np.ndarray, np.bool_
        # a numpy bool scalar (a loop's predicate) as the scalar its astype gives, shared
        # (numpy scalars are immutable): a look-up instead of astype's ~0.5 us on a scalar
        as_int = (d_scalar(0), d_scalar(1))

        def bool_to_int(ctx, op, x):
            if x.__class__ is BOOL:
                return as_int[1] if x else as_int[0]
            if x.__class__ is ND and x.dtype == b_dt:
                return x.astype(i_dt)
            return general(ctx, op, x)
        return bool_to_int
    if dst.name not in ("f16", "f32", "f64") or not (src.is_bool or src.is_integer and src.bits < 64):
        return None
    s_dt = np.dtype(s_scalar)
    d_dt = np.dtype(d_scalar)
    ND = np.ndarray
    f64 = np.float64

    # (see `_unary_float_specializer`: an f32 one times a Python float rounds it to f32)
    one = np.float32(1) if d_scalar is np.float32 and _WEAK_PYTHON_FLOATS else None

    def to_float(ctx, op, x):
        if x.__class__ is s_scalar:
            if one is not None:
                return one * float(x)
            return d_scalar(float(x))
        if x.__class__ is ND and x.dtype == s_dt:
            return x.astype(f64).astype(d_dt, copy=False)
        return general(ctx, op, x)
    return to_float


def storage_bits(x: np.ndarray, et) -> np.ndarray:
    """The bit pattern of each element of `x` (element type `et`) as uint64, in et's width."""
    x = np.require(x, requirements="C")
    if et.is_bool:
        return x.astype(np.uint64)
    if et.is_complex:
        raise NotImplementedOpError("stablehlo.bitcast_convert", f"element type {et}")
    size = x.dtype.itemsize
    u = x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[size]).astype(np.uint64)
    if et.bits < 8 * size:
        u &= np.uint64((1 << et.bits) - 1)
    return u


def from_storage_bits(u: np.ndarray, et) -> np.ndarray:
    """Elements of type `et` whose bit patterns are the low et.bits bits of uint64 `u`."""
    if et.is_bool:
        return (u & np.uint64(1)) != 0
    if et.is_complex:
        raise NotImplementedOpError("stablehlo.bitcast_convert", f"element type {et}")
    bits = et.bits
    if bits < 8:
        u = u & np.uint64((1 << bits) - 1)
        if et.is_integer:
            v = u.astype(np.int16)
            if et.is_signed:
                v = np.where(v >= (1 << (bits - 1)), v - (1 << bits), v)
            return v.astype(et.dtype)
        return u.astype(np.uint8).view(et.dtype)
    udt = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[bits]
    return u.astype(udt).view(et.dtype)


def _whole_bytes(et) -> bool:
    return not et.is_bool and et.dtype.itemsize * 8 == et.bits


@kernel("stablehlo.bitcast_convert")
def bitcast_convert(ctx, op, x):
    """Bit patterns reinterpreted; a wider operand splits into a new minor dimension (lowest
    bits first) and a narrower one is joined along its last dimension."""
    src, dst = _ot(op), _rt(op)
    sb, db = src.bits, dst.bits
    # the result's shape from the operand's (the result type may leave dimensions open)
    rshape = x.shape + (sb // db,) if sb > db else x.shape[:-1] if sb < db else x.shape
    if _whole_bytes(src) and _whole_bytes(dst):
        # little-endian memory already orders the pieces lowest bits first
        return contiguous(x).reshape(-1).view(dst.dtype).reshape(rshape)
    if src.is_complex or dst.is_complex:
        raise NotImplementedOpError(op.name, f"{src} -> {dst}")
    u = storage_bits(x, src)
    if sb == db:
        out = u
    elif sb > db:
        if sb % db:
            raise NotImplementedOpError(op.name, f"{src} -> {dst}")
        shifts = np.arange(0, sb, db, dtype=np.uint64)
        out = (u[..., None] >> shifts) & np.uint64((1 << db) - 1)
    else:
        if db % sb or x.shape[-1:] != (db // sb,):
            raise NotImplementedOpError(op.name, f"{src} -> {dst}")
        shifts = np.arange(0, db, sb, dtype=np.uint64)
        out = np.bitwise_or.reduce(u << shifts, axis=-1)
    return from_storage_bits(out, dst).reshape(rshape)


def _mantissa_bits(et) -> int:
    import ml_dtypes
    return int(ml_dtypes.finfo(et.dtype).nmant) if et.bits < 16 or et.name == "bf16" else \
        {"f16": 10, "f32": 23, "f64": 52}[et.name]


@kernel("stablehlo.reduce_precision")
def reduce_precision(ctx, op, x):
    """Rounds the mantissa (ties to even) and clamps the exponent on the operand type's own
    bit pattern, the way the reference interpreter does; NaN stays NaN unless no mantissa
    bits remain, where it becomes +inf."""
    et = _rt(op)
    ebits = int(op.attributes["exponent_bits"].value)
    mbits = int(op.attributes["mantissa_bits"].value)
    src_m = _mantissa_bits(et)
    if et.name != "f64" and (ebits > et.bits - src_m - 1 or not _ieee_layout(et)):
        # The bit method below is exact only where the reduced format's exponent range is
        # within the operand type's and the operand type has IEEE's bias and inf/NaN
        # encodings. Otherwise convert as the spec says: to f64 (exact), reduce there, and
        # convert back (the source's subnormals are then normal numbers of the wider format)
        x64 = x.astype(np.float64)
        with np.errstate(over="ignore", invalid="ignore"):
            return _reduce_bits(x64, _f64_type(), ebits, mbits).astype(et.dtype)
    return _reduce_bits(x, et, ebits, mbits)


def _f64_type():
    from ..ir.types import ELEMENT_TYPES
    return ELEMENT_TYPES["f64"]


def _ieee_layout(et) -> bool:
    """IEEE's exponent bias and encodings of inf and NaN (not the FN/FNUZ/FNU formats)."""
    return not et.name.endswith(("FN", "FNUZ", "FNU"))


def _reduce_bits(x, et, ebits: int, mbits: int):
    width = et.bits
    src_m = _mantissa_bits(et)
    src_e = width - src_m - 1
    u = storage_bits(x, et)
    one = np.uint64(1)
    with np.errstate(over="ignore"):
        if mbits < src_m:
            shift = np.uint64(src_m - mbits)
            last = one << shift
            bias = (last >> one) - one + ((u & last) >> shift)
            u = (u + bias) & ~(last - one)
        if ebits < src_e:
            sign = u & np.uint64(1 << (width - 1))
            exp_mask = np.uint64(((1 << src_e) - 1) << src_m)
            ebias = (1 << (src_e - 1)) - 1
            rbias = (1 << (ebits - 1)) - 1
            xexp = u & exp_mask
            u = np.where(xexp > np.uint64((ebias + rbias) << src_m), sign | exp_mask, u)
            u = np.where(xexp <= np.uint64((ebias - rbias) << src_m), sign, u)
    out = from_storage_bits(u & np.uint64((1 << width) - 1 if width < 64 else (1 << 64) - 1), et)
    nan = np.isnan(x.astype(np.float64) if x.dtype.itemsize < 4 else x)
    if nan.any():
        keep = x if mbits > 0 else np.full(x.shape, np.inf).astype(et.dtype)
        out = np.where(nan, keep, out).astype(et.dtype)
    return out


# Kernels that differ only by the functions they hand to a shared helper, as tables registered
# in a loop (onnx's OpRunBinaryNumpy pattern): op name -> the helper's arguments after the operands.
_BINARY_KERNELS = {
    "stablehlo.add": args(np.add, np.add, np.logical_or, exact=True),
    "stablehlo.subtract": args(np.subtract, np.subtract, exact=True),
    "stablehlo.multiply": args(np.multiply, np.multiply, np.logical_and, exact=True),
}


# (element type name -> its dtype) the types whose + - * numpy computes exactly in the
# operands' own dtype: what `_binary`'s `exact` path takes (native floats, 8..64-bit integers)
_EXACT_BINARY_TYPES = {n: np.dtype(d) for n, d in (
    ("f16", np.float16), ("f32", np.float32), ("f64", np.float64),
    ("i8", np.int8), ("i16", np.int16), ("i32", np.int32), ("i64", np.int64),
    ("ui8", np.uint8), ("ui16", np.uint16), ("ui32", np.uint32), ("ui64", np.uint64))}


def _exact_binary_kernel(name, int_fn, float_fn, bool_fn=None, exact=True):
    """The kernel of + - *: operands of the result's dtype, for a type of
    `_EXACT_BINARY_TYPES`, go to the ufunc directly (as `_binary` computes them, without
    its dispatch through the table's arguments); anything else takes `_binary`."""
    types = _EXACT_BINARY_TYPES
    assert int_fn is float_fn and exact

    def run(ctx, op, a, b):
        t = op.results[0].type
        if t.__class__ is _TensorType:
            et = t.element_type
            if et.__class__ is _ElementType:
                dt = types.get(et.name)
                if dt is not None and a.dtype == dt and b.dtype == dt:
                    return float_fn(a, b)
        return _binary(op, a, b, int_fn, float_fn, bool_fn, exact=True)
    run.__name__ = run.__qualname__ = name
    return run


for _name, (_positional, _keywords) in _BINARY_KERNELS.items():
    kernel(_name)(_exact_binary_kernel(_name, *_positional, **_keywords))

_UNARY_KERNELS = {
    "stablehlo.negate": args(np.negative, lambda v: 0 - v.astype(np.int64) if v.dtype.kind == "u" else np.negative(v)),
    "stablehlo.exponential": args(np.exp, complex_fn=cexp),
    "stablehlo.log": args(np.log),
    "stablehlo.logistic": args(lambda v: 1.0 / (1.0 + np.exp(-v))),
    "stablehlo.tanh": args(np.tanh),
    "stablehlo.sqrt": args(np.sqrt),
    "stablehlo.rsqrt": args(lambda v: 1.0 / np.sqrt(v)),
    "stablehlo.cbrt": args(np.cbrt, complex_fn=lambda z: z ** (1.0 / 3.0)),
    "stablehlo.sine": args(np.sin),
    "stablehlo.cosine": args(np.cos),
    "stablehlo.tan": args(np.tan),
    "stablehlo.floor": args(np.floor),
    "stablehlo.ceil": args(np.ceil),
    "stablehlo.round_nearest_even": args(np.rint),
}

# (element type name -> (its dtype, the dtype `_unary` computes it in)) the native floats
_NATIVE_FLOAT_TYPES = {n: (np.dtype(d), np.dtype(np.float64)) for n, d in (
    ("f16", np.float16), ("f32", np.float32), ("f64", np.float64))}


# exp of an f16/f32 array computed in f64: every x <= -104 (-inf included) has an exp at
# most exp(-104) ~ 6.8e-46, below half of f32's smallest subnormal (2^-150 ~ 7.0e-46; f16's
# is far larger), so it rounds to +0 in the type, as exp(-104) itself does. Such an x is
# put at -104 before the exp (`np.maximum` returns a NaN operand as it is, payload
# included): the same results, without libm's slow underflow path for the operands of f64
# underflow (a softmax's masked -1e9 entries cost about 3x an ordinary exp).
_EXP_FLOOR = -104.0
# arrays of fewer elements keep `float_fn(x.astype(f64))` (for a small array the ufunc's
# `out` argument and the extra pass cost more than the allocation they save)
_IN_PLACE_MIN_SIZE = 1024
_IN_PLACE_UFUNCS = frozenset(v[0][0] for v in _UNARY_KERNELS.values()
                             if isinstance(v[0][0], np.ufunc))


def _widened_unary(float_fn, x, cdt, floor):
    """`float_fn(x.astype(cdt))` for an array x of `_IN_PLACE_MIN_SIZE` elements or more and
    a ufunc `float_fn`, the ufunc written into the widened copy itself (elementwise: the same
    values as into a new array, one large allocation less); `floor`: `_EXP_FLOOR` for exp,
    else None."""
    t = x.astype(cdt)
    if floor is not None:
        np.maximum(t, floor, out=t)
    float_fn(t, out=t)
    return t


def _unary_kernel(name, float_fn, int_fn=None, complex_fn=None, bool_fn=None):
    """The kernel of a unary table op: an array of a native float type computed as `_unary`
    computes it (its f32 shortcut, else in the compute dtype rounded once to the type) with
    the helper and its table arguments resolved once; anything else takes `_unary`."""
    types = _NATIVE_FLOAT_TYPES
    in_f32 = float_fn in _EXACT_IN_F32
    ND = _ND
    asarray = np.asarray
    in_place = float_fn in _IN_PLACE_UFUNCS
    floor = _EXP_FLOOR if name == "stablehlo.exponential" else None

    def run(ctx, op, x):
        if x.__class__ is ND:
            t = op.results[0].type
            if t.__class__ is _TensorType:
                et = t.element_type
                if et.__class__ is _ElementType:
                    dts = types.get(et.name)
                    if dts is not None:
                        dt, cdt = dts
                        if in_f32 and x.dtype == _F32 and x.ndim and dt == _F32:
                            return float_fn(x)
                        if in_place and x.dtype != cdt and x.size >= _IN_PLACE_MIN_SIZE:
                            r = _widened_unary(float_fn, x, cdt, floor)
                        else:
                            r = float_fn(x if x.dtype == cdt else x.astype(cdt))
                        if r.__class__ is not ND:
                            r = asarray(r)
                        return r if r.dtype == dt else r.astype(dt)
        return _unary(op, x, float_fn, int_fn, complex_fn, bool_fn)
    run.__name__ = run.__qualname__ = name
    return run


for _name, (_positional, _keywords) in _UNARY_KERNELS.items():
    kernel(_name)(_unary_kernel(_name, *_positional, **_keywords))

_SCALAR_FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
_EXACT_IN_TYPE = frozenset(("stablehlo.negate", "stablehlo.floor", "stablehlo.ceil",
                            "stablehlo.round_nearest_even", "stablehlo.sqrt"))


def _unary_float_specializer(name, float_fn):
    """For a result of f16/f32/f64: a numpy scalar operand (a loop over scalars) is computed
    as the general kernel computes a rank-0 array (the ufunc in f64, one rounding to the
    type) without the array round trip, an array of the type as the general kernel computes
    it without its dispatch; anything else takes the general kernel."""
    def specialize(op, known=None):
        scalar = _SCALAR_FLOATS.get(getattr(_rt(op), "name", None))
        if scalar is None or elem(op.operands[0].type) != _rt(op):
            return None
        general = KERNELS[name]
        f64 = np.float64
        dt = np.dtype(scalar)
        wide = dt == np.float64
        ND = np.ndarray
        floor = _EXP_FLOOR if name == "stablehlo.exponential" else None
        widened = _widened_unary
        # (a function that is not a ufunc, as logistic's and rsqrt's, has no `out`: every
        # array takes the plain form)
        big = _IN_PLACE_MIN_SIZE if isinstance(float_fn, np.ufunc) else sys.maxsize
        # an f32 one times a Python float is that float rounded to f32 (numpy 2 converts a
        # Python float operand to the other operand's dtype, one rounding; times 1 is
        # exact), several times cheaper than constructing the scalar
        one = np.float32(1) if dt == np.float32 and _WEAK_PYTHON_FLOATS else None
        # an op whose exact result is a value of the type computes in the type itself (the
        # same value as through f64, without the two conversions): negation, floor, ceil and
        # round-to-even are exact, and a correctly rounded square root in f32 (or f16, which
        # numpy computes in f32) equals f64's rounded once (53 >= 2 * 24 + 2)
        native = name in _EXACT_IN_TYPE and not wide

        def unary_scalar(ctx, op, x):
            if x.__class__ is scalar:
                # (a Python float is the same f64 value, converted either way at less cost
                # than a numpy f64 scalar; the ufunc on it gives an f64 scalar)
                if wide:
                    return float_fn(float(x))
                if one is not None:
                    return one * float(float_fn(float(x)))
                return scalar(float(float_fn(float(x))))
            if x.__class__ is ND and x.dtype == dt:
                if native:
                    return float_fn(x)
                # as `_unary` computes it: in f64, rounded once to the type (a new array
                # either way: astype's positional form, without its keyword parsing)
                if wide:
                    return float_fn(x)
                if x.size < big:
                    return float_fn(x.astype(f64)).astype(dt)
                return widened(float_fn, x, f64, floor).astype(dt)
            return general(ctx, op, x)
        return unary_scalar
    return specialize


for _name, (_positional, _keywords) in _UNARY_KERNELS.items():
    if _positional and callable(_positional[0]):
        specializer(_name)(_unary_float_specializer(_name, _positional[0]))
# (the two kernels of their own whose float path is `_unary`'s with a ufunc: log1p is
# softplus's and logaddexp's, expm1 elu's)
specializer("stablehlo.log_plus_one")(_unary_float_specializer("stablehlo.log_plus_one", np.log1p))
specializer("stablehlo.exponential_minus_one")(
    _unary_float_specializer("stablehlo.exponential_minus_one", np.expm1))


def _binary_float_specializer(name, float_fn, other=None):
    """A binary op that `_binary` computes for floats as `float_fn` in f64 rounded once to
    the type (atan2, power, a float remainder): two f32 or f64 arrays of the result's dtype
    and one shape, or two numpy scalars of it, are computed so, without `_binary`'s
    dispatch; anything else takes the general kernel. `other`: the op's specializer for other types, tried first."""
    def specialize(op, known=None):
        if other is not None:
            got = other(op, known)
            if got is not None:
                return got
        et = _rt(op)
        if getattr(et, "name", None) not in ("f32", "f64") or _ot(op, 0) != et \
                or _ot(op, 1) != et:
            return None
        dt = et.dtype
        wide = dt == _F64
        general = KERNELS[name]
        ND, f64 = _ND, _F64
        scalar = dt.type

        def binary_float(ctx, op, a, b):
            if a.__class__ is ND and b.__class__ is ND and a.dtype == dt and b.dtype == dt \
                    and a.ndim and a.shape == b.shape:
                if wide:
                    return float_fn(a, b)
                return float_fn(a.astype(f64), b.astype(f64)).astype(dt)
            if a.__class__ is scalar and b.__class__ is scalar:
                # two numpy scalars of the type (a loop over scalars): the same ufunc on the
                # same f64 values, rounded once to the type (a Python float is that f64
                # value), as a scalar, without the general kernel's arrays (about 5 us)
                if wide:
                    return float_fn(a, b)
                return scalar(float_fn(float(a), float(b)))
            return general(ctx, op, a, b)
        binary_float.__name__ = binary_float.__qualname__ = name.split(".")[1] + "_float"
        return binary_float
    return specialize


specializer("stablehlo.atan2")(_binary_float_specializer("stablehlo.atan2", np.arctan2))
specializer("stablehlo.power")(_binary_float_specializer("stablehlo.power", np.power))
specializer("stablehlo.remainder")(_binary_float_specializer(
    "stablehlo.remainder", np.fmod, _int_div_rem_specializer(True)))


@specializer("stablehlo.abs")
def abs_specialized(op, known=None):
    """abs of an f32/f64 array of rank >= 1 of the result type: numpy's `absolute` itself,
    as `abs_` computes it for those (`_unary`: f32 arrays in f32, f64 in f64, and the
    dtype kept), without its dispatch; anything else (rank 0, another class or dtype) takes
    the general kernel."""
    et = _rt(op)
    if getattr(et, "name", None) not in ("f32", "f64") or _ot(op) != et:
        return None
    dt = et.dtype
    absolute = np.absolute
    ND = _ND

    def abs_float(ctx, op, x):
        if x.__class__ is ND and x.dtype == dt and x.ndim:
            return absolute(x)
        return abs_(ctx, op, x)
    return abs_float

_BITWISE_KERNELS = {
    "stablehlo.and": args(np.bitwise_and),
    "stablehlo.or": args(np.bitwise_or),
    "stablehlo.xor": args(np.bitwise_xor),
}
register_table(_BITWISE_KERNELS, _bitwise, 2)


specializer("stablehlo.shift_left")(_logical_shift_specializer("stablehlo.shift_left", True))
specializer("stablehlo.shift_right_logical")(
    _logical_shift_specializer("stablehlo.shift_right_logical", False))
