"""Op sequences JAX writes for one numpy operation, run as that operation.

`jnp.remainder` and `jnp.floor_divide` (Python's `%` and `//` on integers) lower to
StableHLO's truncating `remainder` / `divide` followed by a sign correction:

    floor_mod(x, d):  r = rem(x, d); select((r < 0) != (d < 0) and r != 0, r + d, r)
    floor_div(x, d):  q = div(x, d); select(sign(x) != sign(d) and rem(x, d) != 0, q - 1, q)

For a divisor `d` known when the block is compiled, with every element the same integer
`d > 0`, of a signed integer type, these are exactly numpy's floored `%` and `//` of the
integers (no overflow: |r| < d, and q - 1 >= INT_MIN / d - 1 > INT_MIN for d >= 2, while
for d == 1 the remainder is 0 and no correction is made). A power of two is `x & (d - 1)`
and `x >> log2(d)` (two's complement; a small array's operand an array of its shape). The
compiled block (`plan._Emitter.finish`) finds these patterns among the entries of a merged
sequence of steps and replaces the final select by one step computing the whole; the
pattern's other steps go where nothing else reads their values. Values of another form
than the pattern was matched for (an array of another dtype, a 0-d array) run the original
steps (see `_fused`).

Likewise `a + convert(p)` of a boolean p into a's integer type (jnp's `c + (v != 1)`) is
numpy's sum of the integer and boolean arrays, one call instead of two.

A full boolean `or` reduction of `x != k` (jnp.any(v != k)), or `and` of `x == k`, k a known
integer array of x's shape and dtype, is whether x's bytes differ from k's: integers are equal
exactly where their bytes are (one `tobytes` instead of a compare and a count).

And `1 / (1 + exp(-x))` (jax.nn.sigmoid) of f32/f64 arrays is one step with the four
steps' values (`_fused_sigmoid`): the exponential in f64 rounded once to the type, on the
negation made in f64 (exact either way), the sum and quotient with the known ones.

Entries are those of `plan._sequence_runner`: (fn, a, b, -1, out) for a Python operator,
(fn, a, b, c, out, kind, op) for the others."""
from __future__ import annotations

import operator

import numpy as np

_SIGNED = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64}
_SELECTS = ("select", "putmask", "putmask_in_place", "call3")


def _etname(t):
    et = getattr(t, "element_type", None)
    return getattr(et, "name", None)


def _known_int(known, slot):
    """The integer every element of the known value in `slot` equals, or None."""
    if slot not in known:
        return None
    v = np.asarray(known[slot])
    if v.dtype.kind not in "iu" or v.size == 0:
        return None
    first = v.reshape(-1)[0]
    if not (v == first).all():
        return None
    return int(first)


class _Graph:
    def __init__(self, entries, known):
        self.entries = entries
        self.known = known
        self.prod = {}
        for i, e in enumerate(entries):
            self.prod[e[4]] = i

    def producer(self, slot, fn=None, kernel=None):
        """The position of the entry making `slot`: an operator `fn`, or a kernel entry of
        the op named `kernel`; None otherwise."""
        i = self.prod.get(slot)
        if i is None:
            return None
        e = self.entries[i]
        if fn is not None:
            return i if len(e) == 5 and e[3] == -1 and e[0] is fn else None
        if len(e) == 7 and e[5] == "kernel" and e[6] is not None and e[6].name == kernel:
            return i
        return None

    def const(self, slot, value):
        return _known_int(self.known, slot) == value


def _int_op(g, i, name):
    """(x slot, d, numpy scalar type) of a kernel entry `name`(x, d) of a signed integer type
    whose divisor is known, every element the same d > 0; or None."""
    e = g.entries[i]
    op = e[6]
    if len(op.operands) != 2:
        return None
    t = _etname(op.results[0].type)
    if t not in _SIGNED or _etname(op.operands[0].type) != t or _etname(op.operands[1].type) != t:
        return None
    if tuple(op.operands[0].type.shape) != tuple(op.results[0].type.shape):
        return None
    d = _known_int(g.known, e[2])
    if d is None or d <= 0:
        return None
    return e[1], d, _SIGNED[t]


def _operands(e):
    return e[1], e[2]


def _cmp_with(g, i, fn, x, value, commute):
    """Entry i is `fn(x, value)` (or `fn(value, x)` where `commute`)."""
    if i is None:
        return False
    e = g.entries[i]
    if e[0] is not fn:
        return False
    a, b = _operands(e)
    return a == x and g.const(b, value) or commute and b == x and g.const(a, value)


def _match_mod(g, s):
    """Members (positions) and (x, d, type) of a floor_mod pattern ending at select s."""
    _, p, x, y = g.entries[s][:4]
    r = g.producer(y, kernel="stablehlo.remainder")
    if r is None:
        return None
    got = _int_op(g, r, "stablehlo.remainder")
    if got is None:
        return None
    xs, d, t = got
    a = g.producer(x, fn=operator.add)
    if a is None:
        return None
    aa, ab = _operands(g.entries[a])
    if not (aa == y and g.const(ab, d) or ab == y and g.const(aa, d)):
        return None
    m = g.producer(p, fn=operator.and_)
    if m is None:
        return None
    ma, mb = _operands(g.entries[m])
    for neg_slot, nz_slot in ((ma, mb), (mb, ma)):
        neg = g.producer(neg_slot, fn=operator.lt)
        nz = g.producer(nz_slot, fn=operator.ne)
        if _cmp_with(g, neg, operator.lt, y, 0, False) and _cmp_with(g, nz, operator.ne, y, 0, True):
            return (r, a, m, neg, nz), (xs, d, t)
    return None


def _match_div(g, s):
    """Members and (x, d, type) of a floor_divide pattern ending at select s."""
    _, p, x, y = g.entries[s][:4]
    q = g.producer(y, kernel="stablehlo.divide")
    if q is None:
        return None
    got = _int_op(g, q, "stablehlo.divide")
    if got is None:
        return None
    xs, d, t = got
    sub = g.producer(x, fn=operator.sub)
    if sub is None:
        return None
    sa, sb = _operands(g.entries[sub])
    if sa != y or not g.const(sb, 1):
        return None
    m = g.producer(p, fn=operator.and_)
    if m is None:
        return None
    ma, mb = _operands(g.entries[m])
    for sg_slot, nz_slot in ((ma, mb), (mb, ma)):
        t_i = g.producer(sg_slot, fn=operator.ne)
        nz = g.producer(nz_slot, fn=operator.ne)
        if t_i is None or nz is None:
            continue
        ta, tb = _operands(g.entries[t_i])
        if g.const(tb, 1):
            sign_slot = ta
        elif g.const(ta, 1):
            sign_slot = tb
        else:
            continue
        sg = g.producer(sign_slot, kernel="stablehlo.sign")
        if sg is None or g.entries[sg][1] != xs or g.entries[sg][2] >= 0:
            continue
        na, nb = _operands(g.entries[nz])
        if g.const(nb, 0):
            rs = na
        elif g.const(na, 0):
            rs = nb
        else:
            continue
        r = g.producer(rs, kernel="stablehlo.remainder")
        if r is None:
            continue
        got_r = _int_op(g, r, "stablehlo.remainder")
        if got_r is None or got_r[0] != xs or got_r[1] != d or got_r[2] is not t:
            continue
        return (q, sub, m, t_i, sg, nz, r), (xs, d, t)
    return None


def _fused(floor_div, d, scalar, original, out):
    """The step `fn(ctx, f, x)` for floor_mod / floor_div of x by d: numpy's floored `%` or
    `//` (a mask or shift for a power of two) on arrays of rank >= 1 and on numpy scalars of
    the pattern's type; anything else runs the pattern's original steps (`original`, a
    runner) and takes their result."""
    dtype = np.dtype(scalar)
    ds = scalar(d)
    ND = np.ndarray
    power = d & (d - 1) == 0
    if floor_div:
        if power:
            arr_fn, arr_b = np.right_shift, scalar(d.bit_length() - 1)
        else:
            arr_fn, arr_b = np.floor_divide, ds
        scal = operator.floordiv
    else:
        if power:
            arr_fn, arr_b = np.bitwise_and, scalar(d - 1)
        else:
            arr_fn, arr_b = np.remainder, ds
        scal = operator.mod

    # a mask or shift of a small array takes an array of its shape full of the operand (the
    # same values of the same dtype, elementwise: numpy's loop for two arrays costs less than
    # the conversion of a scalar operand); kept, with its shape, for the last shape seen
    full = [((), None)]
    full_shape = np.full

    def fused(ctx, f, x):
        if x.__class__ is ND:
            if x.dtype == dtype and x.ndim:
                if power and x.size <= _FULL_OPERAND_ELEMENTS:
                    sh, b = full[0]
                    if x.shape != sh:
                        sh = x.shape
                        b = full_shape(sh, arr_b, dtype)
                        full[0] = (sh, b)
                    return arr_fn(x, b)
                return arr_fn(x, arr_b)
        elif x.__class__ is scalar:
            return scal(x, ds)       # numpy's integer scalars floor (d > 0: no warning)
        original(ctx, f)
        return f[out]
    return fused


# (at most this many elements: `_fused`'s operand array of the shape)
_FULL_OPERAND_ELEMENTS = 4096


_INT_TYPES = {**_SIGNED, "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32,
              "ui64": np.uint64}


def _match_add_bool(g, s):
    """Members and (a, p, type) of `a + convert(p)` (or `convert(p) + a`) ending at the add
    entry s: p boolean, the sum of a native integer type, arrays of one shape (`c + (v != 1)`
    in jnp, counting)."""
    e = g.entries[s]
    for a, cv in ((e[1], e[2]), (e[2], e[1])):
        c = g.producer(cv, kernel="stablehlo.convert")
        if c is None or a == cv:
            continue
        op = g.entries[c][6]
        if _etname(op.operands[0].type) != "i1":
            continue
        t = _INT_TYPES.get(_etname(op.results[0].type))
        if t is None:
            continue
        return (c,), (a, g.entries[c][1], t)
    return None


def _fused_add_bool(scalar, a_slot, p_slot, original, out, first):
    """The step `fn(ctx, f, a)` for `a + convert(p)`: numpy's sum of the integer array and
    the boolean one (booleans add as 0 and 1, in the integer's dtype: the convert's values),
    in the original order of the operands (`first`: a is the add's first operand); anything
    else (numpy scalars, other dtypes or shapes) runs the original steps."""
    dtype = np.dtype(scalar)
    bdt = np.dtype(np.bool_)
    ND = np.ndarray
    add = np.add

    def fused(ctx, f, a):
        p = f[p_slot]
        if a.__class__ is ND and p.__class__ is ND and a.dtype == dtype and p.dtype == bdt \
                and a.ndim and a.shape == p.shape:
            return add(a, p) if first else add(p, a)
        original(ctx, f)
        return f[out]
    return fused


_FLOATS = {"f32": np.float32, "f64": np.float64}


def _known_ones(known, slot, dtype):
    """Whether the known value in `slot` is an array of `dtype` with every element 1."""
    if slot not in known:
        return False
    v = known[slot]
    return v.__class__ is np.ndarray and v.dtype == dtype and v.ndim > 0 \
        and bool((v == 1).all())


def _match_sigmoid(g, s):
    """Members and (x, ones of the add, ones of the divide, add order, divide order, type)
    of `1 / (1 + exp(-x))` (jax.nn.sigmoid's lowering) ending at the divide entry s: an f32
    or f64 negate and exponential of x's type and shape, the ones known arrays of that type
    and shape (either operand order for the add)."""
    e = g.entries[s]
    if not (len(e) == 5 and e[0] is operator.truediv and e[3] == -1):
        return None
    one_d, den = e[1], e[2]
    a = g.producer(den, fn=operator.add)
    if a is None:
        return None
    aa, ab = _operands(g.entries[a])
    for one_a, ex_slot, one_first in ((aa, ab, True), (ab, aa, False)):
        x_ = g.producer(ex_slot, kernel="stablehlo.exponential")
        if x_ is None:
            continue
        ex = g.entries[x_]
        n = g.producer(ex[1], kernel="stablehlo.negate")
        if n is None or ex[2] >= 0:
            continue
        ng = g.entries[n]
        if ng[2] >= 0:
            continue
        nop, xop = ng[6], ex[6]
        t = _etname(nop.results[0].type)
        scalar = _FLOATS.get(t)
        if scalar is None:
            continue
        shape = getattr(nop.results[0].type, "shape", None)
        if shape is None or None in shape or not shape:
            continue
        ok = all(_etname(v.type) == t and tuple(getattr(v.type, "shape", ()) or ()) == tuple(shape)
                 for v in (nop.operands[0], nop.results[0], xop.operands[0], xop.results[0]))
        dt = np.dtype(scalar)
        if not ok or not _known_ones(g.known, one_a, dt) or not _known_ones(g.known, one_d, dt):
            continue
        if g.known[one_a].shape != tuple(shape) or g.known[one_d].shape != tuple(shape):
            continue
        return (n, x_, a), (ng[1], one_a, one_d, one_first, scalar, tuple(shape))
    return None


def _fused_sigmoid(x_slot, ones_a, ones_d, one_first, scalar, shape, original, out):
    """The step `fn(ctx, f, x)` for `1 / (1 + exp(-x))` on an array of the pattern's type
    and shape, as the four steps compute it: the exponential of an f32 array in f64 rounded
    once to f32 (`elementwise`'s unary kernels), of the negation (exact in either type: the
    f64 negation of x widened is the widened negation of x, NaNs included), the sum with the
    known ones and the quotient of the known ones by it in the type, the operands in the
    pattern's order; the intermediate arrays are the fused step's own (written in place).
    Anything else runs the original steps."""
    dtype = np.dtype(scalar)
    ND = np.ndarray

    def fused(ctx, f, x):
        if x.__class__ is ND and x.dtype == dtype and x.shape == shape:
            return _sigmoid_steps(x, dtype, ones_a, ones_d, one_first)
        original(ctx, f)
        return f[out]
    return fused


def _match_any_ne(g, s):
    """Members and (x, init slot, known bytes, dtype, shape, any) of a full boolean `or`
    reduction of `x != k` (jnp.any(v != k)), or `and` of `x == k` (jnp.all(v == k)), ending
    at the reduce entry s: x and k integer arrays of one static shape and dtype, k known,
    the reduction over every dimension with the one init operand."""
    from .reduction import recognize_binary_body
    e = g.entries[s]
    op = e[6]
    if len(op.operands) != 2 or len(op.results) != 1 \
            or tuple(getattr(op.results[0].type, "shape", (1,))) != () \
            or _etname(op.results[0].type) != "i1" or e[2] < 0:
        return None
    xshape = getattr(op.operands[0].type, "shape", None)
    if xshape is None or None in xshape or not len(xshape):
        return None
    dims = sorted(int(d) for d in op.attributes["dimensions"].values)
    if dims != list(range(len(xshape))):
        return None
    name = recognize_binary_body(op.regions[0])
    if name == "stablehlo.or":
        fn, want_any = operator.ne, True
    elif name == "stablehlo.and":
        fn, want_any = operator.eq, False
    else:
        return None
    c = g.producer(e[1], fn=fn)
    if c is None:
        return None
    for x, k in (_operands(g.entries[c]), _operands(g.entries[c])[::-1]):
        if x == k or k not in g.known or x in g.known:
            continue
        kv = g.known[k]
        if kv.__class__ is not np.ndarray or kv.dtype.kind not in "iu" \
                or kv.shape != tuple(xshape):
            continue
        return (c,), (x, e[2], kv.tobytes(), kv.dtype, kv.shape, want_any)
    return None


def _fused_any_ne(x_bytes, dtype, shape, want_any, init_slot, original, out):
    """The step `fn(ctx, f, x)` for `or`-reduce(x != k) / `and`-reduce(x == k) over every
    dimension: integers are equal exactly where their bytes are, so whether x's bytes (C
    order) differ from k's says whether some element differs; the result combined with a
    numpy bool init by the Python operator, as the reduction's kernel does (`reduction.
    reduce_specialized`). Anything else (another class, dtype or shape, an init of another
    class) runs the original steps."""
    ND, BOOL = np.ndarray, np.bool_
    TRUE, FALSE = np.True_, np.False_
    pyop = operator.or_ if want_any else operator.and_

    def fused(ctx, f, x):
        init = f[init_slot]
        if x.__class__ is ND and x.dtype == dtype and x.shape == shape \
                and init.__class__ is BOOL:
            differ = x.tobytes() != x_bytes
            return pyop(TRUE if differ is want_any else FALSE, init)
        original(ctx, f)
        return f[out]
    return fused


# sigmoids of slices of one array are computed on the whole array once where its size is at
# most the slices' together plus this many elements per sigmoid saved (a numpy call on a
# small array costs about as much as a few hundred elements)
_SHARED_SLACK = 512


def _unit_slice(op):
    """The index (a tuple of slices) of a `stablehlo.slice` op of unit strides whose operand
    has a static shape, or None."""
    from .movement import _ints     # (the slice kernel's own attribute reading)
    try:
        start = _ints(op, "start_indices")
        limit = _ints(op, "limit_indices")
        strides = _ints(op, "strides")
    except Exception:   # noqa: BLE001 - an op the slice kernel itself reports on
        return None
    src = getattr(op.operands[0].type, "shape", None) if op.operands else None
    if src is None or None in src or len(src) != len(start) or any(st != 1 for st in strides):
        return None
    return tuple(slice(a, b) for a, b in zip(start, limit))


def _sigmoids_of_slices(g, entries, ops, sigmoids, replaced, replaced_reads, members,
                        make_runner):
    """Sigmoids (already fused, `_fused_sigmoid`) of slices of one array, as an LSTM or GRU
    cell computes its gates from one matmul split in four or three: the first of them
    computes the sigmoid of the whole array and each takes its slice of that (elementwise
    steps give each element the same value on the whole array as on a slice of it), where
    the whole array is not much larger than the slices (`_SHARED_SLACK`). Their entries are
    replaced (in `replaced`) by steps reading the array itself; the slices join the members
    (they go where nothing else reads them)."""
    groups = {}
    for s, mem, xs, one_first, t in sigmoids:
        p = g.producer(xs, kernel="stablehlo.slice")
        if p is None:
            continue
        pe = g.entries[p]
        sop = pe[6]
        index = _unit_slice(sop)
        if index is None or pe[1] < 0 or _etname(sop.operands[0].type) != _etname(
                sop.results[0].type):
            continue
        groups.setdefault(pe[1], []).append((s, mem, p, index, one_first, t,
                                             tuple(sop.operands[0].type.shape),
                                             tuple(sop.results[0].type.shape)))
    for src, group in groups.items():
        if len(group) < 2 or len({(m[4], m[5], m[6]) for m in group}) != 1:
            continue
        size = 1
        for d in group[0][6]:
            size *= d
        parts = 0
        for m in group:
            n = 1
            for d in m[7]:
                n *= d
            parts += n
        if size > parts + _SHARED_SLACK * (len(group) - 1):
            continue
        group.sort()
        stash = [None, None]            # the whole array, and its sigmoid, for this pass
        last = len(group) - 1
        for k, (s, mem, p, index, one_first, t, src_shape, shape) in enumerate(group):
            e = entries[s]
            original = make_runner(tuple(entries[i] for i in sorted(mem + (s, p))))
            fn = _shared_sigmoid(k == 0, k == last, stash, index, one_first, t, src_shape,
                                 shape, original, e[4])
            replaced[s] = (fn, src, -1, -3, e[4], "fused", ops[s])
            replaced_reads[s] = (src,)
            members.add(p)


def _sigmoid_steps(x, dtype, ones_a, ones_d, one_first):
    """`_fused_sigmoid`'s steps on the array `x` of `dtype` (f32 or f64), a new array: the
    negation and exponential in f64 rounded once to the type, the sum with the ones `ones_a`
    (first or second, as the pattern has it) and the quotient of `ones_d` by it, in place."""
    if dtype == np.float64:
        t = np.negative(x)
        np.exp(t, out=t)
        e = t
    else:
        t = x.astype(np.float64)
        np.negative(t, out=t)
        np.exp(t, out=t)
        e = t.astype(dtype)
    if one_first:
        np.add(ones_a, e, out=e)
    else:
        np.add(e, ones_a, out=e)
    np.true_divide(ones_d, e, out=e)
    return e


def _shared_sigmoid(first, last, stash, index, one_first, scalar, src_shape, shape, original,
                    out):
    """The step of one sigmoid of a group (`_sigmoids_of_slices`), reading the whole array:
    the first computes the sigmoid of all of it and keeps it (with the array itself) in
    `stash`; each takes the slice `index` of it, the others after checking that the kept
    array is the one they read (else they compute their own slice's); the last clears the
    stash. The ones of the pattern are 1 in the type, of the whole array's shape. Anything
    but an array of the pattern's type and shape runs the original steps (the slice among
    them)."""
    dtype = np.dtype(scalar)
    ones = np.ones(src_shape, dtype)
    ND = np.ndarray

    def fused(ctx, f, x):
        if x.__class__ is ND and x.dtype == dtype and x.shape == src_shape:
            if first:
                whole = _sigmoid_steps(x, dtype, ones, ones, one_first)
                if not last:
                    stash[0], stash[1] = x, whole
                return whole[index]
            if stash[0] is x:
                whole = stash[1]
                if last:
                    stash[0] = stash[1] = None
                return whole[index]
            return _sigmoid_steps(x[index], dtype, ones[index], ones[index], one_first)
        original(ctx, f)
        return f[out]
    return fused


def fuse_sequence(entries, ops, indices, known, readers, dropped, make_runner):
    """`entries` (with `ops`, their ops, and `indices`, their runner indices) of one merged
    sequence, with the floor_mod / floor_div patterns replaced (see the module's text).
    `readers`: slot -> the runner indices that read it (anything of the block that reads a
    slot from the frame is among them), `dropped`: the indices of runners that do not run
    (see `plan._Emitter.finish`); `make_runner` makes a runner of entries. Returns
    (entries, ops)."""
    g = _Graph(entries, known)
    sigmoids = []                    # (position, members, x slot, one first, scalar type)
    replaced = {}                    # position of a select -> new entry
    replaced_reads = {}              # position -> the slots its new entry reads
    members = set()
    for s, e in enumerate(entries):
        if len(e) == 5 and e[0] is operator.add and e[3] == -1:
            got = _match_add_bool(g, s)
            if got is not None:
                mem, (a, ps, t) = got
                original = make_runner(tuple(entries[i] for i in sorted(mem + (s,))))
                fn = _fused_add_bool(t, a, ps, original, e[4], a == e[1])
                replaced[s] = (fn, a, -1, -3, e[4], "fused", ops[s])
                replaced_reads[s] = (a, ps)
                members.update(mem)
            continue
        if len(e) == 5 and e[0] is operator.truediv and e[3] == -1:
            got = _match_sigmoid(g, s)
            if got is not None:
                mem, (xs, one_a, one_d, one_first, t, shape) = got
                original = make_runner(tuple(entries[i] for i in sorted(mem + (s,))))
                fn = _fused_sigmoid(xs, known[one_a], known[one_d], one_first, t, shape,
                                    original, e[4])
                replaced[s] = (fn, xs, -1, -3, e[4], "fused", ops[s])
                members.update(mem)
                sigmoids.append((s, mem, xs, one_first, t))
            continue
        if len(e) == 7 and e[5] == "call" and e[6] is not None \
                and e[6].name == "stablehlo.reduce":
            got = _match_any_ne(g, s)
            if got is not None:
                mem, (xs, init, kb, dt, shape, want_any) = got
                original = make_runner(tuple(entries[i] for i in sorted(mem + (s,))))
                fn = _fused_any_ne(kb, dt, shape, want_any, init, original, e[4])
                replaced[s] = (fn, xs, -1, -3, e[4], "fused", ops[s])
                replaced_reads[s] = (xs, init)
                members.update(mem)
            continue
        if len(e) != 7 or e[5] not in _SELECTS or e[3] < 0:
            continue
        for floor_div, match in ((False, _match_mod), (True, _match_div)):
            got = match(g, s)
            if got is None:
                continue
            mem, (xs, d, t) = got
            if e[6] is None or _etname(e[6].results[0].type) is None \
                    or _SIGNED.get(_etname(e[6].results[0].type)) is not t:
                continue
            original = make_runner(tuple(entries[i] for i in sorted(mem + (s,))))
            fn = _fused(floor_div, d, t, original, e[4])
            replaced[s] = (fn, xs, -1, -3, e[4], "fused", e[6])
            members.update(mem)
            break
    if len(sigmoids) >= 2:
        _sigmoids_of_slices(g, entries, ops, sigmoids, replaced, replaced_reads, members,
                            make_runner)
    if not replaced:
        return entries, ops
    # the members go where every reader of their value is gone (a select replaced, or a
    # member gone): repeated until nothing changes
    gone = set()
    index_of = {indices[i]: i for i in range(len(entries))}

    def reads_of(i):
        if i in gone:
            return ()
        if i in replaced:
            return replaced_reads.get(i, (replaced[i][1],))
        e = entries[i]
        return tuple(s for s in e[1:4] if s >= 0) if len(e) == 7 else (e[1], e[2])
    changed = True
    while changed:
        changed = False
        for i in sorted(members - gone, reverse=True):
            out = entries[i][4]
            live = False
            for r in readers.get(out, ()):
                if r in dropped:
                    continue
                j = index_of.get(r)
                if j is None or out in reads_of(j):
                    live = True
                    break
            if not live:
                gone.add(i)
                changed = True
    new_entries, new_ops = [], []
    for i, e in enumerate(entries):
        if i in gone:
            continue
        new_entries.append(replaced.get(i, e))
        new_ops.append(ops[i])
    return tuple(new_entries), new_ops
