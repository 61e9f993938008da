"""Generated cases of the indexing ops, with expected values from index arithmetic written
here (plain loops over multi-indices), not from the interpreter's kernels:
torch_index_select, gather (row gather with clamped start indices), dynamic_reshape.
Values are moved, not computed, so expectations are exact for every element type."""
from __future__ import annotations

from typing import List

from .program import single_op_program, tensor
from .structural import _arr, _case, _flat, _indices, _size, _types, _values


def _name(shape):
    return "x".join(map(str, shape)) or "rank0"


def torch_index_select_cases(full, fast):
    out = []
    cfgs = [((3, 4), 0, (2,), [2, 0])] + ([((2, 3, 2), 1, (2, 2), [1, 2, 0, 1]), ((3, 2), 0, (0,), []),
                                          ((1, 3), 1, (), [2])] if full else [])
    for et in _types("stablehlo.torch_index_select", 0, fast):
        for shape, dim, ishape, idx in cfgs:
            vals = _values(et, _size(shape), f"tis/{et}")
            rshape = tuple(shape[:dim]) + tuple(ishape) + tuple(shape[dim + 1:])
            exp = []
            for ridx in _indices(rshape):
                pre, mid, post = ridx[:dim], ridx[dim:dim + len(ishape)], ridx[dim + len(ishape):]
                src = list(pre) + [idx[_flat(ishape, mid)]] + list(post)
                exp.append(vals[_flat(shape, src)])
            prog = single_op_program("stablehlo.torch_index_select", [tensor(shape, et), tensor(ishape, "i32")],
                                     [tensor(rshape, et)], f"dim = {dim} : i64, batch_dims = 0 : i64")
            out.append(_case("stablehlo.torch_index_select", et, f"{_name(shape)}_dim{dim}_idx{_name(ishape)}", prog,
                             [_arr(vals, et, shape), _arr(idx, "i32", ishape)], [_arr(exp, et, rshape)], et))
    return out


def gather_cases(full, fast):
    """Row gather: offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],
    index_vector_dim=1; start indices clamped into [0, rows - 1] as the spec says."""
    out = []
    cfgs = [((3, 4), [2, 0, -1])] + ([((4, 2), [7, 1]), ((2, 3), []), ((1, 1), [0])] if full else [])
    for et in _types("stablehlo.gather", 0, fast):
        for shape, idx in cfgs:
            rows, cols = shape
            vals = _values(et, _size(shape), f"gather/{et}")
            rshape = (len(idx), cols)
            exp = []
            for b, k in _indices(rshape):
                r = min(max(idx[b], 0), rows - 1)
                exp.append(vals[r * cols + k])
            attrs = ("dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                     f"start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, {cols}>, "
                     "indices_are_sorted = false")
            prog = single_op_program("stablehlo.gather", [tensor(shape, et), tensor((len(idx), 1), "i32")],
                                     [tensor(rshape, et)], attrs)
            out.append(_case("stablehlo.gather", et, f"rows_{_name(shape)}_n{len(idx)}", prog,
                             [_arr(vals, et, shape), _arr(idx, "i32", (len(idx), 1))], [_arr(exp, et, rshape)], et,
                             note="start indices clamped into range, as the spec says"))
    return out


def dynamic_reshape_cases(full, fast):
    out = []
    pairs = [((2, 3), (3, 2))] + ([((6,), (1, 6)), ((2, 0), (0, 4))] if full else [])
    for et in _types("stablehlo.dynamic_reshape", 0, fast):
        for s, r in pairs:
            vals = _values(et, _size(s), f"dreshape/{et}")
            prog = single_op_program("stablehlo.dynamic_reshape", [tensor(s, et), tensor((len(r),), "i64")],
                                     [tensor(r, et)])
            out.append(_case("stablehlo.dynamic_reshape", et, f"{_name(s)}_to_{_name(r)}", prog,
                             [_arr(vals, et, s), _arr(list(r), "i64", (len(r),))], [_arr(vals, et, r)], et,
                             note="row-major order kept: element k of the operand is element k of the result"))
    return out


def dynamic_iota_cases(full, fast):
    from stablehlo_ref import spec
    from .formats import float_format, round_value
    from .values import admitted, int_range, kind
    out = []
    for et in admitted(spec.op("stablehlo.dynamic_iota").results[0].type):
        if kind(et) not in ("signed", "unsigned", "float", "complex") or (fast is not None and et not in fast):
            continue
        for shape, dim in ([((2, 3), 1)] + ([((3, 2), 0), ((0, 2), 1), ((5,), 0)] if full else [])):
            exp, ok = [], True
            for idx in _indices(shape):
                v = idx[dim]
                if kind(et) == "float":
                    ok = ok and round_value(float(v), float_format(et)) == float(v)
                    v = float(v)
                elif kind(et) == "complex":
                    v = complex(v, 0)
                elif v > int_range(et)[1]:
                    ok = False
                exp.append(v)
            if not ok:
                continue             # an index the type cannot hold: not fixed by the spec
            prog = single_op_program("stablehlo.dynamic_iota", [tensor((len(shape),), "i64")], [tensor(shape, et)],
                                     f"iota_dimension = {dim} : i64")
            out.append(_case("stablehlo.dynamic_iota", et, f"{_name(shape)}_dim{dim}", prog,
                             [_arr(list(shape), "i64", (len(shape),))], [_arr(exp, et, shape)], et))
    return out


def dynamic_broadcast_in_dim_cases(full, fast):
    out = []
    cfgs = [((1, 3), (2, 4, 3), (0, 2))] + ([((), (2, 2), ()), ((3,), (3, 2), (0,)), ((2, 1), (2, 0), (0, 1))] if full else [])
    for et in _types("stablehlo.dynamic_broadcast_in_dim", 0, fast):
        for s, r, dims in cfgs:
            vals = _values(et, _size(s), f"dbid/{et}")
            exp = []
            for ridx in _indices(r):
                src = [0 if s[k] == 1 else ridx[d] for k, d in enumerate(dims)]
                exp.append(vals[_flat(s, src)])
            attrs = f"broadcast_dimensions = array<i64{': ' if dims else ''}{', '.join(map(str, dims))}>"
            prog = single_op_program("stablehlo.dynamic_broadcast_in_dim", [tensor(s, et), tensor((len(r),), "i64")],
                                     [tensor(r, et)], attrs)
            out.append(_case("stablehlo.dynamic_broadcast_in_dim", et, f"{_name(s)}_to_{_name(r)}", prog,
                             [_arr(vals, et, s), _arr(list(r), "i64", (len(r),))], [_arr(exp, et, r)], et))
    return out


def real_dynamic_slice_cases(full, fast):
    out = []
    s = (4, 5)
    cfgs = [((1, 0), (3, 5), (1, 2))] + ([((0, 1), (4, 4), (3, 1)), ((2, 2), (2, 4), (1, 1))] if full else [])
    for et in _types("stablehlo.real_dynamic_slice", 0, fast):
        vals = _values(et, _size(s), f"rds/{et}")
        for st, lim, strd in cfgs:
            r = tuple(-(-(lim[d] - st[d]) // strd[d]) for d in range(2))
            exp = [vals[_flat(s, [st[d] + ridx[d] * strd[d] for d in range(2)])] for ridx in _indices(r)]
            prog = single_op_program("stablehlo.real_dynamic_slice", [tensor(s, et)] + [tensor((2,), "i64")] * 3,
                                     [tensor(r, et)])
            out.append(_case("stablehlo.real_dynamic_slice", et, f"s{st[0]}{st[1]}_l{lim[0]}{lim[1]}_t{strd[0]}{strd[1]}",
                             prog, [_arr(vals, et, s)] + [_arr(list(v), "i64", (2,)) for v in (st, lim, strd)],
                             [_arr(exp, et, r)], et))
    return out


def dynamic_pad_cases(full, fast):
    out = []
    s = (2, 3)
    cfgs = [((1, 0), (0, 2), (0, 1))] + ([((0, 0), (0, 0), (2, 0)), ((2, 1), (1, 0), (1, 1))] if full else [])
    for et in _types("stablehlo.dynamic_pad", 0, fast):
        vals = _values(et, _size(s) + 1, f"dpad/{et}")
        pv, vals = vals[-1], vals[:-1]
        for lo, hi, it in cfgs:
            r = tuple(lo[d] + s[d] + max(s[d] - 1, 0) * it[d] + hi[d] for d in range(2))
            exp = [pv] * _size(r)
            for idx in _indices(s):
                exp[_flat(r, [lo[d] + idx[d] * (it[d] + 1) for d in range(2)])] = vals[_flat(s, idx)]
            prog = single_op_program("stablehlo.dynamic_pad", [tensor(s, et), tensor((), et)] + [tensor((2,), "i64")] * 3,
                                     [tensor(r, et)])
            out.append(_case("stablehlo.dynamic_pad", et, f"lo{lo[0]}{lo[1]}_hi{hi[0]}{hi[1]}_in{it[0]}{it[1]}", prog,
                             [_arr(vals, et, s), _arr([pv], et, ())] + [_arr(list(v), "i64", (2,)) for v in (lo, hi, it)],
                             [_arr(exp, et, r)], et))
    return out


def all_indexing(full: bool, fast) -> List:
    out = []
    for gen in (torch_index_select_cases, gather_cases, dynamic_reshape_cases, dynamic_iota_cases,
                dynamic_broadcast_in_dim_cases, real_dynamic_slice_cases, dynamic_pad_cases):
        out.extend(gen(full, fast))
    return out
