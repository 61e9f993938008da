"""Random loop nests, run under each of the interpreter's tiers, which must agree bit for bit.

The interpreter runs a block step by step on its first runs, compiles it later (or at once,
for a loop body that is about to run), inlines calls into compiled blocks, fuses a compiled
`while` into one Python loop, writes long-running merged sequences out as generated code, and
updates buffers in place where a value dies (see interpreter/plan.py). Each of those moves
must leave every result bit for bit the same. The programs made here stress where the tiers
meet: `while` loops nested in `while` bodies (which delays their compilation), counters
converted into values, private functions with constants and iotas called from loop bodies
(inlined) and from the top level (called), reductions broadcast back, one-element and window
updates (dynamic_update_slice, scatter) of carried values, loops carrying only rank-0 values
(run on numpy scalars), `case` on a counter, and loops of zero iterations.

`check_tiers(program)` runs the program three times on one parsed module and once on a fresh
parse under each tier setting (`TIERS`), and raises `Finding` where any result differs from
a traced run's (op by op, no loop runner taking part).
"""
from __future__ import annotations

import random
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import List

import numpy as np

from .programs import Finding

N = 4                                  # every array value is tensor<4xf32>
T = "tensor<4xf32>"
S = "tensor<f32>"
I = "tensor<i32>"

_BINARY = ("add", "subtract", "multiply", "maximum", "minimum")
_UNARY = ("negate", "abs", "tanh", "sine", "floor", "exponential")


@dataclass
class LoopProgram:
    text: str
    inputs: List[np.ndarray] = field(default_factory=list)


class _Gen:
    def __init__(self, rng: random.Random, max_depth: int):
        self.rng = rng
        self.max_depth = max_depth
        self.n = 0
        self.helpers: List[str] = []         # the private functions' names
        self.helpers_text: List[str] = []    # and their text

    def fresh(self, prefix="v"):
        self.n += 1
        return f"%{prefix}{self.n}"

    # each statement maker appends lines to `out` and returns the new tensor<4xf32> value
    def stmt(self, out, vals, counters, depth, ind):
        rng = self.rng
        kinds = ["binary"] * 4 + ["unary", "const", "iota", "reduce", "dus", "scatter"] \
            + ["call"] * 2
        if counters:
            kinds += ["counter", "iota"]
        if depth < self.max_depth:
            kinds += ["while"] * 3 + ["scalar_while"]
        if counters:
            kinds += ["case", "scalar"]
        kind = rng.choice(kinds)
        r = self.fresh()
        if kind == "binary":
            a, b = rng.choice(vals), rng.choice(vals)
            out.append(f"{ind}{r} = stablehlo.{rng.choice(_BINARY)} {a}, {b} : {T}")
        elif kind == "unary":
            out.append(f"{ind}{r} = stablehlo.{rng.choice(_UNARY)} {rng.choice(vals)} : {T}")
        elif kind == "const":
            if rng.random() < 0.5:
                lit = repr(rng.choice([0.0, 1.0, -0.5, 0.25, 2.0, 1e-3]))
            else:
                lit = "[" + ", ".join(repr(rng.choice([0.0, 1.0, -1.5, 0.75, 3.0]))
                                      for _ in range(N)) + "]"
            c = self.fresh("c")
            out.append(f"{ind}{c} = stablehlo.constant dense<{lit}> : {T}")
            out.append(f"{ind}{r} = stablehlo.multiply {c}, {rng.choice(vals)} : {T}")
        elif kind == "iota":
            # positions: converted, shifted by a counter, or compared with one into a mask
            i, f = self.fresh("io"), self.fresh("iof")
            out.append(f"{ind}{i} = stablehlo.iota dim = 0 : tensor<4xi32>")
            form = rng.choice(["convert", "shift", "mask"] if counters else ["convert"])
            if form == "convert":
                out.append(f"{ind}{f} = stablehlo.convert {i} : (tensor<4xi32>) -> {T}")
                out.append(f"{ind}{r} = stablehlo.add {f}, {rng.choice(vals)} : {T}")
            else:
                kb = self.fresh("kb")
                out.append(f"{ind}{kb} = stablehlo.broadcast_in_dim {rng.choice(counters)}, dims = [] "
                           f": ({I}) -> tensor<4xi32>")
                if form == "shift":
                    sh = self.fresh("sh")
                    out.append(f"{ind}{sh} = stablehlo.add {i}, {kb} : tensor<4xi32>")
                    out.append(f"{ind}{f} = stablehlo.convert {sh} : (tensor<4xi32>) -> {T}")
                    out.append(f"{ind}{r} = stablehlo.multiply {f}, {rng.choice(vals)} : {T}")
                else:
                    m = self.fresh("m")
                    out.append(f"{ind}{m} = stablehlo.compare EQ, {i}, {kb}, SIGNED : "
                               f"(tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>")
                    out.append(f"{ind}{r} = stablehlo.select {m}, {rng.choice(vals)}, "
                               f"{rng.choice(vals)} : tensor<4xi1>, {T}")
        elif kind == "reduce":
            z, s = self.fresh("z"), self.fresh("s")
            body = rng.choice(["add", "maximum"])
            init = "0.000000e+00" if body == "add" else "0xFF800000"
            out.append(f"{ind}{z} = stablehlo.constant dense<{init}> : {S}")
            out.append(f"{ind}{s} = stablehlo.reduce({rng.choice(vals)} init: {z}) applies "
                       f"stablehlo.{body} across dimensions = [0] : ({T}, {S}) -> {S}")
            out.append(f"{ind}{r} = stablehlo.broadcast_in_dim {s}, dims = [] : ({S}) -> {T}")
        elif kind == "counter":
            k, f = rng.choice(counters), self.fresh("cf")
            out.append(f"{ind}{f} = stablehlo.convert {k} : ({I}) -> {S}")
            b = self.fresh("cb")
            out.append(f"{ind}{b} = stablehlo.broadcast_in_dim {f}, dims = [] : ({S}) -> {T}")
            out.append(f"{ind}{r} = stablehlo.{rng.choice(_BINARY)} {b}, {rng.choice(vals)} : {T}")
        elif kind == "dus":
            # a window of two elements at an index from a counter (clamped by the op) or a constant
            start = self._index(out, counters, ind, lo=-1, hi=4)
            sl = self.fresh("sl")
            out.append(f"{ind}{sl} = stablehlo.slice {rng.choice(vals)} [1:3] : ({T}) -> tensor<2xf32>")
            out.append(f"{ind}{r} = stablehlo.dynamic_update_slice {rng.choice(vals)}, {sl}, {start} : "
                       f"({T}, tensor<2xf32>, {I}) -> {T}")
        elif kind == "scatter":
            # x.at[i].set(v) or .add(v): an index out of bounds (5) skips the update
            start = self._index(out, counters, ind, lo=-1, hi=5)
            idx, u, e = self.fresh("ix"), self.fresh("u"), self.fresh("e")
            out.append(f"{ind}{idx} = stablehlo.reshape {start} : ({I}) -> tensor<1xi32>")
            out.append(f"{ind}{e} = stablehlo.slice {rng.choice(vals)} [2:3] : ({T}) -> tensor<1xf32>")
            out.append(f"{ind}{u} = stablehlo.reshape {e} : (tensor<1xf32>) -> {S}")
            if rng.random() < 0.5:
                body = [f"{ind}  stablehlo.return %sb : {S}"]
            else:
                body = [f"{ind}  %ss = stablehlo.add %sa, %sb : {S}", f"{ind}  stablehlo.return %ss : {S}"]
            out.append(f'{ind}{r} = "stablehlo.scatter"({rng.choice(vals)}, {idx}, {u}) '
                       f'<{{scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], '
                       f'scatter_dims_to_operand_dims = [0]>}}> ({{')
            out.append(f"{ind}^bb0(%sa: {S}, %sb: {S}):")
            out += body
            out.append(f"{ind}}}) : ({T}, tensor<1xi32>, {S}) -> {T}")
        elif kind == "scalar":
            # rank-0 arithmetic on an element read at a counter and a counter, broadcast back
            e = self.scalar_of(out, vals, counters, ind)
            b = self.fresh("sb")
            out.append(f"{ind}{b} = stablehlo.broadcast_in_dim {e}, dims = [] : ({S}) -> {T}")
            out.append(f"{ind}{r} = stablehlo.{rng.choice(_BINARY)} {b}, {rng.choice(vals)} : {T}")
        elif kind == "case":
            # branches on a counter's parity (and an index out of range, 2, taking the last)
            k, two, ix = self.fresh("ck"), self.fresh("c2"), self.fresh("ci")
            out.append(f"{ind}{two} = stablehlo.constant dense<{rng.choice([2, 3])}> : {I}")
            out.append(f"{ind}{k} = stablehlo.remainder {rng.choice(counters)}, {two} : {I}")
            out.append(f"{ind}{ix} = stablehlo.abs {k} : {I}")
            a, b = rng.choice(vals), rng.choice(vals)
            out.append(f"{ind}{r} = \"stablehlo.case\"({ix}) ({{")
            out.append(f"{ind}  %cs0 = stablehlo.{rng.choice(_BINARY)} {a}, {b} : {T}")
            out.append(f"{ind}  stablehlo.return %cs0 : {T}")
            out.append(f"{ind}}}, {{")
            out.append(f"{ind}  %cs1 = stablehlo.{rng.choice(_UNARY)} {a} : {T}")
            out.append(f"{ind}  stablehlo.return %cs1 : {T}")
            out.append(f"{ind}}}) : ({I}) -> {T}")
        elif kind == "scalar_while":
            return self.scalar_loop(out, vals, counters, depth, ind)
        elif kind == "call":
            name = self.helper()
            out.append(f"{ind}{r} = func.call @{name}({rng.choice(vals)}, {rng.choice(vals)}) : ({T}, {T}) -> {T}")
        else:   # while
            return self.loop(out, vals, counters, depth, ind)
        return r

    def scalar_of(self, out, vals, counters, ind, scalars=()):
        """A tensor<f32> made of an element of an array value at a counter (clamped), a
        counter converted, and any of `scalars`, by rank-0 ops."""
        rng = self.rng
        ds, e = self.fresh("ds"), self.fresh("el")
        k = rng.choice(counters)
        out.append(f"{ind}{ds} = stablehlo.dynamic_slice {rng.choice(vals)}, {k}, sizes = [1] : "
                   f"({T}, {I}) -> tensor<1xf32>")
        out.append(f"{ind}{e} = stablehlo.reshape {ds} : (tensor<1xf32>) -> {S}")
        pool = [e] + list(scalars)
        if rng.random() < 0.5:
            cf = self.fresh("kf")
            out.append(f"{ind}{cf} = stablehlo.convert {k} : ({I}) -> {S}")
            pool.append(cf)
        for _ in range(rng.randint(1, 3)):
            x = self.fresh("sc")
            if rng.random() < 0.3:
                out.append(f"{ind}{x} = stablehlo.{rng.choice(_UNARY)} {rng.choice(pool)} : {S}")
            elif rng.random() < 0.2:
                c = self.fresh("scc")
                out.append(f"{ind}{c} = stablehlo.constant dense<{rng.choice([0.5, -2.0, 1.5])}> : {S}")
                out.append(f"{ind}{x} = stablehlo.{rng.choice(_BINARY)} {rng.choice(pool)}, {c} : {S}")
            else:
                out.append(f"{ind}{x} = stablehlo.{rng.choice(_BINARY)} {rng.choice(pool)}, "
                           f"{rng.choice(pool)} : {S}")
            pool.append(x)
        return pool[-1]

    def scalar_loop(self, out, vals, counters, depth, ind):
        """A counted `while` carrying rank-0 values, an array it reads one element at a time
        and one it writes one element at a time (JAX's scan over xs into ys; the interpreter
        runs such loops on numpy scalars); its last scalar broadcast back, or the array it
        wrote."""
        rng = self.rng
        n = rng.choice([0, 1, 3, 4, 6, 9])
        res, z, it = self.fresh("sw"), self.fresh("swz"), self.fresh("sit")
        out.append(f"{ind}{z} = stablehlo.constant dense<0> : {I}")
        inits = []
        for _ in range(rng.randint(1, 2)):
            s0 = self.fresh("s0")
            out.append(f"{ind}{s0} = stablehlo.constant dense<{rng.choice([0.0, 1.0, -0.5])}> : {S}")
            inits.append(s0)
        names = [self.fresh("sx") for _ in inits]
        xs, ys = self.fresh("xs"), self.fresh("ys")
        types = ", ".join([I] + [S] * len(inits) + [T, T])
        args = [f"{it} = {z}"] + [f"{a} = {v}" for a, v in zip(names, inits)] \
            + [f"{xs} = {rng.choice(vals)}", f"{ys} = {rng.choice(vals)}"]
        out.append(f"{ind}{res}:{len(inits) + 3} = stablehlo.while({', '.join(args)}) : {types}")
        lim, p = self.fresh("slim"), self.fresh("sp")
        out.append(f"{ind}cond {{")
        out.append(f"{ind}  {lim} = stablehlo.constant dense<{n}> : {I}")
        out.append(f"{ind}  {p} = stablehlo.compare LT, {it}, {lim}, SIGNED : ({I}, {I}) -> tensor<i1>")
        out.append(f"{ind}  stablehlo.return {p} : tensor<i1>")
        out.append(f"{ind}}} do {{")
        inner = ind + "  "
        made = [self.scalar_of(out, [xs], [it], inner, names) for _ in names]
        u, w = self.fresh("su"), self.fresh("sy")
        out.append(f"{inner}{u} = stablehlo.reshape {made[-1]} : ({S}) -> tensor<1xf32>")
        out.append(f"{inner}{w} = stablehlo.dynamic_update_slice {ys}, {u}, {it} : "
                   f"({T}, tensor<1xf32>, {I}) -> {T}")
        one, nxt = self.fresh("sone"), self.fresh("snx")
        out.append(f"{inner}{one} = stablehlo.constant dense<1> : {I}")
        out.append(f"{inner}{nxt} = stablehlo.add {it}, {one} : {I}")
        out.append(f"{inner}stablehlo.return {', '.join([nxt] + made + [xs, w])} : {types}")
        out.append(f"{ind}}}")
        if rng.random() < 0.5:
            return f"{res}#{len(inits) + 2}"
        r = self.fresh()
        out.append(f"{ind}{r} = stablehlo.broadcast_in_dim {res}#{rng.randint(1, len(inits))}, dims = [] "
                   f": ({S}) -> {T}")
        return r

    def _index(self, out, counters, ind, lo, hi):
        v = self.fresh("k")
        if counters and self.rng.random() < 0.7:
            c = self.fresh("kc")
            out.append(f"{ind}{c} = stablehlo.constant dense<{self.rng.randint(-1, 1)}> : {I}")
            out.append(f"{ind}{v} = stablehlo.add {self.rng.choice(counters)}, {c} : {I}")
        else:
            out.append(f"{ind}{v} = stablehlo.constant dense<{self.rng.randint(lo, hi)}> : {I}")
        return v

    def helper(self):
        """A private function of two tensor<4xf32> with its constants (and an iota) first."""
        rng = self.rng
        if self.helpers and rng.random() < 0.5:
            return rng.choice(self.helpers)
        name = f"helper{len(self.helpers)}"
        self.helpers.append(name)
        lines = [f"  func.func private @{name}(%x: {T}, %y: {T}) -> {T} {{"]
        ind = "    "
        vals = ["%x", "%y"]
        c = self.fresh("hc")
        lines.append(f"{ind}{c} = stablehlo.constant dense<{rng.choice([0.5, -1.0, 2.0])}> : {T}")
        vals.append(c)
        if rng.random() < 0.5:
            z = self.fresh("hz")
            lines.append(f"{ind}{z} = stablehlo.constant dense<0xFF800000> : {S}")
            a = self.fresh("ha")
            lines.append(f"{ind}{a} = stablehlo.abs %x : {T}")
            s = self.fresh("hs")
            lines.append(f"{ind}{s} = stablehlo.reduce({a} init: {z}) applies stablehlo.maximum "
                         f"across dimensions = [0] : ({T}, {S}) -> {S}")
            b = self.fresh("hb")
            lines.append(f"{ind}{b} = stablehlo.broadcast_in_dim {s}, dims = [] : ({S}) -> {T}")
            vals.append(b)
        body = []
        for _ in range(rng.randint(1, 3)):
            a, b = rng.choice(vals), rng.choice(vals)
            r = self.fresh("hr")
            body.append(f"{ind}{r} = stablehlo.{rng.choice(_BINARY)} {a}, {b} : {T}")
            vals.append(r)
        lines += body
        lines.append(f"{ind}return {vals[-1]} : {T}")
        lines.append("  }")
        self.helpers_text.append("\n".join(lines))
        return name

    def loop(self, out, vals, counters, depth, ind):
        """A counted `while` carrying a counter and one to three values, its body statements
        of its own (loops among them) reading carried and enclosing values."""
        rng = self.rng
        # (a body runs step by step before it is compiled, mostly in the middle of a run)
        n = rng.choice([0, 1, 2, 5, 7, 9])
        carried = [rng.choice(vals) for _ in range(rng.randint(1, 3))]
        res = self.fresh("w")
        z = self.fresh("wz")
        out.append(f"{ind}{z} = stablehlo.constant dense<0> : {I}")
        it = self.fresh("it")
        args = [f"{it} = {z}"]
        names = []
        for v in carried:
            a = self.fresh("x")
            names.append(a)
            args.append(f"{a} = {v}")
        types = ", ".join([I] + [T] * len(carried))
        out.append(f"{ind}{res}:{len(carried) + 1} = stablehlo.while({', '.join(args)}) : {types}")
        out.append(f"{ind}cond {{")
        lim, p = self.fresh("lim"), self.fresh("p")
        out.append(f"{ind}  {lim} = stablehlo.constant dense<{n}> : {I}")
        out.append(f"{ind}  {p} = stablehlo.compare LT, {it}, {lim}, SIGNED : ({I}, {I}) -> tensor<i1>")
        out.append(f"{ind}  stablehlo.return {p} : tensor<i1>")
        out.append(f"{ind}}} do {{")
        inner = ind + "  "
        bvals = vals + names
        made = []
        for _ in range(rng.randint(1, 4)):
            made.append(self.stmt(out, bvals + made, counters + [it], depth + 1, inner))
        one, nxt = self.fresh("one"), self.fresh("nx")
        out.append(f"{inner}{one} = stablehlo.constant dense<1> : {I}")
        out.append(f"{inner}{nxt} = stablehlo.add {it}, {one} : {I}")
        # each carried value is updated from what the body made (or passed through)
        new = [rng.choice(made + [a]) for a in names]
        out.append(f"{inner}stablehlo.return {', '.join([nxt] + new)} : {types}")
        out.append(f"{ind}}}")
        return f"{res}#{rng.randint(1, len(carried))}"


def random_loop_program(rng: random.Random, max_depth: int = 3) -> LoopProgram:
    """A random valid program of loop nests over tensor<4xf32> values (see the module)."""
    g = _Gen(rng, max_depth)
    out: List[str] = []
    vals = ["%a", "%b"]
    for _ in range(rng.randint(2, 6)):
        vals.append(g.stmt(out, vals, [], 0, "    "))
    rets = vals[2:]                    # every value made at the top level
    text = (f"func.func @main(%a: {T}, %b: {T}) -> ({', '.join([T] * len(rets))}) {{\n"
            + "\n".join(out) + f"\n    return {', '.join(rets)} : {', '.join([T] * len(rets))}\n}}\n"
            + "\n".join(g.helpers_text) + "\n")
    nprng = np.random.default_rng(rng.randrange(2 ** 32))
    inputs = [(nprng.standard_normal(N) * 2).astype(np.float32) for _ in range(2)]
    return LoopProgram(text, inputs)


@contextmanager
def _tier(name):
    """The interpreter's switches for one tier setting."""
    from ..interpreter import plan, sequence_codegen
    saved = (plan._COMPILE_AFTER_RUNS, plan._MAX_COMPILED_STEPS, plan._INLINE_MAX_OPS,
             sequence_codegen.GENERATE_AFTER)
    try:
        if name == "stepwise":
            plan._COMPILE_AFTER_RUNS, plan._MAX_COMPILED_STEPS = 1 << 30, -1
        elif name == "compiled_at_once":
            plan._COMPILE_AFTER_RUNS = 0
        elif name == "no_inlining":
            plan._INLINE_MAX_OPS = 0
        elif name == "generated_code":
            plan._COMPILE_AFTER_RUNS = 0
            sequence_codegen.GENERATE_AFTER = 0
        yield
    finally:
        (plan._COMPILE_AFTER_RUNS, plan._MAX_COMPILED_STEPS, plan._INLINE_MAX_OPS,
         sequence_codegen.GENERATE_AFTER) = saved


# "traced" is the reference: a run that records a trace runs op by op, none of the loop
# runners (fused loops, loops on numpy scalars, recognized jax loops) taking part
TIERS = ("traced", "default", "stepwise", "compiled_at_once", "no_inlining", "generated_code")


def _no_trace(op, results):
    pass


def _bits(results):
    return [(np.asarray(r).dtype.str, np.asarray(r).shape, np.asarray(r).tobytes()) for r in results]


def check_tiers(p: LoopProgram, limits=None, runs: int = 3) -> str:
    """The program verifies; under every tier setting, `runs` runs of one parsed module and a
    run of a fresh parse give the traced run's results (op by op), bit for bit."""
    from .. import parse, run
    from ..errors import StableHLOError
    from ..verifier import verify
    m = parse(p.text, "loops.mlir", limits=limits)
    try:
        verify(m)
    except StableHLOError as e:
        raise Finding(f"a generated loop program does not verify: {e}\n{p.text}") from None
    want = None
    for tier in TIERS:
        trace = _no_trace if tier == "traced" else None
        with _tier(tier):
            m = parse(p.text, "loops.mlir", limits=limits)
            try:
                outs = [_bits(run(m, *p.inputs, limits=limits, trace=trace)) for _ in range(runs)]
                outs.append(_bits(run(parse(p.text, "loops.mlir", limits=limits), *p.inputs,
                                      limits=limits, trace=trace)))
            except StableHLOError as e:
                raise Finding(f"tier {tier}: a generated loop program fails: {e}\n{p.text}") from None
        if want is None:
            want = outs[0]
        for k, o in enumerate(outs):
            if o != want:
                raise Finding(f"tier {tier}, run {k + 1}: results differ from the traced "
                              f"run's\n{p.text}")
    return "ok"
