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


def all_indexing(full: bool, fast) -> List:
    out = []
    for gen in (torch_index_select_cases, gather_cases, dynamic_reshape_cases):
        out.extend(gen(full, fast))
    return out
