"""JAX's Threefry-2x32 hash (`jax.random` on CPU: keys, split, fold_in, bits, uniform,
normal...) run as one vectorized kernel instead of op by op.

JAX lowers `threefry2x32` to a private function holding a `while` of 5 iterations whose body
calls a function of 4 Threefry rounds (add, rotate left by shift_left / shift_right_logical /
or, xor) plus the key injection, on counter words of any static shape. `threefry_loop`
recognizes that `while` by comparing it, its condition, its body and the called function op by
op with the program JAX writes (`loop_text`, parsed once per form; the comparison is
jax_loops.py's `same_loop`: attributes, names, types, operand wiring, constants by type and
value wherever they stand). The template is parametrized over the forms JAX has written: the
iteration counters i32 (today's JAX) or i64 (the exports of upstream StableHLO's testdata), and
the keys rank-0 u32 broadcast to the words' type in the body, or of the words' own type added
as they are. A loop that differs in anything runs as usual.

The known loop runs the same arithmetic on whole uint32 arrays with in-place numpy ufuncs,
for any loop values: the iteration counter and the round counter wrap as the counter type, a
rotation amount read from the loop's rotation operands each round, with StableHLO's shift
semantics for amounts past the width (a shift by 32 or more gives 0: a rotation by 0 or 32
leaves the word, one past 32 gives 0), u32 additions wrapping; the iterations are counted
against `max_steps` and the deadline as the `while` kernel counts them. Not used while a
trace is recorded, nor for rank-0 counter words.
"""
from __future__ import annotations

import numpy as np

from .jax_loops import same_loop, wrap_signed
from .registry import op_cache

_THREEFRY_LOOP = """
func.func @main(%a0: tensor<CT>, %a1: tensor<CT>, %a2: tensor<TT>, %a3: tensor<TT>, %a4: tensor<KT>, %a5: tensor<KT>, %a6: tensor<KT>, %a7: tensor<4xui32>, %a8: tensor<4xui32>) -> (tensor<CT>, tensor<CT>, tensor<TT>, tensor<TT>, tensor<KT>, tensor<KT>, tensor<KT>, tensor<4xui32>, tensor<4xui32>) {
  %6:9 = stablehlo.while(%iterArg = %a0, %iterArg_4 = %a1, %iterArg_5 = %a2, %iterArg_6 = %a3, %iterArg_7 = %a4, %iterArg_8 = %a5, %iterArg_9 = %a6, %iterArg_10 = %a7, %iterArg_11 = %a8) : tensor<CT>, tensor<CT>, tensor<TT>, tensor<TT>, tensor<KT>, tensor<KT>, tensor<KT>, tensor<4xui32>, tensor<4xui32>
  cond {
    %c_12 = stablehlo.constant dense<5> : tensor<CT>
    %7 = stablehlo.compare LT, %iterArg, %c_12, SIGNED : (tensor<CT>, tensor<CT>) -> tensor<i1>
    stablehlo.return %7 : tensor<i1>
  } do {
    %7:8 = func.call @closed_call(%iterArg_4, %iterArg_5, %iterArg_6, %iterArg_7, %iterArg_8, %iterArg_9, %iterArg_10, %iterArg_11) : (tensor<CT>, tensor<TT>, tensor<TT>, tensor<KT>, tensor<KT>, tensor<KT>, tensor<4xui32>, tensor<4xui32>) -> (tensor<CT>, tensor<TT>, tensor<TT>, tensor<KT>, tensor<KT>, tensor<KT>, tensor<4xui32>, tensor<4xui32>)
    %c_12 = stablehlo.constant dense<1> : tensor<CT>
    %8 = stablehlo.add %iterArg, %c_12 : tensor<CT>
    stablehlo.return %8, %7#0, %7#1, %7#2, %7#3, %7#4, %7#5, %7#6, %7#7 : tensor<CT>, tensor<CT>, tensor<TT>, tensor<TT>, tensor<KT>, tensor<KT>, tensor<KT>, tensor<4xui32>, tensor<4xui32>
  }
  return %6#0, %6#1, %6#2, %6#3, %6#4, %6#5, %6#6, %6#7, %6#8 : tensor<CT>, tensor<CT>, tensor<TT>, tensor<TT>, tensor<KT>, tensor<KT>, tensor<KT>, tensor<4xui32>, tensor<4xui32>
}
func.func private @closed_call(%arg0: tensor<CT>, %arg1: tensor<TT>, %arg2: tensor<TT>, %arg3: tensor<KT>, %arg4: tensor<KT>, %arg5: tensor<KT>, %arg6: tensor<4xui32>, %arg7: tensor<4xui32>) -> (tensor<CT>, tensor<TT>, tensor<TT>, tensor<KT>, tensor<KT>, tensor<KT>, tensor<4xui32>, tensor<4xui32>) {
  %c = stablehlo.constant dense<1> : tensor<CT>
  %0 = stablehlo.add %arg0, %c : tensor<CT>
  %1 = stablehlo.slice %arg6 [0:1] : (tensor<4xui32>) -> tensor<1xui32>
  %2 = stablehlo.reshape %1 : (tensor<1xui32>) -> tensor<ui32>
  %3 = stablehlo.add %arg1, %arg2 : tensor<TT>
  %4 = stablehlo.broadcast_in_dim %2, dims = [] : (tensor<ui32>) -> tensor<TT>
  %5 = stablehlo.shift_left %arg2, %4 : tensor<TT>
  %c_0 = stablehlo.constant dense<32> : tensor<ui32>
  %6 = stablehlo.subtract %c_0, %2 : tensor<ui32>
  %7 = stablehlo.broadcast_in_dim %6, dims = [] : (tensor<ui32>) -> tensor<TT>
  %8 = stablehlo.shift_right_logical %arg2, %7 : tensor<TT>
  %9 = stablehlo.or %5, %8 : tensor<TT>
  %10 = stablehlo.xor %3, %9 : tensor<TT>
  %11 = stablehlo.slice %arg6 [1:2] : (tensor<4xui32>) -> tensor<1xui32>
  %12 = stablehlo.reshape %11 : (tensor<1xui32>) -> tensor<ui32>
  %13 = stablehlo.add %3, %10 : tensor<TT>
  %14 = stablehlo.broadcast_in_dim %12, dims = [] : (tensor<ui32>) -> tensor<TT>
  %15 = stablehlo.shift_left %10, %14 : tensor<TT>
  %c_1 = stablehlo.constant dense<32> : tensor<ui32>
  %16 = stablehlo.subtract %c_1, %12 : tensor<ui32>
  %17 = stablehlo.broadcast_in_dim %16, dims = [] : (tensor<ui32>) -> tensor<TT>
  %18 = stablehlo.shift_right_logical %10, %17 : tensor<TT>
  %19 = stablehlo.or %15, %18 : tensor<TT>
  %20 = stablehlo.xor %13, %19 : tensor<TT>
  %21 = stablehlo.slice %arg6 [2:3] : (tensor<4xui32>) -> tensor<1xui32>
  %22 = stablehlo.reshape %21 : (tensor<1xui32>) -> tensor<ui32>
  %23 = stablehlo.add %13, %20 : tensor<TT>
  %24 = stablehlo.broadcast_in_dim %22, dims = [] : (tensor<ui32>) -> tensor<TT>
  %25 = stablehlo.shift_left %20, %24 : tensor<TT>
  %c_2 = stablehlo.constant dense<32> : tensor<ui32>
  %26 = stablehlo.subtract %c_2, %22 : tensor<ui32>
  %27 = stablehlo.broadcast_in_dim %26, dims = [] : (tensor<ui32>) -> tensor<TT>
  %28 = stablehlo.shift_right_logical %20, %27 : tensor<TT>
  %29 = stablehlo.or %25, %28 : tensor<TT>
  %30 = stablehlo.xor %23, %29 : tensor<TT>
  %31 = stablehlo.slice %arg6 [3:4] : (tensor<4xui32>) -> tensor<1xui32>
  %32 = stablehlo.reshape %31 : (tensor<1xui32>) -> tensor<ui32>
  %33 = stablehlo.add %23, %30 : tensor<TT>
  %34 = stablehlo.broadcast_in_dim %32, dims = [] : (tensor<ui32>) -> tensor<TT>
  %35 = stablehlo.shift_left %30, %34 : tensor<TT>
  %c_3 = stablehlo.constant dense<32> : tensor<ui32>
  %36 = stablehlo.subtract %c_3, %32 : tensor<ui32>
  %37 = stablehlo.broadcast_in_dim %36, dims = [] : (tensor<ui32>) -> tensor<TT>
  %38 = stablehlo.shift_right_logical %30, %37 : tensor<TT>
  %39 = stablehlo.or %35, %38 : tensor<TT>
  %40 = stablehlo.xor %33, %39 : tensor<TT>
KEYS
  %c_4 = stablehlo.constant dense<1> : tensor<CT>
  %45 = stablehlo.add %arg0, %c_4 : tensor<CT>
  %46 = stablehlo.convert %45 : (tensor<CT>) -> tensor<ui32>
  %47 = stablehlo.broadcast_in_dim %46, dims = [] : (tensor<ui32>) -> tensor<TT>
  %48 = stablehlo.add %44, %47 : tensor<TT>
  return %0, %42, %48, %arg4, %arg5, %arg3, %arg7, %arg6 : tensor<CT>, tensor<TT>, tensor<TT>, tensor<KT>, tensor<KT>, tensor<KT>, tensor<4xui32>, tensor<4xui32>
}
"""

# the key injection: keys of rank 0 broadcast to the counters' type (JAX's i32 form), or keys
# of the counters' own type added as they are (the form of older exports, with i64 counters)
_BROADCAST_KEYS = """  %41 = stablehlo.broadcast_in_dim %arg3, dims = [] : (tensor<KT>) -> tensor<TT>
  %42 = stablehlo.add %33, %41 : tensor<TT>
  %43 = stablehlo.broadcast_in_dim %arg4, dims = [] : (tensor<KT>) -> tensor<TT>
  %44 = stablehlo.add %40, %43 : tensor<TT>
"""
_SAME_TYPE_KEYS = """  %42 = stablehlo.add %33, %arg3 : tensor<TT>
  %44 = stablehlo.add %40, %arg4 : tensor<TT>
"""
_COUNTERS = {"i32": (np.int32, 32), "i64": (np.int64, 64)}


def loop_text(tt: str, counter: str = "i32", keys: str = "ui32") -> str:
    """The program JAX writes for threefry2x32 on counter words of type tensor<`tt`> (e.g.
    '4096xui32'), with iteration counters of type tensor<`counter`> ('i32' or 'i64') and keys
    of type tensor<`keys`>: 'ui32' (broadcast in the body) or `tt` itself (added as they
    are)."""
    inject = _SAME_TYPE_KEYS if keys == tt else _BROADCAST_KEYS
    return (_THREEFRY_LOOP.replace("KEYS\n", inject).replace("CT", counter)
            .replace("KT", keys).replace("TT", tt))


_TEMPLATES: dict = {}        # (counter words, counter, key type texts) -> (functions, while op)
_MAX_TEMPLATES = 64
_MISSING = object()
_U32 = np.uint32
_M32 = 0xFFFFFFFF


def _template(form):
    hit = _TEMPLATES.get(form)
    if hit is None:
        from ..text import parse
        functions = parse(loop_text(*form)).functions
        loop = functions["main"].regions[0].blocks[0].operations[0]
        if len(_TEMPLATES) >= _MAX_TEMPLATES:
            _TEMPLATES.clear()
        hit = _TEMPLATES[form] = (functions, loop)
    return hit


def _type_text(t):
    """'4096x4xui32' for tensor<4096x4xui32> of static shape, 'i64' for tensor<i64>; None for
    anything else (dynamic dimensions, not a ranked tensor)."""
    shape = getattr(t, "shape", None)
    et = getattr(t, "element_type", None)
    if shape is None or et is None or any(not isinstance(d, int) or d < 0 for d in shape):
        return None
    if getattr(t, "encoding", None) is not None:
        return None
    return "".join(str(d) + "x" for d in shape) + str(et)


def _loop_form(op):
    """(counter words, counter, key type texts) of the template `op` would be, from its
    operand types; None where no template has these types."""
    tt = _type_text(op.operands[2].type)
    if tt is None or not tt.endswith("xui32"):        # (rank >= 1 u32 words)
        return None
    counter = _type_text(op.operands[0].type)
    if counter not in _COUNTERS:
        return None
    keys = _type_text(op.operands[4].type)
    if keys != "ui32" and keys != tt:
        return None
    return tt, counter, keys


def _matches_threefry_loop(ctx, op):
    """The loop's form (see `_loop_form`) where `op` is JAX's threefry2x32 loop, else None."""
    if len(op.operands) != 9 or len(op.results) != 9 or len(op.regions) != 2:
        return None
    body = op.regions[1].blocks
    if len(body) != 1 or not 3 <= len(body[0].operations) <= 4 \
            or body[0].operations[0].name != "func.call":
        return None                      # (a quick look before the op-by-op comparison)
    form = _loop_form(op)
    if form is None:
        return None
    t_funcs, t_loop = _template(form)
    return form if same_loop(ctx, op, t_funcs, t_loop) else None


def _key_values(k, small: bool):
    """A key operand as the rounds take it: a Python int for a rank-0 key, else the words (a
    list of ints for the small rounds, a uint32 array for the vector rounds)."""
    a = np.asarray(k)
    if a.ndim == 0:
        return int(a)
    return a.reshape(-1).tolist() if small else np.asarray(a, dtype=_U32)


# counters of more than twice this many words run in chunks of this many (each chunk's 100
# or so passes stay in the core's caches: 262,144 words 6.6 -> 4.1 ms on a 2-core AVX-512
# machine); the words are independent, so the chunks give the same words
_CHUNK = 1 << 15


def threefry_rounds(x0, x1, ka, kb, kc, ra, rb, j: int, iterations: int, tick=None,
                    bits: int = 32):
    """`_threefry_rounds` (see there), run over chunks of `_CHUNK` words where there are more
    than twice that many: the `iterations` ticks are all taken first (a limit stops the loop
    before any word is computed, as the vector rounds stop before writing anything the
    caller sees), then each chunk's rounds run with its keys' words."""
    n = int(np.size(x0))
    if n <= 2 * _CHUNK:
        return _threefry_rounds(x0, x1, ka, kb, kc, ra, rb, j, iterations, tick, bits)
    if tick is not None:
        for _ in range(iterations):
            tick()
    shape = np.shape(x0)
    f0 = np.asarray(x0, dtype=_U32).reshape(-1)
    f1 = np.asarray(x1, dtype=_U32).reshape(-1)
    keys = [k if k.__class__ is int else np.asarray(k, dtype=_U32).reshape(-1)
            for k in (ka, kb, kc)]
    o0, o1 = np.empty(n, _U32), np.empty(n, _U32)
    out_j = j
    for s in range(0, n, _CHUNK):
        sl = slice(s, s + _CHUNK)
        a, b, out_j = _threefry_rounds(f0[sl], f1[sl], *[k if k.__class__ is int else k[sl] for k in keys],
                                       ra, rb, j, iterations, None, bits)
        o0[sl] = a
        o1[sl] = b
    return o0.reshape(shape), o1.reshape(shape), out_j


def _threefry_rounds(x0, x1, ka, kb, kc, ra, rb, j: int, iterations: int, tick=None,
                     bits: int = 32):
    """`iterations` runs of the loop body on counter words x0, x1 (uint32 arrays, not
    written): per iteration 4 rounds rotating by `ra` (x0 += x1; x1 = rotl(x1, r) ^ x0), then
    x0 += ka, x1 += kb + u32(j + 1), j += 1 (wrapping as a `bits`-bit signed counter), the
    keys rotated (ka, kb, kc) <- (kb, kc, ka) and the rotation lists swapped; the keys are
    ints or uint32 arrays of the words' shape; `tick()` is called before each iteration.
    Returns (x0, x1, j)."""
    # per rotation list, each amount as (0-d u32 left shift, 0-d u32 right shift) for
    # 0 < r < 32, 1 for one that leaves the word, 0 for one that gives 0 (a ufunc takes a 0-d
    # array operand faster than a numpy scalar: the rounds are mostly per-call cost)
    ra, rb = tuple(int(r) for r in ra), tuple(int(r) for r in rb)
    rots = _ROTS.get((ra, rb))
    if rots is None:
        if len(_ROTS) >= 16:
            _ROTS.clear()
        rots = _ROTS[(ra, rb)] = ([_shift_pair(r) for r in ra], [_shift_pair(r) for r in rb])
    x1 = np.array(x1, dtype=_U32, copy=True)
    x0 = np.asarray(x0, dtype=_U32)
    tmp = np.empty_like(x1)
    fresh = True                     # x0 is still the operand (not ours to write)
    add, lsh, rsh, or_, xor = np.add, np.left_shift, np.right_shift, np.bitwise_or, np.bitwise_xor
    keys = [_u32_operand(k) for k in (ka, kb, kc)]
    for it in range(iterations):
        if tick is not None:
            tick()
        for rot in rots[it & 1]:
            if fresh:
                x0 = add(x0, x1)
                fresh = False
            else:
                add(x0, x1, out=x0)
            if rot.__class__ is tuple:
                lsh(x1, rot[0], out=tmp)
                rsh(x1, rot[1], out=x1)
                or_(x1, tmp, out=x1)
            elif not rot:
                # (a shift by 32 or more gives 0: both halves of the rotation are 0)
                x1.fill(0)
            xor(x1, x0, out=x1)
        if fresh:
            x0 = np.array(x0, dtype=_U32, copy=True)
            fresh = False
        k0 = keys[it % 3]
        k1 = keys[(it + 1) % 3]
        add(x0, k0, out=x0)
        j = wrap_signed(j + 1, bits)
        if k1.ndim == 0:
            add(x1, np.array((int(k1) + (j & _M32)) & _M32, dtype=_U32), out=x1)
        else:
            add(x1, k1, out=x1)
            add(x1, np.array(j & _M32, dtype=_U32), out=x1)
    return x0, x1, j


_ROTS = {}           # (ra, rb) -> their `_shift_pair`s (read only)


def _shift_pair(r: int):
    """`threefry_rounds`' form of a rotation amount (see there)."""
    if 0 < r < 32:
        return (np.array(r, dtype=_U32), np.array(32 - r, dtype=_U32))
    return 1 if r == 0 or r == 32 else 0


def _u32_operand(k):
    """A key as the rounds add it: a 0-d uint32 array for an int, else the uint32 words."""
    if k.__class__ is int:
        return np.array(k & _M32, dtype=_U32)
    return np.asarray(k, dtype=_U32)


# counters of at most this many elements run in Python integers (a numpy call per round costs
# more than the whole hash of a few words, as for the 2 or 3 words of a key split)
_SMALL = 8


def _rotation_kinds(rs):
    """Each rotation amount as (r, 32 - r) for 0 < r < 32, 1 for one that leaves the word
    (0 or 32), 0 for one past 32 (StableHLO's shifts by 32 or more give 0: so do both
    halves of the rotation)."""
    return [(r, 32 - r) if 0 < r < 32 else 1 if r == 0 or r == 32 else 0 for r in rs]


def threefry_rounds_small(x0, x1, ka, kb, kc, ra, rb, j: int, iterations: int, tick=None,
                          bits: int = 32):
    """`threefry_rounds` in Python integers, for a few words (keys: ints or lists of the
    words' ints), word by word; the `iterations` ticks are all taken first (the words are
    computed only once every tick has passed, so a limit stops the loop as it would stop
    the vector rounds: nothing else is written)."""
    shape = np.shape(x0)
    rots = (_rotation_kinds([int(r) for r in ra]), _rotation_kinds([int(r) for r in rb]))
    xs0 = np.asarray(x0, dtype=_U32).reshape(-1).tolist()
    xs1 = np.asarray(x1, dtype=_U32).reshape(-1).tolist()
    n = len(xs0)
    ks = [[k] * n if k.__class__ is int else k for k in (ka, kb, kc)]
    m = _M32
    if tick is not None:
        for _ in range(iterations):
            tick()
    # per iteration: (rotations, key index for x0, key index for x1, u32(j + 1))
    steps = []
    for it in range(iterations):
        j = wrap_signed(j + 1, bits)
        steps.append((rots[it % 2], it % 3, (it + 1) % 3, j & m))
    for e in range(n):
        a, b = xs0[e], xs1[e]
        k = (ks[0][e], ks[1][e], ks[2][e])
        for rs, i0, i1, jj in steps:
            for rot in rs:
                a = (a + b) & m
                if rot.__class__ is tuple:
                    b = (((b << rot[0]) & m) | (b >> rot[1])) ^ a
                elif rot:
                    b ^= a
                else:
                    b = a                # (0 ^ a: the rotation gave 0)
            a = (a + k[i0]) & m
            b = (b + k[i1] + jj) & m
        xs0[e], xs1[e] = a, b
    return np.array(xs0, dtype=_U32).reshape(shape), np.array(xs1, dtype=_U32).reshape(shape), j


def _run_threefry_loop(ctx, op, args, counter):
    i, j, x0, x1, ka, kb, kc, ra, rb = args
    i = int(i)
    if i >= 5:
        return list(args)
    n = 5 - i
    ctype, bits = _COUNTERS[counter]
    max_steps = ctx.max_steps
    deadline = ctx.deadline

    def tick():
        steps = ctx.steps = ctx.steps + 1
        if steps > max_steps or deadline is not None:
            ctx.tick(op, counted=True)
    keys = (ka, kb, kc)
    rots = (ra, rb)
    small = np.size(x0) <= _SMALL
    rounds = threefry_rounds_small if small else threefry_rounds
    x0, x1, j = rounds(x0, x1, *(_key_values(k, small) for k in keys),
                       np.asarray(ra).tolist(), np.asarray(rb).tolist(), int(j), n, tick, bits)
    # the key and rotation operands come back as the same objects, rotated (swapped) once
    # per iteration
    s = n % 3
    keys = keys[s:] + keys[:s]
    if n % 2:
        rots = rots[::-1]
    return [ctype(5), ctype(j), x0, x1, keys[0], keys[1], keys[2], rots[0], rots[1]]


def threefry_loop(ctx, op):
    """A function (ctx, op, args) -> results that runs the `while` op `op` where it is JAX's
    threefry2x32 loop (see the module docstring), else None; decided once per op."""
    if ctx.trace is not None:
        return None
    cache = op_cache(op)
    form = cache.get("threefry_loop", _MISSING)
    if form is _MISSING:
        try:
            form = _matches_threefry_loop(ctx, op)
        except Exception:  # noqa: BLE001 - anything unexpected: the loop runs op by op
            form = None
        cache["threefry_loop"] = form
    if form is None:
        return None
    counter = form[1]
    return lambda ctx, op, args: _run_threefry_loop(ctx, op, args, counter)
