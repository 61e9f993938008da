"""Loops JAX writes around its LAPACK calls whose meaning the interpreter knows, run as that
meaning instead of op by op.

- The pivots-to-permutation loop of `jax.lax.linalg.lu` on CPU (jnp.linalg.solve, inv, det,
  lu_factor...): a `while` of N iterations that, for k = 0..N-1, swaps elements k and
  pivots[k] of a permutation (a call of a private function of about 30 rank-0 ops, two
  dynamic_slices and two scatters per iteration). `pivot_loop` recognizes it by comparing the
  `while` op, its condition, its body and the called function op by op (names, attributes,
  types, operand wiring; constants by type and value wherever they stand, as jax.export
  hoists and shares them) with the program JAX writes, parsed once per N from
  `_PIVOT_LOOP`; a loop that differs in anything else runs as usual. The known loop runs in Python
  integers with the ops' semantics for any loop values (negative indices wrapped by N as the
  selects do, slice starts clamped into the array as dynamic_slice clamps them, an
  out-of-bounds scatter index leaving the permutation as scatter does, i32 wrap-around), the
  iterations counted against `max_steps` and the deadline as the `while` kernel counts them.
  Not used while a trace is recorded (the trace lists each op of each iteration).
"""
from __future__ import annotations

import numpy as np

from ..ir.attributes import DenseArrayAttr, DenseElementsAttr
from .registry import op_cache

_PIVOT_LOOP = """
func.func @main(%a0: tensor<NNxi32>, %a1: tensor<i32>, %a2: tensor<i32>, %a3: tensor<NNxi32>) -> (tensor<NNxi32>, tensor<i32>, tensor<i32>, tensor<NNxi32>) {
  %10:4 = stablehlo.while(%iterArg = %a0, %iterArg_3 = %a1, %iterArg_4 = %a2, %iterArg_5 = %a3) : tensor<NNxi32>, tensor<i32>, tensor<i32>, tensor<NNxi32>
  cond {
    %c_6 = stablehlo.constant dense<NN> : tensor<i32>
    %14 = stablehlo.compare LT, %iterArg_3, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %14 : tensor<i1>
  } do {
    %14:2 = func.call @closed_call(%iterArg, %iterArg_4, %iterArg_5) : (tensor<NNxi32>, tensor<i32>, tensor<NNxi32>) -> (tensor<i32>, tensor<NNxi32>)
    %c_6 = stablehlo.constant dense<1> : tensor<i32>
    %15 = stablehlo.add %iterArg_3, %c_6 : tensor<i32>
    stablehlo.return %iterArg, %15, %14#0, %14#1 : tensor<NNxi32>, tensor<i32>, tensor<i32>, tensor<NNxi32>
  }
  return %10#0, %10#1, %10#2, %10#3 : tensor<NNxi32>, tensor<i32>, tensor<i32>, tensor<NNxi32>
}
func.func private @closed_call(%arg0: tensor<NNxi32>, %arg1: tensor<i32>, %arg2: tensor<NNxi32>) -> (tensor<i32>, tensor<NNxi32>) {
  %c = stablehlo.constant dense<1> : tensor<i32>
  %0 = stablehlo.add %arg1, %c : tensor<i32>
  %c_0 = stablehlo.constant dense<0> : tensor<i32>
  %1 = stablehlo.compare LT, %arg1, %c_0, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %2 = stablehlo.convert %arg1 : tensor<i32>
  %c_1 = stablehlo.constant dense<NN> : tensor<i32>
  %3 = stablehlo.add %2, %c_1 : tensor<i32>
  %4 = stablehlo.select %1, %3, %arg1 : tensor<i1>, tensor<i32>
  %5 = stablehlo.dynamic_slice %arg0, %4, sizes = [1] : (tensor<NNxi32>, tensor<i32>) -> tensor<1xi32>
  %6 = stablehlo.reshape %5 : (tensor<1xi32>) -> tensor<i32>
  %c_2 = stablehlo.constant dense<0> : tensor<i32>
  %7 = stablehlo.compare LT, %arg1, %c_2, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %8 = stablehlo.convert %arg1 : tensor<i32>
  %c_3 = stablehlo.constant dense<NN> : tensor<i32>
  %9 = stablehlo.add %8, %c_3 : tensor<i32>
  %10 = stablehlo.select %7, %9, %arg1 : tensor<i1>, tensor<i32>
  %11 = stablehlo.dynamic_slice %arg2, %10, sizes = [1] : (tensor<NNxi32>, tensor<i32>) -> tensor<1xi32>
  %12 = stablehlo.reshape %11 : (tensor<1xi32>) -> tensor<i32>
  %c_4 = stablehlo.constant dense<0> : tensor<i32>
  %13 = stablehlo.compare LT, %6, %c_4, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %c_5 = stablehlo.constant dense<NN> : tensor<i32>
  %14 = stablehlo.add %6, %c_5 : tensor<i32>
  %15 = stablehlo.select %13, %14, %6 : tensor<i1>, tensor<i32>
  %16 = stablehlo.dynamic_slice %arg2, %15, sizes = [1] : (tensor<NNxi32>, tensor<i32>) -> tensor<1xi32>
  %17 = stablehlo.reshape %16 : (tensor<1xi32>) -> tensor<i32>
  %c_6 = stablehlo.constant dense<0> : tensor<i32>
  %18 = stablehlo.compare LT, %arg1, %c_6, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %c_7 = stablehlo.constant dense<NN> : tensor<i32>
  %19 = stablehlo.add %arg1, %c_7 : tensor<i32>
  %20 = stablehlo.select %18, %19, %arg1 : tensor<i1>, tensor<i32>
  %21 = stablehlo.convert %20 : tensor<i32>
  %22 = stablehlo.broadcast_in_dim %21, dims = [] : (tensor<i32>) -> tensor<1xi32>
  %23 = "stablehlo.scatter"(%arg2, %22, %17) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
  ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
    stablehlo.return %arg4 : tensor<i32>
  }) : (tensor<NNxi32>, tensor<1xi32>, tensor<i32>) -> tensor<NNxi32>
  %c_8 = stablehlo.constant dense<0> : tensor<i32>
  %24 = stablehlo.compare LT, %6, %c_8, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %c_9 = stablehlo.constant dense<NN> : tensor<i32>
  %25 = stablehlo.add %6, %c_9 : tensor<i32>
  %26 = stablehlo.select %24, %25, %6 : tensor<i1>, tensor<i32>
  %27 = stablehlo.broadcast_in_dim %26, dims = [] : (tensor<i32>) -> tensor<1xi32>
  %28 = "stablehlo.scatter"(%23, %27, %12) <{indices_are_sorted = true, scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0], scatter_dims_to_operand_dims = [0]>, unique_indices = true}> ({
  ^bb0(%arg3: tensor<i32>, %arg4: tensor<i32>):
    stablehlo.return %arg4 : tensor<i32>
  }) : (tensor<NNxi32>, tensor<1xi32>, tensor<i32>) -> tensor<NNxi32>
  return %0, %28 : tensor<i32>, tensor<NNxi32>
}
"""

_TEMPLATES: dict = {}        # N -> (the template's functions by name, its while op), parsed once per N
_MAX_TEMPLATES = 64
_MISSING = object()
_CONSTANT = "stablehlo.constant"


def _template(n: int):
    hit = _TEMPLATES.get(n)
    if hit is None:
        from ..text import parse
        functions = parse(_PIVOT_LOOP.replace("NN", str(n))).functions
        loop = functions["main"].regions[0].blocks[0].operations[0]
        if len(_TEMPLATES) >= _MAX_TEMPLATES:
            _TEMPLATES.clear()
        hit = _TEMPLATES[n] = (functions, loop)
    return hit


def _function(functions, name):
    f = functions.get(name)
    if f is None or f.name != "func.func" or len(f.regions) != 1 or len(f.regions[0].blocks) != 1:
        return None
    return f


def _same_attributes(pa, qa) -> bool:
    """pa == qa, small dense constants compared by type and bytes and dense arrays by their
    values (what their equality compares, in a fraction of its time)."""
    if len(pa) != len(qa):
        return False
    for k, v in pa.items():
        w = qa.get(k, _MISSING)
        if w is v:
            continue
        c = v.__class__
        if c is not w.__class__:
            if v != w:
                return False
        elif c is DenseArrayAttr:
            # (equal tuples: each pair identical or ==, so DenseArrayAttr's equality holds)
            if v.values != w.values or v.element_type != w.element_type:
                if v != w:
                    return False
        elif c is DenseElementsAttr and v.array.size <= 64:
            x, y = v.array, w.array
            if x.shape != y.shape or x.dtype != y.dtype or v.type != w.type or x.tobytes() != y.tobytes():
                return False
        elif v != w:
            return False
    return True


def _same_type(x, y, teq) -> bool:
    """x == y for types, remembered in `teq` (id of the template's type -> the type found equal
    to it: a module's equal types are mostly one object, so most comparisons are one look-up)."""
    if teq.get(id(x)) is y:
        return True
    if x != y:
        return False
    teq[id(x)] = y
    return True


def _same_constant(x, y, teq) -> bool:
    """Whether the template's value `x` is a constant and `y` a constant of the same type and
    value, wherever it is defined (JAX's exports hoist and share constants)."""
    xo, yo = x.owner, y.owner
    return getattr(xo, "name", None) == _CONSTANT and getattr(yo, "name", None) == _CONSTANT \
        and _same_type(x.type, y.type, teq) and _same_attributes(xo.attributes, yo.attributes)


_PROGRAMS: dict = {}        # id(template block) -> (the block, its ops as _same_ops reads them)


def _template_program(tb):
    """The template block's ops other than constants as tuples (op, name, operands, results,
    result types, number of regions, attributes, whether a call): read once per template."""
    hit = _PROGRAMS.get(id(tb))
    if hit is None or hit[0] is not tb:
        if len(_PROGRAMS) >= 4 * _MAX_TEMPLATES:
            _PROGRAMS.clear()
        prog = tuple((p, p.name, tuple(p.operands), tuple(p.results), tuple(r.type for r in p.results),
                      len(p.regions), p.attributes, p.name == "func.call")
                     for p in tb.operations if p.name != _CONSTANT)
        hit = _PROGRAMS[id(tb)] = (tb, prog)
    return hit[1]


def _same_ops(tb, a_ops, t_funcs, a_funcs, vmap, depth, teq) -> bool:
    """Whether the ops `a_ops` (of the functions `a_funcs`) are those of the template block
    `tb` (of `t_funcs`): the same names, attributes, result types, regions and called
    functions, each operand the value `vmap` maps the template's operand to or a constant
    equal to the template's (constants compared where they are used, not where they stand);
    `vmap` grows by the results; `teq` remembers the types found equal (see `_same_type`)."""
    prog = _template_program(tb)
    a_ops = [q for q in a_ops if q.name != _CONSTANT]
    if len(prog) != len(a_ops):
        return False
    get = vmap.get
    tget = teq.get
    for (p, name, po, pr, prt, nreg, pa, is_call), q in zip(prog, a_ops):
        qo, qr = q.operands, q.results
        if q.name != name or len(qo) != len(po) or len(qr) != len(pr) \
                or len(q.regions) != nreg or q.successors:
            return False
        for x, y in zip(po, qo):
            m = get(x)
            if m is not y and (m is not None or not _same_constant(x, y, teq)):
                return False
        for xt, y in zip(prt, qr):
            yt = y.type
            if tget(id(xt)) is not yt and not _same_type(xt, yt, teq):
                return False
        qa = q.attributes
        if is_call:
            if pa.keys() != qa.keys() or depth <= 0:
                return False
            for k, v in pa.items():
                if k != "callee" and qa[k] != v:
                    return False
            tf = _function(t_funcs, getattr(pa.get("callee"), "root", None))
            af = _function(a_funcs, getattr(qa.get("callee"), "root", None))
            if tf is None or af is None:
                return False
            # (several loops call one function: compared with the template's once)
            cache = op_cache(af)
            key = ("same_as", id(tf))
            same = cache.get(key)
            if same is None or same[0] is not tf:
                same = cache[key] = (tf, _same_body(tf.regions[0].blocks[0], af.regions[0].blocks[0],
                                                    t_funcs, a_funcs, depth - 1, teq))
            if not same[1]:
                return False
        elif (pa or qa) and not _same_attributes(pa, qa):
            return False
        if nreg:
            for r, s in zip(p.regions, q.regions):
                if len(r.blocks) != 1 or len(s.blocks) != 1:
                    return False
                if not _same_block(r.blocks[0], s.blocks[0], t_funcs, a_funcs, vmap, depth, teq):
                    return False
        for x, y in zip(pr, qr):
            vmap[x] = y
    return True


def _same_block(tb, ab, t_funcs, a_funcs, vmap, depth, teq) -> bool:
    if len(tb.arguments) != len(ab.arguments):
        return False
    for x, y in zip(tb.arguments, ab.arguments):
        if not _same_type(x.type, y.type, teq):
            return False
        vmap[x] = y
    return _same_ops(tb, ab.operations, t_funcs, a_funcs, vmap, depth, teq)


def _same_body(tb, ab, t_funcs, a_funcs, depth, teq) -> bool:
    """A called function's body: its own values only (a fresh map)."""
    return _same_block(tb, ab, t_funcs, a_funcs, {}, depth, teq)


def same_loop(ctx, op, t_funcs, t_loop) -> bool:
    """Whether the `while` op `op` is the template's `t_loop` (of the template functions
    `t_funcs`): the same attributes, operand and result types, and condition and body (op by
    op, called functions included, through `_same_block`); callees are looked up in the
    interpreter's functions (`ctx.functions`). Shared by the loop recognizers (pivot_loop here,
    jax_threefry.threefry_loop)."""
    functions = getattr(ctx, "functions", None)      # (the interpreter's: how it finds callees)
    if not isinstance(functions, dict):
        return False
    if len(op.operands) != len(t_loop.operands) or len(op.results) != len(t_loop.results) \
            or len(op.regions) != len(t_loop.regions) or op.successors:
        return False
    if not _same_attributes(t_loop.attributes, op.attributes):
        return False
    teq = {}                     # (the types found equal: see _same_type)
    for x, y in zip(t_loop.operands, op.operands):
        if not _same_type(x.type, y.type, teq):
            return False
    for x, y in zip(t_loop.results, op.results):
        if not _same_type(x.type, y.type, teq):
            return False
    vmap = {}
    for r, s in zip(t_loop.regions, op.regions):
        if len(r.blocks) != 1 or len(s.blocks) != 1 \
                or not _same_block(r.blocks[0], s.blocks[0], t_funcs, functions, vmap, 2, teq):
            return False
    return True


def _matches_pivot_loop(ctx, op):
    """N where `op` is JAX's pivots-to-permutation loop over tensor<Nxi32>, else None."""
    if len(op.operands) != 4 or len(op.results) != 4 or len(op.regions) != 2:
        return None
    t = op.operands[0].type
    shape = getattr(t, "shape", None)
    if shape is None or len(shape) != 1 or not isinstance(shape[0], int) or shape[0] < 1:
        return None
    body = op.regions[1].blocks
    if len(body) != 1 or not 3 <= len(body[0].operations) <= 4 \
            or body[0].operations[0].name != "func.call":
        return None                      # (a quick look before the op-by-op comparison)
    n = shape[0]
    t_funcs, t_loop = _template(n)
    return n if same_loop(ctx, op, t_funcs, t_loop) else None


def wrap_signed(v: int, bits: int = 32) -> int:
    """v wrapped to a signed integer of `bits` bits (two's complement, as iN arithmetic)."""
    half = 1 << (bits - 1)
    return ((v + half) & ((half << 1) - 1)) - half


def _i32(v: int) -> int:
    return ((v + 0x80000000) & 0xFFFFFFFF) - 0x80000000


def _run_pivot_loop(ctx, op, n, args):
    swaps, count, k, perm = args
    s = np.asarray(swaps).tolist()
    p = np.asarray(perm).tolist()
    count = int(count)
    k = int(k)
    last = n - 1
    max_steps = ctx.max_steps
    deadline = ctx.deadline
    todo = n - count
    if 0 < todo and deadline is None and ctx.steps + todo <= max_steps and 0 <= k \
            and k + todo <= n and min(s) >= 0 and max(s) <= last:
        # every step in bounds and within the step limit (no tick would act): each step
        # swaps p[k] and p[s[k]], as the general loop below does for such indices
        ctx.steps += todo
        for i in range(k, k + todo):
            j = s[i]
            p[i], p[j] = p[j], p[i]
        return [swaps, np.int32(n), np.int32(k + todo), np.array(p, dtype=np.int32)]
    while count < n:
        steps = ctx.steps = ctx.steps + 1
        if steps > max_steps or deadline is not None:
            ctx.tick(op, counted=True)
        kk = _i32(k + n) if k < 0 else k             # the selects' wrap of a negative index
        at = 0 if kk < 0 else last if kk > last else kk      # dynamic_slice's clamped start
        j = s[at]
        x = p[at]
        jj = _i32(j + n) if j < 0 else j
        y = p[0 if jj < 0 else last if jj > last else jj]
        if 0 <= kk <= last:                          # a scatter index out of bounds: no update
            p[kk] = y
        if 0 <= jj <= last:
            p[jj] = x
        k = _i32(k + 1)
        count = _i32(count + 1)
    return [swaps, np.int32(count), np.int32(k), np.array(p, dtype=np.int32)]


def pivot_loop(ctx, op):
    """A function (ctx, op, args) -> results that runs the `while` op `op` where it is JAX's
    pivots-to-permutation loop (see the module docstring), else None; decided once per op."""
    if ctx.trace is not None:
        return None
    cache = op_cache(op)
    n = cache.get("pivot_loop", _MISSING)
    if n is _MISSING:
        try:
            n = _matches_pivot_loop(ctx, op)
        except Exception:  # noqa: BLE001 - anything unexpected: the loop runs op by op
            n = None
        cache["pivot_loop"] = n
    if n is None:
        return None
    return lambda ctx, op, args: _run_pivot_loop(ctx, op, n, args)
