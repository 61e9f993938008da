"""Sorting kernels: stablehlo.sort and chlo.top_k.

A comparator that is a single LT/GT `compare` of the first operand's pair becomes a stable
numpy argsort on an order-preserving key (integers widened, floats under TOTALORDER mapped
to their total-order integers). So does a lexicographic comparator of several operands as
jax.lax.sort writes it (`LT(k0) or (EQ(k0) and ...)`, floats made canonical first: -0 as +0,
every NaN one NaN), read off the region once (`_recognize_lexicographic`). Integer keys and
the element's index that fit 62 bits together are packed into one int64 and sorted by
numpy's (SIMD, unstable) sort: the values are distinct, so the order is the stable one
(`_packed_order`). Any other comparator is first tried against a few candidate
orders (operand 0 or the first operands lexicographically, ascending or descending, natural or
total order): each is one stable numpy sort (`lexsort` for several keys) checked with two
calls of the comparator on whole arrays (no adjacent inversion, ties in their original order),
which for a strict weak order proves it is the stable sorted order. Without a match a
bottom-up merge sort runs whose merges are binary searches done on whole arrays: each step
calls the comparator once on every (element, candidate) pair of every row. That needs
O(log^2 n) region calls, is stable, and is correct for any strict weak order.

`chlo.top_k` works on same-width integer keys for floats. It bounds each row's k-th key by
the k-th of 4k group minima, gathers the few keys within the bound and sorts only those
(stably, so ties keep index order); rows with many ties instead partition (`argpartition`)
and sort the k chosen, taking the lowest-indexed ties where keys equal to the k-th were left
out."""
from __future__ import annotations

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from ..ir.core import Operation
from ..ir.defaults import default_of
from ..ir.types import element_type_for_dtype
from .elementwise import same_width_total_order_key as _same_width_total_order_key
from .numerics import elem
from .reduction import straight_runner
from .registry import kernel, op_cache


def total_order_key(x: np.ndarray) -> np.ndarray:
    """int64 keys ordering floats as IEEE totalOrder: -NaN < -inf < ... < -0 < +0 < ... < NaN."""
    bits = np.asarray(x).astype(np.float64).view(np.int64)
    return np.where(bits < 0, bits ^ np.int64(0x7FFFFFFFFFFFFFFF), bits)


def _ascending_key(x: np.ndarray, et, compare_type: str):
    """A numpy-sortable key whose ascending order is the comparator's LT, or None."""
    if et.is_bool:
        return x.astype(np.uint8)
    if et.is_integer:
        unsigned = compare_type == "UNSIGNED" or (compare_type != "SIGNED" and not et.is_signed)
        if et.bits >= 64:           # reinterpret the 64 bits as the comparison's signedness
            return x.view(np.uint64 if unsigned else np.int64)
        v = x.astype(np.int64)      # exact for every narrower width, signed or not
        if unsigned:
            return v & np.int64((1 << et.bits) - 1)
        return np.where(v >= (1 << (et.bits - 1)), v - (1 << et.bits), v)
    if et.is_float:
        if compare_type == "TOTALORDER":
            return total_order_key(x)
        return x.astype(np.float64)
    return None


def _descending(key: np.ndarray) -> np.ndarray:
    if key.dtype.kind == "f":
        return -key
    return ~key


def _natural_float_keys(x: np.ndarray):
    """(ascending, descending) keys of f16/f32/f64 `x` in the natural float order, as
    integers of the same width (a stable integer sort is about twice as fast as one of f64):
    -0 and +0 equal, and every NaN equal and after every number in both directions (where
    numpy's sorts put NaN). None for other dtypes."""
    key = _same_width_total_order_key(x)
    if key is None:
        return None
    top = key.dtype.type(np.iinfo(key.dtype).max)     # above +inf's key: NaN alone
    key = np.where(x == 0, key.dtype.type(0), key)
    nan = np.isnan(x)
    return np.where(nan, top, key), np.where(nan, top, ~key)


def _candidate_keys(x: np.ndarray, et, compare_type: str):
    """(ascending, descending) sortable keys of `x` for the comparator's LT under
    `compare_type`, or None."""
    if et.is_float:
        if compare_type == "TOTALORDER":
            key = _same_width_total_order_key(x)
            if key is not None:
                return key, ~key
        else:
            pair = _natural_float_keys(x)
            if pair is not None:
                return pair
    base = _ascending_key(x, et, compare_type)
    if base is None:
        return None
    return base, _descending(base)


def _packed_order(keys: list):
    """The stable permutation of each row (the last axis) ordering it by the integer `keys`
    lexicographically (first key most significant), as one sort of int64 values that pack
    each key's offset from its least value above the element's index: the values are
    distinct, so any sort puts them in the one order a stable sort gives (numpy's int64
    sort, SIMD, is ~6x faster than a stable argsort of int32). None where the keys and the
    index need more than 62 bits, or a key is no integer array."""
    n = keys[0].shape[-1]
    if not keys[0].size:
        return None
    ibits = (n - 1).bit_length()
    total = ibits
    parts = []
    for k in keys:
        if k.dtype.kind not in "iu" or k.shape != keys[0].shape:
            return None
        lo, hi = int(k.min()), int(k.max())
        w = (hi - lo).bit_length()
        if hi >= 1 << 63:
            return None
        parts.append((k, lo, w))
        total += w
    if total > 62:
        return None
    packed = None
    shift = total
    for k, lo, w in parts:
        shift -= w
        if not w:
            continue                     # (one value throughout: orders nothing)
        v = k.astype(np.int64)
        if lo:
            v -= lo
        if shift:
            v <<= shift
        if packed is None:
            packed = v
        else:
            packed |= v
    if packed is None:
        packed = np.zeros(keys[0].shape, np.int64)
    packed |= np.arange(n, dtype=np.int64)
    packed.sort(axis=-1)
    packed &= (1 << ibits) - 1
    return packed


def _stable_argsort(key: np.ndarray) -> np.ndarray:
    """np.argsort(key, axis=-1, kind="stable"), through `_packed_order` where it applies."""
    perm = _packed_order([key]) if key.dtype.kind in "iu" else None
    return np.argsort(key, axis=-1, kind="stable") if perm is None else perm


def _lex_permutation(keys: list) -> np.ndarray:
    """The stable permutation of each row ordering it by `keys` lexicographically (first key
    most significant): `_packed_order` where the keys fit in one int64 with the index; else
    two integer keys within 32 bits become one int64 key (one stable argsort instead of
    `lexsort`'s two)."""
    perm = _packed_order(keys)
    if perm is not None:
        return perm
    if len(keys) == 2 and all(k.dtype.kind in "iu" and k.size for k in keys):
        if all(int(k.min()) >= -(1 << 31) and int(k.max()) < (1 << 31) for k in keys):
            combined = keys[0].astype(np.int64) * (1 << 32) + (keys[1].astype(np.int64) + (1 << 31))
            return np.argsort(combined, axis=-1, kind="stable")
    return np.lexsort(keys[::-1], axis=-1)


def _recognize_comparator(region, n: int):
    """('LT'|'GT', compare_type) if the comparator is one compare of operand 0's pair."""
    b = region.blocks[0]
    if len(b.operations) != 2 or len(b.arguments) != 2 * n:
        return None
    cmp, ret = b.operations
    if cmp.name != "stablehlo.compare" or len(ret.operands) != 1 or ret.operands[0] is not cmp.results[0]:
        return None
    direction = cmp.attributes["comparison_direction"].value
    ct = cmp.attributes.get("compare_type")
    ctype = ct.value if ct is not None else None
    a0, a1 = b.arguments[0], b.arguments[1]
    lhs, rhs = cmp.operands
    if lhs is a1 and rhs is a0:
        direction = {"LT": "GT", "GT": "LT"}.get(direction, direction)
    elif not (lhs is a0 and rhs is a1):
        return None
    if direction not in ("LT", "GT"):
        return None
    return direction, ctype


# ------------------------------------------------------------------ lexicographic comparators

def _const_scalar(op):
    """The value of a rank-0 dense `stablehlo.constant`, or None."""
    v = op.attributes.get("value")
    arr = getattr(v, "array", None)
    if arr is None or arr.__class__ is not np.ndarray or arr.shape != ():
        return None
    return arr


def _term(terms, v):
    """The term of value `v` in a comparator: one of its own, or a rank-0 constant defined
    outside the region (torchax's exports hoist the comparator's constants out of it)."""
    t = terms.get(id(v))
    if t is None:
        owner = v.owner
        if owner.__class__ is Operation and owner.name == "stablehlo.constant" \
                and not owner.operands:
            c = _const_scalar(owner)
            if c is not None:
                t = terms[id(v)] = ("const", c)
    return t


def _compare_term(op, terms):
    """The term of a `compare` in a comparator (see `_recognize_lexicographic`), or None."""
    direction = op.attributes["comparison_direction"].value
    ct = op.attributes.get("compare_type")
    ctype = ct.value if ct is not None else None
    lhs, rhs = op.operands
    a, b = _term(terms, lhs), _term(terms, rhs)
    if a is None or b is None:
        return None
    if a[0] == "arg" and b[0] == "const" or a[0] == "const" and b[0] == "arg":
        arg, c = (a, b[1]) if a[0] == "arg" else (b, a[1])
        # x == 0 (FLOAT): true for both zeros
        if direction == "EQ" and ctype in (None, "FLOAT") and c.dtype.kind == "f" and c == 0:
            return ("iszero", arg[1], arg[2])
        return None
    if a[0] == "arg" and a == b and direction == "NE" and ctype in (None, "FLOAT"):
        return ("isnan", a[1], a[2])          # x != x (FLOAT): x is a NaN
    # a compare of operand i's pair through the same transform: raw ("arg") or canonical
    if a[0] != b[0] or a[0] not in ("arg", "canon") or a[1] != b[1] or {a[2], b[2]} != {0, 1}:
        return None
    if direction not in ("LT", "GT", "EQ"):
        return None
    if a[2] == 1 and direction != "EQ":
        direction = "GT" if direction == "LT" else "LT"
    if a[0] == "canon":
        kind = "canon" if ctype == "TOTALORDER" else None
    elif ctype == "TOTALORDER":
        kind = "total"
    elif ctype in ("SIGNED", "UNSIGNED") or ctype is None:
        kind = "int:" + (ctype or "")
    else:
        kind = None                           # (FLOAT: NaN makes it no strict weak order)
    if kind is None:
        return None
    if direction == "EQ":
        # equality of the key values: bits for integers whatever the signedness
        return ("eq", a[1], "int" if kind.startswith("int:") else kind)
    return ("less", [(a[1], direction, kind)])


def _lex_term(op, terms):
    """The term of one comparator op, or None where it is not of the recognized forms."""
    name = op.name
    if name == "stablehlo.constant":
        c = _const_scalar(op)
        return None if c is None else ("const", c)
    if name == "stablehlo.compare":
        return _compare_term(op, terms)
    ts = [_term(terms, v) for v in op.operands]
    if None in ts:
        return None
    if name == "stablehlo.select":
        p, x, y = ts
        # select(x == 0, +0, x): -0 made +0
        if p[0] == "iszero" and x[0] == "const" and y == ("arg", p[1], p[2]):
            c = x[1]
            if c.dtype.kind == "f" and c == 0 and not np.signbit(c):
                return ("zero", p[1], p[2])
        # select(x != x, +NaN, that): every NaN made one positive NaN (jax's canonical form,
        # ordered after +inf by TOTALORDER)
        if p[0] == "isnan" and x[0] == "const" and y == ("zero", p[1], p[2]):
            c = x[1]
            if c.dtype.kind == "f" and c != c and not np.signbit(c):
                return ("canon", p[1], p[2])
        return None
    if name == "stablehlo.and" and len(ts) == 2:
        for e, rest in (ts, ts[::-1]):
            if e[0] == "eq" and rest[0] == "less":
                return ("eqand", e[1], e[2], rest[1])
        return None
    if name == "stablehlo.or" and len(ts) == 2:
        for lt, ea in (ts, ts[::-1]):
            if lt[0] == "less" and len(lt[1]) == 1 and ea[0] == "eqand":
                i, _, kind = lt[1][0]
                if ea[1] == i and ea[2] == ("int" if kind.startswith("int:") else kind):
                    return ("less", lt[1] + ea[3])
        return None
    return None


def _recognize_lexicographic(region, n: int):
    """The keys [(operand, 'LT'|'GT', kind), ...], most significant first, of a comparator
    that orders lexicographically by compares of operands' pairs, as
    `less = LT(k0) or (EQ(k0) and (LT(k1) or (EQ(k1) and ...)))` (jax.lax.sort's comparator
    for any number of keys), or None. A key is an integer or bool compared SIGNED /
    UNSIGNED ("int:..."), a float compared TOTALORDER ("total"), or a float made canonical
    first and compared TOTALORDER ("canon": jax's `select(x == 0, +0, x)` then
    `select(x != x, +NaN, .)`, so -0 equals +0 and every NaN is one value after +inf). FLOAT
    compares are not taken (with a NaN they are no strict weak order): the general path
    decides those."""
    b = region.blocks[0]
    if len(b.arguments) != 2 * n:
        return None
    terms = {id(a): ("arg", k // 2, k % 2) for k, a in enumerate(b.arguments)}
    for op in b.operations:
        if op.name == "stablehlo.return":
            if len(op.operands) != 1:
                return None
            t = terms.get(id(op.operands[0]))
            return t[1] if t is not None and t[0] == "less" else None
        if len(op.results) != 1 or op.regions:
            return None
        t = _lex_term(op, terms)
        if t is None:
            return None
        terms[id(op.results[0])] = t
    return None


def _lexicographic_keys(lex, columns, ets):
    """The sortable keys of `_recognize_lexicographic`'s result on the columns, or None."""
    keys = []
    for i, direction, kind in lex:
        x, et = columns[i], ets[i]
        if kind == "canon":
            if not et.is_float:
                return None
            pair = _natural_float_keys(x)     # the canonical values' total order, ascending
            if pair is None:
                return None
            asc = pair[0]
            keys.append(asc if direction == "LT" else ~asc)
            continue
        if kind == "total":
            if not et.is_float:
                return None
            pair = _candidate_keys(x, et, "TOTALORDER")
        else:
            if not (et.is_integer or et.is_bool):
                return None
            pair = _candidate_keys(x, et, kind[4:])
        if pair is None:
            return None
        keys.append(pair[0] if direction == "LT" else pair[1])
    return keys


def merge_sort_permutation(less, columns: list) -> np.ndarray:
    """Stable sort permutation of each row of the (rows, n) arrays `columns`, where
    `less(lhs_columns, rhs_columns)` compares whole arrays elementwise."""
    rows, n = columns[0].shape
    perm = np.broadcast_to(np.arange(n, dtype=np.int64), (rows, n)).copy()
    cur = [np.array(c, copy=True) for c in columns]
    pos = np.arange(n, dtype=np.int64)
    row_ix = np.arange(rows, dtype=np.int64)[:, None]
    w = 1
    while w < n:
        start = (pos // (2 * w)) * (2 * w)
        in_a = (pos - start) < w
        local = np.where(in_a, pos - start, pos - start - w)
        other_start = np.where(in_a, start + w, start)
        other_len = np.where(in_a, np.clip(n - (start + w), 0, w), w)
        lo = np.zeros((rows, n), dtype=np.int64)
        hi = np.broadcast_to(other_len, (rows, n)).copy()
        for _ in range(int(w).bit_length()):
            active = lo < hi
            if not active.any():
                break
            mid = (lo + hi) // 2
            j = np.minimum(other_start + mid, n - 1)
            other = [np.take_along_axis(c, j, axis=1) for c in cur]
            lhs = [np.where(in_a, o, c) for o, c in zip(other, cur)]
            rhs = [np.where(in_a, c, o) for o, c in zip(other, cur)]
            r = np.broadcast_to(np.asarray(less(lhs, rhs)).astype(bool), (rows, n))
            # an A element counts B elements strictly before it; a B element counts the
            # A elements not after it (so equal elements keep their order)
            pred = np.where(in_a, r, ~r)
            lo = np.where(active & pred, mid + 1, lo)
            hi = np.where(active & ~pred, mid, hi)
        new_pos = start + local + lo
        for i, c in enumerate(cur):
            nc = np.empty_like(c)
            nc[row_ix, new_pos] = c
            cur[i] = nc
        np_ = np.empty_like(perm)
        np_[row_ix, new_pos] = perm
        perm = np_
        w *= 2
    return perm


_UNSEEN = object()


def sort_permutation(ctx, region, columns: list, ets, cache=None):
    """The stable sort permutation of the (rows, n) `columns` under the comparator `region`,
    or (that permutation, the sorted columns) where finding it sorted them already."""
    n = len(columns)
    lex = cache.get("sort_lex", _UNSEEN) if cache is not None else _UNSEEN
    if lex is _UNSEEN:
        lex = _recognize_lexicographic(region, n)
        if cache is not None:
            cache["sort_lex"] = lex
    if lex is not None:
        keys = _lexicographic_keys(lex, columns, ets)
        if keys is not None:
            if len(keys) == 1:
                return _stable_argsort(keys[0])
            return _lex_permutation(keys)
    rec = _recognize_comparator(region, n)
    if rec is not None:
        direction, ctype = rec
        keys = _candidate_keys(columns[0], ets[0], ctype or "")
        if keys is not None:
            return _stable_argsort(keys[1] if direction == "GT" else keys[0])
    run = straight_runner(ctx, region, cache)
    shape = columns[0].shape

    def less(lhs, rhs):
        args = []
        for a, b in zip(lhs, rhs):
            args += [a, b]
        r = np.asarray(run(args)[0])
        return np.broadcast_to(r if r.dtype == np.bool_ else r.astype(bool), lhs[0].shape)
    found = _verified_candidate(less, columns, ets)
    if found is not None:
        return found
    return merge_sort_permutation(less, columns)


def _key_sources(columns, ets):
    """The arrays `_verified_candidate` takes keys from, most significant first, with their
    element types: each operand, a complex one as its real part then its imaginary part
    (the lexicographic order complex comparators build, as the spec's compare does)."""
    for x, et in zip(columns, ets):
        if et.is_complex and x.dtype.kind == "c":
            part = element_type_for_dtype(x.real.dtype)
            yield np.ascontiguousarray(x.real), part
            yield np.ascontiguousarray(x.imag), part
        else:
            yield x, et


def _verified_candidate(less, columns, ets):
    """The stable sort permutation under `less`, found as a lexicographic order of the first
    operands (each ascending or descending, floats in natural or total order) built one key
    at a time: a candidate key is kept when the comparator finds no adjacent inversion
    between elements that differ in the keys so far; the order is returned when no adjacent
    pair is inverted at all and adjacent equivalent elements keep their original order. For
    a strict weak order these two checks hold for exactly one permutation, the stable sorted
    one. Each try is one stable numpy sort (`lexsort` for several keys) and one or two
    comparator calls on whole arrays: the first on each sorted row's adjacent pairs, as the
    contiguous flat arrays shifted by one (the pairs across rows are left out); the second
    only on the pairs whose original order was reversed (where the candidate's key
    increased). Returns (permutation, the sorted columns), or None if the comparator is not
    such an order."""
    chosen = []
    rows, n = columns[0].shape
    for x, et in _key_sources(columns[:4], ets[:4]):
        kinds = ("", "TOTALORDER") if et.is_float else ("",)
        found = False
        for ctype in kinds:
            pair = _candidate_keys(x, et, ctype)
            if pair is None:
                return None
            for key in pair:
                keys = chosen + [key]
                if len(keys) == 1:
                    perm = _stable_argsort(key)
                else:
                    perm = _lex_permutation(keys)
                s = [np.take_along_axis(c, perm, axis=1) for c in columns]
                flat = [x.reshape(-1) for x in s]
                inverted = less([f[1:] for f in flat], [f[:-1] for f in flat])
                # (the pair index k = row * n + column: the last column pairs across rows)
                inverted = np.append(inverted, False).reshape(rows, n)[:, :-1]
                if inverted.any():
                    same = np.ones(inverted.shape, dtype=bool)
                    for k in keys:
                        ks = np.take_along_axis(k, perm, axis=1)
                        same &= ks[:, 1:] == ks[:, :-1]
                    if (inverted & ~same).any():
                        continue
                    chosen, found = keys, True
                    break
                reversed_ = np.flatnonzero(perm[:, 1:] < perm[:, :-1])
                if reversed_.size:
                    k = reversed_ + reversed_ // (n - 1)        # pair index in the flat rows
                    if not less([f[k] for f in flat], [f[k + 1] for f in flat]).all():
                        return None                             # equivalent elements swapped
                return perm, s
            if found:
                break
        if not found:
            return None
    return None


@kernel("stablehlo.sort")
def sort(ctx, op, *xs):
    if not xs:
        return []
    rank = xs[0].ndim
    dim_attr = op.attributes.get("dimension")
    dim = int(dim_attr.value) if dim_attr is not None else default_of("stablehlo.sort", "dimension")
    if dim < 0:
        dim += rank
    if not 0 <= dim < max(rank, 1):
        raise InterpreterError(f"sort: dimension {dim} out of range for rank {rank}")
    if rank == 0:
        return list(xs)
    moved = [np.moveaxis(x, dim, -1) for x in xs]
    shape = moved[0].shape
    ncols = shape[-1]
    if ncols <= 1 or moved[0].size == 0:
        return [np.array(x, copy=True) for x in xs]
    flat = [m.reshape(-1, ncols) for m in moved]
    ets = [elem(v.type) for v in op.operands]
    perm = sort_permutation(ctx, op.regions[0], flat, ets, op_cache(op))
    if perm.__class__ is tuple:                 # (permutation, the columns it sorted)
        done = perm[1]
    else:
        done = [np.take_along_axis(f, perm, axis=1) for f in flat]
    return [np.moveaxis(d.reshape(shape), -1, dim) for d in done]


@kernel("chlo.top_k")
def top_k(ctx, op, x):
    k = int(op.attributes["k"].value)
    et = elem(op.operands[0].type)
    if x.ndim == 0:
        raise InterpreterError("chlo.top_k: operand must have rank >= 1")
    n = x.shape[-1]
    if k < 0 or k > n:
        raise InterpreterError(f"chlo.top_k: k = {k} is not within the last dimension ({n})")
    if et.is_complex:
        # the CHLO legalization's GT compare on complex: lexicographic on (real, imag) (the
        # spec's compare); ties keep index order (a stable sort). A NaN part compares false
        # both ways, which is no strict weak order: left unsorted rather than guessed
        if np.isnan(x).any():
            raise NotImplementedOpError("chlo.top_k", "complex operand with NaN: the comparator is no order")
        n_idx = np.broadcast_to(np.arange(n), x.shape)
        order = np.lexsort((n_idx, -x.imag, -x.real), axis=-1)[..., :k]
        values = np.take_along_axis(x, order, axis=-1)
        return [values, order.astype(elem(op.results[1].type).dtype)]
    if et.is_float:
        key = _same_width_total_order_key(x)
        if key is None:
            key = total_order_key(x)
    else:
        key = _ascending_key(x, et, "")
        if key is None:
            raise NotImplementedOpError("chlo.top_k", f"element type {et}")
    order = _top_k_order(_descending(key), k)
    values = np.take_along_axis(x, order, axis=-1)
    idx_dtype = elem(op.results[1].type).dtype
    return [values, order.astype(idx_dtype)]


def _top_k_order(key: np.ndarray, k: int) -> np.ndarray:
    """The indices of the k smallest keys of each row in ascending key order, ties by
    index (what a stable argsort's first k are), in O(n + k log k): a partition finds each
    row's k-th key, every key below it is taken, then the lowest-indexed ties."""
    n = key.shape[-1]
    if k == 0:
        return np.zeros(key.shape[:-1] + (0,), dtype=np.int64)
    if k * 4 >= n or n < 256:
        return np.argsort(key, axis=-1, kind="stable")[..., :k]
    lead = key.shape[:-1]
    flat = key.reshape(-1, n)
    if flat.dtype.kind in "iu":
        order = _top_k_by_threshold(flat, k)
        if order is not None:
            return order.reshape(lead + (k,))
    part = np.argpartition(flat, k - 1, axis=-1)[:, :k]
    kth = np.take_along_axis(flat, part[:, k - 1:k], axis=-1)
    # the k chosen are the k smallest; when keys equal to the k-th were left out, the rows
    # take their lowest-indexed ties instead (the order of a stable sort)
    tied = np.count_nonzero(flat <= kth, axis=-1) != k
    idx = np.sort(part, axis=-1)
    if tied.any():
        rows = np.nonzero(tied)[0]
        sub = flat[rows]
        sub_kth = kth[rows]
        below = sub < sub_kth
        ties = sub == sub_kth
        room = k - below.sum(axis=-1, keepdims=True)
        chosen = below | (ties & (np.cumsum(ties, axis=-1) <= room))
        idx[rows] = np.nonzero(chosen)[1].reshape(-1, k)
    sub = np.take_along_axis(flat, idx, axis=-1)
    order = np.take_along_axis(idx, np.argsort(sub, axis=-1, kind="stable"), axis=-1)
    return order.reshape(lead + (k,))


def _top_k_by_threshold(flat: np.ndarray, k: int):
    """`_top_k_order` of the integer (rows, n) keys `flat` without a partition of the
    rows: the columns are split into 4k groups (column index modulo 4k), and the k-th
    smallest of the group minima bounds each row's k-th smallest key from above (k groups
    each hold a key at most that large). Only the keys at most that bound are candidates;
    they are gathered (in index order) into a padded (rows, m) array and sorted stably, so
    ties keep index order and the padding (the dtype's largest value, after every real
    candidate) never precedes a candidate. None when some row has over n/8 candidates
    (many ties), for the partition path."""
    rows, n = flat.shape
    groups = 4 * k
    depth = n // groups
    mins = flat[:, :groups * depth].reshape(rows, depth, groups).min(axis=1)
    bound = np.partition(mins, k - 1, axis=-1)[:, k - 1:k]
    where = np.flatnonzero(flat <= bound)
    row = where // n
    counts = np.bincount(row, minlength=rows)
    m = int(counts.max())
    if m * 8 > n:
        return None
    pos = np.arange(where.size) - (np.cumsum(counts) - counts)[row]
    cand = np.full((rows, m), np.iinfo(flat.dtype).max, dtype=flat.dtype)
    cand_ix = np.zeros((rows, m), dtype=np.int64)
    cand[row, pos] = flat.reshape(-1)[where]
    cand_ix[row, pos] = where - row * n
    best = np.argsort(cand, axis=-1, kind="stable")[:, :k]
    return np.take_along_axis(cand_ix, best, axis=-1)
