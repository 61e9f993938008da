"""Generated cases of the elementwise ops (StableHLO and CHLO): every element type the
spec's operand type class admits, special and random values, rank-0 / size-0 / transposed
(non-contiguous) operands, attribute variants (comparison directions and types,
`reduce_precision` widths, conversion pairs). Expected values come from `oracles` (exact
or mpmath) and one rounding (`formats.round_value`)."""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable, Dict, List, Optional, Sequence

import mpmath
import numpy as np

from . import oracles as O
from .formats import UNSPECIFIED, FloatFormat, float_format, round_value, workprec
from .program import ProgramBuilder, single_op_program, tensor
from .values import (admitted, bits, component, float_random, float_specials, int_pool, int_range, kind,
                     make_array, rng_for)


@dataclass
class Elementwise:
    op: str
    arity: int
    f: Optional[Callable] = None          # float oracle on Python floats
    i: Optional[Callable] = None          # integer oracle on Python ints (result wrapped after)
    b: Optional[Callable] = None          # boolean oracle on 0/1
    c: Optional[Callable] = None          # complex oracle on Python complex -> mpc | (re, im)
    ulp: int = 0                          # 0: exact (one correct rounding)
    ulp_f64: Optional[int] = None         # the bound for f64 (computed by libm-class code)
    ulp_complex: int = 4
    moderate: bool = False                # random values in [-4, 4] rather than any bit pattern
    int_needs_bits: bool = False          # the integer oracle takes (values..., bits[, signed])
    exclude: Sequence[str] = ()           # element types left out (and why, in `note`)
    note: str = ""

    @property
    def oracle_name(self) -> str:
        return "mpmath" if self.ulp else "python-exact"


def _ex(fn):
    """A float oracle wrapped so that exact results come back as Fractions."""
    return fn


def _iw(fn):
    return fn


TRANSCENDENTAL_NOTE = ("transcendental: the spec fixes no accuracy; the bound is this suite's "
                       "(see conformance/README.md, 'Accuracy')")

EW: List[Elementwise] = [
    Elementwise("stablehlo.add", 2, O.add, lambda x, y: x + y, lambda x, y: x | y,
                lambda x, y: (Fraction(x.real) + Fraction(y.real), Fraction(x.imag) + Fraction(y.imag))),
    Elementwise("stablehlo.subtract", 2, O.subtract, lambda x, y: x - y, None,
                lambda x, y: (Fraction(x.real) - Fraction(y.real), Fraction(x.imag) - Fraction(y.imag))),
    Elementwise("stablehlo.multiply", 2, O.multiply, lambda x, y: x * y, lambda x, y: x & y,
                lambda x, y: (Fraction(x.real) * Fraction(y.real) - Fraction(x.imag) * Fraction(y.imag),
                              Fraction(x.real) * Fraction(y.imag) + Fraction(x.imag) * Fraction(y.real))),
    Elementwise("stablehlo.divide", 2, O.divide, O.int_div, None,
                lambda x, y: mpmath.mpc(x) / mpmath.mpc(y), ulp_complex=2),
    Elementwise("stablehlo.remainder", 2, O.remainder, O.int_rem),
    Elementwise("stablehlo.maximum", 2, O.maximum, max, lambda x, y: x | y, O.c_maximum),
    Elementwise("stablehlo.minimum", 2, O.minimum, min, lambda x, y: x & y, O.c_minimum),
    Elementwise("stablehlo.power", 2, O.power, O.int_pow, None, lambda x, y: mpmath.power(mpmath.mpc(x), mpmath.mpc(y)),
                ulp=1, ulp_f64=2, moderate=True, ulp_complex=16),
    Elementwise("stablehlo.atan2", 2, O.atan2, None, None, O.c_atan2, ulp=1, ulp_f64=2),
    Elementwise("stablehlo.and", 2, None, lambda x, y: x & y, lambda x, y: x & y),
    Elementwise("stablehlo.or", 2, None, lambda x, y: x | y, lambda x, y: x | y),
    Elementwise("stablehlo.xor", 2, None, lambda x, y: x ^ y, lambda x, y: x ^ y),
    Elementwise("stablehlo.shift_left", 2, None, O.shift_left, None, int_needs_bits=True),
    Elementwise("stablehlo.shift_right_logical", 2, None, O.shift_right_logical, None, int_needs_bits=True),
    Elementwise("stablehlo.shift_right_arithmetic", 2, None, "sra", None, int_needs_bits=True),
    Elementwise("stablehlo.negate", 1, O.negate, lambda x: -x, None, lambda x: (-Fraction(x.real), -Fraction(x.imag))),
    Elementwise("stablehlo.abs", 1, O.abs_, abs, None, lambda x: mpmath.hypot(x.real, x.imag), ulp_complex=1),
    Elementwise("stablehlo.sign", 1, O.sign, lambda x: (x > 0) - (x < 0), None,
                lambda x: 0j if x == 0 else mpmath.mpc(x) / mpmath.hypot(x.real, x.imag), ulp_complex=2),
    Elementwise("stablehlo.not", 1, None, lambda x: ~x, lambda x: 1 - x),
    Elementwise("stablehlo.floor", 1, O.floor),
    Elementwise("stablehlo.ceil", 1, O.ceil),
    Elementwise("stablehlo.round_nearest_afz", 1, O.round_afz),
    Elementwise("stablehlo.round_nearest_even", 1, O.round_even),
    Elementwise("stablehlo.sqrt", 1, O.sqrt, None, None, lambda x: mpmath.sqrt(mpmath.mpc(x))),
    Elementwise("stablehlo.rsqrt", 1, O.rsqrt, None, None, lambda x: 1 / mpmath.sqrt(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.cbrt", 1, O.cbrt, None, None, O.c_cbrt, ulp=1, ulp_f64=2),
    Elementwise("stablehlo.exponential", 1, O.exponential, None, None, lambda x: mpmath.exp(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.exponential_minus_one", 1, O.expm1, None, None, lambda x: mpmath.expm1(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.log", 1, O.log, None, None, lambda x: mpmath.log(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.log_plus_one", 1, O.log1p, None, None, lambda x: mpmath.log1p(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.logistic", 1, O.logistic, None, None, lambda x: 1 / (1 + mpmath.exp(-mpmath.mpc(x))), ulp=1, ulp_f64=3),
    Elementwise("stablehlo.sine", 1, O.sine, None, None, lambda x: mpmath.sin(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.cosine", 1, O.cosine, None, None, lambda x: mpmath.cos(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.tan", 1, O.tan, None, None, lambda x: mpmath.tan(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.tanh", 1, O.tanh, None, None, lambda x: mpmath.tanh(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("stablehlo.count_leading_zeros", 1, None, O.clz, None, int_needs_bits=True),
    Elementwise("stablehlo.popcnt", 1, None, O.popcnt, None, int_needs_bits=True),
    Elementwise("chlo.acos", 1, O.acos, None, None, O.c_acos, ulp=1, ulp_f64=2),
    Elementwise("chlo.asin", 1, O.asin, None, None, O.c_asin, ulp=1, ulp_f64=2),
    Elementwise("chlo.atan", 1, O.atan, None, None, O.c_atan, ulp=1, ulp_f64=2),
    Elementwise("chlo.acosh", 1, O.acosh, None, None, O.c_acosh, ulp=1, ulp_f64=2),
    Elementwise("chlo.asinh", 1, O.asinh, None, None, O.c_asinh, ulp=1, ulp_f64=2),
    Elementwise("chlo.atanh", 1, O.atanh, None, None, O.c_atanh, ulp=1, ulp_f64=2),
    Elementwise("chlo.sinh", 1, O.sinh, None, None, lambda x: mpmath.sinh(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("chlo.cosh", 1, O.cosh, None, None, lambda x: mpmath.cosh(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("chlo.tan", 1, O.tan, None, None, lambda x: mpmath.tan(mpmath.mpc(x)), ulp=1, ulp_f64=2),
    Elementwise("chlo.erf", 1, O.erf, None, None, None, ulp=1, ulp_f64=2, moderate=True),
    Elementwise("chlo.erfc", 1, O.erfc, None, None, None, ulp=1, ulp_f64=4, moderate=True),
    Elementwise("chlo.erf_inv", 1, O.erf_inv, None, None, None, ulp=2, ulp_f64=8, moderate=True),
    Elementwise("chlo.lgamma", 1, O.lgamma, None, None, None, ulp=1, ulp_f64=16, moderate=True),
    Elementwise("chlo.digamma", 1, O.digamma, None, None, None, ulp=2, ulp_f64=16, moderate=True),
    Elementwise("chlo.bessel_i1e", 1, O.bessel_i1e, None, None, None, ulp=1, ulp_f64=4, moderate=True),
    Elementwise("chlo.square", 1, O.square, lambda x: x * x, None,
                lambda x: (Fraction(x.real) ** 2 - Fraction(x.imag) ** 2, 2 * Fraction(x.real) * Fraction(x.imag))),
    # (conj of a real value is the value: ChloOps.td admits float operands, the legalization returns them)
    Elementwise("chlo.conj", 1, lambda x: x, None, None, lambda x: (Fraction(x.real), -Fraction(x.imag))),
    Elementwise("chlo.mulhi", 2, None, O.mulhi, None, int_needs_bits=True),
]

BROADCAST_BINARY = {"chlo.broadcast_add": "stablehlo.add", "chlo.broadcast_subtract": "stablehlo.subtract",
                    "chlo.broadcast_multiply": "stablehlo.multiply", "chlo.broadcast_divide": "stablehlo.divide",
                    "chlo.broadcast_remainder": "stablehlo.remainder", "chlo.broadcast_maximum": "stablehlo.maximum",
                    "chlo.broadcast_minimum": "stablehlo.minimum", "chlo.broadcast_power": "stablehlo.power",
                    "chlo.broadcast_atan2": "stablehlo.atan2", "chlo.broadcast_and": "stablehlo.and",
                    "chlo.broadcast_or": "stablehlo.or", "chlo.broadcast_xor": "stablehlo.xor",
                    "chlo.broadcast_shift_left": "stablehlo.shift_left",
                    "chlo.broadcast_shift_right_logical": "stablehlo.shift_right_logical",
                    "chlo.broadcast_shift_right_arithmetic": "stablehlo.shift_right_arithmetic"}

BY_NAME: Dict[str, Elementwise] = {e.op: e for e in EW}


def _operand_class(op: str, i: int = 0) -> str:
    from stablehlo_ref import spec
    return spec.op(op).operands[i].type


def kinds_of(e: Elementwise) -> set:
    k = set()
    if e.f:
        k.add("float")
    if e.i:
        k |= {"signed", "unsigned"}
    if e.b:
        k.add("bool")
    if e.c:
        k.add("complex")
    return k


def types_for(e: Elementwise, op: Optional[str] = None) -> List[str]:
    """Admitted element types (the spec) for which this suite has an oracle."""
    ks = kinds_of(e)
    return [t for t in admitted(_operand_class(op or e.op)) if kind(t) in ks and t not in e.exclude]


# ---------------------------------------------------------------------------- evaluation

def _sra(x, s, b, signed):
    return O.shift_right_arithmetic(x, s, b, signed)


def eval_element(e: Elementwise, et: str, args: Sequence, out_et: Optional[str] = None):
    """One expected element (a Python value of the result type) or UNSPECIFIED."""
    k = kind(et)
    out_et = out_et or et
    if k == "float":
        with workprec():
            v = e.f(*args)
            if v is UNSPECIFIED:
                return UNSPECIFIED
            return round_value(v, float_format(out_et))
    if k == "complex":
        with workprec():
            try:
                v = e.c(*args)
            except (ZeroDivisionError, ValueError):
                return UNSPECIFIED       # a complex singularity: left to the specials list
            fmt = float_format(component(et))
            if isinstance(v, tuple):
                re, im = v
            elif isinstance(v, (mpmath.mpf, float, int, Fraction)) and kind(out_et) != "complex":
                return round_value(v if not isinstance(v, int) else Fraction(v), float_format(out_et))
            elif isinstance(v, (float, int, Fraction)):
                re, im = v, Fraction(0)
            else:
                v = mpmath.mpc(v)
                re, im = v.real, v.imag
            r = round_value(re if not isinstance(re, int) else Fraction(re), fmt)
            i = round_value(im if not isinstance(im, int) else Fraction(im), fmt)
            if r is UNSPECIFIED or i is UNSPECIFIED or not (math.isfinite(r) and math.isfinite(i)):
                return UNSPECIFIED
            return complex(r, i)
    b = bits(et)
    signed = k == "signed"
    if k == "bool":
        if e.b is None:
            return UNSPECIFIED
        return bool(e.b(*[int(a) for a in args]))
    if e.i == "sra":
        v = _sra(*args, b, signed)
    elif e.int_needs_bits:
        v = e.i(*args, b)
    else:
        v = e.i(*args)
    if v is UNSPECIFIED:
        return UNSPECIFIED
    return O.wrap(int(v), b, signed)


# ---------------------------------------------------------------------------- inputs

def _unary_values(e: Elementwise, et: str, rng, full: bool) -> List:
    k = kind(et)
    if k == "float":
        fmt = float_format(et)
        from .formats import bits_pattern_values
        allv = bits_pattern_values(fmt)
        if allv is not None:
            return allv                                   # every value of an 8-bit format
        if e.moderate:
            vals = [v for v in float_specials(fmt) if not math.isfinite(v) or abs(v) <= 64]
            return vals + float_random(fmt, rng, 48 if full else 16, moderate=True)
        vals = float_specials(fmt) + float_random(fmt, rng, 24 if full else 8)
        return vals + float_random(fmt, rng, 24 if full else 8, moderate=True)
    if k == "complex":
        return _complex_values(rng, 12 if full else 6)
    if k == "bool":
        return [0, 1]
    return int_pool(et, rng, 16 if full else 6)


def _complex_values(rng, n):
    base = [0j, 1 + 0j, -1j, 0.5 + 0.25j, -1.5 + 2j, 2 - 0.75j, 0.375 - 1.25j]
    out = list(base)
    for _ in range(n):
        re = float(np.round(rng.uniform(-3, 3) * 16) / 16)
        im = float(np.round(rng.uniform(-3, 3) * 16) / 16)
        out.append(complex(re, im))
    return out


def _binary_values(e: Elementwise, et: str, rng, full: bool):
    k = kind(et)
    if k == "float":
        fmt = float_format(et)
        sp = float_specials(fmt)
        if e.moderate:
            sp = [v for v in sp if math.isnan(v) or math.isinf(v) or v == 0 or 2 ** -8 <= abs(v) <= 64]
        pairs = [(a, b) for a in sp for b in sp]
        ra = float_random(fmt, rng, 32 if full else 12, moderate=e.moderate)
        rb = float_random(fmt, rng, 32 if full else 12, moderate=e.moderate)
        rm = float_random(fmt, rng, 16 if full else 6, moderate=True)
        pairs += list(zip(ra, rb)) + list(zip(rm, rm[::-1]))
        # ties: x + y landing halfway between two neighbours of the format
        one, half_ulp = 1.0, fmt.eps / 2
        if round_value(half_ulp, fmt) == half_ulp:
            pairs += [(one, half_ulp), (one + fmt.eps, half_ulp), (-one, -half_ulp)]
        return pairs
    if k == "complex":
        a = _complex_values(rng, 10 if full else 5)
        b = _complex_values(rng, 10 if full else 5)
        b = [v if v != 0 else 1 + 1j for v in b]
        pairs = list(zip(a, b[1:] + b[:1]))
        if e.op.endswith(("maximum", "minimum")):
            # equal real parts: the lexicographic order falls through to the imaginary parts
            pairs += [(1 + 2j, 1 - 3j), (-0.5 - 3j, -0.5 + 0.25j), (-0.5 + 0.25j, -0.5 + 0.25j),
                      (2 - 1j, -3 + 5j), (-3 + 5j, 2 - 1j)]
        return pairs
    if k == "bool":
        return [(a, b) for a in (0, 1) for b in (0, 1)]
    pool = int_pool(et, rng, 8 if full else 4)
    pairs = [(a, b) for a in pool for b in pool]
    if e.op.endswith(("shift_left", "shift_right_logical", "shift_right_arithmetic")):
        lo, hi = int_range(et)
        pairs += [(a, s) for a in pool[:6] for s in range(0, bits(et) + 2) if lo <= s <= hi]
    if e.op.endswith("power"):
        pairs = [(a, b) for a, b in pairs if 0 <= b <= 40] + [(a, b) for a in pool[:8] for b in (0, 1, 2, 3, 7)]
    return pairs


# ---------------------------------------------------------------------------- cases

from .build import keep_specified, make_case, rule_for  # noqa: E402

VARIANTS_FAST = ("values",)
VARIANTS_FULL = ("values", "rank0", "size0", "transposed")


def _ulp(e: Elementwise, et: str) -> int:
    if kind(et) == "complex":
        return e.ulp_complex if (e.ulp or e.c and not _exact_complex(e)) else 0
    if not e.ulp:
        return 0
    return e.ulp_f64 if (et == "f64" and e.ulp_f64 is not None) else e.ulp


def _exact_complex(e: Elementwise) -> bool:
    return e.op in ("stablehlo.add", "stablehlo.subtract", "stablehlo.multiply", "stablehlo.negate",
                    "chlo.square", "chlo.conj", "stablehlo.maximum", "stablehlo.minimum")


def _result_type(e: Elementwise, et: str) -> str:
    if e.op == "stablehlo.abs" and kind(et) == "complex":
        return component(et)
    return et


def _rows(e, et, args_list, out_et):
    rows = []
    unsigned = kind(et) == "float" and float_format(et).unsigned
    for args in args_list:
        if unsigned and any(isinstance(a, float) and (a < 0 or math.copysign(1.0, a) < 0) for a in args):
            continue        # (an unsigned float format has no negative values: they would be NaN)
        rows.append((args, eval_element(e, et, args, out_et)))
    return keep_specified(rows)


def elementwise_cases(e: Elementwise, et: str, full: bool, op: Optional[str] = None) -> List:
    op = op or e.op
    out_et = _result_type(e, et)
    rng = rng_for(f"{op}/{et}")
    if e.arity == 1:
        args_list = [(v,) for v in _unary_values(e, et, rng, full)]
    else:
        args_list = _binary_values(e, et, rng, full)
    rows = _rows(e, et, args_list, out_et)
    if not rows:
        return []
    rule = rule_for(out_et, _ulp(e, et))
    oracle = e.oracle_name if kind(et) not in ("signed", "unsigned", "bool") else "python-int"
    if kind(et) == "complex" and not _exact_complex(e) and e.op != "stablehlo.abs":
        oracle = "mpmath"
    note = TRANSCENDENTAL_NOTE if rule.kind == "ulp" else ""
    out = []
    for variant in (VARIANTS_FULL if full else VARIANTS_FAST):
        if variant == "values":
            shape, sel = (len(rows),), rows
        elif variant == "rank0":
            sel = [rows[min(len(rows) - 1, len(rows) // 2)]]
            shape = ()
        elif variant == "size0":
            sel, shape = [], (0, 3)
        else:
            if len(rows) < 12:
                continue
            sel, shape = rows[:12], (3, 4)
        if variant == "transposed":
            # operand 0 is passed as its 4x3 transpose and transposed back in the program:
            # the op reads a non-contiguous (permuted) view
            t_in = [[sel[j * 4 + i][0][0] for j in range(3)] for i in range(4)]     # [i][j] = a[j][i]
            in0 = make_array([v for r in t_in for v in r], et, (4, 3))
            ins = [in0] + [make_array([r[0][k] for r in sel], et, shape) for k in range(1, e.arity)]
            b = ProgramBuilder([tensor((4, 3), et)] + [tensor(shape, et)] * (e.arity - 1))
            t = b.op("stablehlo.transpose", [(b.arg(0), tensor((4, 3), et))], [tensor(shape, et)],
                     "permutation = array<i64: 1, 0>")[0]
            res = b.op(op, [(t, tensor(shape, et))] + [(b.arg(k), tensor(shape, et)) for k in range(1, e.arity)],
                       [tensor(shape, out_et)])[0]
            program = b.text([(res, tensor(shape, out_et))])
            ops = (op, "stablehlo.transpose")
        else:
            ins = [make_array([r[0][k] for r in sel], et, shape) for k in range(e.arity)]
            program = single_op_program(op, [tensor(shape, et)] * e.arity, [tensor(shape, out_et)])
            ops = (op,)
        exp = make_array([r[1] for r in sel], out_et, shape)
        rule_v = _complex_rule(rule, out_et, exp)
        out.append(make_case(op, et, variant, program, ins, [exp], [out_et], [rule_v], oracle,
                             "elementwise", note, ops))
    return out


def all_elementwise(full: bool, fast_types=None) -> List:
    cases = []
    for e in EW:
        for et in types_for(e):
            if not full and fast_types is not None and et not in fast_types:
                continue
            cases.extend(elementwise_cases(e, et, full))
    for bop, base in BROADCAST_BINARY.items():
        e = BY_NAME[base]
        for et in types_for(e, bop):
            if not full and fast_types is not None and et not in fast_types:
                continue
            cases.extend(broadcast_cases(bop, e, et, full))
    return cases


def broadcast_cases(op: str, e: Elementwise, et: str, full: bool) -> List:
    """chlo.broadcast_*: lhs 3x1 with rhs 1x4 (numpy-style, both sides size-1 broadcast) and,
    in the full suite, a rank-1 rhs against a rank-2 lhs."""
    rng = rng_for(f"{op}/{et}")
    pairs = _binary_values(e, et, rng, full)
    a_vals = [p[0] for p in pairs]
    b_vals = [p[1] for p in pairs]
    out = []
    shapes = [("size1_both", (3, 1), (1, 4))]
    if full:
        shapes.append(("rank_extend", (2, 4), (4,)))
    for variant, sa, sb in shapes:
        # pick values so that every element is specified
        na, nb = int(np.prod(sa)), int(np.prod(sb))
        shape = tuple(max(x, y) for x, y in zip((1,) * (2 - len(sa)) + sa, (1,) * (2 - len(sb)) + sb))
        picked = None
        for off in range(0, max(1, len(pairs) - na - nb), 3):
            A = a_vals[off:off + na]
            B = b_vals[off + na:off + na + nb] if len(b_vals) >= off + na + nb else b_vals[:nb]
            if len(A) < na or len(B) < nb:
                break
            res = []
            ok = True
            for i in range(shape[0]):
                for j in range(shape[1]):
                    ai = A[(i if sa[0] != 1 else 0) * sa[1] + (j if sa[1] != 1 else 0)]
                    sb2 = (1,) * (2 - len(sb)) + sb
                    bi = B[(i if sb2[0] != 1 else 0) * sb2[1] + (j if sb2[1] != 1 else 0)]
                    v = eval_element(e, et, (ai, bi))
                    if v is UNSPECIFIED:
                        ok = False
                        break
                    res.append(v)
                if not ok:
                    break
            if ok:
                picked = (A, B, res)
                break
        if picked is None:
            continue
        A, B, res = picked
        program = single_op_program(op, [tensor(sa, et), tensor(sb, et)], [tensor(shape, et)])
        rule = rule_for(et, _ulp(e, et))
        rule = _complex_rule(rule, et, make_array(res, et, shape))
        out.append(make_case(op, et, variant, program, [make_array(A, et, sa), make_array(B, et, sb)],
                             [make_array(res, et, shape)], [et], [rule],
                             "python-int" if kind(et) in ("signed", "unsigned", "bool") else e.oracle_name,
                             "elementwise", "numpy-style broadcasting"))
    return out


def _complex_rule(rule, et, exp):
    """Complex results of inexact ops: a part much smaller than the whole value (cancellation)
    cannot be held to ULPs of itself, so each part passes within the ULP bound or within
    bound * eps * max|z| absolute."""
    from ..cases import Rule
    if kind(et) != "complex" or rule.kind != "ulp":
        return rule
    mags = np.abs(np.asarray(exp, dtype=np.complex128))
    scale = float(mags.max()) if mags.size else 0.0
    eps = float_format(component(et)).eps
    return Rule("close", atol=rule.max_ulp * eps * scale, max_ulp=rule.max_ulp, check="generated")
