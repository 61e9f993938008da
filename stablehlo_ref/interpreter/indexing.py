"""Indexing kernels: gather, dynamic_gather, torch_index_select and scatter.

Every index computation is done on whole arrays: the operand (or result) index of each
element of the result (or of `updates`) is built per operand dimension by broadcasting the
start index, the batching index and the window offset against each other.

`apply_updates` is shared with `select_and_scatter`: it folds values into chosen elements of
flat arrays with an update region, using the numpy `ufunc.at` primitive for the common bodies
and, for any other body, rounds of region calls on whole arrays in which every target appears
at most once."""
from __future__ import annotations

from itertools import product

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from ..ir.attributes import StructAttr
from ..ir.types import ElementType
from .blas import RUN
from .numerics import compute_dtype, elem, from_compute
from .reduction import _PRIMITIVES, recognize_binary_body
from .registry import op_cache
from .registry import kernel, specializer

_INT64_SAFE = np.int64(1) << 62
_MISSING = object()


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
    if index_vector_dim == idx.ndim - 1:
        return idx
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
    # a gather of static shapes runs the kernel its specializer makes, made once per op (it
    # takes the general path below for operands of other shapes)
    cache = getattr(op, "_cache", None)
    fast = _MISSING if cache is None else cache.get("gather_static", _MISSING)
    if fast is _MISSING:
        try:
            fast = gather_specialized(op)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError):
            fast = None
        op_cache(op)["gather_static"] = fast
    if fast is not None:
        return fast(ctx, op, operand, start_indices)
    return _gather_general(ctx, op, operand, start_indices)


def _gather_general(ctx, op, operand, start_indices):
    sizes = _ints(op.attributes["slice_sizes"].values)
    return gather_array(operand, start_indices, slice_sizes=sizes, **_gather_dims(op))


@specializer("stablehlo.gather")
def gather_specialized(op, known=None):
    """A gather of static shapes: the element offsets of the slice window (and of the
    batching dimensions) in the flat operand are worked out once; each call clamps the start
    indices, adds their flat offsets to those and takes the elements (one `take`). Operands
    of other shapes take the general kernel."""
    ot, it = op.operands[0].type, op.operands[1].type
    oshape, ishape = tuple(getattr(ot, "shape", (None,))), tuple(getattr(it, "shape", (None,)))
    if None in oshape or None in ishape:
        return None
    sizes = _ints(op.attributes["slice_sizes"].values)
    d = _gather_dims(op)
    rank = len(oshape)
    ivd = d["index_vector_dim"]
    smap = d["start_index_map"]
    obd, sbd = d["operand_batching_dims"], d["start_indices_batching_dims"]
    batch_shape = ishape[:ivd] + ishape[ivd + 1:] if ivd < len(ishape) else ishape
    nvec = ishape[ivd] if ivd < len(ishape) else 1
    offset_operand_dims = [k for k in range(rank) if k not in d["collapsed_slice_dims"] and k not in obd]
    if len(sizes) != rank or nvec != len(smap) or len(d["offset_dims"]) != len(offset_operand_dims) \
            or any(s < 0 or s > n for s, n in zip(sizes, oshape)) or 0 in oshape \
            or len(set(smap)) != len(smap) or any(not 0 <= k < rank for k in smap + obd):
        return None
    nb, no = len(batch_shape), len(offset_operand_dims)
    offset_shape = tuple(sizes[k] for k in offset_operand_dims)
    full_shape = batch_shape + offset_shape
    strides = [1] * rank
    for k in range(rank - 2, -1, -1):
        strides[k] = strides[k + 1] * oshape[k + 1]
    static = np.zeros((1,) * (nb + no), dtype=np.int64)
    for k in obd:
        ds = sbd[obd.index(k)]
        axis = ds - (0 if ds < ivd else 1)
        static = static + _axis_range(batch_shape[axis], axis, nb + no) * strides[k]
    for j, k in enumerate(offset_operand_dims):
        static = static + _axis_range(offset_shape[j], nb + j, nb + no) * strides[k]
    his = tuple(max(oshape[k] - sizes[k], 0) for k in smap)
    mult = tuple(strides[k] for k in smap)
    base_shape = batch_shape + (1,) * no
    perm = [0] * (nb + no)
    for i, r in enumerate([r for r in range(nb + no) if r not in d["offset_dims"]]):
        perm[r] = i
    for j, r in enumerate(d["offset_dims"]):
        perm[r] = nb + j
    perm = None if perm == list(range(nb + no)) else tuple(perm)
    general = _gather_general

    maximum, minimum = np.maximum, np.minimum

    def offsets(start_indices):
        idx = _index_vectors(start_indices, ivd)
        base = None
        for k in range(nvec):
            # (np.clip's minimum(maximum(.)), without its Python wrapper's per-call work)
            part = minimum(maximum(idx[..., k], 0), his[k])
            if mult[k] != 1:
                part *= mult[k]
            base = part if base is None else base + part
        if base is None:
            base = np.zeros(batch_shape, dtype=np.int64)
        flat = base.reshape(base_shape) + static
        return flat if flat.shape == full_shape else np.broadcast_to(flat, full_shape)

    if nvec == 1 and not obd and list(d["collapsed_slice_dims"]) == smap and sizes[smap[0]] == 1 \
            and all(sizes[j] == oshape[j] for j in range(rank) if j != smap[0]) \
            and list(d["offset_dims"]) == list(range(smap[0])) + list(range(smap[0] + nb, nb + no)):
        # whole slices along one axis (embedding lookups, x[i]): numpy's take along that
        # axis, whose "clip" mode clamps each index into [0, n - 1] as the start indices
        # are clamped; the result's batch dims stand where take puts the index's
        return _gather_take(smap[0], ivd, oshape, ishape, general)

    # start indices known when compiling (a constant): their offsets worked out once
    const = known[1] if known and len(known) > 1 else None
    const_flat = offsets(const) if isinstance(const, np.ndarray) and const.shape == ishape else None

    def gather_static(ctx, op, operand, start_indices):
        if operand.shape != oshape or start_indices.shape != ishape:
            return general(ctx, op, operand, start_indices)
        flat = const_flat if start_indices is const and const_flat is not None else offsets(start_indices)
        out = operand.reshape(-1).take(flat)
        return out if perm is None else out.transpose(perm)
    return gather_static


def _gather_take(axis, ivd, oshape, ishape, general):
    """`gather_specialized`'s kernel for a gather of whole slices along `axis` by one index
    per slice: `take(operand, indices, axis, mode="clip")` on the index vectors' one
    component. Index arrays of a dtype numpy's take would not cast (uint64) take the
    general kernel."""
    trailing = ivd < len(ishape)

    def gather_take(ctx, op, operand, start_indices):
        if operand.shape != oshape or start_indices.shape != ishape \
                or start_indices.dtype.kind not in "iu" or start_indices.dtype.itemsize == 8 \
                and start_indices.dtype.kind == "u":
            return general(ctx, op, operand, start_indices)
        idx = start_indices
        if trailing:
            idx = np.moveaxis(idx, ivd, -1)[..., 0] if ivd != idx.ndim - 1 else idx[..., 0]
        return operand.take(idx, axis=axis, mode="clip")
    return gather_take


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

_SCATTER_DIMS = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                 "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")


def _scatter_dims(op) -> dict:
    """The scatter's dimension numbers as lists of ints, decoded once per op."""
    c = op_cache(op)
    dims = c.get("scatter_dims")
    if dims is None:
        dims = {"update_window_dims": [], "inserted_window_dims": [],
                "input_batching_dims": [], "scatter_indices_batching_dims": [],
                "scatter_dims_to_operand_dims": [], "index_vector_dim": 0}
        for k, v in op.attributes["scatter_dimension_numbers"].fields:
            if k == "index_vector_dim":
                dims[k] = int(v)
            elif v and k in dims:          # (an empty list is there already)
                dims[k] = [int(x) for x in v]
        c["scatter_dims"] = dims
    return dims


class _TargetPlan:
    """What `scatter_targets` derives from the shapes alone, for one (input shape, indices
    shape, updates shape). `base`: the flat input offset of every update element due to its
    window and batching position (in the updates' shape), with the bounds check of those
    parts in `base_ok` (None: all in bounds, as in any valid program). Per index vector
    component k: its input dimension's stride and bound, and (`statics`) the window/batching
    part of that dimension where it has one; `axes_shape` places the scatter axes of the
    index array on the updates' axes."""

    __slots__ = ("base", "base_ok", "parts", "updates_shape", "index_vector_dim", "axes_shape",
                 "strides", "bounds", "simple")

    def __init__(self, input_shape, indices_shape, updates_shape, *, update_window_dims,
                 inserted_window_dims, input_batching_dims, scatter_indices_batching_dims,
                 scatter_dims_to_operand_dims, index_vector_dim):
        rank = len(input_shape)
        nu = len(updates_shape)
        if index_vector_dim >= len(indices_shape):
            scatter_shape = tuple(indices_shape)
        else:
            scatter_shape = tuple(n for a, n in enumerate(indices_shape) if a != index_vector_dim)
        update_scatter_dims = [d for d in range(nu) if d not in update_window_dims]
        if tuple(updates_shape[d] for d in update_scatter_dims) != scatter_shape:
            raise InterpreterError(f"scatter: updates shape {tuple(updates_shape)} does not match "
                                   f"the scatter indices batch shape {scatter_shape}")
        window_input_dims = [d for d in range(rank)
                             if d not in inserted_window_dims and d not in input_batching_dims]
        axes_shape = [1] * nu
        for a, ud in enumerate(update_scatter_dims):
            axes_shape[ud] = scatter_shape[a]
        strides = [1] * rank
        for d in range(rank - 2, -1, -1):
            strides[d] = strides[d + 1] * int(input_shape[d + 1])
        # per update axis: the input stride it moves along (window and batching positions);
        # statics[d]: the update axis that dimension d's window/batching position follows
        coef = [0] * nu
        statics = {}
        bad = []          # (update axis, input bound) of static parts that overrun the input
        for d in range(rank):
            if d in input_batching_dims:
                ds = scatter_indices_batching_dims[input_batching_dims.index(d)]
                ud = update_scatter_dims[ds - (0 if ds < index_vector_dim else 1)]
            elif d in window_input_dims:
                ud = update_window_dims[window_input_dims.index(d)]
            else:
                continue
            coef[ud] += strides[d]
            statics[d] = ud
            if d not in scatter_dims_to_operand_dims and updates_shape[ud] > int(input_shape[d]):
                bad.append((ud, int(input_shape[d])))
        size = 1
        for n in updates_shape:
            size *= int(n)
        span = sum((int(n) - 1) * c for n, c in zip(updates_shape, coef)) + 1 if size else 1
        if span <= 4 * size + 64:
            # base[i] = sum(i[ud] * coef[ud]): a strided view of 0, 1, 2, ... with the
            # coefficients as strides (scatter axes get stride 0)
            base = np.ndarray(tuple(updates_shape), dtype=np.int64,
                              buffer=np.arange(span, dtype=np.int64),
                              strides=tuple([c * 8 for c in coef]))    # 8: int64's size
        else:
            base = np.zeros((), dtype=np.int64)
            for ud in range(nu):
                base = base[..., None]
                if coef[ud]:
                    base = base + np.arange(updates_shape[ud], dtype=np.int64) * coef[ud]
        base_ok = None
        for ud, n in bad:
            ok = np.broadcast_to(_axis_range(updates_shape[ud], ud, nu) < n, updates_shape)
            base_ok = ok if base_ok is None else base_ok & ok
        if 0 in tuple(input_shape):
            base_ok = np.zeros(updates_shape, dtype=bool)    # an empty input has no elements
        self.parts = tuple(
            (k, strides[d], int(input_shape[d]),
             None if d not in statics else _axis_range(updates_shape[statics[d]], statics[d], nu))
            for k, d in enumerate(scatter_dims_to_operand_dims))
        self.simple = all(p[3] is None for p in self.parts)
        if len(self.parts) == 1:
            self.strides, self.bounds = self.parts[0][1], self.parts[0][2]
        else:
            self.strides = np.array([p[1] for p in self.parts], dtype=np.int64)
            # compared as unsigned, a negative index is out of bounds too
            self.bounds = np.array([p[2] for p in self.parts], dtype=np.uint64)
        self.base = base
        self.base_ok = None if base_ok is None else base_ok.reshape(-1)
        self.updates_shape = tuple(updates_shape)
        self.axes_shape = tuple(axes_shape)
        self.index_vector_dim = index_vector_dim

    def targets(self, scatter_indices):
        """(flat input index, in bounds) of every update element in row-major order; `in
        bounds` is None when every element is."""
        idx = np.asarray(scatter_indices)
        if idx.dtype == np.uint64:
            idx = np.minimum(idx, np.uint64(_INT64_SAFE))
        idx = idx.astype(np.int64, copy=False)
        ivd = self.index_vector_dim
        if ivd >= idx.ndim:
            idx = idx[..., None]
        elif ivd != idx.ndim - 1:
            idx = np.moveaxis(idx, ivd, -1)
        shape = self.updates_shape
        valid = self.base_ok
        # out-of-bounds elements get some flat index too; `valid` drops them
        nk = len(self.parts)
        if self.simple and idx.shape[-1] == nk:
            if nk == 1:
                # one index component (strides and bounds are ints): the index array itself
                # placed on the update scatter axes
                c = idx.reshape(self.axes_shape)
                flat = self.base + c * self.strides
                inb = c.view(np.uint64) < self.bounds    # as unsigned, negatives are out too
            else:
                flat = self.base + (idx @ self.strides).reshape(self.axes_shape)
                inb = idx.view(np.uint64) < self.bounds
                inb = inb.all(axis=-1).reshape(self.axes_shape)
            if np.count_nonzero(inb) != inb.size:
                ok = np.broadcast_to(inb, shape).reshape(-1)
                valid = ok if valid is None else valid & ok
        else:
            flat = self.base
            for k, stride, n, static in self.parts:
                c = idx[..., k].reshape(self.axes_shape)
                comp = c if static is None else c + static
                ok = (comp >= 0) & (comp < n)
                if np.count_nonzero(ok) != ok.size:
                    ok = np.broadcast_to(ok, shape).reshape(-1)
                    valid = ok if valid is None else valid & ok
                flat = flat + c * stride
        if flat.shape != shape:
            flat = np.broadcast_to(flat, shape)
        return flat.reshape(-1), valid


# a scatter's first run computes the targets of at most this many update elements in Python
_DIRECT_TARGETS = 48


def _window_dims(dims, rank, nu, k):
    """The input dimensions that have a window (those not inserted), in order, where the
    dimension numbers `dims` of a scatter without batching dims fit an input of rank `rank`,
    updates of rank `nu` and index vectors of `k` components: `k` distinct
    scatter_dims_to_operand_dims and distinct inserted_window_dims, all in [0, rank), and
    sorted, distinct update_window_dims in [0, nu), one per window dimension. None for any
    other (the plan reports what is wrong). Shared by `one_window` and `direct_targets`."""
    if dims["input_batching_dims"] or dims["scatter_indices_batching_dims"]:
        return None
    s2o = dims["scatter_dims_to_operand_dims"]
    if len(s2o) != k:
        return None
    seen = 0                   # (a bit per dimension already listed)
    for d in s2o:
        if d < 0 or d >= rank or (seen >> d) & 1:
            return None
        seen |= 1 << d
    inserted = 0
    for d in dims["inserted_window_dims"]:
        if d < 0 or d >= rank or (inserted >> d) & 1:
            return None
        inserted |= 1 << d
    prev = -1
    uwd = dims["update_window_dims"]
    for a in uwd:              # (strictly increasing: sorted and distinct)
        if a <= prev or a >= nu:
            return None
        prev = a
    wid = [d for d in range(rank) if not (inserted >> d) & 1]
    if len(wid) != len(uwd):
        return None
    return wid


def _split_index_shape(ishape, ivd):
    """(the length of an index vector, the shape of the scatter dims) of scatter indices of
    shape `ishape` whose index vectors run along `ivd` (past the last dim: vectors of one
    index); None for a negative `ivd`."""
    if ivd >= len(ishape):
        return 1, ishape
    if ivd >= 0:
        return ishape[ivd], ishape[:ivd] + ishape[ivd + 1:]
    return None


def one_window(input_shape, scatter_indices, updates_shape, dims):
    """For a scatter of a single index vector (one update window), without batching dims,
    whose whole window lies inside the input: (start, window) per input dimension (the
    window's first index and its size; an inserted dimension's size is 1), the updates being
    that window in row-major order. None for any other scatter (also for dimension numbers
    that do not fit the shapes: the general path reports what is wrong)."""
    split = _split_index_shape(scatter_indices.shape, dims["index_vector_dim"])
    if split is None:
        return None
    k, sshape = split
    for n in sshape:
        if n != 1:
            return None
    rank = len(input_shape)
    nu = len(updates_shape)
    uwd = dims["update_window_dims"]
    if nu - len(uwd) != len(sshape):
        return None
    wid = _window_dims(dims, rank, nu, k)
    if wid is None:
        return None
    for a in range(nu):
        if updates_shape[a] != 1 and a not in uwd:
            return None
    window = [1] * rank
    for j, d in enumerate(wid):
        window[d] = updates_shape[uwd[j]]
    start = [0] * rank
    vec = scatter_indices.reshape(-1).tolist()
    for j, d in enumerate(dims["scatter_dims_to_operand_dims"]):
        start[d] = vec[j]
    for d in range(rank):
        s, w = start[d], window[d]
        if w < 1 or s < 0 or s + w > input_shape[d]:
            return None              # (an empty window, or one not wholly inside)
    return start, window


def _one_window_slices(input_shape, indices, updates_shape, dims, k, ns):
    """`one_window` for `indices` of one index vector of `k` components (its other `ns`
    dims being 1), as the input's slices of the window; None as `one_window` gives it."""
    rank = len(input_shape)
    nu = len(updates_shape)
    uwd = dims["update_window_dims"]
    if nu - len(uwd) != ns:
        return None
    wid = _window_dims(dims, rank, nu, k)
    if wid is None:
        return None
    for a in range(nu):
        if updates_shape[a] != 1 and a not in uwd:
            return None
    window = [1] * rank
    j = 0
    for d in wid:
        window[d] = updates_shape[uwd[j]]
        j += 1
    start = [0] * rank
    vec = indices.reshape(-1).tolist()
    j = 0
    for d in dims["scatter_dims_to_operand_dims"]:
        start[d] = vec[j]
        j += 1
    sl = []
    for d in range(rank):
        a = start[d]
        w = window[d]
        if w < 1 or a < 0 or a + w > input_shape[d]:
            return None              # (an empty window, or one not wholly inside)
        sl.append(slice(a, a + w))
    return tuple(sl)


def one_window_targets(input_shape, scatter_indices, updates_shape, dims):
    """The flat input index of every update element of a `one_window` scatter, in the
    updates' row-major order (int64), as `direct_targets` and `_TargetPlan` give them, with
    one numpy call per window dimension; None for any other scatter."""
    got = one_window(input_shape, scatter_indices, updates_shape, dims)
    if got is None:
        return None
    start, window = got
    rank = len(input_shape)
    strides = [1] * rank
    for d in range(rank - 2, -1, -1):
        strides[d] = strides[d + 1] * input_shape[d + 1]
    base = 0
    for d in range(rank):
        base += start[d] * strides[d]
    out = np.array([base], dtype=np.int64)
    for d in range(rank):
        n = window[d]
        if n != 1:
            out = (out[:, None] + np.arange(0, n * strides[d], strides[d], dtype=np.int64)).reshape(-1)
    return out


# element types whose numpy arithmetic a scatter of a recognized body may apply to a window
# in place of `apply_updates` (integers wrap natively; a float maximum/minimum is exact and a
# float sum or product of one update per element rounds once, as `apply_updates` does)
_WINDOW_INTS = frozenset(("i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64"))
_WINDOW_FLOATS = frozenset(("f16", "f32", "f64"))
_WINDOW_FLOAT_BODIES = frozenset(("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                                  "stablehlo.minimum"))


# a scatter's first run writes at most this many windows one by one on views of the input
_WINDOW_LIMIT = 8


def scatter_windows(input_shape, scatter_indices, updates_shape, dims, ordered):
    """For a scatter without batching dims of 2 to `_WINDOW_LIMIT` index vectors (update
    windows) of more than one element each, each wholly inside the input: per window, in
    the order of the updates' scatter positions, (the input slices of its window, the index
    of its update window in the updates). Where `ordered` (the body's result depends on the
    order in which two updates of one element are folded), only where the update window
    dims are the trailing ones (so that windows applied one after the other fold in the
    updates' row-major order); where `ordered` is 2, only windows of which no two share an
    element. None for any other scatter (also for dimension numbers that do not fit the
    shapes: the general path reports what is wrong)."""
    ivd = dims["index_vector_dim"]
    nd = scatter_indices.ndim
    split = _split_index_shape(scatter_indices.shape, ivd)
    if split is None:
        return None
    k, sshape = split
    m = 1
    for n in sshape:
        m *= n
    if m > _WINDOW_LIMIT or m < 2 or 0 in input_shape:
        return None
    rank = len(input_shape)
    nu = len(updates_shape)
    uwd = dims["update_window_dims"]
    nw = len(uwd)
    ns = nu - nw
    if ns != len(sshape) or not nw:
        return None
    # the update axes that are not window axes are the scatter axes, in the order of sshape
    if uwd != list(range(ns, nu)):
        if ordered:
            return None
        sax = [a for a in range(nu) if a not in uwd]
        for a, n in zip(sax, sshape):
            if updates_shape[a] != n:
                return None
    else:
        sax = None
        if tuple(updates_shape[:ns]) != tuple(sshape):
            return None
    wid = _window_dims(dims, rank, nu, k)
    if wid is None:
        return None
    window = [1] * rank
    size = 1
    j = 0
    for d in wid:
        window[d] = w = updates_shape[uwd[j]]
        if w < 1 or w > input_shape[d]:
            return None             # (an empty window, or one overrunning the input)
        size *= w
        j += 1
    if size == 1:
        return None                 # (points: their targets are cheaper)
    if ivd >= nd - 1:
        vecs = scatter_indices.reshape(-1).tolist()
    elif ivd == 0:
        vecs = scatter_indices.reshape(k, m).T.reshape(-1).tolist()
    else:
        vecs = np.moveaxis(scatter_indices, ivd, -1).reshape(-1).tolist()
    s2o = dims["scatter_dims_to_operand_dims"]
    if ordered > 1:
        # (only disjoint windows: apart in some dim with a start index; the others start at
        # 0 and overlap)
        ws = [window[d] for d in s2o]
        for i in range(0, m * k, k):
            for j in range(0, i, k):
                for q in range(k):
                    if abs(vecs[i + q] - vecs[j + q]) >= ws[q]:
                        break
                else:
                    return None
    base = [slice(0, w) for w in window]      # (the dims without a start index)
    last = [(d, input_shape[d] - window[d], window[d]) for d in s2o]   # (the last start)
    out = []
    pos = 0
    for c in product(*[range(n) for n in sshape]):    # the scatter positions, in order
        sl = base.copy()
        for d, hi, w in last:
            a = vecs[pos]
            pos += 1
            if a < 0 or a > hi:
                return None          # (a window not wholly inside)
            sl[d] = slice(a, a + w)
        if sax is not None:
            ui = [_FULL] * nu
            for a, i in zip(sax, c):
                ui[a] = i
            c = tuple(ui)
        out.append((tuple(sl), c))
    return out


_FULL = slice(None)


def window_scatter(x, indices, u, dims, body, et):
    """A one-input scatter of at most `_WINDOW_LIMIT` update windows, each wholly inside the
    input (`scatter_windows`), of body `return %update` or a recognized primitive on a native
    element type: the input copied with each window written (or combined with its update)
    on a view, in the updates' order, as the general path computes it; None for any other
    (the general path runs)."""
    if x.__class__ is not np.ndarray or u.__class__ is not np.ndarray \
            or indices.__class__ is not np.ndarray or x.dtype != u.dtype:
        return None
    name = et.name
    if body == "replace":
        fn = None
        ordered = 1
    elif name in _WINDOW_INTS:
        fn = _PRIMITIVES[body][1]
        ordered = 0              # (integer folds are exact and commutative)
    elif name in _WINDOW_FLOATS and body in _WINDOW_FLOAT_BODIES:
        fn = _PRIMITIVES[body][1]
        # (signed zeros; a sum or product also rounds, and the NaN a sum or product of two
        # NaNs keeps depends on the loop: one fold per element, as `apply_updates` does, and
        # none of a NaN update, whose sum with a NaN element keeps the element's NaN in
        # `ufunc.at` but may keep the update's in numpy's other loops)
        if body == "stablehlo.add" or body == "stablehlo.multiply":
            ordered = 2
            if x.dtype == et.dtype and np.isnan(u).any():
                return None
        else:
            ordered = 1
    elif name == "i1":
        fn = _PRIMITIVES[body][2]
        ordered = 0
    else:
        return None
    if x.dtype != et.dtype:
        return None
    ivd = dims["index_vector_dim"]
    nd = indices.ndim
    k = 1 if ivd >= nd else indices.shape[ivd]
    if indices.size == k and k and ivd >= 0:
        # one window (the other index dims are 1)
        sl = _one_window_slices(x.shape, indices, u.shape, dims, k, nd - (ivd < nd))
        if sl is None:
            return None
        out = x.copy()
        view = out[sl]
        w = u.reshape(view.shape)
        if fn is None:
            view[...] = w
        else:
            fn(view, w, out=view)
        return out
    got = scatter_windows(x.shape, indices, u.shape, dims, ordered)
    if got is None:
        return None
    out = x.copy()
    for slices, uidx in got:
        view = out[slices]
        w = u[uidx].reshape(view.shape)
        if fn is None:
            view[...] = w
        else:
            fn(view, w, out=view)
    return out


def direct_targets(input_shape, scatter_indices, updates_shape, dims):
    """`_TargetPlan(...).targets(scatter_indices)` computed directly in Python (as a list of
    flat input indices, and a list of in-bounds flags or None) for a scatter of at most
    `_DIRECT_TARGETS` update elements without batching dims, as its first run has it: a plan
    pays off only when the op runs again, and numpy's calls cost more than the few elements
    do. None for any other scatter, or dimension numbers that do not fit the shapes (the plan
    reports what is wrong)."""
    size = 1
    for n in updates_shape:
        size *= n
    if size > _DIRECT_TARGETS:
        return None
    uwd = dims["update_window_dims"]
    s2o = dims["scatter_dims_to_operand_dims"]
    ivd = dims["index_vector_dim"]
    rank = len(input_shape)
    nu = len(updates_shape)
    idx = scatter_indices
    split = _split_index_shape(idx.shape, ivd)
    if split is None:
        return None
    k, sshape = split
    if ivd < idx.ndim - 1:
        idx = np.moveaxis(idx, ivd, -1)
    # the window dims of the input (those not inserted), in order, follow the update window
    # dims, in order; the other update dims are the scatter dims, in the order of `sshape`
    wid = _window_dims(dims, rank, nu, k)
    if wid is None:
        return None
    sax = [a for a in range(nu) if a not in uwd]
    if tuple([updates_shape[a] for a in sax]) != tuple(sshape):
        return None
    if 0 in input_shape:
        return [0] * size, [False] * size     # an empty input has no elements
    if idx.dtype.kind == "u" and idx.dtype == np.uint64:     # (the kind first: cheap)
        idx = np.minimum(idx, np.uint64(_INT64_SAFE))
    vecs = idx.reshape(-1).tolist()          # the index vectors, k numbers each, in order
    strides = [1] * rank
    for d in range(rank - 2, -1, -1):
        strides[d] = strides[d + 1] * input_shape[d + 1]
    if not uwd:
        # no window (every input dim inserted): one element per index vector
        flat = []
        ok = None
        e = 0
        for s in range(0, len(vecs), k):
            f = 0
            inb = True
            for j in range(k):
                c = vecs[s + j]
                d = s2o[j]
                if c < 0 or c >= input_shape[d]:
                    inb = False
                f += c * strides[d]
            if not inb and ok is None:
                ok = [True] * e
            if ok is not None:
                ok.append(inb)
                if not inb:
                    f = 0       # (its offset may be out of int64's range: it is dropped)
            flat.append(f)
            e += 1
        return flat, ok
    # each update element is (scatter position s, window position w), in row-major order
    seq = [(0, 0)]
    for a in range(nu):
        n = updates_shape[a]
        if a in uwd:
            seq = [(s, w * n + i) for s, w in seq for i in range(n)]
        else:
            seq = [(s * n + i, w) for s, w in seq for i in range(n)]
    # the flat offset of each scatter position's start index, and whether its components
    # of the dims without a window are in bounds
    shared = [(j, d) for j, d in enumerate(s2o) if d in wid]
    starts = []
    sok = []
    all_ok = True
    for s in range(0, len(vecs), k):
        f = 0
        inb = True
        for j in range(k):
            c = vecs[s + j]
            d = s2o[j]
            if (c < 0 or c >= input_shape[d]) and d not in wid:
                inb = False
            f += c * strides[d]
        starts.append(f)
        sok.append(inb)
        if not inb:
            all_ok = False
    # the same for each window position (its offset may overrun a dim without a start index)
    woffs = [0]
    wok = [True]
    wpos = [()]
    for j, a in enumerate(uwd):
        n = updates_shape[a]
        d = wid[j]
        st = strides[d]
        bound = input_shape[d] if d not in s2o else n
        woffs = [f + i * st for f in woffs for i in range(n)]
        wok = [q and i < bound for q in wok for i in range(n)]
        if shared:
            wpos = [p + (i,) for p in wpos for i in range(n)]
        if n > bound:
            all_ok = False
    flat = [starts[s] + woffs[w] for s, w in seq]
    if shared:
        # a dim with both a start index and a window: their sum must be in bounds
        checks = [(j, wid.index(d), input_shape[d]) for j, d in shared]
        ok = []
        for s, w in seq:
            inb = sok[s] and wok[w]
            if inb:
                for j, i, n in checks:
                    c = vecs[s * k + j] + wpos[w][i]
                    if c < 0 or c >= n:
                        inb = False
                        break
            ok.append(inb)
        if all(ok):
            ok = None
    elif all_ok:
        ok = None
    else:
        ok = [sok[s] and wok[w] for s, w in seq]
    if ok is not None:
        # (an out-of-bounds element's offset may be out of int64's range: it is dropped)
        flat = [f if o else 0 for f, o in zip(flat, ok)]
    return flat, ok


def scatter_targets(input_shape, scatter_indices, updates_shape, **dims):
    """For every element of `updates` (in row-major order), its flat index into the input and
    whether that index is in bounds (out-of-bounds elements are skipped, as the spec says)."""
    plan = _TargetPlan(tuple(input_shape), np.shape(scatter_indices), tuple(updates_shape), **dims)
    flat, valid = plan.targets(scatter_indices)
    return flat, np.ones(flat.shape, dtype=bool) if valid is None else valid


def _is_replace_body(region, n: int) -> bool:
    """`return %update` (for one input): scatter simply overwrites."""
    b = region.blocks[0]
    if n != 1 or len(b.arguments) != 2 or len(b.operations) != 1:
        return False
    ret = b.operations[0]
    return len(ret.operands) == 1 and ret.operands[0] is b.arguments[1]


def update_body(region, n: int):
    """How `apply_updates` folds values with `region`: "replace" (`return %update`), the
    name of a recognized primitive op, or None (the region is run)."""
    if _is_replace_body(region, n):
        return "replace"
    return recognize_binary_body(region) if n == 1 else None


def scatter_body(op, n: int):
    """`update_body` of scatter `op` (of `n` inputs), found once per op."""
    c = op_cache(op)
    body = c.get("scatter_body", _MISSING)
    if body is _MISSING:
        body = c["scatter_body"] = update_body(op.regions[0], n)
    return body


def apply_updates(ctx, region, flats: list, targets: np.ndarray, values: list, result_types,
                  body=False) -> list:
    """Fold `values[i][j]` into `flats[i][targets[j]]` in order, as
    `flats... = region(flats..., values...)`; returns the new flat arrays. `body` is
    `update_body(region, len(flats))` when the caller has it already."""
    n = len(flats)
    if targets.size == 0:
        return [np.array(f, copy=True) for f in flats]
    if body is False:
        body = update_body(region, n)
    if body == "replace":
        out = np.array(flats[0], copy=True)
        if targets.size == 1:
            out[targets] = values[0].astype(out.dtype, copy=False)
            return [out]
        ts = np.sort(targets)
        if not np.count_nonzero(ts[1:] == ts[:-1]):
            out[targets] = values[0].astype(out.dtype, copy=False)    # distinct targets
            return [out]
        order = _last_occurrence(targets)
        out[targets[order]] = values[0][order].astype(out.dtype, copy=False)
        return [out]
    et0 = elem(result_types[0])
    name = body
    inexact = name in ("stablehlo.add", "stablehlo.multiply") and (et0.is_float or et0.is_complex)
    if name is not None and not inexact:
        return [_apply_primitive_at(name, flats[0], targets, values[0], et0)]
    if inexact and et0.name in ("f16", "f32", "f64") and flats[0].dtype == et0.dtype:
        # ufunc.at folds the updates into each target in order, rounding to the dtype after
        # each step: the same as the rounds below (f16's float32 arithmetic rounds once
        # correctly for + and *), in one call
        fn = np.add if name == "stablehlo.add" else np.multiply
        out = np.array(flats[0], copy=True)
        fn.at(out, targets, values[0].astype(out.dtype, copy=False))
        return [out]
    # rounds in which each target occurs once, in the order of the updates; float sums and
    # products go this way too, so that each step rounds to the element type
    if inexact and targets.size == 1:
        # one update: the one round below, without sorting
        fn = np.add if name == "stablehlo.add" else np.multiply
        cd = np.complex128 if et0.is_complex else np.float64
        out = np.array(flats[0], copy=True)
        out[targets] = fn(out[targets].astype(cd), values[0].astype(cd)).astype(out.dtype)
        return [out]
    order = np.argsort(targets, kind="stable")
    ts = targets[order]
    dup = ts[1:] == ts[:-1]
    if not np.count_nonzero(dup):
        rounds = [order]                     # distinct targets: one round
    else:
        first = np.ones(ts.shape, dtype=bool)
        first[1:] = ~dup
        pos = np.arange(ts.size)
        rank_in_group = pos - np.maximum.accumulate(np.where(first, pos, 0))
        rounds = [order[rank_in_group == r] for r in range(int(rank_in_group.max()) + 1)]
    outs = [np.array(f, copy=True) for f in flats]
    if inexact:
        fn = np.add if name == "stablehlo.add" else np.multiply
        cd = np.complex128 if et0.is_complex else np.float64
        out, upd = outs[0], values[0]
        for sel in rounds:
            t = targets[sel]
            out[t] = fn(out[t].astype(cd), upd[sel].astype(cd)).astype(out.dtype)
        return outs
    for sel in rounds:
        t = targets[sel]
        cur = [o[t] for o in outs]
        new = ctx.run_region(region, cur + [v[sel] for v in values])
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
    kind = flat.dtype.kind
    if kind in "iu" or (kind == "f" and name in ("stablehlo.maximum", "stablehlo.minimum")):
        # numpy's own integer types wrap as the element type does, and a float maximum or
        # minimum is exact: no wider accumulator needed
        out = np.array(flat, copy=True)
        fn.at(out, targets, values.astype(out.dtype, copy=False))
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


# ------------------------------------------------------------------ a scatter's first run

# the element types (by name) whose scatter of a recognized body `first_scatter` computes:
# numpy's own integers and bool, and the floats whose `ufunc.at` folds in the element type
# itself (as `apply_updates` folds them)
_FIRST_DTYPES = {name: np.dtype(t) for name, t in (
    ("i1", np.bool_), ("i8", np.int8), ("i16", np.int16), ("i32", np.int32),
    ("i64", np.int64), ("ui8", np.uint8), ("ui16", np.uint16), ("ui32", np.uint32),
    ("ui64", np.uint64), ("f16", np.float16), ("f32", np.float32), ("f64", np.float64))}
# the floats whose sums, products, maxima and minima `apply_updates` computes in f64 and
# rounds back (`first_scatter`'s `wide`)
_FIRST_WIDE = frozenset(("bf16",))
# a first run computes the targets of at most this many update elements in Python
_FIRST_TARGETS = 256
# and folds integers and bools in Python into an input of at most this many elements
_FIRST_LISTED = 64
# and folds the items of at most this many update elements of other inputs in Python
# (`_fold_one`: a cold ufunc on a view, or `ufunc.at`, costs 10-20 us)
_FIRST_PY = 16
# the integer dtypes' wrapping: (lowest value, mask of the value's bits)
_WRAP = {np.dtype(t): (int(np.iinfo(t).min), (1 << np.iinfo(t).bits) - 1) for t in (
    np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)}
_F64 = np.dtype(np.float64)


def first_scatter(x, idx, u, uwd, iwd, s2o, ivd, body, wide=False):
    """A one-input scatter without batching dims whose every update window lies wholly
    inside the input, as its first run computes it: `x` and `u` arrays of one dtype of
    `_FIRST_DTYPES` (of any dtype for "replace"; with `wide`, of a `_FIRST_WIDE` float that
    `apply_updates` computes in f64), `idx` an integer array, the dimension numbers as tuples
    of ints (and an int), `body` "replace" or the name of a `_PRIMITIVES` op. One window is
    written (or combined with its update) on a view of the input's copy, or is the whole
    result; the targets of several windows are listed in Python, the scatter positions
    first (the updates transposed so), and folded by one `ufunc.at` (distinct targets
    assigned, the last update of a repeated target winning), which is what the general path
    does with the plan's targets. The integers and bools of an input of at most
    `_FIRST_LISTED` elements are folded in Python instead, one window or several (a cold
    numpy call costs more than the loop; the sums and products wrapped as numpy wraps them).
    None for any other scatter, also for dimension numbers that do not fit the shapes (the
    general path reports what is wrong), for a float sum or product whose updates hold a NaN
    where it is computed on a view or in f64 (the NaN a sum of two NaNs keeps differs
    between numpy's loops: `ufunc.at` keeps the input's), and for repeated targets whose
    fold depends on an order the listing does not keep (or, `wide`, rounds between folds)."""
    kind = x.dtype.kind
    if body == "replace":
        fn = None
    elif kind == "b":
        fn = _PRIMITIVES[body][2]
    elif (kind == "f" or wide) and body not in _WINDOW_FLOAT_BODIES:
        return None
    else:
        fn = _PRIMITIVES[body][1]
    ishape = idx.shape
    nd = len(ishape)
    if ivd >= nd:
        k = 1
        sshape = ishape
    elif ivd >= 0:
        k = ishape[ivd]
        sshape = ishape[:ivd] + ishape[ivd + 1:]
    else:
        return None
    xs = x.shape
    rank = len(xs)
    us = u.shape
    nu = len(us)
    nw = len(uwd)
    if nu - nw != len(sshape) or len(s2o) != k or not k or 0 in xs:
        return None
    # the dimension numbers (as `_window_dims` checks them): distinct dims of the input
    seen = 0
    for d in s2o:
        if d < 0 or d >= rank or (seen >> d) & 1:
            return None
        seen |= 1 << d
    inserted = 0
    for d in iwd:
        if d < 0 or d >= rank or (inserted >> d) & 1:
            return None
        inserted |= 1 << d
    # each update dim in turn: the window of the next input dim not inserted (as listed in
    # the sorted, distinct update_window_dims), or the next scatter dim of the indices
    win = [1] * rank
    wd = []                      # the input dims of the windows
    sax = []                     # the updates' scatter dims
    ns = len(sshape)
    d = 0
    j = 0
    for a in range(nu):
        n = us[a]
        if j < nw and uwd[j] == a:
            j += 1
            while d < rank and (inserted >> d) & 1:
                d += 1
            if d == rank or n < 1 or n > xs[d]:
                return None          # (an empty window, or one overrunning the input)
            win[d] = n
            wd.append(d)
            d += 1
        else:
            if len(sax) == ns or n != sshape[len(sax)]:
                return None
            sax.append(a)
    while d < rank and (inserted >> d) & 1:
        d += 1
    if j != nw or d != rank:
        return None
    m = 1
    for n in sshape:
        m *= n
    # (a float sum or product folds NaNs as `ufunc.at` does only through it)
    nan_risk = fn is not None and (kind == "f" or wide) \
        and (body == "stablehlo.add" or body == "stablehlo.multiply")
    listed = kind in "biu" and x.size <= _FIRST_LISTED
    if m == 1 and not wide and u.size == 1 and x.dtype.type in _ONE_TYPES:
        # one update element (a window of one element): folded in Python on the items, where
        # `_fold_one` computes exactly what numpy's fold of the element gives
        pos = [0] * rank
        vec = idx.tolist() if nd == 1 else [idx.item()] if nd == 0 else idx.reshape(-1).tolist()
        for d, a in zip(s2o, vec):
            pos[d] = a
        for d in range(rank):
            a = pos[d]
            if a < 0 or a >= xs[d]:
                return None          # (the element is outside the input)
        pos = tuple(pos)
        v = _fold_one(body, x.dtype, kind, x.item(pos), u.item())
        if v is not None:
            out = x.copy()
            out[pos] = v
            return out
    # a few update elements of a dtype whose items are exact: listed and folded in Python
    # on the items of the input's copy (`_fold_one`), in the updates' order, below
    py = False
    if not listed and not wide and x.dtype.type in _ONE_TYPES:
        size = m
        for w in win:
            size *= w
        py = size <= _FIRST_PY
    if m == 1 and not listed and not py:
        # one window: its slices
        start = [0] * rank
        vec = idx.tolist() if nd == 1 else [idx.item()] if nd == 0 else idx.reshape(-1).tolist()
        for d, a in zip(s2o, vec):
            start[d] = a
        sl = []
        for d in range(rank):
            a = start[d]
            w = win[d]
            if a < 0 or a + w > xs[d]:
                return None          # (a window not wholly inside)
            sl.append(slice(a, a + w))
        if nan_risk and np.isnan(u).any():
            return None
        full = win == list(xs)
        wshape = xs if full else tuple(win)
        # (updates whose shape is the window's, less leading 1s, broadcast as they are)
        if nu > rank or us != wshape[rank - nu:]:
            u = u.reshape(wshape)
        if wide:
            # as `apply_updates`: a maximum or minimum of the whole input in f64, rounded
            # back; a sum or product of the window's elements in f64, rounded back
            if nan_risk:
                out = x.copy()
                view = out[tuple(sl)]
                view[...] = fn(view.astype(_F64), u.astype(_F64)).astype(x.dtype)
                return out
            acc = x.astype(_F64)
            view = acc if full else acc[tuple(sl)]
            fn(view, u.astype(_F64), out=view)
            return acc.astype(x.dtype)
        if full:
            if fn is None:
                return u.reshape(xs).copy()    # (a copy: the result is a new array)
            return fn(x, u)
        out = x.copy()
        view = out[tuple(sl)]
        if fn is None:
            view[...] = u
        else:
            fn(view, u, out=view)
        return out
    size = m
    for w in win:
        size *= w
    if not m or size > _FIRST_TARGETS:
        return None
    # several windows: the flat offset of each window's start (each inside the input) and
    # of each element of a window from its start
    strides = [1] * rank
    for d in range(rank - 1, 0, -1):
        strides[d - 1] = strides[d] * xs[d]
    vecs = idx.reshape(-1).tolist() if ivd >= nd - 1 else \
        np.moveaxis(idx, ivd, -1).reshape(-1).tolist()
    bases = None
    j = 0
    for d in s2o:
        c = vecs[j::k]
        j += 1
        if min(c) < 0 or max(c) > xs[d] - win[d]:
            return None              # (a window not wholly inside)
        st = strides[d]
        bases = [a * st for a in c] if bases is None else [b + a * st for b, a in zip(bases, c)]
    t = bases
    for d in wd:
        w = win[d]
        if w > 1:
            st = strides[d]
            t = [o + i for o in t for i in range(0, w * st, st)]
    # the updates in that order (scatter dims first), or, where a repeated target's fold
    # depends on it, the targets in the updates' order
    distinct = len(set(t)) == len(t)
    if sax != list(range(len(sax))):
        perm = sax + list(uwd)
        if distinct or fn is not None and kind in "biu":
            u = u.transpose(perm)
        else:
            pos = np.arange(len(t)).reshape(us).transpose(perm).reshape(-1).tolist()
            tu = [0] * len(t)
            for p, f in zip(pos, t):
                tu[p] = f
            t = tu
    if not distinct and nan_risk and wide:
        return None                  # (`apply_updates` rounds each fold: not one listing)
    uf = u.reshape(-1)
    if py:
        out = x.copy()
        flat = out.reshape(-1)
        item = flat.item
        dt = x.dtype
        for f, v in zip(t, uf.tolist()):
            v = _fold_one(body, dt, kind, item(f), v)
            if v is None:
                break                # (numpy's fold, below)
            flat[f] = v
        else:
            return out
    if listed:
        # integers and bools in Python (exact; wrapped as numpy wraps), in one pass over the
        # targets (any order for a fold: exact and commutative; a replace's in the updates')
        xl = x.reshape(-1).tolist()
        if body == "stablehlo.add" and kind != "b" or body == "stablehlo.multiply" and kind != "b":
            lo, mask = _WRAP[x.dtype]
            if body == "stablehlo.add":
                for f, v in zip(t, uf.tolist()):
                    xl[f] = ((xl[f] + v - lo) & mask) + lo
            else:
                for f, v in zip(t, uf.tolist()):
                    xl[f] = ((xl[f] * v - lo) & mask) + lo
        elif body == "stablehlo.maximum":
            for f, v in zip(t, uf.tolist()):
                if v > xl[f]:
                    xl[f] = v
        elif body == "stablehlo.minimum":
            for f, v in zip(t, uf.tolist()):
                if v < xl[f]:
                    xl[f] = v
        elif body == "stablehlo.and" or body == "stablehlo.multiply":
            for f, v in zip(t, uf.tolist()):
                xl[f] &= v
        elif body == "stablehlo.or" or body == "stablehlo.add":
            for f, v in zip(t, uf.tolist()):
                xl[f] |= v
        elif body == "stablehlo.xor":
            for f, v in zip(t, uf.tolist()):
                xl[f] ^= v
        else:                        # (a replace: the last update of a target wins)
            for f, v in zip(t, uf.tolist()):
                xl[f] = v
        return np.array(xl, dtype=x.dtype).reshape(xs)
    if wide:
        if nan_risk:
            if np.isnan(uf).any():
                return None
            out = x.copy()
            flat = out.reshape(-1)
            flat[t] = fn(flat[t].astype(_F64), uf.astype(_F64)).astype(x.dtype)
            return out
        acc = x.astype(_F64)
        fn.at(acc.reshape(-1), t, uf.astype(_F64))
        return acc.astype(x.dtype)
    out = x.copy()
    flat = out.reshape(-1)
    if fn is not None:
        fn.at(flat, t, uf)
    elif distinct:
        flat[t] = uf
    else:
        last = {}
        i = 0
        for f in t:
            last[f] = i
            i += 1
        flat[list(last)] = uf[list(last.values())]
    return out


# the dtypes whose one-element scatters `first_scatter` folds in Python (`_fold_one`): their
# `item()` is a Python bool, int or float holding the value exactly
_ONE_TYPES = frozenset((np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                        np.uint32, np.uint64, np.float16, np.float32, np.float64))


def _fold_one(body, dt, kind, a, b):
    """The element a scatter's `body` ("replace" or a `_PRIMITIVES` op) makes of the input's
    item `a` and the update's item `b` (of `dt`, one of `_ONE_TYPES`, of numpy kind `kind`), as a
    Python value that numpy stores back exactly as its own fold stores it; None where that is
    not sure (the caller computes it with numpy): a NaN (its payload), a float maximum or
    minimum of two zeros (their signs). Integers wrap as numpy's do; a float sum or product
    is the exact result rounded once to f64 and once more to the element type on the store,
    which rounds as numpy's f16/f32/f64 arithmetic does (f64 carries more than twice the
    digits plus two)."""
    if kind == "f":
        if body == "replace":
            return None if b != b else b
        if a != a or b != b:
            return None
        if body == "stablehlo.add":
            return a + b
        if body == "stablehlo.multiply":
            return a * b
        if body == "stablehlo.maximum" or body == "stablehlo.minimum":
            if a == b:
                return a if a else None
            return (a if a > b else b) if body == "stablehlo.maximum" else (a if a < b else b)
        return None
    if body == "replace":
        return b
    if kind == "b":
        if body == "stablehlo.or" or body == "stablehlo.add" or body == "stablehlo.maximum":
            return a | b
        if body == "stablehlo.and" or body == "stablehlo.multiply" \
                or body == "stablehlo.minimum":
            return a & b
        if body == "stablehlo.xor":
            return a ^ b
        return None
    if body == "stablehlo.add":
        lo, mask = _WRAP[dt]
        return ((a + b - lo) & mask) + lo
    if body == "stablehlo.multiply":
        lo, mask = _WRAP[dt]
        return ((a * b - lo) & mask) + lo
    if body == "stablehlo.maximum":
        return a if a > b else b
    if body == "stablehlo.minimum":
        return a if a < b else b
    if body == "stablehlo.and":
        return a & b
    if body == "stablehlo.or":
        return a | b
    if body == "stablehlo.xor":
        return a ^ b
    return None


def _first_run_scatter(op, c, x, idx, u):
    """`first_scatter` of scatter `op` (of one input), its attributes read in place; None
    where it does not apply."""
    ND = np.ndarray
    if x.__class__ is not ND or u.__class__ is not ND or idx.__class__ is not ND:
        return None
    dt = x.dtype
    if u.dtype is not dt:
        return None
    rt = op.results[0].type
    et = getattr(rt, "element_type", None)
    if et.__class__ is not ElementType:
        return None
    body = c.get("scatter_body", _MISSING)
    if body is _MISSING:
        body = scatter_body(op, 1)
    if body is None:
        return None
    wide = False
    if _FIRST_DTYPES.get(et.name) is not dt:
        if et.dtype != dt:
            return None
        if body != "replace":        # (a replace only moves elements: any element type)
            if et.name not in _FIRST_WIDE:
                return None
            wide = True
    dn = op.attributes.get("scatter_dimension_numbers")
    if dn.__class__ is not StructAttr:
        return None
    uwd = iwd = s2o = ()
    ivd = 0
    for key, v in dn.fields:
        if key == "update_window_dims":
            uwd = v
        elif key == "inserted_window_dims":
            iwd = v
        elif key == "scatter_dims_to_operand_dims":
            s2o = v
        elif key == "index_vector_dim":
            ivd = v
        elif v:
            return None              # (batching dims)
    if uwd.__class__ is not tuple or iwd.__class__ is not tuple or s2o.__class__ is not tuple \
            or ivd.__class__ is not int:
        return None
    return first_scatter(x, idx, u, uwd, iwd, s2o, ivd, body, wide)


# index arrays up to this many elements have their targets kept for the next run of the op
_SCATTER_KEEP_INDICES = 1 << 16


@kernel("stablehlo.scatter")
def scatter(ctx, op, *args):
    n = (len(args) - 1) // 2
    inputs, indices, updates = args[:n], args[n], args[n + 1:]
    if len(updates) != n:
        raise InterpreterError(f"scatter: {n} inputs but {len(updates)} updates")
    c = op_cache(op)
    info = c.get("scatter")
    if info is None:
        if n == 1:
            out = _first_run_scatter(op, c, inputs[0], indices, updates[0])
            if out is not None:
                return [out]
        result_types = [r.type for r in op.results]
        for t in result_types:
            if not hasattr(t, "element_type"):
                raise NotImplementedOpError("stablehlo.scatter", f"result type {t}")
        ets = [elem(t) for t in result_types]
        info = c["scatter"] = ({}, scatter_body(op, n), result_types,
                               [e.dtype for e in ets], ets[0] if ets else None)
    plans, body, result_types, dtypes, et0 = info
    if n == 1 and body is not None:
        out = window_scatter(inputs[0], indices, updates[0], _scatter_dims(op), body, et0)
        if out is not None:
            return [out]
    key = (inputs[0].shape, indices.shape, updates[0].shape, RUN[0])
    last = c.get("scatter_last")
    if last is not None and last[0] is indices and last[1] == key:
        # the same indices object as the last call in this run (a loop-invariant index
        # array): its targets (the entry holds the array, so nothing in the run can have
        # written into it meanwhile; a caller may between runs, hence the run in the key)
        targets, valid = last[2]
    else:
        plan = plans.get(key[:3], _MISSING)
        got = None
        if plan is _MISSING:
            # the first run with these shapes: the targets of a small scatter computed
            # directly (its next run plans them)
            if len(plans) < 8:
                plans[key[:3]] = None
            if indices.__class__ is np.ndarray:
                dims = _scatter_dims(op)
                one = one_window_targets(key[0], indices, key[2], dims)
                got = (one, None) if one is not None else \
                    direct_targets(key[0], indices, key[2], dims)
        if got is not None and got[0].__class__ is np.ndarray:
            targets, valid = got
        elif got is not None:
            targets = np.array(got[0], dtype=np.int64)
            valid = None if got[1] is None else np.array(got[1], dtype=bool)
        else:
            if plan is None or plan is _MISSING:
                plan = _TargetPlan(key[0], key[1], key[2], **_scatter_dims(op))
                if len(plans) < 8:
                    plans[key[:3]] = plan
            targets, valid = plan.targets(indices)
        if indices.__class__ is np.ndarray and indices.size <= _SCATTER_KEEP_INDICES:
            c["scatter_last"] = (indices, key, (targets, valid))
    if valid is None:
        vals = [u.reshape(-1) for u in updates]
    else:
        targets = targets[valid]
        vals = [u.reshape(-1)[valid] for u in updates]
    flats = [x.reshape(-1) for x in inputs]
    outs = apply_updates(ctx, op.regions[0], flats, targets, vals, result_types, body)
    return [o.reshape(x.shape).astype(dt, copy=False)
            for o, x, dt in zip(outs, inputs, dtypes)]


def _static_one_input_scatter(op):
    """(input, indices and updates shapes, update body) of a scatter of one input whose
    update body is recognized (`update_body`), of static shapes and one element type
    throughout; else None."""
    if len(op.operands) != 3 or len(op.results) != 1 or not op.regions \
            or len(op.regions[0].blocks) != 1:
        return None
    body = update_body(op.regions[0], 1)
    if body is None:
        return None
    xt, it, ut = (v.type for v in op.operands)
    shapes = [getattr(t, "shape", None) for t in (xt, it, ut)]
    if any(sh is None or None in tuple(sh) for sh in shapes):
        return None
    et = getattr(xt, "element_type", None)
    if et is None or getattr(op.results[0].type, "element_type", None) != et \
            or getattr(ut, "element_type", None) != et:
        return None
    xs, ids, us = (tuple(int(d) for d in sh) for sh in shapes)
    return xs, ids, us, body


def point_scatter_form(op):
    """(input shape, dims of the index vector's components) when `op` writes one element:
    one input whose update body is `return %update`, a single update element, every input
    dimension inserted (no window, no batching dims) and static shapes; else None. Such a
    scatter is `x.at[i].set(v)`: the index vector is the whole indices array, in order."""
    got = _static_one_input_scatter(op)
    if got is None:
        return None
    xs, ids, us, body = got
    if int(np.prod(us, dtype=np.int64)) != 1 or 0 in xs:
        return None
    try:
        d = _scatter_dims(op)
    except Exception:  # noqa: BLE001 - the general kernel reports a malformed attribute
        return None
    if d["update_window_dims"] or d["input_batching_dims"] or d["scatter_indices_batching_dims"]:
        return None
    s2o = d["scatter_dims_to_operand_dims"]
    if sorted(d["inserted_window_dims"]) != list(range(len(xs))) or sorted(s2o) != list(range(len(xs))):
        return None
    if int(np.prod(ids, dtype=np.int64)) != len(s2o):
        return None
    ivd = d["index_vector_dim"]
    if len(s2o) != 1 and (ivd >= len(ids) or ids[ivd] != len(s2o)):
        return None
    batch = ids if ivd >= len(ids) else ids[:ivd] + ids[ivd + 1:]
    if batch != us:                          # (an invalid program: the general kernel says so)
        return None
    return xs, tuple(s2o), body


def point_scatter_kernel(form):
    """The kernel of a `point_scatter_form` scatter: a copy of the input with one element
    written, or combined with the update by the recognized body through `apply_updates` (an
    out-of-bounds index leaves the input as it is, as the spec says)."""
    xs, s2o, body = form
    rank = len(xs)
    inverse = [0] * rank
    for k, dim in enumerate(s2o):
        inverse[dim] = k
    inverse = tuple(inverse)

    def position(idx):
        c = idx.reshape(-1).tolist()
        pos = tuple([c[k] for k in inverse])
        for p, n in zip(pos, xs):
            if p < 0 or p >= n:
                return None
        return pos

    strides = [1] * rank
    for d in range(rank - 2, -1, -1):
        strides[d] = strides[d + 1] * xs[d + 1]

    def scatter_point(ctx, op, x, idx, u):
        pos = position(idx)
        if pos is None:
            return [x]
        if body == "replace":
            out = x.copy()
            out[pos] = u.reshape(()) if getattr(u, "ndim", 0) else u
            return [out]
        c = op_cache(op)
        info = c.get("scatter_point")
        if info is None:
            rt = op.results[0].type
            info = c["scatter_point"] = ([rt], elem(rt).dtype)
        flat = 0
        for p, st in zip(pos, strides):
            flat += p * st
        out = apply_updates(ctx, op.regions[0], [x.reshape(-1)], np.array([flat], dtype=np.int64),
                            [np.asarray(u).reshape(1)], info[0], body)[0]
        return [out.reshape(xs).astype(info[1], copy=False)]
    scatter_point.runs_no_region = True
    scatter_point.replaces = body == "replace"
    scatter_point.position = position
    return scatter_point


def window_replace_form(op):
    """(input shape, index vector's dims, window sizes, inserted dims) when `op` writes one
    window of its updates over its one input: update body `return %update`, static shapes,
    indices holding a single index vector, no batching dims, dimension numbers that fit
    (`_window_dims`); else None. Such a scatter is `x.at[i].set(row)`."""
    got = _static_one_input_scatter(op)
    if got is None or got[3] != "replace":
        return None
    xs, ids, us, _ = got
    try:
        d = _scatter_dims(op)
    except Exception:  # noqa: BLE001 - the general kernel reports a malformed attribute
        return None
    ivd = d["index_vector_dim"]
    if ivd < 0 or ivd > len(ids):
        return None
    k = 1 if ivd == len(ids) else ids[ivd]
    if k < 1 or int(np.prod(ids, dtype=np.int64)) != k:
        return None
    uwd = d["update_window_dims"]
    if len(us) - len(uwd) != len(ids) - (ivd < len(ids)):
        return None
    wid = _window_dims(d, len(xs), len(us), k)
    if wid is None or any(us[a] != 1 for a in range(len(us)) if a not in uwd):
        return None
    window = [1] * len(xs)
    for j, dim in enumerate(wid):
        window[dim] = us[uwd[j]]
    if any(w < 1 or w > n for w, n in zip(window, xs)):
        return None              # (an empty window, or one larger than the input)
    inserted = tuple(dim for dim in range(len(xs)) if dim not in wid)
    return xs, tuple(d["scatter_dims_to_operand_dims"]), tuple(window), inserted


def window_replace_kernel(form):
    """The kernel of a `window_replace_form` scatter: a copy of the input with the window
    written where it lies wholly inside; the input itself where it lies wholly outside in
    some dimension (every update element is skipped, as the spec says); the general kernel
    where it overlaps the input in part (the elements inside are written)."""
    xs, s2o, window, inserted = form
    rank = len(xs)
    base = [slice(0, w) for w in window]
    for dim in inserted:
        base[dim] = 0
    view_shape = tuple(w for dim, w in enumerate(window) if dim not in inserted)
    is_inserted = tuple(dim in inserted for dim in range(rank))
    ND = np.ndarray

    def scatter_window(ctx, op, x, idx, u):
        if x.__class__ is not ND or idx.__class__ is not ND or u.__class__ is not ND \
                or x.shape != xs or u.dtype != x.dtype:
            return scatter(ctx, op, x, idx, u)
        sl = list(base)
        for dim, a in zip(s2o, idx.reshape(-1).tolist()):
            w = window[dim]
            n = xs[dim]
            if a < 0 or a + w > n:
                if a >= n or a + w <= 0:
                    return [x]
                return scatter(ctx, op, x, idx, u)
            sl[dim] = a if is_inserted[dim] else slice(a, a + w)
        out = x.copy()
        out[tuple(sl)] = u.reshape(view_shape)
        return [out]
    scatter_window.runs_no_region = True
    return scatter_window


@specializer("stablehlo.scatter")
def scatter_specialized(op, known=None):
    """A scatter whose update body is recognized (`return %update`, or one primitive op):
    the general kernel, marked as never running its region (so an inlined callee's frame is
    not set up for it); a one-element `return %update` scatter writes its element directly."""
    n = (len(op.operands) - 1) // 2
    if n < 1 or not op.regions or len(op.regions[0].blocks) != 1 \
            or update_body(op.regions[0], n) is None:
        return None
    form = point_scatter_form(op)
    if form is not None:
        return point_scatter_kernel(form)
    form = window_replace_form(op)
    if form is not None:
        return window_replace_kernel(form)
    at = scatter_at_kernel(op)
    if at is not None:
        return at

    def scatter_recognized(ctx, op, *args):
        return scatter(ctx, op, *args)
    scatter_recognized.runs_no_region = True
    return scatter_recognized


# the update bodies whose scatter `apply_updates` folds with one `ufunc.at` in the element
# type itself: float sums, products, maxima and minima (f16/f32/f64), and every recognized
# primitive on native integers
_AT_FLOAT_BODIES = frozenset(("stablehlo.add", "stablehlo.multiply", "stablehlo.maximum",
                              "stablehlo.minimum"))


def scatter_at_kernel(op):
    """The kernel of a scatter of one input of a static shape whose update body is a
    recognized primitive that `apply_updates` applies as one `ufunc.at` in the element type
    (`_AT_FLOAT_BODIES`, or any primitive on native integers): operands of the op's static
    shapes and dtype are folded as the general kernel folds them (a copy of the input, the
    in-bounds updates applied in order by `ufunc.at`), with the targets of the last index
    array kept, by identity, for the rest of the run (a loop's invariant indices: their
    targets are computed once); anything else takes the general kernel. None where the op is
    not of that form."""
    if len(op.operands) != 3 or len(op.results) != 1 or not op.regions \
            or len(op.regions[0].blocks) != 1:
        return None
    name = update_body(op.regions[0], 1)
    if name is None or name == "replace" or name not in _PRIMITIVES:
        return None
    xt, it, ut = (v.type for v in op.operands)
    rt = op.results[0].type
    shapes = [getattr(t, "shape", None) for t in (xt, it, ut, rt)]
    if any(sh is None or None in tuple(sh) for sh in shapes):
        return None
    et = getattr(rt, "element_type", None)
    if et is None or getattr(xt, "element_type", None) != et \
            or getattr(ut, "element_type", None) != et:
        return None
    try:
        e = elem(rt)
        dt = e.dtype
    except Exception:  # noqa: BLE001 - the general kernel reports what is wrong
        return None
    if e.is_bool or e.is_complex:
        return None
    if e.is_float:
        if e.name not in ("f16", "f32", "f64") or name not in _AT_FLOAT_BODIES:
            return None
    elif dt.kind not in "iu":
        return None
    xs, ids, us = (tuple(int(d) for d in sh) for sh in shapes[:3])
    if tuple(int(d) for d in shapes[3]) != xs:
        return None
    try:
        plan = _TargetPlan(xs, ids, us, **_scatter_dims(op))
    except Exception:  # noqa: BLE001 - the general kernel reports what is wrong
        return None
    ufunc = _PRIMITIVES[name][1]
    ND = np.ndarray
    state = [None, None, None, None]     # indices, run, in-bounds targets, in bounds (or None)

    def scatter_at(ctx, op, x, idx, u):
        if x.__class__ is not ND or u.__class__ is not ND or x.dtype != dt or u.dtype != dt \
                or x.shape != xs or u.shape != us:
            return scatter(ctx, op, x, idx, u)
        if idx is state[0] and state[1] == RUN[0]:
            # (the kept index array, of the class and shape checked when it was kept)
            targets, valid = state[2], state[3]
        elif idx.__class__ is not ND or idx.shape != ids:
            return scatter(ctx, op, x, idx, u)
        else:
            targets, valid = plan.targets(idx)
            if valid is not None:
                targets = targets[valid]
            if idx.size <= _SCATTER_KEEP_INDICES:
                # (holding the array: nothing in the run writes into it meanwhile; a caller
                # may between runs, hence the run)
                state[0], state[1], state[2], state[3] = idx, RUN[0], targets, valid
        out = x.copy()
        if targets.size:
            # (rank 1: the array is its own flat view, a copy of it C-contiguous)
            vals = u if u_flat else u.reshape(-1)
            if valid is not None:
                vals = vals[valid]
            ufunc.at(out if x_flat else out.reshape(-1), targets, vals)
        return [out]
    x_flat = len(xs) == 1
    u_flat = len(us) == 1
    scatter_at.runs_no_region = True
    return scatter_at
