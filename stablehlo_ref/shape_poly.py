"""Symbolic dimensions of `jax.export` shape-polymorphic programs.

jax.export writes each argument's shape specification (`args[0].shape = (2*b + 1, 4)`) into
the `@shape_assertion` messages of the program and, in a serialized payload, as the argument
avals' dimension strings. A dimension is a plain size, a dimension variable (`b`) or one of
jax's dimension expressions over them: integers, `+`, `-`, `*`, parentheses and the
functions `floordiv`, `mod`, `max`, `min`, `non_negative`. Given sizes for the variables
(`--dim b=5`), `argument_sizes` works out every symbolic dimension of every argument
(`2*b + 1` = 11), so that random inputs can be drawn for a program whose arguments have
derived dimensions, not only plain ones.
"""
from __future__ import annotations

import re
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

from .errors import UsageError

_TOKEN = re.compile(r"\s*(?:(\d+)|([A-Za-z_][A-Za-z_0-9.]*)|(.))")
_FUNCTIONS = {"floordiv": 2, "mod": 2, "max": 2, "min": 2, "non_negative": 1}


class DimExpr:
    """A parsed dimension expression: ("int", n) | ("var", name) | (op, a, b) | (fn, args...)."""

    __slots__ = ("tree", "text")

    def __init__(self, tree, text: str):
        self.tree = tree
        self.text = text

    def variables(self) -> set:
        out, stack = set(), [self.tree]
        while stack:
            t = stack.pop()
            if t[0] == "var":
                out.add(t[1])
            elif t[0] != "int":
                stack.extend(t[1:])
        return out

    def evaluate(self, env: Mapping[str, int]) -> int:
        return _eval(self.tree, env)

    def __repr__(self):
        return f"DimExpr({self.text!r})"


def _eval(t, env) -> int:
    kind = t[0]
    if kind == "int":
        return t[1]
    if kind == "var":
        return int(env[t[1]])
    args = [_eval(a, env) for a in t[1:]]
    if kind == "+":
        return args[0] + args[1]
    if kind == "-":
        return args[0] - args[1]
    if kind == "*":
        return args[0] * args[1]
    if kind == "neg":
        return -args[0]
    if kind == "floordiv":
        if args[1] == 0:
            raise UsageError("dimension expression: floordiv by 0")
        return args[0] // args[1]
    if kind == "mod":
        if args[1] == 0:
            raise UsageError("dimension expression: mod by 0")
        return args[0] % args[1]
    if kind == "max":
        return max(args)
    if kind == "min":
        return min(args)
    if kind == "non_negative":
        return max(args[0], 0)
    raise AssertionError(kind)


def parse_dim_expr(text: str) -> DimExpr:
    """Parse one dimension as jax prints it (`2*b + 1`, `a*c`, `floordiv(b, 2)`, `b - 1`)."""
    toks: List[Tuple[str, object]] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            break
        pos = m.end()
        if m.group(1):
            toks.append(("int", int(m.group(1))))
        elif m.group(2):
            toks.append(("name", m.group(2)))
        elif m.group(3):
            toks.append(("op", m.group(3)))
    i = 0

    def fail(why):
        raise UsageError(f"dimension expression {text!r}: {why}")

    def peek():
        return toks[i] if i < len(toks) else ("end", None)

    def take(kind, value=None):
        nonlocal i
        t = peek()
        if t[0] != kind or (value is not None and t[1] != value):
            fail(f"expected {value or kind}")
        i += 1
        return t

    def atom():
        nonlocal i
        t = peek()
        if t == ("op", "-"):
            i += 1
            return ("neg", atom())
        if t == ("op", "("):
            i += 1
            e = expr()
            take("op", ")")
            return e
        if t[0] == "int":
            i += 1
            return t
        if t[0] == "name":
            i += 1
            if peek() == ("op", "("):
                if t[1] not in _FUNCTIONS:
                    fail(f"unknown function {t[1]!r}")
                i += 1
                args = [expr()]
                while peek() == ("op", ","):
                    i += 1
                    args.append(expr())
                take("op", ")")
                if len(args) != _FUNCTIONS[t[1]]:
                    fail(f"{t[1]} takes {_FUNCTIONS[t[1]]} argument(s)")
                return (t[1], *args)
            return ("var", t[1])
        fail("expected a size, a name or '('")

    def term():
        nonlocal i
        e = atom()
        while peek() == ("op", "*"):
            i += 1
            e = ("*", e, atom())
        return e

    def expr():
        nonlocal i
        e = term()
        while peek() in (("op", "+"), ("op", "-")):
            op = peek()[1]
            i += 1
            e = (op, e, term())
        return e

    if not text.strip():
        fail("empty")
    tree = expr()
    if i != len(toks) or pos < len(text.rstrip()):
        fail("unexpected text after the expression")
    return DimExpr(tree, text.strip())


def _split_top(text: str) -> List[str]:
    """Split on commas outside parentheses."""
    out, depth, cur = [], 0, []
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur))
    return [s.strip() for s in out]


_SPEC_ITEM = re.compile(r"args\[(\d+)\]\.shape = \(")


def _specs_from_message(msg: str) -> Optional[Dict[int, List[str]]]:
    key = "polymorphic shapes specifications: "
    at = msg.find(key)
    if at < 0:
        return None
    text = msg[at + len(key):]
    out: Dict[int, List[str]] = {}
    pos = 0
    while True:
        m = _SPEC_ITEM.match(text, pos)
        if m is None:
            break
        depth, j = 1, m.end()
        while j < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[j], 0)
            j += 1
        out[int(m.group(1))] = _split_top(text[m.end():j - 1])
        pos = j
        if text.startswith(",", pos):
            pos += 1
    return out or None


def shape_specs(module=None, in_shapes: Optional[Sequence[Sequence[str]]] = None) -> Optional[Dict[int, List[str]]]:
    """{argument index: its dimensions as jax writes them} of a shape-polymorphic program: from
    the `@shape_assertion` messages of `module`, else from a payload's argument shapes
    (`in_shapes`, as `inspection._jax_details` reads them); None when neither has any."""
    if module is not None:
        for op in module.walk():
            if op.name != "stablehlo.custom_call":
                continue
            target = op.attributes.get("call_target_name")
            if getattr(target, "value", None) != "shape_assertion":
                continue
            msg = getattr(op.attributes.get("error_message"), "value", None)
            if isinstance(msg, str):
                got = _specs_from_message(msg)
                if got:
                    return got
    if in_shapes:
        return {i: list(s) for i, s in enumerate(in_shapes)}
    return None


def variables(specs: Mapping[int, Sequence[str]]) -> List[str]:
    names = set()
    for dims in specs.values():
        for d in dims:
            names |= parse_dim_expr(d).variables()
    return sorted(names)


def argument_sizes(specs: Mapping[int, Sequence[str]], values: Mapping[str, int]) -> Dict[Tuple[int, int], int]:
    """(argument, dimension) -> size for every non-constant dimension of `specs` whose
    variables all have values. A dimension that comes out negative is a UsageError."""
    out: Dict[Tuple[int, int], int] = {}
    for i, dims in specs.items():
        for k, d in enumerate(dims):
            e = parse_dim_expr(d)
            names = e.variables()
            if not names or not names <= set(values):
                continue
            n = e.evaluate(values)
            if n < 0:
                raise UsageError(f"--dim: dimension {k} of argument {i} is {e.text} = {n} for "
                                 + ", ".join(f"{v}={values[v]}" for v in sorted(names)))
            out[(i, k)] = n
    return out


def _is_arg_dim(name: str) -> bool:
    i, dot, d = name[3:].partition(".")
    return name.startswith("arg") and bool(dot) and i.isdigit() and d.isdigit()


def solve(expr: DimExpr, size: int, name: str) -> int:
    """The value of `expr`'s one variable for which it equals `size` (the smallest, searched
    from 0: dimension expressions only grow with their variables, except through mod)."""
    (var,) = expr.variables()
    f = lambda v: expr.evaluate({var: v})
    c0, c1 = f(0), f(1) - f(0)
    if c1 > 0 and all(f(v) == c0 + c1 * v for v in (2, 3, 7)):      # linear: a*b + c
        v, r = divmod(size - c0, c1)
        if r == 0 and v >= 0:
            return v
    else:
        for v in range(0, 4 * max(size, 1) + 8):
            if f(v) == size:
                return v
    raise UsageError(f"--dim {name}={size}: no size of {var} makes {expr.text} = {size}")


def expand_dims(module, dims: Mapping[str, int], in_shapes=None) -> Dict[str, int]:
    """`--dim` values for `conform --program`: names of jax's dimension variables become
    `argI.D` sizes for every argument dimension the shape specification derives from them
    (`b=5` sizes a `2*b` dimension 10 and a `b + 1` one 6); a dimension expression of one
    variable may be given instead of the variable (`2*b=10` is `b=5`); `argI.D` entries pass
    through unchanged (and explicit `argI.D` win)."""
    if not dims:
        return dict(dims)
    specs = shape_specs(module, in_shapes)
    if not specs:
        return dict(dims)
    known = set(variables(specs))
    values = {k: v for k, v in dims.items() if k in known}
    out: Dict[str, int] = {}
    for name, size in dims.items():
        if name in known:
            continue
        if _is_arg_dim(name):
            out[name] = size
            continue
        try:
            expr = parse_dim_expr(name)
        except UsageError:
            expr = None
        names = expr.variables() if expr is not None else set()
        if len(names) != 1 or not names <= known:
            raise UsageError(f"--dim {name}: the program has no symbolic dimension {name!r} (symbolic "
                             f"dimensions: {', '.join(sorted(known))}; a dimension expression of one of "
                             "them, such as 2*b=10; or argI.D=SIZE for argument I's dimension D)")
        (var,) = names
        v = solve(expr, size, name)
        if values.get(var, v) != v:
            raise UsageError(f"--dim {name}={size} gives {var} = {v}, but {var} = {values[var]} is given too")
        values[var] = v
    for (i, k), n in argument_sizes(specs, values).items():
        out.setdefault(f"arg{i}.{k}", n)
    return out


def expand_dims_for_file(path, dims: Mapping[str, int]) -> Dict[str, int]:
    """`expand_dims` for a program file: text, portable artifact or jax.export payload (whose
    argument shapes serve when the program has no shape assertions)."""
    if not dims:
        return dict(dims)
    from . import load
    from .inspection import _jax_details
    from .serialization.jax_export import is_jax_exported
    with open(path, "rb") as f:
        data = f.read()
    in_shapes = _jax_details(data).get("in_shapes") if is_jax_exported(data) else None
    return expand_dims(load(path), dims, in_shapes)
