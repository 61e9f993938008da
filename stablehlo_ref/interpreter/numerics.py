"""Element-type numerics: how each StableHLO element type is stored (numpy / ml_dtypes) and
computed (a wider numpy type where needed), with one rounding to the result type and
wrap-around for integers of every width, sub-byte ones included."""
from __future__ import annotations

import numpy as np

from ..ir.types import ElementType, QuantizedType, TensorType

_NATIVE_FLOATS = ("f16", "f32", "f64")


def elem(t) -> ElementType:
    """The element type of a tensor type (the storage type for quantized tensors)."""
    et = t.element_type if isinstance(t, TensorType) else t
    if isinstance(et, QuantizedType):
        return et.storage_type
    return et


def compute_dtype(et: ElementType) -> np.dtype:
    """The numpy dtype arithmetic on `et` is done in before rounding back to `et`."""
    if et.is_bool:
        return np.dtype(np.bool_)
    if et.is_integer:
        if et.bits < 8:
            return np.dtype(np.int8 if et.is_signed else np.uint8)
        return et.dtype
    if et.is_complex:
        return et.dtype
    if et.name == "f64":
        return np.dtype(np.float64)
    # f32 and every narrower float compute in f64, then round once to the result type
    return np.dtype(np.float64)


def to_compute(x: np.ndarray, et: ElementType) -> np.ndarray:
    dt = compute_dtype(et)
    if x.dtype == dt:
        return x
    return x.astype(dt)


def wrap_int(x: np.ndarray, et: ElementType) -> np.ndarray:
    """Wrap integers computed in a wider type into et's width and store them as et's dtype."""
    if et.is_bool:
        return x.astype(np.bool_)
    bits = et.bits
    if bits >= 8:
        return x.astype(et.dtype, copy=False) if x.dtype != et.dtype else x
    xi = x.astype(np.int64)
    mask = (1 << bits) - 1
    xi = xi & mask
    if et.is_signed:
        xi = np.where(xi >= (1 << (bits - 1)), xi - (1 << bits), xi)
    return xi.astype(np.int8 if et.is_signed else np.uint8).astype(et.dtype)


def from_compute(x, et: ElementType) -> np.ndarray:
    """Round (floats) or wrap (integers) a computed array to element type et."""
    x = np.asarray(x)
    if et.is_integer:
        if x.dtype.kind in "iub":
            return wrap_int(x, et)
        return wrap_int(x.astype(np.int64), et)
    if x.dtype == et.dtype:
        return x
    with np.errstate(all="ignore"):
        return x.astype(et.dtype)


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
    fa = a.astype(np.float64)
    fb = b.astype(np.float64)
    bit_eq = np.ascontiguousarray(a).view(udt) == np.ascontiguousarray(b).view(udt)
    ma = np.ascontiguousarray(np.abs(a)).view(udt).astype(np.uint64)
    mb = np.ascontiguousarray(np.abs(b)).view(udt).astype(np.uint64)
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
    fa = np.asarray(a).astype(np.float64)
    fb = np.asarray(b).astype(np.float64)
    with np.errstate(all="ignore"):
        eq = fa == fb
        both_nan = np.isnan(fa) & np.isnan(fb)
        close = np.isfinite(fa) & np.isfinite(fb) & (np.abs(fa - fb) <= tol)
    return eq | both_nan | close
