"""CHLO legalization: rewrite `chlo.*` ops into StableHLO ops, as upstream's
`chlo-legalize-to-stablehlo` pass decomposes them (the same formulas, constants and
approximations, op for op), so that a program from `jax.jit(f).lower(...).as_text()` can be
written as a portable artifact, which no VHLO version can hold CHLO in.

`legalize_chlo(module)` rewrites the module in place and returns {op name: count} of what it
rewrote; an op it has no decomposition for, or a case of one it cannot handle (erf of integers;
`?` dimensions in top_k, constant_like, the broadcasting ops, scan, ragged_dot), raises NotImplementedOpError / LegalizationError
before anything changes (each rewrite is first tried into a scratch block).

Each decomposition is the one upstream picks for the element type: f64 operands of `erf`,
`erfc`, `erf_inv` and `bessel_i1e` take their own f64 approximations; f16 and bf16 operands of
the approximated ops are converted to f32, computed there and converted back.

Decomposed (real element types unless said):
- `broadcast_*` binary ops, `broadcast_compare` and `broadcast_select`: the StableHLO op on
  operands broadcast with `broadcast_in_dim` to the result shape (static shapes);
- `constant`, `constant_like`; `square` (real and complex); `conj` (real and complex);
  `is_inf`, `is_pos_inf`, `is_neg_inf`; `tan`; `atan`, `atanh`, `asin`, `acos`, `asinh`,
  `acosh` (real and complex: complex asin/acos/asinh/acosh through `_asin_acos_kernel`, which
  is itself rewritten, complex atan through atanh); `sinh`, `cosh` (real: in f32 at least;
  complex: the exponential form); `erf`, `erfc`, `erf_inv` (f16, bf16, f32:
  the f32 approximations; f64: Cephes' erf/erfc and Giles' f64 erf_inv); `bessel_i1e`
  (Cephes' Chebyshev series, f32 and f64 coefficient sets); `lgamma`, `digamma` (Lanczos, in
  f32 at least); `zeta` (Euler-Maclaurin, in f32 at least); `polygamma` (through `lgamma`,
  `zeta` and `digamma`, rewritten on the next round); `mulhi` (the product in twice the width,
  shifted; 64-bit from four 32-bit products); `next_after`; `top_k` (a sort with an iota,
  then slices)."""
from __future__ import annotations

import math
from typing import Callable, Dict, List

import numpy as np

from ..errors import NotImplementedOpError, StableHLOError
from ..ir.attributes import ArrayAttr, BoolAttr, DenseArrayAttr, DenseElementsAttr, EnumAttr, IntegerAttr, StructAttr
from ..ir.core import Block, Module, Operation, Region, Value
from ..ir.types import ElementType, TensorType, element_type

_I64 = element_type("i64")
_I32 = element_type("i32")
_I1 = element_type("i1")
_F32 = element_type("f32")

# the Lanczos approximation upstream uses for lgamma and digamma (g = 7, n = 9)
_LANCZOS_G = 7.0
_LANCZOS_BASE = 0.99999999999980993227684700473478
_LANCZOS = (676.520368121885098567009190444019, -1259.13921672240287047156078755283,
            771.3234287776530788486528258894, -176.61502916214059906584551354,
            12.507343278686904814458936853, -0.13857109526572011689554707,
            9.984369578019570859563e-6, 1.50563273514931155834e-7)


class LegalizationError(StableHLOError):
    """A CHLO op whose operands the legalization cannot handle (e.g. dynamic shapes)."""


class _Builder:
    """Creates StableHLO ops before `anchor` in its block, located where it is."""

    def __init__(self, block: Block, index: int, location, dry: bool = False):
        self.block = block
        self.index = index
        self.location = location
        self.dry = dry          # a trial run into a scratch block: rewrites must not touch the op

    def op(self, name, operands, result_types, attributes=None, regions=None) -> Operation:
        o = Operation(name, operands, result_types, attributes or {}, regions or [], self.location)
        self.block.operations.insert(self.index, o)
        self.index += 1
        return o

    def one(self, name, operands, rtype=None, **attrs) -> Value:
        return self.op(name, list(operands), [rtype or operands[0].type], attrs).results[0]

    # ------------------------------------------------------------ helpers
    def const(self, value, like: Value, et: ElementType = None) -> Value:
        """A constant of `like`'s shape; where that has `?` dimensions, a scalar constant
        broadcast with dynamic_broadcast_in_dim to `like`'s runtime shape (as upstream's
        getConstantLike does through shape_of)."""
        t = like.type
        et = et or t.element_type
        dynamic = any(d is None for d in t.shape)
        shape = () if dynamic else tuple(t.shape)
        arr = np.full(shape, value, dtype=np.float64 if et.is_float else None)
        if et.is_complex:
            arr = np.full(shape, value, dtype=et.dtype)
        arr = arr.astype(et.dtype) if not et.is_bool else arr.astype(bool)
        rt = TensorType(shape, et)
        c = self.op("stablehlo.constant", [], [rt], {"value": DenseElementsAttr(rt, arr)}).results[0]
        if not dynamic:
            return c
        return self.op("stablehlo.dynamic_broadcast_in_dim", [c, self.shape_of(like)],
                       [TensorType(tuple(t.shape), et)],
                       {"broadcast_dimensions": DenseArrayAttr(_I64, ())}).results[0]

    def shape_of(self, x: Value) -> Value:
        """tensor<rank x i32> holding x's runtime shape (get_dimension_size for `?` dimensions),
        computed once per rewrite for each static type shape: the values of one elementwise
        decomposition all have its operand's runtime shape."""
        cache = self.__dict__.setdefault("_shapes", {})
        key = tuple(x.type.shape)
        if key in cache:
            return cache[key]
        one = TensorType((1,), _I32)
        parts = []
        for d, n in enumerate(x.type.shape):
            if n is None:
                size = self.op("stablehlo.get_dimension_size", [x], [TensorType((), _I32)],
                               {"dimension": IntegerAttr(d, _I64)}).results[0]
                parts.append(self.one("stablehlo.reshape", [size], one))
            else:
                parts.append(self.op("stablehlo.constant", [], [one],
                                     {"value": DenseElementsAttr(one, np.array([n], np.int32))}).results[0])
        rank = len(x.type.shape)
        out = parts[0] if rank == 1 else self.op("stablehlo.concatenate", parts, [TensorType((rank,), _I32)],
                                                 {"dimension": IntegerAttr(0, _I64)}).results[0]
        cache[key] = out
        return out

    def like(self, x: Value, et: ElementType) -> TensorType:
        return TensorType(tuple(x.type.shape), et)

    def cmp(self, a, b, direction, ctype=None) -> Value:
        attrs = {"comparison_direction": EnumAttr("stablehlo", "comparison_direction", direction)}
        if ctype:
            attrs["compare_type"] = EnumAttr("stablehlo", "comparison_type", ctype)
        return self.op("stablehlo.compare", [a, b], [self.like(a, _I1)], attrs).results[0]

    def select(self, p, a, b) -> Value:
        return self.one("stablehlo.select", [p, a, b], a.type)

    def convert(self, x, et) -> Value:
        return self.one("stablehlo.convert", [x], self.like(x, et))

    def bitcast(self, x, et) -> Value:
        return self.one("stablehlo.bitcast_convert", [x], self.like(x, et))

    def __getattr__(self, name):
        # b.add(x, y), b.exp(x), ...: the elementwise StableHLO op of that name
        ops = {"add": "add", "sub": "subtract", "mul": "multiply", "div": "divide", "neg": "negate",
               "abs": "abs", "exp": "exponential", "expm1": "exponential_minus_one", "log": "log",
               "log1p": "log_plus_one", "sqrt": "sqrt", "floor": "floor", "sin": "sine", "cos": "cosine",
               "tan": "tan", "atan2": "atan2", "sign": "sign", "and_": "and", "or_": "or",
               "clamp": "clamp", "rem": "remainder", "pow": "power", "sra": "shift_right_arithmetic",
               "srl": "shift_right_logical", "max": "maximum", "min": "minimum", "not_": "not", "real": None, "imag": None, "is_finite": None}
        if name not in ops or ops[name] is None:
            raise AttributeError(name)
        full = "stablehlo." + ops[name]

        def make(*xs):
            t = xs[1].type if name == "clamp" else xs[0].type
            return self.one(full, list(xs), t)
        return make

    def is_finite(self, x) -> Value:
        return self.one("stablehlo.is_finite", [x], self.like(x, _I1))

    def part(self, name, z) -> Value:
        et = element_type("f32" if z.type.element_type.name == "complex<f32>" else "f64")
        return self.one(f"stablehlo.{name}", [z], self.like(z, et))

    def poly(self, x, coefficients) -> Value:
        p = self.const(coefficients[0], x)
        for c in coefficients[1:]:
            p = self.add(self.mul(p, x), self.const(c, x))
        return p


def _et(v: Value) -> ElementType:
    return v.type.element_type


def _upcast(b: _Builder, xs, fn, minimum=_F32):
    """Runs `fn` on the operands converted to at least `minimum` (f16, bf16 -> f32), and
    converts its result back."""
    et = _et(xs[0])
    if et.is_float and et.bits < minimum.bits:
        out = fn(b, *[b.convert(x, minimum) for x in xs])
        return b.convert(out, et)
    return fn(b, *xs)


def _by_width(f32_fn, f64_fn=None):
    """f64 operands take `f64_fn` (when given), the others run `f32_fn` in f32 at least, as
    upstream's materializeWithUpcast does."""
    def fn(b, *xs):
        if f64_fn is not None and _et(xs[0]).bits == 64:
            return f64_fn(b, *xs)
        return _upcast(b, list(xs), f32_fn)
    return fn


# ------------------------------------------------------------------ decompositions

def _erf_le_one_f32(b, x):
    xsq = b.mul(x, x)
    t = b.poly(xsq, (+7.853861353153693E-5, -8.010193625184903E-4, +5.188327685732524E-3,
                     -2.685381193529856E-2, +1.128358514861418E-1, -3.761262582423300E-1,
                     +1.128379165726710E+0))
    return b.mul(x, t)


def _erfc_ge_one_f32(b, x):
    xsq = b.mul(x, x)
    z = b.neg(xsq)
    ax = b.abs(x)
    one = b.const(1.0, x)
    rxsq = b.div(one, xsq)
    e = b.mul(b.exp(z), b.div(one, ax))
    two = b.const(2.0, x)
    p = b.poly(rxsq, (+2.326819970068386E-2, -1.387039388740657E-1, +3.687424674597105E-1,
                      -5.824733027278666E-1, +6.210004621745983E-1, -4.944515323274145E-1,
                      +3.404879937665872E-1, -2.741127028184656E-1, +5.638259427386472E-1))
    r = b.poly(rxsq, (-1.047766399936249E+1, +1.297719955372516E+1, -7.495518717768503E+0,
                      +2.921019019210786E+0, -1.015265279202700E+0, +4.218463358204948E-1,
                      -2.820767439740514E-1, +5.641895067754075E-1))
    approx = b.mul(e, b.select(b.cmp(ax, two, "LT"), p, r))
    zero = b.const(0.0, x)
    clamped = b.select(b.cmp(z, b.const(-88.72283905206835, x), "LT"), zero, approx)
    return b.select(b.cmp(x, zero, "LT"), b.sub(two, clamped), clamped)


def _erf_f32(b, x):
    x = b.clamp(b.const(-4.0, x), x, b.const(4.0, x))
    xsq = b.mul(x, x)
    alpha = b.poly(xsq, (-2.72614225801306e-10, 2.77068142495902e-08, -2.10102402082508e-06,
                         -5.69250639462346e-05, -7.34990630326855e-04, -2.95459980854025e-03,
                         -1.60960333262415e-02))
    beta = b.poly(xsq, (-1.45660718464996e-05, -2.13374055278905e-04, -1.68282697438203e-03,
                        -7.37332916720468e-03, -1.42647390514189e-02))
    erf = b.div(b.mul(x, alpha), beta)
    return b.clamp(b.const(-1.0, x), erf, b.const(1.0, x))


def _erfc_f32(b, x):
    one = b.const(1.0, x)
    ge = _erfc_ge_one_f32(b, x)
    le = b.sub(one, _erf_le_one_f32(b, x))
    return b.select(b.cmp(b.abs(x), one, "LT"), le, ge)


def _erf_inv_f32(b, x):
    lt5 = (2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06, 0.00021858087,
           -0.00125372503, -0.00417768164, 0.246640727, 1.50140941)
    ge5 = (-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
           -0.0076224613, 0.00943887047, 1.00167406, 2.83297682)
    w = b.neg(b.log1p(b.mul(x, b.neg(x))))
    lt = b.cmp(w, b.const(5.0, x), "LT")
    w = b.select(lt, b.sub(w, b.const(2.5, x)), b.sub(b.sqrt(w), b.const(3.0, x)))

    def coefficient(i):
        return b.select(lt, b.const(lt5[i], x), b.const(ge5[i], x))
    p = coefficient(0)
    for i in range(1, 9):
        p = b.add(coefficient(i), b.mul(p, w))
    result = b.mul(p, x)
    return b.select(b.cmp(b.abs(x), b.const(1.0, x), "EQ"), b.mul(x, b.const(math.inf, x)), result)


def _lanczos_z(b, x):
    half = b.const(0.5, x)
    reflect = b.cmp(x, half, "LT")
    one = b.const(1.0, x)
    z = b.select(reflect, b.neg(x), b.sub(x, one))
    return half, one, reflect, z


def _log_t(b, x, z):
    lph = b.const(_LANCZOS_G + 0.5, x)
    t = b.add(lph, z)
    log_t = b.add(b.const(math.log(_LANCZOS_G + 0.5), x), b.log1p(b.div(z, lph)))
    return t, log_t


def _lgamma(b, x):
    half, one, reflect, z = _lanczos_z(b, x)
    a = b.const(_LANCZOS_BASE, x)
    for i, c in enumerate(_LANCZOS):
        a = b.add(a, b.div(b.const(c, x), b.add(z, b.const(i + 1, x))))
    t, log_t = _log_t(b, x, z)
    r = b.mul(b.sub(b.add(z, half), b.div(t, log_t)), log_t)
    lg = b.add(b.add(b.const((math.log(2) + math.log(math.pi)) / 2, x), r), b.log(a))
    ax = b.abs(x)
    frac = b.sub(ax, b.floor(ax))
    frac = b.select(b.cmp(half, frac, "LT"), b.sub(one, frac), frac)
    denom = b.log(b.sin(b.mul(b.const(math.pi, x), frac)))
    refl = b.sub(b.sub(b.const(math.log(math.pi), x), denom), lg)
    refl = b.select(b.is_finite(denom), refl, b.neg(denom))
    lg = b.select(reflect, refl, lg)
    is_inf = b.cmp(b.abs(x), b.const(math.inf, x), "EQ")
    return b.select(is_inf, b.const(math.inf, x), lg)


def _digamma(b, x):
    half, one, reflect, z = _lanczos_z(b, x)
    zero = b.const(0.0, x)
    a = b.const(_LANCZOS_BASE, x)
    ap = zero
    for i, c in enumerate(_LANCZOS):
        zt = b.add(z, b.const(i + 1, x))
        ap = b.sub(ap, b.div(b.const(c, x), b.mul(zt, zt)))
        a = b.add(a, b.div(b.const(c, x), zt))
    t, log_t = _log_t(b, x, z)
    dg = b.sub(b.add(log_t, b.div(ap, a)), b.div(b.const(_LANCZOS_G, x), t))
    reduced = b.add(x, b.abs(b.floor(b.add(x, b.const(0.5, x)))))
    pi = b.const(math.pi, x)
    prx = b.mul(pi, reduced)
    refl = b.sub(dg, b.div(b.mul(pi, b.cos(prx)), b.sin(prx)))
    dg = b.select(reflect, refl, dg)
    pole = b.and_(b.cmp(x, zero, "LE"), b.cmp(x, b.floor(x), "EQ"))
    return b.select(pole, b.const(math.nan, x), dg)


def _cosh(b, x):
    lh = b.log(b.const(0.5, x))
    return b.add(b.exp(b.add(x, lh)), b.exp(b.sub(lh, x)))


def _sinh(b, x):
    lh = b.log(b.const(0.5, x))
    large = b.sub(b.exp(b.add(x, lh)), b.exp(b.sub(lh, x)))
    em1 = b.expm1(x)
    one = b.const(1.0, x)
    small = b.mul(b.const(0.5, x), b.add(em1, b.div(em1, b.add(em1, one))))
    return b.select(b.cmp(b.abs(x), one, "LT"), small, large)


def _next_after(b, x, y):
    et = _et(x)
    bits = et.bits
    it = element_type(f"i{bits}")
    xi, yi = b.bitcast(x, it), b.bitcast(y, it)
    nan_in = b.or_(b.cmp(x, x, "NE"), b.cmp(y, y, "NE"))
    nan_i = b.bitcast(b.const(math.nan, x), it)
    sign = b.const(-(1 << (bits - 1)), xi)
    nsign = b.const((1 << (bits - 1)) - 1, xi)
    xa, ya = b.and_(xi, nsign), b.and_(yi, nsign)
    equal = b.cmp(x, y, "EQ")
    zero = b.const(0, xi)
    x0, y0 = b.cmp(xa, zero, "EQ"), b.cmp(ya, zero, "EQ")
    xs, ys = b.and_(xi, sign), b.and_(yi, sign)
    one = b.const(1, xi)
    x_zero_result = b.or_(ys, one)
    smaller = b.or_(b.cmp(xa, ya, "GT"), b.cmp(xs, ys, "NE"))
    r = b.add(xi, b.select(smaller, b.const(-1, xi), one))
    r = b.select(x0, b.select(y0, yi, x_zero_result), r)
    r = b.select(equal, yi, r)
    r = b.select(nan_in, nan_i, r)
    return b.bitcast(r, et)


def _real_only(op, x):
    if _et(x).is_complex:
        raise NotImplementedOpError(op.name, "legalization on complex numbers")


def _unary(fn, check=None, upcast=False):
    def rewrite(b, op):
        x = op.operands[0]
        if check:
            check(op, x)
        return [_upcast(b, [x], fn) if upcast else fn(b, x)]
    return rewrite


def _square(b, op):
    z = op.operands[0]
    if not _et(z).is_complex:
        return [b.mul(z, z)]
    x, y = b.part("real", z), b.part("imag", z)
    re = b.select(b.and_(b.is_finite(x), b.cmp(b.abs(x), b.abs(y), "EQ")), b.const(0.0, x),
                  b.mul(b.sub(x, y), b.add(x, y)))
    im = b.mul(b.const(2.0, x), b.mul(x, y))
    return [b.one("stablehlo.complex", [re, im], z.type)]


def _conj(b, op):
    z = op.operands[0]
    if not _et(z).is_complex:
        return [z]
    return [b.one("stablehlo.complex", [b.part("real", z), b.neg(b.part("imag", z))], z.type)]


def _is_pos_inf(b, x):
    return b.cmp(x, b.const(math.inf, x), "EQ")


def _bool(fn):
    def rewrite(b, op):
        x = op.operands[0]
        _real_only(op, x)
        return [fn(b, x)]
    return rewrite


def _asin(b, x):
    one = b.const(1.0, x)
    ta = b.atan2(x, b.add(one, b.sqrt(b.mul(b.sub(one, x), b.add(one, x)))))
    return b.add(ta, ta)


def _acos(b, x):
    one = b.const(1.0, x)
    return b.atan2(b.sqrt(b.mul(b.sub(one, x), b.add(one, x))), x)


def _acosh(b, x):
    two = b.const(2.0, x)
    one = b.const(1.0, x)
    big = b.cmp(x, b.div(b.const(float(_finfo(_et(x).dtype).max), x), two), "GE")
    s = b.sqrt(b.sub(x, one))
    return b.select(big, b.add(b.log(two), b.log(x)), b.log1p(b.mul(s, b.add(b.sqrt(b.add(x, one)), s))))


def _asinh(b, x):
    ax = b.abs(x)
    one = b.const(1.0, x)
    big = b.cmp(ax, b.sqrt(b.const(float(_finfo(_et(x).dtype).max), x)), "GE")
    ax2 = b.mul(ax, ax)
    small = b.log1p(b.add(ax, b.div(ax2, b.add(one, b.sqrt(b.add(one, ax2))))))
    return b.mul(b.sign(x), b.select(big, b.add(b.log(b.const(2.0, x)), b.log(ax)), small))


def _atanh(b, x):
    one = b.const(1.0, x)
    v = b.mul(b.sub(b.log1p(x), b.log1p(b.neg(x))), b.const(0.5, x))
    return b.select(b.cmp(b.abs(x), one, "GT"), b.const(math.nan, x), v)


def _top_k(b, op):
    x = op.operands[0]
    t = x.type
    if any(d is None for d in t.shape):
        raise LegalizationError("CHLO legalization: chlo.top_k of dynamic shape is not supported")
    rank = len(t.shape)
    k = int(op.attributes["k"].value)
    last = rank - 1
    keep = min(k, t.shape[last])
    stable = op.attributes.get("is_stable")
    it = TensorType(tuple(t.shape), _I32)
    iota = b.op("stablehlo.iota", [], [it], {"iota_dimension": IntegerAttr(last, _I64)}).results[0]
    et = t.element_type
    blk = Block([TensorType((), et), TensorType((), et), TensorType((), _I32), TensorType((), _I32)])
    inner = _Builder(blk, 0, op.location)
    ctype = "TOTALORDER" if et.is_float else None
    c = inner.cmp(blk.arguments[0], blk.arguments[1], "GT", ctype)
    inner.op("stablehlo.return", [c], [])
    sort = b.op("stablehlo.sort", [x, iota], [t, it],
                {"dimension": IntegerAttr(last, _I64),
                 "is_stable": BoolAttr(bool(stable.value) if stable is not None else True)},
                [Region([blk])])
    blk.parent = sort.regions[0]
    limit = list(t.shape)
    limit[last] = keep
    attrs = {"start_indices": DenseArrayAttr(_I64, (0,) * rank), "limit_indices": DenseArrayAttr(_I64, tuple(limit)),
             "strides": DenseArrayAttr(_I64, (1,) * rank)}
    return [b.op("stablehlo.slice", [sort.results[0]], [op.results[0].type], attrs).results[0],
            b.op("stablehlo.slice", [sort.results[1]], [op.results[1].type], attrs).results[0]]


def _constant(b, op):
    return [b.op("stablehlo.constant", [], [op.results[0].type], {"value": op.attributes["value"]}).results[0]]


def _constant_like(b, op):
    v = op.attributes["value"]
    rt = op.results[0].type
    if any(d is None for d in rt.shape):
        raise LegalizationError("CHLO legalization: chlo.constant_like of dynamic shape is not supported")
    scalar = np.asarray(v.array).reshape(-1)[0] if hasattr(v, "array") else v.value
    arr = np.full(tuple(rt.shape), scalar).astype(rt.element_type.dtype)
    return [b.op("stablehlo.constant", [], [rt], {"value": DenseElementsAttr(rt, arr)}).results[0]]


_BROADCAST = {f"chlo.broadcast_{n}": f"stablehlo.{s}" for n, s in (
    ("add", "add"), ("and", "and"), ("atan2", "atan2"), ("complex", "complex"), ("divide", "divide"),
    ("maximum", "maximum"), ("minimum", "minimum"), ("multiply", "multiply"), ("next_after", "chlo.next_after"),
    ("or", "or"), ("power", "power"), ("remainder", "remainder"), ("shift_left", "shift_left"),
    ("shift_right_arithmetic", "shift_right_arithmetic"), ("shift_right_logical", "shift_right_logical"),
    ("subtract", "subtract"), ("xor", "xor"), ("compare", "compare"), ("select", "select"),
    ("polygamma", "chlo.polygamma"), ("zeta", "chlo.zeta"))}
_BROADCAST = {k: v.replace("stablehlo.chlo.", "chlo.") for k, v in _BROADCAST.items()}


def _broadcast_binary(b, op):
    rt = op.results[0].type
    if any(d is None for d in rt.shape) or any(d is None for v in op.operands for d in v.type.shape):
        raise LegalizationError(f"CHLO legalization: {op.name} with dynamic shapes is not supported")
    target = _BROADCAST[op.name]
    rank = len(rt.shape)
    bd = op.attributes.get("broadcast_dimensions")
    ins = []
    for v in op.operands:
        r = len(v.type.shape)
        if bd is not None and r != rank and len(bd.values) == r:
            dims = tuple(int(d) for d in bd.values)
        else:
            dims = tuple(range(rank - r, rank))
        if tuple(v.type.shape) == tuple(rt.shape):
            ins.append(v)
        else:
            ins.append(b.op("stablehlo.broadcast_in_dim", [v], [TensorType(tuple(rt.shape), v.type.element_type)],
                            {"broadcast_dimensions": DenseArrayAttr(_I64, dims)}).results[0])
    attrs = {}
    if target == "stablehlo.compare":
        d = op.attributes["comparison_direction"]
        attrs["comparison_direction"] = EnumAttr("stablehlo", "comparison_direction", d.value)
        ct = op.attributes.get("compare_type")
        if ct is not None:
            attrs["compare_type"] = EnumAttr("stablehlo", "comparison_type", ct.value)
    if target.startswith("chlo."):
        # an elementwise CHLO op, itself legalized on the next round
        return [b.op(target, ins, [rt], attrs).results[0]]
    return [b.op(target, ins, [rt], attrs).results[0]]


def _next_after_op(b, op):
    x, y = op.operands
    _real_only(op, x)
    return [_next_after(b, x, y)]


# f64 erf / erfc / erf_inv (Cephes' rational approximations, as upstream uses for f64)
_ERFC_P64 = (2.46196981473530512524E-10, 5.64189564831068821977E-1, 7.46321056442269912687E0,
             4.86371970985681366614E1, 1.96520832956077098242E2, 5.26445194995477358631E2,
             9.34528527171957607540E2, 1.02755188689515710272E3, 5.57535335369399327526E2)
_ERFC_Q64 = (1.0, 1.32281951154744992508E1, 8.67072140885989742329E1, 3.54937778887819891062E2,
             9.75708501743205489753E2, 1.82390916687909736289E3, 2.24633760818710981792E3,
             1.65666309194161350182E3, 5.57535340817727675546E2)
_ERFC_R64 = (5.64189583547755073984E-1, 1.27536670759978104416E0, 5.01905042251180477414E0,
             6.16021097993053585195E0, 7.40974269950448939160E0, 2.97886665372100240670E0)
_ERFC_S64 = (1.0, 2.26052863220117276590E0, 9.39603524938001434673E0, 1.20489539808096656605E1,
             1.70814450747565897222E1, 9.60896809063285878198E0, 3.36907645100081516050E0)
_ERF_T64 = (9.60497373987051638749E0, 9.00260197203842689217E1, 2.23200534594684319226E3,
            7.00332514112805075473E3, 5.55923013010394962768E4)
_ERF_U64 = (1.0, 3.35617141647503099647E1, 5.21357949780152679795E2, 4.59432382970980127987E3,
            2.26290000613890934246E4, 4.92673942608635921086E4)
_MAXLOG_F64 = 7.09782712893383996843E2


def _erfc_ge_one_f64(b, x):
    z = b.neg(b.mul(x, x))
    ez = b.exp(z)
    ax = b.abs(x)
    mid = b.div(b.mul(ez, b.poly(ax, _ERFC_P64)), b.poly(ax, _ERFC_Q64))
    tail = b.div(b.mul(ez, b.poly(ax, _ERFC_R64)), b.poly(ax, _ERFC_S64))
    approx = b.select(b.cmp(ax, b.const(8.0, x), "LT"), mid, tail)
    zero = b.const(0.0, x)
    approx = b.select(b.cmp(z, b.const(-_MAXLOG_F64, x), "LT"), zero, approx)
    return b.select(b.cmp(x, zero, "LT"), b.sub(b.const(2.0, x), approx), approx)


def _erf_le_one_f64(b, x):
    xsq = b.mul(x, x)
    return b.div(b.mul(x, b.poly(xsq, _ERF_T64)), b.poly(xsq, _ERF_U64))


def _erf_f64(b, x):
    one = b.const(1.0, x)
    return b.select(b.cmp(b.abs(x), one, "LT"), _erf_le_one_f64(b, x), b.sub(one, _erfc_ge_one_f64(b, x)))


def _erfc_f64(b, x):
    one = b.const(1.0, x)
    return b.select(b.cmp(b.abs(x), one, "LT"), b.sub(one, _erf_le_one_f64(b, x)), _erfc_ge_one_f64(b, x))


# Giles' f64 erf_inv: one polynomial per range of w = -log(1 - x^2) (< 6.25, < 16, >= 16),
# the shorter two sharing the tail of the longest's Horner scheme
_ERFINV_W625 = (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
                1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
                6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
                2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
                1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
                4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
                0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
                0.24015818242558961693, 1.6536545626831027356)
_ERFINV_W16 = (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
               1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
               2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
               6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
               0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
               -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334,
               3.0838856104922207635)
_ERFINV_WBIG = (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
                -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
                2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
                -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
                7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
                1.0103004648645343977, 4.8499064014085844221)


def _erf_inv_f64(b, x):
    w = b.neg(b.log1p(b.mul(x, b.neg(x))))
    lt625 = b.cmp(w, b.const(6.25, x), "LT")
    lt16 = b.cmp(w, b.const(16.0, x), "LT")

    def coefficient(i):
        c = b.const(_ERFINV_W625[i], x)
        if i < len(_ERFINV_W16):
            c = b.select(lt625, c, b.const(_ERFINV_W16[i], x))
        if i < len(_ERFINV_WBIG):
            c = b.select(lt16, c, b.const(_ERFINV_WBIG[i], x))
        return c
    shifted = b.sub(b.sqrt(w), b.select(lt16, b.const(3.25, x), b.const(5.0, x)))
    w = b.select(lt625, b.sub(w, b.const(3.125, x)), shifted)
    p = coefficient(0)
    for i in range(1, len(_ERFINV_WBIG)):
        p = b.add(coefficient(i), b.mul(p, w))
    for i in range(len(_ERFINV_WBIG), len(_ERFINV_W16)):
        p = b.select(lt16, b.add(coefficient(i), b.mul(p, w)), p)
    for i in range(len(_ERFINV_W16), len(_ERFINV_W625)):
        p = b.select(lt625, b.add(coefficient(i), b.mul(p, w)), p)
    result = b.mul(p, x)
    return b.select(b.cmp(b.abs(x), b.const(1.0, x), "EQ"), b.mul(x, b.const(math.inf, x)), result)


# bessel_i1e: Cephes' Chebyshev series for |x| <= 8 and for |x| > 8 (in 32/|x| - 2)
_I1E_A64 = (2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
            -1.10559694773538630805E-15, 7.60068429473540693410E-15, -5.04218550472791168711E-14,
            3.22379336594557470981E-13, -1.98397439776494371520E-12, 1.17361862988909016308E-11,
            -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9)
_I1E_A = (9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
          -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
          4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
          -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
          2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
          -1.76416518357834055153E-1, 2.52587186443633654823E-1)
_I1E_B64 = (7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
            -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
            -1.88035477551078244854E-15, -3.81440307243700780478E-15, 1.04202769841288027642E-14,
            4.27244001671195135429E-14, -2.10154184277266431302E-14, -4.08355111109219731823E-13,
            -7.19855177624590851209E-13, 2.03562854414708950722E-12, 1.41258074366137813316E-11,
            3.25260358301548823856E-11, -1.89749581235054123450E-11, -5.58974346219658380687E-10)
_I1E_B = (-3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
          -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
          7.78576235018280120474E-1)


def _chebyshev(b, x, coefficients):
    b0 = b1 = b2 = b.const(0.0, x)
    for c in coefficients:
        b2, b1 = b1, b0
        b0 = b.add(b.sub(b.mul(x, b1), b2), b.const(c, x))
    return b.mul(b.sub(b0, b2), b.const(0.5, x))


def _bessel_i1e_with(a, bb):
    def fn(b, x):
        z = b.abs(x)
        two = b.const(2.0, x)
        small = b.mul(z, _chebyshev(b, b.sub(b.mul(b.const(0.5, x), z), two), a))
        large = b.div(_chebyshev(b, b.sub(b.div(b.const(32.0, x), z), two), bb), b.sqrt(z))
        return b.mul(b.sign(x), b.select(b.cmp(z, b.const(8.0, x), "LE"), small, large))
    return fn


_bessel_i1e = _by_width(_bessel_i1e_with(_I1E_A, _I1E_B),
                        _bessel_i1e_with(_I1E_A64 + _I1E_A, _I1E_B64 + _I1E_B))

# zeta: the Euler-Maclaurin form of Johansson's paper (formula 5) that XLA uses: 9 direct
# terms, then 12 Bernoulli terms in Horner form
_ZETA_COEFFS = (-7.1661652561756670113e18, 1.8152105401943546773e17, -4.5979787224074726105e15,
                1.1646782814350067249e14, -2.950130727918164224e12, 7.47242496e10,
                -1.8924375803183791606e9, 47900160.0, -1209600.0, 30240.0, -720.0, 12.0)


def _zeta_upcast(b, x, q):
    zero, one = b.const(0.0, q), b.const(1.0, q)
    neg_x = b.neg(x)
    acc = q
    power_sum = b.pow(q, neg_x)
    for _ in range(9):
        acc = b.add(acc, one)
        power_sum = b.add(power_sum, b.pow(acc, neg_x))
    acc = b.add(acc, one)
    q_neg_power = b.pow(acc, neg_x)
    correction = b.div(b.mul(q_neg_power, acc), b.sub(x, one))
    inv_acc_sq = b.div(one, b.mul(acc, acc))
    n = len(_ZETA_COEFFS)
    horner = zero
    for i in range(n - 1):
        factor = b.mul(b.add(x, b.const(2 * n - 2 - 2 * i, x)), b.add(x, b.const(2 * n - 3 - 2 * i, x)))
        horner = b.mul(factor, b.mul(inv_acc_sq, b.add(horner, b.const(1.0 / _ZETA_COEFFS[i], x))))
    tail = b.mul(q_neg_power, b.add(b.const(0.5, x),
                                    b.mul(b.div(x, acc), b.add(b.const(1.0 / _ZETA_COEFFS[-1], x), horner))))
    accurate = b.add(b.add(power_sum, correction), tail)
    tiny = float(_finfo(_et(x).dtype).smallest_subnormal)
    out = b.select(b.cmp(b.abs(q_neg_power), b.mul(b.abs(power_sum), b.const(tiny, x)), "LT"),
                   power_sum, accurate)
    nan, inf = b.const(math.nan, x), b.const(math.inf, x)
    out = b.select(b.cmp(x, one, "LT"), nan, out)
    q_le_zero = b.cmp(q, zero, "LE")
    x_int = b.cmp(x, b.floor(x), "EQ")
    out = b.select(b.and_(q_le_zero, b.cmp(x, b.floor(x), "NE")), nan, out)
    at_pole = b.and_(q_le_zero, b.cmp(q, b.floor(q), "EQ"))
    even = b.and_(x_int, b.cmp(b.rem(x, b.const(2.0, x)), zero, "EQ"))
    out = b.select(at_pole, b.select(even, inf, nan), out)
    return b.select(b.cmp(x, one, "EQ"), inf, out)


_zeta = _by_width(_zeta_upcast)


def _polygamma_upcast(b, n, x):
    one, two, zero = b.const(1.0, x), b.const(2.0, x), b.const(0.0, x)
    sign = b.sub(b.mul(two, b.rem(n, two)), one)
    n1 = b.add(n, one)
    fact = b.exp(b.one("chlo.lgamma", [n1]))
    result = b.mul(b.mul(sign, fact), b.one("chlo.zeta", [n1, x]))
    result = b.select(b.cmp(n, zero, "EQ"), b.one("chlo.digamma", [x]), result)
    not_natural = b.or_(b.cmp(n, b.floor(n), "NE"), b.cmp(n, zero, "LT"))
    return b.select(not_natural, b.const(math.nan, x), result)


_polygamma = _by_width(_polygamma_upcast)


def _int_type(et, bits=None, unsigned=None):
    bits = bits or et.bits
    unsigned = et.is_unsigned if unsigned is None else unsigned
    return element_type(f"{'ui' if unsigned else 'i'}{bits}")


def _mulhi(b, x, y):
    et = _et(x)
    w = et.bits
    if w < 64:                          # the product in twice the width, shifted down
        wide = _int_type(et, 2 * w)
        p = b.mul(b.convert(x, wide), b.convert(y, wide))
        shift = b.const(w, p)
        return b.convert(b.srl(p, shift) if et.is_unsigned else b.sra(p, shift), et)
    if et.is_unsigned:                  # 64 x 64 bits from four 32 x 32 bit products
        c32 = b.const(32, x)
        low = b.const(0xFFFFFFFF, x)
        a_hi, b_hi = b.srl(x, c32), b.srl(y, c32)
        a_lo, b_lo = b.and_(x, low), b.and_(y, low)
        mid1 = b.add(b.mul(a_lo, b_hi), b.srl(b.mul(a_lo, b_lo), c32))
        mid2 = b.add(b.mul(a_hi, b_lo), b.and_(mid1, low))
        return b.add(b.add(b.mul(a_hi, b_hi), b.srl(mid1, c32)), b.srl(mid2, c32))
    # signed 64 bits: the unsigned high half, less the other operand for each negative one
    u = _int_type(et, unsigned=True)
    ux, uy = b.convert(x, u), b.convert(y, u)
    hi = b.one("chlo.mulhi", [ux, uy])
    zero_s, zero_u = b.const(0, x), b.const(0, ux)
    hi = b.sub(hi, b.select(b.cmp(x, zero_s, "LT"), uy, zero_u))
    hi = b.sub(hi, b.select(b.cmp(y, zero_s, "LT"), ux, zero_u))
    return b.convert(hi, et)


def _float_only(what):
    def check(op, *xs):
        et = _et(xs[0])
        if not et.is_float:
            raise NotImplementedOpError(op.name, f"legalization of {what} on {et.name}")
    return check


def _nary(fn, check=None):
    def rewrite(b, op):
        if check:
            check(op, *op.operands)
        return [fn(b, *op.operands)]
    return rewrite


# ------------------------------------------------------------------ complex inverse functions
# Upstream's generated patterns (functional_algorithms): asin, acos, asinh, acosh of complex z
# go through chlo._asin_acos_kernel(z) = w, the modified Hull et al. algorithm, with
#   asin(z) = complex(atan2(re z, re w), sign(im z) im w), acos(z) = complex(atan2(re w, re z),
#   -sign(im z) im w), acosh(z) = complex(im w, sign(im z) atan2(re w, re z)),
#   asinh(z) = complex(sign(re z) im w', atan2(im z, re w')) with w' = kernel(i z);
# atan(z) = -i atanh(i z), and atanh has its own safe-region formula.

def _max_finite(x) -> float:
    return float(_finfo(_et(x).dtype).max)


def _hypot(b, a, c):
    """hypot(a, c) for a, c >= 0 as the generated patterns compute it."""
    one, zero = b.const(1.0, a), b.const(0.0, a)
    mx, mn = b.max(a, c), b.min(a, c)
    ratio = b.div(mn, mx)
    r2 = b.mul(ratio, ratio)
    sqa = b.sqrt(b.add(one, r2))
    refined = b.add(mx, b.div(b.mul(mx, r2), b.const(2.0, a)))
    general = b.select(b.and_(b.cmp(sqa, one, "EQ"), b.cmp(r2, zero, "GT")), refined, b.mul(mx, sqa))
    return b.select(b.cmp(mx, mn, "EQ"), b.mul(b.const(math.sqrt(2.0), a), mx), general)


def _asin_acos_kernel(b, z):
    sx, sy = b.part("real", z), b.part("imag", z)
    x, y = b.abs(sx), b.abs(sy)
    one, half, two, zero = b.const(1.0, sx), b.const(0.5, sx), b.const(2.0, sx), b.const(0.0, sx)
    safe_max = b.div(b.sqrt(b.const(_max_finite(sx), sx)), b.const(8.0, sx))
    xp1, xm1 = b.add(x, one), b.sub(x, one)
    r = _hypot(b, b.abs(xp1), y)
    s = _hypot(b, b.abs(xm1), y)
    a = b.mul(half, b.add(r, s))
    half_apx = b.mul(half, b.add(a, x))
    yy = b.mul(y, y)
    rpxp1, smxm1, spxm1 = b.add(r, xp1), b.sub(s, xm1), b.add(s, xm1)
    re = b.select(b.cmp(b.max(x, y), safe_max, "GE"), y,
                  b.select(b.cmp(x, one, "LE"), b.sqrt(b.mul(half_apx, b.add(b.div(yy, rpxp1), smxm1))),
                           b.mul(y, b.sqrt(b.add(b.div(half_apx, rpxp1), b.div(half_apx, spxm1))))))
    safe_max_opt = b.select(b.cmp(x, b.mul(safe_max, b.const(1e12, sx)), "LT"),
                            b.mul(safe_max, b.const(1e-6, sx)), b.mul(safe_max, b.const(100.0, sx)))
    y_big = b.cmp(y, safe_max_opt, "GE")
    mx1 = b.select(y_big, y, x)
    huge = b.cmp(mx1, b.select(y_big, safe_max_opt, safe_max), "GE")
    xoy = b.select(b.and_(y_big, b.not_(b.cmp(y, b.const(math.inf, sy), "EQ"))), b.div(x, y), zero)
    im_huge = b.add(b.add(b.log(two), b.log(mx1)), b.mul(half, b.log1p(b.mul(xoy, xoy))))
    tiny_y = b.and_(b.cmp(y, b.mul(b.sqrt(b.const(float(_finfo(_et(sx).dtype).tiny), sx)),
                                   b.const(4.0, sx)), "LT"),
                    b.cmp(x, one, "LT"))
    ap1 = b.add(a, one)
    half_yy = b.mul(half, yy)
    d = b.div(half_yy, rpxp1)
    am1 = b.select(tiny_y, b.neg(b.div(b.mul(xp1, xm1), ap1)),
                   b.select(b.cmp(x, one, "GE"), b.add(d, b.mul(half, spxm1)),
                            b.select(b.cmp(a, b.const(1.5, sx), "LE"), b.add(d, b.div(half_yy, smxm1)),
                                     b.sub(a, one))))
    sq = b.sqrt(b.mul(am1, ap1))
    im = b.select(huge, im_huge, b.select(tiny_y, b.div(y, sq), b.log1p(b.add(am1, sq))))
    return b.one("stablehlo.complex", [re, im], z.type)


def _complex(b, re, im, like):
    return b.one("stablehlo.complex", [re, im], like.type)


def _neg_if(b, cond, v):
    return b.select(cond, b.neg(v), v)


def _casin(b, z):
    w = b.one("chlo._asin_acos_kernel", [z])
    sx, sy = b.part("real", z), b.part("imag", z)
    wi = b.part("imag", w)
    return _complex(b, b.atan2(sx, b.part("real", w)), _neg_if(b, b.cmp(sy, b.const(0.0, sx), "LT"), wi), z)


def _cacos(b, z):
    w = b.one("chlo._asin_acos_kernel", [z])
    sx, sy = b.part("real", z), b.part("imag", z)
    wi = b.part("imag", w)
    return _complex(b, b.atan2(b.part("real", w), sx), b.select(b.cmp(sy, b.const(0.0, sy), "LT"), wi, b.neg(wi)), z)


def _cacosh(b, z):
    w = b.one("chlo._asin_acos_kernel", [z])
    sx, sy = b.part("real", z), b.part("imag", z)
    im = b.atan2(b.part("real", w), sx)
    return _complex(b, b.part("imag", w), _neg_if(b, b.cmp(sy, b.const(0.0, sy), "LT"), im), z)


def _casinh(b, z):
    sx, sy = b.part("real", z), b.part("imag", z)
    w = b.one("chlo._asin_acos_kernel", [_complex(b, b.neg(sy), sx, z)])
    re = _neg_if(b, b.cmp(sx, b.const(0.0, sx), "LT"), b.part("imag", w))
    return _complex(b, re, b.atan2(sy, b.part("real", w)), z)


def _catan(b, z):
    w = b.one("chlo.atanh", [_complex(b, b.neg(b.part("imag", z)), b.part("real", z), z)])
    return _complex(b, b.part("imag", w), b.neg(b.part("real", w)), z)


def _catanh(b, z):
    x, y = b.part("real", z), b.part("imag", z)
    zero, one = b.const(0.0, x), b.const(1.0, x)
    neg1 = b.const(-1.0, x)
    largest = _max_finite(x)
    inv_negeps = b.const(9007199254740994.0 if largest > 1e308 else 16777218.0 if largest > 1e38 else 2050.0, x)
    ax, ay = b.abs(x), b.abs(y)
    safe_max = b.mul(inv_negeps, inv_negeps)
    safe = b.and_(b.cmp(ax, safe_max, "LT"), b.cmp(ay, safe_max, "LT"))
    naxm1 = b.sub(one, ax)
    y2 = b.mul(y, y)
    inf, ninf = b.const(math.inf, x), b.const(-math.inf, x)
    any_inf = b.or_(b.or_(b.cmp(x, inf, "EQ"), b.cmp(x, ninf, "EQ")),
                    b.or_(b.cmp(y, inf, "EQ"), b.cmp(y, ninf, "EQ")))
    outside = b.select(b.cmp(b.mul(ay, inv_negeps), ax, "LT"), b.div(one, ax),
                       b.select(any_inf, zero, b.div(b.div(one, b.add(b.div(ax, y), b.div(y, ax))), y)))
    arg = b.select(safe, b.div(ax, b.add(b.mul(naxm1, naxm1), y2)), outside)
    sign_x = b.select(b.cmp(x, zero, "GE"), one, neg1)
    re = b.mul(b.mul(sign_x, b.log1p(b.mul(b.const(4.0, x), arg))), b.const(0.25, x))
    sign_y = b.select(b.cmp(y, zero, "GE"), one, neg1)
    im = b.mul(b.select(safe, b.atan2(b.add(y, y), b.sub(b.mul(naxm1, b.add(one, ax)), y2)),
                        b.mul(sign_y, b.const(math.pi, x))), b.const(0.5, x))
    return _complex(b, re, im, z)


def _real_or_complex(real_fn, complex_fn):
    def rewrite(b, op):
        x = op.operands[0]
        return [complex_fn(b, x) if _et(x).is_complex else real_fn(b, x)]
    return rewrite


def _sinh_large(b, x):
    lh = b.log(b.const(0.5, x))
    return b.sub(b.exp(b.add(x, lh)), b.exp(b.sub(lh, x)))


# ------------------------------------------------------------------ scan

def _segment_sizes(op, attr, total):
    a = op.attributes.get(attr)
    if a is not None:
        vals = [int(v) for v in getattr(a, "values", ())]
        if len(vals) == 2 and sum(vals) == total:
            return vals
        raise LegalizationError(f"CHLO legalization: {op.name}: `{attr}` must hold two sizes adding up to {total}")
    return [total // 2, total - total // 2]


def _scalar(b, value, et=_I64) -> Value:
    t = TensorType((), et)
    return b.op("stablehlo.constant", [], [t], {"value": DenseElementsAttr(t, np.array(value, dtype=et.dtype))}).results[0]


def _scan(b, op):
    """chlo.scan as a stablehlo.while over the position: its state is (i, the inputs, the
    carries, the outputs so far, zeros at first); each step takes the inputs' slices at i (at
    length - 1 - i with is_reverse) with dynamic_slice and a reshape, runs the scan body's ops
    (moved into the loop body), and writes the output slices with dynamic_update_slice."""
    n_in, n_init = _segment_sizes(op, "operandSegmentSizes", len(op.operands))
    n_out, n_carry = _segment_sizes(op, "resultSegmentSizes", len(op.results))
    if n_carry != n_init:
        raise LegalizationError(f"CHLO legalization: chlo.scan has {n_init} inits but {n_carry} carries")
    inputs, inits = list(op.operands[:n_in]), list(op.operands[n_in:])
    out_types = [r.type for r in op.results[:n_out]]
    types = [v.type for v in op.operands] + out_types
    if any(d is None for t in types for d in t.shape):
        raise LegalizationError("CHLO legalization: chlo.scan with dynamic shapes is not supported")
    dim = int(op.attributes["dimension"].value)
    if inputs:
        length = inputs[0].type.shape[dim]
    elif "scan_dim_size" in op.attributes:
        length = int(op.attributes["scan_dim_size"].value)
    elif out_types:
        length = out_types[0].shape[dim]
    else:
        raise LegalizationError("CHLO legalization: chlo.scan without inputs, outputs or scan_dim_size")
    rev = op.attributes.get("is_reverse")
    reverse = bool(getattr(rev, "value", False)) if rev is not None else False
    if b.dry:                           # what follows moves the scan body's ops
        return list(op.results)
    zeros = []
    for t in out_types:
        zeros.append(b.op("stablehlo.constant", [], [t],
                          {"value": DenseElementsAttr(t, np.zeros(tuple(t.shape), dtype=t.element_type.dtype))}).results[0])
    i64 = TensorType((), _I64)
    state = [i64] + [v.type for v in inputs] + [v.type for v in inits] + out_types
    cond, body = Block(state), Block(state)
    cb = _Builder(cond, 0, op.location)
    cb.op("stablehlo.return", [cb.cmp(cond.arguments[0], _scalar(cb, length), "LT")], [])
    bb = _Builder(body, 0, op.location)
    i = body.arguments[0]
    in_args = body.arguments[1:1 + n_in]
    carry_args = body.arguments[1 + n_in:1 + n_in + n_init]
    out_args = body.arguments[1 + n_in + n_init:]
    pos = bb.sub(_scalar(bb, length - 1), i) if reverse else i
    zero = _scalar(bb, 0)
    scan_block = op.regions[0].blocks[0]
    mapping: Dict[Value, Value] = {}
    for x, arg in zip(in_args, scan_block.arguments[:n_in]):
        shape = list(x.type.shape)
        starts = [pos if d == dim else zero for d in range(len(shape))]
        sizes = shape[:dim] + [1] + shape[dim + 1:]
        sl = bb.op("stablehlo.dynamic_slice", [x] + starts, [TensorType(tuple(sizes), x.type.element_type)],
                   {"slice_sizes": DenseArrayAttr(_I64, tuple(sizes))}).results[0]
        mapping[arg] = bb.one("stablehlo.reshape", [sl], arg.type)
    for c, arg in zip(carry_args, scan_block.arguments[n_in:]):
        mapping[arg] = c
    moved = scan_block.operations[:-1]
    for o in moved:
        for inner in o.walk():
            inner.operands = [mapping.get(v, v) for v in inner.operands]
            inner._cache = None
        body.operations.insert(bb.index, o)
        bb.index += 1
    results = [mapping.get(v, v) for v in scan_block.operations[-1].operands]
    new_outs = []
    for acc, piece, t in zip(out_args, results[:n_out], out_types):
        shape = list(t.shape)
        upd = bb.one("stablehlo.reshape", [piece], TensorType(tuple(shape[:dim] + [1] + shape[dim + 1:]), t.element_type))
        starts = [pos if d == dim else zero for d in range(len(shape))]
        new_outs.append(bb.one("stablehlo.dynamic_update_slice", [acc, upd] + starts, t))
    bb.op("stablehlo.return", [bb.add(i, _scalar(bb, 1))] + list(in_args) + results[n_out:] + new_outs, [])
    loop = b.op("stablehlo.while", [_scalar(b, 0)] + inputs + inits + zeros, state, {},
                [Region([cond]), Region([body])])
    cond.parent, body.parent = loop.regions[0], loop.regions[1]
    scan_block.operations = []
    carries = loop.results[1 + n_in:1 + n_in + n_init]
    outs = loop.results[1 + n_in + n_init:]
    return list(outs) + list(carries)


# ------------------------------------------------------------------ ragged_dot

def _static(v: Value, what: str):
    if any(d is None for d in v.type.shape):
        raise LegalizationError(f"CHLO legalization: {what} with dynamic shapes is not supported")
    return tuple(v.type.shape)


def _dot(b, lhs, rhs, rtype, lb, rb, lc, rc, precision):
    attrs = {"dot_dimension_numbers": StructAttr("stablehlo", "dot", (
        ("lhs_batching_dimensions", tuple(lb)), ("rhs_batching_dimensions", tuple(rb)),
        ("lhs_contracting_dimensions", tuple(lc)), ("rhs_contracting_dimensions", tuple(rc))))}
    if precision is not None:
        attrs["precision_config"] = ArrayAttr(tuple(EnumAttr("stablehlo", "precision", e.value)
                                                    for e in precision.elements))
    return b.op("stablehlo.dot_general", [lhs, rhs], [rtype], attrs).results[0]


def _slice(b, x, start, limit):
    rt = TensorType(tuple(h - l for l, h in zip(start, limit)), x.type.element_type)
    return b.op("stablehlo.slice", [x], [rt], {"start_indices": DenseArrayAttr(_I64, tuple(start)),
                                               "limit_indices": DenseArrayAttr(_I64, tuple(limit)),
                                               "strides": DenseArrayAttr(_I64, (1,) * len(start))}).results[0]


def _ragged_groups(b, lhs, group_sizes, ragged):
    """For each group j: lhs with the positions of the ragged dimension outside group j's run
    [start, start + size) set to zero, start and size per batch element of group_sizes (whose
    leading dimensions are lhs's leading ones), as upstream's applyRaggedMask does."""
    shape = _static(lhs, "chlo.ragged_dot")
    gshape = _static(group_sizes, "chlo.ragged_dot")
    batch = gshape[:-1]
    i64b = TensorType(batch, _I64)
    lhs64 = TensorType(shape, _I64)
    iota_shape = tuple(n if d == ragged else 1 for d, n in enumerate(shape))
    iota = b.op("stablehlo.iota", [], [TensorType(iota_shape, _I64)], {"iota_dimension": IntegerAttr(ragged, _I64)}).results[0]
    iota = b.op("stablehlo.broadcast_in_dim", [iota], [lhs64],
                {"broadcast_dimensions": DenseArrayAttr(_I64, tuple(range(len(shape))))}).results[0]
    zero = b.op("stablehlo.constant", [], [lhs.type],
                {"value": DenseElementsAttr(lhs.type, np.zeros(shape, dtype=lhs.type.element_type.dtype))}).results[0]
    start = b.op("stablehlo.constant", [], [i64b], {"value": DenseElementsAttr(i64b, np.zeros(batch, np.int64))}).results[0]
    bdims = DenseArrayAttr(_I64, tuple(range(len(batch))))
    masked = []
    for j in range(gshape[-1]):
        size = b.one("stablehlo.reshape", [_slice(b, group_sizes, (0,) * (len(gshape) - 1) + (j,), batch + (j + 1,))],
                     TensorType(batch, group_sizes.type.element_type))
        if group_sizes.type.element_type != _I64:
            size = b.convert(size, _I64)
        limit = b.add(start, size)
        lo = b.op("stablehlo.broadcast_in_dim", [start], [lhs64], {"broadcast_dimensions": bdims}).results[0]
        hi = b.op("stablehlo.broadcast_in_dim", [limit], [lhs64], {"broadcast_dimensions": bdims}).results[0]
        mask = b.and_(b.cmp(iota, lo, "GE"), b.cmp(iota, hi, "LT"))
        masked.append(b.select(mask, lhs, zero))
        start = limit
    return masked


def _ragged_dot(b, op):
    """Upstream's three cases, told apart by ranks: a ragged non-contracting lhs dimension
    (lhs rank < rhs rank: one dot_general per group, of lhs masked to the group's rows and the
    group's rhs slice, summed), a ragged contracting dimension (result rank > lhs rank: one
    dot_general per group of the masked lhs, stacked first), and a ragged batch dimension (a
    plain dot_general: upstream leaves positions past the groups as the product computes them)."""
    lhs, rhs, group_sizes = op.operands
    d = dict(op.attributes["ragged_dot_dimension_numbers"].fields)
    lb, rb = tuple(d["lhs_batching_dimensions"]), tuple(d["rhs_batching_dimensions"])
    lc, rc = tuple(d["lhs_contracting_dimensions"]), tuple(d["rhs_contracting_dimensions"])
    ragged = tuple(d["lhs_ragged_dimensions"])
    precision = op.attributes.get("precision_config")
    rtype = op.results[0].type
    lrank, rrank, orank = len(lhs.type.shape), len(rhs.type.shape), len(rtype.shape)
    if lrank < rrank:
        r, g = ragged[0], tuple(d["rhs_group_dimensions"])[0]
        rshape = _static(rhs, "chlo.ragged_dot")
        adjust = lambda dims: tuple(x - 1 if x > g else x for x in dims)
        out = None
        for j, masked in enumerate(_ragged_groups(b, lhs, group_sizes, r)):
            start = tuple(j if k == g else 0 for k in range(rrank))
            limit = tuple(j + 1 if k == g else n for k, n in enumerate(rshape))
            piece = b.one("stablehlo.reshape", [_slice(b, rhs, start, limit)],
                          TensorType(tuple(n for k, n in enumerate(rshape) if k != g), rhs.type.element_type))
            dot = _dot(b, masked, piece, rtype, lb, adjust(rb), lc, adjust(rc), precision)
            out = dot if out is None else b.add(out, dot)
        return [out]
    if lrank < orank:
        part = TensorType(tuple(rtype.shape[1:]), rtype.element_type)
        one = TensorType((1,) + tuple(rtype.shape[1:]), rtype.element_type)
        pieces = [b.one("stablehlo.reshape", [_dot(b, masked, rhs, part, lb, rb, lc, rc, precision)], one)
                  for masked in _ragged_groups(b, lhs, group_sizes, ragged[0])]
        return [b.op("stablehlo.concatenate", pieces, [rtype], {"dimension": IntegerAttr(0, _I64)}).results[0]]
    return [_dot(b, lhs, rhs, rtype, lb, rb, lc, rc, precision)]


REWRITES: Dict[str, Callable] = {
    "chlo.constant": _constant,
    "chlo.constant_like": _constant_like,
    "chlo.square": _square,
    "chlo.conj": _conj,
    "chlo.is_inf": _bool(lambda b, x: _is_pos_inf(b, b.abs(x))),
    "chlo.is_pos_inf": _bool(_is_pos_inf),
    "chlo.is_neg_inf": _bool(lambda b, x: b.cmp(x, b.const(-math.inf, x), "EQ")),
    "chlo.tan": lambda b, op: [b.tan(op.operands[0])],
    "chlo.atan": _real_or_complex(lambda b, x: b.atan2(x, b.const(1.0, x)), _catan),
    "chlo.atanh": _real_or_complex(_atanh, _catanh),
    "chlo.asin": _real_or_complex(_asin, _casin),
    "chlo.acos": _real_or_complex(_acos, _cacos),
    "chlo.asinh": _real_or_complex(_asinh, _casinh),
    "chlo.acosh": _real_or_complex(_acosh, _cacosh),
    "chlo._asin_acos_kernel": _nary(_asin_acos_kernel),
    "chlo.sinh": _real_or_complex(_by_width(_sinh), _sinh_large),
    "chlo.cosh": _real_or_complex(_by_width(_cosh), _cosh),
    "chlo.erf": _nary(_by_width(_erf_f32, _erf_f64), _float_only("erf")),
    "chlo.erfc": _nary(_by_width(_erfc_f32, _erfc_f64), _float_only("erfc")),
    "chlo.erf_inv": _nary(_by_width(_erf_inv_f32, _erf_inv_f64), _float_only("erf_inv")),
    "chlo.bessel_i1e": _nary(_bessel_i1e, _float_only("bessel_i1e")),
    "chlo.zeta": _nary(_zeta, _float_only("zeta")),
    "chlo.polygamma": _nary(_polygamma, _float_only("polygamma")),
    "chlo.mulhi": _nary(_mulhi),
    "chlo.lgamma": _unary(_lgamma, _real_only, upcast=True),
    "chlo.digamma": _unary(_digamma, _real_only, upcast=True),
    "chlo.next_after": _next_after_op,
    "chlo.top_k": _top_k,
    "chlo.scan": _scan,
    "chlo.ragged_dot": _ragged_dot,
    **{name: _broadcast_binary for name in _BROADCAST},
}


def _chlo_ops(module: Module) -> List[Operation]:
    return [op for op in module.walk() if op.name.startswith("chlo.")]


def unsupported(module: Module) -> List[str]:
    """The CHLO ops of `module` that have no decomposition here."""
    return sorted({op.name for op in _chlo_ops(module) if op.name not in REWRITES})


def legalize_chlo(module: Module) -> Dict[str, int]:
    """Rewrite every `chlo.*` op of `module` into StableHLO ops (in place); returns the count
    of rewritten ops per name. Raises NotImplementedOpError listing the CHLO ops without a
    decomposition before changing anything."""
    missing = unsupported(module)
    if missing:
        raise NotImplementedOpError(", ".join(missing), "no CHLO legalization for these ops yet")
    for op in _chlo_ops(module):
        for v in list(op.operands) + list(op.results):
            if not _ranked(v.type):
                raise LegalizationError(f"CHLO legalization: {op.name} on an unranked {v.type} is not "
                                        "supported (the decompositions need a rank)",
                                        _loc(op))
    # a trial of each rewrite into a scratch block first, so that an unsupported case (erf of
    # integers, `?` dimensions where a decomposition needs static ones) raises with the module
    # unchanged
    for op in _chlo_ops(module):
        REWRITES[op.name](_Builder(Block(), 0, op.location, dry=True), op)
    counts: Dict[str, int] = {}
    for _ in range(4):                  # broadcast_next_after -> next_after -> StableHLO
        todo = _chlo_ops(module)
        if not todo:
            break
        replace: Dict[Value, Value] = {}
        parents = _parent_blocks(module)
        for op in todo:
            block = parents.get(id(op))
            if block is None or not any(o is op for o in block.operations):
                parents = _parent_blocks(module)      # an earlier rewrite moved it (scan bodies)
                block = parents[id(op)]
            b = _Builder(block, block.operations.index(op), op.location)
            new = REWRITES[op.name](b, op)
            for old, nv in zip(op.results, new):
                replace[old] = nv
            block.operations.remove(op)
            counts[op.name] = counts.get(op.name, 0) + 1
        for o in module.walk():
            if any(v in replace for v in o.operands):
                o.operands = [_resolve(replace, v) for v in o.operands]
                o._cache = None
    left = unsupported(module)
    if left:
        raise NotImplementedOpError(", ".join(left), "no CHLO legalization for these ops yet")
    return counts


def _ranked(t) -> bool:
    """False for an unranked tensor type (tensor<*x..>), at any nesting inside a tuple."""
    if hasattr(t, "types"):
        return all(_ranked(x) for x in t.types)
    return not (hasattr(t, "element_type") and not hasattr(t, "shape"))


def _loc(op) -> str:
    return op.where()


def _resolve(replace, v):
    seen = 0
    while v in replace and seen < 8:
        v = replace[v]
        seen += 1
    return v


def _parent_blocks(module: Module) -> Dict[int, Block]:
    """id(op) -> the block that holds it, for every op of the module."""
    out: Dict[int, Block] = {}
    blocks = [module.body] if isinstance(getattr(module, "body", None), Block) else []
    for op in module.walk():
        for r in op.regions:
            blocks.extend(r.blocks)
    for blk in blocks:
        for o in blk.operations:
            out[id(o)] = blk
    return out


def _finfo(dtype):
    import ml_dtypes         # (imported at first use: see ir/types.py)
    return ml_dtypes.finfo(dtype)
