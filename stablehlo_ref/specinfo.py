"""`stablehlo-ref spec OP` for people: op names resolved across dialects (`erf` is chlo.erf,
there being no stablehlo.erf), and the spec's type classes (`fp_complex_or_quantized_int_tensor`)
spelled out as the element types they admit, read from spec/element_types."""
from __future__ import annotations

import re
from typing import List

from . import spec
from .errors import UsageError

_SHAPES = [("static_shape_", "statically shaped "), ("static_1d_", "static rank-1 "),
           ("static_2d_", "static rank-2 "), ("scalar_", "rank-0 "), ("0d_", "rank-0 "),
           ("1d_", "rank-1 "), ("2d_", "rank-2 "), ("ranked_", "ranked "), ("any_", ""), ("static_", "statically shaped ")]


def resolve_op(name: str) -> str:
    """The full name of op `name`: as given when it has a dialect; else stablehlo.NAME, or the
    one op of another dialect so named (chlo.erf for erf). UsageError with suggestions else."""
    s = spec.load()
    if "." in name:
        if name in s.ops:
            return name
        candidates = list(s.ops)
    else:
        if f"stablehlo.{name}" in s.ops:
            return f"stablehlo.{name}"
        same = sorted(o for o in s.ops if o.split(".", 1)[1] == name)
        if len(same) == 1:
            return same[0]
        if same:
            raise UsageError(f"op {name!r} is ambiguous: {', '.join(same)}")
        candidates = list(s.ops)
    import difflib
    short = {o.split(".", 1)[1]: o for o in sorted(candidates, key=lambda o: not o.startswith("stablehlo."))}
    key = name.split(".", 1)[-1]
    close = difflib.get_close_matches(key, list(short), n=3, cutoff=0.6)
    hint = f"; did you mean {', '.join(short[c] for c in close)}?" if close else ""
    raise UsageError(f"unknown op {name!r}: not in the spec{hint}")


def _elements(word: str) -> List[str]:
    ets = spec.element_types()
    by_kind = lambda *kinds: [e.text for e in ets if e.kind in kinds]     # noqa: E731
    table = {
        "pred": ["i1"], "i1": ["i1"], "bool": ["i1"],
        "int": by_kind("signed", "unsigned"), "sint": by_kind("signed"), "uint": by_kind("unsigned"),
        "fp": by_kind("float"), "float": by_kind("float"), "complex": by_kind("complex"),
        "index": ["index"], "i32": ["i32"], "ui32": ["ui32"], "fp32": ["f32"], "fp64": ["f64"],
        "quantized": ["!quant.uniform (per-tensor)"], "quantized_int": ["!quant.uniform (per-tensor)"],
    }
    return table.get(word, [])


def describe_type_class(cat: str) -> str:
    """A readable expansion of a spec type class name; the name itself when not understood."""
    if cat in ("any", "future", "custom_call_value"):
        return {"any": "any type", "future": "a future (async value)",
                "custom_call_value": "any tensor, token or tuple"}[cat]
    base, shape = cat, ""
    for pre, words in _SHAPES:
        if base.startswith(pre):
            base, shape = base[len(pre):], words
            break
    extra = []
    for tail, words in (("_or_buffer", "a buffer"), ("_or_tuple", "a tuple"), ("_or_token", "a token")):
        if base.endswith(tail):
            base = base[:-len(tail)]
            extra.insert(0, words)
    m = re.fullmatch(r"tensor_of\(([^)]*)\)", base)
    if m:
        words = [w.strip() for w in m.group(1).split(",")]
    elif base in ("tensor", "non_quantized_tensor", "dimension_tensor", "tensor_or_per_axis_quantized_tensor",
                  "tensor_per_axis_quantized_tensor_or_bounded_tensor"):
        what = {"tensor": f"{shape}tensor of any element type",
                "non_quantized_tensor": f"{shape}tensor of any non-quantized element type",
                "dimension_tensor": f"{shape}rank-1 integer tensor of dimension sizes",
                "tensor_or_per_axis_quantized_tensor": f"{shape}tensor of any element type, per-axis quantized included",
                "tensor_per_axis_quantized_tensor_or_bounded_tensor":
                    f"{shape}tensor of any element type, per-axis quantized or bounded-dynamic included"}[base]
        return ", or ".join([what] + extra)
    elif base == "token":
        return "a token"
    elif base == "tuple":
        return "a tuple"
    elif base.endswith("tensor"):
        body = base[:-len("tensor")].strip("_")
        body = body.replace("quantized_int_or_per_axis_quantized_int", "quantized_int_per_axis")
        words, i, parts = [], 0, body.replace("_or_", "_").split("_")
        while i < len(parts):
            w = parts[i]
            if w == "quantized" and i + 1 < len(parts) and parts[i + 1] == "int":
                words.append("quantized_int")
                i += 2
                continue
            if w == "per" or w == "axis":
                if "per_axis" not in words:
                    words.append("per_axis")
            else:
                words.append(w)
            i += 1
    else:
        return cat
    names: List[str] = []
    for w in words:
        if w == "per_axis":
            names.append("!quant.uniform (per-axis)")
            continue
        got = _elements(w)
        if not got:
            return cat
        names.extend(n for n in got if n not in names)
    what = f"{shape}tensor of {', '.join(names)}"
    return ", or ".join([what] + extra)


def format_op_with_types(name: str) -> str:
    """spec.format_op plus a `type classes:` section expanding each class the op uses."""
    o = spec.op(name)
    text = spec.format_op(name)
    used = []
    for v in list(o.operands) + list(o.results):
        if v.type not in used:
            used.append(v.type)
    import textwrap
    lines = [textwrap.fill(f"{c}: {describe_type_class(c)}", 100, initial_indent="    ",
                           subsequent_indent="      ") for c in used]
    if lines:
        text += "\n  type classes:\n" + "\n".join(lines)
    return text
