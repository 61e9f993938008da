"""Generated cases of elementwise ops with attributes or mixed types: compare (every
direction x comparison type), select, clamp, convert (type pairs), is_finite and CHLO's
is_*inf, real / imag / complex, reduce_precision (exponent/mantissa widths),
bitcast_convert (same-width pairs), CHLO next_after (exact lattice steps) and its broadcast
form, CHLO zeta / polygamma and their broadcast forms (mpmath)."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import List

import mpmath
import numpy as np

from . import oracles as O
from .build import make_case, rule_for
from .formats import UNSPECIFIED, FloatFormat, float_format, round_value, workprec
from .program import single_op_program, tensor
from .values import (admitted, all_element_types, bits, component, float_random, float_specials, int_pool,
                     int_range, kind, make_array, rng_for)


def _pool(et: str, rng, n: int) -> list:
    k = kind(et)
    if k == "float":
        fmt = float_format(et)
        vals = float_specials(fmt) + float_random(fmt, rng, n) + float_random(fmt, rng, n, moderate=True)
        if fmt.has_nan and fmt.has_neg_zero:
            vals.append(-math.nan)
        return vals
    if k == "complex":
        return [0j, 1 + 0j, -1j, 0.5 + 0.25j, -1.5 + 2j, 2 - 0.75j, 1 + 0j, -1.5 + 2j]
    if k == "bool":
        return [0, 1]
    return int_pool(et, rng, n)


def _classes(op, i=0):
    from stablehlo_ref import spec
    return spec.op(op).operands[i].type


def _mk(op, et, variant, ins, in_types, exp, out_et, shape, ulp=0, oracle="python-exact", note="", attrs="",
        in_ets=None):
    in_ets = in_ets or [et] * len(ins)
    arrays = [make_array(v, t, shape) for v, t in zip(ins, in_ets)]
    program = single_op_program(op, [tensor(shape, t) for t in in_ets], [tensor(shape, out_et)], attrs)
    return make_case(op, et, variant, program, arrays, [make_array(exp, out_et, shape)], [out_et],
                     [rule_for(out_et, ulp)], oracle, "special", note)


# ---------------------------------------------------------------------------- compare

def _total_key(x: float):
    """-NaN < -inf < negative finite < -0 < +0 < positive finite < +inf < +NaN."""
    c = 2 if math.isnan(x) else 1 if math.isinf(x) else 0
    v = Fraction(abs(x)) if c == 0 else Fraction(0)
    return (0, -c, -v) if math.copysign(1.0, x) < 0 else (1, c, v)


def _cmp(direction, a, b, ctype):
    if ctype == "TOTALORDER":
        a, b = _total_key(a), _total_key(b)
    elif isinstance(a, float) and (math.isnan(a) or math.isnan(b)):
        return direction == "NE"
    if direction == "EQ":
        return a == b
    if direction == "NE":
        return a != b
    return {"LT": lambda: a < b, "LE": lambda: a <= b, "GT": lambda: a > b, "GE": lambda: a >= b}[direction]()


def compare_cases(full: bool, fast) -> List:
    out = []
    op = "stablehlo.compare"
    for et in admitted(_classes(op)):
        if kind(et) not in ("bool", "signed", "unsigned", "float", "complex"):
            continue
        if fast is not None and et not in fast:
            continue
        k = kind(et)
        ctypes = {"float": ["FLOAT", "TOTALORDER"], "signed": ["SIGNED"], "unsigned": ["UNSIGNED"],
                  "bool": ["UNSIGNED"], "complex": ["FLOAT"]}[k]
        dirs = ["EQ", "NE"] if k == "complex" else ["EQ", "NE", "LT", "LE", "GT", "GE"]
        rng = rng_for(f"{op}/{et}")
        pool = _pool(et, rng, 6 if full else 3)
        pairs = [(a, b) for a in pool for b in pool]
        if k == "float" and not float_format(et).has_neg_zero:
            # a format whose one NaN is the -0 pattern: where it sorts under TOTALORDER is not fixed
            pairs = [(a, b) for a, b in pairs if not (math.isnan(a) or math.isnan(b))]
        for ct in ctypes:
            for d in dirs:
                if not full and d not in ("LT", "EQ") and ct != "TOTALORDER":
                    continue
                if ct == "TOTALORDER":
                    exp = [_cmp(d, a, b, ct) for a, b in pairs]
                elif k == "complex":
                    exp = [_cmp(d, a, b, "X") for a, b in pairs]
                else:
                    exp = [_cmp(d, a, b, ct) for a, b in pairs]
                attrs = (f"comparison_direction = #stablehlo<comparison_direction {d}>, "
                         f"compare_type = #stablehlo<comparison_type {ct}>")
                shape = (len(pairs),)
                ins = [[p[0] for p in pairs], [p[1] for p in pairs]]
                arrays = [make_array(v, et, shape) for v in ins]
                program = single_op_program(op, [tensor(shape, et)] * 2, [tensor(shape, "i1")], attrs)
                out.append(make_case(op, et, f"{d}_{ct}", program, arrays, [make_array(exp, "i1", shape)], ["i1"],
                                     [rule_for("i1", 0)], "python-exact", "special",
                                     "TOTALORDER: -NaN < -inf < ... < -0 < +0 < ... < inf < NaN"))
    return out


# ---------------------------------------------------------------------------- select / clamp

def select_clamp_cases(full: bool, fast) -> List:
    out = []
    for et in admitted(_classes("stablehlo.select", 1)):
        if kind(et) not in ("bool", "signed", "unsigned", "float", "complex") or (fast is not None and et not in fast):
            continue
        rng = rng_for(f"stablehlo.select/{et}")
        pool = _pool(et, rng, 4)
        n = len(pool)
        pred = [i % 3 == 0 for i in range(n)]
        other = pool[::-1]
        exp = [O.select(p, t, f) for p, t, f in zip(pred, pool, other)]
        shape = (n,)
        program = single_op_program("stablehlo.select", [tensor(shape, "i1"), tensor(shape, et), tensor(shape, et)],
                                    [tensor(shape, et)])
        out.append(make_case("stablehlo.select", et, "values", program,
                             [make_array(pred, "i1", shape), make_array(pool, et, shape), make_array(other, et, shape)],
                             [make_array(exp, et, shape)], [et], [rule_for(et, 0)], "python-exact", "special"))
    for et in admitted(_classes("stablehlo.clamp", 1)):
        if kind(et) not in ("bool", "signed", "unsigned", "float", "complex") or (fast is not None and et not in fast):
            continue
        rng = rng_for(f"stablehlo.clamp/{et}")
        pool = _pool(et, rng, 6)
        if kind(et) == "complex":
            # equal real parts, so that the lexicographic order reaches the imaginary parts
            pool = pool + [1 - 2j, 1 + 3j, -1.5 - 1j, 0.5 + 4j, 2 + 0.5j]
        lo_hi = [(pool[i], pool[(i * 7 + 3) % len(pool)]) for i in range(len(pool))]
        rows = []
        for (lo, hi), x in zip(lo_hi, pool[::-1]):
            if kind(et) == "complex":
                # the spec: minimum(maximum(x, min), max), lexicographic on (real, imaginary)
                if O.c_maximum(lo, hi) != O.c_minimum(lo, hi) and O.c_maximum(lo, hi) == (lo.real, lo.imag):
                    continue               # min > max: left out, as for the other types
                v = complex(*O.c_minimum(complex(*O.c_maximum(x, lo)), hi))
            elif kind(et) == "float":
                if not (math.isnan(lo) or math.isnan(hi)) and lo > hi:
                    continue               # min > max: not fixed by the spec
                v = round_value(O.clamp(lo, x, hi), float_format(et))
            else:
                if lo > hi:
                    continue
                v = min(max(x, lo), hi)
            rows.append((lo, x, hi, v))
        shape = (len(rows),)
        ins = [[r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows]]
        out.append(_mk("stablehlo.clamp", et, "values", ins, None, [r[3] for r in rows], et, shape,
                       note="rows with min > max left out: the spec does not fix them"))
        if full and kind(et) == "complex":
            lo, hi = -0.5 + 1j, 1 + 2j
            exp = [complex(*O.c_minimum(complex(*O.c_maximum(x, lo)), hi)) for x in pool]
            shape = (len(pool),)
            program = single_op_program("stablehlo.clamp", [tensor((), et), tensor(shape, et), tensor((), et)],
                                        [tensor(shape, et)])
            out.append(make_case("stablehlo.clamp", et, "scalar_bounds", program,
                                 [make_array([lo], et, ()), make_array(pool, et, shape), make_array([hi], et, ())],
                                 [make_array(exp, et, shape)], [et], [rule_for(et, 0)], "python-exact", "special"))
        elif full:
            # scalar min and max (the spec allows rank-0 bounds)
            lo, hi = sorted([r for r in pool if not (isinstance(r, float) and math.isnan(r))][:2])
            xs = pool
            exp = []
            for x in xs:
                exp.append(round_value(O.clamp(lo, x, hi), float_format(et)) if kind(et) == "float" else min(max(x, lo), hi))
            shape = (len(xs),)
            program = single_op_program("stablehlo.clamp", [tensor((), et), tensor(shape, et), tensor((), et)],
                                        [tensor(shape, et)])
            out.append(make_case("stablehlo.clamp", et, "scalar_bounds", program,
                                 [make_array([lo], et, ()), make_array(xs, et, shape), make_array([hi], et, ())],
                                 [make_array(exp, et, shape)], [et], [rule_for(et, 0)], "python-exact", "special"))
    return out


# ---------------------------------------------------------------------------- convert

FAST_CONVERT = {("f32", "bf16"), ("f64", "f32"), ("f32", "i32"), ("i32", "f32"), ("i64", "i8"), ("ui32", "i64"),
                ("f32", "f8E4M3FN"), ("f16", "f32"), ("i1", "f32"), ("f32", "i1"), ("i8", "ui32"),
                ("f32", "complex<f32>"), ("bf16", "f16")}


def convert_element(x, src: str, dst: str):
    ks, kd = kind(src), kind(dst)
    if ks == "complex":
        if kd != "complex":
            return UNSPECIFIED               # complex -> real: not fixed by the spec
        fmt = float_format(component(dst))
        r, i = round_value(x.real, fmt), round_value(x.imag, fmt)
        return UNSPECIFIED if UNSPECIFIED in (r, i) else complex(r, i)
    if ks == "bool":
        x = int(x)
    if kd == "bool":
        if ks == "float" and math.isnan(x):
            return UNSPECIFIED
        return x != 0
    if kd in ("signed", "unsigned"):
        if ks == "float":
            if math.isnan(x) or math.isinf(x):
                return UNSPECIFIED
            t = int(x)                        # truncation toward zero, exact for floats
            lo, hi = int_range(dst)
            return t if lo <= t <= hi else UNSPECIFIED
        return O.wrap(int(x), bits(dst), kd == "signed")
    if kd == "float":
        v = x if ks == "float" else Fraction(int(x))
        return round_value(v, float_format(dst))
    if kd == "complex":
        fmt = float_format(component(dst))
        v = x if ks == "float" else Fraction(int(x))
        r = round_value(v, fmt)
        return UNSPECIFIED if r is UNSPECIFIED else complex(r, 0.0)
    return UNSPECIFIED


def convert_cases(full: bool, fast) -> List:
    out = []
    types = [t for t in admitted(_classes("stablehlo.convert")) if kind(t) in ("bool", "signed", "unsigned", "float", "complex")]
    for src in types:
        for dst in types:
            if src == dst:
                continue
            if not full and (src, dst) not in FAST_CONVERT:
                continue
            rng = rng_for(f"stablehlo.convert/{src}/{dst}")
            pool = _pool(src, rng, 6)
            if kind(src) == "float" and kind(dst) == "float":
                # ties and boundaries of the destination: midpoints between neighbours
                fd = float_format(dst)
                for base in (1.0, fd.tiny, fd.max / 2):
                    mid = base + fd.eps * base / 2 if base != fd.tiny else fd.tiny + fd.smallest_subnormal / 2
                    for v in (mid, -mid, base + 3 * fd.eps * base / 2):
                        rv = round_value(v, float_format(src))
                        if rv is not UNSPECIFIED and rv == v:
                            pool.append(v)
            if kind(src) == "float" and kind(dst) in ("signed", "unsigned"):
                lo, hi = int_range(dst)
                pool += [2.5, -2.5, 0.999, -0.999, float(hi) - 0.5 if hi < 2 ** 52 else 2.0 ** 52]
                pool = [round_value(v, float_format(src)) for v in pool]
                pool = [v for v in pool if v is not UNSPECIFIED]
            rows = [(x, convert_element(x, src, dst)) for x in pool]
            rows = [r for r in rows if r[1] is not UNSPECIFIED]
            if not rows:
                continue
            shape = (len(rows),)
            program = single_op_program("stablehlo.convert", [tensor(shape, src)], [tensor(shape, dst)])
            out.append(make_case("stablehlo.convert", src, f"to_{dst}", program, [make_array([r[0] for r in rows], src, shape)],
                                 [make_array([r[1] for r in rows], dst, shape)], [dst], [rule_for(dst, 0)],
                                 "python-exact", "special",
                                 "out-of-range float->int, NaN->int/bool and complex->real are not fixed by the spec: left out"))
    return out


# ---------------------------------------------------------------------------- predicates, parts

def predicate_cases(full: bool, fast) -> List:
    out = []
    preds = {"stablehlo.is_finite": lambda x: math.isfinite(x),
             "chlo.is_inf": lambda x: math.isinf(x),
             "chlo.is_pos_inf": lambda x: x == math.inf,
             "chlo.is_neg_inf": lambda x: x == -math.inf}
    for op, fn in preds.items():
        for et in admitted(_classes(op)):
            if kind(et) != "float" or (fast is not None and et not in fast):
                continue
            vals = _pool(et, rng_for(f"{op}/{et}"), 4)
            shape = (len(vals),)
            out.append(_mk(op, et, "values", [vals], None, [fn(v) for v in vals], "i1", shape))
    for et in ("complex<f32>", "complex<f64>"):
        if fast is not None and et not in fast:
            continue
        vals = _pool(et, None, 0)
        c = component(et)
        shape = (len(vals),)
        out.append(_mk("stablehlo.real", et, "values", [vals], None, [v.real for v in vals], c, shape))
        out.append(_mk("stablehlo.imag", et, "values", [vals], None, [v.imag for v in vals], c, shape))
        re = [v.real for v in vals]
        im = [v.imag for v in vals]
        program = single_op_program("stablehlo.complex", [tensor(shape, c)] * 2, [tensor(shape, et)])
        out.append(make_case("stablehlo.complex", et, "values", program, [make_array(re, c, shape), make_array(im, c, shape)],
                             [make_array(vals, et, shape)], [et], [rule_for(et, 0)], "python-exact", "special"))
    # real operands: real(x) = x, imag(x) = constant(0) (the spec's is_float branches); CHLO
    # conj of a real value is in elementwise.py
    for op in ("stablehlo.real", "stablehlo.imag"):
        for et in admitted(_classes(op)):
            if kind(et) != "float" or (fast is not None and et not in fast):
                continue
            if op == "stablehlo.imag" and et == "f8E8M0FNU":
                continue        # no zero to return: the interpreter refuses (test_generated_type_gaps)
            vals = _pool(et, rng_for(f"{op}/{et}"), 4)
            if float_format(et).unsigned:
                vals = [v for v in vals if not (v < 0 or math.copysign(1.0, v) < 0)]
            shape = (len(vals),)
            exp = [0.0] * len(vals) if op == "stablehlo.imag" else vals
            out.append(_mk(op, et, "real_operand", [vals], None, exp, et, shape,
                           note="NaN operands: real keeps the NaN, imag is +0"))
    return out


# ---------------------------------------------------------------------------- reduce_precision

def reduce_precision_cases(full: bool, fast) -> List:
    out = []
    widths = [(5, 10), (8, 7), (4, 3), (5, 2), (2, 1)]
    for et in admitted(_classes("stablehlo.reduce_precision")):
        if kind(et) != "float" or (fast is not None and et not in fast):
            continue
        fmt = float_format(et)
        emax_src = 2 ** 0
        vals = _pool(et, rng_for(f"stablehlo.reduce_precision/{et}"), 8)
        # f8E8M0FNU (no mantissa bits) only fits mantissa_bits = 0: a narrower exponent range
        for eb, mb in (widths if fmt.precision > 1 else [(5, 0)]):
            if mb > fmt.precision - 1:
                continue
            if not full and (eb, mb) not in ((5, 10), (4, 3)):
                continue
            emax = 2 ** (eb - 1) - 1
            target = FloatFormat(f"e{eb}m{mb}", fmt.dtype, mb + 1, 1 - emax,
                                 math.ldexp(2.0 - math.ldexp(1.0, -mb), emax), True, True, True, True)
            rows = []
            for v in vals:
                if math.isfinite(v) and v != 0 and abs(v) < target.tiny:
                    continue        # whether the reduced format has subnormals is not fixed by the spec
                r = round_value(v, target)
                if r is UNSPECIFIED:
                    continue
                if math.isinf(r) and not fmt.has_inf:
                    continue        # an overflow to inf: the result type has no inf (f8E8M0FNU)
                back = round_value(r, fmt)
                if back is UNSPECIFIED:
                    continue
                rows.append((v, back))
            shape = (len(rows),)
            attrs = f"exponent_bits = {eb} : i32, mantissa_bits = {mb} : i32"
            program = single_op_program("stablehlo.reduce_precision", [tensor(shape, et)], [tensor(shape, et)], attrs)
            out.append(make_case("stablehlo.reduce_precision", et, f"e{eb}m{mb}", program,
                                 [make_array([r[0] for r in rows], et, shape)], [make_array([r[1] for r in rows], et, shape)],
                                 [et], [rule_for(et, 0)], "python-exact", "special",
                                 "the reduced format is IEEE-like: subnormals kept, overflow to inf"))
    return out


# ---------------------------------------------------------------------------- bitcast_convert

def bitcast_cases(full: bool, fast) -> List:
    out = []
    types = [t for t in admitted(_classes("stablehlo.bitcast_convert")) if kind(t) in ("signed", "unsigned", "float")
             and bits(t) >= 8 and t != "tf32"]
    for src in types:
        for dst in types:
            if src == dst or bits(src) != bits(dst):
                continue
            if not full and (src, dst) not in (("f32", "i32"), ("i16", "bf16"), ("f64", "ui64"), ("f8E4M3FN", "i8")):
                continue
            b = bits(src)
            rng = rng_for(f"stablehlo.bitcast_convert/{src}/{dst}")
            patterns = [0, 1, (1 << (b - 1)), (1 << b) - 1] + [int(rng.integers(0, 1 << b, dtype=np.uint64)) for _ in range(8)]
            u = np.array(patterns, dtype=np.uint64).astype(f"u{b // 8}")
            src_arr = u.view(np.dtype(_dtype(src)))
            dst_arr = u.view(np.dtype(_dtype(dst)))      # the same bits, read as dst
            shape = (len(patterns),)
            program = single_op_program("stablehlo.bitcast_convert", [tensor(shape, src)], [tensor(shape, dst)])
            rule = rule_for(dst, 0)
            out.append(make_case("stablehlo.bitcast_convert", src, f"to_{dst}", program, [src_arr], [dst_arr], [dst], [rule],
                                 "bit-pattern", "special", "same bits reinterpreted (numpy view of the pattern)"))
    return out


def _sub_byte_value(et, p):
    """The value whose `bits(et)`-bit encoding is the pattern p: two's complement for signed
    integers, p for unsigned, the format's encoding for floats (ml_dtypes keeps a sub-byte
    float in the low bits of a byte)."""
    b = bits(et)
    if kind(et) == "signed":
        return p - (1 << b) if p >= 1 << (b - 1) else p
    if kind(et) == "unsigned":
        return p
    return float(np.array([p], dtype=np.uint8).view(np.dtype(_dtype(et)))[0])


def bitcast_sub_byte_cases(full: bool, fast) -> List:
    """bitcast_convert between the sub-byte types of one width (i2/ui2; i4/ui4/f4E2M1FN;
    f6E2M3FN/f6E3M2FN) over every bit pattern; i1 and complex to themselves (the in-memory
    layout of booleans and of complex parts is implementation-defined, so a bitcast to another
    type has no fixed result; to the same type it is the identity)."""
    out = []
    ad = admitted(_classes("stablehlo.bitcast_convert"))
    sub = [t for t in ad if kind(t) in ("signed", "unsigned", "float") and 1 < bits(t) < 8]
    for src in sub:
        for dst in sub:
            if src == dst or bits(src) != bits(dst) or (fast is not None and src not in fast):
                continue
            pats = list(range(1 << bits(src)))
            rows = [(_sub_byte_value(src, p), _sub_byte_value(dst, p)) for p in pats]
            shape = (len(rows),)
            program = single_op_program("stablehlo.bitcast_convert", [tensor(shape, src)], [tensor(shape, dst)])
            out.append(make_case("stablehlo.bitcast_convert", src, f"to_{dst}", program,
                                 [make_array([r[0] for r in rows], src, shape)], [make_array([r[1] for r in rows], dst, shape)],
                                 [dst], [rule_for(dst, 0)], "bit-pattern", "special",
                                 "every bit pattern of the width, read as each type"))
    for et in ad:
        if kind(et) not in ("bool", "complex") or (fast is not None and et not in fast):
            continue
        vals = _pool(et, None, 0) if kind(et) == "complex" else [0, 1, 1, 0]
        shape = (len(vals),)
        program = single_op_program("stablehlo.bitcast_convert", [tensor(shape, et)], [tensor(shape, et)])
        out.append(make_case("stablehlo.bitcast_convert", et, "to_self", program, [make_array(vals, et, shape)],
                             [make_array(vals, et, shape)], [et], [rule_for(et, 0)], "bit-pattern", "special",
                             "to the same type: the identity (to another type the layout is implementation-defined)"))
    return out


def _dtype(et):
    from .values import type_info
    return type_info(et).dtype


# ---------------------------------------------------------------------------- next_after

def _mag_index(a: float, fmt: FloatFormat) -> int:
    """The position of the finite magnitude a >= 0 among the format's magnitudes (0 for
    zero, 1 for the smallest nonzero value, ...): for IEEE-like layouts the magnitude's own
    bit pattern. Exact (Fraction -> integer significand)."""
    if a == 0:
        return 0
    half = 1 << (fmt.precision - 1)
    f = Fraction(a)
    e = max(math.frexp(a)[1] - 1, fmt.emin)
    m = f / Fraction(2) ** (e - fmt.precision + 1)            # integer significand
    assert m.denominator == 1, (a, fmt.name)
    m = int(m)
    if fmt.has_subnormals:
        return m if m < half else (e - fmt.emin + 1) * half + (m - half)
    return (e - fmt.emin) * half + (m - half) + (1 if fmt.has_zero else 0)


def _mag_value(i: int, fmt: FloatFormat) -> float:
    """The inverse of _mag_index (beyond the largest finite value: inf or UNSPECIFIED)."""
    if i == 0 and fmt.has_zero:
        return 0.0
    if i > _mag_index(fmt.max, fmt):
        return math.inf if fmt.has_inf else UNSPECIFIED
    half = 1 << (fmt.precision - 1)
    if fmt.has_subnormals:
        if i < half:
            return math.ldexp(i, fmt.emin - fmt.precision + 1)
        e, m = fmt.emin + (i - half) // half, half + (i - half) % half
    else:
        j = i - (1 if fmt.has_zero else 0)
        e, m = fmt.emin + j // half, half + j % half
    return math.ldexp(m, e - fmt.precision + 1)


def next_after_bits(x: float, y: float, fmt: FloatFormat):
    """next_after on the format's magnitude lattice in Python ints: equal -> y; from +-0 one
    step to the smallest magnitude with y's sign; otherwise one step of the magnitude index
    away from or towards zero (sign kept; a step to zero keeps the sign where -0 exists).
    Steps out of the format (past max without inf, below the smallest value without zero,
    to a negative value in an unsigned format) are UNSPECIFIED."""
    if math.isnan(x) or math.isnan(y):
        return math.nan if fmt.has_nan else UNSPECIFIED
    if x == y:
        return y
    if math.isinf(x):
        return math.copysign(fmt.max, x)
    neg = math.copysign(1.0, x) < 0
    if x == 0:
        if y < 0 and fmt.unsigned:
            return UNSPECIFIED
        v = _mag_value(1, fmt)
        return -v if y < 0 else v
    i = _mag_index(abs(x), fmt)
    away = (y > x) == (x > 0)
    j = i + 1 if away else i - 1
    if j < 0:
        return UNSPECIFIED          # below the smallest value of a format without zero
    v = _mag_value(j, fmt)
    if v is UNSPECIFIED:
        return v
    if v == 0:
        return -0.0 if (neg and fmt.has_neg_zero) else 0.0
    return -v if neg else v


def _na_values(fmt: FloatFormat, rng) -> list:
    vals = _pool(fmt.name, rng, 4)
    # the edges: +-0, +-smallest subnormal, +-largest subnormal, +-smallest normal, +-max, +-inf, NaN
    extra = [fmt.smallest_subnormal, fmt.tiny - fmt.smallest_subnormal if fmt.has_subnormals else fmt.tiny,
             fmt.tiny, fmt.max, 1.0, 2.0]
    for v in extra:
        for w in (v, -v):
            r = round_value(w, fmt)
            if r is not UNSPECIFIED and r == w and not any(_same_float(r, o) for o in vals):
                vals.append(r)
    if fmt.unsigned:
        vals = [v for v in vals if math.isnan(v) or v > 0]
    return vals


def _same_float(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def next_after_cases(full: bool, fast) -> List:
    out = []
    op = "chlo.next_after"
    for et in admitted(_classes(op)):
        if kind(et) != "float" or (fast is not None and et not in fast):
            continue
        fmt = float_format(et)
        vals = _na_values(fmt, rng_for(f"{op}/{et}"))
        dirs = [v for v in (math.inf, -math.inf, 0.0, -0.0, 1.0, math.nan, fmt.max)
                if (r := round_value(v, fmt)) is not UNSPECIFIED and _same_float(r, v)
                and not (fmt.unsigned and (v < 0 or math.copysign(1, v) < 0))]
        pairs = [(a, b) for a in vals for b in dirs]
        rows = [(a, b, next_after_bits(a, b, fmt)) for a, b in pairs]
        rows = [r for r in rows if r[2] is not UNSPECIFIED]
        shape = (len(rows),)
        out.append(_mk(op, et, "values", [[r[0] for r in rows], [r[1] for r in rows]], None, [r[2] for r in rows], et, shape,
                       note="exact: one step on the format's magnitude lattice (Python ints); steps out of the "
                            "format (past max without inf, below the smallest value without zero) left out"))
        # chlo.broadcast_next_after: lhs 3x1 against rhs 1x4
        bop = "chlo.broadcast_next_after"
        lhs = [v for v in vals if not math.isnan(v) and math.isfinite(v) and v != 0][:3]
        rhs = dirs[:4]
        grid = [[next_after_bits(a, b, fmt) for b in rhs] for a in lhs]
        # (f8E8M0FNU has no infinities, zeros or negative values: three directions)
        if len(lhs) == 3 and len(rhs) >= 2 and all(v is not UNSPECIFIED for row in grid for v in row):
            m = len(rhs)
            program = single_op_program(bop, [tensor((3, 1), et), tensor((1, m), et)], [tensor((3, m), et)])
            out.append(make_case(bop, et, "size1_both", program,
                                 [make_array(lhs, et, (3, 1)), make_array(rhs, et, (1, m))],
                                 [make_array([v for row in grid for v in row], et, (3, m))], [et], [rule_for(et, 0)],
                                 "python-exact", "special", "numpy-style broadcasting; exact lattice steps"))
    return out


# ---------------------------------------------------------------------------- zeta, polygamma

# f64 bounds (ULP) of this suite for the Euler-Maclaurin zeta and polygamma = (-1)^(n+1) n!
# zeta(n + 1, x); narrower types: 1 ULP (computing in f64 and rounding once meets it).
ZETA_ULP_F64 = 4
POLYGAMMA_ULP_F64 = 8           # n = 0 is digamma; measured: zeta 3, polygamma 5 ULP at most


def _representable(vals, fmt):
    out = []
    for v in vals:
        if v is UNSPECIFIED:
            continue
        r = round_value(v, fmt)
        if r is not UNSPECIFIED and (r == v or (math.isnan(v) and math.isnan(r))):
            out.append(v)
    return out


def _zeta_exact(s: float, q: float):
    """zeta(s, q) as CHLO defines it (its decomposition, which XLA, IREE and upstream's
    interpreter agree on): +inf at s == 1 for every q (NaN included: that test comes last);
    NaN for NaN operands and s < 1; otherwise the Hurwitz sum. Negative q (not an integer)
    with integer s: the convergent sum over (q + k)^-s (_hurwitz_neg_q), except next to the
    zeros that it has for odd s (NEAR_ZERO). Left out: integer q <= 0 (poles) and negative q
    with non-integer s (CHLO's NaN of a domain error, which the spec of chlo.zeta does not
    state)."""
    if s == 1:
        return math.inf
    if math.isnan(s) or math.isnan(q):
        return math.nan
    if s < 1:
        return math.nan
    if math.isinf(s) or math.isinf(q):
        return UNSPECIFIED
    if q <= 0:
        if q == math.floor(q) or s != math.floor(s):
            return UNSPECIFIED
        return _hurwitz_neg_q(int(s), q)
    return _guarded(lambda: mpmath.zeta(mpmath.mpf(s), mpmath.mpf(q)))


# zeta(s, q) at negative q for odd s changes sign between consecutive negative integers;
# right at those zeros no f64 method short of one expanding about each zero keeps a few ULP
# (the result is a tiny difference of the sum's parts). Points whose result is smaller than
# 1/NEAR_ZERO of the sum's part past the mirror image of its negative terms, zeta(s, 1 - q),
# are left out (there the reference's error grows as that part's last-bit errors over the
# result: 1 ULP at 1/64, 3 at 1/600, 15 at 1/4000, measured).
NEAR_ZERO = 64


def _hurwitz_neg_q(s: int, q: float):
    """sum_k (q + k)^-s for q < 0 not an integer and integer s > 1: the m = ceil(-q) terms
    with negative bases summed directly, plus mpmath's Hurwitz zeta at q + m in (0, 1), at
    enough bits for the cancellation of those terms (s log2 of the largest term over the
    smallest result kept), computed twice with 128 more bits and checked to agree; UNSPECIFIED
    next to a zero (NEAR_ZERO)."""
    m = math.ceil(-q)
    smallest = min(abs(q + k) for k in range(m + 1))
    bits = 256 + int(s * (math.log2(1 / smallest) + math.log2(2 + abs(q)))) + 64 + int(math.log2(NEAR_ZERO))

    def direct(prec):
        with mpmath.workprec(prec):
            qm = mpmath.mpf(q)
            return +(mpmath.fsum((qm + k) ** -s for k in range(m)) + mpmath.zeta(s, qm + m))
    r, r2 = direct(bits), direct(bits + 128)
    with workprec():
        assert r2 == 0 or abs(r - r2) <= abs(r2) * mpmath.mpf(2) ** -200, (s, q, r, r2)
        if s % 2 and abs(r2) * NEAR_ZERO < mpmath.zeta(s, 1 - mpmath.mpf(q)):
            return UNSPECIFIED
    return r2


def _guarded(fn):
    """fn() at the suite's 256 bits, and again with as many more bits as the result is small:
    mpmath forms zeta(s, q) for integer q as zeta(s) - sum_{k<q} k^-s, which cancels to
    about 2^-(s log2 q) (at 256 bits zeta(30, 4096) came out wrong from the 11th digit)."""
    with workprec():
        r = fn()
    m = mpmath.mag(r) if r != 0 and mpmath.isfinite(r) else 0
    if m < -32:
        with mpmath.workprec(256 - m + 64):
            r2 = fn()
        with mpmath.workprec(256 - 2 * m + 128):
            r3 = fn()
        assert abs(r2 - r3) <= abs(r3) * mpmath.mpf(2) ** -200, (r2, r3)
        return r3
    return r


def _polygamma_exact(n: float, x: float):
    """psi^(n)(x): NaN for NaN operands and for n negative or not an integer; poles
    (x a non-positive integer) left out; negative x for n > 0 as (-1)^(n+1) n! zeta(n + 1, x)
    (_hurwitz_neg_q; points next to zeta's zeros left out, for even n)."""
    if math.isnan(n) or math.isnan(x) or n < 0 or n != math.floor(n) or math.isinf(n):
        return math.nan
    if math.isinf(x) or (x <= 0 and x == math.floor(x)):
        return UNSPECIFIED
    if x < 0 and n != 0:
        z = _hurwitz_neg_q(int(n) + 1, x)
        if z is UNSPECIFIED:
            return UNSPECIFIED
        with workprec():
            return (-1) ** (int(n) + 1) * mpmath.factorial(int(n)) * z
    return _guarded(lambda: mpmath.polygamma(int(n), mpmath.mpf(x)))


def _two_arg_cases(op, bop, et, rows_in, fn, ulp, note, full, bcast_lhs, bcast_rhs, variant="values"):
    fmt = float_format(et)
    rows = []
    for a, b in rows_in:
        v = fn(a, b)
        if v is UNSPECIFIED:
            continue
        r = round_value(v, fmt) if not (isinstance(v, float) and math.isnan(v)) else (math.nan if fmt.has_nan else UNSPECIFIED)
        if r is UNSPECIFIED:
            continue
        rows.append((a, b, r))
    out = []
    if rows:
        shape = (len(rows),)
        out.append(_mk(op, et, variant, [[r[0] for r in rows], [r[1] for r in rows]], None, [r[2] for r in rows], et,
                       shape, ulp=ulp, oracle="mpmath", note=note))
    # the broadcast op: lhs 3x1 against rhs 1x4, every element specified
    lhs, rhs = [], list(bcast_rhs)[:4]
    for a in bcast_lhs:
        vals = [fn(a, b) for b in rhs]
        rs = [round_value(v, fmt) if v is not UNSPECIFIED else UNSPECIFIED for v in vals]
        if all(r is not UNSPECIFIED for r in rs):
            lhs.append((a, rs))
        if len(lhs) == 3:
            break
    if not (len(lhs) == 3 and len(rhs) == 4) and bop is not None:
        # narrow formats: most results overflow or are not representable; the largest grid
        # (at least 1x2 against... lhs n x 1, rhs 1 x m, m >= 2) of fully specified results
        lhs, rhs = _specified_grid(fn, fmt, list(bcast_lhs), list(bcast_rhs))
    if lhs and len(rhs) >= 2 and bop is not None:
        n, m = len(lhs), len(rhs)
        program = single_op_program(bop, [tensor((n, 1), et), tensor((1, m), et)], [tensor((n, m), et)])
        exp = [r for _, rs in lhs for r in rs]
        out.append(make_case(bop, et, "size1_both", program,
                             [make_array([a for a, _ in lhs], et, (n, 1)), make_array(rhs, et, (1, m))],
                             [make_array(exp, et, (n, m))], [et], [rule_for(et, ulp)], "mpmath", "special",
                             "numpy-style broadcasting; " + note))
    return out


def _specified_grid(fn, fmt, lhs_cands, rhs_cands):
    """Up to 3 lhs and 4 rhs values (at least 1 and 2) whose every result is specified in
    `fmt`, the largest such grid found: ([(a, [results])], [b])."""
    import itertools
    table = {}
    for a in lhs_cands:
        for b in rhs_cands:
            v = fn(a, b)
            table[a, b] = round_value(v, fmt) if v is not UNSPECIFIED else UNSPECIFIED
    for size in ((3, 4), (3, 3), (2, 4), (2, 3), (3, 2), (2, 2), (1, 4), (1, 3), (1, 2)):
        n, m = size
        for cols in itertools.combinations(rhs_cands, m):
            rows = [a for a in lhs_cands if all(table[a, b] is not UNSPECIFIED for b in cols)]
            if len(rows) >= n:
                return [(a, [table[a, b] for b in cols]) for a in rows[:n]], list(cols)
    return [], []


def _odd_int(v) -> bool:
    return not math.isnan(v) and v == math.floor(v) and int(v) % 2 == 1


def zeta_polygamma_cases(full: bool, fast) -> List:
    """`values` (and the broadcast ops' `size1_both`): the grids below; `negative_q` /
    `negative_x`: zeta(s, q < 0) for odd s and polygamma(n, x < 0) for even n > 0, where the
    Hurwitz sum's negative terms cancel against the positive ones (cases of their own, so
    that `values` keeps the rows it had)."""
    out = []
    s_vals = [1.0, 0.5, 0.0, -2.0, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0, 7.25, 12.0, 30.0, 1.0 + 2.0 ** -10, math.nan]
    q_vals = [0.25, 0.5, 1.0, 1.5, 2.0, 3.75, 10.0, 100.0, 4096.0, -0.5, -2.5, -3.25, 2.0 ** -6, math.nan]
    n_vals = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 8.0, 0.5, -1.0, math.nan]
    x_vals = [0.25, 0.5, 1.0, 1.5, 2.0, 3.75, 10.0, 100.0, 2.0 ** -6, -0.5, -2.5, -3.25, -1.75, 1.4616321449683622,
              math.nan]
    neg_s = [3.0, 5.0, 9.0, 13.0]
    neg_q = [-0.5, -2.5, -3.25, -0.75, -1.375, -6.625, -10.5, -(2.0 ** -6), -0.96875]
    neg_n = [2.0, 4.0, 8.0]
    neg_note = ("the terms (q + k)^-s of negative bases cancel against the positive ones (to zero for "
                "half-integer q): the convergent sum, as CHLO's decomposition defines it there; points next to "
                "a zero (|zeta| < zeta(s, 1 - q) / 64) left out")
    for et in admitted(_classes("chlo.zeta")):
        if kind(et) != "float" or (fast is not None and et not in fast):
            continue
        fmt = float_format(et)
        rng = rng_for(f"chlo.zeta/{et}")
        ss = _representable(s_vals, fmt)
        qs = _representable(q_vals + [round_value(float(rng.uniform(0.1, 8)), fmt) for _ in range(6 if full else 2)], fmt)
        if fmt.unsigned:
            ss = [v for v in ss if math.isnan(v) or v > 0]
            qs = [v for v in qs if math.isnan(v) or v > 0]
        pairs = [(a, b) for a in ss for b in qs]
        if not full:
            pairs = pairs[::3]
        pairs = [(a, b) for a, b in pairs if not (_odd_int(a) and a > 1 and b < 0)]
        ulp = ZETA_ULP_F64 if et == "f64" else 1
        out += _two_arg_cases("chlo.zeta", "chlo.broadcast_zeta", et, pairs, _zeta_exact, ulp,
                              "Hurwitz zeta(x, q): NaN for x < 1, inf at x == 1; negative q with even integer x "
                              "(odd x: case negative_q)",
                              full, [v for v in ss if not math.isnan(v) and v > 1], [v for v in qs if not math.isnan(v) and v > 0])
        ns = _representable(n_vals, fmt)
        xs = _representable(x_vals + [round_value(float(rng.uniform(-4, 8)), fmt) for _ in range(6 if full else 2)], fmt)
        xs = [v for v in xs if v is not UNSPECIFIED]
        if fmt.unsigned:
            ns = [v for v in ns if math.isnan(v) or v >= 0]
            xs = [v for v in xs if math.isnan(v) or v > 0]
        pairs = [(a, b) for a in ns for b in xs]
        if not full:
            pairs = pairs[::3]
        pairs = [(a, b) for a, b in pairs if not (b < 0 and a > 0 and not math.isnan(a) and a == math.floor(a) and int(a) % 2 == 0)]
        ulp = POLYGAMMA_ULP_F64 if et == "f64" else 1
        out += _two_arg_cases("chlo.polygamma", "chlo.broadcast_polygamma", et, pairs, _polygamma_exact, ulp,
                              "psi^(n)(x): NaN for n < 0 or not an integer; poles left out; negative x with even n > 0 "
                              "in case negative_x", full, [v for v in ns if not math.isnan(v) and v >= 1],
                              [v for v in xs if not math.isnan(v) and v > 0])
        if fmt.unsigned:
            continue
        # negative q with odd s, negative x with even n
        rng = rng_for(f"chlo.zeta/{et}/negative")
        extra = [round_value(-float(rng.uniform(0.01, 8)), fmt) for _ in range(6 if full else 2)]
        qs = [v for v in _representable(neg_q + extra, fmt) if v != math.floor(v)]
        ss = _representable(neg_s if full else neg_s[:2], fmt)
        out += _two_arg_cases("chlo.zeta", None, et, [(a, b) for a in ss for b in qs], _zeta_exact,
                              ZETA_ULP_F64 if et == "f64" else 1, "Hurwitz zeta(x, q) for odd x and q < 0: " + neg_note,
                              full, [], [], variant="negative_q")
        ns = _representable(neg_n if full else neg_n[:2], fmt)
        out += _two_arg_cases("chlo.polygamma", None, et, [(a, b) for a in ns for b in qs], _polygamma_exact,
                              POLYGAMMA_ULP_F64 if et == "f64" else 1,
                              "psi^(n)(x) = (-1)^(n+1) n! zeta(n + 1, x) for even n > 0 and x < 0: " + neg_note,
                              full, [], [], variant="negative_x")
    return out


def all_special(full: bool, fast) -> List:
    out = []
    for gen in (compare_cases, select_clamp_cases, convert_cases, predicate_cases, reduce_precision_cases,
                bitcast_cases, bitcast_sub_byte_cases, next_after_cases, zeta_polygamma_cases):
        out.extend(gen(full, fast))
    return out
