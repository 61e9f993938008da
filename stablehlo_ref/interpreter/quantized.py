"""Uniform quantization: `uniform_quantize`, `uniform_dequantize`, and every other op on
quantized tensors, evaluated as the spec's `dequantize_op_quantize`: quantized operands are
dequantized to their expressed type, the op's float kernel runs on a shadow of the op whose
quantized types are replaced by their expressed types, and quantized results are quantized
back. Ops that only move or pass values (reshape, transpose, gather, control flow, ...) run on
the storage values directly when all their quantized types agree (up to the quantized axis).

Per-tensor and per-axis `!quant.uniform` types are supported; arithmetic of `quantize` and
`dequantize` is done in the expressed type, as the spec writes it."""
from __future__ import annotations

import numpy as np

from ..errors import NotImplementedOpError
from ..ir.core import Operation, Value
from ..ir.types import QuantizedType, TensorType, TupleType
from .registry import kernel

# Ops that never dequantize: they produce or consume storage values as such, or only pass
# values through (calls, control flow, tuples, checks).
_PASS_THROUGH = {
    "stablehlo.uniform_quantize", "stablehlo.uniform_dequantize", "stablehlo.bitcast_convert",
    "stablehlo.constant", "func.call", "stablehlo.while", "stablehlo.if", "stablehlo.case",
    "stablehlo.optimization_barrier", "stablehlo.tuple", "stablehlo.get_tuple_element",
    "stablehlo.custom_call", "stablehlo.composite", "interpreter.run_parallel",
    "interpreter.probe", "stablehlo.send", "stablehlo.recv", "stablehlo.infeed",
    "stablehlo.outfeed", "stablehlo.get_dimension_size",
}

# Ops that only move elements: on storage values when every quantized type is the same.
_MOVEMENT = {
    "stablehlo.reshape", "stablehlo.transpose", "stablehlo.broadcast_in_dim",
    "stablehlo.broadcast", "stablehlo.slice", "stablehlo.dynamic_slice",
    "stablehlo.dynamic_update_slice", "stablehlo.concatenate", "stablehlo.reverse",
    "stablehlo.gather", "stablehlo.pad", "stablehlo.real_dynamic_slice",
    "stablehlo.dynamic_reshape", "stablehlo.dynamic_broadcast_in_dim", "stablehlo.dynamic_pad",
    "stablehlo.all_gather", "stablehlo.all_to_all", "stablehlo.collective_permute",
    "stablehlo.collective_broadcast", "stablehlo.set_dimension_size",
}


def quant_type(t):
    """The QuantizedType of a tensor type, or None."""
    if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
        return t.element_type
    return None


def _param(values, qt: QuantizedType, shape, dtype):
    """Scales or zero points as an array broadcastable against a tensor of `shape`."""
    arr = np.asarray(values, dtype=dtype)
    if qt.quantized_dimension is None:
        return arr.reshape(())
    d = qt.quantized_dimension
    if d >= len(shape):
        raise NotImplementedOpError("quantization", f"quantized dimension {d} of a rank-{len(shape)} tensor")
    bshape = [1] * len(shape)
    bshape[d] = len(values)
    if shape[d] != len(values) and len(values) != 1:
        raise NotImplementedOpError("quantization", f"{len(values)} scales for dimension {d} of size {shape[d]}")
    return arr.reshape(bshape)


def _storage_bounds(qt: QuantizedType):
    st = qt.storage_type
    if qt.storage_min is not None:
        return qt.storage_min, qt.storage_max
    if st.is_signed:
        return -(1 << (st.bits - 1)), (1 << (st.bits - 1)) - 1
    return 0, (1 << st.bits) - 1


def _check_expressed(qt: QuantizedType) -> None:
    if getattr(qt.expressed_type, "name", None) == "f8E8M0FNU":
        raise NotImplementedOpError(
            "!quant.uniform with expressed type f8E8M0FNU",
            "no semantics: the spec's quantize / dequantize hold the zero point and q - zero_point in the "
            "expressed type, and f8E8M0FNU has neither zero nor negative values")


def dequantize(x: np.ndarray, qt: QuantizedType) -> np.ndarray:
    """Storage values -> expressed values: (x - zero_point) * scale, in the expressed type."""
    _check_expressed(qt)
    edt = qt.expressed_type.dtype
    zp = _param(qt.zero_points, qt, x.shape, np.int64)
    scale = _param(qt.scales, qt, x.shape, np.float64).astype(edt)
    sub = (np.asarray(x).astype(np.int64) - zp).astype(edt)
    with np.errstate(all="ignore"):
        return (sub * scale).astype(edt)


def quantize(x: np.ndarray, qt: QuantizedType) -> np.ndarray:
    """Expressed values -> storage values: round_nearest_even(clamp(x / scale + zero_point))."""
    _check_expressed(qt)
    edt = qt.expressed_type.dtype
    x = np.asarray(x).astype(edt)
    scale = _param(qt.scales, qt, x.shape, np.float64).astype(edt)
    zp = _param(qt.zero_points, qt, x.shape, np.float64).astype(edt)
    lo, hi = _storage_bounds(qt)
    with np.errstate(all="ignore"):
        scaled = (x / scale).astype(edt)
        shifted = (scaled + zp).astype(edt)
        clamped = np.clip(shifted.astype(np.float64), float(lo), float(hi))
        rounded = np.rint(clamped)
        rounded = np.where(np.isnan(rounded), 0.0, rounded)
    return rounded.astype(np.int64).astype(qt.storage_type.dtype)


@kernel("stablehlo.uniform_quantize")
def uniform_quantize(ctx, op, x):
    rqt = quant_type(op.results[0].type)
    if rqt is None:
        raise NotImplementedOpError(op.name, "a result that is not quantized")
    oqt = quant_type(op.operands[0].type)
    if oqt is not None:
        x = dequantize(x, oqt)
    return quantize(x, rqt)


@kernel("stablehlo.uniform_dequantize")
def uniform_dequantize(ctx, op, x):
    oqt = quant_type(op.operands[0].type)
    if oqt is None:
        raise NotImplementedOpError(op.name, "an operand that is not quantized")
    return dequantize(x, oqt)


# ------------------------------------------------------------------ the evaluator hook
def _expressed(t):
    qt = quant_type(t)
    if qt is None:
        if isinstance(t, TupleType):
            return TupleType(tuple(_expressed(x) for x in t.types))
        return t
    return TensorType(t.shape, qt.expressed_type, t.encoding)


def _baseline(qt: QuantizedType):
    return (qt.storage_type, qt.expressed_type, qt.storage_min, qt.storage_max,
            qt.quantized_dimension is None)


def _has_quantized(op) -> bool:
    for v in list(op.operands) + list(op.results):
        if quant_type(v.type) is not None:
            return True
    return False


def plan_for(op):
    """How the evaluator runs `op`: None (the kernel as is) or a callable
    `(ctx, fn, args) -> out` that dequantizes, runs the float kernel and quantizes."""
    if op.name in _PASS_THROUGH or op.name.startswith("check.") or not _has_quantized(op):
        return None
    qts = [quant_type(v.type) for v in list(op.operands) + list(op.results)]
    qts = [q for q in qts if q is not None]
    if op.name in _MOVEMENT:
        first = qts[0]
        same = all(_baseline(q) == _baseline(first) and q.scales == first.scales
                   and q.zero_points == first.zero_points for q in qts)
        if same:
            return None
    if op.regions:
        for region in op.regions:
            for block in region.blocks:
                if any(quant_type(a.type) is not None for a in block.arguments):
                    raise NotImplementedOpError(op.name, "quantized types in a region")
    shadow = Operation.__new__(Operation)
    shadow.name = op.name
    shadow.operands = [Value(_expressed(v.type), v.name, None, i) for i, v in enumerate(op.operands)]
    shadow.results = [Value(_expressed(v.type), v.name, shadow, i) for i, v in enumerate(op.results)]
    shadow.attributes = op.attributes
    shadow.regions = op.regions
    shadow.location = op.location
    shadow.successors = []
    shadow.source = op.source
    in_q = [quant_type(v.type) for v in op.operands]
    out_q = [quant_type(v.type) for v in op.results]

    def run(ctx, fn, args):
        fargs = [dequantize(a, q) if q is not None else a for a, q in zip(args, in_q)]
        out = fn(ctx, shadow, *fargs)
        single = not isinstance(out, list) and not (isinstance(out, tuple) and len(out_q) != 1)
        outs = [out] if single else list(out)
        res = [quantize(o, q) if q is not None else o for o, q in zip(outs, out_q)]
        return res[0] if single else res
    return run
