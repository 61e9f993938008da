"""The evaluator: runs functions, calls, blocks and regions of a module on numpy arrays.

Runtime values are numpy arrays whose dtype is the storage dtype of the element type
(`numerics`), Python tuples for tuples, and `Token` for tokens."""
from __future__ import annotations

from typing import List, Sequence

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError, StableHLOError
from ..ir.attributes import describe_location
from ..ir.core import Module, Value
from ..ir.types import ElementType, QuantizedType, TensorType, TokenType, TupleType
from .registry import HARNESS_OPS, KERNELS, TERMINATORS, TOKEN


class _Return(Exception):
    pass


class _Scope(dict):
    """The values visible in a block: its own, then (on a miss) those of the enclosing
    scope (`parent`, set right after construction), so that regions of `if`, `case`,
    `while`, `reduce`, ... may use values defined outside them. Function bodies start from
    an empty parent."""

    __slots__ = ("parent",)

    def __missing__(self, key):
        if self.parent is None:
            raise KeyError(key)
        return self.parent[key]


class Interpreter:
    def __init__(self, module: Module, trace=None, custom_call_handler=None):
        self.module = module
        self._functions = None       # name -> func.func op, read from the module on first use
        self._entries = {}           # name -> (entry block, number of arguments)
        self.trace = trace           # a writable stream, a function trace(op, results), or None
        self.depth = 0
        self.check_failures: List[str] = []
        self.custom_call_handler = custom_call_handler
        self.collect_check_failures = False
        self._scope = None           # the scope of the block whose op is running now

    @property
    def functions(self) -> dict:
        f = self._functions
        if f is None:
            f = self._functions = self.module.functions
        return f

    # ------------------------------------------------------------ public
    def call(self, name: str, args: Sequence) -> list:
        try:
            block, nargs = self._entries[name]
        except KeyError:
            block, nargs = self._entries[name] = _entry(self.functions, name)
        if len(args) != nargs:
            raise InterpreterError(f"@{name} takes {nargs} arguments, got {len(args)}")
        if self.depth == 0:
            # kernels compute with numpy's floating-point warnings off (overflow to inf, NaN
            # from invalid operations are results, not errors); set once per top-level call
            with np.errstate(all="ignore"):
                self.depth = 1
                try:
                    return self._run_entry(block, args)
                finally:
                    self.depth = 0
        self.depth += 1
        if self.depth > 2000:
            self.depth -= 1
            raise InterpreterError(f"call depth exceeded 2000 in @{name} (unbounded recursion?)")
        try:
            return self._run_entry(block, args)
        finally:
            self.depth -= 1

    def _run_entry(self, block, args) -> list:
        env = _Scope()
        env.parent = None
        for v, a in zip(block.arguments, args):
            env[v] = a
        prev = self._scope
        self._scope = env
        try:
            return self._run_ops(block, env)
        finally:
            self._scope = prev

    def run_region(self, region, args: list, parent=_Scope) -> list:
        """Run a single-block region with `args` bound to its entry block arguments; returns
        the operands of its terminator. The region sees the values of the scope of the op
        that runs it (`parent`, by default the scope running now; None for a fresh one)."""
        blocks = region.blocks
        if len(blocks) != 1:
            if not blocks:
                raise InterpreterError("region has no block")
            raise NotImplementedOpError("regions with several blocks")
        block = blocks[0]
        prev = self._scope
        env = _Scope()
        env.parent = prev if parent is _Scope else parent
        for v, a in zip(block.arguments, args):
            env[v] = a
        self._scope = env
        try:
            return self._run_ops(block, env)
        finally:
            self._scope = prev

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
        if self.trace is not None:
            return self._run_ops_traced(steps, terminator, env)
        for op, fn, operands, result, mode, k in steps:
            try:
                if mode == 1:
                    # one non-tuple result: a kernel returns the value or a list of results;
                    # the common arities pass their operands without building a list
                    if k == 2:
                        out = fn(self, op, env[operands[0]], env[operands[1]])
                    elif k == 1:
                        out = fn(self, op, env[operands[0]])
                    elif k == 0:
                        out = fn(self, op)
                    elif k == 3:
                        out = fn(self, op, env[operands[0]], env[operands[1]], env[operands[2]])
                    else:
                        out = fn(self, op, *[env[v] for v in operands])
                    if out.__class__ is list or out.__class__ is tuple:
                        out = out[0]
                    env[result] = out
                elif mode == 3:
                    for r, o in zip(result, fn(self, op, *[env[v] for v in operands])):
                        env[r] = o
                elif mode == 2:
                    # one tuple-typed result: a Python tuple is the value itself
                    out = fn(self, op, *[env[v] for v in operands])
                    if out.__class__ is list:
                        out = out[0]
                    env[result] = out
                else:
                    fn(self, op, *[env[v] for v in operands])
            except KeyError as e:
                if e.args and e.args[0].__class__ is Value and e.args[0] in operands:
                    raise InterpreterError(f"{op.name}: operand used before it is defined",
                                           op.where()) from None
                raise InterpreterError(f"{op.name}: {e}", op.where()) from None
            except StableHLOError as e:
                if e.location is None:
                    e.location = op.where()
                raise
            except _KERNEL_ERRORS as e:
                raise InterpreterError(f"{op.name}: {e}", op.where()) from None
        if terminator is None:
            raise InterpreterError("block has no terminator")
        return [env[v] for v in terminator]

    def _run_ops_traced(self, steps, terminator, env) -> list:
        for op, fn, operands, result, mode, _ in steps:
            results = op.results
            try:
                args = [env[v] for v in operands]
            except KeyError:
                raise InterpreterError(f"{op.name}: operand used before it is defined",
                                       op.where()) from None
            try:
                out = fn(self, op, *args)
            except StableHLOError as e:
                if e.location is None:
                    e.location = op.where()
                raise
            except _KERNEL_ERRORS as e:
                raise InterpreterError(f"{op.name}: {e}", op.where()) from None
            if mode == 1:
                if out.__class__ is list or out.__class__ is tuple:
                    out = out[0]
                env[result] = out
            elif mode == 2:
                if out.__class__ is list:
                    out = out[0]
                env[result] = out
            elif mode == 3:
                for r, o in zip(result, out):
                    env[r] = o
            self._trace(op, [env[r] for r in results])
        if terminator is None:
            raise InterpreterError("block has no terminator")
        return [env[v] for v in terminator]

    def _trace(self, op, values):
        # `trace` is a text stream (one line per op) or a function trace(op, results)
        if not hasattr(self.trace, "write"):
            self.trace(op, values)
            return
        loc = describe_location(op.location) or "-"
        parts = []
        for v in values:
            if isinstance(v, np.ndarray):
                parts.append(f"{v.dtype}{list(v.shape)} {np.array2string(v.reshape(-1)[:6], threshold=6)[:80]}")
            else:
                parts.append(repr(v))
        print(f"{loc}: {op.name} -> {'; '.join(parts)}", file=self.trace)


_KERNEL_ERRORS = (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError, MemoryError)


def _entry(functions, name):
    """(entry block, number of parameters) of function @name, checked once per interpreter."""
    func = functions.get(name)
    if func is None:
        raise InterpreterError(f"call to unknown function @{name}")
    if not func.regions or not func.regions[0].blocks:
        raise InterpreterError(f"function @{name} has no body (a declaration)")
    ft = func.attributes["function_type"].type
    if len(func.regions[0].blocks) != 1:
        raise NotImplementedOpError("regions with several blocks")
    return func.regions[0].blocks[0], len(ft.inputs)


def _not_implemented(name):
    def raise_(ctx, op, *args):
        raise NotImplementedOpError(name)
    return raise_


def _raiser(exc):
    def raise_(ctx, op, *args):
        raise exc
    return raise_


_plan_for = None


def _plain_values(values) -> bool:
    """Whether none of `values` (an op's operands or results) has a quantized element type
    (then the kernel runs as it is, without a quantization plan)."""
    for v in values:
        t = v.type
        if t.__class__ is TensorType and t.element_type.__class__ is ElementType:
            continue
        if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
            return False
    return True


def _quantized_runner(qplan, fn):
    def run_quantized(ctx, op, *args):
        return qplan(ctx, fn, list(args))
    return run_quantized


def _plan_block(block):
    """The evaluator's plan of a block, cached on it: per op up to the first terminator, the
    kernel (wrapped in its quantization plan where the op has quantized types), the operands,
    the result(s), how to store them (0: no result, 1: one non-tuple, 2: one tuple,
    3: several) and the number of operands; then the terminator's operands. Errors found here (no kernel, unsupported
    quantized op) are raised when the op is reached."""
    global _plan_for
    if _plan_for is None:
        from .quantized import plan_for
        _plan_for = plan_for
    plan_for = _plan_for
    kernels = KERNELS
    steps = []
    terminator = None
    for op in block.operations:
        name = op.name
        if name in TERMINATORS:
            terminator = tuple(op.operands)
            break
        fn = kernels.get(name)
        results = op.results
        operands = tuple(op.operands)
        if fn is None:
            fn = HARNESS_OPS.get(name) or _not_implemented(name)
        elif not _plain_values(operands) or not _plain_values(results):
            try:
                qplan = plan_for(op)
            except StableHLOError as e:
                fn = _raiser(e)
            else:
                if qplan is not None:
                    fn = _quantized_runner(qplan, fn)
        n = len(results)
        if n == 0:
            steps.append((op, fn, operands, None, 0, len(operands)))
        elif n == 1:
            r = results[0]
            steps.append((op, fn, operands, r, 2 if r.type.__class__ is TupleType else 1,
                          len(operands)))
        else:
            steps.append((op, fn, operands, tuple(results), 3, len(operands)))
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
