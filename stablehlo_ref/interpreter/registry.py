"""The interpreter's registries and runtime vocabulary, a leaf every kernel module may import:
`KERNELS` (`@kernel("stablehlo.add")`), `HARNESS_OPS` (the `interpreter` test dialect:
`@harness_op("interpreter.run_parallel")`), `SPECIALIZERS` (a kernel made for one op instance
when a block is compiled: `@specializer("stablehlo.dot_general")`), the ops that end a block (`TERMINATORS`: the
spec's `terminator` trait plus the foreign dialects' `scf.yield`), the runtime token and the
per-op cache kernels keep what they derive from an op in."""
from __future__ import annotations

from typing import Callable, Dict

from .. import spec as _spec

KERNELS: Dict[str, Callable] = {}


def kernel(*names: str):
    def deco(fn):
        for n in names:
            if n in KERNELS:
                raise RuntimeError(f"two kernels registered for {n}")
            KERNELS[n] = fn
        return fn
    return deco


# op name -> specializer(op, known) returning a kernel for that one op instance (attributes
# decoded, paths chosen, shapes checked once; `known[i]` is operand i's value where it is known
# when compiling, else None), or None for the general kernel; compiled blocks use it
SPECIALIZERS: Dict[str, Callable] = {}


def specializer(name: str):
    def deco(fn):
        if name in SPECIALIZERS:
            raise RuntimeError(f"two specializers registered for {name}")
        SPECIALIZERS[name] = fn
        return fn
    return deco


HARNESS_OPS: Dict[str, Callable] = {}


def harness_op(name: str):
    def deco(fn):
        HARNESS_OPS[name] = fn
        return fn
    return deco


# scf.yield ends the body of scf.for (foreign.py), an op outside the spec
TERMINATORS = _spec.terminators() | {"scf.yield"}


class Token:
    """The runtime value of `!stablehlo.token`."""

    def __repr__(self):
        return "<token>"


TOKEN = Token()


_MISSING = object()


def op_cache(op) -> dict:
    """A dict on `op` for what kernels derive from it once (decoded attributes, recognized
    bodies), kept for the life of the op; ops made without `__init__` get a fresh one."""
    c = getattr(op, "_cache", _MISSING)
    if c is _MISSING:
        return {}
    if c is None:
        c = op._cache = {}
    return c


def args(*positional, **keywords):
    """The arguments a table kernel hands its helper after the operands (see register_table)."""
    return positional, keywords


def register_table(table: Dict[str, tuple], helper: Callable, arity: int) -> None:
    """Register one kernel per entry of `table` (op name -> `args(...)`): each calls
    `helper(op, *operands, *positional, **keywords)` on its `arity` operands."""
    for name, (positional, keywords) in table.items():
        if arity == 1:
            def run(ctx, op, x, _p=positional, _k=keywords):
                return helper(op, x, *_p, **_k)
        elif arity == 2:
            def run(ctx, op, a, b, _p=positional, _k=keywords):
                return helper(op, a, b, *_p, **_k)
        else:
            raise ValueError(f"table kernels take 1 or 2 operands, not {arity}")
        run.__name__ = run.__qualname__ = name
        kernel(name)(run)


def clamped_window(starts, bounds) -> tuple:
    """The slices of a dynamic_slice / dynamic_update_slice window: each start (a 0-d value)
    clamped into [0, hi], paired with its size, for `bounds` = ((size, hi), ...)."""
    idx = []
    for s, (n, hi) in zip(starts, bounds):
        s = int(s)
        if s < 0:
            s = 0
        if s > hi:
            s = hi
        idx.append(slice(s, s + n))
    return tuple(idx)

