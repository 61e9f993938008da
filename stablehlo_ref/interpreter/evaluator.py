"""The evaluator: runs functions, calls, blocks and regions of a module on numpy arrays.

Runtime values are numpy arrays (or numpy scalars for rank-0 results) whose dtype is the
storage dtype of the element type (`numerics`), Python tuples for tuples, and `Token` for
tokens.

How a function runs (see `plan.py` for the plans): the first call of a function runs its
body in one pass that checks, plans and runs each op together (`run_once`), keeping no plan;
on later calls a function is analysed once (`FunctionInfo`: a slot of one flat list, the *frame*, for every value of the function
and of its nested regions, where each value is last used, which uses are invalid, how deep
each region is nested). Each block gets a plan when it first runs: per op its kernel with the
operand and result slots bound, the values to drop after it, and the errors that are known
before running (no kernel, a result over the tensor-size limit, nesting too deep). A block
that keeps running (a loop body, a comparator) is compiled into a chain of closures with
its kernels, ops, slots and constants bound and the functions it calls inlined, so that
running it costs at most one call per op and nothing else. Values of enclosing blocks are read from the same frame, so a region costs no
scope lookups however deeply it is nested."""
from __future__ import annotations

import gc
import sys
import threading
import time
from typing import List, Optional, Sequence

import numpy as np

from ..errors import InterpreterError, LimitError, StableHLOError
from ..ir.attributes import DenseElementsAttr
from ..ir.core import Module
from ..ir.types import _DTYPES, ElementType, TensorType, TokenType, TupleType
from ..limits import DEFAULT, FLAGS, Limits
from .blas import RUN as _blas_run, _state as _blas_state, leave as blas_leave
from .plan import (KERNEL_ERRORS, RAN_ONCE, _static_bytes, function_info,
                   function_info_of_block, fused_while, once_uses, plan_block, run_once,
                   run_once_framed)
from .numerics import elem
from .registry import KERNELS, TOKEN

_NEVER = sys.maxsize
_MISSING = object()
ND = np.ndarray
getrecursionlimit, setrecursionlimit = sys.getrecursionlimit, sys.setrecursionlimit
gc_isenabled, gc_disable = gc.isenabled, gc.disable


class Interpreter:
    _lift = 0                    # the recursion limit a run once still has to raise (see
    _lifted_from = 0             # `_lift_limit`), and the one it raised it from
    # (the state that starts the same in every interpreter, as class attributes: a fresh
    # interpreter per run of a small program pays for each attribute it sets)
    depth = 0
    collect_check_failures = False
    steps = 0                    # loop iterations run so far (all loops of the run)
    deadline = None              # time.monotonic() past which the run stops, or None
    _frame = None                # the frame of the function running now
    _info = None                 # and its FunctionInfo
    _isolated = None             # id(block) -> (block, FunctionInfo) of regions run alone
    _loops = None                # id(block) -> (block, whether it runs a loop)

    def __init__(self, module: Module, trace=None, custom_call_handler=None,
                 limits: Optional[Limits] = None):
        self.module = module
        self._functions = None       # name -> func.func op, read from the module on first use
        self._entries = {}           # name -> (entry block, number of arguments, func op)
        self.trace = trace           # a writable stream, a function trace(op, results), or None
        self.check_failures: List[str] = []
        self.custom_call_handler = custom_call_handler
        if limits is None:
            limits = DEFAULT
        self.limits = limits
        self.max_steps = _NEVER if limits.max_steps is None else int(limits.max_steps)
        self._consts = {}            # name -> _constant_body(...) of the functions called
        self._discards = {}          # name -> _discarded_results(...) of discarded callees

    @property
    def functions(self) -> dict:
        f = self._functions
        if f is None:
            f = self._functions = self.module.functions
        return f

    def entry(self, name: str):
        """(entry block, number of parameters, FunctionInfo) of function @name (checked once
        per interpreter: an unknown function or a declaration raises)."""
        e = self._entries.get(name)
        if e is None:
            e = self._entries[name] = _entry(self.functions, name)
        block, nargs, func = e
        return block, nargs, function_info(func, block)

    # ------------------------------------------------------------ public
    def call(self, name: str, args: Sequence) -> list:
        if not args and self.depth and self.trace is None:
            # a callee whose body is only constants (such as the @inputs and @expected
            # functions of jax-exported tests) returns them without being analysed or planned
            consts = self._consts.get(name, _MISSING)
            if consts is _MISSING:
                if self.depth < 2000:
                    # (its first call: checked and run in one pass)
                    return self.call_without_args(name, True)
                consts = self._consts[name] = _constant_body(self.functions.get(name),
                                                             self.limits)
            if consts is not None and self.depth < 2000:
                out = _run_constants(self, consts)
                if out is not None:
                    return out
        return self._call(name, args)

    def call_discarded(self, name: str, args: Sequence) -> list:
        """`call` for a call op none of whose results is used: a callee that `_constant_body`
        accepts, whose constants are all dense literals (their kernel cannot fail), is not
        run at all (its results are None)."""
        if not args and self.depth and self.trace is None and self.depth < 2000:
            consts = self._consts.get(name, _MISSING)
            if consts is _MISSING:
                # (the callee's first call: only whether it may be skipped is decided)
                return self.call_without_args(name, False)
            if consts is not None and consts[2]:
                return [None] * len(consts[1])
        return self.call(name, args)

    def call_without_args(self, name: str, used: bool) -> list:
        """`call(name, [])`, or `call_discarded(name, [])` where `used` is false, for a call
        op of no operands in a body run once (`plan.run_once`: no trace, depth >= 1): the
        first call of a constant callee (@inputs, @expected) without their dispatch; `call`
        and `call_discarded` come here for a callee's first call too."""
        if self.depth < 2000:
            consts = self._consts.get(name, _MISSING)
            if consts is _MISSING:
                functions = self._functions or self.functions
                if used:
                    consts, out = _constants_once(self, functions.get(name), self.limits)
                    self._consts[name] = consts
                    if out is not None:
                        return out
                    return self._call(name, [])
                n = self._discards.get(name)
                if n is None:
                    n = self._discards[name] = _discarded_results(functions.get(name),
                                                                  self.limits)
                if n >= 0:
                    return [None] * n
                return self.call(name, [])
        return self.call(name, []) if used else self.call_discarded(name, [])

    def _call(self, name: str, args: Sequence) -> list:
        e = self._entries.get(name)
        if e is None:
            e = self._entries[name] = _entry(self.functions, name)
        block, nargs, func = e
        if len(args) != nargs:
            raise InterpreterError(f"@{name} takes {nargs} arguments, got {len(args)}")
        if self.depth == 0:
            return self._call_top(name, block, func, args)
        if self._lift > 0:
            self._lift_limit()
        self.depth += 1
        if self.depth > 2000:
            self.depth -= 1
            raise LimitError(f"call depth exceeded 2000 in @{name} (unbounded recursion?)")
        try:
            return self._run_function(block, func, args)
        finally:
            self.depth -= 1

    def _call_top(self, name, block, func, args) -> list:
        global _QUIET
        limits = self.limits
        own_deadline = self.deadline is None and limits.timeout is not None
        if own_deadline:
            self.deadline = time.monotonic() + float(limits.timeout)
        self.steps = 0
        # Python frames per level of nesting or of calls (the block's code, the kernel, the
        # region runner; Python-to-Python calls use no C stack): the interpreter's own limits
        # (max_nesting, the call depth) must be reached before Python's recursion limit
        # (a body that `run_once` runs has no regions: depth 0)
        # (a body that `run_once` runs calls functions only through `_call`, which raises
        # the limit on its first call of one that is run (`_lift_limit`): a body that calls
        # none, or only constant functions, never needs it)
        once = once_uses(block) if block._cache is None and self.trace is None else None
        if once is not None:
            need = 0
            self._lift = 17000
        else:
            need = 1000 + 8 * (min(function_info(func, block).max_depth, limits.max_nesting)
                               + 2000)
        # (`_pause_gc` and `blas.enter`, in line: a first run of a small program pays for
        # every call; the runs in progress that `blas.leave` counts are the ones counted
        # here, so `blas._state["runs"]` is only set for `blas.leave` itself)
        with _gc_lock:
            _blas_run[0] += 1
            runs = _gc_state[0] = _gc_state[0] + 1
            if runs == 1 and gc_isenabled():
                gc_disable()
                _gc_state[1] = True
        try:
            if need:
                old_limit = getrecursionlimit()
                if need > old_limit:
                    setrecursionlimit(need)
                else:
                    need = 0
            # kernels compute with numpy's floating-point warnings off (overflow to inf, NaN
            # from invalid operations are results, not errors); set once per top-level call
            try:
                # (`_quiet`, in line for numpy 2)
                if _extobj_contextvar is None:  # pragma: no cover - numpy 1.x
                    quiet = _quiet()
                else:
                    made = _QUIET
                    if made[0] is not _extobj_contextvar.get():
                        made = _QUIET = (_extobj_contextvar.get(), _make_extobj(all="ignore"))
                    quiet = _extobj_contextvar.set(made[1])
                try:
                    self.depth = 1
                    if once is not None:
                        block._cache = RAN_ONCE
                        out = run_once(self, block, args, once, limits)
                    else:
                        out = self._run_function(block, func, args)
                finally:
                    self.depth = 0
                    if _extobj_contextvar is None:  # pragma: no cover - numpy 1.x
                        _loud(quiet)
                    else:
                        _extobj_contextvar.reset(quiet)
            except RecursionError:
                raise LimitError(f"@{name}: the program nests regions or calls too deeply "
                                 "for Python's stack", None, FLAGS["max_nesting"]) from None
            finally:
                if need:
                    setrecursionlimit(old_limit)
                elif self._lift:
                    if self._lift < 0:
                        # (raised by `_lift_limit` during the run)
                        setrecursionlimit(self._lifted_from)
                    self._lift = 0
            # (`check_results`'s common case in line: arrays of the declared static shapes
            # and native element dtypes, none of them a numpy scalar to wrap)
            # (a rank-0 result that a kernel left as a numpy scalar of the declared dtype is
            # wrapped here, as `check_results` and the wrapping below would)
            results = func.attributes["function_type"].type.results
            plain = len(out) == len(results)
            if plain:
                i = 0
                for v, t in zip(out, results):
                    if t.__class__ is TensorType:
                        et = t.element_type
                        if v.__class__ is ND:
                            if v.shape == t.shape and et.__class__ is ElementType \
                                    and v.dtype is _DTYPES.get(et.name):
                                i += 1
                                continue
                        elif not t.shape and et.__class__ is ElementType \
                                and v.__class__ is getattr(_DTYPES.get(et.name), "type", ND):
                            if once is None:
                                out = list(out)
                                once = True
                            out[i] = np.asarray(v)
                            i += 1
                            continue
                    plain = False
                    break
            if not plain:
                check_results(func, name, out)
                for v in out:
                    if v.__class__ is not ND and isinstance(v, np.generic):
                        return [np.asarray(v) if isinstance(v, np.generic) else v for v in out]
            # (`run_once` returns a list of its own)
            return out if once is not None else list(out)
        finally:
            # (`_resume_gc`, and `blas.leave` where a BLAS thread count was changed, in line)
            with _gc_lock:
                runs = _gc_state[0] = _gc_state[0] - 1
                if runs == 0:
                    if _gc_state[1]:
                        _gc_state[1] = False
                        gc.enable()
                    if _blas_state["current"] is not None:
                        _blas_state["runs"] = 1
                        blas_leave()
            if own_deadline:
                self.deadline = None

    def _lift_limit(self) -> None:
        """Raise Python's recursion limit to what a run of nested calls needs (`_lift`, set
        by `_call_top` for a body run once), to be restored when the top-level call ends
        (`_lift` is then negative)."""
        need = self._lift
        old = getrecursionlimit()
        if need > old:
            setrecursionlimit(need)
            self._lifted_from = old
            self._lift = -1
        else:
            self._lift = 0

    def _run_function(self, block, func, args) -> list:
        once = block._cache is None and self.trace is None
        if once:
            # the first run of a body: planned and run in one pass (without regions, not
            # analysed either)
            last = once_uses(block)
            if last is not None:
                block._cache = RAN_ONCE
                return run_once(self, block, args, last, self.limits)
        info = function_info(func, block)
        frame = [None] * info.nslots
        prev_frame, prev_info = self._frame, self._info
        self._frame, self._info = frame, info
        try:
            if once:
                return run_once_framed(self, block, info, frame, args, self.limits)
            return self._plan(block, info).execute(self, frame, args)
        finally:
            self._frame, self._info = prev_frame, prev_info

    def _plan(self, block, info):
        c = block._cache
        if c is not None and c.nops == len(block.operations) and c.limits is self.limits \
                and c.info is info:
            return c
        c = plan_block(block, info, self.limits)
        try:
            block._cache = c
        except AttributeError:
            pass
        return c

    def region_runner(self, region, take=False):
        """A function `run(args) -> results` that runs the single-block `region` with `args`
        bound to its arguments, for a kernel that runs it many times (loops, comparators).
        The region sees the values of the function running now. With `take`, the caller
        hands `args` over: a compiled block empties the list once it has bound them."""
        frame, plan = self.region_frame_plan(region)
        execute = plan.execute
        ctx = self
        if take:
            def run_taking(args):
                return execute(ctx, frame, args, True)
            return run_taking

        def run(args):
            return execute(ctx, frame, args)
        return run

    def region_frame_plan(self, region):
        """(frame, plan) that `region_runner` runs the single-block `region` with."""
        blocks = region.blocks
        if len(blocks) != 1:
            if not blocks:
                raise InterpreterError("region has no block")
            from ..errors import NotImplementedOpError
            raise NotImplementedOpError("regions with several blocks")
        block = blocks[0]
        info = self._info
        if info is not None and _belongs(block, info):
            frame = self._frame
        else:
            # a region run outside the function that holds it (e.g. by a fresh interpreter
            # per device): analysed on its own, in a frame of its own, seeing no outer values
            isolated = self._isolated
            if isolated is None:
                isolated = self._isolated = {}
            hit = isolated.get(id(block))
            if hit is None or hit[0] is not block:
                hit = isolated[id(block)] = (block, function_info_of_block(block))
            info = hit[1]
            frame = [None] * info.nslots
        return frame, self._plan(block, info)

    def fused_loop(self, op, cond, body):
        """For a `while` whose condition and body are both compiled blocks of the function
        running now: a function `loop(vals) -> vals` that runs the rest of the loop in one
        Python loop (see `plan.fused_while`); None otherwise."""
        if self.trace is not None:
            return None
        info = self._info
        if info is None:
            return None
        cb, bb = cond.blocks, body.blocks
        if len(cb) != 1 or len(bb) != 1 or not _belongs(cb[0], info) or not _belongs(bb[0], info):
            return None
        frame = self._frame
        return fused_while(self, op, frame, self._plan(cb[0], info), self._plan(bb[0], info))

    def compile_soon(self, cond, body) -> None:
        """For a `while` whose body is about to run: its condition and body blocks, where
        they are blocks of the function running now, are compiled on their next run."""
        info = self._info
        if info is None or self.trace is not None:
            return
        for region in (cond, body):
            blocks = region.blocks
            if len(blocks) == 1 and _belongs(blocks[0], info):
                if region is body and self._runs_loops(blocks[0]):
                    # a body whose time goes to loops of its own (which compile themselves)
                    # gains little from compiling, and often runs once or twice: it waits
                    # for the ordinary tier (`_COMPILE_AFTER_RUNS`)
                    continue
                self._plan(blocks[0], info).compile_soon()

    def _runs_loops(self, block) -> bool:
        """Whether `block` runs a `while` loop: one of its ops, in its nested regions, or in
        a function it calls (up to 8 calls deep); decided once per block and interpreter."""
        loops = self._loops
        if loops is None:
            loops = self._loops = {}
        hit = loops.get(id(block))
        if hit is None or hit[0] is not block:
            hit = loops[id(block)] = (block, _find_loop(block, self.functions, 8, set()))
        return hit[1]

    def run_region(self, region, args: list, parent=None) -> list:
        """Run a single-block region with `args` bound to its entry block arguments; returns
        the operands of its terminator. The region sees the values of the enclosing blocks
        (`parent` is accepted for compatibility and ignored)."""
        return self.region_runner(region)(args)

    def tick(self, op, counted=False) -> None:
        """Count one loop iteration of `op` (unless the caller has: `counted`) against
        `max_steps` and check the deadline."""
        if not counted:
            self.steps += 1
        if self.steps > self.max_steps:
            raise LimitError(f"{op.name}: more than {self.max_steps} loop iterations",
                             op.where(), FLAGS["max_steps"])
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise LimitError(f"{op.name}: the run took longer than {self.limits.timeout} s",
                             op.where(), FLAGS["timeout"])


# `np.errstate(all="ignore")` for a top-level call, in two calls: numpy 2 keeps its error
# state in a context variable, which is set and reset here as errstate's __enter__ and
# __exit__ do (the context-manager object and its methods cost several microseconds on the
# first run of a freshly parsed program); numpy 1 goes through errstate itself
try:
    from numpy._core._multiarray_umath import _make_extobj
    from numpy._core._ufunc_config import _extobj_contextvar
except ImportError:  # pragma: no cover - numpy 1.x
    _make_extobj = _extobj_contextvar = None


# (the error state a run last started from, and the quiet one made from it: the state is an
# immutable object, and one made with all="ignore" from the same current state is the same)
_QUIET = (None, None)


def _quiet():
    global _QUIET
    if _extobj_contextvar is None:  # pragma: no cover - numpy 1.x
        state = np.errstate(all="ignore")
        state.__enter__()
        return state
    cur = _extobj_contextvar.get()
    made = _QUIET
    if made[0] is not cur:
        made = _QUIET = (cur, _make_extobj(all="ignore"))
    return _extobj_contextvar.set(made[1])


def _loud(token) -> None:
    if _extobj_contextvar is None:  # pragma: no cover - numpy 1.x
        token.__exit__(None, None, None)
    else:
        _extobj_contextvar.reset(token)


# Python's cyclic garbage collector is paused while runs are in progress: a run allocates
# many short-lived objects (arrays, lists), which trigger collections that each walk every
# object of the process, the parsed module's IR included (a third to a half of a short run
# of a large module went to them). A run makes no reference cycles of its own that need the
# collector (its values are freed by reference counting); the collector runs again, as it
# was, when the last run in progress ends. A process that turned it off keeps it off.
_gc_lock = threading.Lock()
_gc_state = [0, False]       # runs in progress, whether the collector was paused for them


def _pause_gc() -> None:
    with _gc_lock:
        runs = _gc_state[0] = _gc_state[0] + 1
        if runs == 1 and gc.isenabled():
            gc.disable()
            _gc_state[1] = True


def _resume_gc() -> None:
    with _gc_lock:
        runs = _gc_state[0] = _gc_state[0] - 1
        if runs == 0 and _gc_state[1]:
            _gc_state[1] = False
            gc.enable()


def _find_loop(block, functions, depth, seen) -> bool:
    for op in block.operations:
        name = op.name
        if name == "stablehlo.while":
            return True
        if name == "func.call" and depth > 0:
            callee = getattr(op.attributes.get("callee"), "root", None)
            func = functions.get(callee) if isinstance(callee, str) else None
            if func is not None and callee not in seen:
                seen.add(callee)
                for r in func.regions:
                    for b in r.blocks:
                        if _find_loop(b, functions, depth - 1, seen):
                            return True
        for r in op.regions:
            for b in r.blocks:
                if _find_loop(b, functions, depth, seen):
                    return True
    return False


def _belongs(block, info) -> bool:
    """Whether `block` is part of the function `info` describes."""
    for a in block.arguments:
        return a in info.slots
    for op in block.operations:
        for r in op.results:
            return r in info.slots
    return True


def _entry(functions, name):
    """(entry block, number of parameters, info) of function @name, checked once per
    interpreter."""
    func = functions.get(name)
    if func is None:
        raise InterpreterError(f"call to unknown function @{name}")
    if not func.regions or not func.regions[0].blocks:
        raise InterpreterError(f"function @{name} has no body (a declaration)")
    ft = func.attributes["function_type"].type
    if len(func.regions[0].blocks) != 1:
        from ..errors import NotImplementedOpError
        raise NotImplementedOpError("regions with several blocks")
    block = func.regions[0].blocks[0]
    return block, len(ft.inputs), func


def _constant_body(func, limits):
    """(constant ops, index of the op each result is, whether every constant is a
    `DenseElementsAttr`) for a function of no arguments whose
    body is only `stablehlo.constant` ops of static, unquantized types within `limits` (one
    by one and all together) and its `func.return` of their results; None for any other
    function (it runs the general way, which also raises whatever errors it has)."""
    return _constants_once(None, func, limits)[0]


def _constants_once(ctx, func, limits):
    """(`_constant_body(func, limits)`, the function's results): with `ctx`, the constants
    are run in the same pass that checks them, and the results are what `_run_constants`
    gives (None where the body is not accepted, a kernel fails, or without `ctx`)."""
    if func is None:
        return None, None
    regions = func.regions
    if len(regions) != 1:
        return None, None
    blocks = regions[0].blocks
    if len(blocks) != 1:
        return None, None
    block = blocks[0]
    ft = func.attributes.get("function_type")
    if block.arguments or getattr(ft, "type", None) is None or ft.type.inputs:
        return None, None
    ops = block.operations
    n = len(ops) - 1
    if n < 0 or ops[n].name != "func.return":
        return None, None
    live = 0
    literal = True
    max_elements, max_bytes = limits.max_tensor_elements, limits.max_tensor_bytes
    max_live = limits.max_live_bytes
    vals = None
    if ctx is not None:
        vals = []
        fn = KERNELS["stablehlo.constant"]
    i = 0
    while i < n:
        op = ops[i]
        i += 1
        results = op.results
        if op.name != "stablehlo.constant" or op.operands or op.regions or len(results) != 1:
            return None, None
        value = op.attributes.get("value")
        if value.__class__ is not DenseElementsAttr:
            literal = False
        t = results[0].type
        sb = t._ob
        if sb[0] is limits:
            # (a type `once_bytes` accepted for these limits)
            live += sb[1]
        else:
            if t.__class__ is not TensorType or t.element_type.__class__ is not ElementType:
                return None, None
            sb = getattr(t, "_sb", _MISSING)
            if sb is _MISSING:
                sb = _static_bytes(t)
            if sb is None or sb[0] > max_elements or sb[1] > max_bytes:
                return None, None
            live += sb[1]
        if live > max_live:
            return None, None
        if vals is not None:
            if literal:
                # (the constant kernel of a dense literal, in line: its array, a splat's
                # broadcast view made whole)
                arr = value.array
                if arr.base is not None and arr.ndim and not any(arr.strides):
                    arr = np.array(arr)
                vals.append(arr)
                continue
            try:
                v = fn(ctx, op)
                if v.__class__ is list or v.__class__ is tuple:
                    v = v[0]
                vals.append(v)
            except Exception:  # noqa: BLE001 - rerun the general way, which reports it
                vals = None
    # (`_returned_positions` and `_picked`, in line: the index of each returned value's
    # op among the constants, found by identity; a value of another block is not there)
    where = []
    out = []
    try:
        for v in ops[n].operands:
            j = ops.index(v.owner, 0, n)
            where.append(j)
            if vals is not None:
                out.append(vals[j])
    except ValueError:
        return None, None
    return (ops[:-1], tuple(where), literal), (out if vals is not None else None)


def _discarded_results(func, limits) -> int:
    """For a call none of whose results is used: the number of results of `func` where
    `_constant_body(func, limits)` accepts it and its constants are all dense literals (so
    that none of their kernels can fail: the call need not run), else -1. The same checks
    as `_constants_once`, made without building the body's index (a discarded call is made
    once per run of most test programs)."""
    if func is None:
        return -1
    regions = func.regions
    if len(regions) != 1:
        return -1
    blocks = regions[0].blocks
    if len(blocks) != 1:
        return -1
    block = blocks[0]
    ft = func.attributes.get("function_type")
    if block.arguments or getattr(ft, "type", None) is None or ft.type.inputs:
        return -1
    ops = block.operations
    n = len(ops) - 1
    if n < 0 or ops[n].name != "func.return":
        return -1
    max_elements, max_bytes = limits.max_tensor_elements, limits.max_tensor_bytes
    max_live = limits.max_live_bytes
    live = 0
    i = 0
    while i < n:
        op = ops[i]
        i += 1
        results = op.results
        if op.name != "stablehlo.constant" or op.operands or op.regions or len(results) != 1 \
                or op.attributes.get("value").__class__ is not DenseElementsAttr:
            return -1
        t = results[0].type
        sb = t._ob
        if sb[0] is limits:
            live += sb[1]
        else:
            if t.__class__ is not TensorType or t.element_type.__class__ is not ElementType:
                return -1
            sb = getattr(t, "_sb", _MISSING)
            if sb is _MISSING:
                sb = _static_bytes(t)
            if sb is None or sb[0] > max_elements or sb[1] > max_bytes:
                return -1
            live += sb[1]
        if live > max_live:
            return -1
    # (the returned values are results of those constants: `_returned_positions`, in line)
    outs = ops[n].operands
    try:
        for v in outs:
            ops.index(v.owner, 0, n)
    except ValueError:
        return -1
    return len(outs)


def _returned_positions(ops, n):
    """The index among `ops[:n]` of the op each operand of `ops[n]` (the return) is the
    result of, as a tuple; None where one is not (a value of another block, or one defined
    later)."""
    outs = ops[n].operands
    where = []
    if n <= 8:
        for v in outs:
            owner = v.owner
            j = 0
            while j < n and ops[j] is not owner:
                j += 1
            if j == n:
                return None
            where.append(j)
    else:
        index = {}
        j = 0
        while j < n:
            index[ops[j]] = j
            j += 1
        for v in outs:
            j = index.get(v.owner)
            if j is None:
                return None
            where.append(j)
    return tuple(where)


def _run_constants(ctx, consts):
    """The results of a function `_constant_body` accepted, as its plan would return them;
    None where a constant's kernel fails (the general path then raises its error)."""
    ops, where, _ = consts
    fn = KERNELS["stablehlo.constant"]
    try:
        vals = [fn(ctx, op) for op in ops]
    except Exception:  # noqa: BLE001 - rerun the general way, which reports it
        return None
    return _picked(vals, where)


def _picked(vals, where) -> list:
    """The constants' values that a constant-only function returns, in its return's order."""
    out = []
    for i in where:
        v = vals[i]
        if v.__class__ is list or v.__class__ is tuple:
            v = v[0]
        out.append(v)
    return out


def check_results(func, name: str, values) -> None:
    """Check the values a function returns against its declared result types (shape and
    element dtype of tensors, arity of tuples): a wrong one is an error, never a result."""
    ft = func.attributes["function_type"].type
    if len(values) != len(ft.results):
        raise InterpreterError(f"@{name} returned {len(values)} values but is declared to "
                               f"return {len(ft.results)}", _where(func))
    i = 0
    for v, t in zip(values, ft.results):
        # (the common case, an array of the declared static shape and element dtype, in line)
        if t.__class__ is TensorType and v.__class__ is np.ndarray and v.shape == t.shape:
            et = t.element_type
            if et.__class__ is ElementType:
                dt = v.dtype
                if dt is et.dtype or dt == et.dtype:
                    i += 1
                    continue
        _check_value(v, t, (name, i), func, elem)
        i += 1


def _what(what) -> str:
    return f"@{what[0]} result #{what[1]}"


def _check_value(v, t, what, func, elem):
    if t.__class__ is TensorType:
        shape = getattr(v, "shape", None)
        if shape is None:
            raise InterpreterError(f"{_what(what)}: expected {t}, got {type(v).__name__}",
                                   _where(func))
        ok = shape == t.shape or len(shape) == len(t.shape)
        if ok and shape != t.shape:
            for d, s in zip(t.shape, shape):
                if d is not None and d != s:
                    ok = False
                    break
        et = elem(t)
        if not ok or (et is not None and v.dtype != et.dtype):
            raise InterpreterError(f"{_what(what)}: the value ({v.dtype}{list(shape)}) does not match "
                                   f"the declared type {t}", _where(func))
    elif t.__class__ is TupleType:
        if not isinstance(v, tuple) or len(v) != len(t.types):
            raise InterpreterError(f"{_what(what)}: expected {t}", _where(func))
        for x, tt in zip(v, t.types):
            _check_value(x, tt, what, func, elem)


def _where(func):
    return func.where()


def run(module: Module, *arrays, entry: str = "main", trace=None,
        limits: Optional[Limits] = None) -> tuple:
    """Run function `entry` of `module` on numpy arrays; returns a tuple of numpy arrays.
    `limits` (a `stablehlo_ref.limits.Limits`) bounds tensor sizes, live memory, loop
    iterations, wall time and nesting; the defaults apply without it."""
    interp = Interpreter(module, trace=trace, limits=limits)
    functions = interp._functions = module.functions
    func = functions.get(entry)
    if func is None:
        module.function(entry)          # raises, naming the functions there are
    ft = func.attributes["function_type"].type
    if len(arrays) != len(ft.inputs):
        raise InterpreterError(f"@{entry} takes {len(ft.inputs)} arguments, got {len(arrays)}")
    args = [coerce_argument(a, t, i) for i, (a, t) in enumerate(zip(arrays, ft.inputs))] \
        if arrays else []
    # (`call` at depth 0 and `_entry`, in line: `_call` checks the number of arguments as
    # above)
    regions = func.regions
    if not regions or not regions[0].blocks:
        raise InterpreterError(f"function @{entry} has no body (a declaration)")
    blocks = regions[0].blocks
    if len(blocks) != 1:
        from ..errors import NotImplementedOpError
        raise NotImplementedOpError("regions with several blocks")
    block = interp._entries[entry] = (blocks[0], len(ft.inputs), func)
    return tuple(interp._call_top(entry, block[0], func, args))


def coerce_argument(a, t, index: int):
    """Check a user-supplied argument against the parameter type and convert its dtype
    (an array of the right dtype is passed as it is, never copied)."""
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


__all__ = ["Interpreter", "run", "coerce_argument", "check_results", "KERNEL_ERRORS"]
