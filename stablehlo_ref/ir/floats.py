"""Float literals as MLIR writes them: the shortest text among MLIR's own choices (six
significant digits, then the type's natural precision, then hex bits) that reads back to
exactly the same value of the element type. Types, attributes and the printer share it."""
from __future__ import annotations

import math

import numpy as np

from .. import spec as _spec

# This module sits below types.py (QuantizedType prints its scales with format_float), so it
# tells an ir.types.ElementType by its kind, one of the spec's element-type kinds.
_ELEMENT_KINDS = frozenset(e.kind for e in _spec.element_types())


def _is_element_type(et) -> bool:
    return getattr(et, "kind", None) in _ELEMENT_KINDS

def format_float(v, et) -> str:
    """A float literal that reads back to exactly `v` in type `et` (hex bits for NaN/inf)."""
    fv = float(v)
    if math.isnan(fv) or math.isinf(fv):
        if _is_element_type(et) and et.is_float and et.name != "tf32":
            with np.errstate(over="ignore", invalid="ignore"):
                arr = np.array([v]).astype(et.dtype)
            bits = int.from_bytes(arr.tobytes(), "little")
            width = arr.dtype.itemsize * 2
            return "0x%0*X" % (width, bits)
        return "0x7FF8000000000000" if math.isnan(fv) else ("0x7FF0000000000000" if fv > 0 else "0xFFF0000000000000")
    # MLIR's form (APFloat::toString with six significant digits, rounded half up from the
    # exact value, zero-padded to six after the point) when that reads back to the same value,
    # else the natural precision of the type
    s6 = _six_digits(fv)
    if _reads_back(s6, fv, et):
        return s6
    mant_bits = _MANTISSA_BITS.get(et.name if _is_element_type(et) else "f64")
    if mant_bits is not None:
        full = _natural_precision_text(fv, 2 + mant_bits * 59 // 196)
        if "." in full and _reads_back(full, fv, et):
            return full
        if "." not in full and _is_element_type(et) and et.is_float and et.name != "tf32":
            with np.errstate(over="ignore"):       # MLIR then writes the bits in hex
                arr = np.array([fv]).astype(et.dtype)
            return "0x%0*X" % (arr.dtype.itemsize * 2, int.from_bytes(arr.tobytes(), "little"))
    if _is_element_type(et) and et.name in ("f32",):
        s = np.format_float_scientific(np.float32(fv), unique=True, exp_digits=2)
    elif _is_element_type(et) and et.name == "f16":
        s = np.format_float_scientific(np.float16(fv), unique=True, exp_digits=2)
    else:
        s = np.format_float_scientific(fv, unique=True, exp_digits=2)
    mant, _, exp = s.partition("e")
    if "." not in mant:
        mant += ".0"
    elif mant.endswith("."):
        mant += "0"
    return f"{mant}e{exp}"


_MANTISSA_BITS = {"f64": 53, "f32": 24, "f16": 11, "bf16": 8}


def format_complex_part(v, part) -> str:
    """The real or imaginary part of a `#complex.number<:f32 re, im>`, of float type `part`.
    MLIR reads a part as a double and then rounds it to `part`, so hex text there is a
    double's bits: NaN, inf, and values whose decimal text would not read back, are written
    as a double (f64 hex bits for NaN and inf), which rounds back to the same `part` value."""
    text = format_float(v, part)
    if text.lstrip("-").startswith("0x") and getattr(part, "name", "f64") != "f64":
        text = format_float(v, None)        # (None: as an f64)
    return text


def _apfloat_digits(fv: float, precision: int):
    """(digits, exp) with |fv| ~ int(digits) * 10**exp, as LLVM's APFloat::toString finds them
    for `precision` significant digits: the exact value's digits are first cut by a truncating
    division sized from bit counts, then rounded half up on the next digit; no trailing zeros."""
    m, e = math.frexp(abs(fv))
    m = int(m * (1 << 53))
    e -= 53
    if m == 0:
        return "0", 0
    tz = (m & -m).bit_length() - 1
    m >>= tz
    e += tz
    if e >= 0:
        n, exp = m << e, 0
    else:
        n, exp = m * 5 ** (-e), e
    bits = n.bit_length()
    required = (precision * 196 + 58) // 59
    if bits > required:
        removable = (bits - required) * 59 // 196
        if removable:
            exp += removable
            n //= 10 ** removable
    digits = str(n)
    kept = digits.rstrip("0")
    exp += len(digits) - len(kept)
    digits = kept
    if len(digits) > precision:
        exp += len(digits) - precision
        if digits[precision] < "5":
            digits = digits[:precision]
        else:
            digits = str(int(digits[:precision]) + 1)    # 99..9 + 1 carries into one more digit
        kept = digits.rstrip("0")
        exp += len(digits) - len(kept)
        digits = kept
    return digits, exp


def _six_digits(fv: float) -> str:
    """`fv` as MLIR first tries to write a float: APFloat::toString with six significant
    digits and zeros kept, `d.dddddde+XX`."""
    sign = "-" if math.copysign(1.0, fv) < 0 else ""
    if fv == 0:
        return sign + "0.000000e+00"
    digits, exp = _apfloat_digits(fv, 6)
    e10 = exp + len(digits) - 1
    mant = digits[0] + "." + digits[1:] + "0" * (6 - len(digits) + 1)
    return f"{sign}{mant}e{'+' if e10 >= 0 else '-'}{abs(e10):02d}"


def _natural_precision_text(fv: float, precision: int) -> str:
    """A float as MLIR writes one that six digits cannot hold: `precision` significant digits,
    trailing zeros dropped, plain notation unless that needs more than 3 padding zeros."""
    sign = "-" if fv < 0 else ""
    digits, exp = _apfloat_digits(fv, precision)
    nd = len(digits)
    if exp >= 0:
        scientific = exp > 3 or nd + exp > precision
    else:
        msd = exp + nd - 1
        scientific = msd < 0 and -msd > 3
    if scientific:
        exp += nd - 1
        return f"{sign}{digits[0]}.{digits[1:] or '0'}E{'+' if exp >= 0 else '-'}{abs(exp)}"
    if exp >= 0:
        return sign + digits + "0" * exp
    whole = exp + nd
    if whole > 0:
        return f"{sign}{digits[:whole]}.{digits[whole:]}"
    return f"{sign}0.{'0' * -whole}{digits}"


def _reads_back(text: str, fv: float, et) -> bool:
    back = float(text)
    if back == fv:
        return True
    if not _is_element_type(et) or not et.is_float or et.name == "f64":
        return False
    try:
        dt = et.dtype
        with np.errstate(over="ignore", invalid="ignore"):     # (past the range: both inf)
            return np.array(back).astype(dt).tobytes() == np.array(fv).astype(dt).tobytes()
    except (TypeError, ValueError, AttributeError):
        return False
