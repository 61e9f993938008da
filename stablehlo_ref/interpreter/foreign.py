"""Kernels for the few ops of other MLIR dialects that the text parser reads beside StableHLO
(hand-written programs and upstream's mixed-dialect tests use them): `arith.constant` and
arith's binary arithmetic, `tensor.cast` / `tensor.extract` / `tensor.insert`, and `scf.for`
with its `scf.yield`. Semantics are MLIR's: integer arithmetic wraps, `divsi`/`remsi` round
toward zero, `divui`/`remui` read their operands as unsigned; `index` is 64-bit."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError
from ..ir.attributes import BoolAttr, DenseElementsAttr, FloatAttr, IntegerAttr
from .numerics import elem, from_compute, to_compute
from .registry import kernel


def _et(op, i=0):
    return elem(op.results[i].type)


@kernel("arith.constant")
def arith_constant(ctx, op):
    v = op.attributes.get("value")
    et = _et(op)
    if isinstance(v, DenseElementsAttr):
        return np.array(v.array)
    if isinstance(v, BoolAttr):
        return np.asarray(bool(v.value))
    if isinstance(v, (IntegerAttr, FloatAttr)):
        return from_compute(np.asarray(v.value), et)
    raise InterpreterError(f"arith.constant: unsupported value {v!r}", op.where())


def _float_op(fn):
    def k(ctx, op, a, b):
        et = _et(op)
        with np.errstate(all="ignore"):
            return from_compute(fn(to_compute(np.asarray(a), et), to_compute(np.asarray(b), et)), et)
    return k


def _int_op(fn, unsigned=False):
    def k(ctx, op, a, b):
        et = _et(op)
        a = np.asarray(a).astype(np.int64)
        b = np.asarray(b).astype(np.int64)
        if unsigned and et.bits < 64:
            mask = (1 << et.bits) - 1
            a, b = a & mask, b & mask
        with np.errstate(all="ignore"):
            return from_compute(fn(a, b), et)
    return k


def _div_trunc(a, b):
    if np.any(b == 0):
        raise InterpreterError("arith: integer division by zero")
    q = np.abs(a) // np.abs(b)
    return np.where((a < 0) != (b < 0), -q, q)


def _rem_trunc(a, b):
    return a - _div_trunc(a, b) * b


def _div_unsigned(a, b):
    if np.any(b == 0):
        raise InterpreterError("arith: integer division by zero")
    return a // b


def _rem_unsigned(a, b):
    if np.any(b == 0):
        raise InterpreterError("arith: integer division by zero")
    return a % b


_BINARY = {
    "addf": _float_op(np.add), "subf": _float_op(np.subtract), "mulf": _float_op(np.multiply),
    "divf": _float_op(np.divide), "maximumf": _float_op(np.maximum), "minimumf": _float_op(np.minimum),
    "addi": _int_op(np.add), "subi": _int_op(np.subtract), "muli": _int_op(np.multiply),
    "divsi": _int_op(_div_trunc), "remsi": _int_op(_rem_trunc),
    "divui": _int_op(_div_unsigned, unsigned=True), "remui": _int_op(_rem_unsigned, unsigned=True),
    "andi": _int_op(np.bitwise_and), "ori": _int_op(np.bitwise_or), "xori": _int_op(np.bitwise_xor),
    "maxsi": _int_op(np.maximum), "minsi": _int_op(np.minimum),
}
for _name, _fn in _BINARY.items():
    kernel(f"arith.{_name}")(_fn)


@kernel("tensor.cast")
def tensor_cast(ctx, op, x):
    return x


def _index(op, idx, shape):
    at = tuple(int(np.asarray(i).reshape(())) for i in idx)
    if len(at) != len(shape) or any(not 0 <= i < n for i, n in zip(at, shape)):
        raise InterpreterError(f"{op.name}: index {list(at)} out of bounds for shape {list(shape)}", op.where())
    return at


@kernel("tensor.extract")
def tensor_extract(ctx, op, t, *idx):
    t = np.asarray(t)
    return np.array(t[_index(op, idx, t.shape)])


@kernel("tensor.insert")
def tensor_insert(ctx, op, scalar, dest, *idx):
    out = np.array(dest)
    out[_index(op, idx, out.shape)] = np.asarray(scalar)
    return out


@kernel("scf.for")
def scf_for(ctx, op, lb, ub, step, *inits):
    lo, hi, st = (int(np.asarray(v).reshape(())) for v in (lb, ub, step))
    if st <= 0:
        raise InterpreterError(f"scf.for: step must be positive, got {st}", op.where())
    body = op.regions[0]
    iv_dtype = elem(body.blocks[0].arguments[0].type).dtype
    vals = list(inits)
    run_body = ctx.region_runner(body)
    for i in range(lo, hi, st):
        ctx.tick(op)
        vals = run_body([np.asarray(i, dtype=iv_dtype)] + vals)
    return vals
