"""Element types the spec admits per op, and the input values the cases draw from: special
values (NaN, +-inf, +-0, subnormals, the extremes, integer min/max) first, then values from a
seeded generator, so that every case is the same on every run."""
from __future__ import annotations

import math
from functools import lru_cache
from typing import List, Optional, Sequence

import numpy as np

from .formats import FloatFormat, float_format, round_value, UNSPECIFIED

SEED = 20260516        # every generated value derives from it (and the case's id)


def rng_for(key: str) -> np.random.Generator:
    """A generator seeded from SEED and a case key (stable across runs and machines)."""
    h = 0
    for ch in key.encode():
        h = (h * 131 + ch) % (1 << 61)
    return np.random.default_rng([SEED, h])


@lru_cache(maxsize=None)
def type_info(name: str):
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    return ELEMENT_TYPES[name]


def all_element_types() -> List[str]:
    from stablehlo_ref import spec
    return [e.text for e in spec.element_types() if e.kind != "index"]


def kind(name: str) -> str:
    from stablehlo_ref import spec
    return spec.element_type(name).kind        # bool | signed | unsigned | float | complex


def bits(name: str) -> int:
    from stablehlo_ref import spec
    return spec.element_type(name).bits


def component(name: str) -> str:
    return "f32" if name == "complex<f32>" else "f64"


def admitted(type_class: str, candidates: Optional[Sequence[str]] = None) -> List[str]:
    """The element types a spec operand type class (`fp_complex_or_quantized_int_tensor`, ...)
    admits, as the verifier reads the class."""
    from stablehlo_ref.ir.types import TensorType
    from stablehlo_ref.verifier.core import type_matches
    out = []
    for n in candidates or all_element_types():
        if n == "tf32":
            continue         # the verifier refuses tf32 elements in any StableHLO value (tuples too)
        if type_matches(TensorType((2,), type_info(n)), type_class):
            out.append(n)
    return out


def int_range(name: str):
    k, b = kind(name), bits(name)
    if k == "bool":
        return 0, 1
    if k == "signed":
        return -(1 << (b - 1)), (1 << (b - 1)) - 1
    return 0, (1 << b) - 1


def int_pool(name: str, rng: np.random.Generator, n_random: int) -> List[int]:
    lo, hi = int_range(name)
    special = [lo, lo + 1, -1, 0, 1, 2, 3, hi - 1, hi, hi // 2, lo // 2]
    vals = []
    for v in special:
        if lo <= v <= hi and v not in vals:
            vals.append(v)
    for _ in range(n_random):
        vals.append(int(rng.integers(lo, hi, endpoint=True, dtype=np.int64 if hi < 2**63 else np.uint64)))
    return vals


def float_specials(fmt: FloatFormat) -> List[float]:
    cands = [0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 3.0, 1.5, -2.5, 0.75, fmt.max, -fmt.max, fmt.tiny, -fmt.tiny,
             fmt.smallest_subnormal, -fmt.smallest_subnormal, fmt.tiny - fmt.smallest_subnormal,
             1.0 + fmt.eps, 1.0 - fmt.eps / 2, math.inf, -math.inf, math.nan]
    out = []
    for v in cands:
        r = round_value(v, fmt)
        if r is UNSPECIFIED or not (r == v or (math.isnan(v) and math.isnan(r))):
            continue
        if v == 0 and math.copysign(1, r) != math.copysign(1, v):
            continue
        if any(_same(r, o) for o in out):
            continue
        out.append(r)
    return out


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1, a) == math.copysign(1, b)


def float_random(fmt: FloatFormat, rng: np.random.Generator, n: int, moderate: bool = False) -> List[float]:
    """n values of the format: random bit patterns (all magnitudes) or, with `moderate`,
    values uniform in [-4, 4] rounded to the format."""
    out = []
    while len(out) < n:
        if moderate:
            r = round_value(float(rng.uniform(-4.0, 4.0)), fmt)
        else:
            width = fmt.dtype.itemsize * 8
            raw = rng.integers(0, 1 << width, dtype=np.uint64)
            arr = np.array([raw], np.uint64).astype(f"u{fmt.dtype.itemsize}").view(fmt.dtype)
            if fmt.name == "tf32":       # keep 10 mantissa bits
                arr = (np.array([raw], np.uint64).astype(np.uint32) & np.uint32(0xFFFFE000)).view(np.float32)
            with np.errstate(all="ignore"):
                r = float(arr.astype(np.float64)[0])
            if math.isnan(r) or math.isinf(r):
                continue
        if r is UNSPECIFIED:
            continue
        out.append(r)
    return out


def make_array(values, name: str, shape=None) -> np.ndarray:
    """Exact input/expected values as an array of the element type's storage dtype."""
    k = kind(name)
    dt = type_info(name).dtype
    if k == "float":
        with np.errstate(all="ignore"):
            a = np.array(values, dtype=np.float64).astype(dt)
    elif k == "complex":
        a = np.array(values, dtype=np.complex128).astype(dt)
    elif k == "bool":
        a = np.array([bool(v) for v in values], dtype=np.bool_)
    else:
        a = np.array([int(v) for v in values], dtype=object).astype(np.int64 if kind(name) == "signed" or bits(name) < 64 else np.uint64).astype(dt)
    return a.reshape(shape if shape is not None else (len(values),))


def mlir_type(shape, name: str) -> str:
    dims = "x".join(str(d) for d in shape)
    return f"tensor<{dims}x{name}>" if dims else f"tensor<{name}>"
