"""The evaluator: runs functions, calls, blocks and regions of a module on numpy arrays.

Runtime values are numpy arrays whose dtype is the storage dtype of the element type
(`numerics`), Python tuples for tuples, and `Token` for tokens."""
from __future__ import annotations

import sys
from typing import List, Sequence

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError, StableHLOError
from ..ir.attributes import describe_location
from ..ir.core import Module, Operation
from ..ir.types import TensorType, TokenType, TupleType
from .registry import KERNELS


class Token:
    """The runtime value of `!stablehlo.token`."""

    def __repr__(self):
        return "<token>"


TOKEN = Token()


_UNPLANNED = object()


class _Return(Exception):
    pass


class _Scope(dict):
    """The values visible in a block: its own, then (on a miss) those of the enclosing
    scope, so that regions of `if`, `case`, `while`, `reduce`, ... may use values defined
    outside them. Function bodies start from an empty parent."""

    __slots__ = ("parent",)

    def __init__(self, parent=None):
        super().__init__()
        self.parent = parent

    def __missing__(self, key):
        if self.parent is None:
            raise KeyError(key)
        return self.parent[key]


def _import_kernels():
    from . import elementwise, movement, reduction, control, linalg, check, chlo, conv  # noqa: F401
    from . import indexing, sorting, windows  # noqa: F401
    from . import quantized, collective, dynamic  # noqa: F401


def _harness_op(name):
    """Ops of the `interpreter` test dialect (run_parallel, probe, print), or None."""
    from .collective import HARNESS_OPS
    return HARNESS_OPS.get(name)


class Interpreter:
    def __init__(self, module: Module, trace=None, custom_call_handler=None):
        _import_kernels()
        self.module = module
        self.functions = module.functions
        self.trace = trace           # a writable stream, or None
        self.depth = 0
        self.check_failures: List[str] = []
        self.custom_call_handler = custom_call_handler
        self.collect_check_failures = False
        self._scope = None           # the scope of the block whose op is running now
        self._quant_plans = {}       # op -> how to run it on quantized values (None: as is)

    # ------------------------------------------------------------ public
    def call(self, name: str, args: Sequence) -> list:
        func = self.functions.get(name)
        if func is None:
            raise InterpreterError(f"call to unknown function @{name}")
        if not func.regions or not func.regions[0].blocks:
            raise InterpreterError(f"function @{name} has no body (a declaration)")
        ft = func.attributes["function_type"].type
        if len(args) != len(ft.inputs):
            raise InterpreterError(f"@{name} takes {len(ft.inputs)} arguments, got {len(args)}")
        self.depth += 1
        if self.depth > 2000:
            raise InterpreterError(f"call depth exceeded 2000 in @{name} (unbounded recursion?)")
        try:
            return self.run_region(func.regions[0], list(args), parent=None)
        finally:
            self.depth -= 1

    def run_region(self, region, args: list, parent=_Scope) -> list:
        """Run a single-block region with `args` bound to its entry block arguments; returns
        the operands of its terminator. The region sees the values of the scope of the op
        that runs it (`parent`, by default the scope running now; None for a fresh one)."""
        block = region.blocks[0]
        if len(region.blocks) != 1:
            raise NotImplementedOpError("regions with several blocks")
        env = _Scope(self._scope if parent is _Scope else parent)
        for v, a in zip(block.arguments, args):
            env[v] = a
        return self.run_block(block, env)

    def run_block(self, block, env: dict) -> list:
        prev = self._scope
        self._scope = env
        try:
            return self._run_ops(block, env)
        finally:
            self._scope = prev

    def _run_ops(self, block, env: dict) -> list:
        trace = self.trace
        for op in block.operations:
            name = op.name
            if name in ("stablehlo.return", "func.return", "chlo.return", "stablehlo.yield"):
                return [env[v] for v in op.operands]
            fn = KERNELS.get(name) or _harness_op(name)
            if fn is None:
                raise NotImplementedOpError(name, location=op.where())
            try:
                args = [env[v] for v in op.operands]
            except KeyError:
                raise InterpreterError(f"{name}: operand used before it is defined",
                                       op.where()) from None
            try:
                plan = self._quant_plans.get(op, _UNPLANNED)
                if plan is _UNPLANNED:
                    from .quantized import plan_for
                    plan = self._quant_plans[op] = plan_for(op)
                out = fn(self, op, *args) if plan is None else plan(self, fn, args)
            except StableHLOError as e:
                if e.location is None:
                    e.location = op.where()
                raise
            except (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError, MemoryError) as e:
                raise InterpreterError(f"{name}: {e}", op.where()) from None
            results = op.results
            if len(results) == 1:
                # a kernel returns one value or a list of results; a Python tuple is a
                # tuple value only when the result has tuple type
                if isinstance(out, list) or (isinstance(out, tuple)
                                             and not isinstance(results[0].type, TupleType)):
                    out = out[0]
                env[results[0]] = out
            elif results:
                for r, o in zip(results, out):
                    env[r] = o
            if trace is not None:
                self._trace(op, [env[r] for r in results])
        raise InterpreterError("block has no terminator")

    def _trace(self, op, values):
        loc = describe_location(op.location) or "-"
        parts = []
        for v in values:
            if isinstance(v, np.ndarray):
                parts.append(f"{v.dtype}{list(v.shape)} {np.array2string(v.reshape(-1)[:6], threshold=6)[:80]}")
            else:
                parts.append(repr(v))
        print(f"{loc}: {op.name} -> {'; '.join(parts)}", file=self.trace)


def run(module: Module, *arrays, entry: str = "main", trace=None) -> tuple:
    """Run function `entry` of `module` on numpy arrays; returns a tuple of numpy arrays."""
    interp = Interpreter(module, trace=trace)
    func = module.function(entry)
    ft = func.attributes["function_type"].type
    args = [coerce_argument(a, t, i) for i, (a, t) in enumerate(zip(arrays, ft.inputs))]
    if len(arrays) != len(ft.inputs):
        raise InterpreterError(f"@{entry} takes {len(ft.inputs)} arguments, got {len(arrays)}")
    return tuple(interp.call(entry, args))


def coerce_argument(a, t, index: int):
    """Check a user-supplied argument against the parameter type and convert its dtype."""
    from .numerics import elem
    if isinstance(t, TokenType):
        return TOKEN
    if isinstance(t, TupleType):
        if not isinstance(a, (tuple, list)) or len(a) != len(t.types):
            raise InterpreterError(f"argument #{index}: expected a tuple of {len(t.types)} values")
        return tuple(coerce_argument(x, tt, index) for x, tt in zip(a, t.types))
    if not isinstance(t, TensorType):
        raise InterpreterError(f"argument #{index}: unsupported parameter type {t}")
    arr = np.asarray(a)
    et = elem(t)
    if len(t.shape) != arr.ndim or any(d is not None and d != s for d, s in zip(t.shape, arr.shape)):
        raise InterpreterError(f"argument #{index}: shape {tuple(arr.shape)} does not match {t}")
    if arr.dtype != et.dtype:
        ok_kinds = {"bool": "b", "signed": "iub", "unsigned": "iub", "float": "fiub", "complex": "fcib"}
        if arr.dtype.kind not in ok_kinds.get(et.kind, "") and arr.dtype.kind != "V":
            if not (et.is_float and arr.dtype.kind == "V"):
                raise InterpreterError(f"argument #{index}: dtype {arr.dtype} cannot be passed as {t}")
        arr = arr.astype(et.dtype)
    return arr
