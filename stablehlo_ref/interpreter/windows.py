"""Window kernels: reduce_window, select_and_scatter, and map.

Windows are strided views (`window_view`) of the padded, base-dilated input, sliced
by the strides and the window dilations; the window axes are then reduced with a numpy
primitive for the common bodies, or with `tree_reduce` (the body applied on whole arrays)."""
from __future__ import annotations

import itertools
import math

import numpy as np

from ..errors import InterpreterError
from .indexing import apply_updates
from .numerics import elem, strided_view
from .reduction import (_PRIMITIVES, recognize_binary_body, reduce_with_primitive, straight_runner,
                        tree_reduce)
from .registry import kernel, op_cache


def _array_attr(op, name, rank, default):
    a = op.attributes.get(name)
    if a is None:
        return (default,) * rank
    vals = tuple(int(v) for v in a.values)
    if len(vals) != rank:
        raise InterpreterError(f"{op.name}: {name} has {len(vals)} values for rank {rank}")
    return vals


def _padding_attr(op, rank):
    a = op.attributes.get("padding")
    if a is None:
        return [(0, 0)] * rank
    arr = np.asarray(a.array).reshape(-1, 2) if np.asarray(a.array).size else np.zeros((0, 2))
    if arr.shape[0] != rank:
        raise InterpreterError(f"{op.name}: padding has {arr.shape[0]} rows for rank {rank}")
    return [(int(lo), int(hi)) for lo, hi in arr]


def pad_dilate(x: np.ndarray, fill, padding, base_dilations) -> np.ndarray:
    """The spec's `pad` with interior padding `base_dilations - 1`; negative padding slices.
    Without padding or dilation, `x` itself (window views never write)."""
    if all(b == 1 for b in base_dilations) and all(p == (0, 0) for p in padding):
        return x
    core = [(n - 1) * b + 1 if n > 0 else 0 for n, b in zip(x.shape, base_dilations)]
    full_shape = [c + max(lo, 0) + max(hi, 0) for c, (lo, hi) in zip(core, padding)]
    out = np.full(full_shape, fill, dtype=x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + c, b)
              for c, (lo, _), b in zip(core, padding, base_dilations))] = x
    keep = []
    for n, (lo, hi) in zip(full_shape, padding):
        start = -min(lo, 0)
        keep.append(slice(start, max(start, n + min(hi, 0))))
    return out[tuple(keep)]


def window_view(padded: np.ndarray, window, strides, dilations):
    """(result..., window...) view of `padded`, or None when no window fits: the windows of
    `sliding_window_view` taken every `strides` along the result axes and every `dilations`
    within a window, made as one strided view."""
    shape = padded.shape
    if not shape:
        return padded
    st = padded.strides
    out, outer, inner = [], [], []
    for n, w, s, d, a in zip(shape, window, strides, dilations, st):
        e = (w - 1) * d + 1
        if w <= 0 or e > n:
            return None
        out.append((n - e) // s + 1)
        outer.append(a * s)
        inner.append(a * d)
    return strided_view(padded, (*out, *window), (*outer, *inner))


def _result_shape(padded_shape, window, strides, dilations):
    out = []
    for n, w, s, d in zip(padded_shape, window, strides, dilations):
        eff = (w - 1) * d + 1
        out.append((n - eff) // s + 1 if n >= eff and w > 0 else 0)
    return tuple(out)


_SEQUENTIAL = {"stablehlo.add": np.add, "stablehlo.multiply": np.multiply}
_FOLDED = ("stablehlo.maximum", "stablehlo.minimum")


# windows of up to this many elements are folded position by position (one elementwise op
# on strided views per position) rather than reduced over the window axes, which numpy does
# slowly for short strided axes
_FOLD_WINDOW = 64
_NATIVE_FLOATS = ("f16", "f32", "f64")


def _window_positions(view):
    rank = view.ndim // 2
    lead = (slice(None),) * rank
    return [lead + p for p in itertools.product(*[range(n) for n in view.shape[rank:]])]


def _sequential_window_reduce(fn, view, init, et):
    """Inexact float sums/products: fold the window in row-major order from the init value,
    rounding to the element type after every step (as XLA's loop does), vectorized over all
    windows at once. For f16/f32/f64 the steps run in the type itself: numpy's own + and *
    round once, as the f64 step rounded to the type does (f64 holds the exact sum or product
    of two f32 to within far less than half an f32 ulp: no double-rounding error), and
    small windows are folded over strided views without copying the windows."""
    rank = view.ndim // 2
    out_shape = view.shape[:rank]
    wsize = math.prod(view.shape[rank:])
    if et.name in _NATIVE_FLOATS and view.dtype == et.dtype and 0 < wsize <= _FOLD_WINDOW:
        acc = np.broadcast_to(np.asarray(init).reshape(()).astype(et.dtype), out_shape)
        with np.errstate(all="ignore"):
            for p in _window_positions(view):
                acc = fn(acc, view[p])
        return np.ascontiguousarray(acc)
    wins = view.reshape(out_shape + (-1,))
    cd = np.complex128 if et.is_complex else np.float64
    acc = np.broadcast_to(np.asarray(init).reshape(()), out_shape).astype(et.dtype)
    with np.errstate(all="ignore"):
        for k in range(wins.shape[-1]):
            acc = fn(acc.astype(cd), wins[..., k].astype(cd)).astype(et.dtype)
    return acc


_ACCUMULATE = {"stablehlo.add": (np.add, np.logical_or),
               "stablehlo.multiply": (np.multiply, np.logical_and),
               "stablehlo.maximum": (np.maximum, np.logical_or),
               "stablehlo.minimum": (np.minimum, np.logical_and),
               "stablehlo.and": (np.bitwise_and, np.logical_and),
               "stablehlo.or": (np.bitwise_or, np.logical_or)}


def _prefix_axis(x, window, strides, base, wdil, padding):
    """The axis along which a reduce_window's window covers the whole prefix (window W >= n,
    padding (W - 1, 0), unit strides and dilations; every other axis a window of 1, no
    padding), or None when it is not such a window."""
    axes = [d for d, w in enumerate(window) if w != 1]
    if len(axes) != 1 or set(strides) | set(base) | set(wdil) != {1}:
        return None
    ax = axes[0]
    if window[ax] < x.shape[ax] or padding[ax] != (window[ax] - 1, 0) or any(
            p != (0, 0) for d, p in enumerate(padding) if d != ax):
        return None
    return ax


def _prefix_fold(ctx, op, x, init, window, strides, base, wdil, padding, cache):
    """A prefix reduce_window (see `_prefix_axis`) with a body that is not a primitive op
    (jax's cumlogsumexp: logaddexp) as an inclusive scan of log2(n) steps (Hillis and
    Steele's): with z = [body(init, x0), x1, ..., x(n-1)], step d combines each element with
    the one d before it, body(y[i - d], y[i]), for d = 1, 2, 4, ...; result i is then a
    reduction of z0 .. zi by a binary tree that keeps their order. Each window holds its
    padded elements (init) first: when body(init, init) is init, bit for bit (checked by
    running the body once), they reduce to one init whichever tree takes them, so that
    result i is a reduction of the window in its order, as the spec's reduce allows; the
    rounding error grows with log n, as the tree reduction of each window's grows. Reducing
    each window by a tree instead evaluated the body on a view of n x W elements (128 x 128
    rows: 2 M evaluations, 28 ms; here 7 steps over the 16 K elements, 1 ms) and
    materialized it. None where body(init, init) is not init (the tree reduction decides)."""
    ax = _prefix_axis(x, window, strides, base, wdil, padding)
    if ax is None or x.size == 0:
        return None
    et = elem(op.results[0].type)
    dt = np.dtype(et.dtype)
    init0 = np.asarray(init).reshape(())
    if init0.dtype != dt or x.dtype != dt:
        return None
    run_region = straight_runner(ctx, op.regions[0], cache)
    first = np.asarray(run_region([init0, init0])[0])
    if first.dtype != dt or first.shape != () or first.tobytes() != init0.tobytes():
        return None
    y = np.moveaxis(x, ax, 0).astype(dt, copy=True)
    n = y.shape[0]
    y[0] = np.asarray(run_region([np.full(y.shape[1:], init0, dtype=dt), y[0]])[0])
    d = 1
    while d < n:
        ctx.tick(op, counted=True)
        # (the step is computed whole before it is stored; numpy's assignment copies first
        # where a body's result shares memory with y)
        y[d:] = np.asarray(run_region([y[:n - d], y[d:]])[0])
        d *= 2
    return np.moveaxis(y, 0, ax)


def _prefix_scan(op, x, init, window, strides, base, wdil, padding, name):
    """A reduce_window whose window along one axis covers the whole prefix (window W >= n,
    padding (W - 1, 0), unit strides and dilations; every other axis a window of 1, no
    padding) is a cumulative op: `ufunc.accumulate` over [init, x...] along that axis. Exact
    when op(init, init) is init (the padded elements, which hold init, then add nothing):
    the fold runs in the same order as the window's, rounding to the dtype at each step
    (float16's float32 arithmetic rounds + and * correctly). `name`: the body's primitive op
    (`recognize_binary_body`), or None. None when not such a window."""
    ax = _prefix_axis(x, window, strides, base, wdil, padding)
    if ax is None:
        return None
    if name not in _ACCUMULATE:
        return None
    et = elem(op.results[0].type)
    fn, bool_fn = _ACCUMULATE[name]
    if et.is_bool:
        fn = bool_fn
    elif et.is_float:
        if et.name not in ("f16", "f32", "f64") or x.dtype != et.dtype:
            return None
    elif not et.is_integer or (name in ("stablehlo.add", "stablehlo.multiply") and et.bits < 8) \
            or x.dtype != et.dtype:
        return None
    init0 = np.asarray(init).reshape(()).astype(x.dtype)
    if fn(init0, init0).tobytes() != init0.tobytes():
        return None
    if et.is_float and name in ("stablehlo.maximum", "stablehlo.minimum") and (
            init0 == 0 or not np.all(x != 0)):
        return None     # which zero max(+0, -0) gives depends on the order: keep the window's
    shape = list(x.shape)
    shape[ax] = 1
    cat = np.concatenate([np.broadcast_to(init0, shape), x], axis=ax)
    acc = fn.accumulate(cat, axis=ax, dtype=x.dtype)
    return acc[(slice(None),) * ax + (slice(1, None),)]


@kernel("stablehlo.reduce_window")
def reduce_window(ctx, op, *args):
    n = len(args) // 2
    xs, inits = list(args[:n]), list(args[n:])
    rank = xs[0].ndim
    cache = op_cache(op)
    geometry = cache.get(("window_geometry", rank))
    if geometry is None:
        # (decoded once per op: a small pooling's attributes cost as much as its windows)
        window = _array_attr(op, "window_dimensions", rank, 1)
        strides = _array_attr(op, "window_strides", rank, 1)
        base = _array_attr(op, "base_dilations", rank, 1)
        wdil = _array_attr(op, "window_dilations", rank, 1)
        padding = _padding_attr(op, rank)
        if min(strides + base + wdil, default=1) < 1:
            raise InterpreterError(f"{op.name}: strides and dilations must be positive")
        geometry = cache[("window_geometry", rank)] = (window, strides, base, wdil, padding)
    window, strides, base, wdil, padding = geometry
    region = op.regions[0]
    # (the body's primitive op, recognized once: the prefix and window paths below read it)
    name = recognize_binary_body(region) if n == 1 else None
    if n == 1 and rank:
        out = _prefix_scan(op, xs[0], inits[0], window, strides, base, wdil, padding, name)
        if out is None and name is None:
            out = _prefix_fold(ctx, op, xs[0], inits[0], window, strides, base, wdil, padding,
                               cache)
        if out is not None:
            return [out]
    padded = [pad_dilate(x, np.asarray(i).reshape(()), padding, base) for x, i in zip(xs, inits)]
    result_types = [r.type for r in op.results]
    views = [window_view(p, window, strides, wdil) for p in padded]
    if views[0] is None or rank == 0:
        shape = _result_shape(padded[0].shape, window, strides, wdil)
        if rank == 0:
            shape = ()
        if math.prod(shape) == 0:
            return [np.empty(shape, dtype=elem(t).dtype) for t in result_types]
    axes = tuple(range(rank, 2 * rank))
    if n == 1:
        et = elem(result_types[0])
        if name in _SEQUENTIAL and (et.is_float or et.is_complex):
            return [_sequential_window_reduce(_SEQUENTIAL[name], views[0], inits[0], et)]
        if name in _FOLDED and (et.is_float or et.is_integer) and not et.is_bool \
                and views[0].dtype == et.dtype and 0 < math.prod(window) <= _FOLD_WINDOW:
            # max/min of a small window: folded in the window's row-major order (what the
            # reduction over the window axes does), then combined with the init value
            fn = _PRIMITIVES[name][1]
            positions = _window_positions(views[0])
            acc = views[0][positions[0]]
            for p in positions[1:]:
                acc = fn(acc, views[0][p])
            return [reduce_with_primitive(name, np.ascontiguousarray(acc), (), inits[0], et)]
        if name is not None:
            return [reduce_with_primitive(name, views[0], axes, inits[0], et)]
    res = tree_reduce(ctx, region, views, inits, axes, op_cache(op))
    return [np.asarray(r).astype(elem(t).dtype, copy=False) for r, t in zip(res, result_types)]


@kernel("stablehlo.select_and_scatter")
def select_and_scatter(ctx, op, operand, source, init_value):
    rank = operand.ndim
    window = _array_attr(op, "window_dimensions", rank, 1)
    strides = _array_attr(op, "window_strides", rank, 1)
    padding = _padding_attr(op, rank)
    ones = (1,) * rank
    select_region, scatter_region = op.regions
    # pad the operand, which elements are real, and their flat positions alike
    flat_pos = np.arange(operand.size, dtype=np.int64).reshape(operand.shape)
    p_val = pad_dilate(operand, np.zeros((), operand.dtype), padding, ones)
    p_pos = pad_dilate(flat_pos, np.int64(-1), padding, ones)
    v_val = window_view(p_val, window, strides, ones)
    v_pos = window_view(p_pos, window, strides, ones)
    et = elem(op.results[0].type)
    result = np.full(operand.size, np.asarray(init_value).reshape(()), dtype=et.dtype)
    if v_val is None or source.size == 0:
        return result.reshape(operand.shape)
    out_shape = v_val.shape[:rank]
    if tuple(source.shape) != tuple(out_shape):
        raise InterpreterError(f"select_and_scatter: source shape {tuple(source.shape)} does not "
                               f"match the window grid {tuple(out_shape)}")
    m = math.prod(out_shape)
    w = math.prod(window)
    vals = v_val.reshape(m, w)
    pos = v_pos.reshape(m, w)
    sel_val = vals[:, 0].copy()
    sel_pos = pos[:, 0].copy()
    has = sel_pos >= 0
    run_select = straight_runner(ctx, select_region, op_cache(op))
    for k in range(1, w):
        v, p = vals[:, k], pos[:, k]
        real = p >= 0
        keep = np.asarray(run_select([sel_val, v])[0]).astype(bool)
        keep = np.broadcast_to(keep, (m,))
        take = real & (~has | ~keep)
        sel_val = np.where(take, v, sel_val)
        sel_pos = np.where(take, p, sel_pos)
        has |= real
    src = source.reshape(-1)
    out = apply_updates(ctx, scatter_region, [result], sel_pos[has], [src[has]],
                        [op.results[0].type])[0]
    return out.reshape(operand.shape).astype(et.dtype, copy=False)


@kernel("stablehlo.map")
def map_(ctx, op, *xs):
    rt = op.results[0].type
    if not xs:
        raise InterpreterError("stablehlo.map needs at least one input")
    res = ctx.run_region(op.regions[0], list(xs))[0]
    return np.broadcast_to(np.asarray(res), xs[0].shape).astype(elem(rt).dtype)
