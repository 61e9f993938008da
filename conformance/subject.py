"""What a case tests, as the reports and capability profiles name it: one op, one element type
and an attribute variant.

Generated cases say so themselves (`Case.op`, `Case.element_type`, `Case.variant`). Cases
extracted from upstream's test programs do not: their subject is derived here from the ops the
program uses, the names of its file and function, and the operand type of that op in the
program text. A program that exercises several ops with no way to tell which one is under test
(jax's decomposition of `acos` into atan2, sqrt, ...) gets them joined with `+`."""
from __future__ import annotations

import os
import re
from typing import Iterable, Sequence, Tuple

# ops that hold a program together (broadcasting, shaping, selecting) rather than being tested
GLUE_OPS = frozenset({"stablehlo.broadcast_in_dim", "stablehlo.reshape", "stablehlo.convert",
                      "stablehlo.select", "stablehlo.compare", "stablehlo.iota",
                      "stablehlo.get_tuple_element", "stablehlo.tuple", "stablehlo.slice",
                      "stablehlo.concatenate", "stablehlo.transpose", "stablehlo.real",
                      "stablehlo.imag", "stablehlo.complex", "stablehlo.uniform_quantize",
                      "stablehlo.uniform_dequantize"})
_TYPE_TOKEN = re.compile(r"^(?:\d.*|u?int\d+|float\d+|bfloat16|complex\d+|bool|any|f\d+|bf16|[su]?i\d+|c\d+)$")

# short names in upstream's file names that differ from the op's name
ALIASES = {"max": "maximum", "min": "minimum", "rev": "reverse", "mul": "multiply",
           "sub": "subtract", "div": "divide", "pow": "power", "rem": "remainder",
           "eq": "compare", "ne": "compare", "lt": "compare", "le": "compare", "gt": "compare",
           "ge": "compare", "neg": "negate", "cos": "cosine", "sin": "sine", "exp": "exponential",
           "expm1": "exponential_minus_one", "log1p": "log_plus_one", "abs": "abs",
           "bitcast": "bitcast_convert", "shift_left": "shift_left"}


def _stem_tokens(case_id: str) -> Sequence[str]:
    """Candidate short names from the file and function names, longest first."""
    path, _, rest = case_id.partition("#")
    func = rest.partition("@")[2]
    names = [os.path.splitext(os.path.basename(path))[0]]
    if func and func != "main":
        names.insert(0, func)
    out = []
    for n in names:
        parts = n.split("_")
        for k in range(len(parts), 0, -1):
            out.append("_".join(parts[:k]))
    return out


def primary_op(case_id: str, ops: Iterable[str]) -> str:
    ops = sorted(set(ops))
    if not ops:
        # programs of constants only: upstream's constant tests (and tests of `check` itself)
        return "stablehlo.constant" if "constant" in _stem_tokens(case_id) else ""
    if len(ops) == 1:
        return ops[0]
    by_short = {}
    for o in ops:
        by_short.setdefault(o.split(".", 1)[-1], o)
    for token in _stem_tokens(case_id):
        for name in (token, ALIASES.get(token)):
            if name and name in by_short:
                return by_short[name]
    core = [o for o in ops if o not in GLUE_OPS] or ops
    if len(core) == 1:
        return core[0]
    # several ops and none named by the test: a composite (jax's lowering of `logistic`,
    # `igamma`, a random-number generator ...), named after the test's file
    stem = os.path.splitext(os.path.basename(case_id.partition("#")[0]))[0].split(".")[0]
    words = []
    for w in stem.split("_"):
        if _TYPE_TOKEN.match(w):
            break
        words.append(w)
    return "composite:" + ("_".join(words).strip("_") or stem)


def normalize_element_type(text: str) -> str:
    """`!quant.uniform<i8:f32, 0.1:-3>` -> `!quant.uniform<i8:f32>`: the profile and the
    matrix group quantized types by storage and expressed type, not by scale."""
    text = text.strip()
    m = re.match(r"!quant\.uniform<([^:,<>]+):([^:,<>]+)", text)
    if m:
        return f"!quant.uniform<{m.group(1)}:{m.group(2)}>"
    return text


def _tensor_element_types(text: str):
    """Element types of the `tensor<...>` types in `text`, in order."""
    i = 0
    while True:
        i = text.find("tensor<", i)
        if i < 0:
            return
        j = i + len("tensor<")
        depth = 1
        k = j
        while k < len(text) and depth:
            if text[k] == "<":
                depth += 1
            elif text[k] == ">":
                depth -= 1
            k += 1
        inner = text[j:k - 1]
        m = re.match(r"(?:(?:\d+|\?)x)*", inner)
        yield normalize_element_type(inner[m.end():].split(",", 1)[0] if not inner[m.end():].startswith("!quant")
                                     else inner[m.end():])
        i = k


def operand_element_type(program: str, op: str) -> str:
    """The element type of the first operand (or, for ops without operands, the result) of
    the first `op` in `program` text; "" when it cannot be told."""
    if not op or "+" in op:
        return ""
    pat = re.compile(r'(?:=\s*|^\s*)"?' + re.escape(op) + r'"?[\s(]', re.M)
    m = pat.search(program)
    if not m:
        return ""
    # the signature follows the last " : " of the op's line; an op with regions ends on the
    # line that closes them (`}) : (...) -> ...`)
    lines = program[m.start():].splitlines()
    sig = ""
    if " : " in lines[0]:
        sig = lines[0].rsplit(" : ", 1)[1]
    else:
        for line in lines[1:]:
            if line.lstrip().startswith("})") and " : " in line:
                sig = line.rsplit(" : ", 1)[1]
                break
    for et in _tensor_element_types(sig):
        return et
    return ""


def case_subject(case) -> Tuple[str, str, str]:
    """(op, element type, variant) of a case: its own when it names them, else derived."""
    op = case.op or primary_op(case.id, case.ops)
    et = case.element_type or operand_element_type(case.program, op) or (
        case.element_types[0] if case.element_types else "")
    return op, normalize_element_type(et), case.variant


def op_subjects(module) -> list:
    """(op, element type) of every op of a parsed module that a profile can speak for, in
    program order, without repeats (ops of `func`/`builtin` and returns left out)."""
    seen = {}
    for op in module.walk():
        if op.name.split(".", 1)[0] in ("builtin", "func") or op.name.endswith(".return"):
            continue
        # the first typed operand, else result (infeed/recv: a token operand, typed results)
        vals = list(op.operands) + list(op.results)
        et = ""
        for v in vals:
            t = getattr(v, "type", None)
            if t is not None and hasattr(t, "element_type"):
                et = normalize_element_type(str(t.element_type))
                break
        seen.setdefault((op.name, et), None)
    return list(seen)
