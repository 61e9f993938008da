"""Control flow and calls: func.call, while, if, case, custom_call dispatch."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from .registry import kernel


@kernel("func.call")
def call(ctx, op, *args):
    return ctx.call(op.attributes["callee"].root, list(args))


@kernel("stablehlo.while")
def while_(ctx, op, *args):
    cond, body = op.regions
    vals = list(args)
    while True:
        c = ctx.run_region(cond, vals)[0]
        if not bool(np.asarray(c).reshape(())):
            return vals
        vals = ctx.run_region(body, vals)


@kernel("stablehlo.if")
def if_(ctx, op, pred):
    branch = op.regions[0] if bool(np.asarray(pred).reshape(())) else op.regions[1]
    return ctx.run_region(branch, [])


@kernel("stablehlo.case")
def case(ctx, op, index):
    i = int(np.asarray(index).reshape(()))
    n = len(op.regions)
    if i < 0 or i >= n:
        i = n - 1
    return ctx.run_region(op.regions[i], [])


@kernel("stablehlo.custom_call")
def custom_call(ctx, op, *args):
    target = op.attributes["call_target_name"].value
    from .check import CUSTOM_CALL_CHECKS
    fn = CUSTOM_CALL_CHECKS.get(target)
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


def _register_harness_ops():
    from .collective import HARNESS_OPS
    HARNESS_OPS.setdefault("interpreter.probe", _probe)
    HARNESS_OPS.setdefault("interpreter.print", _print)


_register_harness_ops()
