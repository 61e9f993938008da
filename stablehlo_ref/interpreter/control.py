"""Control flow and calls: func.call, while, if, case, custom_call dispatch."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from .check import CUSTOM_CALL_CHECKS
from .jax_loops import pivot_loop
from .jax_threefry import threefry_loop
from .plan import _COMPILE_AFTER_RUNS
from .registry import harness_op, kernel
from .scalar_loops import scalar_loop


@kernel("func.call")
def call(ctx, op, *args):
    return ctx.call(op.attributes["callee"].root, list(args))


# the iteration after which both blocks of a loop have been compiled (see plan.py)
_FUSE_AT = _COMPILE_AFTER_RUNS + 1


@kernel("stablehlo.while")
def while_(ctx, op, *args):
    # a loop JAX writes whose meaning is known (jax_loops.py, jax_threefry.py)
    known = pivot_loop(ctx, op) or threefry_loop(ctx, op)
    if known is not None:
        return known(ctx, op, args)
    # a loop of rank-0 values of the admitted ops and types runs on numpy scalars
    fast = scalar_loop(ctx, op, args)
    if fast is not None:
        return fast
    cond, body = op.regions
    c = getattr(op, "_cache", None)
    if c is not None and "fused_while" in c:
        # a loop entered before (an inner loop, on every iteration of its outer one): where
        # its blocks are compiled by now, it runs fused from its first iteration
        loop = ctx.fused_loop(op, cond, body)
        if loop is not None:
            return loop(list(args))
    run_cond = ctx.region_runner(cond)
    run_body = ctx.region_runner(body, take=True)    # (`vals` is replaced by its results)
    max_steps = ctx.max_steps
    deadline = ctx.deadline
    vals = list(args)
    k = 0
    while True:
        c = run_cond(vals)[0]
        if not (bool(c) if c.__class__ is np.bool_ else bool(np.asarray(c).reshape(()))):
            return vals
        n = ctx.steps = ctx.steps + 1
        if n > max_steps or deadline is not None:
            ctx.tick(op, counted=True)
        if k == 0:
            # a loop whose body runs is likely to run it again: the body is compiled for its
            # first run and the condition for its second (a block elsewhere waits for its
            # _COMPILE_AFTER_RUNS runs), so the loop runs fused from its second iteration
            ctx.compile_soon(cond, body)
        vals = run_body(vals)
        k += 1
        if k <= 2 or k == _FUSE_AT:
            # once both blocks are compiled, the rest of the loop runs as one
            loop = ctx.fused_loop(op, cond, body)
            if loop is not None:
                return loop(vals)


@kernel("stablehlo.if")
def if_(ctx, op, pred):
    p = bool(pred) if pred.__class__ is np.bool_ else bool(np.asarray(pred).reshape(()))
    # (`run_region` without its runner closure: the branch's plan on the frame it runs in)
    frame, plan = ctx.region_frame_plan(op.regions[0] if p else op.regions[1])
    return plan.execute(ctx, frame, [])


@kernel("stablehlo.case")
def case(ctx, op, index):
    # (a numpy integer scalar, as a loop passes a rank-0 index, converts directly)
    i = int(index) if isinstance(index, np.integer) else int(np.asarray(index).reshape(()))
    n = len(op.regions)
    if i < 0 or i >= n:
        i = n - 1
    frame, plan = ctx.region_frame_plan(op.regions[i])
    return plan.execute(ctx, frame, [])


_JAX_CUSTOM_CALLS = None       # jax_calls.JAX_CUSTOM_CALLS, imported on first use


@kernel("stablehlo.custom_call")
def custom_call(ctx, op, *args):
    global _JAX_CUSTOM_CALLS
    target = op.attributes["call_target_name"].value
    fn = CUSTOM_CALL_CHECKS.get(target)
    if fn is None:
        if _JAX_CUSTOM_CALLS is None:
            from .jax_calls import JAX_CUSTOM_CALLS
            _JAX_CUSTOM_CALLS = JAX_CUSTOM_CALLS
        fn = _JAX_CUSTOM_CALLS.get(target)
    if fn is not None:
        out = fn(ctx, op, *args)
        return out if out is not None else []
    if ctx.custom_call_handler is not None:
        return ctx.custom_call_handler(target, op, args)
    raise NotImplementedOpError("stablehlo.custom_call", f"target @{target}")


@kernel("stablehlo.composite")
def composite(ctx, op, *args):
    # the composite's semantics are those of its decomposition function
    dec = op.attributes.get("decomposition")
    if dec is None:
        raise InterpreterError("stablehlo.composite has no `decomposition` function")
    name = dec.root if hasattr(dec, "root") else str(dec.value).lstrip("@")
    return ctx.call(name, list(args))


# ------------------------------------------------------------------ probes and printing
_PRINT_LOCK = __import__("threading").Lock()


def _probe_store(ctx) -> dict:
    store = getattr(ctx, "probe_store", None)
    if store is None:
        store = ctx.probe_store = {}
    return store


def _probe(ctx, op, x):
    """`interpreter.probe`: records the value under its probe_id (each run of the op appends
    one iteration); with `ctx.probe_dir` set, also writes `<dir>/<id>_<n>.npy` (n from 1)
    and a line `probe_id,type,path` of `<dir>/index.csv`, as upstream's --probe-output-dir."""
    import os
    import re
    pid = op.attributes["probe_id"].value
    arr = np.array(x, copy=True)
    with _PRINT_LOCK:
        runs = _probe_store(ctx).setdefault(pid, [])
        runs.append(arr)
        n = len(runs)
    out_dir = getattr(ctx, "probe_dir", None)
    if out_dir:
        name = re.sub(r"[^A-Za-z0-9_.-]", "_", pid)
        path = os.path.join(out_dir, f"{name}_{n}.npy")
        try:
            np.save(path, arr)
            with _PRINT_LOCK, open(os.path.join(out_dir, "index.csv"), "a") as f:
                f.write(f"{pid},{op.results[0].type},{path}\n")
        except OSError as e:
            raise InterpreterError(f"interpreter.probe: cannot write {path}: {e}") from None
    return x


def _print(ctx, op, x):
    """`interpreter.print`: the value on stdout, one whole block per call (threads of
    run_parallel do not interleave)."""
    t = op.operands[0].type
    body = np.array2string(np.asarray(x), separator=", ", threshold=1 << 30)
    with _PRINT_LOCK:
        print(f"%{op.operands[0].name or '0'} = {t} {{\n  {body}\n}}", flush=True)
    return []


@kernel("check.expect_serialized_eq")
def expect_serialized_eq(ctx, op, expected):
    from ..errors import CheckFailure
    from .check import expect_eq
    from .numerics import elem
    pid = op.attributes["probe_id"].value
    it = op.attributes.get("iteration")
    it = int(it.value) if it is not None else 0
    runs = _probe_store(ctx).get(pid)
    if runs is None or it >= len(runs):
        raise CheckFailure(f"check.expect_serialized_eq: no probe '{pid}' was recorded at "
                           f"iteration {it} ({0 if runs is None else len(runs)} recorded)")
    expect_eq(runs[it], expected, elem(op.operands[0].type), "check.expect_serialized_eq")
    return []


harness_op("interpreter.probe")(_probe)
harness_op("interpreter.print")(_print)


# ------------------------------------------------------------------ scan
def _flag(op, name) -> bool:
    a = op.attributes.get(name)
    return bool(getattr(a, "value", False)) if a is not None else False


def _segments(op, attr, total):
    """(first count, second count) of an op with two variadic groups, from
    `operandSegmentSizes`/`resultSegmentSizes`; without it, an even split."""
    a = op.attributes.get(attr)
    if a is not None:
        vals = [int(v) for v in getattr(a, "values", ())]
        if len(vals) == 2 and sum(vals) == total:
            return vals[0], vals[1]
        raise InterpreterError(f"{op.name}: `{attr}` must hold two sizes that add up to {total}")
    return total // 2, total - total // 2


@kernel("chlo.scan")
def scan(ctx, op, *args):
    """XLA's scan: the body maps (slices of the inputs at position i along `dimension`,
    carries) to (output slices at i, new carries); the outputs are the slices stacked along
    `dimension`, the carries those after the last step. `is_reverse` walks from the end."""
    from .numerics import elem
    n_in, n_init = _segments(op, "operandSegmentSizes", len(args))
    n_out, n_carry = _segments(op, "resultSegmentSizes", len(op.results))
    if n_carry != n_init:
        raise InterpreterError(f"chlo.scan: {n_init} inits but {n_carry} carry results")
    inputs = [np.asarray(a) for a in args[:n_in]]
    carries = list(args[n_in:])
    dim = int(op.attributes["dimension"].value)
    for i, a in enumerate(inputs):
        if not 0 <= dim < a.ndim:
            raise InterpreterError(f"chlo.scan: dimension {dim} is out of bounds for input "
                                   f"#{i} of rank {a.ndim}")
    sizes = {a.shape[dim] for a in inputs}
    if len(sizes) > 1:
        raise InterpreterError(f"chlo.scan: the inputs differ in size along dimension {dim}: "
                               f"{sorted(sizes)}")
    if sizes:
        length = sizes.pop()
    elif "scan_dim_size" in op.attributes:
        length = int(op.attributes["scan_dim_size"].value)
    else:
        shapes = [r.type.shape for r in op.results[:n_out] if getattr(r.type, "shape", None)]
        if not shapes or shapes[0][dim] is None:
            raise InterpreterError("chlo.scan: without inputs the scan length needs "
                                   "`scan_dim_size` or a static output shape")
        length = shapes[0][dim]
    body = op.regions[0]
    nargs = len(body.blocks[0].arguments)
    if nargs != n_in + n_init:
        raise InterpreterError(f"chlo.scan: the body takes {nargs} arguments, expected "
                               f"{n_in} input slices and {n_init} carries")
    # views of each input with the scanned dimension first, so a step's slice is `x[i]`
    moved = [np.moveaxis(a, dim, 0) for a in inputs]
    outs = [[None] * length for _ in range(n_out)]
    order = range(length - 1, -1, -1) if _flag(op, "is_reverse") else range(length)
    run_body = ctx.region_runner(body, take=True)    # (`vals` is replaced by its results)
    for i in order:
        ctx.tick(op)
        res = run_body([m[i] for m in moved] + carries)
        if len(res) != n_out + n_carry:
            raise InterpreterError(f"chlo.scan: the body returns {len(res)} values, expected "
                                   f"{n_out} outputs and {n_carry} carries")
        for k in range(n_out):
            outs[k][i] = res[k]
        carries = list(res[n_out:])
    results = []
    for k, r in enumerate(op.results[:n_out]):
        dt = elem(r.type).dtype
        if length:
            results.append(np.stack([np.asarray(s) for s in outs[k]], axis=dim).astype(dt, copy=False))
        else:
            shape = tuple(0 if d is None else d for d in r.type.shape)
            results.append(np.zeros(shape, dtype=dt))
    for c, r in zip(carries, op.results[n_out:]):
        results.append(np.asarray(c).astype(elem(r.type).dtype, copy=False))
    return results


# ------------------------------------------------------------------ async_start / async_done
class Future:
    """The runtime value of `!stablehlo.future<...>`: the results of the computation that
    `async_start` ran (this interpreter runs it at once, which the spec allows)."""

    __slots__ = ("values",)

    def __init__(self, values):
        self.values = list(values)

    def __repr__(self):
        return f"<future of {len(self.values)} value(s)>"


@kernel("stablehlo.async_start")
def async_start(ctx, op, *operands):
    body = op.regions[0]
    block = body.blocks[0]
    if block.arguments and len(block.arguments) != len(operands):
        raise InterpreterError(f"stablehlo.async_start: the body takes {len(block.arguments)} "
                               f"arguments, the op has {len(operands)} operands")
    # the body names the operands either as its block arguments or (as upstream's examples
    # write it) directly as the values of the enclosing scope
    return Future(ctx.run_region(body, list(operands) if block.arguments else []))


@kernel("stablehlo.async_done")
def async_done(ctx, op, future):
    if not isinstance(future, Future):
        raise InterpreterError("stablehlo.async_done: the operand is not a future made by "
                               "stablehlo.async_start")
    if len(future.values) != len(op.results):
        raise InterpreterError(f"stablehlo.async_done: the future holds {len(future.values)} "
                               f"values, the op has {len(op.results)} results")
    return list(future.values)
