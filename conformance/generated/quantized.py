"""Generated cases of uniform_quantize and uniform_dequantize, as one round trip with float
inputs and outputs (a quantized tensor cannot be a program's argument in every backend's
calling convention): x -> uniform_quantize -> uniform_dequantize -> f32. The oracle follows
the spec's `quantize` and `dequantize` in exact fractions: x / scale rounded to the
expressed type, plus the zero point rounded to the expressed type, clamped to the storage
range, rounded to the nearest integer (ties to even); then q - zero point (in the storage
type: values for which that would overflow are left out) times the scale, rounded once to
the expressed type.
The second case of each pair names uniform_dequantize (the same program: both ops are
needed to observe either)."""
from __future__ import annotations

import math
from fractions import Fraction
from typing import List

from .build import make_case, rule_for
from .formats import float_format, round_value
from .program import ProgramBuilder, tensor
from .values import make_array

# storage type, storage range, expressed type, scale, zero point
CONFIGS = [
    ("i8", (-128, 127), "f32", 0.5, -3),
    ("i8", (-127, 127), "f32", 0.1, 5),
    ("ui8", (0, 255), "f32", 0.25, 128),
    ("i4", (-8, 7), "f32", 1.5, 0),
    ("i16", (-32768, 32767), "f32", 0.001, 10),
    # other expressed types
    ("i8", (-128, 127), "bf16", 0.5, -3),
    ("i8", (-128, 127), "f16", 0.25, 2),
    ("i8", (-127, 127), "f64", 0.1, 5),
] + [("i4", (-8, 7), et, 0.5, 1) for et in ("f4E2M1FN", "f6E2M3FN", "f6E3M2FN", "f8E3M4", "f8E4M3", "f8E4M3FN",
                                             "f8E4M3FNUZ", "f8E4M3B11FNUZ", "f8E5M2", "f8E5M2FNUZ")]


def _qtype(storage, rng, expressed, scale, zp):
    s = {"ui8": "u8"}.get(storage, storage)
    full = rng == ((-(1 << (int(s.lstrip("iu")) - 1)), (1 << (int(s.lstrip("iu")) - 1)) - 1) if s.startswith("i")
                   else (0, (1 << int(s.lstrip("u"))) - 1))
    st = s if full else f"{s}<{rng[0]}:{rng[1]}>"
    return f"!quant.uniform<{st}:{expressed}, {scale:.9g}:{zp}>"


def _values(scale, zp, rng):
    """Inputs around and past the storage range, on rounding ties of x / scale, and zeros."""
    lo, hi = rng
    s = scale
    vals = [0.0, -0.0, s, -s, 2.5 * s, 3.5 * s, -2.5 * s, 0.5 * s, -0.5 * s, 1.5 * s,
            (hi - zp) * s, (hi - zp + 1) * s, (lo - zp) * s, (lo - zp - 3) * s, 1e6, -1e6, 0.3, -0.7, 1.0, 2.0]
    return [float(v) for v in vals]


def _finite(v) -> bool:
    return isinstance(v, float) and math.isfinite(v)


def round_trip_oracle(xs, scale, zp, rng, expressed="f32"):
    """The spec's quantize then dequantize of each value, or None where the spec's
    dequantize would compute q - zero_point past the storage type (it subtracts in the
    storage type; such values are left out)."""
    fmt = float_format(expressed)
    sc = Fraction(round_value(scale, fmt))
    out = []
    for x in xs:
        r1 = round_value(Fraction(x) / sc, fmt)                        # x / scale in the expressed type
        r2 = round_value(Fraction(r1) + zp, fmt) if _finite(r1) else None     # + zero point, in the expressed type
        if not _finite(r2):
            out.append(None)             # past the expressed type's range (no inf in some formats): left out
            continue
        scaled, shifted = Fraction(r1), Fraction(r2)
        clamped = min(max(shifted, Fraction(rng[0])), Fraction(rng[1]))
        n = math.floor(clamped)
        if clamped - n > Fraction(1, 2) or (clamped - n == Fraction(1, 2) and n % 2):
            n += 1                                                       # round_nearest_even
        if not rng[0] <= n - zp <= rng[1]:
            out.append(None)
            continue
        r = round_value((n - zp) * sc, fmt)
        out.append(r if _finite(r) else None)
    return out


def quantize_cases(full, fast) -> List:
    out = []
    for storage, rng, expressed, scale, zp in (CONFIGS if full else CONFIGS[:3]):
        if fast is not None and expressed not in fast:
            continue
        qt = _qtype(storage, rng, expressed, scale, zp)
        xs = [round_value(v, float_format(expressed)) for v in _values(scale, zp, rng)]
        # (inputs past the expressed type's range are left out: where they round is not this op's subject)
        xs = [x for x in xs if _finite(x)]
        exp = round_trip_oracle(xs, scale, zp, rng, expressed)
        xs = [x for x, e in zip(xs, exp) if e is not None]
        exp = [e for e in exp if e is not None]
        n = len(xs)
        tf, tq = tensor((n,), expressed), f"tensor<{n}x{qt}>"
        b = ProgramBuilder([tf])
        q = b.op("stablehlo.uniform_quantize", [(b.arg(0), tf)], [tq])[0]
        d = b.op("stablehlo.uniform_dequantize", [(q, tq)], [tf])[0]
        prog = b.text([(d, tf)])
        variant = f"{storage}_s{scale:g}_zp{zp}" + ("" if rng[0] != -127 else "_narrow")
        for op in ("stablehlo.uniform_quantize", "stablehlo.uniform_dequantize"):
            out.append(make_case(op, expressed, variant, prog, [make_array(xs, expressed, (n,))],
                                 [make_array(exp, expressed, (n,))], [expressed], [rule_for(expressed, 0)],
                                 "python-exact", "quantized",
                                 f"round trip through {qt} as the spec's quantize/dequantize: (x / scale + zero point) "
                                 f"in {expressed}, clamped, ties to even; then (q - zero point) * scale; values whose "
                                 "q - zero point overflows the storage type left out",
                                 ("stablehlo.uniform_quantize", "stablehlo.uniform_dequantize")))
    return out


def all_quantized(full, fast) -> List:
    return quantize_cases(full, fast)
