"""Elementwise kernels against independent oracles, for every element type.

Integer ops are checked against exact arithmetic on Python ints (then wrapped to the type's
width); float ops against numpy in float64 (long double for f64 results) rounded once to the
result type; conversions against exact rationals rounded to nearest-even among the result
type's neighbours. Values come from hypothesis and always mix in NaN, +-inf, +-0, denormals
and integer extremes. Kernels are driven through small parsed programs."""
from __future__ import annotations

import functools
import math
from fractions import Fraction

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter.elementwise import convert_array
from stablehlo_ref.ir.types import ELEMENT_TYPES as ET

N = 12
INTS = ["i2", "i4", "i8", "i16", "i32", "i64", "ui2", "ui4", "ui8", "ui16", "ui32", "ui64"]
FLOATS = ["f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FN", "f8E4M3FNUZ",
          "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ", "f8E8M0FNU", "bf16", "f16", "f32", "f64"]
COMPLEX = ["complex<f32>", "complex<f64>"]
ALL = ["i1"] + INTS + FLOATS + COMPLEX
FAST = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


# ------------------------------------------------------------------ programs

@functools.lru_cache(maxsize=None)
def _program(opname, in_types, out_type, shapes, out_shape, attrs):
    def tt(t, s):
        return f"tensor<{''.join(f'{d}x' for d in s)}{t}>"
    args = ", ".join(f"%a{i}: {tt(t, s)}" for i, (t, s) in enumerate(zip(in_types, shapes)))
    names = ", ".join(f"%a{i}" for i in range(len(in_types)))
    fin = ", ".join(tt(t, s) for t, s in zip(in_types, shapes))
    rt = tt(out_type, out_shape)
    return stablehlo_ref.parse(
        f'func.func @main({args}) -> {rt} {{\n  %r = "{opname}"({names}) {attrs} : ({fin}) -> {rt}\n'
        f'  return %r : {rt}\n}}')


def run_op(opname, in_types, out_type, arrays, attrs="", out_shape=None):
    shapes = tuple(tuple(a.shape) for a in arrays)
    m = _program(opname, tuple(in_types), out_type, shapes,
                 shapes[0] if out_shape is None else tuple(out_shape), attrs)
    return stablehlo_ref.run(m, *arrays)[0]


# ------------------------------------------------------------------ values

def int_range(t):
    e = ET[t]
    if e.is_signed:
        return -(1 << (e.bits - 1)), (1 << (e.bits - 1)) - 1
    return 0, (1 << e.bits) - 1


def int_values(t):
    lo, hi = int_range(t)
    extremes = sorted({lo, hi, 0, 1, max(lo, -1), lo + 1, hi - 1, min(hi, 2)})
    return st.one_of(st.sampled_from(extremes), st.integers(lo, hi))


def int_array(vals, t):
    return np.array(vals, dtype=object).astype(np.int64 if ET[t].is_signed else np.uint64).astype(ET[t].dtype)


def _float_specials(t):
    dt = ET[t].dtype
    fi = ml_dtypes.finfo(dt) if t not in ("f16", "f32", "f64") else np.finfo(dt)
    vals = [0.0, -0.0, 1.0, -1.0, 0.5, np.inf, -np.inf, np.nan, float(fi.max), -float(fi.max),
            float(fi.tiny), float(fi.smallest_subnormal), -float(fi.smallest_subnormal), 3.0, -2.5]
    with np.errstate(all="ignore"):
        arr = np.array(vals, dtype=np.float64).astype(dt)
    return [int(b) for b in _bits_of(arr)]


def _bits_of(arr):
    u = np.ascontiguousarray(arr).view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[arr.dtype.itemsize])
    return u


def float_bits(t):
    e = ET[t]
    return st.one_of(st.sampled_from(_float_specials(t)), st.integers(0, (1 << e.bits) - 1))


def from_bits(bits, t):
    dt = ET[t].dtype
    udt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    return np.array(bits, dtype=udt).view(dt)


def arrays(t, n=N):
    e = ET[t]
    if e.is_bool:
        return st.lists(st.booleans(), min_size=n, max_size=n).map(lambda v: np.array(v, dtype=bool))
    if e.is_integer:
        return st.lists(int_values(t), min_size=n, max_size=n).map(lambda v: int_array(v, t))
    if e.is_float:
        return st.lists(float_bits(t), min_size=n, max_size=n).map(lambda v: from_bits(v, t))
    part = "f32" if t == "complex<f32>" else "f64"
    return st.tuples(arrays(part, n), arrays(part, n)).map(lambda ri: _mk(ri, e.dtype))


def _mk(ri, dt):
    out = np.empty(ri[0].shape, dtype=dt)
    out.real = ri[0]
    out.imag = ri[1]
    return out


# ------------------------------------------------------------------ oracles

def wrap(v, t):
    lo, hi = int_range(t)
    bits = ET[t].bits
    v &= (1 << bits) - 1
    return v - (1 << bits) if ET[t].is_signed and v > hi else v


def _div(a, b, t):
    lo, _ = int_range(t)
    if b == 0:
        return -1 if ET[t].is_signed else (1 << ET[t].bits) - 1
    if a == lo and b == -1:
        return lo
    q = abs(a) // abs(b)
    return q if (a < 0) == (b < 0) else -q


def _rem(a, b, t):
    if b == 0:
        return a
    return a - _div(a, b, t) * b


def _pow(a, b, t):
    if b < 0:
        return 1 if a == 1 else (-1 if b % 2 else 1) if a == -1 else 0
    return pow(a, b, 1 << ET[t].bits)


def _shift(kind, a, b, t):
    bits = ET[t].bits
    ua = a & ((1 << bits) - 1)
    if kind == "shift_left":
        return 0 if b < 0 or b >= bits else ua << b
    if kind == "shift_right_logical":
        return 0 if b < 0 or b >= bits else ua >> b
    signed = ua - (1 << bits) if ua >> (bits - 1) else ua
    return signed >> (bits - 1 if b < 0 or b >= bits else b)


INT_BINARY = {
    "add": lambda a, b, t: a + b,
    "subtract": lambda a, b, t: a - b,
    "multiply": lambda a, b, t: a * b,
    "divide": _div,
    "remainder": _rem,
    "maximum": lambda a, b, t: max(a, b),
    "minimum": lambda a, b, t: min(a, b),
    "and": lambda a, b, t: a & b,
    "or": lambda a, b, t: a | b,
    "xor": lambda a, b, t: a ^ b,
    "power": _pow,
    "shift_left": functools.partial(_shift, "shift_left"),
    "shift_right_logical": functools.partial(_shift, "shift_right_logical"),
    "shift_right_arithmetic": functools.partial(_shift, "shift_right_arithmetic"),
}


@pytest.mark.parametrize("t", INTS)
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_integer_binary_wraps_like_python_ints(t, data):
    a = data.draw(arrays(t))
    b = data.draw(arrays(t))
    for name, fn in INT_BINARY.items():
        got = run_op(f"stablehlo.{name}", [t, t], t, [a, b])
        want = [wrap(fn(int(x), int(y), t), t) for x, y in zip(a, b)]
        assert [int(v) for v in got] == want, (name, t, a, b)


@pytest.mark.parametrize("name,fn", [("and", lambda a, b: a and b), ("or", lambda a, b: a or b),
                                     ("xor", lambda a, b: a != b), ("add", lambda a, b: a or b),
                                     ("multiply", lambda a, b: a and b),
                                     ("maximum", lambda a, b: a or b), ("minimum", lambda a, b: a and b)])
def test_i1_binary(name, fn):
    a = np.array([False, False, True, True])
    b = np.array([False, True, False, True])
    got = run_op(f"stablehlo.{name}", ["i1", "i1"], "i1", [a, b])
    assert got.dtype == np.bool_ and got.tolist() == [fn(x, y) for x, y in zip(a, b)]
    assert run_op("stablehlo.not", ["i1"], "i1", [a]).tolist() == [True, True, False, False]


def _clz(v, t):
    bits = ET[t].bits
    return bits - (v & ((1 << bits) - 1)).bit_length()


INT_UNARY = {
    "negate": lambda v, t: -v,
    "abs": lambda v, t: abs(v),
    "not": lambda v, t: ~v,
    "popcnt": lambda v, t: bin(v & ((1 << ET[t].bits) - 1)).count("1"),
    "count_leading_zeros": _clz,
    "sign": lambda v, t: (v > 0) - (v < 0),
}


@pytest.mark.parametrize("t", INTS)
@FAST
@given(data=st.data())
def test_integer_unary(t, data):
    a = data.draw(arrays(t))
    for name, fn in INT_UNARY.items():
        if name in ("abs", "sign", "negate") and ET[t].is_unsigned and name != "negate":
            continue
        got = run_op(f"stablehlo.{name}", [t], t, [a])
        assert [int(v) for v in got] == [wrap(fn(int(x), t), t) for x in a], (name, t, a)


# ------------------------------------------------------------------ compare

DIRS = {"EQ": lambda c: c == 0, "NE": lambda c: c != 0, "LT": lambda c: c < 0,
        "LE": lambda c: c <= 0, "GT": lambda c: c > 0, "GE": lambda c: c >= 0}


def _cmp_attr(d, ctype):
    return (f"{{comparison_direction = #stablehlo<comparison_direction {d}>, "
            f"compare_type = #stablehlo<comparison_type {ctype}>}}")


def _total_key(bits, nbits, signed=True):
    if not signed:      # f8E8M0FNU: no sign bit, the bit pattern is the order
        return bits
    sign = bits >> (nbits - 1)
    mag = bits & ((1 << (nbits - 1)) - 1)
    return -mag - 1 if sign else mag


@pytest.mark.parametrize("t", ALL)
@FAST
@given(data=st.data())
def test_compare_every_type_and_direction(t, data):
    e = ET[t]
    a = data.draw(arrays(t))
    b = data.draw(arrays(t))
    b[: N // 3] = a[: N // 3]
    ctypes = (["FLOAT", "TOTALORDER"] if e.is_float else ["FLOAT"] if e.is_complex
              else ["UNSIGNED"] if e.is_bool or e.is_unsigned else ["SIGNED"])
    for ctype in ctypes:
        for d, pred in DIRS.items():
            if e.is_complex and d not in ("EQ", "NE"):
                continue
            got = run_op("stablehlo.compare", [t, t], "i1", [a, b], attrs=_cmp_attr(d, ctype))
            if ctype == "TOTALORDER":
                signed = t != "f8E8M0FNU"
                ka = [_total_key(int(v), e.bits, signed) for v in _bits_of(a)]
                kb = [_total_key(int(v), e.bits, signed) for v in _bits_of(b)]
                if e.bits < 8:
                    ka = [_total_key(int(v) & ((1 << e.bits) - 1), e.bits) for v in _bits_of(a)]
                    kb = [_total_key(int(v) & ((1 << e.bits) - 1), e.bits) for v in _bits_of(b)]
                want = [pred((x > y) - (x < y)) for x, y in zip(ka, kb)]
            elif e.is_float or e.is_complex:
                xs = a.astype(np.complex128) if e.is_complex else a.astype(np.float64)
                ys = b.astype(np.complex128) if e.is_complex else b.astype(np.float64)
                want = [(x == y) if d == "EQ" else (x != y) if d == "NE" else
                        (not (math.isnan(x) or math.isnan(y)) and pred((x > y) - (x < y)))
                        for x, y in zip(xs.tolist(), ys.tolist())]
            else:
                want = [pred((int(x) > int(y)) - (int(x) < int(y))) for x, y in zip(a, b)]
            assert got.tolist() == want, (t, ctype, d, a, b)


def test_compare_signedness_overrides():
    a = np.array([-1, 1], dtype=np.int8)
    b = np.array([1, 1], dtype=np.int8)
    assert run_op("stablehlo.compare", ["i8", "i8"], "i1", [a, b], _cmp_attr("LT", "UNSIGNED")).tolist() == [False, False]
    u = np.array([255, 1], dtype=np.uint8)
    v = np.array([1, 1], dtype=np.uint8)
    assert run_op("stablehlo.compare", ["ui8", "ui8"], "i1", [u, v], _cmp_attr("LT", "SIGNED")).tolist() == [True, False]


# ------------------------------------------------------------------ floats

def _round_to(x64, t):
    with np.errstate(all="ignore"):
        return np.asarray(x64).astype(ET[t].dtype)


def _same(got, want, t, ulps=0):
    """Bitwise equal (any NaN matches any NaN), or within `ulps` steps of the result type."""
    g = np.asarray(got).astype(np.float64)
    w = np.asarray(want).astype(ET[t].dtype).astype(np.float64)
    nan = np.isnan(g) & np.isnan(w)
    eq = (g == w) & (np.signbit(g) == np.signbit(w))
    if ulps:
        dt = ET[t].dtype
        gk = np.array([_total_key(int(v), 8 * dt.itemsize) for v in _bits_of(np.asarray(got).astype(dt))])
        wk = np.array([_total_key(int(v), 8 * dt.itemsize) for v in _bits_of(np.asarray(want).astype(dt))])
        eq |= (np.abs(gk - wk) <= ulps) & np.isfinite(g) & np.isfinite(w)
        eq |= (g == w)
    return bool(np.all(nan | eq))


EXACT_BINARY = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                "divide": np.divide, "remainder": np.fmod, "maximum": np.maximum,
                "minimum": np.minimum}
NEAR_BINARY = {"power": np.power, "atan2": np.arctan2}


@pytest.mark.parametrize("t", FLOATS)
@FAST
@given(data=st.data())
def test_float_binary_rounds_once(t, data):
    a = data.draw(arrays(t))
    b = data.draw(arrays(t))
    wide = np.longdouble if t == "f64" else np.float64
    with np.errstate(all="ignore"):
        for name, fn in {**EXACT_BINARY, **NEAR_BINARY}.items():
            got = run_op(f"stablehlo.{name}", [t, t], t, [a, b])
            w = np.float64 if name in EXACT_BINARY else wide   # IEEE f64 ops round correctly
            want = _round_to(fn(a.astype(w), b.astype(w)), t)
            ulps = 0 if name in EXACT_BINARY else (2 if t == "f64" else 1)
            assert _same(got, want, t, ulps), (name, t, a, b, got, want)


EXACT_UNARY = {"abs": np.abs, "negate": np.negative, "floor": np.floor, "ceil": np.ceil,
               "round_nearest_even": np.rint, "sqrt": np.sqrt,
               "round_nearest_afz": lambda v: np.where(np.abs(v - np.trunc(v)) == 0.5,
                                                       v + np.copysign(0.5, v), np.rint(v)),
               "sign": lambda v: np.where(np.isnan(v) | (v == 0), v, np.sign(v))}
NEAR_UNARY = {"exponential": np.exp, "exponential_minus_one": np.expm1, "log": np.log,
              "log_plus_one": np.log1p, "logistic": lambda v: 1 / (1 + np.exp(-v)),
              "sine": np.sin, "cosine": np.cos, "tan": np.tan, "tanh": np.tanh,
              "rsqrt": lambda v: 1 / np.sqrt(v), "cbrt": np.cbrt}


@pytest.mark.parametrize("t", FLOATS)
@FAST
@given(data=st.data())
def test_float_unary_rounds_once(t, data):
    a = data.draw(arrays(t))
    wide = np.longdouble if t == "f64" else np.float64
    with np.errstate(all="ignore"):
        for name, fn in {**EXACT_UNARY, **NEAR_UNARY}.items():
            got = run_op(f"stablehlo.{name}", [t], t, [a])
            want = _round_to(fn(a.astype(np.float64 if name in EXACT_UNARY else wide)), t)
            if name in ("sine", "cosine", "tan") and t == "f64":
                big = np.abs(a) > 1e6         # long double sin/cos of huge arguments are not an oracle
                got, want = got[~big], want[~big]
            ulps = 0 if name in EXACT_UNARY else (3 if t == "f64" else 1)
            assert _same(got, want, t, ulps), (name, t, a, got, want)
        fin = run_op("stablehlo.is_finite", [t], "i1", [a])
        assert fin.tolist() == np.isfinite(a.astype(np.float64)).tolist()


@pytest.mark.parametrize("t", ["bf16", "f16", "f32", "f64", "f8E4M3FN", "f8E5M2"])
def test_clamp_and_select(t):
    dt = ET[t].dtype
    x = np.array([-3.0, 0.5, 7.0, np.nan, -0.0], dtype=np.float64).astype(dt)
    lo = np.array(-1.0).astype(dt)
    hi = np.array(2.0).astype(dt)
    got = run_op("stablehlo.clamp", [t, t, t], t, [np.broadcast_to(lo, x.shape).copy(), x,
                                                   np.broadcast_to(hi, x.shape).copy()])
    assert _same(got, np.array([-1.0, 0.5, 2.0, np.nan, -0.0]), t)
    got = run_op("stablehlo.clamp", [t, t, t], t, [lo, x, hi], out_shape=x.shape)
    assert _same(got, np.array([-1.0, 0.5, 2.0, np.nan, -0.0]), t)


@pytest.mark.parametrize("t", INTS)
def test_integer_clamp_extremes(t):
    lo, hi = int_range(t)
    x = int_array([lo, hi, 0], t)
    got = run_op("stablehlo.clamp", [t, t, t], t, [int_array(lo + 1, t), x, int_array(hi - 1, t)],
                 out_shape=x.shape)
    assert [int(v) for v in got] == [lo + 1, hi - 1, min(max(0, lo + 1), hi - 1)]


# ------------------------------------------------------------------ complex

@pytest.mark.parametrize("t", COMPLEX)
@FAST
@given(data=st.data())
def test_complex_arithmetic(t, data):
    a = data.draw(arrays(t))
    b = data.draw(arrays(t))
    fin = np.isfinite(a) & np.isfinite(b) & (np.abs(a) < 1e15) & (np.abs(b) < 1e15) & (np.abs(b) > 1e-15)
    a, b = a[fin], b[fin]
    if not a.size:
        return
    with np.errstate(all="ignore"):
        for name, fn in {"add": np.add, "subtract": np.subtract, "multiply": np.multiply,
                         "divide": np.divide}.items():
            got = run_op(f"stablehlo.{name}", [t, t], t, [a, b]).astype(np.complex128)
            want = fn(a.astype(np.clongdouble), b.astype(np.clongdouble)).astype(np.complex128)
            scale = np.maximum(np.abs(want), np.finfo(ET[t].dtype).tiny) * np.finfo(ET[t].dtype).eps
            assert np.all(np.abs(got - want) <= 8 * scale + 1e-300), (name, a, b, got, want)


@pytest.mark.parametrize("t", COMPLEX)
def test_complex_branch_cuts(t):
    dt = ET[t].dtype
    z = np.array([complex(-1, 0.0), complex(-1, -0.0), complex(-4, 0), complex(0, 0),
                  complex(3, 4), complex(-3, -4)], dtype=dt)
    with np.errstate(all="ignore"):
        for name, fn in {"sqrt": np.sqrt, "log": np.log, "exponential": np.exp, "tanh": np.tanh,
                         "sine": np.sin, "cosine": np.cos, "tan": np.tan,
                         "log_plus_one": lambda v: np.log(1 + v)}.items():
            got = run_op(f"stablehlo.{name}", [t], t, [z]).astype(np.complex128)
            want = fn(z.astype(np.complex128))
            ok = np.isclose(got, want, rtol=1e-5, atol=1e-6) | (np.isnan(got) & np.isnan(want))
            if name == "log_plus_one":
                ok |= ~np.isfinite(want)      # log(1 + z) of z = -1 is the pole
            assert ok.all(), (name, got, want)
            assert np.array_equal(np.signbit(got.imag[:2]), np.signbit(want.imag[:2])) or name in ("exponential", "log_plus_one"), name
    got = run_op("stablehlo.sqrt", [t], t, [z[:2]]).astype(np.complex128)
    assert got.tolist() == [1j, -1j]
    got = run_op("stablehlo.log", [t], t, [z[:2]]).astype(np.complex128)
    assert np.allclose(got, [np.pi * 1j, -np.pi * 1j])
    atan = run_op("stablehlo.atan2", [t, t], t, [z, z[::-1].copy()]).astype(np.complex128)
    assert np.isfinite(atan[[0, 1, 4, 5]]).all()


@pytest.mark.parametrize("t", COMPLEX)
def test_real_imag_complex(t):
    part = "f32" if t == "complex<f32>" else "f64"
    re = np.array([1.0, -0.0, np.inf, np.nan], dtype=ET[part].dtype)
    im = np.array([-0.0, np.inf, 2.0, 1.0], dtype=ET[part].dtype)
    z = run_op("stablehlo.complex", [part, part], t, [re, im])
    r = run_op("stablehlo.real", [t], part, [z])
    i = run_op("stablehlo.imag", [t], part, [z])
    assert _same(r, re, part) and _same(i, im, part)


# ------------------------------------------------------------------ conversions

def _value(x, t):
    """An element as an exact Fraction, or a float special (nan, inf)."""
    e = ET[t]
    if e.is_bool or e.is_integer:
        return Fraction(int(x))
    f = float(np.asarray(x).astype(np.float64))
    return f if not math.isfinite(f) else Fraction(f)


@functools.lru_cache(maxsize=None)
def _finite_table(t):
    """All finite values of a narrow float type, sorted, with their bit patterns (+0 kept
    over -0)."""
    e = ET[t]
    bits = np.arange(1 << e.bits, dtype=np.uint64)
    vals = from_bits(bits.astype({1: np.uint8, 2: np.uint16}[e.dtype.itemsize]), t)
    with np.errstate(all="ignore"):
        f = vals.astype(np.float64)
    keep = np.isfinite(f) & ~((f == 0) & np.signbit(f))
    order = np.argsort(f[keep], kind="stable")
    return f[keep][order], bits[keep][order]


def _nearest_float(q, t):
    """Round the Fraction q to float type t, ties to even, as the oracle (None: overflow)."""
    e = ET[t]
    if e.name in ("f32", "f64"):
        vals = None
        dt = e.dtype
        c0 = np.array(float(q)).astype(dt)      # within one step of the answer
        cands = [c0, np.nextafter(c0, dt.type(np.inf)), np.nextafter(c0, dt.type(-np.inf))]
        fmax = float(np.finfo(dt).max)
        half = Fraction(fmax - float(np.nextafter(dt.type(fmax), dt.type(0)))) / 2
        if abs(q) >= Fraction(fmax) + half:
            return math.copysign(math.inf, q)
        cands = [float(c) for c in cands if np.isfinite(c)]
        keyed = [(abs(Fraction(c) - q), int(_bits_of(np.array([c], dt))[0]) & 1, c) for c in cands]
        best = min(keyed)[2]
    else:
        vals, bits = _finite_table(t)
        fmax = Fraction(float(vals[-1]))
        if abs(q) >= fmax + (fmax - Fraction(float(vals[-2]))) / 2:
            return None
        i = int(np.searchsorted(vals, float(q)))
        idx = [j for j in (i - 2, i - 1, i, i + 1) if 0 <= j < len(vals)]
        d = {j: abs(Fraction(float(vals[j])) - q) for j in idx}
        m = min(d.values())
        ties = [j for j in idx if d[j] == m]
        if t == "f8E8M0FNU":                    # a lone implicit bit is odd: ties round up
            j = max(ties, key=lambda j: abs(vals[j]))
        else:
            j = min(ties, key=lambda j: int(bits[j]) & 1)
        best = float(vals[j])
    return math.copysign(best, q) if best == 0 else best


def _convert_oracle(x, src, dst):
    s, d = ET[src], ET[dst]
    v = _value(x.real if s.is_complex else x, src)
    if d.is_bool:
        return v != 0 if not isinstance(v, float) else True
    if dst in ("f4E2M1FN", "f6E2M3FN", "f6E3M2FN") and isinstance(v, float):
        # finite-only types: +-inf saturate, NaN (implementation-defined) becomes a zero
        return "zero" if math.isnan(v) else math.copysign(float(ml_dtypes.finfo(d.dtype).max), v)
    if isinstance(v, float) and math.isinf(v) and (dst.startswith("f8E4M3FN") or "FNU" in dst):
        return math.nan                    # no infinity: NaN
    if dst == "f8E8M0FNU" and (isinstance(v, float) and v < 0 or v <= 0):
        return math.nan                    # no sign and no zero: NaN
    if d.is_integer:
        lo, hi = int_range(dst)
        if isinstance(v, float):
            return 0 if math.isnan(v) else hi if v > 0 else lo
        if s.is_integer:
            return wrap(int(v), dst)
        tv = math.trunc(v)
        return min(max(tv, lo), hi)
    if isinstance(v, float) or v == 0:
        z = float(np.asarray(x.real if s.is_complex else x).astype(np.float64))
        return z
    part = "f32" if dst == "complex<f32>" else "f64" if d.is_complex else dst
    return _nearest_float(v, part)


def _convert_sample(t):
    e = ET[t]
    if e.is_bool:
        return np.array([True, False])
    if e.is_integer:
        lo, hi = int_range(t)
        vals = sorted({lo, hi, 0, 1, lo + 1, hi - 1, hi // 3, lo // 3 if lo else hi // 7})
        if e.bits == 64:
            vals += [(1 << 62) + (1 << 38) + 1, (1 << 53) + 1, (1 << 24) + 1, -(1 << 62) - (1 << 40) - 1 if lo else 12345]
        return np.array(vals, dtype=object).astype(e.dtype) if e.bits == 64 else np.array(vals).astype(e.dtype)
    if e.is_complex:
        part = _convert_sample("f32" if t == "complex<f32>" else "f64")
        return part.astype(e.dtype) - 1j * part.astype(e.dtype)
    return from_bits(_float_specials(t) + list(range(0, 1 << min(e.bits, 8), 7)), t)


@pytest.mark.parametrize("src", ALL)
@np.errstate(all="ignore")   # (kernels run as the interpreter runs them)
def test_convert_every_pair(src):
    x = _convert_sample(src)
    for dst in ALL:
        got = convert_array(x, ET[src], ET[dst])
        assert got.dtype == ET[dst].dtype, (src, dst)
        for xi, gi in zip(x, got):
            want = _convert_oracle(xi, src, dst)
            if want is None:                  # overflow of a narrow float: inf, or NaN without inf
                g = float(np.asarray(gi.real if ET[dst].is_complex else gi).astype(np.float64))
                assert not math.isfinite(g) or g == float(ml_dtypes.finfo(ET[dst].dtype).max) * np.sign(g), (src, dst, xi, gi)
                continue
            g = gi.real if ET[dst].is_complex else gi
            if want == "zero":
                assert float(g) == 0, (src, dst, xi, gi)
                continue
            if ET[dst].is_integer:
                assert int(g) == int(want), (src, dst, xi, gi, want)
            else:
                gf = float(np.asarray(g).astype(np.float64))
                if isinstance(want, float) and math.isnan(want):
                    assert math.isnan(gf), (src, dst, xi, gi)
                elif ET[dst].is_float and "FNUZ" in dst or dst == "f8E8M0FNU":
                    assert gf == want or (want == 0 and gf == 0), (src, dst, xi, gi, want)
                else:
                    assert gf == want and math.copysign(1, gf) == math.copysign(1, want), (src, dst, xi, gi, want)
        if ET[dst].is_complex and ET[src].is_complex:
            part = np.float32 if dst == "complex<f32>" else np.float64
            with np.errstate(all="ignore"):
                want_imag = x.imag.astype(part).astype(np.float64)
            assert np.array_equal(got.imag.astype(np.float64), want_imag, equal_nan=True)


def test_convert_through_program():
    x = np.array([np.nan, -np.inf, 1e10, -1e10, 2.9, -2.9], dtype=np.float32)
    assert run_op("stablehlo.convert", ["f32"], "i8", [x]).tolist() == [0, -128, 127, -128, 2, -2]
    assert run_op("stablehlo.convert", ["f32"], "ui8", [x]).tolist() == [0, 0, 255, 0, 2, 0]
    i = np.array([(1 << 62) + (1 << 38) + 1], dtype=np.int64)
    assert int(run_op("stablehlo.convert", ["i64"], "f32", [i]).astype(np.float64)[0]) == (1 << 62) + (1 << 39)


# ------------------------------------------------------------------ bitcast_convert

def _bit_list(a, t):
    e = ET[t]
    if e.is_bool:
        return [int(v) for v in a.reshape(-1)]
    u = _bits_of(np.ascontiguousarray(a).reshape(-1))
    return [int(v) & ((1 << e.bits) - 1) for v in u]


def _from_bit_list(vals, t):
    e = ET[t]
    if e.is_bool:
        return np.array([bool(v) for v in vals])
    if e.is_integer and e.bits < 8:
        return np.array([v - (1 << e.bits) if e.is_signed and v >> (e.bits - 1) else v for v in vals]).astype(e.dtype)
    if e.is_integer:
        return np.array(vals, dtype=object).astype({8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}[e.bits]).view(e.dtype)
    return from_bits(vals, t)


BITCAST_TYPES = ["i1"] + INTS + FLOATS


@pytest.mark.parametrize("src", BITCAST_TYPES)
@settings(max_examples=2, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_bitcast_convert(src, data):
    sb = ET[src].bits
    for dst in BITCAST_TYPES:
        db = ET[dst].bits
        if sb % db and db % sb:
            continue
        if db > sb:
            x = data.draw(arrays(src, 2 * (db // sb))).reshape(2, db // sb)
            out_shape = (2,)
            flat = _bit_list(x, src)
            k = db // sb
            want_bits = [sum(flat[i * k + j] << (j * sb) for j in range(k)) for i in range(2)]
        else:
            x = data.draw(arrays(src, 3))
            out_shape = (3,) if db == sb else (3, sb // db)
            want_bits = [(v >> (j * db)) & ((1 << db) - 1) for v in _bit_list(x, src) for j in range(sb // db)]
        got = run_op("stablehlo.bitcast_convert", [src], dst, [x], out_shape=out_shape)
        assert got.shape == out_shape and got.dtype == ET[dst].dtype
        assert _bit_list(got, dst) == want_bits, (src, dst, x, got)
        back = run_op("stablehlo.bitcast_convert", [dst], src, [got], out_shape=x.shape)
        assert _bit_list(back, src) == _bit_list(x, src)


# ------------------------------------------------------------------ reduce_precision

def _round_to_format(q, m, emin, emax):
    """q rounded to nearest (ties to even) in a binary format with m mantissa bits, normal
    exponents emin..emax and subnormals below 2**emin; None where it overflows."""
    if q == 0:
        return q
    a = abs(q)
    ex = max(math.floor(math.log2(a)), emin)
    while ex > emin and Fraction(2) ** ex > a:
        ex -= 1
    while Fraction(2) ** (ex + 1) <= a:
        ex += 1
    quantum = Fraction(2) ** (ex - m)
    n = a / quantum
    r = math.floor(n)
    if n - r > Fraction(1, 2) or (n - r == Fraction(1, 2) and r % 2):
        r += 1
    a = r * quantum
    if a >= Fraction(2) ** (emax + 1):
        return None
    return a if q > 0 else -a


def _reduce_precision_oracle(x, t, ebits, mbits):
    """The spec's reduce_precision: to a format with ebits/mbits (no subnormals below its
    smallest normal unless its exponent range equals the working type's) and back. Where the
    reduced exponent range is wider than the operand type's, the work happens in f64 and the
    result is rounded back to the operand type (its subnormals are normal numbers there)."""
    e = ET[t]
    m_src = {"f16": 10, "bf16": 7, "f32": 23, "f64": 52, "f8E5M2": 2, "f8E4M3": 3, "f8E3M4": 4}[t]
    e_src = e.bits - m_src - 1
    f = float(np.asarray(x).astype(np.float64))
    if math.isnan(f):
        return f if mbits > 0 else math.inf
    if math.isinf(f):
        return f
    wide = ebits > e_src and t != "f64"
    m_w, e_w = (52, 11) if wide else (m_src, e_src)
    emin = 2 - (1 << (e_w - 1))
    q = Fraction(f)
    if q != 0:
        ex = max(math.floor(math.log2(abs(f))), emin)
        while Fraction(2) ** ex > abs(q):
            ex -= 1
        while Fraction(2) ** (ex + 1) <= abs(q):
            ex += 1
        ex = max(ex, emin)
        if mbits < m_w:
            quantum = Fraction(2) ** (ex - mbits)
            n = abs(q) / quantum
            r = math.floor(n)
            if mbits == 0 and n - r == Fraction(1, 2):
                # no mantissa bit left: the reference breaks the tie on the exponent's last bit
                r += 0 if abs(q) < Fraction(2) ** emin else (ex + (1 << (e_w - 1)) - 1) % 2
            elif n - r > Fraction(1, 2) or (n - r == Fraction(1, 2) and r % 2):
                r += 1
            q = r * quantum if q > 0 else -r * quantum
    if ebits < e_w:
        rbias = (1 << (ebits - 1)) - 1
        if q == 0 or abs(q) < Fraction(2) ** (1 - rbias):
            return math.copysign(0.0, f)
        if abs(q) >= Fraction(2) ** (rbias + 1):
            return math.copysign(math.inf, f)
    if abs(q) >= Fraction(2) ** (1 << (e_w - 1)):
        return math.copysign(math.inf, f)
    if wide:
        src_emax = (1 << (e_src - 1)) - 1
        q = _round_to_format(q, m_src, 1 - src_emax, src_emax)
        if q is None:
            return math.copysign(math.inf, f)
    return math.copysign(float(q), f) if q == 0 else float(q)


@pytest.mark.parametrize("t", ["f16", "bf16", "f32", "f64", "f8E5M2", "f8E4M3", "f8E3M4"])
@settings(max_examples=8, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_reduce_precision(t, data):
    x = data.draw(arrays(t, 8))
    ebits = data.draw(st.integers(1, 11))
    mbits = data.draw(st.integers(0, 52))
    got = run_op("stablehlo.reduce_precision", [t], t, [x],
                 attrs=f"{{exponent_bits = {ebits} : i32, mantissa_bits = {mbits} : i32}}")
    want = np.array([_reduce_precision_oracle(v, t, ebits, mbits) for v in x])
    assert _same(got, want, t), (t, ebits, mbits, x, got, want)


def test_reduce_precision_f64_zero_mantissa_nan_is_inf():
    x = np.array([0x7FFFFFFFFFFFFFFF], dtype=np.uint64).view(np.float64)
    got = run_op("stablehlo.reduce_precision", ["f64"], "f64", [x],
                 attrs="{exponent_bits = 5 : i32, mantissa_bits = 0 : i32}")
    assert got.tolist() == [math.inf]


WIDE_INTS = ["i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"]


@settings(max_examples=40, deadline=None)
@given(src=st.sampled_from(WIDE_INTS), dst=st.sampled_from(WIDE_INTS),
       vals=st.lists(st.integers(-(1 << 63), (1 << 64) - 1), min_size=1, max_size=5))
def test_convert_between_wide_integers_wraps_as_the_general_path(src, dst, vals):
    """convert between 8..64-bit integers (numpy's astype, e.g. threefry's u64 -> u32) gives
    the value wrapped into the destination's width, as the general path (through a 64-bit
    integer and wrap_int) and two's complement define it."""
    from stablehlo_ref.interpreter.elementwise import _convert
    s, d = ET[src], ET[dst]
    x = np.array([v & ((1 << s.bits) - 1) for v in vals], dtype=np.uint64).astype(s.dtype)
    got = run_op("stablehlo.convert", [src], dst, [x])
    assert got.dtype == d.dtype and got.tobytes() == _convert(x, s, d).tobytes()

    def wrap(v, e):
        v &= (1 << e.bits) - 1
        return v - (1 << e.bits) if e.is_signed and v >> (e.bits - 1) else v
    assert got.tolist() == [wrap(int(v), d) for v in x.tolist()]


def test_a_run_computes_quietly_and_restores_the_callers_error_state():
    """Kernels compute with numpy's floating-point errors ignored (overflow to inf and NaN
    are results), whatever the caller's error state; the caller's state is back afterwards,
    also after a run that fails."""
    import stablehlo_ref
    src = """func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
      %0 = stablehlo.multiply %x, %x : tensor<2xf32>
      %1 = stablehlo.divide %0, %0 : tensor<2xf32>
      func.return %1 : tensor<2xf32>
    }"""
    m = stablehlo_ref.parse(src)
    with np.errstate(all="raise"):
        out = stablehlo_ref.run(m, np.array([3e38, 0.0], np.float32))[0]
        assert np.isnan(out).all()
        assert np.geterr()["over"] == "raise" and np.geterr()["invalid"] == "raise"
        bad = stablehlo_ref.parse("""func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
          %0 = stablehlo.custom_call @no_such_target(%x) : (tensor<2xf32>) -> tensor<2xf32>
          func.return %0 : tensor<2xf32>
        }""")
        with pytest.raises(stablehlo_ref.errors.StableHLOError):
            stablehlo_ref.run(bad, np.zeros(2, np.float32))
        assert np.geterr()["divide"] == "raise"


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(["stablehlo.negate", "stablehlo.floor", "stablehlo.ceil",
                        "stablehlo.round_nearest_even", "stablehlo.sqrt"]),
       st.sampled_from(["f16", "f32"]),
       st.lists(st.one_of(st.floats(allow_nan=False, width=32), st.sampled_from(
           [0.0, -0.0, np.inf, -np.inf, 1e-40, -1e-45, 6e-8, 65504.0, 0.5, -2.5, 3.5])),
           min_size=1, max_size=40))
def test_exact_unary_ops_in_the_type_match_the_general_kernel(name, et, values):
    """negate/floor/ceil/round_nearest_even/sqrt of f16/f32 arrays, which the specialized
    kernel computes in the type itself, give the general kernel's bits (through f64)."""
    import stablehlo_ref
    from stablehlo_ref.interpreter.registry import KERNELS, SPECIALIZERS
    dt = np.float16 if et == "f16" else np.float32
    with np.errstate(all="ignore"):
        x = np.array(values, dtype=np.float64).astype(dt)
    m = stablehlo_ref.parse(f"""func.func @main(%x: tensor<{x.size}x{et}>) -> tensor<{x.size}x{et}> {{
      %0 = "{name}"(%x) : (tensor<{x.size}x{et}>) -> tensor<{x.size}x{et}>
      func.return %0 : tensor<{x.size}x{et}>
    }}""")
    op = m.functions["main"].regions[0].blocks[0].operations[0]
    fast = SPECIALIZERS[name](op, [None])
    with np.errstate(all="ignore"):
        got = fast(None, op, x)
        want = KERNELS[name](None, op, x)
    assert got.dtype == want.dtype == dt
    assert np.array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    assert got[ok].tobytes() == want[ok].tobytes()
