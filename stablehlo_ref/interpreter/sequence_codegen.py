"""Merged sequences of a compiled block written out as straight-line Python.

`plan._sequence_runner` / `plan._mixed_sequence_runner` run a merged sequence of steps by
looping over its entries (kind, fn, a, b, c, out, op) and dispatching on the kind. In a loop
body that runs thousands of times that loop and dispatch cost about 0.1 us per step.
`generated_sequence` writes the same steps as the source of one function of (ctx, f): each
step is the statement the runner's branch for its kind executes, with its slots as numbers,
its function and op bound by name (a Python operator written as the operator), in the same
order on the same frame. The values, the in-place updates (`plan._put_in_place` tests the
reference count of the array as the runner does: its local, getrefcount's argument and the
slot) and the errors are the runner's; an error is tagged with the index of the step that raised it
(`_stablehlo_sequence_index`), found from the line of the generated code it came from.

Writing and compiling costs about 20 us per step (a 60-step sequence about 1.5 ms) against
about 0.1 us saved per step and run, so a sequence is generated only on its
`GENERATE_AFTER`-th run (the loops of a single run of upstream's test programs mostly stay
below it).
"""
from __future__ import annotations

import operator

GENERATE_AFTER = 200       # runs of a merged sequence before it is generated
ENABLED = True             # (tests switch it off to compare the two runners)
MAX_STEPS = 4000           # longer sequences are left to the list runner (compiling ~80 ms)

_INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
          operator.floordiv: "//", operator.mod: "%", operator.and_: "&", operator.or_: "|",
          operator.xor: "^", operator.lt: "<", operator.le: "<=", operator.gt: ">",
          operator.ge: ">=", operator.eq: "==", operator.ne: "!=", operator.lshift: "<<",
          operator.rshift: ">>", operator.pow: "**"}


def _int(*xs):
    for x in xs:
        if x.__class__ is not int:
            raise TypeError(f"slot {x!r} is not an int")


def generated_sequence(seq, env):
    """`run(ctx, f)` running `seq` (entries (kind, fn, a, b, c, out, op) of
    `plan._sequence_kind`) as straight-line code, or None where an entry is of a kind it
    does not know. env: `plan`'s functions for the selects (pick: kind 1, put: kind 7,
    put_in_place: kind 9, each the runner's branch for its kind) and SEQ. (A select is one
    call, not its branch written out: compiling costs about 10 us a line.)"""
    if len(seq) > MAX_STEPS:
        return None
    bound = {}

    def name(obj, prefix):
        got = bound.get(id(obj))
        if got is None:
            got = bound[id(obj)] = (f"{prefix}{len(bound)}", obj)
        return got[0]

    lines = []          # (statement, entry index)
    try:
        for i, (k, fn, a, b, c, out, op) in enumerate(seq):
            _int(a, b, c, out)
            F = name(fn, "F")
            if k == 0:
                sym = _INFIX.get(fn)
                expr = f"f[{a}] {sym} f[{b}]" if sym else f"{F}(f[{a}], f[{b}])"
                st = [f"f[{out}] = {expr}"]
            elif k == 3:
                st = [f"f[{out}] = {F}(ctx, {name(op, 'O')}, f[{a}])"]
            elif k == 4:
                st = [f"f[{out}] = {F}(ctx, {name(op, 'O')}, f[{a}], f[{b}])"]
            elif k == 2:
                st = [f"f[{out}] = {F}(ctx, f[{a}], f[{b}], f[{c}])"]
            elif k == 5:
                st = [f"f[{out}] = {F}(ctx, f[{a}])"]
            elif k == 6:
                st = [f"f[{out}] = {F}(ctx, f[{a}], f[{b}])"]
            elif k == 8:
                st = [f"f[{out}] = {F}(ctx, f, f[{a}])"]
            elif k == 10 or k == 11:
                args = f"f[{a}]" if k == 10 else f"f[{a}], f[{b}]"
                st = [f"v = {F}(ctx, {name(op, 'O')}, {args})",
                      f"f[{out}] = v[0] if v.__class__ in SEQ else v"]
            elif k == 1:
                st = [f"f[{out}] = pick(ctx, {F}, f[{a}], f[{b}], f[{c}])"]
            elif k == 7:
                st = [f"f[{out}] = put(ctx, {F}, f[{a}], f[{b}], f[{c}], last)"]
            elif k == 9:
                st = [f"f[{out}] = put_in_place(ctx, {F}, f, {a}, {b}, {c}, last)"]
            else:
                return None
            lines += [(s, i) for s in st]
    except TypeError:
        return None
    names = [n for n, _ in bound.values()]
    head = ["def make(pick, put, put_in_place, SEQ" + "".join(", " + n for n in names) + "):",
            "    def run(ctx, f):",
            "        last = [None, 0]"]
    body = ["        " + s for s, _ in lines] or ["        pass"]
    text = "\n".join(head + body + ["    return run"]) + "\n"
    first = len(head) + 1          # the line number of the first statement
    where = [i for _, i in lines]
    code = compile(text, "<merged sequence>", "exec")
    space = {}
    exec(code, space)              # noqa: S102 - our own source
    run = space["make"](env["pick"], env["put"], env["put_in_place"], env["SEQ"],
                        *[o for _, o in bound.values()])
    run.source = text
    run.index = _indexer(run.__code__, first, where)
    return run


def _indexer(code, first, where):
    """index(exception) -> the index of the step of the generated code `code` it was raised
    in (from its traceback), or 0."""
    def index(e):
        tb = e.__traceback__
        line = None
        while tb is not None:
            if tb.tb_frame.f_code is code:
                line = tb.tb_lineno
            tb = tb.tb_next
        if line is None:
            return 0
        j = line - first
        return where[j] if 0 <= j < len(where) else 0
    return index
