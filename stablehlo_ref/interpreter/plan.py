"""Execution plans: what the evaluator derives from a function and its blocks once.

`function_info` walks a function once, iteratively (so that regions nested thousands deep
cost no Python recursion): every value (block argument or op result, in the function's body
and in every nested region) gets a slot of the function's frame, each value's last use in its
own block is found (a use inside a nested region counts as a use by the op that holds the
region), uses of values that are not visible there are noted, and so is each block's depth.

The first run of a function body is done in one pass that plans and runs each op together
(`run_once`; `run_once_framed` where the body has regions, whose blocks read the function's
frame): the same checks and errors at the same ops as the steps below, without building
them; a body without regions is not analysed either (its values are kept in a dict by
`Value`). A body that runs again is planned then.

`plan_block` turns a block into a `Plan`: per op its kernel (wrapped in the quantization plan
where the op has quantized types), the operand and result slots, how the results are stored,
which large values die after it (their slots are cleared, so memory is freed as soon as a value
is dead), and the errors known before running (no kernel, an invalid use, a result type over
the tensor-size limit, live memory over its limit, regions nested too deep), which are raised
when the op is reached. The first runs of a block walk these steps; a block that keeps running
is compiled (`_compile`, `_Emitter`) into a chain of closures, one per op, with its kernel
(or the kernel its specializer makes for that op), op and operand and result slots bound (no
code is generated or evaluated); calls are inlined (the callee's steps emitted in place, its
values in slots of the caller's frame); constants, and the elementwise and data-movement ops
whose operands are all known, are computed once and stored once per frame, and bound into the
closures that read them; for ops on native integer and float types whose exact semantics a
Python operator keeps (+, -, * with integer wrap-around and float rounding in the operands' own
dtype, float division, comparisons, and/or/xor, select of a rank-0 predicate), the operator
itself runs instead of a kernel call; a select of arrays of one static shape is numpy's
`where`; consecutive such steps, and ops whose specializer made an elementwise or
data-movement kernel of one or two operands, and any other kernel of one or two operands
and one result (dot_general, a reduce, ...), run in one loop (`_sequence_runner`); numpy
scalars then stay numpy scalars, so a loop over scalars costs no numpy array call per op. A
dynamic_slice reads its start indices from their slots (known ones clamped once); a select
of small arrays of a native type is a copy of its false operand with the true one put in
(`_array_select`), or where its predicate is all false or all true that operand itself. A `while` whose body is about to run has both its blocks compiled on
their next run (`Plan.compile_soon`: the body for its first run, the condition for its
second), so that a loop of a dozen iterations runs fused from its second iteration (a body
that runs loops of its own waits for the ordinary tier: its inner loops compile themselves,
and such outer loops often run once or twice). In a
`while` body, pure ops whose operands are loop-invariant (body arguments returned unchanged,
known values, or such ops' results) keep their result while their operand objects stay the
same (`_memo_runner`); a dynamic_update_slice or one-element scatter of a value that dies
there writes into it when nothing else holds it (`_update_in_place_runner`,
`_scatter_in_place_runner`); once both the condition and the body of a `while` are compiled,
the rest of the loop runs as one Python loop over both blocks' runners (`fused_while`; a
condition that is one binary step, `i < n`, is computed in that loop itself, on the body's
argument slots). An op whose result some slot already holds (an integer or i1 op with a
known identity operand, `x + 0`, `p != false`, a convert to the same type, or a pure op
repeated on the same operands) is not run: the steps after it read that slot
(`_Emitter.alias_step`; never a value an update in place writes into)."""
from __future__ import annotations

import operator
import sys

import numpy as np

from ..errors import InterpreterError, LimitError, NotImplementedOpError, StableHLOError
from ..ir.types import ElementType, QuantizedType, TensorType, TupleType
from ..limits import FLAGS, check_tensor
from .jax_idioms import fuse_sequence
from .numerics import SCALAR_NAN_ORDER
from .registry import HARNESS_OPS, KERNELS, SPECIALIZERS, TERMINATORS, op_cache
from . import sequence_codegen

KERNEL_ERRORS = (ValueError, IndexError, TypeError, OverflowError, ZeroDivisionError,
                 MemoryError, KeyError, AttributeError)

ND = np.ndarray
# a value of at least this many elements (or of a dynamic shape, or a tuple) has its slot
# cleared after its last use; smaller ones are left until the block runs again
_FREE_ELEMENTS = 4096
# a block is compiled on its run after this many (a block that runs once or twice, such as a
# function body, gains less than compiling costs; on the loop programs of bench_models.py,
# 4 was faster than 16 and as fast as 1)
_COMPILE_AFTER_RUNS = 4
# blocks with more steps than this are never compiled (compiling costs more than it saves)
_MAX_COMPILED_STEPS = 20000


class FunctionInfo:
    __slots__ = ("nslots", "slots", "last_use", "bad_uses", "depth", "parent", "max_depth")

    def __init__(self):
        self.slots = {}          # Value -> frame index
        self.last_use = {}       # Value -> index (in its own block) of the op that uses it last
        self.bad_uses = {}       # Operation -> the first of its operands not visible there
        self.depth = {}          # Block -> nesting depth (the function body is 0)
        self.parent = {}         # Block -> (enclosing block, index of the op holding it)
        self.max_depth = 0
        self.nslots = 0


def function_info(func, body) -> FunctionInfo:
    """Analyse function `func` (whose body is `body`) once; cached on the op."""
    c = func._cache
    if c is not None:
        info = c.get("function_info")
        if info is not None and info[0] == _size_key(body):
            return info[1]
    info = _analyse(body)
    if c is None:
        try:
            c = func._cache = {}
        except AttributeError:
            return info
    c["function_info"] = (_size_key(body), info)
    return info


def function_info_of_block(block) -> FunctionInfo:
    """The analysis of a block run on its own, as if it were a function's body."""
    return _analyse(block)


def _size_key(body):
    return (id(body), len(body.operations))


def _analyse(body) -> FunctionInfo:
    for op in body.operations:
        if op.regions:
            return _analyse_nested(body)
    # a body without regions: one pass, no scopes
    info = FunctionInfo()
    slots = info.slots
    last_use = info.last_use
    bad = info.bad_uses
    n = 0
    for a in body.arguments:
        slots[a] = n
        n += 1
    for i, op in enumerate(body.operations):
        for v in op.operands:
            if v in slots:
                last_use[v] = i
            elif op not in bad:
                bad[op] = v
        for r in op.results:
            slots[r] = n
            n += 1
    info.depth[body] = 0
    info.nslots = n
    return info


def _analyse_nested(body) -> FunctionInfo:
    info = FunctionInfo()
    slots = info.slots
    last_use = info.last_use
    bad = info.bad_uses
    depth = info.depth
    parent = info.parent
    defined_in = {}              # Value -> (Block, index of its op; -1 for an argument)
    active = {}                  # Block on the current path -> index of the op being visited
    n = 0
    for a in body.arguments:
        slots[a] = n
        n += 1
        defined_in[a] = (body, -1)
    depth[body] = 0
    # a stack of [block, index of the next op]; entering an op's regions pushes their blocks
    stack = [[body, 0]]
    max_depth = 0
    while stack:
        top = stack[-1]
        block, i = top
        ops = block.operations
        if i >= len(ops):
            active.pop(block, None)
            stack.pop()
            continue
        top[1] = i + 1
        active[block] = i
        op = ops[i]
        for v in op.operands:
            d = defined_in.get(v)
            if d is not None:
                cur = active.get(d[0])
                # visible: defined in this block or an enclosing one, before the op (or the
                # op holding this region); an argument (index -1) of a block on the path
                if cur is not None and d[1] < cur:
                    last_use[v] = cur
                    continue
            bad.setdefault(op, v)
        for r in op.results:
            slots[r] = n
            n += 1
            defined_in[r] = (block, i)
        if op.regions:
            d = depth[block] + 1
            if d > max_depth:
                max_depth = d
            children = []
            for region in op.regions:
                for b in region.blocks:
                    depth[b] = d
                    parent[b] = (block, i)
                    for a in b.arguments:
                        slots[a] = n
                        n += 1
                        defined_in[a] = (b, -1)
                    children.append([b, 0])
            # regions run after the values before the op; visit them before the next op
            stack.extend(reversed(children))
    info.nslots = n
    info.max_depth = max_depth
    return info


# ------------------------------------------------------------------ plans
_plan_for = None


def _plain_values(values) -> bool:
    for v in values:
        t = v.type
        if t.__class__ is TensorType and t.element_type.__class__ is ElementType:
            continue
        if isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
            return False
    return True


def _not_implemented(name):
    def raise_(ctx, op, *args):
        raise NotImplementedOpError(name)
    return raise_


def _raiser(exc):
    def raise_(ctx, op, *args):
        raise exc
    return raise_


_CALL_KERNELS = ("call", "call_discarded")    # the kernels _direct_call makes


def _direct_call(callee, discarded=False):
    """func.call with its callee's name read once (`discarded`: none of its results is used,
    see `Interpreter.call_discarded`)."""
    name = getattr(callee, "root", None)
    if not isinstance(name, str):
        return KERNELS["func.call"]
    if discarded:
        def call_discarded(ctx, op, *args):
            return ctx.call_discarded(name, args)
        return call_discarded

    def call(ctx, op, *args):
        return ctx.call(name, args)
    return call


def _quantized_runner(qplan, fn):
    def run_quantized(ctx, op, *args):
        return qplan(ctx, fn, list(args))
    return run_quantized


_elem = None
_MISSING = object()
_ITEMSIZES = {}      # id(element type) -> (element type, bytes per element or None)


def _itemsize(t):
    global _elem
    if _elem is None:
        from .numerics import elem as _e
        _elem = _e
    try:
        return _elem(t).dtype.itemsize
    except Exception:  # noqa: BLE001 - a type without a storage dtype is not counted
        return None


def _static_bytes(t):
    """(elements, bytes) of a tensor type with a static shape; None otherwise (kept on the
    type object, `_sb`: it is a function of the type's fields, and the parser gives equal
    types of one module one object)."""
    if t.__class__ is not TensorType:
        return None
    out = getattr(t, "_sb", _MISSING)
    if out is not _MISSING:
        return out
    out = None
    n = 1
    for d in t.shape:
        if d is None or d < 0:
            n = -1
            break
        n *= d
    if n >= 0:
        et = t.element_type
        itemsize = _ITEMSIZES.get(id(et), _MISSING)
        if itemsize is _MISSING or itemsize[0] is not et:
            if len(_ITEMSIZES) > 10_000:      # (element types are shared: rarely any new)
                _ITEMSIZES.clear()
            itemsize = _ITEMSIZES[id(et)] = (et, _itemsize(t))
        itemsize = itemsize[1]
        if itemsize is not None:
            out = (n, n * itemsize)
    try:
        object.__setattr__(t, "_sb", out)     # (a frozen dataclass)
    except AttributeError:
        pass
    return out


class Plan:
    __slots__ = ("nops", "limits", "info", "arg_slots", "steps", "term_slots", "runs", "code",
                 "lines", "live_after", "compilable", "block")

    def execute(self, ctx, frame, args, take=False):
        """Bind `args` to the block's arguments in `frame`, run the block, return the
        operands of its terminator. With `take` (a loop handing over its values) a compiled
        block empties the list `args` once it has bound them, so that it holds no references
        that would keep an update from being made in place."""
        code = self.code
        if code is None:
            i = 0
            for s in self.arg_slots:
                frame[s] = args[i]
                i += 1
            if ctx.trace is not None:
                return self._interpret(ctx, frame, True)
            if self.runs < _COMPILE_AFTER_RUNS or not self.compilable:
                self.runs += 1
                return self._interpret(ctx, frame, False)
            code = self.code = _compile(self, ctx)
        return code(ctx, frame, args, take)

    def compile_soon(self) -> None:
        """Have the block compiled on its next run (a loop's block that will run again)."""
        if self.runs < _COMPILE_AFTER_RUNS:
            self.runs = _COMPILE_AFTER_RUNS

    def _interpret(self, ctx, frame, traced):
        for op, fn, ins, out, mode, frees, _ in self.steps:
            try:
                k = len(ins)
                # the common arities pass their operands without building a list
                if k == 2:
                    v = fn(ctx, op, frame[ins[0]], frame[ins[1]])
                elif k == 1:
                    v = fn(ctx, op, frame[ins[0]])
                elif k == 0:
                    v = fn(ctx, op)
                elif k == 3:
                    v = fn(ctx, op, frame[ins[0]], frame[ins[1]], frame[ins[2]])
                else:
                    v = fn(ctx, op, *[frame[s] for s in ins])
                if mode == 1:
                    if v.__class__ is list or v.__class__ is tuple:
                        v = v[0]
                    frame[out] = v
                elif mode == 2:
                    if v.__class__ is list:
                        v = v[0]
                    frame[out] = v
                elif mode == 3:
                    for s, x in zip(out, v):
                        frame[s] = x
                if traced:
                    _trace(ctx, op, [frame[s] for s in _result_slots(out, mode)])
                if frees:
                    for s in frees:
                        frame[s] = None
            except StableHLOError as e:
                if e.location is None:
                    e.location = op.where()
                raise
            except KERNEL_ERRORS as e:
                raise InterpreterError(f"{op.name}: {e}", op.where()) from None
        if self.term_slots is None:
            raise InterpreterError("block has no terminator")
        return [frame[s] for s in self.term_slots]


class _NoOp:
    name = "block"

    @staticmethod
    def where():
        return None


def _result_slots(out, mode):
    if mode == 0:
        return ()
    if mode == 3:
        return out
    return (out,)


def _trace(ctx, op, values):
    import numpy as np
    from ..ir.attributes import describe_location
    # `trace` is a text stream (one line per op) or a function trace(op, results)
    if not hasattr(ctx.trace, "write"):
        ctx.trace(op, [np.asarray(v) if isinstance(v, np.generic) else v for v in values])
        return
    loc = describe_location(op.location) or "-"
    parts = []
    for v in values:
        if isinstance(v, (np.ndarray, np.generic)):
            v = np.asarray(v)
            parts.append(f"{v.dtype}{list(v.shape)} {np.array2string(v.reshape(-1)[:6], threshold=6)[:80]}")
        else:
            parts.append(repr(v))
    print(f"{loc}: {op.name} -> {'; '.join(parts)}", file=ctx.trace)


def plan_block(block, info: FunctionInfo, limits) -> Plan:
    global _plan_for
    if _plan_for is None:
        from .quantized import plan_for
        _plan_for = plan_for
    plan_for = _plan_for
    kernels = KERNELS
    slots = info.slots
    last_use = info.last_use
    bad = info.bad_uses
    depth = info.depth.get(block, 0)
    # live bytes of the enclosing blocks where this block runs
    live = 0
    par = info.parent.get(block)
    if par is not None:
        pc = par[0]._cache
        if pc is not None and pc.__class__ is Plan and pc.info is info and par[1] < len(pc.live_after):
            live = pc.live_after[par[1]]
    max_live = limits.max_live_bytes
    exact = _values_of_declared_types(block, info)
    # values dying at each op index: only large ones are cleared
    dying = {}
    sizes = {}
    for a in block.arguments:
        sb = _static_bytes(a.type)
        if a in last_use:
            if sb is None or sb[0] >= _FREE_ELEMENTS:
                dying.setdefault(last_use[a], []).append(slots[a])
    steps = []
    live_after = []
    term = None
    max_elements, max_bytes = limits.max_tensor_elements, limits.max_tensor_bytes
    for i, op in enumerate(block.operations):
        name = op.name
        if name in TERMINATORS:
            term = tuple([slots.get(v, -1) for v in op.operands])
            if -1 in term or (bad and op in bad):
                term = None
                steps.append((op, _raiser(InterpreterError(
                    f"{name}: operand used before it is defined", op.where())), (), None, 0, (), None))
            break
        results = op.results
        operands = op.operands
        fn = kernels.get(name)
        fast = None
        if fn is None:
            fn = HARNESS_OPS.get(name) or _not_implemented(name)
        else:
            # (`_plain_values` of operands and results, inline: it runs for every op planned)
            plain = True
            for v in operands:
                t = v.type
                if (t.__class__ is not TensorType or t.element_type.__class__ is not ElementType) \
                        and isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
                    plain = False
                    break
            if plain:
                for v in results:
                    t = v.type
                    if (t.__class__ is not TensorType
                            or t.element_type.__class__ is not ElementType) \
                            and isinstance(t, TensorType) \
                            and isinstance(t.element_type, QuantizedType):
                        plain = False
                        break
            if plain:
                fast = exact    # the op's fast form is decided when the block is compiled
            else:
                try:
                    qplan = plan_for(op)
                except StableHLOError as e:
                    fn = _raiser(e)
                else:
                    if qplan is not None:
                        fn = _quantized_runner(qplan, fn)
        if name == "func.call" and fn is kernels.get(name) and "callee" in op.attributes:
            used = False
            for r in results:
                if r in last_use:
                    used = True
                    break
            fn = _direct_call(op.attributes["callee"], not used)
        is_bad = op in bad if bad else False
        if is_bad:
            fn = _raiser(InterpreterError(f"{name}: operand used before it is defined",
                                          op.where()))
            fast = None
        elif op.regions and depth + 1 > limits.max_nesting:
            fn = _raiser(LimitError(f"{name}: regions nested more than {limits.max_nesting} "
                                    "deep", op.where(), FLAGS["max_nesting"]))
            fast = None
        n = len(results)
        # (an op whose `fn` already raises, `fn.__name__ == "raise_"`, reports that error, not
        # a limit; the name is read only where a limit is exceeded)
        for r in results:
            sb = _static_bytes(r.type)
            if sb is None:
                dying.setdefault(last_use.get(r, i), []).append(slots[r])   # unused: dies at once
                continue
            if (sb[0] > max_elements or sb[1] > max_bytes) and fn.__name__ != "raise_":
                try:
                    check_tensor(r.type.shape, 8 * sb[1] // sb[0] if sb[0] else 8,
                                 name, op.where(), limits)
                except LimitError as e:
                    fn, fast = _raiser(e), None
            live += sb[1]
            if sb[0] >= _FREE_ELEMENTS:
                # only these are cleared after their last use (and counted out of `live`)
                s = slots[r]
                sizes[s] = sb[1]
                dying.setdefault(last_use.get(r, i), []).append(s)
        if live > max_live and fn.__name__ != "raise_":
            fn = _raiser(LimitError(f"{name}: the values alive at once would take {live} bytes, "
                                    f"over the limit of {max_live}", op.where(),
                                    FLAGS["max_live_bytes"]))
            fast = None
        frees = dying.pop(i, ())
        if frees:
            frees = tuple(frees)
            for s in frees:
                live -= sizes.get(s, 0)
        ins = () if is_bad else tuple([slots[v] for v in operands])
        if n == 0:
            steps.append((op, fn, ins, None, 0, frees, None))
        elif n == 1:
            r = results[0]
            steps.append((op, fn, ins, slots[r], 2 if r.type.__class__ is TupleType else 1,
                          frees, fast))
        else:
            steps.append((op, fn, ins, tuple([slots[r] for r in results]), 3, frees, None))
        live_after.append(live)
    p = Plan()
    p.block = block
    p.nops = len(block.operations)
    p.limits = limits
    p.info = info
    p.arg_slots = tuple([slots[a] for a in block.arguments])
    p.steps = steps
    p.term_slots = term
    p.runs = 0
    p.code = None
    p.live_after = live_after
    p.compilable = len(steps) <= _MAX_COMPILED_STEPS
    return p


# ------------------------------------------------------------------ blocks run once
class _RanOnce:
    """The mark `run_once` leaves on a block it ran (`Block._cache`): the block's next run
    builds its plan (`nops` never matches, so `Interpreter._plan` plans it)."""
    __slots__ = ()
    nops = -1


RAN_ONCE = _RanOnce()


_recognize_binary_body = _scatter_body = None
# ops whose kernel never runs their one region when it is a recognized binary body (`return
# op(%a, %b)` of a primitive op, or scatter's `return %update`), with their operand counts
_UNRUN_REGIONS = {"stablehlo.reduce": 2, "stablehlo.reduce_window": 2, "stablehlo.scatter": 3}


def regions_not_run(op) -> bool:
    """Whether `op` has regions that its kernel never runs: a reduce or reduce_window of one
    operand, or a scatter of one input, whose body is recognized (the kernels then compute
    with the numpy primitive instead). Such a body reads only its own arguments."""
    global _recognize_binary_body, _scatter_body
    if _UNRUN_REGIONS.get(op.name) != len(op.operands) or len(op.regions) != 1 \
            or len(op.regions[0].blocks) != 1:
        return False
    if _scatter_body is None:
        from .indexing import scatter_body as _s
        from .reduction import recognize_binary_body as _r
        _recognize_binary_body, _scatter_body = _r, _s
    if op.name == "stablehlo.scatter":
        return _scatter_body(op, 1) is not None
    region = op.regions[0]
    name = _recognize_binary_body(region)
    if name is None:
        return False
    if op.name == "stablehlo.reduce":
        # (kept for the reduce kernel, which would recognize it again)
        cache = getattr(op, "_cache", None)
        if cache is None:
            try:
                cache = op._cache = {}
            except AttributeError:
                return True
        cache["binary_body"] = (region, name)
    return True


def once_uses(block):
    """For `run_once`: the index of the op that last uses each value of `block` (as
    `FunctionInfo.last_use` has it for a body without regions), or None where an op of the
    block has regions that its kernel may run (their blocks read the function's frame: the
    general path runs it); regions that are never run (`regions_not_run`) are no obstacle."""
    last = {}
    i = 0
    for op in block.operations:
        if op.regions and not regions_not_run(op):
            return None
        for v in op.operands:
            last[v] = i
        i += 1
    return last


def _once_quantized(op, fn):
    """(kernel, error) of an op with quantized types, as `plan_block` plans it."""
    global _plan_for
    if _plan_for is None:
        from .quantized import plan_for as _p
        _plan_for = _p
    try:
        qplan = _plan_for(op)
    except StableHLOError as e:
        return fn, e
    if qplan is not None:
        fn = _quantized_runner(qplan, fn)
    return fn, None


def _call_used(ctx, op, name, args):
    return ctx.call(name, args)


def _call_unused(ctx, op, name, args):
    return ctx.call_discarded(name, args)


def _once_apply(ctx, op, name, fn, err, nin, x0, x1, vals):
    """A one-pass run's call of `op`'s kernel (operands x0, x1 for the common arities, else
    `vals`): its planned error raised instead, kernel errors located at the op."""
    try:
        if err is not None:
            raise err
        if nin == 2:
            return fn(ctx, op, x0, x1)
        if nin == 1:
            return fn(ctx, op, x0)
        return fn(ctx, op, *vals)
    except StableHLOError as e:
        if e.location is None:
            e.location = op.where()
        raise
    except KERNEL_ERRORS as e:
        raise InterpreterError(f"{name}: {e}", op.where()) from None


def _once_kernel(op, name, fn, results, last):
    """The kernel a one-pass run calls for `op` (whose kernel is `fn`): its quantization plan
    where a type is quantized, and for a `func.call` the callee's name read once (returned as
    the third item) with a call none of whose results is used discarded, as `_direct_call`
    makes them. Returns (kernel, error or None, callee name or None)."""
    for v in op.operands:
        t = v.type
        if (t.__class__ is not TensorType or t.element_type.__class__ is not ElementType) \
                and isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
            return (*_once_quantized(op, fn), None)
    for v in results:
        t = v.type
        if (t.__class__ is not TensorType or t.element_type.__class__ is not ElementType) \
                and isinstance(t, TensorType) and isinstance(t.element_type, QuantizedType):
            return (*_once_quantized(op, fn), None)
    if name == "func.call":
        callee = getattr(op.attributes.get("callee"), "root", None)
        if isinstance(callee, str):
            for r in results:
                if r in last:
                    return _call_used, None, callee
            return _call_unused, None, callee
    return fn, None, None


def once_bytes(t, limits):
    """For a plain tensor type (an `ElementType`, a static shape) of fewer than
    `_FREE_ELEMENTS` elements and within the tensor-size limits of `limits`: its bytes, kept
    on the type as `(limits, bytes)` (`Type._ob`, so that the next check against the same
    limits object is one comparison); None for any other type (it takes the general checks
    of `run_once`)."""
    if t.__class__ is not TensorType or t.element_type.__class__ is not ElementType:
        return None
    sb = _static_bytes(t)
    if sb is None or sb[0] >= _FREE_ELEMENTS or sb[0] > limits.max_tensor_elements \
            or sb[1] > limits.max_tensor_bytes:
        return None
    try:
        object.__setattr__(t, "_ob", (limits, sb[1]))     # (a frozen dataclass)
    except AttributeError:
        return None
    return sb[1]


def run_once(ctx, block, args, last, limits):
    """Run the body `block` of a function (without regions its kernels run, see `once_uses`)
    the first time it is called, analysing, planning and running each op in one pass: values
    live in a dict keyed by `Value` instead of frame slots, and no plan is kept. It does what
    `function_info`, `plan_block` and `Plan._interpret` do together and raises the same errors
    at the same ops (an operand not defined before its use, no kernel, a result over the
    tensor-size limits, the live values over `max_live_bytes`, a kernel's failure), and values
    of `_FREE_ELEMENTS` elements or more (or of dynamic shapes) are dropped after their last
    use, as the plan drops them."""
    env = {}
    sizes = None                 # Value -> bytes, of the large values counted in `live`
    dying = None                 # op index -> values that die after it
    # whether a value of a type other than a plain tensor (a quantized one, a tuple, a token)
    # has been defined so far: until one is, no op's operands need `_once_kernel`'s checks
    other = False
    i = 0
    for a in block.arguments:
        env[a] = args[i]
        i += 1
        t = a.type
        if t.__class__ is not TensorType or t.element_type.__class__ is not ElementType:
            other = True
        if a in last:
            sb = _static_bytes(a.type)
            if sb is None or sb[0] >= _FREE_ELEMENTS:
                if dying is None:
                    dying = {}
                dying.setdefault(last[a], []).append(a)
    kernels = KERNELS
    call_kernel = kernels.get("func.call")
    # (the regions of this body's ops are never run, see `once_uses`: an op with regions
    # takes the common path unless they are nested too deep)
    nest_ok = limits.max_nesting >= 1
    live = 0
    max_live = limits.max_live_bytes
    max_elements, max_bytes = limits.max_tensor_elements, limits.max_tensor_bytes
    for i, op in enumerate(block.operations):
        operands = op.operands
        nin = len(operands)
        # (x0, x1 and vals are set for the arity that reads them; a stale one holds a value
        # still alive, or one dropped below, where they are cleared)
        try:
            # (the common arities are passed without building a list)
            if nin == 2:
                x0 = env[operands[0]]
                x1 = env[operands[1]]
            elif nin == 1:
                x0 = env[operands[0]]
            elif nin:
                vals = [env[v] for v in operands]
            else:
                vals = []
        except KeyError:
            raise InterpreterError(f"{op.name}: operand used before it is defined",
                                   op.where()) from None
        fn = kernels.get(op.name)
        # (a terminator has no kernel)
        if fn is None and op.name in TERMINATORS:
            return [x0, x1] if nin == 2 else [x0] if nin == 1 else vals
        results = op.results
        over = None              # the results over the tensor-size limits, if any
        for r in results:
            t = r.type
            sb = t._ob
            if sb[0] is limits:
                # (a type `once_bytes` checked against these limits: counted, nothing else)
                live += sb[1]
                continue
            if once_bytes(t, limits) is not None:
                live += t._ob[1]
                continue
            if t.__class__ is TensorType:
                if t.element_type.__class__ is not ElementType:
                    other = True
                sb = getattr(t, "_sb", _MISSING)
                if sb is _MISSING:
                    sb = _static_bytes(t)
            else:
                other = True
                sb = None
            if sb is None:
                if dying is None:
                    dying = {}
                dying.setdefault(last.get(r, i), []).append(r)
                continue
            if sb[0] > max_elements or sb[1] > max_bytes:
                if over is None:
                    over = []
                over.append((t, sb))
            live += sb[1]
            if sb[0] >= _FREE_ELEMENTS:
                if dying is None:
                    dying = {}
                if sizes is None:
                    sizes = {}
                sizes[r] = sb[1]
                dying.setdefault(last.get(r, i), []).append(r)
        # (after the results loop, `r` is the op's one result where it has one)
        if fn is not None and not other and fn is not call_kernel \
                and (nest_ok or not op.regions) and over is None and live <= max_live:
            # the common op: its kernel, no planned error (`_once_apply`, in line)
            try:
                if nin == 2:
                    v = fn(ctx, op, x0, x1)
                elif nin == 1:
                    v = fn(ctx, op, x0)
                else:
                    v = fn(ctx, op, *vals)
            except StableHLOError as e:
                if e.location is None:
                    e.location = op.where()
                raise
            except KERNEL_ERRORS as e:
                raise InterpreterError(f"{op.name}: {e}", op.where()) from None
        else:
            name = op.name
            err = None
            if fn is None:
                fn = HARNESS_OPS.get(name)
                if fn is None:
                    err = NotImplementedOpError(name)
            elif other:
                fn, err, callee = _once_kernel(op, name, fn, results, last)
                if callee is not None:
                    vals = (callee, [x0, x1] if nin == 2 else [x0] if nin == 1 else vals)
                    nin = -1
            elif name == "func.call":
                # (`_once_kernel` for a call of plain types: the interpreter's call, or its
                # call_discarded where no result is used, called directly with the callee's
                # name)
                callee = getattr(op.attributes.get("callee"), "root", None)
                if isinstance(callee, str):
                    used = False
                    for q in results:
                        if q in last:
                            used = True
                            break
                    if nin == 0:
                        fn = ctx.call_without_args
                        vals = (callee, used)
                    else:
                        fn = ctx.call if used else ctx.call_discarded
                        vals = (callee, [x0, x1] if nin == 2 else [x0] if nin == 1 else vals)
                    nin = -2
            if op.regions and 1 > limits.max_nesting:
                # (as in `plan_block`: over an op's missing kernel)
                err = LimitError(f"{name}: regions nested more than {limits.max_nesting} deep",
                                 op.where(), FLAGS["max_nesting"])
            if over is not None:
                for t, sb in over:
                    if err is None:
                        try:
                            check_tensor(t.shape, 8 * sb[1] // sb[0] if sb[0] else 8,
                                         name, op.where(), limits)
                        except LimitError as e:
                            err = e
            if live > max_live and err is None:
                err = LimitError(f"{name}: the values alive at once would take {live} bytes, "
                                 f"over the limit of {max_live}", op.where(),
                                 FLAGS["max_live_bytes"])
            # (`_once_apply`, in line)
            try:
                if err is not None:
                    raise err
                if nin == 2:
                    v = fn(ctx, op, x0, x1)
                elif nin == 1:
                    v = fn(ctx, op, x0)
                elif nin == -2:
                    v = fn(vals[0], vals[1])
                else:
                    v = fn(ctx, op, *vals)
            except StableHLOError as e:
                if e.location is None:
                    e.location = op.where()
                raise
            except KERNEL_ERRORS as e:
                raise InterpreterError(f"{name}: {e}", op.where()) from None
        if len(results) == 1:
            if v.__class__ is not ND and (v.__class__ is list or (
                    v.__class__ is tuple and r.type.__class__ is not TupleType)):
                v = v[0]
            env[r] = v
        elif results:
            for r, x in zip(results, v):
                env[r] = x
        if dying is not None:
            frees = dying.pop(i, None)
            if frees is not None:
                for r in frees:
                    env.pop(r, None)
                    if sizes is not None:
                        live -= sizes.get(r, 0)
                x0 = x1 = vals = None      # (nor kept alive here)
    raise InterpreterError("block has no terminator")


def run_once_framed(ctx, block, info, frame, args, limits):
    """`run_once` for a function body with regions: the values are kept in the function's
    frame (`info` is its `function_info`, `ctx` runs with `frame` and `info` as the frame
    and analysis of the function running now), so that the blocks of its regions, planned
    the general way when their ops' kernels run them, read them there. The block is marked
    with a plan that holds only what the plans of those blocks read from their parent (the
    live bytes after each op, so far); its next run plans it."""
    slots = info.slots
    last_use = info.last_use
    bad = info.bad_uses
    kernels = KERNELS
    p = Plan()
    p.block = block
    p.nops = -1                  # never matches: the next run plans the block
    p.limits = limits
    p.info = info
    p.live_after = live_after = []
    p.runs = 0
    p.code = None
    p.compilable = False
    p.steps = p.term_slots = p.arg_slots = None
    block._cache = p
    sizes = None                 # slot -> bytes, of the large values counted in `live`
    dying = None                 # op index -> slots cleared after it
    i = 0
    for a in block.arguments:
        frame[slots[a]] = args[i]
        i += 1
        if a in last_use:
            sb = _static_bytes(a.type)
            if sb is None or sb[0] >= _FREE_ELEMENTS:
                if dying is None:
                    dying = {}
                dying.setdefault(last_use[a], []).append(slots[a])
    live = 0
    max_live = limits.max_live_bytes
    max_elements, max_bytes = limits.max_tensor_elements, limits.max_tensor_bytes
    i = -1
    for op in block.operations:
        i += 1
        name = op.name
        if bad and op in bad:
            raise InterpreterError(f"{name}: operand used before it is defined", op.where())
        operands = op.operands
        nin = len(operands)
        x0 = x1 = vals = None
        # (the common arities are passed without building a list)
        if nin == 2:
            x0 = frame[slots[operands[0]]]
            x1 = frame[slots[operands[1]]]
        elif nin == 1:
            x0 = frame[slots[operands[0]]]
        else:
            vals = [frame[slots[v]] for v in operands]
        if name in TERMINATORS:
            return [x0, x1] if nin == 2 else [x0] if nin == 1 else vals
        results = op.results
        fn = kernels.get(name)
        err = None
        if fn is None:
            fn = HARNESS_OPS.get(name)
            if fn is None:
                err = NotImplementedOpError(name)
        else:
            fn, err, callee = _once_kernel(op, name, fn, results, last_use)
            if callee is not None:
                vals = (callee, [x0, x1] if nin == 2 else [x0] if nin == 1 else vals)
                nin = -1
        if op.regions and 1 > limits.max_nesting:
            # (as in `plan_block`: over an op's missing kernel, not over a use before definition)
            err = LimitError(f"{name}: regions nested more than {limits.max_nesting} deep",
                             op.where(), FLAGS["max_nesting"])
        for r in results:
            t = r.type
            if t.__class__ is TensorType:
                sb = getattr(t, "_sb", _MISSING)
                if sb is _MISSING:
                    sb = _static_bytes(t)
            else:
                sb = None
            if sb is None:
                if dying is None:
                    dying = {}
                dying.setdefault(last_use.get(r, i), []).append(slots[r])
                continue
            if err is None and (sb[0] > max_elements or sb[1] > max_bytes):
                try:
                    check_tensor(t.shape, 8 * sb[1] // sb[0] if sb[0] else 8,
                                 name, op.where(), limits)
                except LimitError as e:
                    err = e
            live += sb[1]
            if sb[0] >= _FREE_ELEMENTS:
                if dying is None:
                    dying = {}
                if sizes is None:
                    sizes = {}
                s = slots[r]
                sizes[s] = sb[1]
                dying.setdefault(last_use.get(r, i), []).append(s)
        if live > max_live and err is None:
            err = LimitError(f"{name}: the values alive at once would take {live} bytes, "
                             f"over the limit of {max_live}", op.where(),
                             FLAGS["max_live_bytes"])
        frees = dying.pop(i, None) if dying is not None else None
        if frees is not None and sizes is not None:
            for s in frees:
                live -= sizes.get(s, 0)
        live_after.append(live)
        v = _once_apply(ctx, op, name, fn, err, nin, x0, x1, vals)
        n = len(results)
        if n == 1:
            r = results[0]
            if v.__class__ is list or (v.__class__ is tuple and r.type.__class__ is not TupleType):
                v = v[0]
            frame[slots[r]] = v
        elif n:
            for r, x in zip(results, v):
                frame[slots[r]] = x
        if frees is not None:
            for s in frees:
                frame[s] = None
            x0 = x1 = vals = None      # (nor kept alive here)
    raise InterpreterError("block has no terminator")


# ------------------------------------------------------------------ fast forms
# ops whose regions run on values of the declared types (not applied elementwise over whole
# arrays, as the bodies of reduce, sort, scatter, map, ... are)
_EXACT_REGIONS = frozenset(("stablehlo.while", "stablehlo.if", "stablehlo.case", "scf.for",
                            "chlo.scan", "stablehlo.async_start", "stablehlo.optimization_barrier"))


def _values_of_declared_types(block, info) -> bool:
    """Whether the values of `block` have their declared types when it runs: it is the
    function body or the region of control flow, and so is every enclosing block."""
    par = info.parent.get(block)
    while par is not None:
        pb, i = par
        if pb.operations[i].name not in _EXACT_REGIONS:
            return False
        par = info.parent.get(pb)
    return True

_NATIVE = frozenset(("f16", "f32", "f64", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32",
                     "ui64"))
_OPERATORS = {"stablehlo.add": operator.add, "stablehlo.subtract": operator.sub,
              "stablehlo.multiply": operator.mul}


def _add_first_nan(a, b):
    """`a + b` of rank-0 floats keeping the first operand's NaN payload, as the kernel's ufunc
    does, where numpy's scalar `+` keeps the second's: two numpy scalars added the other way
    round (the same sum otherwise: IEEE addition commutes, signed zeros included)."""
    if a.__class__ is _ND or b.__class__ is _ND:
        return a + b             # (a 0-d array among them: the ufunc)
    return b + a


def _mul_first_nan(a, b):
    """`a * b` as `_add_first_nan` adds."""
    if a.__class__ is _ND or b.__class__ is _ND:
        return a * b
    return b * a


_ND = np.ndarray
_PAIRS = (("stablehlo.add", "add", operator.add, _add_first_nan),
          ("stablehlo.multiply", "multiply", operator.mul, _mul_first_nan),
          ("stablehlo.subtract", "subtract", operator.sub, None),
          ("stablehlo.divide", "divide", operator.truediv, None))
# (op name, dtype char) -> the Python operator a rank-0 float op of that type runs as (absent:
# none gives the kernel's NaN payloads, and the kernel runs)
_RANK0_FLOAT_OPERATORS = {}
for _name, _short, _pyop, _swapped in _PAIRS:
    for _t in "efd":
        _order = SCALAR_NAN_ORDER.get((_short, _t))
        if _order == "same":
            _RANK0_FLOAT_OPERATORS[(_name, _t)] = _pyop
        elif _order == "swapped" and _swapped is not None:
            _RANK0_FLOAT_OPERATORS[(_name, _t)] = _swapped
del _name, _short, _pyop, _swapped, _t, _order
_BITWISE = {"stablehlo.and": operator.and_, "stablehlo.or": operator.or_,
            "stablehlo.xor": operator.xor}
_CMP = {"EQ": operator.eq, "NE": operator.ne, "LT": operator.lt, "LE": operator.le,
        "GT": operator.gt, "GE": operator.ge}
_SELECT = "select"
_WHERE = "where"


# comparisons of i1 values (numpy orders False < True, as the kernel does) by bitwise operators:
# numpy's bool scalars compare with ==, <, ... through a slow path (about 0.5 us each), while
# ^, & and | on them cost what an integer add does; the results are the same numpy bools
def _eq_i1(a, b):
    return a ^ b ^ True


def _lt_i1(a, b):
    return (a ^ True) & b


def _le_i1(a, b):
    return (a ^ True) | b


def _gt_i1(a, b):
    return a & (b ^ True)


def _ge_i1(a, b):
    return a | (b ^ True)


_CMP_I1 = {"EQ": _eq_i1, "NE": operator.xor, "LT": _lt_i1, "LE": _le_i1, "GT": _gt_i1,
           "GE": _ge_i1}


def _etname(t):
    if t.__class__ is not TensorType or t.element_type.__class__ is not ElementType:
        return None
    return t.element_type.name


def _fast_form(op):
    """A Python operator function (`operator.add`, ...) that computes the binary op exactly as
    its kernel does for operands of the result's own native dtype, `_SELECT` for a select of
    rank-0 values, or None."""
    name = op.name
    ops = op.operands
    if len(op.results) != 1:
        return None
    rt = op.results[0].type
    r = _etname(rt)
    if r is None:
        return None
    if name in _OPERATORS:
        if r in _NATIVE and _etname(ops[0].type) == r and _etname(ops[1].type) == r:
            if r.startswith("f") and rt.shape == ():
                # rank-0 floats may be numpy scalars, whose operators can keep another NaN
                # payload than the kernel's ufunc (see `numerics.SCALAR_NAN_ORDER`)
                return _RANK0_FLOAT_OPERATORS.get((name, rt.element_type.dtype.char))
            return _OPERATORS[name]
        return None
    if name == "stablehlo.divide":
        # floats only: integer division truncates, and has the spec's cases for 0 and -1
        if r in _NATIVE and r.startswith("f") and _etname(ops[0].type) == r \
                and _etname(ops[1].type) == r:
            if rt.shape == ():
                return _RANK0_FLOAT_OPERATORS.get((name, rt.element_type.dtype.char))
            return operator.truediv
        return None
    if name in _BITWISE:
        if (r == "i1" or r in _NATIVE and not r.startswith("f")) and \
                _etname(ops[0].type) == r and _etname(ops[1].type) == r:
            return _BITWISE[name]
        return None
    if name == "stablehlo.compare":
        a = _etname(ops[0].type)
        if a is None or _etname(ops[1].type) != a or r != "i1":
            return None
        direction = op.attributes["comparison_direction"].value
        ct = op.attributes.get("compare_type")
        ctype = ct.value if ct is not None else None
        if direction not in _CMP:
            return None
        if a.startswith("f"):
            ok = a in _NATIVE and ctype != "TOTALORDER"
        elif a == "i1":
            return _CMP_I1[direction]
        else:
            ok = a in _NATIVE and not (ctype == "UNSIGNED" and a.startswith("i")
                                       or ctype == "SIGNED" and a.startswith("ui"))
        return _CMP[direction] if ok else None
    if name == "stablehlo.select":
        if len(ops) != 3 or ops[0].type.__class__ is not TensorType \
                or _etname(ops[1].type) != r or _etname(ops[2].type) != r:
            return None
        if ops[0].type.shape == () and rt.shape == ():
            return _SELECT
        shape = rt.shape
        if shape and None not in shape and tuple(ops[0].type.shape) == tuple(shape) \
                and tuple(ops[1].type.shape) == tuple(shape) \
                and tuple(ops[2].type.shape) == tuple(shape):
            return _WHERE
        return None
    return None


def _compile(plan: Plan, ctx):
    """One function `_block(ctx, f, a)` for the plan's steps: a chain of closures, one per op,
    each with its kernel, op, operand and result slots bound (no code is generated or
    evaluated; see `_Emitter`). An error is located at the op whose closure raised."""
    em = _Emitter(ctx, plan.info)
    block = plan.block
    local_ops = {id(st[0]) for st in plan.steps}
    last_use = plan.info.last_use

    def dies(v, i):
        """Whether value `v` of this block is last used by its step i."""
        owner = v.owner
        if owner is not block and id(owner) not in local_ops:
            return False
        return last_use.get(v, -1) == i
    em.dead_when_run = _loop_dead_slots(block, plan.info)
    em.invariant = _loop_invariant_slots(block, plan.info)
    em.emit_steps(plan.steps, None, None, (), None, dies)
    if plan.term_slots is not None:
        em.reads.update(plan.term_slots)
    runners, ops, preload = em.finish()
    nrunners = len(runners)
    arg_slots = plan.arg_slots
    term = plan.term_slots
    length_hint = operator.length_hint
    if preload:
        # known values are stored once per frame (nothing else writes their slots); a slot
        # of the frame's own, holding this compiled block's token, says they have been (a
        # value in a preloaded slot says nothing: the interpreted tier that ran the block
        # before it was compiled stored the same constants, but not those of the calls
        # inlined here, which it ran in frames of their own)
        mark = plan.info.nslots
        plan.info.nslots += 1
        em.need = plan.info.nslots
        token = object()
    else:
        mark, token = 0, None
    need = em.need

    def _block(ctx, f, a, take=False):
        if len(f) < need:            # a frame made before calls were inlined into this block
            f.extend([None] * (need - len(f)))
        if preload and f[mark] is not token:
            for s, v in preload:
                f[s] = v
            f[mark] = token
        i = 0
        for s in arg_slots:
            f[s] = a[i]
            i += 1
        if take:
            a.clear()
        it = iter(runners)
        try:
            for r in it:
                r(ctx, f)
        except StableHLOError as e:
            op = _failed_op(ops[nrunners - length_hint(it) - 1], e)
            if e.location is None:
                e.location = op.where()
            raise
        except KERNEL_ERRORS as e:
            op = _failed_op(ops[nrunners - length_hint(it) - 1], e)
            raise InterpreterError(f"{op.name}: {e}", op.where()) from None
        if term is None:
            raise InterpreterError("block has no terminator")
        return [f[s] for s in term]
    _block.parts = (runners, ops, preload, arg_slots, term, need, frozenset(em.reads))
    return _block


def fused_while(ctx, op, f, cplan, bplan):
    """The rest of a `while` loop whose condition and body are compiled blocks (`cplan`,
    `bplan`) running on frame `f`: a function `loop(vals) -> vals` that binds the loop values
    and runs both blocks' runners in one Python loop, the body's results stored straight into
    the argument slots of both blocks (no argument or result lists, no block calls per
    iteration). It counts iterations against the limits, and locates errors, as the separate
    blocks do; it holds no reference of its own to a loop value while the body runs (updates in
    place see the same holders). None where either block is not compiled.

    What does not depend on the frame or the run is worked out once per loop op and pair of
    compiled blocks and kept on the op (a loop entered again, as an inner loop is on every
    iteration of an outer one, only binds its frame: about 20 us less per entry)."""
    ccode, bcode = cplan.code, bplan.code
    c = op_cache(op)
    hit = c.get("fused_while")
    if hit is not None and hit[0] is ccode and hit[1] is bcode:
        make = hit[2]
    else:
        make = _fused_while_maker(op, ccode, bcode)
        c["fused_while"] = (ccode, bcode, make)
    return None if make is None else make(ctx, f)


def _fused_while_maker(op, ccode, bcode):
    """`fused_while`'s work that depends on neither the frame nor the run: a function
    `make(ctx, f) -> loop`, or None where either block is not compiled."""
    cparts = getattr(ccode, "parts", None)
    bparts = getattr(bcode, "parts", None)
    if cparts is None or bparts is None:
        return None
    crun, cops, cpre, cargs, cterm, cneed, creads = cparts
    brun, bops, bpre, bargs, bterm, bneed, _ = bparts
    n = len(bargs)
    if cterm is None or len(cterm) != 1 or bterm is None or len(bterm) != n \
            or len(cargs) != n or n == 0:
        return None
    ct = cterm[0]
    need = max(cneed, bneed)
    preload = cpre + bpre
    # the body's results go to both blocks' argument slots (read all, then store: a result
    # may be a body argument itself)
    # (skipped: condition arguments the condition never reads, which are cleared once, and body
    # arguments the body returns unchanged in place)
    targets = tuple((s, k) for k, s in enumerate(cargs) if s in creads) \
        + tuple((s, k) for k, s in enumerate(bargs) if bterm[k] != s)
    unread = tuple(s for s in cargs if s not in creads)
    first = tuple((s, k) for k, s in enumerate(cargs) if s in creads) \
        + tuple((s, k) for k, s in enumerate(bargs))
    if n == 1:
        t0 = bterm[0]

        def results(f):
            return (f[t0],)
    else:
        results = operator.itemgetter(*bterm)
    # a condition that is one binary step (`i < n`) is computed in the loop itself
    step = getattr(crun[0], "step", None) if len(crun) == 1 else None
    if step is not None and step[2] >= 0 and step[3] == -1 and step[4] == ct:
        # its operands that are the condition's arguments are read from the body's argument
        # slots, which hold the same values when it runs: the condition's are not stored
        carg = {s: bargs[k] for k, s in enumerate(cargs)}
        fn, ca, cb = step[:3]
        targets = tuple((s, k) for k, s in enumerate(bargs) if bterm[k] != s)
        first = tuple((s, k) for k, s in enumerate(bargs))
        return _fused_binary_cond_maker(op, (fn, carg.get(ca, ca), carg.get(cb, cb)),
                                        brun, bops, crun, cops, need, preload, first,
                                        tuple(cargs), targets, results, bargs, bterm)

    # (the results moved slot to slot where none is stored over another's source)
    dsts = {s for s, _ in targets}
    pairs = None if any(bterm[k] in dsts for _, k in targets) \
        else tuple((s, bterm[k]) for s, k in targets)
    return lambda ctx, f: _fused_loop(ctx, op, f, crun, cops, brun, bops, ct, need, preload,
                                      first, unread, targets, results, pairs, bargs)


def _fused_loop(ctx, op, f, crun, cops, brun, bops, ct, need, preload, first, unread, targets,
                results, pairs, bargs):
    """`fused_while`'s loop on frame `f` for a condition of any compiled steps."""
    length_hint = operator.length_hint
    BOOL = np.bool_
    max_steps = ctx.max_steps
    tick = ctx.tick

    def loop(vals):
        if len(f) < need:
            f.extend([None] * (need - len(f)))
        for s, v in preload:
            f[s] = v
        for s, k in first:
            f[s] = vals[k]
        for s in unread:
            f[s] = None
        vals.clear()
        it = None
        body = False
        try:
            while True:
                body = False
                it = iter(crun)
                for r in it:
                    r(ctx, f)
                it = None
                c = f[ct]
                if not (bool(c) if c.__class__ is BOOL else bool(np.asarray(c).reshape(()))):
                    break
                steps = ctx.steps = ctx.steps + 1
                if steps > max_steps or ctx.deadline is not None:
                    tick(op, counted=True)
                body = True
                it = iter(brun)
                for r in it:
                    r(ctx, f)
                it = None
                if pairs is not None:
                    for s, k in pairs:
                        f[s] = f[k]
                    continue
                t = results(f)
                for s, k in targets:
                    f[s] = t[k]
                t = None
        except StableHLOError as e:
            if it is not None and e.location is None:
                rs, os_ = (brun, bops) if body else (crun, cops)
                e.location = _failed_op(os_[len(rs) - length_hint(it) - 1], e).where()
            raise
        except KERNEL_ERRORS as e:
            if it is None:
                raise
            rs, os_ = (brun, bops) if body else (crun, cops)
            bad = _failed_op(os_[len(rs) - length_hint(it) - 1], e)
            raise InterpreterError(f"{bad.name}: {e}", bad.where()) from None
        return [f[s] for s in bargs]
    return loop


def _fused_binary_cond_maker(op, cond, brun, bops, crun, cops, need, preload, first,
                             unread, targets, results, bargs, bterm=None):
    """`make(ctx, f)` of `_fused_binary_cond_loop`, the slot moves worked out once."""
    pairs = None
    if bterm is not None:
        dsts = {s for s, _ in targets}
        if not any(bterm[k] in dsts for _, k in targets):
            pairs = tuple((s, bterm[k]) for s, k in targets)
    return lambda ctx, f: _fused_binary_cond_loop(ctx, op, f, cond, brun, bops, crun, cops,
                                                  need, preload, first, unread, targets,
                                                  results, bargs, pairs)


def _fused_binary_cond_loop(ctx, op, f, cond, brun, bops, crun, cops, need, preload, first,
                            unread, targets, results, bargs, pairs):
    """`fused_while`'s loop for a condition of one binary step `fn(f[a], f[b])` (its value
    is not stored: only the condition's terminator reads it). Where no body result is
    stored into a slot another result is read from, the results are moved slot to slot
    (`pairs`), without a tuple of them."""
    fn, ca, cb = cond
    length_hint = operator.length_hint
    BOOL = np.bool_
    max_steps = ctx.max_steps
    tick = ctx.tick

    def loop(vals):
        if len(f) < need:
            f.extend([None] * (need - len(f)))
        for s, v in preload:
            f[s] = v
        for s, k in first:
            f[s] = vals[k]
        for s in unread:
            f[s] = None
        vals.clear()
        it = None
        stage = 0                    # 0: the condition, 1: between blocks, 2: the body
        try:
            while True:
                stage = 0
                c = fn(f[ca], f[cb])
                if not (bool(c) if c.__class__ is BOOL else bool(np.asarray(c).reshape(()))):
                    break
                stage = 1
                steps = ctx.steps = ctx.steps + 1
                if steps > max_steps or ctx.deadline is not None:
                    tick(op, counted=True)
                stage = 2
                it = iter(brun)
                for r in it:
                    r(ctx, f)
                stage = 1
                if pairs is not None:
                    for s, k in pairs:
                        f[s] = f[k]
                    continue
                t = results(f)
                for s, k in targets:
                    f[s] = t[k]
                t = None
        except StableHLOError as e:
            if e.location is None:
                if stage == 2:
                    e.location = _failed_op(bops[len(brun) - length_hint(it) - 1], e).where()
                elif stage == 0:
                    e.location = _failed_op(cops[0], e).where()
            raise
        except KERNEL_ERRORS as e:
            if stage == 2:
                bad = _failed_op(bops[len(brun) - length_hint(it) - 1], e)
            elif stage == 0:
                bad = _failed_op(cops[0], e)
            else:
                raise
            raise InterpreterError(f"{bad.name}: {e}", bad.where()) from None
        return [f[s] for s in bargs]
    return loop


def _loop_dead_slots(block, info):
    """For the body of a `while`: the slots of its condition's arguments (they hold the values
    the body receives, and are not read again before the condition binds them anew); None for
    any other block."""
    par = info.parent.get(block)
    if par is None:
        return None
    op = par[0].operations[par[1]]
    if op.name != "stablehlo.while" or len(op.regions) != 2 or not op.regions[1].blocks \
            or op.regions[1].blocks[0] is not block or not op.regions[0].blocks:
        return None
    slots = info.slots
    return tuple(slots[a] for a in op.regions[0].blocks[0].arguments if a in slots)


def _loop_invariant_slots(block, info):
    """For the body of a `while`: the slots of its arguments that it returns unchanged in the
    same position (the loop hands the same value, the same object, to every iteration); an
    empty set for any other block."""
    par = info.parent.get(block)
    if par is None:
        return set()
    op = par[0].operations[par[1]]
    if op.name != "stablehlo.while" or len(op.regions) != 2 or not op.regions[1].blocks \
            or op.regions[1].blocks[0] is not block or not block.operations:
        return set()
    term = block.operations[-1]
    slots = info.slots
    return {slots[a] for a, v in zip(block.arguments, term.operands) if a is v and a in slots}


# an op of a Python operator or a select (which joins a sequence of such steps) is kept
# while its loop-invariant operands stay the same (`_memo_runner`) where its result has at
# least this many elements: below that the operator costs about what the check does
_MEMO_FAST_ELEMENTS = 256


def _memo_worth(op) -> bool:
    """Whether the result of `op` (one static tensor) is large enough for `_memo_runner`
    to pay where the op would otherwise run as one step of a sequence."""
    if len(op.results) != 1:
        return False
    sb = _static_bytes(op.results[0].type)
    return sb is not None and sb[0] >= _MEMO_FAST_ELEMENTS


def _memo_runner(run, ins, out):
    """An op whose operands are loop-invariant: its result is kept and stored again while its
    operand objects are the ones it was computed from (it holds them, so no update in place
    can write into them meanwhile); otherwise it runs."""
    state = [_NOTHING, None]
    out_of = run

    if len(ins) == 1:
        a, = ins

        def memo1(ctx, f):
            x = f[a]
            if x is state[0]:
                f[out] = state[1]
                return
            out_of(ctx, f)
            state[0] = x
            state[1] = f[out]
        return memo1

    def memo(ctx, f):
        xs = [f[s] for s in ins]
        last = state[0]
        if last is not _NOTHING:
            i = 0
            for x in xs:
                if x is not last[i]:
                    break
                i += 1
            else:
                f[out] = state[1]
                return
        out_of(ctx, f)
        state[0] = xs
        state[1] = f[out]
    return memo


def _failed_op(op, e):
    """The op that raised `e`: `op`, or for a merged sequence of ops (a list) the one its
    runner recorded on the exception."""
    if op.__class__ is list:
        return op[getattr(e, "_stablehlo_sequence_index", 0)]
    return op


def _picker(fn, op):
    """select of rank-0 values as a function `pick(ctx, c, a, b)` (for a sequence of steps):
    a numpy bool picks the numpy scalar itself, as `_select_runner` does; where an operand is
    an array (a rank-0 one, as `reshape` of a one-element `dynamic_slice` gives) and both
    are numpy values of one dtype and shape, a new array of the value it picks (what the
    kernel's `where` computes); anything else takes the kernel."""
    BOOL, ND, GEN = np.bool_, np.ndarray, np.generic
    array = np.array

    def pick(ctx, c, a, b):
        if c.__class__ is BOOL:
            if a.__class__ is not ND and b.__class__ is not ND:
                return a if c else b
            if isinstance(a, (ND, GEN)) and isinstance(b, (ND, GEN)) and a.dtype is b.dtype \
                    and a.shape == b.shape:
                return array(a if c else b)
        v = fn(ctx, op, c, a, b)
        return v[0] if v.__class__ in _SEQ else v
    return pick


# a select of arrays of at most this many elements (of a native type) copies its false
# operand and puts the true one in where the predicate holds (`np.putmask`): at these sizes
# that costs less than numpy's `where` (about 0.9 against 1.5 us for 400 float32 elements);
# from about 4096 elements on, `where` is as fast or faster
_PUTMASK_ELEMENTS = 1024

# the number of true elements of a predicate array (numpy's C function: `np.count_nonzero`'s
# Python wrapper costs three times as much on small arrays)
try:
    from numpy._core.multiarray import count_nonzero as _count_true
except ImportError:              # (numpy 1.x)
    try:
        from numpy.core.multiarray import count_nonzero as _count_true
    except ImportError:
        _count_true = np.count_nonzero


def _array_select(op):
    """The select of arrays of one static shape (`_WHERE`) as a function `sel(c, a, b)` of
    three numpy arrays: numpy's `where` cast to the operands' dtype, as the kernel computes it;
    for a small result of a native type whose operands have one dtype, a copy of `b` with
    `a` put in where `c` holds (the same values, bit for bit: no value is converted)."""
    where = np.where

    def sel_where(c, a, b):
        v = where(c, a, b)
        if v.dtype is not a.dtype and v.dtype != a.dtype:
            v = v.astype(a.dtype)
        return v
    if not _putmask_select(op):
        return sel_where
    putmask = np.putmask
    count = _count_true

    def sel(c, a, b):
        if a.dtype is b.dtype:
            # a predicate all false or all true selects one operand whole: that array
            # itself (its values are the select's; no update in place writes into an array
            # another slot holds)
            k = count(c)
            if k == 0:
                return b
            if k == c.size:
                return a
            v = b.copy()
            putmask(v, c, a)
            return v
        return sel_where(c, a, b)
    return sel


def _putmask_select(op) -> bool:
    """Whether `_array_select` selects by `np.putmask` into a copy of the false operand (a
    small result of a native type)."""
    rt = op.results[0].type
    n = 1
    for d in rt.shape:
        n *= d
    return n <= _PUTMASK_ELEMENTS and (_etname(rt) in _NATIVE or _etname(rt) == "i1")


def _wherer(fn, op):
    """`_where_runner` as a function `where(ctx, c, a, b)` (for a sequence of steps)."""
    ND = np.ndarray
    sel = _array_select(op)

    def where_(ctx, c, a, b):
        if c.__class__ is ND and a.__class__ is ND and b.__class__ is ND:
            return sel(c, a, b)
        v = fn(ctx, op, c, a, b)
        return v[0] if v.__class__ in _SEQ else v
    return where_


def _bind_kernel(fn, op):
    """A kernel with its op bound, `k(ctx, x)` or `k(ctx, x, y)` (for a sequence of steps;
    the interpreter is the one running the sequence)."""
    if fn.__code__.co_argcount == 3:
        def unary(ctx, x):
            return fn(ctx, op, x)
        return unary

    def binary(ctx, x, y):
        return fn(ctx, op, x, y)
    return binary


# modules whose specialized kernels of one or two operands may run in a merged sequence
_SEQUENCE_MODULES = frozenset(("elementwise", "movement"))


def _sequence_kernel(op, fn) -> bool:
    """Whether `fn`, the specialized kernel of an elementwise or data-movement op with one
    result, takes (ctx, op) and each operand as a positional argument (such a kernel returns
    its value, never a list: its fallback is the op's general kernel, which returns one array
    too)."""
    code = getattr(fn, "__code__", None)
    if code is None or code.co_argcount != 2 + len(op.operands) or code.co_flags & 0x0C \
            or fn.__module__.rsplit(".", 1)[-1] not in _SEQUENCE_MODULES \
            or len(op.results) != 1 or op.regions:
        return False
    for v in (*op.operands, op.results[0]):
        t = v.type
        if t.__class__ is not TensorType or t.element_type.__class__ is not ElementType:
            return False
    return True


def _sequence_runner(seq):
    """Several steps in one loop (a loop iteration costs less than a closure call): entries
    (fn, a, b, c, out) store `f[out] = fn(f[a], f[b])` (c == -1: a Python operator),
    `fn(ctx, f[a], f[b], f[c])` (c >= 0: `_picker`, `_wherer`), or for a bound kernel (c == -2,
    `_bind_kernel`) `fn(ctx, f[a])` (b < 0) or `fn(ctx, f[a], f[b])`. Entries of seven items
    (fn, a, b, c, out, kind, op) name their kind (`_SEQ_KINDS`): a kernel called with its op
    (`fn(ctx, op, f[a])`, `fn(ctx, op, f[a], f[b])`: no bound closure's frame), or a select of
    rank-0 values whose picking of a numpy scalar runs in the loop itself (`fn`, its `_picker`,
    takes anything else)."""
    n = len(seq)
    length_hint = operator.length_hint
    if any(e[3] != -1 for e in seq):
        return _mixed_sequence_runner(seq)
    kinds = tuple((0, e[0], e[1], e[2], -1, e[4], None) for e in seq)
    seq = tuple((e[0], e[1], e[2], e[4]) for e in seq)
    gen = [None, 0]          # the generated runner (False: none can be), runs so far

    def run_sequence(ctx, f):
        g = gen[0]
        if g:
            try:
                g(ctx, f)
                return
            except Exception as e:
                _tag_generated(e, g)
                raise
        if g is None:
            _count_runs(gen, kinds)
        it = iter(seq)
        try:
            for fn, a, b, out in it:
                f[out] = fn(f[a], f[b])
        except Exception as e:
            try:
                e._stablehlo_sequence_index = n - length_hint(it) - 1
            except AttributeError:
                pass
            raise
    return run_sequence


# the kinds of a merged sequence's entries (see `_mixed_sequence_runner`)
_SEQ_KINDS = {"operator": 0, "kernel": 3, "select": 1, "call3": 2, "putmask": 7, "fused": 8,
              "putmask_in_place": 9, "call": 10}


def _selects_in_place(entries, indices, readers, dropped):
    """The entries of a merged sequence (`indices`: their runner indices), with each select of
    small arrays (`putmask`) whose false operand is made earlier in the sequence and read by
    nothing else of the block (`readers`: slot -> the indices of the runners that read it;
    `dropped`: runners that do not run) marked `putmask_in_place`: where, when it runs, the
    false operand's array is held by its slot alone (its reference count says so; a view of
    it holds it too), the true operand is put into that array itself, no copy (the same
    values: nothing else sees that array, and nothing reads it after)."""
    made = set()
    out = list(entries)
    for i, e in enumerate(entries):
        if len(e) == 7 and e[5] == "putmask" and e[3] >= 0:
            y = e[3]
            if y in made and y != e[1] and y != e[2] and y != e[4] \
                    and {r for r in readers.get(y, ()) if r not in dropped} == {indices[i]}:
                out[i] = e[:5] + ("putmask_in_place",) + e[6:]
        made.add(e[4])
    return tuple(out)


_SCALAR_OPERAND_OPS = (operator.add, operator.sub, operator.mul)


def _scalar_operands(entries, ops, indices, readers, dropped):
    """(entries, ops, indices) of a merged sequence with each Python-operator step (add,
    subtract, multiply) of an array and a `broadcast_in_dim` of a rank-0 value made in the
    sequence, that nothing else reads, run on the rank-0 value itself (numpy broadcasts it:
    the same elementwise op of the same values in the same operand order, the same dtype and
    shape), and that broadcast dropped. `readers`: slot -> the runner indices that read it,
    `dropped`: runners that do not run (see `_selects_in_place`)."""
    made = {}                        # slot -> position of the rank-0 broadcast making it
    for i, e in enumerate(entries):
        if len(e) == 7 and e[5] == "kernel" and e[2] < 0 and e[6] is not None \
                and e[6].name == "stablehlo.broadcast_in_dim":
            op = e[6]
            xt, rt = op.operands[0].type, op.results[0].type
            if getattr(xt, "shape", None) == () and getattr(rt, "shape", ()) != () \
                    and xt.__class__ is TensorType and rt.__class__ is TensorType \
                    and xt.encoding is None and rt.encoding is None \
                    and xt.element_type.__class__ is ElementType:
                made[e[4]] = i
    if not made:
        return entries, ops, indices
    out = list(entries)
    gone = set()
    for i, e in enumerate(entries):
        if e[3] != -1 or e[0] not in _SCALAR_OPERAND_OPS or e[1] == e[2]:
            continue
        a, b = e[1], e[2]
        ja, jb = made.get(a), made.get(b)
        if (ja is None) == (jb is None):
            continue                 # (neither, or both: the result must be an array)
        slot, j = (a, ja) if ja is not None else (b, jb)
        if j > i or {r for r in readers.get(slot, ()) if r not in dropped} != {indices[i]}:
            continue
        x = entries[j][1]
        if any(entries[k][4] == x for k in range(j + 1, i)):
            continue                 # (the rank-0 value's slot stored anew meanwhile)
        out[i] = (e[0], x if slot == a else a, x if slot == b else b) + tuple(e[3:])
        gone.add(j)
    keep = [i for i in range(len(entries)) if i not in gone]
    return (tuple(out[i] for i in keep), [ops[i] for i in keep],
            tuple(indices[i] for i in keep))


def _sequence_kind(e):
    """(kind code, fn, a, b, c, out, op) of a sequence entry, for `_mixed_sequence_runner`."""
    fn, a, b, c, out = e[:5]
    op = e[6] if len(e) > 6 else None
    kind = e[5] if len(e) > 5 else None
    if c == -1:
        return (0, fn, a, b, c, out, op)
    if kind == "kernel":
        return (3 if b < 0 else 4, fn, a, b, c, out, op)
    if kind == "select":
        return (1, fn, a, b, c, out, op)
    if kind == "putmask":
        return (7, fn, a, b, c, out, op)
    if kind == "fused":
        return (8, fn, a, b, c, out, op)
    if kind == "putmask_in_place":
        return (9, fn, a, b, c, out, op)
    if kind == "call":
        return (10 if b < 0 else 11, fn, a, b, c, out, op)
    if c >= 0:
        return (2, fn, a, b, c, out, op)
    return (5 if b < 0 else 6, fn, a, b, c, out, op)


def _probe_refs(f):
    x = f[0]
    return sys.getrefcount(x)


def _refcount_never_alone(x):
    return 1 << 30


# The in-place runners below count an array's references the way CPython 3.10-3.13 does: a
# local loaded from a frame slot, plus getrefcount's argument, plus the slot itself, is 3 for an
# array nothing else holds. Where an interpreter counts otherwise (3.14 borrows references on
# its stack), that arithmetic could take a shared array for an unshared one; there the count is
# never taken as "alone" and every update makes its copy, as the general path does.
_refcount = sys.getrefcount if _probe_refs([np.empty(1)]) == 3 else _refcount_never_alone


def _tag_generated(e, g):
    """Records on exception `e` the step of generated sequence `g` that raised it."""
    try:
        e._stablehlo_sequence_index = g.index(e)
    except AttributeError:
        pass


def _count_runs(gen, seq):
    """Counts a run of a merged sequence's runner (`gen`: [generated runner or None or
    False, runs]); on its `sequence_codegen.GENERATE_AFTER`-th run the sequence is written
    as straight-line Python, which runs it from its next run on."""
    gen[1] += 1
    if gen[1] >= sequence_codegen.GENERATE_AFTER:
        got = None
        if sequence_codegen.ENABLED:
            try:
                got = sequence_codegen.generated_sequence(seq, _SEQUENCE_ENV)
            except (SyntaxError, ValueError, TypeError, RecursionError, MemoryError):
                got = None   # (a source the compiler refuses: the list runner, as before)
        gen[0] = got if got is not None else False


def _mixed_sequence_runner(seq):
    """`_sequence_runner` with kernels or selects among its entries: per entry a kind code
    (0: a Python operator, 1: a select of rank-0 values, 2: a function of ctx and three
    operands, 3/4: a kernel of one/two operands called with its op, 5/6: a bound kernel of
    one/two operands, 7: a select of small arrays, `_array_select`'s copy of the false
    operand with the true one put in, made in the loop where all three are arrays and both
    operands have one dtype, else by `fn`, its `_wherer`; 8: a step of several ops made one,
    `fn(ctx, f, f[a])`, see `jax_idioms`; 9: kind 7 with the true operand put into the
    false operand's own array, see `_selects_in_place`; 10/11: any other kernel of one/two
    operands called with its op, the one value of a list it returns stored)."""
    n = len(seq)
    length_hint = operator.length_hint
    seq = tuple(_sequence_kind(e) for e in seq)
    BOOL, ND = np.bool_, np.ndarray
    putmask = np.putmask
    refcount = _refcount
    count = _count_true
    gen = [None, 0]          # the generated runner (False: none can be), runs so far

    def run_mixed(ctx, f):
        g = gen[0]
        if g:
            try:
                g(ctx, f)
                return
            except Exception as e:
                _tag_generated(e, g)
                raise
        if g is None:
            _count_runs(gen, seq)
        it = iter(seq)
        # the last predicate array of a select of arrays and its number of true elements
        # (selects in a row often share their predicate; a predicate all false or all true
        # selects one operand whole, that array itself, see `_array_select`)
        mp = None
        mn = 0
        try:
            for k, fn, a, b, c, out, op in it:
                if k == 0:
                    f[out] = fn(f[a], f[b])
                elif k == 3:
                    f[out] = fn(ctx, op, f[a])
                elif k == 7:
                    p = f[a]
                    x = f[b]
                    y = f[c]
                    if p.__class__ is ND and x.__class__ is ND and y.__class__ is ND \
                            and x.dtype is y.dtype:
                        if p is not mp:
                            mp = p
                            mn = count(p)
                        if mn == 0:
                            f[out] = y
                        elif mn == p.size:
                            f[out] = x
                        else:
                            y = y.copy()
                            putmask(y, p, x)
                            f[out] = y
                    else:
                        f[out] = fn(ctx, p, x, y)
                elif k > 7:
                    if k == 9:
                        # (nothing else reads the false operand's slot, see `_selects_in_place`;
                        # references to its array: the local y, getrefcount's argument, the slot)
                        p = f[a]
                        x = f[b]
                        y = f[c]
                        if p.__class__ is ND and x.__class__ is ND and y.__class__ is ND \
                                and x.dtype is y.dtype and y.base is None and refcount(y) == 3:
                            # (the true operand put into the false operand's array costs
                            # little more than counting the predicate's true elements: it
                            # is not counted)
                            try:
                                putmask(y, p, x)
                            except ValueError:   # (a read-only array: into a copy)
                                y = y.copy()
                                putmask(y, p, x)
                            f[c] = None
                            f[out] = y
                        else:
                            f[out] = fn(ctx, p, x, y)
                    elif k == 8:
                        f[out] = fn(ctx, f, f[a])
                    elif k == 11:
                        v = fn(ctx, op, f[a], f[b])
                        f[out] = v[0] if v.__class__ in _SEQ else v
                    else:
                        v = fn(ctx, op, f[a])
                        f[out] = v[0] if v.__class__ in _SEQ else v
                elif k == 1:
                    p = f[a]
                    x = f[b]
                    y = f[c]
                    if p.__class__ is BOOL and x.__class__ is not ND and y.__class__ is not ND:
                        f[out] = x if p else y
                    else:
                        f[out] = fn(ctx, p, x, y)
                elif k == 4:
                    f[out] = fn(ctx, op, f[a], f[b])
                elif k == 2:
                    f[out] = fn(ctx, f[a], f[b], f[c])
                elif k == 5:
                    f[out] = fn(ctx, f[a])
                else:
                    f[out] = fn(ctx, f[a], f[b])
        except Exception as e:
            try:
                e._stablehlo_sequence_index = n - length_hint(it) - 1
            except AttributeError:
                pass
            raise
    return run_mixed


# ops whose result is a function of their operands' values alone (no regions, no state, no
# process grid, no custom calls): the kernels of these modules, for stablehlo ops
_FOLD_MODULES = frozenset(("elementwise", "registry", "movement"))
_NO_FOLD = frozenset(("stablehlo.optimization_barrier", "stablehlo.tuple",
                      "stablehlo.get_tuple_element"))
_FOLDABLE = {}
# ops of no operands whose values are known when a block is compiled (an iota, as a folded
# value, within the bounds below)
_NULLARY_FOLDS = frozenset(("stablehlo.constant", "stablehlo.iota"))
# a folded value is kept by the compiled block for its life: bounded per value and per block
_FOLD_MAX_BYTES = 1 << 18
_FOLD_BLOCK_BYTES = 1 << 22
# calls inlined into a compiled block: callees of at most this many ops, this many ops in all
# per block, this many calls deep
_INLINE_MAX_OPS = 400
_INLINE_BLOCK_OPS = 8000
_INLINE_DEPTH = 16
_NOTHING = object()


def _foldable(name, fn) -> bool:
    hit = _FOLDABLE.get(name)
    if hit is None:
        hit = _FOLDABLE[name] = (name.startswith("stablehlo.") and name not in _NO_FOLD
                                 and KERNELS.get(name) is fn
                                 and fn.__module__.rsplit(".", 1)[-1] in _FOLD_MODULES)
    return hit


def _scalar_form(value):
    """A rank-0 array of a native numeric dtype as a numpy scalar (operators on it stay
    scalars, as kernels' results on scalars do); anything else as it is."""
    if value.__class__ is np.ndarray and value.ndim == 0 and value.dtype.kind in "biuf" \
            and value.dtype.isnative and value.dtype.itemsize in (1, 2, 4, 8) \
            and value.dtype.type.__module__ == "numpy":
        return value[()]
    return value


def _first_operand(a, b):
    return a


# ops on i1 values with an identity operand: x != false, x ^ false, x | false, x & true,
# x == true are x
_I1_IDENTITIES = {"stablehlo.xor": False, "stablehlo.or": False, "stablehlo.and": True}
_I1_COMPARE_IDENTITIES = {"NE": False, "EQ": True}
# integer ops with an identity operand (on either side: + 0, * 1, | 0, ^ 0, & -1; on the
# right: - 0)
_INT_IDENTITIES = {"stablehlo.add": (0, True), "stablehlo.multiply": (1, True),
                   "stablehlo.or": (0, True), "stablehlo.xor": (0, True),
                   "stablehlo.and": (-1, True), "stablehlo.subtract": (0, False)}


def _all_equal_to(value, x) -> bool:
    """Whether every element of the known numpy value `value` equals `x`."""
    if not isinstance(value, (np.ndarray, np.generic)) or value.dtype.kind not in "biu":
        return False
    try:
        return bool(np.all(value == x))
    except Exception:  # noqa: BLE001 - not comparable: not an identity
        return False


def _identity_operand(op, ins, known):
    """The slot of the operand that `op` returns unchanged, whatever its value, given its
    known operands: an i1 or integer op with an identity element known on its other side
    (`_I1_IDENTITIES`, `_INT_IDENTITIES`), or a convert to the operand's own type; the
    operand's type must be the result's type. None otherwise."""
    name = op.name
    rt = op.results[0].type
    ops = op.operands
    if name == "stablehlo.convert":
        if len(ins) == 1 and ops[0].type == rt and _etname(rt) is not None:
            return ins[0]
        return None
    if len(ins) != 2 or len(ops) != 2 or name not in _INT_IDENTITIES \
            and name != "stablehlo.compare":
        return None                # (the names of _I1_IDENTITIES are among _INT_IDENTITIES')
    r = _etname(rt)
    if r is None or ops[0].type != rt or ops[1].type != rt:
        return None
    if r == "i1":
        if name == "stablehlo.compare":
            ct = op.attributes.get("compare_type")
            unit = _I1_COMPARE_IDENTITIES.get(op.attributes["comparison_direction"].value)
            if ct is not None and ct.value not in ("UNSIGNED", "SIGNED"):
                return None
        else:
            unit = _I1_IDENTITIES.get(name)
        either = True
    elif r in _NATIVE and not r.startswith("f"):
        unit, either = _INT_IDENTITIES.get(name, (None, False))
    else:
        return None
    if unit is None:
        return None
    a, b = ins
    if b in known and a not in known and _all_equal_to(known[b], unit):
        return a
    if either and a in known and b not in known and _all_equal_to(known[a], unit):
        return b
    return None


def _value_key(v):
    """A hashable key of a known value, equal for equal values of one dtype and shape."""
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype.kind in "biuf" and v.size <= 4096:
        return (v.dtype.str, v.shape, np.asarray(v).tobytes())
    return ("id", id(v))


def _cse_key(op, ins, known):
    """A key equal for ops that compute the same value: the same name, attributes and
    result types, on the same slots (or known values equal in dtype, shape and bits); None
    where one is not hashable."""
    try:
        attrs = op.attributes
        key = (op.name, tuple(sorted(attrs.items())) if attrs else (),
               tuple([r.type for r in op.results]),
               tuple([("k", _value_key(known[s])) if s in known else s for s in ins]))
        h = hash(key)
    except Exception:  # noqa: BLE001 - an unhashable attribute: no key
        return None
    return _HashedKey(key, h)


class _HashedKey:
    """A `_cse_key` with its hash computed once (a tuple's is computed again at each dict
    look-up, and the types in it hash by a Python method)."""
    __slots__ = ("key", "h")

    def __init__(self, key, h):
        self.key = key
        self.h = h

    def __hash__(self):
        return self.h

    def __eq__(self, other):
        return other.__class__ is _HashedKey and self.h == other.h and self.key == other.key


class _ReadLog(set):
    """The slots some runner of an `_Emitter` reads from the frame, and for each slot the
    indices of the runners that read it (`log`; an index past the last runner: the block's
    terminator). See `jax_idioms.fuse_sequence`."""

    def __init__(self, em):
        super().__init__()
        self.em = em
        self.log = {}

    def add(self, s):
        set.add(self, s)
        got = self.log.get(s)
        if got is None:
            self.log[s] = {len(self.em.runners)}
        else:
            got.add(len(self.em.runners))

    def update(self, *its):
        log = self.log
        i = len(self.em.runners)
        add = set.add
        for it in its:
            for s in it:
                add(self, s)
                got = log.get(s)
                if got is None:
                    log[s] = {i}
                else:
                    got.add(i)


class _LazyRunner(tuple):
    """The arguments of `_runner` for a sequence step (op, fn, ins, out, mode, fast, the
    known values of its operands), made into a runner only where the step runs alone."""
    __slots__ = ()


class _Emitter:
    """Turns the steps of a block into closures, once, when the block is compiled:

    - constants are made here, and so is every op of the elementwise and data-movement
      kernels whose operands are all known here (a `broadcast_in_dim` of a constant, the
      arithmetic on it): such an op runs once, and its closure only stores the value (its
      bits are the kernel's, computed by the kernel; an op that raises is left to raise when
      it runs);
    - a `func.call` is inlined: the callee's steps are emitted in place, its values in slots
      of the caller's frame past the caller's own (its arguments are the caller's operand
      slots), so a call costs no frame, no argument list and no call of the evaluator. An op
      with regions in the callee runs with a frame of the callee as the current one (its
      regions were planned for it; see `_in_callee_frame`). Callees that call themselves
      (directly or not) stop being inlined where they recur, and run as calls;
    - every other op gets `_runner`, with the kernel its specializer makes for the op
      where one is registered (`registry.SPECIALIZERS`)."""

    def __init__(self, ctx, info):
        self.ctx = ctx
        self.info = info
        self.runners = []
        self.ops = []
        self.known = {}              # slot -> value known when compiling
        self.folded_bytes = 0
        self.inlined_ops = 0
        self.need = info.nslots      # frame length the compiled block needs
        self.reads = _ReadLog(self)  # slots some runner reads from the frame
        self.stores = []             # (index of a runner that only stores a known value, slot)
        self.freed = set()           # slots some runner clears
        self.dead_when_run = None    # for a loop body: slots dead while it runs (see below)
        self.invariant = set()       # for a loop body: slots whose value is the same object
        #                              in every iteration (see `_loop_invariant_slots`)
        self.seq = {}                # runner index -> (fn, a, b, out) of a Python-operator step
        self.alias = {}              # slot -> the slot holding the same value (see `_alias_of`)
        self.alias_sources = set()   # slots other slots' readers read instead
        self.in_place = set()        # slots an update in place may write into
        self.cse = {}                # `_cse_key` of a pure op -> the slot of its result
        self.moves = []              # (runner index, slot) of the stores of aliased values
        #                              (and of the producers `slice_reshape` and
        #                              `broadcast_update` read around)
        self.last_made = None        # (runner index, slot, kind, data) of the last
        #                              `dynamic_slice` or `broadcast_in_dim` without frees
        #                              (see `slice_reshape`, `broadcast_update`)

    def emit(self, run, op):
        self.runners.append(run)
        self.ops.append(op)

    def finish(self):
        """(runners, their ops, preload): the runners that store a known value become
        `preload` (slot, value) pairs, stored once per frame, where something reads the slot
        from the frame and nothing clears it, and go where nothing reads it (its readers have
        the value bound); runs of consecutive Python-operator steps become one runner."""
        known = self.known
        preload = []
        drop = set()
        for i, s in self.stores:
            if s in self.freed:
                continue
            drop.add(i)
            if s in self.reads:
                preload.append((s, known[s]))
        for i, s in self.moves:
            # an aliased value's readers read its source: its own slot is stored only where
            # something reads that slot (a terminator, a region, a callee's frame)
            if s not in self.reads:
                drop.add(i)
        runners, ops = [], []
        run = []                     # indices of a run of Python-operator steps

        def flush():
            if len(run) > 1:
                entries = _selects_in_place(tuple(self.seq[j] for j in run), tuple(run),
                                            self.reads.log, drop)
                entries, seq_ops, idx = _scalar_operands(
                    entries, [self.ops[j] for j in run], tuple(run), self.reads.log, drop)
                entries, seq_ops = fuse_sequence(
                    entries, seq_ops, idx, known, self.reads.log, drop, _sequence_runner)
                runners.append(_sequence_runner(entries))
                ops.append(seq_ops)
            elif run:
                r = self.runners[run[0]]
                if r.__class__ is _LazyRunner:
                    op, fn, ins, out, mode, fast, kn = r
                    r = _runner(self.ctx, op, fn, ins, out, mode, (), fast, kn, None)
                try:
                    r.step = self.seq[run[0]]    # (see `fused_while`)
                except AttributeError:
                    pass
                runners.append(r)
                ops.append(self.ops[run[0]])
            run.clear()
        for i, r in enumerate(self.runners):
            if i in drop:
                continue
            if i in self.seq:
                run.append(i)
                continue
            flush()
            runners.append(r)
            ops.append(self.ops[i])
        flush()
        return tuple(runners), ops, tuple(preload)

    def emit_steps(self, steps, remap, args, stack, cinfo=None, dies=None):
        for i, st in enumerate(steps):
            self.emit_step(st, remap, args, stack, cinfo, dies, i)

    def emit_step(self, st, remap, args, stack, cinfo=None, dies=None, index=0):
        op, fn, ins, out, mode, frees, fast = st
        exact = fast is True
        if fast is True:
            fast = _fast_form(op)
        elif fast is False:
            fast = None
        if remap is not None:
            ins = tuple([remap(s) for s in ins])
            if mode == 1 or mode == 2:
                out = remap(out)
            elif mode == 3:
                out = tuple([remap(s) for s in out])
            # the callee's arguments are the caller's values: the caller frees them
            frees = tuple([remap(s) for s in frees if s not in args])
        self.freed.update(frees)
        name = op.name
        known = self.known
        aliased_first = False
        if self.alias:
            alias = self.alias
            aliased_first = bool(ins) and ins[0] in alias
            ins = tuple([alias.get(s, s) for s in ins])
        if mode == 1 and (name in _NULLARY_FOLDS and not ins and fn is KERNELS.get(name)
                          or ins and _foldable(name, fn) and all(s in known for s in ins)):
            value = self.fold(op, fn, ins)
            if value is not _NOTHING:
                known[out] = value
                if not frees:
                    self.stores.append((len(self.runners), out))
                self.emit(_with_frees(_constant_runner(out, value), frees), op)
                return
        if name == "func.call" and mode != 2 and fn.__name__ in _CALL_KERNELS \
                and self.inline(op, ins, out, mode, frees, stack, dies, index):
            return
        if mode == 1 and exact and not frees and ins and not op.regions \
                and self.alias_step(op, fn, ins, out):
            return
        # (an update in place writes into its operand: not into a value other slots' readers
        # read, nor through an alias)
        in_place_ok = not aliased_first and bool(ins) and ins[0] not in self.alias_sources
        if name == "stablehlo.dynamic_update_slice" and mode == 1 and fn is KERNELS.get(name) \
                and self.dead_when_run is not None and dies is not None and in_place_ok \
                and ins and ins[0] not in known and dies(op.operands[0], index):
            run = None
            fed = self.broadcast_update(ins[1])
            if fed is not None:
                run = _update_in_place_runner(op, ins, out, known, self.dead_when_run,
                                              self.reads, fed)
                if run is not None:
                    self.moves.append((fed[0], ins[1]))
            if run is None:
                run = _update_in_place_runner(op, ins, out, known, self.dead_when_run,
                                              self.reads)
            if run is not None:
                self.in_place.add(ins[0])
                self.emit(_with_frees(run, frees), op)
                return
        if name == "stablehlo.scatter" and mode == 1 and fn is KERNELS.get(name) \
                and self.dead_when_run is not None and dies is not None and in_place_ok \
                and len(ins) == 3 and ins[0] not in known and dies(op.operands[0], index):
            run = _scatter_in_place_runner(op, ins, out, known, self.dead_when_run, self.reads)
            if run is not None:
                self.in_place.add(ins[0])
                self.emit(_with_frees(run, frees), op)
                return
        if name == "stablehlo.reshape" and mode == 1 and not frees and len(ins) == 1 \
                and fn is KERNELS.get(name):
            run = self.slice_reshape(op, ins[0], out)
            if run is not None:
                self.emit(run, op)
                return
        special = SPECIALIZERS.get(name)
        plain = fn is KERNELS.get(name)      # the registered kernel (not quantized, not a raise)
        if special is not None and plain:
            try:
                fn = special(op, [known.get(s) for s in ins]) or fn
            except Exception:  # noqa: BLE001 - the general kernel reports what is wrong
                pass
        invariant = self.invariant
        memo = mode == 1 and invariant and not op.regions and ins \
            and (fast is None or fast is _WHERE or _memo_worth(op)) \
            and _foldable(name, KERNELS.get(name)) \
            and all(s in invariant or s in known for s in ins) \
            and not all(s in known for s in ins)
        if memo:
            pass
        elif mode == 1 and fast is not None and fast is not _SELECT and fast is not _WHERE \
                and not frees:
            # may join a sequence of such steps, which reads its operands from the frame
            self.seq[len(self.runners)] = (fast, ins[0], ins[1], -1, out)
            self.reads.update(ins)
        elif mode == 1 and fast is _SELECT and not frees:
            self.seq[len(self.runners)] = (_picker(fn, op), ins[0], ins[1], ins[2], out,
                                           "select", op)
            self.reads.update(ins)
        if memo:
            # a pure op of loop-invariant operands: computed once per loop (see `_memo_runner`)
            invariant.add(out)
            run = _runner(self.ctx, op, fn, ins, out, mode, (), fast, known, self.reads)
            run = _with_frees(_memo_runner(run, tuple(s for s in ins if s not in known), out), frees)
            self.emit(run, op)
            return
        if name == "stablehlo.dynamic_slice" and mode == 1 and plain:
            run = _dynamic_slice_runner(op, ins, out, known, self.reads)
            if run is not None:
                self.emit(_with_frees(run, frees), op)
                if not frees and run.window is not None:
                    self.last_made = (len(self.runners) - 1, out, "dynamic_slice", run.window)
                return
        if mode == 1 and fast is _WHERE and not frees:
            # (after the memo above: a memoized select keeps its own runner)
            self.seq[len(self.runners)] = (_wherer(fn, op), ins[0], ins[1], ins[2], out,
                                           "putmask" if _putmask_select(op) else "call3", op)
            self.reads.update(ins)
        elif exact and mode == 1 and fast is None and not frees and 1 <= len(ins) <= 2 \
                and fn is not KERNELS.get(name) and _sequence_kernel(op, fn):
            # an op of a specialized elementwise or data-movement kernel (sine, remainder,
            # convert, slice, ...) may join a sequence too: the kernel called there with its
            # op bound
            self.seq[len(self.runners)] = (fn, ins[0], ins[1] if len(ins) == 2 else -1, -2,
                                           out, "kernel", op)
            self.reads.update(ins)
        elif exact and mode == 1 and fast is None and not frees and 1 <= len(ins) <= 2 \
                and name != "func.call" \
                and (not op.regions or getattr(fn, "runs_no_region", False)):
            # any other kernel of one or two operands and one result (dot_general, reduce,
            # ...) may join a sequence too, called there with its op, its value taken as
            # the runner takes it (the one value of a list)
            self.seq[len(self.runners)] = (fn, ins[0], ins[1] if len(ins) == 2 else -1, -4,
                                           out, "call", op)
            self.reads.update(ins)
        if not frees and not op.regions and len(self.runners) in self.seq \
                and name != "stablehlo.broadcast_in_dim":
            # a step of a sequence (see `finish`) gets a runner of its own only where it ends
            # up alone (its reads are logged above): `_LazyRunner`, made then
            self.emit(_LazyRunner((op, fn, ins, out, mode, fast,
                                   {s: known[s] for s in ins if s in known})), op)
            return
        run = _runner(self.ctx, op, fn, ins, out, mode, frees, fast, known, self.reads)
        made = None
        if name == "stablehlo.broadcast_in_dim" and mode == 1 and plain and not frees \
                and len(ins) == 1 and ins[0] not in known:
            src = _trailing_broadcast(op)
            if src is not None:
                made = (len(self.runners), out, "broadcast", (ins[0], src, run))
        if op.regions and not getattr(fn, "runs_no_region", False):
            if cinfo is not None:
                run = _in_callee_frame(run, op, cinfo, remap, self.reads)
            else:
                slots = self.info.slots
                self.reads.update(slots[v] for v in _outer_values(op) if v in slots)
        self.emit(run, op)
        if made is not None:
            self.last_made = made

    def slice_reshape(self, op, src, out):
        """A reshape that only drops the unit dimensions of the window of the `dynamic_slice`
        emitted just before it (`src`, its result: `x[i]` of a scan over x's rows): one
        runner taking the window with integer indices for those dimensions (the same view
        of the same elements); the dynamic_slice's runner goes where nothing else reads its
        result (see `finish`). None where it is not that."""
        last = self.last_made
        if last is None or last[1] != src or last[2] != "dynamic_slice" \
                or not self.just_before(last[0]):
            return None
        rshape = _static_shape_of(op.results[0].type)
        index, _, _, (ds_run, a, starts, xshape) = last
        sizes = tuple(n for _, _, n, _ in starts)
        if rshape is None or rshape != tuple(n for n in sizes if n != 1):
            return None
        fn = KERNELS[op.name]
        special = SPECIALIZERS.get(op.name)
        if special is not None:
            try:
                fn = special(op, [None]) or fn
            except Exception:  # noqa: BLE001 - the general kernel reports what is wrong
                pass
        reshape_run = _runner(self.ctx, op, fn, (src,), out, 1, (), None, {}, None)
        self.reads.update(s for s, c, _, _ in starts if c is _NOTHING)
        self.reads.add(a)
        self.moves.append((index, src))
        # (a rank-0 result is the element itself, a numpy scalar, as the rank-0 values of a
        # compiled loop are: a 0-d view made each scalar op after it take numpy's array path,
        # ~0.3 us each instead of ~0.03)
        window = _window_maker(starts, tuple(n == 1 for n in sizes), ellipsis=bool(rshape))
        ND = np.ndarray

        def slice_reshape(ctx, f):
            x = f[a]
            if x.__class__ is ND and x.shape == xshape:
                f[out] = x[window(f)]
                return
            ds_run(ctx, f)
            reshape_run(ctx, f)
        return slice_reshape

    def just_before(self, i):
        """Whether runner i is the last emitted but for runners that only store a known
        value (which clear no slot)."""
        stores = {j for j, _ in self.stores}
        return all(j in stores for j in range(i + 1, len(self.runners)))

    def broadcast_update(self, u):
        """For a dynamic_update_slice of update `u`: (runner index, operand slot, operand
        shape, broadcast runner) where `u` is made by the `broadcast_in_dim` emitted just
        before it, one numpy's broadcasting makes (`_trailing_broadcast`), else None."""
        last = self.last_made
        if last is None or last[1] != u or last[2] != "broadcast" \
                or not self.just_before(last[0]):
            return None
        src, shape, run = last[3]
        return (last[0], src, shape, run)

    def alias_step(self, op, fn, ins, out) -> bool:
        """An op whose result is a value some slot already holds (`_identity_operand`: an
        operation with a known identity operand; or the same pure op on the same operands as
        an earlier step of the block, `_cse_key`): no step computes it; the readers emitted
        after it read that slot instead (`alias`), and a store into its own slot is kept only
        where something reads that slot from the frame (see `finish`). Only small values of
        static shapes (never cleared) whose source no update in place writes into."""
        name = op.name
        if not _foldable(name, KERNELS.get(name)) or fn is not KERNELS.get(name):
            return False
        rt = op.results[0].type
        sb = _static_bytes(rt)
        if sb is None or sb[0] >= _FREE_ELEMENTS:
            return False
        known = self.known
        src = _identity_operand(op, ins, known)
        key = None
        if src is None:
            key = _cse_key(op, ins, known)
            if key is None:
                return False
            src = self.cse.get(key)
        if src is None or src in self.in_place or src in known:
            if key is not None and src is None:
                self.cse[key] = out
            return False
        self.alias[out] = src
        self.alias_sources.add(src)
        self.moves.append((len(self.runners), out))
        self.seq[len(self.runners)] = (_first_operand, src, src, -1, out)
        self.reads.add(src)

        def move(ctx, f):
            f[out] = f[src]
        self.emit(move, op)
        return True

    def fold(self, op, fn, ins):
        # (a constant's value is the module's own: no bound; an iota's counts as a fold's)
        constant = op.name == "stablehlo.constant"
        sb = _static_bytes(op.results[0].type)
        if sb is None or not constant and (sb[1] > _FOLD_MAX_BYTES or
                                           self.folded_bytes + sb[1] > _FOLD_BLOCK_BYTES):
            return _NOTHING
        known = self.known
        try:
            value = fn(self.ctx, op, *[known[s] for s in ins])
        except Exception:  # noqa: BLE001 - the op raises again, at its place, when it runs
            return _NOTHING
        if value.__class__ is list or value.__class__ is tuple:
            if len(value) != 1:
                return _NOTHING
            value = value[0]
        if not isinstance(value, (np.ndarray, np.generic)):
            return _NOTHING
        if not constant:
            self.folded_bytes += sb[1]
        return _scalar_form(value)

    def inline(self, op, ins, out, mode, frees, stack, dies=None, index=0) -> bool:
        callee = getattr(op.attributes.get("callee"), "root", None)
        if not isinstance(callee, str) or callee in stack or len(stack) >= _INLINE_DEPTH:
            return False
        ctx = self.ctx
        try:
            block, nargs, cinfo = ctx.entry(callee)
        except StableHLOError:
            return False                 # the call raises when it runs
        body = block.operations
        if nargs != len(ins) or len(body) > _INLINE_MAX_OPS or cinfo is self.info \
                or self.inlined_ops + len(body) > _INLINE_BLOCK_OPS:
            return False
        cplan = ctx._plan(block, cinfo)
        term = cplan.term_slots
        if term is None or len(term) != (len(out) if mode == 3 else 1 if mode == 1 else 0):
            return False
        info = self.info
        base = info.nslots
        info.nslots += cinfo.nslots
        self.need = info.nslots
        self.inlined_ops += len(body)
        argmap = dict(zip(cplan.arg_slots, ins))
        dsts = (out,) if mode == 1 else (out if mode == 3 else ())
        # a value the callee makes and returns is made in the call's result slot itself
        # (its last use is the terminator, so the callee's plan never clears it)
        for t, d in zip(term, dsts):
            if t not in argmap:
                argmap[t] = d
        args = {t: argmap[t] for t in cplan.arg_slots}

        def remap(s, _get=argmap.get):
            r = _get(s)
            return base + s if r is None else r
        position = {a: k for k, a in enumerate(block.arguments)}
        clast = cinfo.last_use
        operands = op.operands

        def callee_dies(v, j):
            """A callee value dies at its step j, and, for an argument, so does the
            caller's value at the call."""
            if clast.get(v, -1) != j:
                return False
            k = position.get(v)
            if k is None:
                return True              # (a function's ops see only its own values)
            return dies is not None and dies(operands[k], index)
        self.emit_steps(cplan.steps, remap, args, stack + (callee,), cinfo, callee_dies)
        # results that are the callee's arguments (or a value returned twice) are moved
        pairs = [(remap(t), d) for t, d in zip(term, dsts) if remap(t) != d]
        known = self.known
        for s, d in pairs:
            if s in known:
                known[d] = known[s]
        if pairs or frees:
            self.reads.update(s for s, _ in pairs)
            self.freed.update(frees)
            self.emit(_move_runner(pairs, frees), op)
        return True


def _outer_values(op):
    """The values that the regions of `op` use but do not define (in order, once each)."""
    defined = set()
    used = {}
    stack = list(op.regions)
    while stack:
        region = stack.pop()
        for b in region.blocks:
            defined.update(b.arguments)
            for o in b.operations:
                for v in o.operands:
                    used[v] = None
                defined.update(o.results)
                stack.extend(o.regions)
    return [v for v in used if v not in defined]


def _in_callee_frame(run, op, cinfo, remap, reads):
    """An op with regions in an inlined callee: its regions were planned for the callee's own
    frame, so while it runs the interpreter's current frame is a fresh frame of the callee
    holding the callee's values the regions read (copied from their slots in the caller's
    frame), as when the callee runs as a call."""
    slots = cinfo.slots
    pairs = tuple((slots[v], remap(slots[v])) for v in _outer_values(op) if v in slots)
    reads.update(t for _, t in pairs)

    def run_in_callee_frame(ctx, f):
        g = [None] * cinfo.nslots
        for s, t in pairs:
            g[s] = f[t]
        prev_frame, prev_info = ctx._frame, ctx._info
        ctx._frame, ctx._info = g, cinfo
        try:
            run(ctx, f)
        finally:
            ctx._frame, ctx._info = prev_frame, prev_info
    return run_in_callee_frame


def _update_in_place_runner(op, ins, out, known, dead_slots, reads, fed=None):
    """dynamic_update_slice in a loop body, of an operand whose last use it is: when nothing
    but dead frame slots holds the operand's array (its reference count says so, after the
    references of the operand's own slot, this op's result slot from the previous iteration
    and the condition's argument slots are discounted), the update is written into it instead
    of into a copy. Anything else holding the array (a view of it, another live value, the
    caller) makes a copy, as the kernel does. `fed`: (runner index, slot, shape, runner) of
    a broadcast_in_dim emitted just before that makes the update (`_Emitter.broadcast_update`):
    its operand is written into the window as it is (numpy broadcasts it to the same values),
    and the broadcast runs only where the update is not made in place."""
    from .movement import dynamic_update_slice_specialized
    xt, ut = op.operands[0].type, op.operands[1].type
    xshape, ushape = getattr(xt, "shape", None), getattr(ut, "shape", None)
    if xshape is None or ushape is None or None in xshape or None in ushape \
            or len(xshape) != len(ushape) or len(ins) != len(xshape) + 2:
        return None
    xshape, ushape = tuple(xshape), tuple(ushape)
    copy_kernel = dynamic_update_slice_specialized(op) or KERNELS[op.name]
    bounds = tuple(zip(ushape, [n - k for n, k in zip(xshape, ushape)]))
    a, us = ins[0], ins[1]
    if fed is not None and us in known:
        return None
    # (with `fed`, the update's slot is read only after the broadcast stores it, here)
    reads.update(s for s in ins if s not in known and (fed is None or s != us))
    if fed is not None:
        reads.add(fed[1])
    u_const = known.get(us, _NOTHING)
    starts = _start_getters(ins[2:], known, bounds)
    if starts is None:
        return None
    given = tuple((s, known.get(s, _NOTHING)) for s in ins[2:])
    ND = np.ndarray
    refcount = _refcount
    NOTHING = _NOTHING
    window = _window_maker(starts)
    shape_of = np.shape

    if fed is not None:
        _, src, src_shape, bcast_run = fed
        window = _write_window_maker(starts, xshape, (len(src_shape),)) or window

        def update_fed(ctx, f):
            x = f[a]
            if x.__class__ is ND and x.base is None and x.shape == xshape:
                n = refcount(x) - 3
                if f[out] is x:
                    n -= 1
                if n:                    # (no dead slot holds x where nothing else does)
                    for s in dead_slots:
                        if f[s] is x:
                            n -= 1
                if n == 0:
                    u = f[src]
                    try:
                        ushape = u.shape         # (numpy scalars have one too)
                    except AttributeError:
                        ushape = shape_of(u)
                    if ushape == src_shape and x.flags.writeable:
                        x[window(f)] = u
                        f[out] = x
                        return
            bcast_run(ctx, f)
            u = f[us]
            v = copy_kernel(ctx, op, x, u, *[f[s] if c is NOTHING else c for s, c in given])
            f[out] = v[0] if v.__class__ in _SEQ else v
        return update_fed
    window = _write_window_maker(starts, xshape, (len(ushape),)) or window

    def update_in_place(ctx, f):
        x = f[a]
        u = f[us] if u_const is NOTHING else u_const
        if x.__class__ is ND and x.base is None and x.shape == xshape:
            # references: the local x, getrefcount's argument, the operand's slot
            n = refcount(x) - 3
            if f[out] is x:
                n -= 1
            if n:                    # (no dead slot holds x where nothing else does)
                for s in dead_slots:
                    if f[s] is x:
                        n -= 1
            if n == 0:
                try:
                    ok = u.shape == ushape       # (numpy scalars have a shape too)
                except AttributeError:
                    ok = shape_of(u) == ushape
                if ok and x.flags.writeable:
                    x[window(f)] = u
                    f[out] = x
                    return
        v = copy_kernel(ctx, op, x, u, *[f[s] if c is NOTHING else c for s, c in given])
        f[out] = v[0] if v.__class__ in _SEQ else v
    return update_in_place


def _start_getters(slots, known, bounds):
    """The start indices of a dynamic_slice / dynamic_update_slice window: per dimension
    (slot, known value or _NOTHING, size, largest start), the known ones clamped once (None
    where a known one is no integer)."""
    out = []
    for s, (n, hi) in zip(slots, bounds):
        c = known.get(s, _NOTHING)
        if c is not _NOTHING:
            try:
                c = min(max(int(c), 0), hi)
            except (TypeError, ValueError, OverflowError):
                return None              # (the kernel reports what is wrong)
        out.append((s, c, n, hi))
    return tuple(out)


def _window(f, starts, unit=None, ellipsis=True):
    """The slices of the window `_start_getters` describes, as `clamped_window` makes them
    (with `unit`, a flag per dimension: an integer index for each flagged one, of size 1,
    which drops that dimension; the result is a view, of rank 0 too, unless `ellipsis` is
    false: then no Ellipsis ends the index, as an index to write through needs none)."""
    idx = []
    k = 0
    for s, c, n, hi in starts:
        if c is _NOTHING:
            c = int(f[s])
            if c < 0:
                c = 0
            if c > hi:
                c = hi
        idx.append(c if unit is not None and unit[k] else slice(c, c + n))
        k += 1
    if unit is not None and ellipsis:
        idx.append(Ellipsis)             # (an array of rank 0 where every index is one)
    return tuple(idx)


def _window_maker(starts, unit=None, ellipsis=True):
    """`_window(f, starts, unit, ellipsis)` as a function `window(f)` made once: the known
    starts' slices (or indices) made here, and for a window of one start read from the
    frame, the tuple made of the known parts around that one (the same slices and
    indices)."""
    dyn = [k for k, (_, c, _, _) in enumerate(starts) if c is _NOTHING]
    if len(dyn) > 1:
        def window(f):
            return _window(f, starts, unit, ellipsis)
        return window
    parts = []
    for k, (s, c, n, hi) in enumerate(starts):
        if c is _NOTHING:
            parts.append(None)
        else:
            parts.append(c if unit is not None and unit[k] else slice(c, c + n))
    if unit is not None and ellipsis:
        parts.append(Ellipsis)
    if not dyn:
        whole = tuple(parts)

        def window(f):
            return whole
        return window
    k = dyn[0]
    s, _, n, hi = starts[k]
    head, tail = tuple(parts[:k]), tuple(parts[k + 1:])
    if unit is not None and unit[k]:
        if not head and not tail:
            def window(f):
                c = int(f[s])
                if c < 0:
                    c = 0
                if c > hi:
                    c = hi
                return (c,)
            return window

        def window(f):
            c = int(f[s])
            if c < 0:
                c = 0
            if c > hi:
                c = hi
            return head + (c,) + tail
        return window

    def window(f):
        c = int(f[s])
        if c < 0:
            c = 0
        if c > hi:
            c = hi
        return head + (slice(c, c + n),) + tail
    return window


def _write_window_maker(starts, xshape, vranks):
    """For writing a value into the window `_start_getters` describes (`x[window(f)] = v`,
    as `dynamic_update_slice` writes its update): the window's index made shorter where it
    selects the same elements, `_window_maker`'s otherwise. Leading dimensions of size 1 are
    indexed by their (clamped) start, an integer, and trailing dimensions the window covers
    whole (start 0, the full size) are left out: numpy then writes the value into a view
    of the same elements (the value's leading dimensions of size 1 dropped, as numpy drops
    them in an assignment; the other dimensions broadcast as before). `vranks`: the ranks
    the written values may have; an index that leaves no dimension (a single element) is
    made only where they are all 0 (numpy takes no array of rank >= 1 into one element).
    The same elements get the same values; None where no index is shorter."""
    rank = len(starts)
    lead = 0
    while lead < rank and starts[lead][2] == 1:
        lead += 1
    tail = rank
    while tail > lead and starts[tail - 1][1] == 0 and starts[tail - 1][2] == xshape[tail - 1]:
        tail -= 1
    if lead == rank and any(vranks):
        lead -= 1                      # (one dimension left, the last, as a slice)
        if tail < rank:
            return None
    if lead == 0 and tail == rank:
        return None
    return _window_maker(starts[:tail], tuple(k < lead for k in range(tail)), False)


def _static_shape_of(t):
    shape = getattr(t, "shape", None)
    if shape is None or None in shape:
        return None
    return tuple(shape)


def _trailing_broadcast(op):
    """The operand shape of a `broadcast_in_dim` that numpy's broadcasting of the operand to
    the result shape makes (its dimensions the result's last ones, in order, each of the
    result's size or 1): the same elements, so an assignment of the operand to a window of
    the result's shape puts in the broadcast's values. None otherwise."""
    xshape = _static_shape_of(op.operands[0].type)
    shape = _static_shape_of(op.results[0].type)
    if xshape is None or shape is None or len(xshape) > len(shape):
        return None
    dims = op.attributes.get("broadcast_dimensions")
    try:
        dims = tuple(int(v) for v in getattr(dims, "values", ()))
    except (TypeError, ValueError):
        return None
    r, k = len(shape), len(xshape)
    if dims != tuple(range(r - k, r)):
        return None
    if any(n != shape[d] and n != 1 for n, d in zip(xshape, dims)):
        return None
    return xshape


def _dynamic_slice_runner(op, ins, out, known, reads):
    """dynamic_slice of an operand with a static shape in a compiled block: the start indices
    read from their slots (known ones clamped once), the window taken as the kernel takes it
    (a view); an operand of another shape takes the kernel."""
    from .movement import dynamic_slice_specialized
    xt = op.operands[0].type
    xshape = getattr(xt, "shape", None)
    kernel = dynamic_slice_specialized(op)
    if xshape is None or None in xshape or kernel is None:
        return None
    xshape = tuple(xshape)
    sizes = op.attributes["slice_sizes"]
    sizes = tuple(int(v) for v in getattr(sizes, "values", ()))
    if len(sizes) != len(xshape) or len(ins) != len(xshape) + 1:
        return None
    bounds = tuple(zip(sizes, [n - k for n, k in zip(xshape, sizes)]))
    a = ins[0]
    if a in known:
        return None
    reads.update(s for s in ins if s not in known)
    starts = _start_getters(ins[1:], known, bounds)
    if starts is None:
        return None
    given = tuple((s, known.get(s, _NOTHING)) for s in ins[1:])
    ND = np.ndarray
    NOTHING = _NOTHING

    window = _window_maker(starts)

    def dynamic_slice(ctx, f):
        x = f[a]
        if x.__class__ is ND and x.shape == xshape:
            f[out] = x[window(f)]
            return
        v = kernel(ctx, op, x, *[f[s] if c is NOTHING else c for s, c in given])
        f[out] = v[0] if v.__class__ in _SEQ else v
    dynamic_slice.window = (dynamic_slice, a, starts, xshape)    # (see `slice_reshape`)
    return dynamic_slice


def _scatter_in_place_runner(op, ins, out, known, dead_slots, reads):
    """A one-element `x.at[i].set(v)` scatter (`indexing.point_scatter_form`) in a loop body,
    of an operand whose last use it is: written into the operand's array when nothing but dead
    frame slots holds it (the same reference count as `_update_in_place_runner`), else into a
    copy, as the kernel does."""
    from .indexing import point_scatter_form, point_scatter_kernel
    form = point_scatter_form(op)
    if form is None or form[2] != "replace":
        return None
    xshape = form[0]
    copy_kernel = point_scatter_kernel(form)
    position = copy_kernel.position
    a, i_slot, u_slot = ins
    reads.update(s for s in ins if s not in known)
    i_const = known.get(i_slot, _NOTHING)
    u_const = known.get(u_slot, _NOTHING)
    ND = np.ndarray
    refcount = _refcount
    NOTHING = _NOTHING

    def scatter_in_place(ctx, f):
        x = f[a]
        idx = f[i_slot] if i_const is NOTHING else i_const
        u = f[u_slot] if u_const is NOTHING else u_const
        if x.__class__ is ND and x.base is None and x.flags.writeable and x.shape == xshape:
            n = refcount(x) - 3
            if f[out] is x:
                n -= 1
            if n:                    # (no dead slot holds x where nothing else does)
                for s in dead_slots:
                    if f[s] is x:
                        n -= 1
            if n == 0:
                pos = position(np.asarray(idx))
                if pos is not None:
                    x[pos] = u.reshape(()) if getattr(u, "ndim", 0) else u
                f[out] = x
                return
        f[out] = copy_kernel(ctx, op, x, np.asarray(idx), u)[0]
    return scatter_in_place


def _move_runner(pairs, clear):
    """Copy the results of an inlined call that are not made in place (see `inline`) from
    slot to slot, then clear the slots of the caller's values that die at the call."""
    if len(pairs) == 1 and not clear:
        (s, d), = pairs

        def run(ctx, f):
            f[d] = f[s]
        return run
    pairs = tuple(pairs)

    def run(ctx, f):
        vals = [f[s] for s, _ in pairs]
        i = 0
        for _, d in pairs:
            f[d] = vals[i]
            i += 1
        for c in clear:
            f[c] = None
    return run


def _runner(ctx, op, fn, ins, out, mode, frees, fast, known=None, reads=None):
    """The closure that runs one step on a frame `f`. Operands whose values are `known` when
    compiling (constants, folded values) are bound in it rather than read from the frame;
    the slots it reads are added to `reads`."""
    k = len(ins)
    kn = known or {}
    dyn = [s for s in ins if s not in kn]
    if reads is not None:
        reads.update(dyn if mode == 1 else ins)
    if mode == 1 and fast is _WHERE:
        run = _where_runner(fn, op, ins, out, kn)
    elif mode == 1 and fast is not None and len(dyn) == k:
        if fast is _SELECT:
            run = _select_runner(fn, op, ins, out)
        else:
            a, b = ins

            def run(ctx, f, _fn=fast):
                f[out] = _fn(f[a], f[b])
    elif mode == 1 and fast is not None and fast is not _SELECT and fast is not _WHERE \
            and len(dyn) == 1:
        a, b = ins
        if a in kn:
            ca = kn[a]

            def run(ctx, f, _fn=fast):
                f[out] = _fn(ca, f[b])
        else:
            cb = kn[b]

            def run(ctx, f, _fn=fast):
                f[out] = _fn(f[a], cb)
    elif mode == 1 and len(dyn) < k:
        run = _bound_runner(fn, op, ins, out, kn, fast)
    elif mode == 1:
        if k == 1:
            a, = ins

            def run(ctx, f):
                v = fn(ctx, op, f[a])
                f[out] = v[0] if v.__class__ in _SEQ else v
        elif k == 2:
            a, b = ins

            def run(ctx, f):
                v = fn(ctx, op, f[a], f[b])
                f[out] = v[0] if v.__class__ in _SEQ else v
        elif k == 0:
            def run(ctx, f):
                v = fn(ctx, op)
                f[out] = v[0] if v.__class__ in _SEQ else v
        else:
            def run(ctx, f):
                v = fn(ctx, op, *[f[s] for s in ins])
                f[out] = v[0] if v.__class__ in _SEQ else v
    elif mode == 2:
        def run(ctx, f):
            v = fn(ctx, op, *[f[s] for s in ins])
            f[out] = v[0] if v.__class__ is list else v
    elif mode == 3:
        def run(ctx, f):
            v = fn(ctx, op, *[f[s] for s in ins])
            i = 0
            for s in out:
                f[s] = v[i]
                i += 1
    else:
        def run(ctx, f):
            fn(ctx, op, *[f[s] for s in ins])
    return _with_frees(run, frees)


def _bound_runner(fn, op, ins, out, kn, fast):
    """A kernel call with some operands bound (known when compiling)."""
    k = len(ins)
    if k == 2 and (ins[0] in kn) != (ins[1] in kn):
        a, b = ins
        if a in kn:
            ca = kn[a]

            def run(ctx, f):
                v = fn(ctx, op, ca, f[b])
                f[out] = v[0] if v.__class__ in _SEQ else v
        else:
            cb = kn[b]

            def run(ctx, f):
                v = fn(ctx, op, f[a], cb)
                f[out] = v[0] if v.__class__ in _SEQ else v
        return run
    if fast is _SELECT and ins[0] not in kn:
        return _select_runner(fn, op, ins, out, kn)
    if k == 3 and ins[0] in kn and ins[1] not in kn and ins[2] not in kn:
        # (a scatter into a known input, ...: the known first operand passed as it is, no
        # argument list made per call)
        c0 = kn[ins[0]]
        b, c = ins[1], ins[2]

        def run(ctx, f):
            v = fn(ctx, op, c0, f[b], f[c])
            f[out] = v[0] if v.__class__ in _SEQ else v
        return run
    template = [kn.get(s) for s in ins]
    where = tuple((i, s) for i, s in enumerate(ins) if s not in kn)

    def run(ctx, f):
        args = template.copy()
        for i, s in where:
            args[i] = f[s]
        v = fn(ctx, op, *args)
        f[out] = v[0] if v.__class__ in _SEQ else v
    return run


_SEQ = (list, tuple)


# the selects of a generated merged sequence (`sequence_codegen`), each what the branch of
# `_mixed_sequence_runner` for its kind does; `last`: [the last predicate array of a select
# of arrays, its number of true elements], per run of the sequence, as the runner keeps them
def _pick(ctx, fn, p, x, y):
    """Kind 1: a select of rank-0 values picked here, anything else by `fn`."""
    if p.__class__ is np.bool_ and x.__class__ is not ND and y.__class__ is not ND:
        return x if p else y
    return fn(ctx, p, x, y)


def _put(ctx, fn, p, x, y, last):
    """Kind 7: a select of small arrays as a copy of the false operand with the true one
    put in (one operand itself where the predicate is all false or all true)."""
    if p.__class__ is ND and x.__class__ is ND and y.__class__ is ND and x.dtype is y.dtype:
        if p is not last[0]:
            last[0] = p
            last[1] = _count_true(p)
        mn = last[1]
        if mn == 0:
            return y
        if mn == p.size:
            return x
        y = y.copy()
        np.putmask(y, p, x)
        return y
    return fn(ctx, p, x, y)


def _put_in_place(ctx, fn, f, a, b, c, last):
    """Kind 9: kind 7 with the true operand put into the false operand's own array where
    its slot alone holds it (references: the local y, getrefcount's argument, the slot)."""
    p = f[a]
    x = f[b]
    y = f[c]
    if p.__class__ is ND and x.__class__ is ND and y.__class__ is ND \
            and x.dtype is y.dtype and y.base is None and _refcount(y) == 3:
        try:
            np.putmask(y, p, x)
        except ValueError:   # (a read-only array: into a copy)
            y = y.copy()
            np.putmask(y, p, x)
        f[c] = None
        return y
    return fn(ctx, p, x, y)


_SEQUENCE_ENV = {"pick": _pick, "put": _put, "put_in_place": _put_in_place, "SEQ": _SEQ}


def _constant_runner(out, value):
    def run(ctx, f):
        f[out] = value
    return run


def _select_runner(fn, op, ins, out, kn=None):
    p, x, y = ins
    BOOL, ND = np.bool_, np.ndarray
    if kn:
        cx = kn.get(x, _NOTHING)
        cy = kn.get(y, _NOTHING)
        NOTHING = _NOTHING

        def run(ctx, f):
            c = f[p]
            a = f[x] if cx is NOTHING else cx
            b = f[y] if cy is NOTHING else cy
            if c.__class__ is BOOL and a.__class__ is not ND and b.__class__ is not ND:
                f[out] = a if c else b
            else:
                v = fn(ctx, op, c, a, b)
                f[out] = v[0] if v.__class__ in _SEQ else v
        return run

    def run(ctx, f):
        c = f[p]
        a = f[x]
        b = f[y]
        if c.__class__ is BOOL and a.__class__ is not ND and b.__class__ is not ND:
            f[out] = a if c else b
        else:
            v = fn(ctx, op, c, a, b)
            f[out] = v[0] if v.__class__ in _SEQ else v
    return run


def _where_runner(fn, op, ins, out, kn):
    """A select of arrays of one static shape (predicate and both operands): numpy's `where`,
    as the kernel computes it (or `np.putmask` into a copy, see `_array_select`), without the kernel's call and its cast to the dtype the
    operands already have; anything else (a value of another class) takes the kernel."""
    p, x, y = ins
    ND = np.ndarray
    sel = _array_select(op)
    NOTHING = _NOTHING
    cp = kn.get(p, NOTHING)
    cx = kn.get(x, NOTHING)
    cy = kn.get(y, NOTHING)

    if cp is NOTHING and cx is NOTHING and cy is NOTHING:
        def run(ctx, f):
            c = f[p]
            a = f[x]
            b = f[y]
            if c.__class__ is ND and a.__class__ is ND and b.__class__ is ND:
                f[out] = sel(c, a, b)
            else:
                v = fn(ctx, op, c, a, b)
                f[out] = v[0] if v.__class__ in _SEQ else v
        return run

    def run_bound(ctx, f):
        c = f[p] if cp is NOTHING else cp
        a = f[x] if cx is NOTHING else cx
        b = f[y] if cy is NOTHING else cy
        if c.__class__ is ND and a.__class__ is ND and b.__class__ is ND:
            f[out] = sel(c, a, b)
        else:
            v = fn(ctx, op, c, a, b)
            f[out] = v[0] if v.__class__ in _SEQ else v
    return run_bound


def _with_frees(run, frees):
    if not frees:
        return run

    def run_and_free(ctx, f):
        run(ctx, f)
        for s in frees:
            f[s] = None
    return run_and_free
