"""Dynamic-shape ops: the shape (or padding, slice bounds) comes from operand tensors at run
time. Each is evaluated by its static counterpart's kernel on a shadow of the op whose result
type and attributes carry the run-time values: dynamic_iota, dynamic_reshape, dynamic_pad,
dynamic_broadcast_in_dim, real_dynamic_slice, dynamic_conv; plus set_dimension_size."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir.attributes import DenseArrayAttr, DenseElementsAttr
from ..ir.core import Operation, Value
from ..ir.types import TensorType, element_type
from .numerics import elem
from .registry import KERNELS, kernel

_I64 = element_type("i64")


def _vector(x, what: str, op) -> tuple:
    v = np.asarray(x)
    if v.ndim > 1:
        raise InterpreterError(f"{op.name}: {what} must be a 1-d tensor")
    return tuple(int(i) for i in v.reshape(-1))


def _shadow(op, name, operand_types, shape, attributes):
    """A copy of `op` named `name`, with the given operand types, one result of `shape`
    (with op's result element type) and `attributes` merged over op's."""
    sh = Operation.__new__(Operation)
    sh.name = name
    sh.operands = [Value(t, None, None, i) for i, t in enumerate(operand_types)]
    rt = op.results[0].type
    sh.results = [Value(TensorType(tuple(shape), rt.element_type), None, sh, 0)]
    sh.attributes = {**op.attributes, **attributes}
    sh.regions = op.regions
    sh.location = op.location
    sh.successors = []
    sh.source = getattr(op, "source", None)
    try:
        sh._cache = None
    except AttributeError:
        pass
    return sh


def _static_type(x, t):
    return TensorType(tuple(np.shape(x)), t.element_type) if isinstance(t, TensorType) else t


def _check_shape(op, shape):
    if any(d < 0 for d in shape):
        raise InterpreterError(f"{op.name}: negative dimension size in output shape {list(shape)}")
    rt = op.results[0].type
    for d, s in zip(rt.shape, shape):
        if d is not None and d != s:
            raise InterpreterError(f"{op.name}: output shape {list(shape)} does not match the "
                                   f"result type {rt}")
    if len(rt.shape) != len(shape):
        raise InterpreterError(f"{op.name}: output shape {list(shape)} has rank {len(shape)}, "
                               f"the result type {rt} rank {len(rt.shape)}")


def _dense_array(values):
    return DenseArrayAttr(_I64, tuple(int(v) for v in values))


@kernel("stablehlo.dynamic_iota")
def dynamic_iota(ctx, op, output_shape):
    shape = _vector(output_shape, "output_shape", op)
    _check_shape(op, shape)
    sh = _shadow(op, "stablehlo.iota", [], shape, {})
    return KERNELS["stablehlo.iota"](ctx, sh)


@kernel("stablehlo.dynamic_reshape")
def dynamic_reshape(ctx, op, x, output_shape):
    shape = _vector(output_shape, "output_shape", op)
    _check_shape(op, shape)
    if int(np.prod(shape, dtype=np.int64)) != x.size:
        raise InterpreterError(f"{op.name}: cannot reshape {x.size} elements to {list(shape)}")
    return np.reshape(x, shape)


@kernel("stablehlo.dynamic_broadcast_in_dim")
def dynamic_broadcast_in_dim(ctx, op, x, output_dimensions):
    shape = _vector(output_dimensions, "output_dimensions", op)
    _check_shape(op, shape)
    dims = [int(d) for d in op.attributes["broadcast_dimensions"].values]
    for i, d in enumerate(dims):
        if x.shape[i] not in (1, shape[d]):
            raise InterpreterError(f"{op.name}: operand dimension {i} of size {x.shape[i]} cannot "
                                   f"be broadcast to size {shape[d]}")
    sh = _shadow(op, "stablehlo.broadcast_in_dim", [_static_type(x, op.operands[0].type)], shape, {})
    return KERNELS["stablehlo.broadcast_in_dim"](ctx, sh, x)


@kernel("stablehlo.dynamic_pad")
def dynamic_pad(ctx, op, x, value, low, high, interior):
    lo = _vector(low, "edge_padding_low", op)
    hi = _vector(high, "edge_padding_high", op)
    inner = _vector(interior, "interior_padding", op)
    if any(i < 0 for i in inner):
        raise InterpreterError(f"{op.name}: interior padding must be non-negative, got {list(inner)}")
    shape = tuple(l + h + n + max(n - 1, 0) * i for l, h, n, i in zip(lo, hi, x.shape, inner))
    _check_shape(op, shape)
    sh = _shadow(op, "stablehlo.pad",
                 [_static_type(x, op.operands[0].type), op.operands[1].type], shape,
                 {"edge_padding_low": _dense_array(lo), "edge_padding_high": _dense_array(hi),
                  "interior_padding": _dense_array(inner)})
    return KERNELS["stablehlo.pad"](ctx, sh, x, value)


@kernel("stablehlo.real_dynamic_slice")
def real_dynamic_slice(ctx, op, x, start, limit, strides):
    s = _vector(start, "start_indices", op)
    e = _vector(limit, "limit_indices", op)
    st = _vector(strides, "strides", op)
    for d, (a, b, c) in enumerate(zip(s, e, st)):
        if c <= 0 or a < 0 or b > x.shape[d] or a > b:
            raise InterpreterError(f"{op.name}: slice [{a}:{b}:{c}] is out of range for dimension "
                                   f"{d} of size {x.shape[d]}")
    out = x[tuple(slice(a, b, c) for a, b, c in zip(s, e, st))]
    _check_shape(op, out.shape)
    return out


@kernel("stablehlo.dynamic_conv")
def dynamic_conv(ctx, op, lhs, rhs, padding):
    pad = np.asarray(padding).astype(np.int64)
    rt = op.results[0].type
    attrs = {"padding": DenseElementsAttr(TensorType(tuple(pad.shape), _I64), pad)}
    conv = KERNELS.get("stablehlo.convolution")
    if conv is None:
        raise InterpreterError(f"{op.name}: no convolution kernel")
    shape = tuple(d if d is not None else -1 for d in rt.shape)
    sh = _shadow(op, "stablehlo.convolution",
                 [_static_type(lhs, op.operands[0].type), _static_type(rhs, op.operands[1].type)],
                 shape, attrs)
    return conv(ctx, sh, lhs, rhs)


@kernel("stablehlo.set_dimension_size")
def set_dimension_size(ctx, op, x, size):
    d = int(op.attributes["dimension"].value)
    n = int(np.asarray(size).reshape(()))
    if not 0 <= d < x.ndim:
        raise InterpreterError(f"{op.name}: dimension {d} is out of range for rank {x.ndim}")
    if n < 0 or n > x.shape[d]:
        raise InterpreterError(f"{op.name}: size {n} is outside [0, {x.shape[d]}] for dimension {d}")
    rt = op.results[0].type
    if rt.shape[d] is not None:
        return x            # a static result: the size only marks the valid prefix
    idx = [slice(None)] * x.ndim
    idx[d] = slice(0, n)
    return x[tuple(idx)].astype(elem(rt).dtype, copy=False)
