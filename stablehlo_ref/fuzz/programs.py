"""Random valid StableHLO programs, and the properties every one must keep.

The elementwise ops come from the spec: every `stablehlo` op with the `elementwise` and
`same_operands_and_result_type` traits, no required attribute, and operand type categories
(read by the verifier's `type_matches`) that admit the element type at hand. Around them sit
templates for ops whose result type follows from attributes (broadcast_in_dim, reshape,
transpose, slice, reverse, concatenate, reduce, dot_general, compare, select, convert, iota,
constant, clamp, a counted `while`). A generated program must verify; then it must run, and
its text, its bytecode and its results must survive print -> parse and serialize ->
deserialize unchanged.
"""
from __future__ import annotations

import functools
import random
from dataclasses import dataclass, field
from typing import List, Tuple

import numpy as np

ELEMS = ["i1", "i8", "i32", "i64", "ui8", "ui32", "f16", "bf16", "f32", "f64"]
_INT = {"i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"}
_FLOAT = {"f16", "bf16", "f32", "f64"}


class Finding(Exception):
    """A property an input broke (a round trip that changed the program, ...)."""


@dataclass
class Program:
    text: str
    inputs: List[np.ndarray] = field(default_factory=list)


@functools.lru_cache(maxsize=None)
def _elementwise_ops(elem: str) -> Tuple[Tuple[str, int], ...]:
    """(op name, operand count) of the spec's same-type elementwise ops that take `elem`."""
    from .. import spec as S
    from ..ir.types import ELEMENT_TYPES, TensorType
    from ..verifier.core import type_matches
    t = TensorType((2,), ELEMENT_TYPES[elem])
    out = []
    for o in S.ops():
        if not o.name.startswith("stablehlo.") or "elementwise" not in o.traits:
            continue
        if "same_operands_and_result_type" not in o.traits or not o.operands:
            continue
        if any(not a.optional and a.default is None for a in o.attributes):
            continue
        if all(type_matches(t, x.type) for x in o.operands) and all(type_matches(t, r.type) for r in o.results):
            out.append((o.name, len(o.operands)))
    return tuple(sorted(out))


def _ttype(shape, elem) -> str:
    return "tensor<" + "".join(f"{d}x" for d in shape) + elem + ">"


def _random_array(rng: random.Random, shape, elem) -> np.ndarray:
    from ..ir.types import ELEMENT_TYPES
    dt = ELEMENT_TYPES[elem].dtype
    n = int(np.prod(shape)) if shape else 1
    if elem == "i1":
        vals = [rng.random() < 0.5 for _ in range(n)]
    elif elem in _INT:
        info = np.iinfo(dt)
        pick = [0, 1, 2, -1, -2, 3, 7, 100, int(info.min), int(info.max)]
        vals = [rng.choice(pick) if rng.random() < 0.5 else rng.randint(int(info.min), int(info.max))
                for _ in range(n)]
        vals = [v if info.min <= v <= info.max else 0 for v in vals]
    else:
        pick = [0.0, -0.0, 1.0, -1.5, 0.5, 3.0, 1e-3, 100.0, float("inf"), float("nan")]
        vals = [rng.choice(pick) if rng.random() < 0.3 else rng.uniform(-4, 4) for _ in range(n)]
    return np.array(vals, dtype=dt).reshape(shape)


class _Gen:
    def __init__(self, rng: random.Random, elems=tuple(ELEMS), exclude_ops=()):
        self.rng = rng
        self.elems = list(elems)
        self.exclude = set(exclude_ops)
        self.lines: List[str] = []
        self.values: List[Tuple[str, tuple, str]] = []   # (name, shape, elem)
        self.n = 0

    def fresh(self) -> str:
        self.n += 1
        return f"%v{self.n}"

    def emit(self, line: str, shape, elem) -> None:
        name = self.fresh()
        self.lines.append(f"    {name} = {line}")
        self.values.append((name, tuple(shape), elem))

    def pick(self, pred=lambda v: True):
        cands = [v for v in self.values if pred(v)]
        return self.rng.choice(cands) if cands else None

    # ---------------------------------------------------------------- op templates
    def op_elementwise(self):
        name, shape, elem = self.pick()
        ops = [o for o in _elementwise_ops(elem) if o[0] not in self.exclude]
        if not ops:
            return
        op, arity = self.rng.choice(ops)
        args = [name]
        for _ in range(arity - 1):
            other = self.pick(lambda v: v[1] == shape and v[2] == elem)
            args.append(other[0])
        t = _ttype(shape, elem)
        ftype = f"({', '.join([t] * arity)}) -> {t}"
        self.emit(f"\"{op}\"({', '.join(args)}) : {ftype}", shape, elem)

    def op_compare_select(self):
        a, shape, elem = self.pick(lambda v: v[2] != "i1")
        b = self.pick(lambda v: v[1] == shape and v[2] == elem)[0]
        direction = self.rng.choice(["EQ", "NE", "GE", "GT", "LE", "LT"])
        kind = ("FLOAT" if elem in _FLOAT else "UNSIGNED" if elem.startswith("u") else "SIGNED")
        if elem in _FLOAT and self.rng.random() < 0.3:
            kind = "TOTALORDER"
        t = _ttype(shape, elem)
        self.emit(f"stablehlo.compare {direction}, {a}, {b}, {kind} : ({t}, {t}) -> {_ttype(shape, 'i1')}",
                  shape, "i1")
        pred = self.values[-1][0]
        self.emit(f"stablehlo.select {pred}, {a}, {b} : {_ttype(shape, 'i1')}, {t}", shape, elem)

    def op_convert(self):
        a, shape, elem = self.pick()
        to = self.rng.choice(self.elems)
        self.emit(f"stablehlo.convert {a} : ({_ttype(shape, elem)}) -> {_ttype(shape, to)}", shape, to)

    def op_shape(self):
        a, shape, elem = self.pick()
        t = _ttype(shape, elem)
        k = self.rng.randrange(6)
        if k == 0 and len(shape) == 2:
            perm = [1, 0]
            out = (shape[1], shape[0])
            self.emit(f"stablehlo.transpose {a}, dims = {perm} : ({t}) -> {_ttype(out, elem)}", out, elem)
        elif k == 1:
            n = int(np.prod(shape)) if shape else 1
            out = self.rng.choice([(n,), (1, n), (n, 1)] + ([(2, n // 2)] if n % 2 == 0 else []))
            self.emit(f"stablehlo.reshape {a} : ({t}) -> {_ttype(out, elem)}", out, elem)
        elif k == 2:
            out = (self.rng.randint(1, 3),) + shape
            dims = list(range(1, len(out)))
            self.emit(f"stablehlo.broadcast_in_dim {a}, dims = {dims} : ({t}) -> {_ttype(out, elem)}", out, elem)
        elif k == 3 and shape:
            starts = [self.rng.randrange(d) if d else 0 for d in shape]
            limits = [self.rng.randint(s, d) for s, d in zip(starts, shape)]
            out = tuple(l - s for s, l in zip(starts, limits))
            self.emit(f"stablehlo.slice {a} [{', '.join(f'{s}:{l}' for s, l in zip(starts, limits))}] : "
                      f"({t}) -> {_ttype(out, elem)}", out, elem)
        elif k == 4 and shape:
            self.emit(f"stablehlo.reverse {a}, dims = [0] : {t}", shape, elem)
        elif shape:
            b = self.pick(lambda v: v[2] == elem and len(v[1]) == len(shape) and v[1][1:] == shape[1:])[0]
            bshape = next(v[1] for v in self.values if v[0] == b)
            out = (shape[0] + bshape[0],) + shape[1:]
            self.emit(f"stablehlo.concatenate {a}, {b}, dim = 0 : ({t}, {_ttype(bshape, elem)}) -> "
                      f"{_ttype(out, elem)}", out, elem)

    def op_reduce(self):
        a, shape, elem = self.pick(lambda v: len(v[1]) >= 1)
        body = {"i1": "stablehlo.or"}.get(elem, self.rng.choice(["stablehlo.add", "stablehlo.maximum",
                                                                  "stablehlo.minimum"]))
        init = self.fresh()
        zero = "false" if elem == "i1" else ("0.0" if elem in _FLOAT else "0")
        self.lines.append(f"    {init} = stablehlo.constant dense<{zero}> : {_ttype((), elem)}")
        self.values.append((init, (), elem))
        out = shape[1:]
        self.emit(f"stablehlo.reduce({a} init: {init}) applies {body} across dimensions = [0] : "
                  f"({_ttype(shape, elem)}, {_ttype((), elem)}) -> {_ttype(out, elem)}", out, elem)

    def op_dot(self):
        a, shape, elem = self.pick(lambda v: len(v[1]) == 2 and v[2] in _FLOAT | _INT)
        b = self.pick(lambda v: len(v[1]) == 2 and v[1][0] == shape[1] and v[2] == elem)
        if b is None:
            return
        out = (shape[0], b[1][1])
        self.emit(f"stablehlo.dot_general {a}, {b[0]}, contracting_dims = [1] x [0] : "
                  f"({_ttype(shape, elem)}, {_ttype(b[1], elem)}) -> {_ttype(out, elem)}", out, elem)

    def op_constant(self):
        shape = self.rng.choice([(), (2,), (3,), (2, 3)])
        elem = self.rng.choice(self.elems)
        arr = _random_array(self.rng, shape, elem)
        if elem == "i1":
            vals = ["true" if x else "false" for x in arr.ravel()]
        elif elem in _INT:
            vals = [str(int(x)) for x in arr.ravel()]
        else:
            vals = [("0x7FC00000" if elem == "f32" else "0.0") if np.isnan(x) else
                    ("0.0" if np.isinf(x) else repr(float(x))) for x in arr.ravel()]
        if self.rng.random() < 0.3:
            lit = vals[0]          # a splat
        else:
            lit = _nest(vals, shape)
        self.emit(f"stablehlo.constant dense<{lit}> : {_ttype(shape, elem)}", shape, elem)

    def op_iota(self):
        shape = self.rng.choice([(3,), (2, 3), (4, 1)])
        elem = self.rng.choice([e for e in ("i32", "i64", "f32", "ui8") if e in self.elems] or ["i64"])
        self.emit(f"stablehlo.iota dim = {self.rng.randrange(len(shape))} : {_ttype(shape, elem)}", shape, elem)

    def op_while(self):
        a, shape, elem = self.pick()
        c = self.fresh()
        n = self.rng.randint(0, 4)
        self.lines.append(f"    {c} = stablehlo.constant dense<0> : tensor<i64>")
        self.values.append((c, (), "i64"))
        t = _ttype(shape, elem)
        r = self.fresh()
        body = (f"    {r}:2 = stablehlo.while(%it = {c}, %x = {a}) : tensor<i64>, {t}\n"
                f"     cond {{\n"
                f"      %lim = stablehlo.constant dense<{n}> : tensor<i64>\n"
                f"      %p = stablehlo.compare LT, %it, %lim, SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>\n"
                f"      stablehlo.return %p : tensor<i1>\n"
                f"    }} do {{\n"
                f"      %one = stablehlo.constant dense<1> : tensor<i64>\n"
                f"      %next = stablehlo.add %it, %one : tensor<i64>\n"
                f"      stablehlo.return %next, %x : tensor<i64>, {t}\n"
                f"    }}")
        self.lines.append(body)
        self.values.append((f"{r}#1", shape, elem))


def _nest(vals, shape):
    if not shape:
        return vals[0]
    if len(shape) == 1:
        return "[" + ", ".join(vals) + "]"
    step = int(np.prod(shape[1:]))
    return "[" + ", ".join(_nest(vals[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


def random_program(rng: random.Random, n_ops: int = 0, elems=tuple(ELEMS), exclude_ops=()) -> Program:
    """A random program that verifies by construction: a `@main` with 1..3 arguments of the
    element types `elems`, without the elementwise ops named in `exclude_ops`."""
    g = _Gen(rng, elems, exclude_ops)
    args = []
    inputs = []
    for i in range(rng.randint(1, 3)):
        shape = rng.choice([(), (2,), (3,), (2, 3), (3, 2), (1, 4)])
        elem = rng.choice(list(elems))
        args.append(f"%arg{i}: {_ttype(shape, elem)}")
        g.values.append((f"%arg{i}", shape, elem))
        inputs.append(_random_array(rng, shape, elem))
    templates = [g.op_elementwise] * 6 + [g.op_compare_select, g.op_convert, g.op_shape, g.op_shape,
                                          g.op_reduce, g.op_dot, g.op_constant, g.op_iota, g.op_while]
    for _ in range(n_ops or rng.randint(1, 12)):
        fn = rng.choice(templates)
        try:
            fn()
        except (TypeError, IndexError):
            pass     # a template with nothing to take here (no value of the shape it needs)
    outs = rng.sample(g.values, k=min(len(g.values), rng.randint(1, 2)))
    ret_types = [_ttype(s, e) for _, s, e in outs]
    text = ("func.func @main(" + ", ".join(args) + ") -> (" + ", ".join(ret_types) + ") {\n"
            + "\n".join(g.lines) + ("\n" if g.lines else "")
            + f"    return {', '.join(n for n, _, _ in outs)} : {', '.join(ret_types)}\n}}\n")
    return Program(text, inputs)


def _same_results(a, b) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype != y.dtype or x.shape != y.shape:
            return False
        if x.tobytes() != y.tobytes():
            return False
    return True


def check_generated(p: Program, limits) -> str:
    """The program verifies and runs; print -> parse and serialize -> deserialize keep its text
    and its results."""
    from .. import parse, print_module, run
    from ..serialization import deserialize, serialize
    from ..verifier import verify
    from ..errors import StableHLOError
    m = parse(p.text, "generated.mlir", limits=limits)
    try:
        verify(m)
    except StableHLOError as e:
        raise Finding(f"a generated program does not verify: {e}\n{p.text}") from None
    try:
        res = run(m, *p.inputs)
    except StableHLOError as e:
        raise Finding(f"a generated valid program does not run: {e}\n{p.text}") from None
    text = print_module(m)
    m2 = parse(text, "printed.mlir", limits=limits)
    if print_module(m2) != text:
        raise Finding("print -> parse changed a generated program:\n" + p.text)
    if not _same_results(res, run(m2, *p.inputs)):
        raise Finding("print -> parse changed a generated program's results:\n" + p.text)
    data = serialize(m, "current")
    m3 = deserialize(data, limits=limits)
    verify(m3)
    if print_module(m3, strip_debuginfo=True) != print_module(m, strip_debuginfo=True):
        raise Finding("serialize -> deserialize changed a generated program:\n" + p.text)
    if not _same_results(res, run(m3, *p.inputs)):
        raise Finding("serialize -> deserialize changed a generated program's results:\n" + p.text)
    try:
        old = serialize(m, "1.0.0")
    except StableHLOError:
        return "ok (not expressible at 1.0.0)"      # an op newer than the target: refused
    verify(deserialize(old, limits=limits))
    return "ok"
