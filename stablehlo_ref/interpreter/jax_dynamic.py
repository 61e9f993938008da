"""Custom calls JAX writes where a StableHLO op cannot carry a size known only at run time
(shape polymorphism, `jax.export` with symbolic dimensions), and `ApproxTopK`; each runs the
kernel of its static counterpart on a shadow op whose attributes carry the run-time values:

- `@stablehlo.dynamic_reduce_window(inputs..., inits..., window_dimensions, window_strides,
  base_dilations, window_dilations, padding)`: `reduce_window`, with the body the function
  named in `called_computations`; padding is an (N, 2) tensor of (low, high).
- `@stablehlo.dynamic_rng_bit_generator(state, output_shape)`: `rng_bit_generator` with the
  `rng_algorithm` attribute and the shape the second operand holds.
- `@stablehlo.dynamic_top_k(operand, k)`: `chlo.top_k` with `k` from the operand.
- `@ApproxTopK(operand, iota, init_value, init_index)` and
  `@stablehlo.dynamic_approx_top_k(..., k)` (then with the results' shapes as operands named
  by `indices_of_shape_operands`): what XLA computes on CPU and GPU, where
  `jax.lax.approx_max_k`/`approx_min_k` fall back to an exact result: the (value, index)
  pairs sorted along `reduction_dim` by the comparator function (`called_computations`),
  stably, and the first ones kept (as many as the result holds: `top_k` with
  `aggregate_to_topk`, else the reduction output size the result type gives).

Host callbacks (`jax.pure_callback`, `io_callback`, `jax.debug.print`/`callback`) call into the
Python process that exported the program; they raise an error that says so."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from ..ir.attributes import DenseArrayAttr, DenseElementsAttr, EnumAttr, IntegerAttr
from ..ir.core import Operation, Value
from ..ir.types import TensorType, element_type
from .registry import KERNELS

_I64 = element_type("i64")


def _target(op) -> str:
    return op.attributes["call_target_name"].value


def _ints(x, what, op) -> tuple:
    v = np.asarray(x)
    if v.ndim > 1:
        raise InterpreterError(f"custom_call @{_target(op)}: {what} must be a 1-d tensor", op.where())
    return tuple(int(i) for i in v.reshape(-1))


def _called(ctx, op, what: str):
    """The region of the function `called_computations` names (the body of the static op)."""
    cc = op.attributes.get("called_computations")
    refs = getattr(cc, "elements", ()) if cc is not None else ()
    if len(refs) != 1:
        raise InterpreterError(f"custom_call @{_target(op)}: needs one function in called_computations "
                               f"(the {what}), got {len(refs)}", op.where())
    name = getattr(refs[0], "root", None) or str(getattr(refs[0], "value", "")).lstrip("@")
    fn = ctx.functions.get(name)
    if fn is None:
        raise InterpreterError(f"custom_call @{_target(op)}: no function @{name}", op.where())
    return fn.regions[0]


def _shadow(op, name, operand_types, result_types, attributes, regions=()):
    """An op named `name` with these operand and result types, `attributes` and `regions`,
    located where `op` is (so that errors of the static kernel point at the custom call)."""
    sh = Operation.__new__(Operation)
    sh.name = name
    sh.operands = [Value(t, None, None, i) for i, t in enumerate(operand_types)]
    sh.results = [Value(t, None, sh, i) for i, t in enumerate(result_types)]
    sh.attributes = dict(attributes)
    sh.regions = list(regions)
    sh.location = op.location
    sh.successors = []
    sh.source = getattr(op, "source", None)
    sh._cache = None
    return sh


def _as_type(x, t):
    """`t` with the shape of the run-time value `x` (the declared type may leave dims open)."""
    return TensorType(tuple(np.shape(x)), t.element_type) if isinstance(t, TensorType) else t


def _dense_array(values):
    return DenseArrayAttr(_I64, tuple(int(v) for v in values))


def _expect(op, n, args):
    if len(args) != n:
        raise InterpreterError(f"custom_call @{_target(op)} takes {n} operands, got {len(args)}", op.where())


def _dynamic_reduce_window(ctx, op, *args):
    n = len(op.results)
    _expect(op, 2 * n + 5, args)
    xs, inits = list(args[:n]), list(args[n:2 * n])
    rank = np.ndim(xs[0])
    window, strides, base, wdil = (_ints(a, w, op) for a, w in zip(
        args[2 * n:2 * n + 4], ("window_dimensions", "window_strides", "base_dilations", "window_dilations")))
    pad = np.asarray(args[-1]).astype(np.int64).reshape(-1, 2) if np.size(args[-1]) else np.zeros((0, 2), np.int64)
    if any(len(v) != rank for v in (window, strides, base, wdil)) or pad.shape[0] != rank:
        raise InterpreterError(f"custom_call @{_target(op)}: window operands must have {rank} values "
                               f"(the inputs' rank)", op.where())
    region = _called(ctx, op, "reducer")
    attrs = {"window_dimensions": _dense_array(window), "window_strides": _dense_array(strides),
             "base_dilations": _dense_array(base), "window_dilations": _dense_array(wdil),
             "padding": DenseElementsAttr(TensorType((rank, 2), _I64), pad)}
    types = [_as_type(x, v.type) for x, v in zip(args[:2 * n], op.operands)]
    sh = _shadow(op, "stablehlo.reduce_window", types, [r.type for r in op.results], attrs, [region])
    return KERNELS["stablehlo.reduce_window"](ctx, sh, *xs, *inits)


def _dynamic_rng_bit_generator(ctx, op, *args):
    _expect(op, 2, args)
    state, shape = args
    shape = _ints(shape, "output_shape", op)
    if len(op.results) != 2:
        raise InterpreterError(f"custom_call @{_target(op)} has 2 results, got {len(op.results)}", op.where())
    out_t = op.results[1].type
    if len(shape) != len(out_t.shape) or any(d is not None and d != s for d, s in zip(out_t.shape, shape)):
        raise InterpreterError(f"custom_call @{_target(op)}: output_shape {list(shape)} does not match "
                               f"the result type {out_t}", op.where())
    alg = op.attributes.get("rng_algorithm")
    attrs = {"rng_algorithm": alg if alg is not None else EnumAttr("stablehlo", "rng_algorithm", "DEFAULT")}
    sh = _shadow(op, "stablehlo.rng_bit_generator", [_as_type(state, op.operands[0].type)],
                 [op.results[0].type, TensorType(shape, out_t.element_type)], attrs)
    return KERNELS["stablehlo.rng_bit_generator"](ctx, sh, state)


def _dynamic_top_k(ctx, op, *args):
    _expect(op, 2, args)
    x, k = args
    k = int(np.asarray(k).reshape(-1)[0])
    if len(op.results) != 2:
        raise InterpreterError(f"custom_call @{_target(op)} has 2 results, got {len(op.results)}", op.where())
    shape = tuple(np.shape(x)[:-1]) + (k,)
    sh = _shadow(op, "chlo.top_k", [_as_type(x, op.operands[0].type)],
                 [TensorType(shape, r.type.element_type) for r in op.results], {"k": IntegerAttr(k, _I64)})
    return KERNELS["chlo.top_k"](ctx, sh, x)


def _backend_config(op) -> dict:
    d = op.attributes.get("mhlo.backend_config")
    return {k: getattr(v, "value", v) for k, v in (getattr(d, "entries", ()) or ())}


def _shape_operands(op, args):
    """(the operands, the result shapes) of a custom call JAX built with `result_shapes`: the
    operands at `indices_of_shape_operands` hold the results' run-time shapes."""
    idx = op.attributes.get("indices_of_shape_operands")
    if idx is None:
        return list(args), None
    pos = {int(i) for i in np.asarray(idx.array).reshape(-1)}
    return ([a for i, a in enumerate(args) if i not in pos],
            [_ints(a, "a result shape", op) for i, a in enumerate(args) if i in pos])


def _approx_top_k(ctx, op, *args):
    dynamic = _target(op) == "stablehlo.dynamic_approx_top_k"
    args, shapes = _shape_operands(op, args)
    _expect(op, 5 if dynamic else 4, args)
    x, iota = args[0], args[1]
    cfg = _backend_config(op)
    rank = np.ndim(x)
    if rank == 0:
        raise InterpreterError(f"custom_call @{_target(op)}: operand must have rank >= 1", op.where())
    dim = int(cfg.get("reduction_dim", rank - 1))
    if dim < 0:
        dim += rank
    if not 0 <= dim < rank:
        raise InterpreterError(f"custom_call @{_target(op)}: reduction_dim {dim} out of range for rank {rank}",
                               op.where())
    if len(op.results) != 2:
        raise InterpreterError(f"custom_call @{_target(op)} has 2 results, got {len(op.results)}", op.where())
    if dynamic:
        keep = int(np.asarray(args[4]).reshape(-1)[0])
    elif cfg.get("aggregate_to_topk", True) and "top_k" in cfg:
        keep = int(cfg["top_k"])
    else:
        keep = shapes[0][dim] if shapes else op.results[0].type.shape[dim]
        if keep is None:
            raise InterpreterError(f"custom_call @{_target(op)}: the result leaves the reduction "
                                   "dimension open and no top_k is given", op.where())
    n = np.shape(x)[dim]
    if not 0 <= keep <= n:
        raise InterpreterError(f"custom_call @{_target(op)}: keeps {keep} of the {n} elements of "
                               f"dimension {dim}", op.where())
    region = _called(ctx, op, "comparator")
    types = [_as_type(x, op.operands[0].type), _as_type(iota, op.operands[1].type)]
    sh = _shadow(op, "stablehlo.sort", types, types,
                 {"dimension": IntegerAttr(dim, _I64), "is_stable": _true()}, [region])
    values, indices = KERNELS["stablehlo.sort"](ctx, sh, np.asarray(x), np.asarray(iota))
    sl = tuple(slice(0, keep) if d == dim else slice(None) for d in range(rank))
    return [values[sl], indices[sl]]


def _true():
    from ..ir.attributes import BoolAttr
    return BoolAttr(True)


def _host_callback(ctx, op, *args):
    raise NotImplementedOpError(
        "stablehlo.custom_call",
        f"target @{_target(op)}: the program calls back into the Python process that exported it "
        "(jax.pure_callback, io_callback or jax.debug.print/callback); that Python code is not part "
        "of the program, so it cannot run outside that process", op.where())


HOST_CALLBACKS = ("xla_python_cpu_callback", "xla_python_gpu_callback", "xla_ffi_python_cpu_callback",
                  "xla_ffi_python_gpu_callback", "xla_ffi_partitioned_python_cpu_callback",
                  "xla_ffi_partitioned_python_gpu_callback", "xla_buffer_python_cpu_callback",
                  "xla_buffer_python_gpu_callback")

DYNAMIC_CUSTOM_CALLS = {
    "stablehlo.dynamic_reduce_window": _dynamic_reduce_window,
    "stablehlo.dynamic_rng_bit_generator": _dynamic_rng_bit_generator,
    "stablehlo.dynamic_top_k": _dynamic_top_k,
    "stablehlo.dynamic_approx_top_k": _approx_top_k,
    "ApproxTopK": _approx_top_k,
    **{name: _host_callback for name in HOST_CALLBACKS},
}
