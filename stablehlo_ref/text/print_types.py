"""How types and string literals are spelled in MLIR text: `type_text` (tensors, quantized
element types, functions, tuples...), `ftype` (a functional type `(ins) -> outs`) and
`escape_string`. The printer, the custom op syntaxes and the directives share them."""
from __future__ import annotations

import re

from ..ir.floats import format_float
from ..ir.types import (ELEMENT_TYPES, ElementType, FunctionType, QuantizedType, TensorType, TupleType,
                        UnrankedTensorType)

# A tensor's encoding is an attribute: the printer installs its attribute printer here when it
# is imported (text/__init__ imports it), so this module stays below the printer.
attribute_text = None


_PLAIN_STRING = re.compile(r'[ !#-\[\]-~]*\Z')     # printable ASCII but `"` and `\`


def escape_string(s: str) -> str:
    """A string literal as MLIR writes one (llvm::printEscapedString): a doubled backslash for a
    backslash; every byte that is not printable ASCII, and the double quote, as a backslash and
    two upper-case hex digits (UTF-8 bytes)."""
    if _PLAIN_STRING.match(s):
        return '"' + s + '"'
    out = []
    for b in s.encode("utf-8", "surrogateescape"):
        if b == 0x5C:
            out.append("\\\\")
        elif 0x20 <= b < 0x7F and b != 0x22:
            out.append(chr(b))
        else:
            out.append("\\%02X" % b)
    return '"' + "".join(out) + '"'


def _quant_text(q: QuantizedType) -> str:
    st = q.storage_type.name
    if q.storage_type.is_unsigned:
        st = "u" + st[2:]
    if q.storage_min is not None:
        st += f"<{q.storage_min}:{q.storage_max}>"
    head = f"{st}:{q.expressed_type.name}"
    f64 = ELEMENT_TYPES["f64"]    # scales are doubles whatever the expressed type

    def one(scale, zp):
        return format_float(scale, f64) + (f":{zp}" if zp != 0 else "")
    if q.quantized_dimension is None:
        return f"!quant.uniform<{head}, {one(q.scales[0], q.zero_points[0])}>"
    body = ",".join(one(sc, z) for sc, z in zip(q.scales, q.zero_points))
    return f"!quant.uniform<{head}:{q.quantized_dimension}, {{{body}}}>"


def type_text(t) -> str:
    """A type in MLIR syntax (encodings and quantization parameters printed exactly)."""
    if isinstance(t, ElementType):
        return t.name
    if isinstance(t, TensorType):
        dims = "".join(("?" if d is None else str(d)) + "x" for d in t.shape)
        enc = f", {attribute_text(t.encoding)}" if t.encoding is not None else ""
        return f"tensor<{dims}{type_text(t.element_type)}{enc}>"
    if isinstance(t, QuantizedType):
        return _quant_text(t)
    if isinstance(t, UnrankedTensorType):
        return f"tensor<*x{type_text(t.element_type)}>"
    if isinstance(t, TupleType):
        return "tuple<" + ", ".join(type_text(x) for x in t.types) + ">"
    if isinstance(t, FunctionType):
        ins = "(" + ", ".join(type_text(x) for x in t.inputs) + ")"
        if len(t.results) == 1 and not isinstance(t.results[0], FunctionType):
            return f"{ins} -> {type_text(t.results[0])}"
        return f"{ins} -> (" + ", ".join(type_text(x) for x in t.results) + ")"
    return str(t)


def ftype(ins, outs) -> str:
    s = "(" + ", ".join(type_text(t) for t in ins) + ") -> "
    if len(outs) == 1 and not isinstance(outs[0], FunctionType):
        return s + type_text(outs[0])
    return s + "(" + ", ".join(type_text(t) for t in outs) + ")"
