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


_KERNELS_IMPORTED = []


def _import_kernels():
    if _KERNELS_IMPORTED:
        return
    from . import elementwise, movement, reduction, control, linalg, check, chlo, conv  # noqa: F401
    from . import indexing, sorting, windows  # noqa: F401
    from . import quantized, collective, dynamic  # noqa: F401
    from . import random  # noqa: F401
    from . import nn  # noqa: F401
    _KERNELS_IMPORTED.append(True)


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
        if self.depth == 0:
            # kernels compute with numpy's floating-point warnings off (overflow to inf, NaN
            # from invalid operations are results, not errors); set once per top-level call
            saved = np.seterr(all="ignore")
            self.depth = 1
            try:
                return self.run_region(func.regions[0], list(args), parent=None)
            finally:
                self.depth = 0
                np.seterr(**saved)
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
        try:
            plan = block._cache
        except AttributeError:
            plan = None
        if plan is None or plan[0] != len(block.operations):
            plan = _plan_block(block)
        _, steps, terminator = plan
        trace = self.trace
        for op, fn, qplan, operands, results, mode in steps:
            try:
                args = [env[v] for v in operands]
            except KeyError:
                raise InterpreterError(f"{op.name}: operand used before it is defined",
                                       op.where()) from None
            try:
                out = fn(self, op, *args) if qplan is None else qplan(self, fn, args)
            except StableHLOError as e:
                if e.location is None:
                    e.location = op.where()
                raise
            except (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError, MemoryError) as e:
                raise InterpreterError(f"{op.name}: {e}", op.where()) from None
            if mode == 1:
                # a kernel returns one value or a list of results; a Python tuple is a
                # tuple value only when the result has tuple type
                if out.__class__ is list or out.__class__ is tuple:
                    out = out[0]
                env[results[0]] = out
            elif mode == 2:
                if out.__class__ is list:
                    out = out[0]
                env[results[0]] = out
            elif mode == 3:
                for r, o in zip(results, out):
                    env[r] = o
            if trace is not None:
                self._trace(op, [env[r] for r in results])
        if terminator is None:
            raise InterpreterError("block has no terminator")
        return [env[v] for v in terminator]

    def _trace(self, op, values):
        loc = describe_location(op.location) or "-"
        parts = []
        for v in values:
            if isinstance(v, np.ndarray):
                parts.append(f"{v.dtype}{list(v.shape)} {np.array2string(v.reshape(-1)[:6], threshold=6)[:80]}")
            else:
                parts.append(repr(v))
        print(f"{loc}: {op.name} -> {'; '.join(parts)}", file=self.trace)


_TERMINATORS = frozenset(("stablehlo.return", "func.return", "chlo.return", "stablehlo.yield"))


def op_cache(op) -> dict:
    """A dict on `op` for what kernels derive from it once (decoded attributes, recognized
    bodies), kept for the life of the op; ops made without `__init__` get a fresh one."""
    try:
        c = op._cache
    except AttributeError:
        return {}
    if c is None:
        c = op._cache = {}
    return c


def _not_implemented(name):
    def raise_(ctx, op, *args):
        raise NotImplementedOpError(name)
    return raise_


def _raiser(exc):
    def raise_(ctx, fn, args):
        raise exc
    return raise_


def _plan_block(block):
    """The evaluator's plan of a block, cached on it: per op up to the first terminator, the
    kernel, the quantization plan, the operands, the results and how to store them
    (0: no result, 1: one non-tuple, 2: one tuple, 3: several); then the terminator's operands.
    Errors found here (no kernel, unsupported quantized op) are raised when the op is reached."""
    from .quantized import plan_for
    steps = []
    terminator = None
    for op in block.operations:
        name = op.name
        if name in _TERMINATORS:
            terminator = tuple(op.operands)
            break
        fn = KERNELS.get(name) or _harness_op(name)
        qplan = None
        if fn is None:
            fn = _not_implemented(name)
        else:
            try:
                qplan = plan_for(op)
            except StableHLOError as e:
                qplan = _raiser(e)
        results = op.results
        if not results:
            mode = 0
        elif len(results) == 1:
            mode = 2 if isinstance(results[0].type, TupleType) else 1
        else:
            mode = 3
        steps.append((op, fn, qplan, tuple(op.operands), tuple(results), mode))
    plan = (len(block.operations), tuple(steps), terminator)
    try:
        block._cache = plan
    except AttributeError:
        pass
    return plan


def run(module: Module, *arrays, entry: str = "main", trace=None) -> tuple:
    """Run function `entry` of `module` on numpy arrays; returns a tuple of numpy arrays."""
    interp = Interpreter(module, trace=trace)
    func = interp.functions.get(entry)
    if func is None:
        module.function(entry)          # raises, naming the functions there are
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
