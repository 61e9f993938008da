"""Indexing kernels: gather, dynamic_gather, torch_index_select and scatter.

Every index computation is done on whole arrays: the operand (or result) index of each
element of the result (or of `updates`) is built per operand dimension by broadcasting the
start index, the batching index and the window offset against each other.

`apply_updates` is shared with `select_and_scatter`: it folds values into chosen elements of
flat arrays with an update region, using the numpy `ufunc.at` primitive for the common bodies
and, for any other body, rounds of region calls on whole arrays in which every target appears
at most once."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from .numerics import compute_dtype, elem, from_compute
from .reduction import _PRIMITIVES, recognize_binary_body
from .registry import kernel

_INT64_SAFE = np.int64(1) << 62


def as_index_array(x) -> np.ndarray:
    """Integer indices of any integer element type as int64 (huge unsigned values stay huge)."""
    x = np.asarray(x)
    if x.dtype == np.uint64:
        x = np.minimum(x, np.uint64(_INT64_SAFE))
    return x.astype(np.int64)


def _ints(value) -> tuple:
    return tuple(int(v) for v in value)


def _index_vectors(indices, index_vector_dim: int) -> np.ndarray:
    """`indices` as int64 with the index vector as the last axis."""
    idx = as_index_array(indices)
    if index_vector_dim >= idx.ndim:
        return idx[..., None]
    return np.moveaxis(idx, index_vector_dim, -1)


def _axis_range(n: int, axis: int, ndim: int) -> np.ndarray:
    shape = [1] * ndim
    shape[axis] = n
    return np.arange(n, dtype=np.int64).reshape(shape)


# ------------------------------------------------------------------ gather

def gather_array(operand, start_indices, *, offset_dims, collapsed_slice_dims,
                 operand_batching_dims, start_indices_batching_dims, start_index_map,
                 index_vector_dim, slice_sizes) -> np.ndarray:
    """The spec's gather on numpy arrays (start indices clamped so each slice fits)."""
    rank = operand.ndim
    if len(slice_sizes) != rank:
        raise InterpreterError(f"gather: {len(slice_sizes)} slice sizes for an operand of rank {rank}")
    idx = _index_vectors(start_indices, index_vector_dim)
    if idx.shape[-1] != len(start_index_map):
        raise InterpreterError(f"gather: index vectors have {idx.shape[-1]} elements but "
                               f"start_index_map has {len(start_index_map)}")
    batch_shape = idx.shape[:-1]
    nb = len(batch_shape)
    offset_operand_dims = [d for d in range(rank)
                           if d not in collapsed_slice_dims and d not in operand_batching_dims]
    offset_shape = tuple(int(slice_sizes[d]) for d in offset_operand_dims)
    no = len(offset_shape)
    if len(offset_dims) != no:
        raise InterpreterError(f"gather: {len(offset_dims)} offset dims but {no} slice dims remain")
    full_shape = batch_shape + offset_shape
    comps = []
    for d in range(rank):
        comp = np.zeros((1,) * (nb + no), dtype=np.int64)
        if d in start_index_map:
            k = start_index_map.index(d)
            hi = max(operand.shape[d] - int(slice_sizes[d]), 0)
            start = np.clip(idx[..., k], 0, hi)
            comp = comp + start.reshape(batch_shape + (1,) * no)
        if d in operand_batching_dims:
            ds = start_indices_batching_dims[operand_batching_dims.index(d)]
            axis = ds - (0 if ds < index_vector_dim else 1)
            comp = comp + _axis_range(batch_shape[axis], axis, nb + no)
        if d in offset_operand_dims:
            j = offset_operand_dims.index(d)
            comp = comp + _axis_range(offset_shape[j], nb + j, nb + no)
        comps.append(np.broadcast_to(comp, full_shape))
    if operand.size == 0 and int(np.prod(full_shape)) == 0:
        out = np.empty(full_shape, dtype=operand.dtype)
    else:
        out = operand[tuple(comps)]
    # result axes: offset_dims take the slice axes in order, the others the batch axes
    perm = [0] * (nb + no)
    batch_result_dims = [d for d in range(nb + no) if d not in offset_dims]
    for i, d in enumerate(batch_result_dims):
        perm[d] = i
    for j, d in enumerate(offset_dims):
        perm[d] = nb + j
    return np.transpose(out, perm)


def _gather_dims(op):
    f = dict(op.attributes["dimension_numbers"].fields)
    return dict(
        offset_dims=list(_ints(f.get("offset_dims", ()))),
        collapsed_slice_dims=list(_ints(f.get("collapsed_slice_dims", ()))),
        operand_batching_dims=list(_ints(f.get("operand_batching_dims", ()))),
        start_indices_batching_dims=list(_ints(f.get("start_indices_batching_dims", ()))),
        start_index_map=list(_ints(f.get("start_index_map", ()))),
        index_vector_dim=int(f.get("index_vector_dim", 0)),
    )


@kernel("stablehlo.gather")
def gather(ctx, op, operand, start_indices):
    sizes = _ints(op.attributes["slice_sizes"].values)
    return gather_array(operand, start_indices, slice_sizes=sizes, **_gather_dims(op))


@kernel("stablehlo.dynamic_gather")
def dynamic_gather(ctx, op, operand, start_indices, slice_sizes):
    sizes = _ints(as_index_array(slice_sizes).reshape(-1))
    return gather_array(operand, start_indices, slice_sizes=sizes, **_gather_dims(op))


@kernel("stablehlo.torch_index_select")
def torch_index_select(ctx, op, operand, index):
    dim = int(op.attributes["dim"].value)
    batch_dims = int(op.attributes["batch_dims"].value)
    rank = operand.ndim
    if dim < 0:
        dim += rank
    if batch_dims < 0:
        batch_dims += index.ndim
    idx = as_index_array(index)
    k = idx.ndim - batch_dims
    out_shape = operand.shape[:dim] + idx.shape[batch_dims:] + operand.shape[dim + 1:]
    nd = len(out_shape)
    grids = [_axis_range(n, a, nd) for a, n in enumerate(out_shape)]
    # the index tensor is read at (batch axes, index axes) of the result
    idx_pos = tuple(grids[:batch_dims]) + tuple(grids[dim:dim + k])
    picked = np.clip(idx[idx_pos] if idx.ndim else idx, 0, max(operand.shape[dim] - 1, 0))
    comps = list(grids[:dim]) + [picked] + list(grids[dim + k:])
    comps = [np.broadcast_to(c, out_shape) for c in comps]
    if operand.size == 0:
        return np.empty(out_shape, dtype=operand.dtype)
    return operand[tuple(comps)]


# ------------------------------------------------------------------ scatter

def scatter_targets(input_shape, scatter_indices, updates_shape, *, update_window_dims,
                    inserted_window_dims, input_batching_dims, scatter_indices_batching_dims,
                    scatter_dims_to_operand_dims, index_vector_dim):
    """For every element of `updates` (in row-major order), its flat index into the input and
    whether that index is in bounds (out-of-bounds elements are skipped, as the spec says)."""
    rank = len(input_shape)
    nu = len(updates_shape)
    idx = _index_vectors(scatter_indices, index_vector_dim)
    scatter_shape = idx.shape[:-1]
    update_scatter_dims = [d for d in range(nu) if d not in update_window_dims]
    if tuple(updates_shape[d] for d in update_scatter_dims) != tuple(scatter_shape):
        raise InterpreterError(f"scatter: updates shape {tuple(updates_shape)} does not match "
                               f"the scatter indices batch shape {tuple(scatter_shape)}")
    window_input_dims = [d for d in range(rank)
                         if d not in inserted_window_dims and d not in input_batching_dims]
    scatter_axes_shape = [1] * nu
    for a, ud in enumerate(update_scatter_dims):
        scatter_axes_shape[ud] = scatter_shape[a]
    # comps[d]: the input index along dimension d of every update element, all dimensions
    # at once so that the bounds check and the flattening are a few whole-array operations
    comps = np.zeros((rank,) + tuple(updates_shape), dtype=np.int64)
    for d in range(rank):
        if d in scatter_dims_to_operand_dims:
            k = scatter_dims_to_operand_dims.index(d)
            comps[d] += idx[..., k].reshape(scatter_axes_shape)
        if d in input_batching_dims:
            ds = scatter_indices_batching_dims[input_batching_dims.index(d)]
            ud = update_scatter_dims[ds - (0 if ds < index_vector_dim else 1)]
            comps[d] += _axis_range(updates_shape[ud], ud, nu)
        if d in window_input_dims:
            ud = update_window_dims[window_input_dims.index(d)]
            comps[d] += _axis_range(updates_shape[ud], ud, nu)
    column = (rank,) + (1,) * nu
    bounds = np.array([int(n) for n in input_shape], dtype=np.int64).reshape(column)
    ok = (comps >= 0) & (comps < bounds)
    valid = ok.all(axis=0)
    strides = np.ones(rank, dtype=np.int64)
    for d in range(rank - 2, -1, -1):
        strides[d] = strides[d + 1] * int(input_shape[d + 1])
    flat = (np.where(ok, comps, 0) * strides.reshape(column)).sum(axis=0)
    return flat.reshape(-1), valid.reshape(-1)


def _is_replace_body(region, n: int) -> bool:
    """`return %update` (for one input): scatter simply overwrites."""
    b = region.blocks[0]
    if n != 1 or len(b.arguments) != 2 or len(b.operations) != 1:
        return False
    ret = b.operations[0]
    return len(ret.operands) == 1 and ret.operands[0] is b.arguments[1]


def apply_updates(ctx, region, flats: list, targets: np.ndarray, values: list, result_types) -> list:
    """Fold `values[i][j]` into `flats[i][targets[j]]` in order, as
    `flats... = region(flats..., values...)`; returns the new flat arrays."""
    n = len(flats)
    ets = [elem(t) for t in result_types]
    if targets.size == 0:
        return [np.array(f, copy=True) for f in flats]
    if _is_replace_body(region, n):
        out = np.array(flats[0], copy=True)
        order = _last_occurrence(targets)
        out[targets[order]] = values[0][order].astype(out.dtype, copy=False)
        return [out]
    name = recognize_binary_body(region) if n == 1 else None
    inexact = name in ("stablehlo.add", "stablehlo.multiply") and (ets[0].is_float or ets[0].is_complex)
    if name is not None and not inexact:
        return [_apply_primitive_at(name, flats[0], targets, values[0], ets[0])]
    # rounds in which each target occurs once, in the order of the updates; float sums and
    # products go this way too, so that each step rounds to the element type
    if inexact:
        fn = np.add if name == "stablehlo.add" else np.multiply
        cd = np.complex128 if ets[0].is_complex else np.float64

        def step(cur, upd):
            with np.errstate(all="ignore"):
                return [fn(cur[0].astype(cd), upd[0].astype(cd))]
    else:
        def step(cur, upd):
            return ctx.run_region(region, cur + upd)
    order = np.argsort(targets, kind="stable")
    ts = targets[order]
    first = np.ones(ts.shape, dtype=bool)
    first[1:] = ts[1:] != ts[:-1]
    pos = np.arange(ts.size)
    rank_in_group = pos - np.maximum.accumulate(np.where(first, pos, 0))
    outs = [np.array(f, copy=True) for f in flats]
    for r in range(int(rank_in_group.max()) + 1):
        sel = order[rank_in_group == r]
        t = targets[sel]
        cur = [o[t] for o in outs]
        new = step(cur, [v[sel] for v in values])
        for o, v in zip(outs, new):
            o[t] = np.broadcast_to(np.asarray(v), t.shape).astype(o.dtype, copy=False)
    return outs


def _last_occurrence(targets: np.ndarray) -> np.ndarray:
    """Positions of the last update to each distinct target (later updates win)."""
    rev = targets[::-1]
    _, first_in_rev = np.unique(rev, return_index=True)
    return targets.size - 1 - first_in_rev


def _apply_primitive_at(name, flat, targets, values, et):
    _, fn, bool_fn = _PRIMITIVES[name]
    if et.is_bool:
        out = np.array(flat, dtype=bool, copy=True)
        bool_fn.at(out, targets, values.astype(bool))
        return out
    if et.is_complex:
        out = np.array(flat, copy=True)
        fn.at(out, targets, values.astype(out.dtype))
        return out
    if et.is_float:
        # accumulate in f64, then round once to the element type
        acc = flat.astype(np.float64)
        with np.errstate(all="ignore"):
            fn.at(acc, targets, values.astype(np.float64))
        return from_compute(acc, et)
    cd = compute_dtype(et)
    acc = flat.astype(cd)
    with np.errstate(all="ignore"):
        fn.at(acc, targets, values.astype(cd))
    return from_compute(acc, et)


@kernel("stablehlo.scatter")
def scatter(ctx, op, *args):
    n = (len(args) - 1) // 2
    inputs, indices, updates = list(args[:n]), args[n], list(args[n + 1:])
    if len(updates) != n:
        raise InterpreterError(f"scatter: {n} inputs but {len(updates)} updates")
    f = dict(op.attributes["scatter_dimension_numbers"].fields)
    dims = dict(
        update_window_dims=list(_ints(f.get("update_window_dims", ()))),
        inserted_window_dims=list(_ints(f.get("inserted_window_dims", ()))),
        input_batching_dims=list(_ints(f.get("input_batching_dims", ()))),
        scatter_indices_batching_dims=list(_ints(f.get("scatter_indices_batching_dims", ()))),
        scatter_dims_to_operand_dims=list(_ints(f.get("scatter_dims_to_operand_dims", ()))),
        index_vector_dim=int(f.get("index_vector_dim", 0)),
    )
    for t in op.results:
        if not hasattr(t.type, "element_type"):
            raise NotImplementedOpError("stablehlo.scatter", f"result type {t.type}")
    targets, valid = scatter_targets(inputs[0].shape, indices, updates[0].shape, **dims)
    targets = targets[valid]
    vals = [u.reshape(-1)[valid] for u in updates]
    flats = [x.reshape(-1) for x in inputs]
    outs = apply_updates(ctx, op.regions[0], flats, targets, vals, [r.type for r in op.results])
    return [o.reshape(x.shape).astype(elem(r.type).dtype, copy=False)
            for o, x, r in zip(outs, inputs, op.results)]
