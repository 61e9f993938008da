"""Straight-line Python for the loops of `scalar_loops`: a loop's condition and body written
out as the source of one function whose slots are local variables.

`scalar_loops._fast_loop` runs a loop's entries (fn, a, b, out) one after the other on a list
of slots: `f[out] = fn(f[a], f[b])`. `generated_loop` writes the same steps as Python source
(`s7 = s3 * s5`), compiles it once and runs that instead: the slots a loop reads are loaded
into local variables before it and the slots it writes stored back after it, an entry whose
function is a Python operator (`operator.add`, the swapped float add of `scalar_loops`, a
compare, ...) is that operator in the source, a select is a conditional expression (a fused
select computes only the operand it picks, as `_lazy_select` does), and any other function
(the unary float ops, integer division and remainder) is called with the values it was
called with before. The values are the same objects of the same numpy scalar types, computed
by the same operators in the same order: a generated loop and `_fast_loop` give the same bits
(tests/test_scalar_codegen.py runs both).

Writing and compiling the source costs about 20 us per entry against about 0.1 us saved per
entry and iteration, so `scalar_loops` generates a loop's function only once the loop has run
(or, counted, is about to run) `GENERATE_AFTER` iterations in all.
"""
from __future__ import annotations

import operator

# the entry functions written as Python operators: the same call on the same operands
_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.mod: "%", operator.and_: "&", operator.or_: "|", operator.xor: "^",
          operator.lt: "<", operator.le: "<=", operator.gt: ">", operator.ge: ">=",
          operator.eq: "==", operator.ne: "!="}

GENERATE_AFTER = 200       # iterations a loop runs through `_fast_loop` before it is generated
ENABLED = True             # (tests switch it off to compare the two runners)


class _Source:
    """The expressions of entries, and the functions the source calls (bound by name)."""

    def __init__(self, swapped, unary):
        self.swapped = swapped      # {fn: operator}: fn(a, b) is operator(b, a)
        self.unary = unary          # {fn: prefix}: fn(a, _) is `prefix a`
        self.bound = {}             # id -> (name, fn)

    def fn(self, fn):
        got = self.bound.get(id(fn))
        if got is None:
            got = self.bound[id(fn)] = (f"F{len(self.bound)}", fn)
        return got[0]

    def call(self, fn, a, b):
        """The expression of fn(s{a}, s{b})."""
        sym = _INFIX.get(fn)
        if sym is not None:
            return f"(s{a} {sym} s{b})"
        op = self.swapped.get(fn)
        if op is not None:
            return f"(s{b} {_INFIX[op]} s{a})"
        pre = self.unary.get(fn)
        if pre is not None:
            return f"({pre}s{a})" if pre else f"s{a}"
        return f"{self.fn(fn)}(s{a}, s{b})"


def _entry_line(src, e, reads, writes):
    """The statement of body entry e (fn, a, b, c, out) of `scalar_loops` (c: -1 binary, -2 a
    fused select or a function of several slots (`fn.call`: (plain function, slots)), >= 0
    the third operand of a plain select), or None where it cannot be written (a function of
    the frame this module does not know)."""
    fn, a, b, c, out = e
    writes.add(out)
    if c == -1:
        reads.update((a, b))
        return f"s{out} = {src.call(fn, a, b)}"
    if c >= 0:
        reads.update((a, b, c))
        return f"s{out} = s{b} if s{a} else s{c}"
    if c != -2:
        return None
    call = getattr(fn, "call", None)
    if call is not None:
        # (a function of several slots: a carried array's read or store, `plain(*values)`)
        plain, slots = call
        reads.update(slots)
        return f"s{out} = {src.fn(plain)}({', '.join(f's{x}' for x in slots)})"
    parts = getattr(fn, "parts", None)
    if parts is None:
        return None
    pred, x, y = parts
    cf, pa, pb = pred
    xf, xa, xb = x
    yf, ya, yb = y
    reads.update((xa, xb, ya, yb, pa, pb))
    cond = f"s{pa}" if cf is None else src.call(cf, pa, pb)
    return f"s{out} = {src.call(xf, xa, xb)} if {cond} else {src.call(yf, ya, yb)}"


def _slots(*xs):
    """The slot numbers the source is written with: ints only (nothing else is ever written
    into the source but these, names of our own and fixed operator symbols)."""
    for x in xs:
        if x.__class__ is not int:
            raise TypeError(f"slot {x!r} is not an int")


def generated_loop(cone, counted, body, moves, pslots, swapped, unary):
    """The function `inner(f, steps, left, ctx, op) -> iterations` running a loop on frame
    `f` as `_fast_loop` does, or None where an entry cannot be written. cone: the
    condition's one binary entry (fn, a, b); counted: no condition is computed (`steps`
    gives the iterations); body: entries (fn, a, b, c, out); moves: (dst, src) pairs stored
    after the body; pslots: the slots each element of `steps` stores (precomputed values).
    In a loop with a condition, `left` bounds the iterations before `ctx.tick` is called, as
    in `_fast_loop`."""
    src = _Source(swapped, unary)
    reads, writes = set(), set()
    try:
        for e in body:
            parts = getattr(e[0], "parts", None) if e[3] == -2 else None
            if parts is not None:
                _slots(*parts[0][1:], *parts[1][1:], *parts[2][1:])
            call = getattr(e[0], "call", None) if e[3] == -2 else None
            if call is not None:
                _slots(*call[1])
            _slots(e[4], *((e[1], e[2], e[3]) if e[3] != -2 else ()))
        _slots(*cone[1:], *pslots, *(s for m in moves for s in m))
    except TypeError:
        return None
    lines = []
    for e in body:
        line = _entry_line(src, e, reads, writes)
        if line is None:
            return None
        lines.append(line)
    cf, ca, cb = cone
    loop_head = []
    if not counted:
        reads.update((ca, cb))
        loop_head = [f"if not {src.call(cf, ca, cb)}:", "    break", "ran += 1",
                     "if ran > left:", "    ctx.steps += ran", "    left -= ran",
                     "    ran = 0", "    ctx.tick(op, counted=True)"]
    if moves:
        dst = ", ".join(f"s{d}" for d, _ in moves)
        srcs = ", ".join(f"s{s}" for _, s in moves)
        lines.append(f"{dst}, = {srcs},")
        writes.update(d for d, _ in moves)
        reads.update(s for _, s in moves)
    writes.update(pslots)
    if len(pslots) == 1:
        target = f"s{pslots[0]}"
    elif pslots:
        target = ", ".join(f"s{p}" for p in pslots)
    else:
        target = "_"
    # (every slot it reads or writes, so that a loop of no iterations stores back what it
    # loaded)
    loads = sorted(reads | writes)
    names = [name for name, _ in src.bound.values()]
    out = [f"def make({', '.join(names)}):",
           "    def inner(f, steps, left, ctx, op):"]
    out += [f"        s{s} = f[{s}]" for s in loads]
    out.append("        ran = 0")
    out.append(f"        for {target} in steps:")
    out += ["            " + line for line in loop_head + lines or ["pass"]]
    out += [f"        f[{s}] = s{s}" for s in sorted(writes)]
    out.append("        return ran")
    out.append("    return inner")
    text = "\n".join(out) + "\n"
    space = {}
    exec(compile(text, "<scalar loop>", "exec"), space)   # noqa: S102 - our own source
    inner = space["make"](*[fn for _, fn in src.bound.values()])
    inner.source = text
    return inner
