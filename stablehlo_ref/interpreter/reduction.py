"""Reductions with a region: `reduce`. Common bodies map to numpy primitives; any other body
is applied vectorized as a tree reduction (the spec leaves the order implementation-defined)."""
from __future__ import annotations

import operator

import numpy as np

from ..errors import InterpreterError
from .numerics import NATIVE_IN_TYPE, SCALAR_NAN_ORDER, compute_dtype, elem, from_compute
from .registry import kernel, op_cache, specializer

_PRIMITIVES = {
    "stablehlo.add": ("add", np.add, np.logical_or),
    "stablehlo.multiply": ("mul", np.multiply, np.logical_and),
    "stablehlo.maximum": ("max", np.maximum, np.logical_or),
    "stablehlo.minimum": ("min", np.minimum, np.logical_and),
    "stablehlo.and": ("and", np.bitwise_and, np.logical_and),
    "stablehlo.or": ("or", np.bitwise_or, np.logical_or),
    "stablehlo.xor": ("xor", np.bitwise_xor, np.logical_xor),
}


def recognize_binary_body(region):
    """If the region is `return op(arg0, arg1)` for a known commutative op, its name."""
    blocks = region.blocks
    if len(blocks) != 1:
        return None
    b = blocks[0]
    bargs = b.arguments
    ops = b.operations
    if len(bargs) != 2 or len(ops) != 2:
        return None
    inner, ret = ops
    name = inner.name
    if name not in _PRIMITIVES:
        return None
    # (the operands are the two arguments, in either order)
    x = inner.operands
    if len(x) != 2:
        return None
    a0, a1 = bargs
    x0, x1 = x
    if not ((x0 is a0 and x1 is a1) or (x0 is a1 and x1 is a0)):
        return None
    r = ret.operands
    if len(r) != 1 or r[0] is not inner.results[0]:
        return None
    return name


def reduce_with_primitive(name, x, axes, init, et):
    _, fn, bool_fn = _PRIMITIVES[name]
    if axes and x.__class__ is np.ndarray and x.size and et.name in NATIVE_IN_TYPE:
        dt = x.dtype
        if init.dtype == dt and dt == et.dtype:
            # (the values the conversions below give: no conversion changes them; numpy
            # sums and multiplies narrow integers in its default integer, wrapped back here
            # as `from_compute` wraps them)
            out = fn(fn.reduce(x, axis=axes), init)
            if out.dtype != dt:
                out = out.astype(dt)
            return out
    if x.size == 0 and axes:
        # nothing to combine: every result element is the init value (numpy's minimum/maximum
        # have no identity to start an empty reduction from)
        out_shape = tuple(d for i, d in enumerate(x.shape) if i not in axes)
        return np.full(out_shape, np.asarray(init).reshape(()), dtype=np.asarray(init).dtype)
    if et.is_bool:
        r = bool_fn.reduce(x, axis=axes) if axes else x
        return bool_fn(r, init)
    if et.is_complex:
        r = fn.reduce(x, axis=axes) if axes else x
        return fn(r, init).astype(et.dtype)
    if et.is_float:
        # accumulate in f32 for narrow floats (as XLA does), natively for f32/f64
        acc_dt = np.float64 if et.name == "f64" else np.float32
        xc = x.astype(acc_dt, copy=False)       # (read only: no copy of an f32/f64 operand)
        r = fn.reduce(xc, axis=axes) if axes else xc
        return fn(r, init.astype(acc_dt, copy=False)).astype(et.dtype)
    # (numpy's warnings are off for the whole run: the evaluator holds an errstate)
    cd = compute_dtype(et)
    xc = x.astype(cd, copy=False)
    r = fn.reduce(xc, axis=axes) if axes else xc
    return from_compute(fn(r, init.astype(cd, copy=False)), et)


# elementwise ops a reduction body or comparator may be made of to run by their kernels one
# after another (`straight_runner`): plain functions of their operands (a constant: of
# none, a 0-d value as a region run binds it), no region, no outer value
_STRAIGHT_OPS = frozenset(
    "stablehlo." + n for n in ("compare", "and", "or", "xor", "not", "select", "real", "imag",
                               "maximum", "minimum", "add", "subtract", "multiply", "negate",
                               "abs", "constant"))


def _straight_body(region):
    """(steps (kernel, op, operand slots, result slot), constant ops (op, kernel, slot),
    returned slots, number of arguments, number of slots) where `region` is one block of
    `_STRAIGHT_OPS` on its arguments and earlier results, ended by its return (slots: the
    arguments, then each op's result); else None."""
    from .registry import KERNELS
    if len(region.blocks) != 1:
        return None
    block = region.blocks[0]
    ops = block.operations
    if not ops or ops[-1].name != "stablehlo.return":
        return None
    slot = {}
    for a in block.arguments:
        slot[id(a)] = len(slot)
    steps, consts = [], []
    straight = _STRAIGHT_OPS
    for o in ops[:-1]:
        name = o.name
        k = KERNELS.get(name)
        if name not in straight or k is None or o.regions or len(o.results) != 1:
            return None
        ins = []
        for v in o.operands:
            i = slot.get(id(v))
            if i is None:
                return None
            ins.append(i)
        out = slot[id(o.results[0])] = len(slot)
        if name == "stablehlo.constant":
            consts.append((o, k, out))
        else:
            steps.append((k, o, tuple(ins), out))
    ret = []
    for v in ops[-1].operands:
        i = slot.get(id(v))
        if i is None:
            return None
        ret.append(i)
    return tuple(steps), tuple(consts), tuple(ret), len(block.arguments), len(slot)


def straight_runner(ctx, region, cache=None):
    """`ctx.region_runner(region)`, or, for a body of a few elementwise ops
    (`_straight_body`) and no trace, a function that runs those ops' kernels in order on a
    list of values: the kernels a run of the region calls, the same values, without the
    region run's plan (most of a first run of an argmax's reduction, whose body runs once
    per level of the tree). Constants are made once per call of this function. `cache`: a
    dict kept with the op that owns `region`, for the recognized body."""
    if ctx.trace is not None:
        return ctx.region_runner(region)
    key = ("straight_body", id(region))
    hit = cache.get(key) if cache is not None else None
    if hit is None or hit[0] is not region:
        hit = (region, _straight_body(region))
        if cache is not None:
            cache[key] = hit
    body = hit[1]
    if body is None:
        return ctx.region_runner(region)
    steps, consts, ret, nargs, nslots = body
    template = [None] * nslots
    for o, k, i in consts:
        template[i] = k(ctx, o)

    def run(args):
        if len(args) != nargs:
            raise InterpreterError(f"a region of {nargs} arguments given {len(args)}")
        env = template.copy()
        env[:nargs] = args
        for k, o, ins, out in steps:
            env[out] = k(ctx, o, *[env[i] for i in ins])
        return [env[i] for i in ret]
    return run


def tree_reduce(ctx, region, xs, inits, axes, cache=None):
    """Reduce tuples of arrays `xs` over `axes` by applying `region` on whole arrays, pairwise.
    (`cache`: see `straight_runner`.)"""
    run_region = straight_runner(ctx, region, cache)
    # move reduced axes to the front and flatten them into one axis
    nd = xs[0].ndim
    keep = [d for d in range(nd) if d not in axes]
    out_shape = tuple(xs[0].shape[d] for d in keep)
    cur = [np.transpose(x, list(axes) + keep).reshape((-1,) + out_shape) for x in xs]
    accs = [np.full(out_shape, i.reshape(()), dtype=i.dtype) for i in inits]
    while cur[0].shape[0] > 1:
        n = cur[0].shape[0]
        half = n // 2
        a = [c[:half] for c in cur]
        b = [c[half:2 * half] for c in cur]
        res = run_region(a + b)
        res = [np.asarray(r) for r in res]
        if n % 2:
            res = [np.concatenate([r, c[2 * half:]], axis=0) for r, c in zip(res, cur)]
        cur = res
    if cur[0].shape[0] == 1:
        res = run_region([c[0] for c in cur] + accs)
    else:
        res = accs
    return [np.asarray(r) for r in res]


# JAX's argmax/argmin: a reduction of (values, indices) whose body keeps the greater (lesser)
# value, a NaN first, and of equal values the lower index:
#   p = compare GT|LT a, b [or compare NE a, a]; e = compare EQ a, b; q = compare LT ai, bi
#   return select p, a, b ; select (p or (e and q)), ai, bi
# Without NaNs that is the greatest (least) value and the lowest index of the elements equal
# to it: the same for every order of the tree, which `arg_reduce` computes by whole-array
# reductions. NaNs (which NaN wins depends on the tree's order) and zeros of both signs (which
# zero's bits) fall back to `tree_reduce`.
_ARG_FLOATS = frozenset(("f16", "bf16", "f32", "f64"))


def _arg_compare(o, direction, x, y):
    """Whether `o` is `compare direction, x, y` that numpy's comparison of the stored values
    computes exactly (floats f16/bf16/f32/f64 without TOTALORDER; integers of 8+ bits stored
    as they compute, compared in their own signedness: as `_direct_comparison` in
    elementwise.py decides, and bf16, whose comparisons are exact too)."""
    if o.name != "stablehlo.compare":
        return False
    xs = o.operands
    if len(xs) != 2 or xs[0] is not x or xs[1] is not y:
        return False
    attrs = o.attributes
    if attrs["comparison_direction"].value != direction:
        return False
    et = elem(x.type)
    ct = attrs.get("compare_type")
    ct = ct.value if ct is not None else None
    if et.is_float:
        return et.name in _ARG_FLOATS and ct in (None, "FLOAT")
    if et.is_bool or et.is_complex or et.bits < 8 or compute_dtype(et) != et.dtype:
        return False
    return ct is None or ct == ("SIGNED" if et.is_signed else "UNSIGNED")


def recognize_arg_body(region):
    """(kind, value element type, index element type), kind "max" or "min", where `region`
    is JAX's argmax/argmin body (above) on arguments (a, ai, b, bi), matched by its ops and
    their operands; else None."""
    if len(region.blocks) != 1:
        return None
    block = region.blocks[0]
    bargs = block.arguments
    ops = block.operations
    if len(bargs) != 4 or not ops or ops[-1].name != "stablehlo.return":
        return None
    a, ai, b, bi = bargs
    made = {}
    for o in ops[:-1]:
        if o.regions or len(o.results) != 1:
            return None
        made[id(o.results[0])] = o
    ret = ops[-1].operands
    if len(ret) != 2:
        return None
    used = set()

    def op_of(v, name, n):
        o = made.get(id(v))
        if o is None or o.name != name or len(o.operands) != n:
            raise LookupError
        used.add(id(o))
        return o

    def pair(o):
        return o.operands[0], o.operands[1]

    try:
        sv = op_of(ret[0], "stablehlo.select", 3)
        si = op_of(ret[1], "stablehlo.select", 3)
        if sv.operands[1] is not a or sv.operands[2] is not b \
                or si.operands[1] is not ai or si.operands[2] is not bi:
            return None
        p = sv.operands[0]
        po = made.get(id(p))
        if po is None:
            return None
        if po.name == "stablehlo.or":
            op_of(p, "stablehlo.or", 2)
            c1, c2 = (op_of(v, "stablehlo.compare", 2) for v in pair(po))
            if _arg_compare(c1, "NE", a, a):
                c1, c2 = c2, c1
            if not _arg_compare(c2, "NE", a, a):
                return None
            cmp_ = c1
        else:
            cmp_ = op_of(p, "stablehlo.compare", 2)
        if _arg_compare(cmp_, "GT", a, b):
            kind = "max"
        elif _arg_compare(cmp_, "LT", a, b):
            kind = "min"
        else:
            return None
        q = op_of(si.operands[0], "stablehlo.or", 2)
        u, w = pair(q)
        if w is p:
            u, w = w, u
        if u is not p:
            return None
        t = op_of(w, "stablehlo.and", 2)
        e, lt = (op_of(v, "stablehlo.compare", 2) for v in pair(t))
        if e.attributes["comparison_direction"].value != "EQ":
            e, lt = lt, e
        if not (_arg_compare(e, "EQ", a, b) or _arg_compare(e, "EQ", b, a)) \
                or not _arg_compare(lt, "LT", ai, bi):
            return None
    except LookupError:
        return None
    if len(used) != len(made):          # (an op outside the pattern)
        return None
    return kind, elem(cmp_.operands[0].type), elem(lt.operands[0].type)


def arg_reduce(kind, x, i, v0, i0, axes, vet, iet):
    """The (value, index) results of the recognized argmax ("max") / argmin ("min") body
    reducing `x` with indices `i` from inits `v0`, `i0` over `axes`, as `tree_reduce` gives
    them; None where that depends on the tree's order (NaNs, zeros of both signs) or the
    operands are not plain arrays of the body's types."""
    ND = np.ndarray
    vdt, idt = vet.dtype, iet.dtype
    if not axes or x.__class__ is not ND or i.__class__ is not ND or not x.size \
            or x.dtype != vdt or i.dtype != idt or x.shape != i.shape:
        return None
    v0 = np.asarray(v0)
    i0 = np.asarray(i0)
    if v0.dtype != vdt or i0.dtype != idt or v0.shape or i0.shape:
        return None
    if x.ndim == 1:
        # one dimension reduced to a scalar: numpy scalars compared as the body compares them
        m = x.max() if kind == "max" else x.min()
        if vet.is_float:
            if m != m or v0 != v0:
                return None
            if m == 0 and _mixed_zeros(x):
                return None
        ai = i[x == m].min()
        if (m > v0) if kind == "max" else (m < v0):
            value, index = m, ai
        elif m == v0:
            value, index = v0, (ai if ai < i0 else i0)
        else:
            value, index = v0, i0
        return [np.asarray(value, vdt), np.asarray(index, idt)]
    if kind == "max":
        m = x.max(axis=axes, keepdims=True)
        better = np.greater
    else:
        m = x.min(axis=axes, keepdims=True)
        better = np.less
    if vet.is_float:
        # (numpy's max and min keep a NaN of their operand; bf16's are not numpy's own)
        if np.isnan(m if vet.name != "bf16" else x).any() or v0 != v0:
            return None
        if not m.all() and _mixed_zeros(x):
            return None
    imax = _IMAX.get(idt)
    if imax is None:
        imax = _IMAX[idt] = np.iinfo(idt).max
    ai = np.where(x == m, i, imax).min(axis=axes)
    a = m.reshape(ai.shape)
    win = better(a, v0)
    value = np.where(win, a, v0).astype(vdt, copy=False)
    index = np.where(win, ai, np.where(a == v0, np.minimum(ai, i0), i0)).astype(idt, copy=False)
    return [np.asarray(value), np.asarray(index)]


_IMAX = {}


def _mixed_zeros(x):
    """Whether `x` holds zeros of both signs (a zero best value's bits then depend on the
    order the tree combines them in)."""
    s = np.signbit(x[x == 0])
    return bool(s.any()) and not s.all()


@kernel("stablehlo.reduce")
def reduce(ctx, op, *args):
    n = len(args) // 2
    xs, inits = list(args[:n]), list(args[n:])
    axes = tuple(map(int, op.attributes["dimensions"].values))
    region = op.regions[0]
    if n == 1:
        # (`regions_not_run` recognized the body for the one-pass run: kept on the op)
        cache = getattr(op, "_cache", None)
        hit = cache.get("binary_body") if cache is not None else None
        name = hit[1] if hit is not None and hit[0] is region else recognize_binary_body(region)
        if name is not None:
            et = elem(op.results[0].type)
            return reduce_with_primitive(name, xs[0], axes, inits[0], et)
    elif n == 2 and ctx.trace is None:
        cache = op_cache(op)
        hit = cache.get("arg_body")
        if hit is None or hit[0] is not region:
            hit = cache["arg_body"] = (region, _arg_plan(op))
        if hit[1] is not None:
            res = arg_reduce(hit[1][0], xs[0], xs[1], inits[0], inits[1], axes, *hit[1][1:])
            if res is not None:
                return res
    return _reduce_by_tree(ctx, op, xs, inits, axes)


def _reduce_by_tree(ctx, op, xs, inits, axes):
    res = tree_reduce(ctx, op.regions[0], xs, inits, axes, op_cache(op))
    return [r.astype(elem(t.type).dtype, copy=False) if hasattr(t.type, "element_type") else r
            for r, t in zip(res, op.results)]


def _arg_plan(op):
    """`recognize_arg_body` of a reduction of two operands whose results have the body's
    element types; else None."""
    rec = recognize_arg_body(op.regions[0])
    if rec is None or len(op.results) != 2:
        return None
    for t, et in zip(op.results, rec[1:]):
        if not hasattr(t.type, "element_type") or elem(t.type).dtype != et.dtype:
            return None
    return rec


@specializer("stablehlo.reduce")
def reduce_specialized(op, known=None):
    """One operand reduced by a recognized body: body and dimensions decoded once; JAX's
    argmax/argmin (`recognize_arg_body`) by `arg_reduce`."""
    if len(op.operands) == 4:
        rec = _arg_plan(op)
        if rec is None:
            return None
        kind, vet, iet = rec
        axes = tuple(map(int, op.attributes["dimensions"].values))

        def reduce_arg(ctx, op, x, i, v0, i0):
            if ctx.trace is None:
                res = arg_reduce(kind, x, i, v0, i0, axes, vet, iet)
                if res is not None:
                    return res
            return _reduce_by_tree(ctx, op, [x, i], [v0, i0], axes)
        return reduce_arg
    if len(op.operands) != 2:
        return None
    name = recognize_binary_body(op.regions[0])
    if name is None:
        return None
    axes = tuple(map(int, op.attributes["dimensions"].values))
    et = elem(op.results[0].type)
    if et.name in ("f32", "f64") and name in _PY_OPERATORS:
        # f32/f64 sums and products in the type itself, as `reduce_with_primitive` computes
        # them; a full reduction combines its scalar with a scalar init by the Python operator
        # (the same rounding as the ufunc, without its call on scalars)
        _, fn, _ = _PRIMITIVES[name]
        pyop = _PY_OPERATORS[name]
        dt = et.dtype
        # (numpy's scalar operator may keep the other NaN payload than the ufunc: then its
        # operands go the other way round, see `numerics.SCALAR_NAN_ORDER`)
        order = SCALAR_NAN_ORDER.get((name.split(".")[1], dt.char))
        scalar = dt.type if order is not None else None
        swap = order == "swapped"
        ND = np.ndarray

        def reduce_float(ctx, op, x, init):
            if x.__class__ is not ND or x.dtype != dt or not x.size:
                return reduce_with_primitive(name, x, axes, init, et)
            r = fn.reduce(x, axis=axes) if axes else x
            if r.__class__ is scalar and init.__class__ is scalar:
                return pyop(init, r) if swap else pyop(r, init)
            return fn(r, init.astype(dt, copy=False)).astype(dt, copy=False)
        reduce_float.runs_no_region = True
        return reduce_float

    if et.is_bool:
        # booleans: the bitwise reductions give the logical ones' values at less cost, and a
        # full reduction is combined with a scalar init by the Python operator
        _, _, bool_fn = _PRIMITIVES[name]
        bitwise, pyop = _BOOL_BITWISE[bool_fn]
        ND, BOOL = np.ndarray, np.bool_
        xshape = getattr(op.operands[0].type, "shape", None)
        # a reduction over every dimension of a static shape: from the count of true
        # elements (numpy counts at a fraction of a reduction's cost)
        full = xshape is not None and None not in xshape and len(axes) == len(xshape) \
            and sorted(axes) == list(range(len(xshape)))
        count = np.count_nonzero
        TRUE, FALSE = np.True_, np.False_

        def reduce_bool(ctx, op, x, init):
            if x.__class__ is not ND or x.dtype != BOOL or not x.size:
                return reduce_with_primitive(name, x, axes, init, et)
            if full and x.shape == xshape and init.__class__ is BOOL:
                k = count(x)
                if bool_fn is np.logical_or:
                    r = TRUE if k else FALSE
                elif bool_fn is np.logical_and:
                    r = TRUE if k == x.size else FALSE
                else:
                    r = TRUE if k & 1 else FALSE
                return pyop(r, init)
            r = bitwise.reduce(x, axis=axes) if axes else x
            if r.__class__ is BOOL and init.__class__ is BOOL:
                return pyop(r, init)
            return bool_fn(r, init)
        reduce_bool.runs_no_region = True
        return reduce_bool

    def reduce_one(ctx, op, x, init):
        return reduce_with_primitive(name, x, axes, init, et)
    reduce_one.runs_no_region = True       # (the body is recognized: it is never run)
    return reduce_one


_PY_OPERATORS = {"stablehlo.add": operator.add, "stablehlo.multiply": operator.mul}
_BOOL_BITWISE = {np.logical_or: (np.bitwise_or, operator.or_),
                 np.logical_and: (np.bitwise_and, operator.and_),
                 np.logical_xor: (np.bitwise_xor, operator.xor)}
