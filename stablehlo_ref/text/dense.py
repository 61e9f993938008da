"""Building numpy arrays for `dense<...>` literals (list, splat and hex forms) and turning them
back into text. Hex payloads go straight through `np.frombuffer`."""
from __future__ import annotations

import math
import re

import numpy as np

from ..ir.types import ElementType, QuantizedType, TensorType

_TOKEN = re.compile(r"\s*(?:(\[)|(\])|(\()|(\))|(,)|(true|false)|([-+]?0x[0-9a-fA-F]+)|"
                    r"([-+]?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+|inf|nan))|([-+]?\d+))")


def storage_element(t) -> ElementType:
    et = t.element_type if isinstance(t, TensorType) else t
    return et.storage_type if isinstance(et, QuantizedType) else et


def bits_to_float(value: int, et: ElementType) -> float:
    """Interpret an integer bit pattern (MLIR's hex float syntax) as a value of type et."""
    dt = et.dtype
    nbytes = dt.itemsize
    raw = (value & ((1 << (8 * nbytes)) - 1)).to_bytes(nbytes, "little")
    return np.frombuffer(raw, dtype=dt)[0]


class TooDeep(Exception):
    """Brackets of a dense literal nested deeper than the parser's nesting limit allows."""


def _parse_literal_list(text: str, max_depth: int = 1 << 30):
    """Parse the inside of `dense<...>` (not hex) into nested Python lists of scalars; ints stay
    ints, floats are floats, hex stays ('hex', int), complex pairs become tuples."""
    pos = 0
    n = len(text)
    stack = [[]]
    while True:
        m = _TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip() == "":
                break
            raise ValueError(f"unexpected text in dense literal: {text[pos:pos + 20]!r}")
        pos = m.end()
        if m.group(1) or m.group(3):
            stack.append([])
            if len(stack) > max_depth:
                raise TooDeep()
        elif m.group(2) or m.group(4):
            if len(stack) < 2:
                raise ValueError("unbalanced ']' or ')' in dense literal")
            lst = stack.pop()
            if m.group(4):
                if len(lst) != 2 or any(isinstance(x, (list, tuple)) and x[:1] != ("hex",) for x in lst):
                    raise ValueError("a complex literal is a pair (re, im) of numbers")
                stack[-1].append(tuple(lst))
            else:
                stack[-1].append(lst)
        elif m.group(5):
            pass
        elif m.group(6):
            stack[-1].append(m.group(6) == "true")
        elif m.group(7):
            stack[-1].append(("hex", _int(m.group(7), 16)))
        elif m.group(8):
            stack[-1].append(_float(m.group(8)))
        elif m.group(9):
            stack[-1].append(_int(m.group(9), 10))
        if len(stack) == 1 and len(stack[0]) > 1:
            raise ValueError("expected one dense literal, found more (missing '[')")
        if not stack:
            raise ValueError("unbalanced ']' or ')' in dense literal")
        if pos >= n:
            break
    if len(stack) != 1 or len(stack[0]) != 1:
        raise ValueError("unbalanced brackets in dense literal")
    return stack[0][0]


# Digits past which no element type can hold an integer literal (ui64: 20 digits, 16 hex).
_MAX_DIGITS = 400


def _int(text: str, base: int) -> int:
    digits = text.lstrip("+-")
    if base == 16:
        digits = digits[2:]
    if len(digits) > _MAX_DIGITS:
        raise ValueError(f"integer literal of {len(digits)} digits is too large")
    v = int(digits, base)
    return -v if text.startswith("-") else v


def _float(text: str) -> float:
    if len(text) > 1000:
        raise ValueError(f"float literal of {len(text)} characters is too long")
    return float(text)


def _flatten(x, shape_out, depth=0):
    if isinstance(x, list) and len(shape_out) <= depth and depth > 64:
        raise ValueError(f"dense literal of rank {depth} is deeper than any tensor type")
    if isinstance(x, list):
        if len(shape_out) <= depth:
            shape_out.append(len(x))
        elif shape_out[depth] != len(x):
            raise ValueError("ragged dense literal")
        out = []
        for e in x:
            out.extend(_flatten(e, shape_out, depth + 1))
        if not x and len(shape_out) == depth + 1:
            pass
        return out
    return [x]


def _is_hex(v) -> bool:
    return isinstance(v, tuple) and len(v) == 2 and v[0] == "hex"


def _scalar_to(et: ElementType, v):
    if _is_hex(v):
        if et.is_float:
            return bits_to_float(v[1], et)
        return v[1]
    if isinstance(v, tuple):
        raise ValueError(f"complex literal {v} for elements of type {et}")
    return v


def _to_float(v) -> float:
    try:
        return float(v)
    except OverflowError:
        raise ValueError(f"integer literal {str(v)[:40]} is out of range for a floating-point type") from None


def _check_int_range(flat, et: ElementType) -> None:
    """Decimal integers must fit the element type as MLIR reads them: a magnitude of at most
    `bits` bits, a negative value down to -2^(bits-1), none for unsigned types (and positive
    index values below 2^(bits-1))."""
    bits = et.bits
    for v in flat:
        if _is_hex(v):
            # a hexadecimal literal is the bit pattern: it must fit in the type's width
            if v[1] >> bits:
                raise ValueError("integer constant out of range for type")
            continue
        if not isinstance(v, int) or isinstance(v, bool):
            continue
        if v < 0 and et.is_unsigned:
            raise ValueError("expected unsigned integer elements, but parsed negative value")
        if v >= (1 << (bits - 1 if et.kind == "index" else bits)) or v < -(1 << (bits - 1)):
            raise ValueError("integer constant out of range for type")


def array_from_literal(text: str, ttype: TensorType, max_depth: int = 1 << 30) -> np.ndarray:
    """The elements of a `dense<...>` literal as an array of the tensor type. A float past the
    element type's range rounds to inf, as MLIR's APFloat conversion does (no numpy warning)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return _array_from_literal(text, ttype, max_depth)


def _array_from_literal(text: str, ttype: TensorType, max_depth: int = 1 << 30) -> np.ndarray:
    """`text` is what stands between `dense<` and `>` (not a hex string); brackets nested
    deeper than `max_depth` raise TooDeep."""
    et = storage_element(ttype)
    shape = tuple(ttype.shape)
    if text.strip() == "":
        if math.prod(shape) != 0:
            raise ValueError(f"empty dense literal for non-empty type {ttype}")
        return np.zeros(shape, dtype=et.dtype)
    value = _parse_literal_list(text, max_depth)
    dims: list = []
    flat = _flatten(value, dims)
    dt = et.dtype
    count = math.prod(shape) if shape else 1
    if (et.is_float or et.is_complex) and any(
            isinstance(v, int) and not isinstance(v, bool)
            or isinstance(v, tuple) and v[:1] != ("hex",)
            and any(isinstance(x, int) and not isinstance(x, bool) for x in v)
            for v in flat):
        raise ValueError("unexpected decimal integer literal for a floating point value "
                         "(add a trailing dot to make the literal a float)")
    if et.is_complex and not all(isinstance(v, tuple) and len(v) == 2 and v[0] != "hex" for v in flat):
        raise ValueError("expected complex elements as (real, imaginary) pairs")
    if et.is_float and any(isinstance(v, tuple) and v[:1] == ("hex",) and v[1] >> et.bits for v in flat):
        raise ValueError("hexadecimal float constant out of range for type")
    if et.is_complex:
        vals = []
        part = ELEM_OF_COMPLEX[et.name]
        for v in flat:
            if isinstance(v, bool):
                raise ValueError("expected complex elements, got a boolean")
            if isinstance(v, tuple) and v and v[0] != "hex":
                if any(_is_hex(p) and p[1] >> part.bits for p in v):
                    raise ValueError("hexadecimal float constant out of range for type")
                re_, im = (_scalar_to(part, p) for p in v)
                if isinstance(re_, bool) or isinstance(im, bool):
                    raise ValueError("expected complex elements, got a boolean")
                vals.append(complex(_to_float(re_), _to_float(im)))
            else:
                vals.append(complex(_to_float(_scalar_to(part, v))))
        arr = np.array(vals, dtype=dt)
    elif et.is_float:
        if any(isinstance(v, bool) for v in flat):
            raise ValueError(f"expected floating-point elements for {et}, got a boolean")
        vals = [_scalar_to(et, v) for v in flat]
        vals = [v if isinstance(v, (float, np.generic)) else _to_float(v) for v in vals]
        if any(isinstance(v, np.generic) for v in vals):
            arr = np.empty(len(vals), dtype=dt)
            for i, v in enumerate(vals):
                arr[i] = v
        else:
            arr = np.array(vals, dtype=np.float64).astype(dt)
    elif et.is_bool:
        if any(isinstance(v, float) for v in flat):
            raise ValueError("expected integer elements, but parsed floating-point")
        _check_int_range(flat, et)
        ints = [_scalar_to(et, v) for v in flat]
        if any(v not in (0, 1, -1) for v in ints):     # (True/False compare equal to 1/0)
            raise ValueError("expected true, false, 0 or 1 for i1 elements")
        arr = np.array([bool(v) for v in ints], dtype=np.bool_)
    else:
        if any(isinstance(v, float) for v in flat):
            raise ValueError("expected integer elements, but parsed floating-point")
        if any(isinstance(v, bool) for v in flat):
            raise ValueError("expected i1 type for 'true' or 'false' values")
        _check_int_range(flat, et)
        ints = [int(_scalar_to(et, v)) for v in flat]
        bits = et.bits
        if et.is_unsigned:
            ints = [i & ((1 << bits) - 1) for i in ints]
        else:
            ints = [((i + (1 << (bits - 1))) & ((1 << bits) - 1)) - (1 << (bits - 1)) for i in ints]
        if dt.itemsize == 1 and dt.kind not in "iub":   # ml_dtypes sub-byte ints
            arr = np.array(ints, dtype=np.int8 if et.is_signed else np.uint8).astype(dt)
        else:
            arr = np.array(ints, dtype=dt)
    if len(flat) == 1 and (not isinstance(value, list)) and count != 1:
        return np.broadcast_to(arr.reshape(()), shape)
    if len(flat) == 1 and not isinstance(value, list):
        return arr.reshape(shape)
    if len(flat) != count:
        raise ValueError(f"dense literal has {len(flat)} elements, type {ttype} needs {count}")
    if tuple(dims) != shape and not (count == 0):
        if len(dims) != len(shape):
            raise ValueError(f"dense literal shape {tuple(dims)} does not match type {ttype}")
        raise ValueError(f"dense literal shape {tuple(dims)} does not match type {ttype}")
    return arr.reshape(shape)


from ..ir.types import ELEMENT_TYPES  # noqa: E402

ELEM_OF_COMPLEX = {"complex<f32>": ELEMENT_TYPES["f32"], "complex<f64>": ELEMENT_TYPES["f64"]}


def array_from_hex(hexstr: str, ttype: TensorType) -> np.ndarray:
    et = storage_element(ttype)
    dt = et.dtype
    raw = bytes.fromhex(hexstr)
    shape = tuple(ttype.shape)
    count = math.prod(shape) if shape else 1
    itemsize = dt.itemsize
    if len(raw) == itemsize and count != 1:
        return np.broadcast_to(np.frombuffer(raw, dtype=dt).reshape(()), shape)
    if len(raw) != itemsize * count:
        raise ValueError(f"hex payload has {len(raw)} bytes; {ttype} needs {itemsize * count}")
    arr = np.frombuffer(raw, dtype=dt)
    if et.is_bool:
        arr = arr.view(np.uint8) != 0
    return arr.reshape(shape)


def array_to_hex(arr: np.ndarray) -> str:
    a = np.ascontiguousarray(arr)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    return "0x" + a.tobytes().hex().upper()
