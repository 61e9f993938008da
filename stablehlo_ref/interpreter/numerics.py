"""Element-type numerics: how each StableHLO element type is stored (numpy / ml_dtypes) and
computed (a wider numpy type where needed), with one rounding to the result type and
wrap-around for integers of every width, sub-byte ones included."""
from __future__ import annotations

import functools

import numpy as np

from ..ir.types import ElementType, elem as _elem

_NATIVE_FLOATS = ("f16", "f32", "f64")

# element types whose sums, products, maxima and minima numpy computes in the stored dtype
# itself with the values the compute-dtype path gives (f32 and f64 round as their own
# arithmetic does, integers of 8 bits or more wrap natively; max/min are exact): a kernel may
# skip the conversions for these
NATIVE_IN_TYPE = frozenset(("f32", "f64", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32",
                            "ui64"))

# the element type values of a type are held in (a quantized type's storage type)
elem = functools.partial(_elem, storage=True)


_COMPUTE_DTYPES: dict = {}


def compute_dtype(et: ElementType) -> np.dtype:
    """The numpy dtype arithmetic on `et` is done in before rounding back to `et`."""
    dt = _COMPUTE_DTYPES.get(et.name)
    if dt is not None:
        return dt
    if et.is_bool:
        dt = np.dtype(np.bool_)
    elif et.is_integer:
        if et.bits < 8:
            dt = np.dtype(np.int8 if et.is_signed else np.uint8)
        else:
            dt = et.dtype
    elif et.is_complex:
        dt = et.dtype
    else:
        # f64 natively; f32 and every narrower float compute in f64, then round once to the
        # result type
        dt = np.dtype(np.float64)
    _COMPUTE_DTYPES[et.name] = dt
    return dt


def accumulation_dtype(et: ElementType) -> np.dtype:
    """The numpy dtype sums of products (dot_general, convolution, einsum) accumulate in before
    rounding once to `et`: f64 for floats, c128 for complex, i64 for integers and booleans
    (u64 for 64-bit unsigned). Unlike `compute_dtype` (elementwise arithmetic, which wraps in
    the type itself), accumulation never overflows a narrower integer type on the way."""
    kind = et.kind
    if kind == "complex":
        return _C128
    if kind == "float":
        return _F64
    if kind == "bool":
        return _I64
    return _I64 if (et.is_signed or et.bits < 64) else _U64


_C128, _F64, _I64, _U64 = (np.dtype(np.complex128), np.dtype(np.float64), np.dtype(np.int64),
                           np.dtype(np.uint64))


def to_compute(x: np.ndarray, et: ElementType) -> np.ndarray:
    dt = compute_dtype(et)
    if x.dtype == dt:
        return x
    return x.astype(dt)


def wrap_int(x: np.ndarray, et: ElementType) -> np.ndarray:
    """Wrap integers computed in a wider type into et's width and store them as et's dtype."""
    kind = et.kind
    if kind == "bool":
        return x.astype(np.bool_)
    bits = et.bits
    if bits >= 8:
        dt = et.dtype
        return x.astype(dt, copy=False) if x.dtype != dt else x
    xi = x.astype(np.int64)
    mask = (1 << bits) - 1
    xi = xi & mask
    if kind != "unsigned":
        xi = np.where(xi >= (1 << (bits - 1)), xi - (1 << bits), xi)
    return xi.astype(np.int8 if kind != "unsigned" else np.uint8).astype(et.dtype)


_INTEGER_KINDS = frozenset(("bool", "signed", "unsigned", "index"))


_F64 = np.dtype(np.float64)
_F32 = np.dtype(np.float32)
# f64 arrays of at least this many elements go to bf16 through f32 (`f64_to_bf16`)
_BF16_VIA_F32_MIN = 32


def f64_to_bf16(x: np.ndarray, bf16=None) -> np.ndarray:
    """`x.astype(bfloat16)` for an f64 array, bit for bit, at about a third of its cost
    (ml_dtypes rounds f64 to bf16 element by element; from f32 it is fast): through f32,
    whose rounding keeps every element on the side of each bf16 rounding boundary it lies on
    (the boundaries, bf16's midpoints, are f32 values, and rounding is monotonic), except an
    element it rounds onto a boundary itself. bf16's grid is the f32 bit patterns whose low
    16 bits are 0, subnormals included (the same exponent range), so those elements are the
    f32 values whose low 16 bits are 0x8000; they, and only they, are rounded directly.
    `bf16`: ml_dtypes' bfloat16 dtype (imported here where not given: an f32 program never
    imports ml_dtypes)."""
    if bf16 is None:
        import ml_dtypes
        bf16 = np.dtype(ml_dtypes.bfloat16)
    f = x.astype(_F32)
    out = f.astype(bf16)
    on_boundary = (f.view(np.uint32) & np.uint32(0xFFFF)) == np.uint32(0x8000)
    if on_boundary.any():
        out[on_boundary] = x[on_boundary].astype(bf16)
    return out


def from_compute(x, et: ElementType) -> np.ndarray:
    """Round (floats) or wrap (integers) a computed array to element type et."""
    if x.__class__ is not np.ndarray:
        x = np.asarray(x)
    if et.kind in _INTEGER_KINDS:
        if x.dtype.kind in "iub":
            return wrap_int(x, et)
        return wrap_int(x.astype(np.int64), et)
    dt = et.dtype
    if x.dtype == dt:
        return x
    if x.dtype == _F64 and et.name == "bf16" and x.size >= _BF16_VIA_F32_MIN:
        return f64_to_bf16(x, dt)
    # (narrowing may overflow to inf: the evaluator runs kernels with numpy's warnings off)
    return x.astype(dt)


def ulp_difference(a: np.ndarray, b: np.ndarray, et: ElementType) -> np.ndarray:
    """Per-element ULP distance as upstream's check dialect defines it (uint64; NaN vs NaN is 0,
    non-finite vs anything else is the maximum)."""
    if et.is_complex:
        sub = np.float32 if et.name == "complex<f32>" else np.float64
        from ..ir.types import ELEMENT_TYPES
        s = ELEMENT_TYPES["f32" if sub is np.float32 else "f64"]
        return np.maximum(ulp_difference(a.real.astype(sub), b.real.astype(sub), s),
                          ulp_difference(a.imag.astype(sub), b.imag.astype(sub), s))
    dt = et.dtype
    a = np.asarray(a, dtype=dt)
    b = np.asarray(b, dtype=dt)
    udt = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    with np.errstate(invalid="ignore"):     # (a NaN of bf16/f8 casts with a warning)
        fa = a.astype(np.float64)
        fb = b.astype(np.float64)
    bit_eq = contiguous(a).view(udt) == contiguous(b).view(udt)
    ma = contiguous(np.abs(a)).view(udt).astype(np.uint64)
    mb = contiguous(np.abs(b)).view(udt).astype(np.uint64)
    neg_a = np.signbit(fa)
    neg_b = np.signbit(fb)
    diff = np.where(neg_a != neg_b, ma + mb, np.where(ma > mb, ma - mb, mb - ma))
    finite = np.isfinite(fa) & np.isfinite(fb)
    both_nan = np.isnan(fa) & np.isnan(fb)
    big = np.uint64(np.iinfo(np.uint64).max)
    out = np.where(finite, diff, big)
    out = np.where(both_nan | bit_eq, np.uint64(0), out)
    return out.astype(np.uint64)


def approx_equal(a: np.ndarray, b: np.ndarray, et: ElementType, tol: float) -> np.ndarray:
    """Upstream's `areApproximatelyEqual`: equal, both NaN, or both finite within `tol`."""
    if et.is_complex:
        return approx_equal_float(a.real, b.real, tol) & approx_equal_float(a.imag, b.imag, tol)
    return approx_equal_float(a, b, tol)


def approx_equal_float(a, b, tol):
    with np.errstate(all="ignore"):
        fa = np.asarray(a).astype(np.float64)
        fb = np.asarray(b).astype(np.float64)
        eq = fa == fb
        both_nan = np.isnan(fa) & np.isnan(fb)
        close = np.isfinite(fa) & np.isfinite(fb) & (np.abs(fa - fb) <= tol)
    return eq | both_nan | close


def contiguous(x) -> np.ndarray:
    """`x` as a C-contiguous array of its own shape (np.ascontiguousarray makes a rank-0
    array rank-1, which changed result shapes)."""
    x = np.asarray(x)
    return x if x.flags.c_contiguous else np.array(x, order="C")


def _scalar_nan_order(pyop, ufunc, dt):
    """How numpy's scalar operator `pyop` (add, multiply, subtract, divide) on two numpy scalars
    of float dtype `dt` picks between two NaNs, against `ufunc` on arrays (the kernels' way,
    which keeps the first operand's payload on this machine's numpy or not): "same" where
    they agree, "swapped" where the scalar operator with its operands swapped agrees (of use
    for the commutative add and multiply only), None where neither does. numpy compiles its scalar math and its array loops separately, so
    the two can keep different payloads (x86 keeps the first source operand's)."""
    ut = np.dtype(f"u{dt.itemsize}")
    quiet = {2: 0x7E00, 4: 0x7FC00000, 8: 0x7FF8000000000000}[dt.itemsize]
    sign = 1 << (8 * dt.itemsize - 1)
    x = np.array([quiet | 1], ut).view(dt)
    y = np.array([quiet | 2 | sign], ut).view(dt)
    want_xy = ufunc(x, y).view(ut)[0]
    want_yx = ufunc(y, x).view(ut)[0]
    with np.errstate(all="ignore"):
        a, b = x[0], y[0]
        ab = np.asarray(pyop(a, b)).view(ut)[()]
        ba = np.asarray(pyop(b, a)).view(ut)[()]
    if ab == want_xy and ba == want_yx:
        return "same"
    if ba == want_xy and ab == want_yx:
        return "swapped"
    return None


# ("add" or "multiply", dtype char) -> `_scalar_nan_order` of numpy's scalar operator for
# f16, f32 and f64 on this numpy
SCALAR_NAN_ORDER = {(name, np.dtype(t).char): _scalar_nan_order(pyop, uf, np.dtype(t))
                    for name, pyop, uf in (("add", lambda a, b: a + b, np.add),
                                           ("multiply", lambda a, b: a * b, np.multiply),
                                           ("subtract", lambda a, b: a - b, np.subtract),
                                           ("divide", lambda a, b: a / b, np.divide))
                    for t in (np.float16, np.float32, np.float64)}


def strided_view(x: np.ndarray, shape: tuple, strides: tuple) -> np.ndarray:
    """A read-only view of `x`'s elements with `shape` and byte `strides` (every element it
    reaches lies within `x`'s own buffer): numpy's `as_strided`, made as an ndarray over `x`'s
    buffer where `x` exports one (a C-contiguous array of a numpy dtype: 0.4 us rather than
    `as_strided`'s 3 us and `sliding_window_view`'s 12 us, most of a small pooling's cost);
    ml_dtypes' types, which numpy's stride tricks cannot make, are viewed as their bits."""
    if x.flags.c_contiguous and x.dtype.num < 256 and x.size:
        try:
            v = np.ndarray(shape, x.dtype, x, 0, strides)
        except (TypeError, ValueError, BufferError):
            pass
        else:
            v.flags.writeable = False
            return v
    if x.dtype.num >= 256:
        bits = x.view(np.dtype(f"u{x.dtype.itemsize}"))
        return np.lib.stride_tricks.as_strided(bits, shape, strides,
                                               writeable=False).view(x.dtype)
    return np.lib.stride_tricks.as_strided(x, shape, strides, writeable=False)


def sliding_windows(x: np.ndarray, window: tuple, axes: tuple) -> np.ndarray:
    """numpy's `sliding_window_view(x, window, axis=axes)` (`axes` distinct, non-negative;
    every window fits): the windowed axes shrunk to n - w + 1, the window axes appended."""
    shape = list(x.shape)
    st = x.strides
    for w, a in zip(window, axes):
        shape[a] -= w - 1
    return strided_view(x, tuple(shape) + tuple(window), st + tuple(st[a] for a in axes))
