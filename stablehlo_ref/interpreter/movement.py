"""Data-movement and shape kernels: constant, iota, broadcast_in_dim, reshape, transpose, slice,
concatenate, pad, reverse, dynamic_slice, dynamic_update_slice, tuples."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, StableHLOError
from ..ir.attributes import DenseArrayAttr, DenseElementsAttr, DenseResourceAttr
from ..ir.types import TensorType
from .registry import op_cache
from .numerics import elem, from_compute
from .registry import clamped_window, kernel, specializer


def _shape(op, i=0):
    t = op.results[i].type
    return tuple(t.shape)


def _dynamic(shape) -> bool:
    return None in shape


def _ints(op, name):
    """An integer-array attribute as a tuple of ints, decoded once per op."""
    cache = op_cache(op)
    key = ("ints", name)
    out = cache.get(key)
    if out is not None:
        return out
    cache[key] = out = _decode_ints(op, name)
    return out


def _decode_ints(op, name):
    a = op.attributes[name]
    if hasattr(a, "values"):
        return tuple(map(int, a.values))
    if isinstance(a, DenseElementsAttr):
        return tuple(int(v) for v in a.array.reshape(-1))
    raise InterpreterError(f"{op.name}: attribute {name} has unexpected form")


@kernel("stablehlo.constant")
def constant(ctx, op):
    v = op.attributes["value"]
    if v.__class__ is not DenseElementsAttr and isinstance(v, DenseResourceAttr):
        from ..ir.resources import resource_array
        try:
            return resource_array(ctx.module, v)
        except StableHLOError as e:
            raise InterpreterError(e.message) from None
    arr = v.array
    if arr.base is not None and arr.ndim and not any(arr.strides):
        return np.array(arr)      # materialize splats so kernels may write views safely
    return arr


# an iota result of at most this many bytes is made once per op and kept (read-only, as
# constants are): each run hands out the same array
_IOTA_KEEP_BYTES = 1 << 20


@kernel("stablehlo.iota")
def iota(ctx, op):
    cache = getattr(op, "_cache", None)
    if cache is not None:
        hit = cache.get("iota")
        if hit is not None:
            return hit
    arr = _iota(op)
    if arr.nbytes <= _IOTA_KEEP_BYTES:
        if arr.base is not None:
            arr = np.array(arr)             # (a broadcast view made whole)
        arr.flags.writeable = False
        op_cache(op)["iota"] = arr
    return arr


def _iota(op):
    dim = op.attributes["iota_dimension"].value
    shape = _shape(op)
    et = elem(op.results[0].type)
    idx = np.arange(shape[dim], dtype=np.int64)
    view = [1] * len(shape)
    view[dim] = shape[dim]
    arr = np.broadcast_to(idx.reshape(view), shape)
    if et.is_complex:
        return arr.astype(et.dtype)
    if et.is_float:
        return arr.astype(np.float64).astype(et.dtype)
    return from_compute(arr, et)


_SMALL = 1 << 14     # results up to this many elements are copied, larger ones are views


def broadcast_array(x: np.ndarray, view, shape) -> np.ndarray:
    """`x` reshaped to `view` and broadcast to `shape` (a copy when small: cheaper than a
    broadcast view to make, and kernels may write into it)."""
    x = x.reshape(view)
    n = 1
    for d in shape:
        n *= d
    if n <= _SMALL:
        out = np.empty(shape, dtype=x.dtype)
        out[...] = x
        return out
    return np.broadcast_to(x, shape)


@kernel("stablehlo.broadcast_in_dim")
def broadcast_in_dim(ctx, op, x):
    if not x.shape:
        # (a rank-0 operand, the commonest form, to a small static shape: what the plan
        # below makes of it, a new array of its value, without making the plan)
        dims = op.attributes.get("broadcast_dimensions")
        t = op.results[0].type
        if dims.__class__ is DenseArrayAttr and not dims.values and t.__class__ is TensorType:
            shape = t.shape
            n = 1
            for d in shape:
                if d is None:
                    n = -1
                    break
                n *= d
            if 0 <= n <= _SMALL:
                out = np.empty(shape, dtype=x.dtype)
                out[...] = x
                return out
    cache = getattr(op, "_cache", None)
    if cache is None:
        cache = op_cache(op)
    plan = cache.get("broadcast")
    if plan is None or plan[0] != x.shape:
        # (operand shape, view, result shape, small enough to copy), decided once per op
        dims = _ints(op, "broadcast_dimensions")
        shape = _shape(op)
        if _dynamic(shape):
            # a `?` dimension of the result is the operand's dimension that maps to it
            # (shape-polymorphic programs), or 1
            sizes = dict(zip(dims, x.shape))
            shape = tuple(sizes.get(k, 1) if d is None else d for k, d in enumerate(shape))
        view = [1] * len(shape)
        for i, d in enumerate(dims):
            view[d] = x.shape[i]
        n = 1
        for d in shape:
            n *= d
        # dimensions mapped out of order transpose the operand (result dimension dims[i] is
        # operand dimension i)
        perm = None
        for i in range(1, len(dims)):
            if dims[i] < dims[i - 1]:
                perm = tuple(sorted(range(len(dims)), key=dims.__getitem__))
                break
        plan = cache["broadcast"] = (x.shape, tuple(view), shape, n <= _SMALL, perm)
    _, view, shape, small, perm = plan
    if perm is not None:
        x = np.transpose(x, perm)
    x = x.reshape(view)
    if small:
        out = np.empty(shape, dtype=x.dtype)
        out[...] = x
        return out
    return np.broadcast_to(x, shape)


@specializer("stablehlo.broadcast_in_dim")
def broadcast_in_dim_specialized(op, known=None):
    """broadcast_in_dim of static shapes: the kernel's plan made once; one that only inserts
    dimensions of size 1 (the operand's dimensions in order, the same elements) is the
    operand reshaped, a view, as `reshape` makes it."""
    xshape = _static_shape(op.operands[0].type)
    shape = _static_shape(op.results[0].type)
    if xshape is None or shape is None:
        return None
    try:
        dims = _ints(op, "broadcast_dimensions")
    except (KeyError, InterpreterError):
        return None
    if len(dims) != len(xshape) or any(d < 0 or d >= len(shape) for d in dims) \
            or list(dims) != sorted(set(dims)):
        return None                     # (dimensions out of order: the kernel transposes)
    view = [1] * len(shape)
    for i, d in enumerate(dims):
        view[d] = xshape[i]
    view = tuple(view)
    n = 1
    for d in shape:
        n *= d
    general = broadcast_in_dim
    ND = np.ndarray
    if view == shape:
        GENERIC = np.generic
        empty = np.empty

        def broadcast_reshape(ctx, op, x):
            if x.__class__ is not ND or x.shape != xshape:
                if isinstance(x, GENERIC) and not xshape:
                    # a numpy scalar (as a full reduction gives): a new array of its value,
                    # as the general kernel makes it
                    out = empty(shape, dtype=x.dtype)
                    out[...] = x
                    return out
                return general(ctx, op, x)
            return x.reshape(shape)
        return broadcast_reshape
    if n > _SMALL:
        return None
    empty = np.empty
    if not xshape:
        # a rank-0 operand (an array or a numpy scalar) is assigned to every element
        def broadcast_scalar(ctx, op, x):
            if x.shape != xshape:
                return general(ctx, op, x)
            out = empty(shape, dtype=x.dtype)
            out[...] = x
            return out
        return broadcast_scalar

    def broadcast_small(ctx, op, x):
        if x.shape != xshape:
            return general(ctx, op, x)
        out = empty(shape, dtype=x.dtype)
        out[...] = x.reshape(view)
        return out
    return broadcast_small


@kernel("stablehlo.broadcast")
def broadcast(ctx, op, x):
    return np.broadcast_to(x, _shape(op))


@kernel("stablehlo.reshape")
def reshape(ctx, op, x):
    shape = _shape(op)
    if _dynamic(shape):
        if shape.count(None) != 1:
            raise InterpreterError(f"{op.name}: cannot infer {shape.count(None)} dynamic dimensions "
                                   f"of the result from an operand of shape {list(x.shape)}")
        shape = tuple(-1 if d is None else d for d in shape)
    if x.__class__ is np.ndarray:
        return x.reshape(shape)         # (what np.reshape calls)
    return np.reshape(x, shape)


@specializer("stablehlo.reshape")
def reshape_specialized(op, known=None):
    """reshape to a static shape: the shape read once, numpy's reshape method called directly
    (the same view `np.reshape` makes)."""
    shape = _shape(op)
    if _dynamic(shape):
        return None

    def reshape_static(ctx, op, x):
        return x.reshape(shape)
    return reshape_static


@kernel("stablehlo.transpose")
def transpose(ctx, op, x):
    perm = _array_values(op.attributes.get("permutation"))
    return np.transpose(x, _ints(op, "permutation") if perm is None else perm)


def _array_values(a):
    """The values of a `DenseArrayAttr` of an integer element type (as `_decode_ints` reads
    them, without converting or keeping them: an op's first run, often its only one, pays
    for no cache), else None."""
    if a.__class__ is DenseArrayAttr and a.values.__class__ is tuple \
            and a.element_type.kind in _INT_KINDS:
        return a.values
    return None


_INT_KINDS = frozenset(("signed", "unsigned"))


@kernel("stablehlo.slice")
def slice_(ctx, op, x):
    attrs = op.attributes
    start = _array_values(attrs.get("start_indices"))
    limit = _array_values(attrs.get("limit_indices"))
    strides = _array_values(attrs.get("strides"))
    if start is None or limit is None or strides is None:
        start = _ints(op, "start_indices")
        limit = _ints(op, "limit_indices")
        strides = _ints(op, "strides")
    return x[tuple(map(slice, start, limit, strides))]


@specializer("stablehlo.slice")
def slice_specialized(op, known=None):
    """slice: the window's slices made once (the kernel builds them on every call); the same
    view the kernel returns."""
    try:
        start = _ints(op, "start_indices")
        limit = _ints(op, "limit_indices")
        strides = _ints(op, "strides")
    except (KeyError, InterpreterError):
        return None
    window = tuple(slice(s, l, st) for s, l, st in zip(start, limit, strides))

    def slice_static(ctx, op, x):
        return x[window]
    return slice_static


@kernel("stablehlo.concatenate")
def concatenate(ctx, op, *xs):
    dim = op.attributes["dimension"].value
    return np.concatenate(xs, axis=dim)


_ALL = slice(None)
_BACKWARD = slice(None, None, -1)


@kernel("stablehlo.reverse")
def reverse(ctx, op, x):
    # (read in place where the attribute is a dense array of integers, as `slice_` reads
    # its own: an op's first run, often its only one, keeps no cache)
    dims = _array_values(op.attributes.get("dimensions"))
    if dims is None:
        dims = _ints(op, "dimensions")
    if not dims:
        return x
    # (the view `np.flip` makes, indexed directly for distinct dims in range; np.flip itself,
    # with its errors, for any other)
    nd = x.ndim
    idx = [_ALL] * nd
    for d in dims:
        if d < 0 or d >= nd or idx[d] is _BACKWARD:
            return np.flip(x, axis=dims)
        idx[d] = _BACKWARD
    return x[tuple(idx)]


@kernel("stablehlo.pad")
def pad(ctx, op, x, value):
    attrs = op.attributes
    lo = _array_values(attrs.get("edge_padding_low"))
    interior = _array_values(attrs.get("interior_padding"))
    if lo is None or interior is None:
        lo = _ints(op, "edge_padding_low")
        interior = _ints(op, "interior_padding")
    shape = _shape(op)
    if _dynamic(shape):
        # the result's size comes from the operand's when the type leaves it open (`?`)
        hi = _ints(op, "edge_padding_high")
        shape = tuple(lo[i] + hi[i] + n + max(n - 1, 0) * interior[i] for i, n in enumerate(x.shape))
        if any(d < 0 for d in shape):
            raise InterpreterError(f"{op.name}: negative dimension size in output shape {list(shape)}")
    # (what np.full does, without its Python-level call; a padding value of the operand's
    # dtype, as the types have it, filled in by the array's own method, bits as they are)
    out = np.empty(shape, dtype=x.dtype)
    if value.dtype == x.dtype and not value.shape:
        out.fill(value)
    else:
        np.copyto(out, value.reshape(()), casting="unsafe")
    src_sl = []
    dst_sl = []
    for i in range(x.ndim):
        # positions of x's elements in the output: lo + k*(interior+1)
        step = interior[i] + 1
        start = lo[i]
        n = x.shape[i]
        k0 = 0
        if start < 0:
            k0 = (-start + step - 1) // step
        k1 = n
        if n:
            last = start + (n - 1) * step
            if last >= shape[i]:
                k1 = n - ((last - shape[i]) // step + 1)
        if k1 <= k0:
            return out
        src_sl.append(slice(k0, k1))
        dst_sl.append(slice(start + k0 * step, start + (k1 - 1) * step + 1, step))
    out[tuple(dst_sl)] = x[tuple(src_sl)]
    return out


_INT_SCALARS = frozenset((np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
                          np.uint32, np.uint64))


def _clamped_starts(x_shape, sizes, starts):
    out = []
    d = 0
    for s in starts:
        # (a rank-0 array, as the types have it, read with int(), else made one first)
        # (a numpy integer scalar, as kernels leave rank-0 results, read with int() too)
        s = int(s) if s.__class__ is np.ndarray and not s.shape or s.__class__ in _INT_SCALARS \
            else int(np.asarray(s).reshape(()))
        out.append(min(max(s, 0), x_shape[d] - sizes[d]))
        d += 1
    return out


@kernel("stablehlo.dynamic_slice")
def dynamic_slice(ctx, op, x, *starts):
    sizes = _array_values(op.attributes.get("slice_sizes"))
    if sizes is None:
        sizes = _ints(op, "slice_sizes")
    st = _clamped_starts(x.shape, sizes, starts)
    return x[tuple([slice(s, s + n) for s, n in zip(st, sizes)])]


@kernel("stablehlo.dynamic_update_slice")
def dynamic_update_slice(ctx, op, x, update, *starts):
    st = _clamped_starts(x.shape, update.shape, starts)
    out = np.array(x, copy=True)
    out[tuple([slice(s, s + n) for s, n in zip(st, update.shape)])] = update
    return out


def _static_shape(t):
    shape = getattr(t, "shape", None)
    if shape is None or None in shape:
        return None
    return tuple(shape)


@specializer("stablehlo.dynamic_slice")
def dynamic_slice_specialized(op, known=None):
    """A dynamic_slice of an operand with a static shape: sizes and clamping bounds decoded
    once, start indices read with int()."""
    xshape = _static_shape(op.operands[0].type)
    if xshape is None:
        return None
    sizes = _ints(op, "slice_sizes")
    if len(sizes) != len(xshape) or len(op.operands) != len(xshape) + 1:
        return None
    bounds = tuple(zip(sizes, [n - k for n, k in zip(xshape, sizes)]))
    general = dynamic_slice

    def dynamic_slice_static(ctx, op, x, *starts):
        if x.shape != xshape:
            return general(ctx, op, x, *starts)
        return x[clamped_window(starts, bounds)]
    return dynamic_slice_static


@specializer("stablehlo.dynamic_update_slice")
def dynamic_update_slice_specialized(op, known=None):
    """A dynamic_update_slice of static shapes: clamping bounds worked out once."""
    xshape = _static_shape(op.operands[0].type)
    ushape = _static_shape(op.operands[1].type)
    if xshape is None or ushape is None or len(xshape) != len(ushape) \
            or len(op.operands) != len(xshape) + 2:
        return None
    bounds = tuple(zip(ushape, [n - k for n, k in zip(xshape, ushape)]))
    general = dynamic_update_slice

    def dynamic_update_slice_static(ctx, op, x, update, *starts):
        if x.shape != xshape or update.shape != ushape:
            return general(ctx, op, x, update, *starts)
        out = np.array(x, copy=True)
        out[clamped_window(starts, bounds)] = update
        return out
    return dynamic_update_slice_static


@kernel("stablehlo.tuple")
def tuple_(ctx, op, *xs):
    return [tuple(xs)]


@kernel("stablehlo.get_tuple_element")
def get_tuple_element(ctx, op, t):
    return t[op.attributes["index"].value]


@kernel("stablehlo.optimization_barrier")
def optimization_barrier(ctx, op, *xs):
    return list(xs)


@kernel("stablehlo.get_dimension_size")
def get_dimension_size(ctx, op, x):
    return np.array(x.shape[op.attributes["dimension"].value], dtype=np.int32)
