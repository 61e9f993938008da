"""CHLO legalization: rewrite `chlo.*` ops into StableHLO ops, as upstream's
`chlo-legalize-to-stablehlo` pass decomposes them (the same formulas, constants and
approximations, op for op), so that a program from `jax.jit(f).lower(...).as_text()` can be
written as a portable artifact, which no VHLO version can hold CHLO in.

`legalize_chlo(module)` rewrites the module in place and returns {op name: count} of what it
rewrote; an op it has no decomposition for (or a case of one: f64 erf, complex asin, ...)
raises NotImplementedOpError listing every such op, before anything changes.

Decomposed (real element types unless said):
- `broadcast_*` binary ops and `broadcast_compare` / `broadcast_select`-free binaries: the
  StableHLO op on operands broadcast with `broadcast_in_dim` to the result shape (static shapes);
- `constant`, `constant_like`; `square` (real and complex); `conj` (real and complex);
  `is_inf`, `is_pos_inf`, `is_neg_inf`; `tan`; `atan`, `atanh`, `asin`, `acos`, `asinh`,
  `acosh`; `sinh`, `cosh` (computed in f32 at least); `erf`, `erfc`, `erf_inv` (f16, bf16, f32:
  the f32 approximations); `lgamma`, `digamma` (Lanczos, in f32 at least); `next_after`;
  `top_k` (a sort with an iota, then slices)."""
from __future__ import annotations

import math
from typing import Callable, Dict, List

import ml_dtypes
import numpy as np

from ..errors import NotImplementedOpError, StableHLOError
from ..ir.attributes import BoolAttr, DenseArrayAttr, DenseElementsAttr, EnumAttr, IntegerAttr
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

    def __init__(self, block: Block, index: int, location):
        self.block = block
        self.index = index
        self.location = location

    def op(self, name, operands, result_types, attributes=None, regions=None) -> Operation:
        o = Operation(name, operands, result_types, attributes or {}, regions or [], self.location)
        self.block.operations.insert(self.index, o)
        self.index += 1
        return o

    def one(self, name, operands, rtype=None, **attrs) -> Value:
        return self.op(name, list(operands), [rtype or operands[0].type], attrs).results[0]

    # ------------------------------------------------------------ helpers
    def const(self, value, like: Value, et: ElementType = None) -> Value:
        t = like.type
        et = et or t.element_type
        if any(d is None for d in t.shape):
            raise LegalizationError("CHLO legalization: constants of dynamic shape are not supported")
        arr = np.full(tuple(t.shape), value, dtype=np.float64 if et.is_float else None)
        if et.is_complex:
            arr = np.full(tuple(t.shape), value, dtype=et.dtype)
        arr = arr.astype(et.dtype) if not et.is_bool else arr.astype(bool)
        rt = TensorType(tuple(t.shape), et)
        return self.op("stablehlo.constant", [], [rt], {"value": DenseElementsAttr(rt, arr)}).results[0]

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
               "clamp": "clamp", "real": None, "imag": None, "is_finite": None}
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


def _f32_only(what):
    def check(op, x):
        et = _et(x)
        if not (et.is_float and et.bits <= 32):
            raise NotImplementedOpError(op.name, f"legalization of {what} on {et.name}")
    return check


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
    big = b.cmp(x, b.div(b.const(float(ml_dtypes.finfo(_et(x).dtype).max), x), two), "GE")
    s = b.sqrt(b.sub(x, one))
    return b.select(big, b.add(b.log(two), b.log(x)), b.log1p(b.mul(s, b.add(b.sqrt(b.add(x, one)), s))))


def _asinh(b, x):
    ax = b.abs(x)
    one = b.const(1.0, x)
    big = b.cmp(ax, b.sqrt(b.const(float(ml_dtypes.finfo(_et(x).dtype).max), x)), "GE")
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
    ("subtract", "subtract"), ("xor", "xor"), ("compare", "compare"),
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


REWRITES: Dict[str, Callable] = {
    "chlo.constant": _constant,
    "chlo.constant_like": _constant_like,
    "chlo.square": _square,
    "chlo.conj": _conj,
    "chlo.is_inf": _bool(lambda b, x: _is_pos_inf(b, b.abs(x))),
    "chlo.is_pos_inf": _bool(_is_pos_inf),
    "chlo.is_neg_inf": _bool(lambda b, x: b.cmp(x, b.const(-math.inf, x), "EQ")),
    "chlo.tan": lambda b, op: [b.tan(op.operands[0])],
    "chlo.atan": _unary(lambda b, x: b.atan2(x, b.const(1.0, x)), _real_only),
    "chlo.atanh": _unary(_atanh, _real_only),
    "chlo.asin": _unary(_asin, _real_only),
    "chlo.acos": _unary(_acos, _real_only),
    "chlo.asinh": _unary(_asinh, _real_only),
    "chlo.acosh": _unary(_acosh, _real_only),
    "chlo.sinh": _unary(_sinh, _real_only, upcast=True),
    "chlo.cosh": _unary(_cosh, _real_only, upcast=True),
    "chlo.erf": _unary(_erf_f32, _f32_only("erf"), upcast=True),
    "chlo.erfc": _unary(_erfc_f32, _f32_only("erfc"), upcast=True),
    "chlo.erf_inv": _unary(_erf_inv_f32, _f32_only("erf_inv"), upcast=True),
    "chlo.lgamma": _unary(_lgamma, _real_only, upcast=True),
    "chlo.digamma": _unary(_digamma, _real_only, upcast=True),
    "chlo.next_after": _next_after_op,
    "chlo.top_k": _top_k,
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
    counts: Dict[str, int] = {}
    for _ in range(4):                  # broadcast_next_after -> next_after -> StableHLO
        todo = _chlo_ops(module)
        if not todo:
            break
        replace: Dict[Value, Value] = {}
        parents = _parent_blocks(module)
        for op in todo:
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
