"""Neural-network kernels: batch_norm_inference, batch_norm_training, batch_norm_grad (computed
in f64 and rounded once to the result type), and the legacy einsum / unary_einsum."""
from __future__ import annotations

import re

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from .numerics import accumulation_dtype, elem, from_compute
from .registry import kernel


def _feature_view(op, x, v):
    """Reshape the per-feature vector `v` so it broadcasts along `feature_index` of x."""
    f = op.attributes["feature_index"].value
    shape = [1] * x.ndim
    shape[f] = x.shape[f]
    return np.asarray(v, dtype=np.float64).reshape(shape)


def _reduce_axes(op, x):
    f = op.attributes["feature_index"].value
    return tuple(d for d in range(x.ndim) if d != f)


def _float_type(op, i=0):
    et = elem(op.results[i].type)
    if not et.is_float:
        raise NotImplementedOpError(op.name, f"dtype {et}")
    return et


def _refuse_unsigned_float(op):
    """batch_norm_training and batch_norm_grad have no semantics in f8E8M0FNU: the spec's
    compositions start every batch sum from constant(0) and subtract, from each element, a
    batch mean (training) or the batch sum of grad_output (grad), so some step of every batch
    is zero or negative, which the type (positive powers of two and NaN) cannot hold."""
    et = elem(op.operands[0].type)
    if et.name == "f8E8M0FNU":
        raise InterpreterError(f"{op.name}: no semantics for f8E8M0FNU elements: the spec's composition starts "
                               "each batch sum from constant(0) and subtracts a batch statistic from every element, "
                               "and f8E8M0FNU holds neither zero nor negative values")


@kernel("stablehlo.batch_norm_inference")
def batch_norm_inference(ctx, op, x, scale, offset, mean, variance):
    et = _float_type(op)
    eps = float(op.attributes["epsilon"].value)
    xf = x.astype(np.float64)
    fv = lambda v: _feature_view(op, x, v)
    out = fv(scale) * (xf - fv(mean)) / np.sqrt(fv(variance) + eps) + fv(offset)
    return from_compute(out, et)


@kernel("stablehlo.batch_norm_training")
def batch_norm_training(ctx, op, x, scale, offset):
    _refuse_unsigned_float(op)
    et = _float_type(op)
    eps = float(op.attributes["epsilon"].value)
    axes = _reduce_axes(op, x)
    xf = x.astype(np.float64)
    mean = xf.mean(axis=axes)
    fv = lambda v: _feature_view(op, x, v)
    var = ((xf - fv(mean)) ** 2).mean(axis=axes)
    out = fv(scale) * (xf - fv(mean)) / np.sqrt(fv(var) + eps) + fv(offset)
    return [from_compute(out, et), from_compute(mean, _float_type(op, 1)), from_compute(var, _float_type(op, 2))]


@kernel("stablehlo.batch_norm_grad")
def batch_norm_grad(ctx, op, x, scale, mean, variance, grad_output):
    _refuse_unsigned_float(op)
    et = _float_type(op)
    eps = float(op.attributes["epsilon"].value)
    axes = _reduce_axes(op, x)
    f = op.attributes["feature_index"].value
    n = x.size // x.shape[f] if x.shape[f] else 0
    fv = lambda v: _feature_view(op, x, v)
    xf = x.astype(np.float64)
    g = grad_output.astype(np.float64)
    stddev = np.sqrt(fv(variance) + eps)
    normalized = (xf - fv(mean)) / stddev
    grad_offset = g.sum(axis=axes)
    grad_scale = (g * normalized).sum(axis=axes)
    if n:
        grad_operand = fv(scale) / stddev * (g - fv(grad_offset) / n - normalized * fv(grad_scale) / n)
    else:
        grad_operand = np.zeros_like(xf)
    return [from_compute(grad_operand, et), from_compute(grad_scale, _float_type(op, 1)),
            from_compute(grad_offset, _float_type(op, 2))]


_EINSUM = re.compile(r"^[a-zA-Z]*(,[a-zA-Z]*)?->[a-zA-Z]*\Z")


def _einsum(op, *operands):
    cfg = op.attributes["einsum_config"].value.replace(" ", "")
    if not _EINSUM.match(cfg) or cfg.count(",") != len(operands) - 1:
        raise InterpreterError(f"{op.name}: invalid einsum_config '{cfg}'")
    et = elem(op.results[0].type)
    cd = accumulation_dtype(et)
    out = np.einsum(cfg, *[np.asarray(o).astype(cd) for o in operands])
    if et.is_bool:
        return np.asarray(out != 0)
    return from_compute(np.asarray(out), et) if not et.is_complex else np.asarray(out).astype(et.dtype)


@kernel("stablehlo.einsum")
def einsum(ctx, op, lhs, rhs):
    return _einsum(op, lhs, rhs)


@kernel("stablehlo.unary_einsum")
def unary_einsum(ctx, op, x):
    return _einsum(op, x)
