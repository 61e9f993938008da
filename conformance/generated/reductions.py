"""Generated cases of reduce and dot_general. The spec leaves the order of a reduction
implementation-defined, so float cases use small integer-valued inputs whose sums and
products are exact in every order; max/min are order-independent anyway. Integer sums wrap."""
from __future__ import annotations

import itertools
import math
from typing import List

from .build import make_case, rule_for
from .formats import float_format, round_value
from .oracles import wrap
from .program import ProgramBuilder, tensor
from .values import admitted, bits, int_range, kind, make_array

NOTE = "the reduction order is implementation-defined: inputs chosen so that every order gives the same result"


def _types(op, i, fast, kinds=("bool", "signed", "unsigned", "float", "complex")):
    from stablehlo_ref import spec
    cls = spec.op(op).operands[i].type
    return [t for t in admitted(cls) if kind(t) in kinds and (fast is None or t in fast)]


def _small(et, n, seed):
    k = kind(et)
    if k == "bool":
        return [(i * 5 + seed) % 3 == 0 for i in range(n)]
    if k in ("signed", "unsigned"):
        lo, hi = int_range(et)
        return [lo + ((i * 37 + seed * 11) % (hi - lo + 1)) for i in range(n)]
    if k == "complex":
        return [complex((i + seed) % 3 - 1, (i * 2 + seed) % 3 - 1) for i in range(n)]
    fmt = float_format(et)
    vals = [float((i * 3 + seed) % 5 - 2) for i in range(n)]       # -2..2: exact in every format
    return [v if round_value(v, fmt) == v else 1.0 for v in vals]


def _combine(body, et, a, b):
    k = kind(et)
    if body == "add":
        if k == "bool":
            return a or b
        if k in ("signed", "unsigned"):
            return wrap(a + b, bits(et), k == "signed")
        return a + b
    if body == "max":
        return a or b if k == "bool" else max(a, b)
    if body == "mul":
        if k == "bool":
            return a and b
        if k in ("signed", "unsigned"):
            return wrap(a * b, bits(et), k == "signed")
        return a * b
    if body == "and":
        return (a and b) if k == "bool" else wrap(a & b, bits(et), k == "signed")
    if body == "or":
        return (a or b) if k == "bool" else wrap(a | b, bits(et), k == "signed")
    return a and b if k == "bool" else min(a, b)


def reduce_cases(full, fast) -> List:
    out = []
    op = "stablehlo.reduce"
    s = (3, 4)
    for et in _types(op, 0, fast):
        for body in (("add", "max", "min", "mul", "and", "or") if full else ("add", "max", "mul", "and")):
            if kind(et) == "complex" and body not in ("add", "mul"):
                continue
            if kind(et) == "float" and body in ("and", "or"):
                continue
            fmt = float_format(et) if kind(et) == "float" else None
            vals = _small(et, 12, 1)
            if kind(et) == "float" and body == "add" and round_value(12.0, fmt) != 12.0:
                continue                # partial sums must stay exact in the format
            if kind(et) == "float" and body == "mul" and round_value(8.0, fmt) != 8.0:
                continue                # products of three values in -2..2 must stay exact
            if body == "add":
                init = False if kind(et) == "bool" else 0
            elif body == "mul":
                init = True if kind(et) == "bool" else 1
            elif body == "and":
                init = True if kind(et) == "bool" else wrap(-1, bits(et), kind(et) == "signed")
            elif body == "or":
                init = False if kind(et) == "bool" else 0
            elif kind(et) == "bool":
                init = body == "min"
            elif kind(et) == "float":
                init = -math.inf if body == "max" else math.inf
                if not fmt.has_inf:
                    init = (fmt.smallest_subnormal if fmt.unsigned else -fmt.max) if body == "max" else fmt.max
            else:
                lo, hi = int_range(et)
                init = lo if body == "max" else hi
            exp = []
            for j in range(4):
                acc = init
                for i in range(3):
                    acc = _combine(body, et, acc, vals[i * 4 + j])
                exp.append(acc)
            sop = {"add": "stablehlo.add", "max": "stablehlo.maximum", "min": "stablehlo.minimum",
                   "mul": "stablehlo.multiply", "and": "stablehlo.and", "or": "stablehlo.or"}[body]
            t0 = tensor((), et)
            region = (f"{{\n  ^bb0(%a: {t0}, %b: {t0}):\n    %s = \"{sop}\"(%a, %b) : ({t0}, {t0}) -> {t0}\n"
                      f"    \"stablehlo.return\"(%s) : ({t0}) -> ()\n  }}")
            b = ProgramBuilder([tensor(s, et), t0])
            res = b.op(op, [(b.arg(0), tensor(s, et)), (b.arg(1), t0)], [tensor((4,), et)],
                       "dimensions = array<i64: 0>", region)[0]
            prog = b.text([(res, tensor((4,), et))])
            out.append(make_case(op, et, f"{body}_dim0", prog, [make_array(vals, et, s), make_array([init], et, ())],
                                 [make_array(exp, et, (4,))], [et], [rule_for(et, 0)], "python-exact", "reductions",
                                 NOTE, (op, sop)))
    return out


def dot_general_cases(full, fast) -> List:
    out = []
    op = "stablehlo.dot_general"
    for et in _types(op, 0, fast, ("bool", "signed", "unsigned", "float", "complex")):
        if kind(et) == "float" and round_value(16.0, float_format(et)) != 16.0:
            continue
        cfgs = [("matmul", (2, 3), (3, 2), [], [], [1], [0], (2, 2))]
        if full:
            cfgs.append(("batch", (2, 2, 3), (2, 3, 2), [0], [0], [2], [1], (2, 2, 2)))
        for name, ls, rs, lb, rb, lc, rc, res in cfgs:
            if kind(et) in ("signed", "unsigned"):
                lo, hi = int_range(et)
                lv = [lo + (i * 7) % min(hi - lo + 1, 5) for i in range(math.prod(ls))]
                rv = [lo + (i * 3 + 1) % min(hi - lo + 1, 5) for i in range(math.prod(rs))]
                lv = [max(v, lo) for v in lv]
            elif kind(et) == "bool":
                lv = [i % 2 == 0 for i in range(math.prod(ls))]
                rv = [i % 3 == 0 for i in range(math.prod(rs))]
            else:
                lv = _small(et, math.prod(ls), 2)
                rv = _small(et, math.prod(rs), 3)
            # result index: batch dims, lhs free dims, rhs free dims
            lfree = [d for d in range(len(ls)) if d not in lb + lc]
            rfree = [d for d in range(len(rs)) if d not in rb + rc]
            exp = []
            ok = True
            for ridx in itertools.product(*[range(d) for d in res]):
                bi = ridx[:len(lb)]
                li = ridx[len(lb):len(lb) + len(lfree)]
                ri = ridx[len(lb) + len(lfree):]
                acc = mag = 0
                for ci in itertools.product(*[range(ls[d]) for d in lc]):
                    lidx = [0] * len(ls)
                    ridx2 = [0] * len(rs)
                    for d, v in zip(lb, bi):
                        lidx[d] = v
                    for d, v in zip(rb, bi):
                        ridx2[d] = v
                    for d, v in zip(lfree, li):
                        lidx[d] = v
                    for d, v in zip(rfree, ri):
                        ridx2[d] = v
                    for d, v in zip(lc, ci):
                        lidx[d] = v
                    for d, v in zip(rc, ci):
                        ridx2[d] = v
                    fl = 0
                    for d, v in zip(ls, lidx):
                        fl = fl * d + v
                    fr = 0
                    for d, v in zip(rs, ridx2):
                        fr = fr * d + v
                    acc += lv[fl] * rv[fr]
                    mag += abs(lv[fl] * rv[fr])
                if kind(et) == "bool":
                    acc = acc != 0          # the spec's multiply / add on booleans: and / or from false
                elif kind(et) in ("signed", "unsigned"):
                    acc = wrap(acc, bits(et), kind(et) == "signed")
                elif kind(et) == "float" and (round_value(float(acc), float_format(et)) != acc
                                              or mag > 2 ** float_format(et).precision):
                    ok = False          # some order of accumulation in the type could round
                exp.append(acc)
            if not ok:
                continue
            attrs = ("dot_dimension_numbers = #stablehlo.dot<"
                     + (f"lhs_batching_dimensions = [{', '.join(map(str, lb))}], rhs_batching_dimensions = [{', '.join(map(str, rb))}], " if lb else "")
                     + f"lhs_contracting_dimensions = [{', '.join(map(str, lc))}], rhs_contracting_dimensions = [{', '.join(map(str, rc))}]>")
            b = ProgramBuilder([tensor(ls, et), tensor(rs, et)])
            r = b.op(op, [(b.arg(0), tensor(ls, et)), (b.arg(1), tensor(rs, et))], [tensor(res, et)], attrs)[0]
            prog = b.text([(r, tensor(res, et))])
            out.append(make_case(op, et, name, prog, [make_array(lv, et, ls), make_array(rv, et, rs)],
                                 [make_array(exp, et, res)], [et], [rule_for(et, 0)], "python-exact", "reductions", NOTE))
    return out


def all_reductions(full, fast) -> List:
    return reduce_cases(full, fast) + dot_general_cases(full, fast)
