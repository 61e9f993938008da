"""Random numbers: `rng_bit_generator` (Threefry-2x32 and Philox-4x32 with the state layout,
counter layout and output packing of XLA, so that bits and output states equal XLA CPU's)
and `rng` (implementation-defined: deterministic, seeded per op and per execution).

Everything is vectorized over the counters with numpy uint32/uint64 arithmetic (which wraps
modulo 2**32 / 2**64, as the algorithms need)."""
from __future__ import annotations

import zlib

import numpy as np

from ..errors import InterpreterError, NotImplementedOpError
from ..ir.types import TensorType
from .numerics import elem, from_compute
from .registry import kernel

_U32 = np.uint32
_U64 = np.uint64
_M32 = 0xFFFFFFFF

# ------------------------------------------------------------------ Threefry-2x32 (20 rounds)

_THREEFRY_ROT = ((13, 15, 26, 6), (17, 29, 16, 24))


def threefry2x32(key0: int, key1: int, x0: np.ndarray, x1: np.ndarray):
    """Threefry-2x32 with 20 rounds on counter words (x0, x1) (uint32 arrays) under the key
    (key0, key1); returns the two output words."""
    k0 = _U32(key0 & _M32)
    k1 = _U32(key1 & _M32)
    ks = (k0, k1, _U32(0x1BD11BDA ^ int(k0) ^ int(k1)))
    x0 = x0.astype(_U32) + ks[0]
    x1 = x1.astype(_U32) + ks[1]
    for i in range(5):
        for r in _THREEFRY_ROT[i % 2]:
            x0 += x1
            x1 = (x1 << _U32(r)) | (x1 >> _U32(32 - r))
            x1 ^= x0
        x0 += ks[(i + 1) % 3]
        x1 += ks[(i + 2) % 3] + _U32(i + 1)
    return x0, x1


# ------------------------------------------------------------------ Philox-4x32 (10 rounds)

_PHILOX_M0 = _U64(0xD2511F53)
_PHILOX_M1 = _U64(0xCD9E8D57)
_PHILOX_W0 = 0x9E3779B9
_PHILOX_W1 = 0xBB67AE85


def philox4x32(key0: int, key1: int, c0, c1, c2, c3):
    """Philox-4x32 with 10 rounds on counter words c0..c3 (uint32 arrays) under the key
    (key0, key1); returns the four output words."""
    c0, c1, c2, c3 = (c.astype(_U32) for c in (c0, c1, c2, c3))
    k0, k1 = key0 & _M32, key1 & _M32
    for _ in range(10):
        p0 = c0.astype(_U64) * _PHILOX_M0
        p1 = c2.astype(_U64) * _PHILOX_M1
        hi0 = (p0 >> _U64(32)).astype(_U32)
        lo0 = p0.astype(_U32)
        hi1 = (p1 >> _U64(32)).astype(_U32)
        lo1 = p1.astype(_U32)
        c0, c1, c2, c3 = hi1 ^ c1 ^ _U32(k0), lo1, hi0 ^ c3 ^ _U32(k1), lo0
        k0 = (k0 + _PHILOX_W0) & _M32
        k1 = (k1 + _PHILOX_W1) & _M32
    return c0, c1, c2, c3


# ------------------------------------------------------------------ XLA's bit generators

def _lo_hi(x: np.ndarray):
    return x.astype(_U32), (x >> _U64(32)).astype(_U32)


def _join(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return lo.astype(_U64) | (hi.astype(_U64) << _U64(32))


def _threefry_split_dim(shape) -> int:
    """The dimension XLA's 32-bit THREE_FRY halves (one counter gives two adjacent values along
    it): the one that needs the least padding to an even size (an even dimension, else the
    largest odd one; the first on ties); -1 when every dimension is 1."""
    best, best_pad = -1, None
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    for i, d in enumerate(shape):
        if d > 1:
            pad = 0 if d % 2 == 0 else n // d
            if best_pad is None or pad < best_pad:
                best, best_pad = i, pad
    return best


def threefry_bits(state: np.ndarray, shape, bits: int):
    """XLA's THREE_FRY generator: random bits of `shape` (uint32 for bits=32, uint64 for 64)
    and the new state. The state is [key, counter]; counter + i (i a row-major index) is split
    into (low, high) words and encrypted under the key's (low, high) words. A 64-bit value is
    low | high << 32 of one counter; 32-bit values take both words of a counter as two
    neighbours along one dimension (see `_threefry_split_dim`), the odd end cut off. The new
    state advances the counter by the number of counters used."""
    shape = tuple(int(d) for d in shape)
    key, ctr = int(state[0]), int(state[1])
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    split = -1 if bits == 64 else _threefry_split_dim(shape)
    if bits == 64:
        half = shape
    elif split >= 0:
        half = shape[:split] + ((shape[split] + 1) // 2, 1) + shape[split + 1:]
    else:
        half = ((n + 1) // 2, 1)
    m = int(np.prod(half, dtype=np.int64)) if half else 1
    counters = np.arange(m, dtype=_U64) + _U64(ctr)
    x0, x1 = threefry2x32(key & _M32, key >> 32, *_lo_hi(counters))
    if bits == 64:
        out = _join(x0, x1).reshape(shape)
    else:
        axis = split + 1 if split >= 0 else 1
        out = np.concatenate([x0.reshape(half), x1.reshape(half)], axis=axis)
        if split >= 0:
            padded = shape[:split] + (2 * half[split],) + shape[split + 1:]
            out = out.reshape(padded)[tuple(slice(0, d) for d in shape)]
        else:
            out = out.reshape(-1)[:n].reshape(shape)
    new_state = np.array([key, (ctr + m) & 0xFFFFFFFFFFFFFFFF], dtype=_U64)
    return (out if out.flags.c_contiguous else out.copy()), new_state


def philox_bits(state: np.ndarray, shape, bits: int):
    """XLA's PHILOX generator: `n` values of `bits` (32 or 64) random bits and the new state.
    The state is [key, counter_low] (the key doubles as the counter's high word) or
    [key, counter_low, counter_high]; each 128-bit counter value counter + i gives one block
    of four 32-bit words (four 32-bit values, or two 64-bit values (w0|w1<<32, w2|w3<<32))."""
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    key = int(state[0])
    if state.shape[0] >= 3:
        low, high = int(state[1]), int(state[2])
    else:
        low, high = int(state[1]), key
    per_block = 4 if bits == 32 else 2
    m = -(-n // per_block)
    idx = np.arange(m, dtype=_U64)
    lows = idx + _U64(low)
    carry = (lows < _U64(low)).astype(_U64)
    highs = carry + _U64(high)
    w = philox4x32(key & _M32, key >> 32, *_lo_hi(lows), *_lo_hi(highs))
    if bits == 32:
        out = np.stack(w, axis=-1).reshape(-1)[:n]
    else:
        out = np.stack([_join(w[0], w[1]), _join(w[2], w[3])], axis=-1).reshape(-1)[:n]
    out = out.reshape(tuple(shape))
    new_low = (low + m) & 0xFFFFFFFFFFFFFFFF
    new_high = (high + (1 if new_low < low else 0)) & 0xFFFFFFFFFFFFFFFF
    if state.shape[0] >= 3:
        new_state = np.array([key, new_low, new_high] + [int(s) for s in state[3:]], dtype=_U64)
    else:
        new_state = np.array([key, new_low], dtype=_U64)
    return out, new_state


_ALGORITHMS = {"THREE_FRY": threefry_bits, "PHILOX": philox_bits,
               # implementation-defined; XLA CPU runs PHILOX for DEFAULT
               "DEFAULT": philox_bits}


def rng_bit_generator_arrays(algorithm: str, state: np.ndarray, shape, et):
    """The (output_state, output) of rng_bit_generator for an output of element type `et`.
    64-bit types take 64-bit values; every narrower type takes one 32-bit value per element,
    truncated to its width, and the bits are reinterpreted as the type."""
    gen = _ALGORITHMS.get(algorithm)
    if gen is None:
        raise NotImplementedOpError("stablehlo.rng_bit_generator", f"algorithm {algorithm}")
    state = np.asarray(state).astype(_U64).reshape(-1)
    size = state.shape[0]
    if algorithm == "THREE_FRY" and size != 2:
        raise InterpreterError(f"rng_bit_generator: THREE_FRY takes a state of 2 ui64, got {size}")
    if algorithm != "THREE_FRY" and size not in (2, 3):
        raise InterpreterError(f"rng_bit_generator: {algorithm} takes a state of 2 or 3 ui64, got {size}")
    if et.is_bool or et.is_complex:
        raise NotImplementedOpError("stablehlo.rng_bit_generator", f"output element type {et}")
    bits = 64 if et.bits == 64 else 32
    out, new_state = gen(state, tuple(shape), bits)
    dt = et.dtype
    if et.bits >= 8 and dt.itemsize * 8 == et.bits:
        if et.bits < 32:
            out = out.astype(np.dtype(f"u{et.bits // 8}"))
        return new_state, out.view(dt)
    # sub-byte types (stored one per byte): keep the low `bits` bits, then read them as the
    # type through a wrap-around integer conversion or a bit-pattern view
    low = (out & _U32((1 << et.bits) - 1)).astype(np.uint8)
    if et.is_float:
        import ml_dtypes  # noqa: F401  (the sub-byte float dtypes)
        return new_state, low.view(dt) if dt.itemsize == 1 else low.astype(dt)
    if et.is_signed:
        signed = low.astype(np.int16) - ((low >> (et.bits - 1)) & 1).astype(np.int16) * (1 << et.bits)
        return new_state, signed.astype(dt)
    return new_state, low.astype(dt)


def _static_shape(t, what):
    if not isinstance(t, TensorType) or any(d is None for d in t.shape):
        raise InterpreterError(f"{what}: needs a statically shaped result, got {t}")
    return tuple(t.shape)


def _enum_name(attr, default):
    if attr is None:
        return default
    v = getattr(attr, "value", attr)
    return str(v).upper()


@kernel("stablehlo.rng_bit_generator")
def rng_bit_generator(ctx, op, state):
    alg = _enum_name(op.attributes.get("rng_algorithm"), "DEFAULT")
    shape = _static_shape(op.results[1].type, op.name)
    et = elem(op.results[1].type)
    new_state, out = rng_bit_generator_arrays(alg, state, shape, et)
    return [new_state.astype(state.dtype), out]


# ------------------------------------------------------------------ rng

def _op_seed(op) -> int:
    t = " ".join(str(r.type) for r in op.results)
    dist = _enum_name(op.attributes.get("rng_distribution"), "UNIFORM")
    loc = ""
    try:
        loc = str(op.where() or "")
    except Exception:  # noqa: BLE001 - a location is only extra entropy
        pass
    return zlib.crc32(f"{op.name}|{dist}|{t}|{loc}".encode())


def _uniform01(ctx, op, n: int) -> np.ndarray:
    """n float64 values in [0, 1) from 53 random bits each: Philox keyed by the op, with the
    number of rng executions so far in this interpreter as the counter's high word (so every
    execution of every op draws a fresh, reproducible stream)."""
    count = getattr(ctx, "_rng_executions", 0)
    try:
        ctx._rng_executions = count + 1
    except AttributeError:
        pass
    state = np.array([_op_seed(op) | (0x5EED << 32), 0, count], dtype=_U64)
    bits, _ = philox_bits(state, (n,), 64)
    return (bits >> _U64(11)).astype(np.float64) * (1.0 / (1 << 53))


@kernel("stablehlo.rng")
def rng(ctx, op, a, b, shape_arr):
    et = elem(op.results[0].type)
    dist = _enum_name(op.attributes.get("rng_distribution"), "UNIFORM")
    shape = tuple(int(s) for s in np.asarray(shape_arr).reshape(-1))
    if any(s < 0 for s in shape):
        raise InterpreterError(f"stablehlo.rng: negative dimension in shape {list(shape)}")
    rt = op.results[0].type
    if isinstance(rt, TensorType) and (len(rt.shape) != len(shape) or
                                        any(d is not None and d != s for d, s in zip(rt.shape, shape))):
        raise InterpreterError(f"stablehlo.rng: shape {list(shape)} does not match the result type {rt}")
    n = int(np.prod(shape, dtype=np.int64)) if shape else 1
    if dist == "NORMAL":
        if not et.is_float:
            raise InterpreterError(f"stablehlo.rng: NORMAL needs a floating-point type, got {et}")
        u = _uniform01(ctx, op, 2 * n)
        u1, u2 = 1.0 - u[:n], u[n:]           # u1 in (0, 1]
        z = np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)
        mean = float(np.asarray(a, dtype=np.float64))
        std = float(np.asarray(b, dtype=np.float64))
        return from_compute((mean + std * z).reshape(shape), et)
    if dist != "UNIFORM":
        raise NotImplementedOpError(op.name, f"rng_distribution {dist}")
    if et.is_float:
        lo = float(np.asarray(a, dtype=np.float64))
        hi = float(np.asarray(b, dtype=np.float64))
        u = _uniform01(ctx, op, n).reshape(shape)
        out = from_compute(lo + (hi - lo) * u, et)
        # rounding to the type may reach b: keep the interval half-open
        if lo < hi:
            out = np.where(out.astype(np.float64) >= hi, np.asarray(a, dtype=et.dtype).reshape(()), out)
        return out.astype(et.dtype)
    if et.is_complex:
        raise InterpreterError(f"stablehlo.rng: unsupported element type {et}")
    lo = int(np.asarray(a).astype(np.int64) if not (et.is_integer and not et.is_signed and not et.is_bool)
             else np.asarray(a).astype(np.uint64))
    hi = int(np.asarray(b).astype(np.int64) if not (et.is_integer and not et.is_signed and not et.is_bool)
             else np.asarray(b).astype(np.uint64))
    if hi <= lo:
        return np.full(shape, np.asarray(a).reshape(()), dtype=et.dtype)
    span = hi - lo                              # 1 .. 2**64 - 1
    u = _uniform01(ctx, op, n)
    if span <= (1 << 53):
        offs = np.minimum((u * span).astype(np.uint64), _U64(span - 1))
    else:
        state = np.array([_op_seed(op), 1, getattr(ctx, "_rng_executions", 0)], dtype=_U64)
        bits, _ = philox_bits(state, (n,), 64)
        offs = bits % _U64(span)
    vals = (offs + _U64(lo & 0xFFFFFFFFFFFFFFFF)).reshape(shape)
    if et.is_bool:
        return vals.astype(np.bool_)
    if et.is_signed:
        vals = vals.view(np.int64)
    if et.bits < 8:
        return vals.astype(np.int64 if et.is_signed else np.uint64).astype(et.dtype)
    return vals.astype(et.dtype)
