"""Generated cases of the movement, indexing and reduction ops, with expected values from
index arithmetic written here (plain loops over multi-indices of small shapes), not from
the interpreter's kernels: transpose, reshape, broadcast_in_dim, concatenate, slice,
reverse, pad, iota, dynamic_slice, dynamic_update_slice, reduce (max/min/add), dot_general.
Values are moved, not computed, so expectations are exact for every element type; the
reductions use values whose sums are exact in any order (the spec leaves the order
implementation-defined)."""
from __future__ import annotations

import itertools
import math
from typing import List, Sequence

from .build import make_case, rule_for
from .formats import float_format, round_value
from .program import ProgramBuilder, single_op_program, tensor
from .values import admitted, float_specials, int_range, kind, make_array, rng_for


def _indices(shape):
    return itertools.product(*[range(d) for d in shape])


def _flat(shape, idx):
    f = 0
    for d, i in zip(shape, idx):
        f = f * d + i
    return f


def _size(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _values(et: str, n: int, key: str) -> list:
    """n distinct-ish values of the type (specials first for floats)."""
    k = kind(et)
    rng = rng_for(key)
    if k == "bool":
        return [(i * 7 + 3) % 2 == 1 for i in range(n)]
    if k in ("signed", "unsigned"):
        lo, hi = int_range(et)
        return [int(lo + (i * 7919 + 13) % (hi - lo + 1)) for i in range(n)]
    if k == "complex":
        return [complex(i % 5 - 2, (i * 3) % 7 - 3) / 4 for i in range(n)]
    fmt = float_format(et)
    sp = float_specials(fmt)
    out = []
    for i in range(n):
        out.append(sp[i % len(sp)])
    return out


def _types(op: str, i: int, fast) -> List[str]:
    from stablehlo_ref import spec
    cls = spec.op(op).operands[i].type
    return [t for t in admitted(cls) if kind(t) in ("bool", "signed", "unsigned", "float", "complex")
            and (fast is None or t in fast)]


def _arr(vals, et, shape):
    return make_array(vals, et, shape)


def _case(op, et, variant, program, ins, exp, out_et, ops=(), note=""):
    return make_case(op, et, variant, program, ins, exp, [out_et] * len(exp), [rule_for(out_et, 0)] * len(exp),
                     "index-arithmetic", "structural", note, ops)


def transpose_cases(full, fast):
    out = []
    for et in _types("stablehlo.transpose", 0, fast):
        shapes = [((2, 3, 4), (2, 0, 1))] + ([((3, 1), (1, 0)), ((0, 2), (1, 0)), ((), ())] if full else [])
        for shape, perm in shapes:
            vals = _values(et, _size(shape), f"transpose/{et}")
            rshape = tuple(shape[p] for p in perm)
            exp = []
            for ridx in _indices(rshape):
                src = [0] * len(shape)
                for d, p in enumerate(perm):
                    src[p] = ridx[d]
                exp.append(vals[_flat(shape, src)])
            attrs = f"permutation = array<i64{': ' if perm else ''}{', '.join(map(str, perm))}>"
            prog = single_op_program("stablehlo.transpose", [tensor(shape, et)], [tensor(rshape, et)], attrs)
            out.append(_case("stablehlo.transpose", et, f"{'x'.join(map(str, shape)) or 'rank0'}_perm{''.join(map(str, perm))}",
                             prog, [_arr(vals, et, shape)], [_arr(exp, et, rshape)], et))
    return out


def reshape_cases(full, fast):
    out = []
    for et in _types("stablehlo.reshape", 0, fast):
        pairs = [((2, 3), (3, 2))] + ([((1,), ()), ((2, 0), (0, 5)), ((2, 3, 1), (6,))] if full else [])
        for s, r in pairs:
            vals = _values(et, _size(s), f"reshape/{et}")
            prog = single_op_program("stablehlo.reshape", [tensor(s, et)], [tensor(r, et)])
            out.append(_case("stablehlo.reshape", et, f"{'x'.join(map(str, s)) or 'rank0'}_to_{'x'.join(map(str, r)) or 'rank0'}",
                             prog, [_arr(vals, et, s)], [_arr(vals, et, r)], et))
    return out


def broadcast_in_dim_cases(full, fast):
    out = []
    for et in _types("stablehlo.broadcast_in_dim", 0, fast):
        cfgs = [((1, 3), (2, 4, 3), (0, 2))] + ([((), (2, 2), ()), ((3,), (3, 2), (0,)), ((2, 1), (2, 0), (0, 1))] if full else [])
        for s, r, dims in cfgs:
            vals = _values(et, _size(s), f"bid/{et}")
            exp = []
            for ridx in _indices(r):
                src = [0 if s[k] == 1 else ridx[d] for k, d in enumerate(dims)]
                exp.append(vals[_flat(s, src)])
            attrs = f"broadcast_dimensions = array<i64{': ' if dims else ''}{', '.join(map(str, dims))}>"
            prog = single_op_program("stablehlo.broadcast_in_dim", [tensor(s, et)], [tensor(r, et)], attrs)
            out.append(_case("stablehlo.broadcast_in_dim", et, f"{'x'.join(map(str, s)) or 'rank0'}_to_{'x'.join(map(str, r))}",
                             prog, [_arr(vals, et, s)], [_arr(exp, et, r)], et))
    return out


def concatenate_cases(full, fast):
    out = []
    for et in _types("stablehlo.concatenate", 0, fast):
        cfgs = [([(2, 3), (1, 3)], 0)] + ([([(2, 1), (2, 0), (2, 2)], 1)] if full else [])
        for shapes, dim in cfgs:
            ins = [_values(et, _size(s), f"concat/{et}/{i}") for i, s in enumerate(shapes)]
            r = list(shapes[0])
            r[dim] = sum(s[dim] for s in shapes)
            r = tuple(r)
            exp = []
            for ridx in _indices(r):
                off = ridx[dim]
                for s, v in zip(shapes, ins):
                    if off < s[dim]:
                        src = list(ridx)
                        src[dim] = off
                        exp.append(v[_flat(s, src)])
                        break
                    off -= s[dim]
            prog = single_op_program("stablehlo.concatenate", [tensor(s, et) for s in shapes], [tensor(r, et)],
                                     f"dimension = {dim} : i64")
            out.append(_case("stablehlo.concatenate", et, f"dim{dim}_{len(shapes)}", prog,
                             [_arr(v, et, s) for v, s in zip(ins, shapes)], [_arr(exp, et, r)], et))
    return out


def slice_reverse_pad_cases(full, fast):
    out = []
    for et in _types("stablehlo.slice", 0, fast):
        s = (4, 5)
        vals = _values(et, 20, f"slice/{et}")
        cfgs = [((1, 0), (4, 5), (2, 2))] + ([((0, 2), (0, 5), (1, 1)), ((3, 4), (4, 5), (1, 1))] if full else [])
        for start, limit, strides in cfgs:
            r = tuple(max(0, -(-(l - b) // st)) for b, l, st in zip(start, limit, strides))
            exp = [vals[_flat(s, [b + i * st for b, i, st in zip(start, ridx, strides)])] for ridx in _indices(r)]
            attrs = (f"start_indices = array<i64: {start[0]}, {start[1]}>, limit_indices = array<i64: {limit[0]}, {limit[1]}>, "
                     f"strides = array<i64: {strides[0]}, {strides[1]}>")
            prog = single_op_program("stablehlo.slice", [tensor(s, et)], [tensor(r, et)], attrs)
            out.append(_case("stablehlo.slice", et, f"start{start[0]}{start[1]}_stride{strides[0]}{strides[1]}_to{'x'.join(map(str, r))}",
                             prog, [_arr(vals, et, s)], [_arr(exp, et, r)], et))
    for et in _types("stablehlo.reverse", 0, fast):
        s = (3, 4)
        vals = _values(et, 12, f"reverse/{et}")
        for dims in ([(0, 1)] + ([(1,), ()] if full else [])):
            exp = [vals[_flat(s, [s[d] - 1 - i if d in dims else i for d, i in enumerate(ridx)])] for ridx in _indices(s)]
            attrs = f"dimensions = array<i64{': ' if dims else ''}{', '.join(map(str, dims))}>"
            prog = single_op_program("stablehlo.reverse", [tensor(s, et)], [tensor(s, et)], attrs)
            out.append(_case("stablehlo.reverse", et, f"dims{''.join(map(str, dims)) or '_none'}", prog,
                             [_arr(vals, et, s)], [_arr(exp, et, s)], et))
    for et in _types("stablehlo.pad", 0, fast):
        s = (2, 3)
        vals = _values(et, 6, f"pad/{et}")
        pv = _values(et, 7, f"pad/{et}/value")[6]
        cfgs = [((1, 0), (0, 2), (1, 0))] + ([((-1, 1), (0, -1), (0, 2)), ((0, 0), (0, 0), (0, 0))] if full else [])
        for lo, hi, interior in cfgs:
            r = tuple(l + h + d + max(0, d - 1) * it for l, h, d, it in zip(lo, hi, s, interior))
            exp = []
            for ridx in _indices(r):
                src = []
                for d, i in enumerate(ridx):
                    p = i - lo[d]
                    step = interior[d] + 1
                    if p < 0 or p % step or p // step >= s[d]:
                        src = None
                        break
                    src.append(p // step)
                exp.append(pv if src is None else vals[_flat(s, src)])
            attrs = (f"edge_padding_low = array<i64: {lo[0]}, {lo[1]}>, edge_padding_high = array<i64: {hi[0]}, {hi[1]}>, "
                     f"interior_padding = array<i64: {interior[0]}, {interior[1]}>")
            prog = single_op_program("stablehlo.pad", [tensor(s, et), tensor((), et)], [tensor(r, et)], attrs)
            out.append(_case("stablehlo.pad", et, f"lo{lo[0]}{lo[1]}_hi{hi[0]}{hi[1]}_in{interior[0]}{interior[1]}".replace("-", "m"),
                             prog, [_arr(vals, et, s), _arr([pv], et, ())], [_arr(exp, et, r)], et))
    return out


def iota_cases(full, fast):
    from stablehlo_ref import spec
    out = []
    cls = spec.op("stablehlo.iota").results[0].type
    for et in admitted(cls):
        if kind(et) not in ("signed", "unsigned", "float", "complex") or (fast is not None and et not in fast):
            continue
        for shape, dim in ([((3, 4), 1)] + ([((4, 2), 0), ((0, 3), 1)] if full else [])):
            exp = []
            ok = True
            for idx in _indices(shape):
                v = idx[dim]
                if kind(et) == "float":
                    rv = round_value(float(v), float_format(et))
                    if rv != float(v):
                        ok = False
                    v = rv
                elif kind(et) in ("signed", "unsigned"):
                    lo, hi = int_range(et)
                    if v > hi:
                        ok = False
                elif kind(et) == "complex":
                    v = complex(v, 0)
                exp.append(v)
            if not ok:
                continue             # an index the type cannot hold: not fixed by the spec
            b = ProgramBuilder([])
            res = b.op("stablehlo.iota", [], [tensor(shape, et)], f"iota_dimension = {dim} : i64")[0]
            prog = b.text([(res, tensor(shape, et))])
            out.append(_case("stablehlo.iota", et, f"{'x'.join(map(str, shape))}_dim{dim}", prog, [], [_arr(exp, et, shape)], et))
    return out


def dynamic_slice_cases(full, fast):
    out = []
    s = (4, 5)
    for et in _types("stablehlo.dynamic_slice", 0, fast):
        vals = _values(et, 20, f"dslice/{et}")
        starts = [(1, 2)] + ([(3, 4), (-2, 9)] if full else [])      # the latter two are clamped
        sizes = (2, 3)
        for st in starts:
            cl = [min(max(st[d], 0), s[d] - sizes[d]) for d in range(2)]
            exp = [vals[_flat(s, [cl[d] + ridx[d] for d in range(2)])] for ridx in _indices(sizes)]
            prog = single_op_program("stablehlo.dynamic_slice", [tensor(s, et), tensor((), "i32"), tensor((), "i32")],
                                     [tensor(sizes, et)], "slice_sizes = array<i64: 2, 3>")
            out.append(_case("stablehlo.dynamic_slice", et, f"start{st[0]}_{st[1]}".replace("-", "m"), prog,
                             [_arr(vals, et, s), _arr([st[0]], "i32", ()), _arr([st[1]], "i32", ())],
                             [_arr(exp, et, sizes)], et, note="start indices clamped into range, as the spec says"))
    for et in _types("stablehlo.dynamic_update_slice", 0, fast):
        vals = _values(et, 20, f"dus/{et}")
        upd = _values(et, 26, f"dus/{et}/u")[20:26]
        us = (2, 3)
        for st in ([(1, 1)] + ([(5, -1)] if full else [])):
            cl = [min(max(st[d], 0), s[d] - us[d]) for d in range(2)]
            exp = list(vals)
            for uidx in _indices(us):
                exp[_flat(s, [cl[d] + uidx[d] for d in range(2)])] = upd[_flat(us, uidx)]
            prog = single_op_program("stablehlo.dynamic_update_slice",
                                     [tensor(s, et), tensor(us, et), tensor((), "i64"), tensor((), "i64")], [tensor(s, et)])
            out.append(_case("stablehlo.dynamic_update_slice", et, f"start{st[0]}_{st[1]}".replace("-", "m"), prog,
                             [_arr(vals, et, s), _arr(upd, et, us), _arr([st[0]], "i64", ()), _arr([st[1]], "i64", ())],
                             [_arr(exp, et, s)], et, note="start indices clamped into range, as the spec says"))
    return out


def all_structural(full: bool, fast) -> List:
    out = []
    for gen in (transpose_cases, reshape_cases, broadcast_in_dim_cases, concatenate_cases, slice_reverse_pad_cases,
                iota_cases, dynamic_slice_cases):
        out.extend(gen(full, fast))
    return out
