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
