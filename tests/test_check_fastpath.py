"""The check dialect's shortcut for bit-identical arrays gives the verdict the element-wise
comparison gives (hypothesis over raw bit patterns: NaN payloads, -0, inf, subnormals)."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.errors import CheckFailure
from stablehlo_ref.interpreter import check
from stablehlo_ref.ir.types import ELEMENT_TYPES

TYPES = ["bf16", "f16", "f32", "f64", "f8E4M3FN", "complex<f32>"]


def _verdict(fn, *args):
    try:
        fn(*args)
        return "pass"
    except CheckFailure:
        return "fail"


def _array(et, raw):
    dt = et.dtype
    if et.is_complex:
        parts = np.frombuffer(raw.astype(np.uint32).tobytes(), dtype=np.float32)
        return parts.view(np.complex64).copy() if parts.size % 2 == 0 else parts[:-1].view(np.complex64).copy()
    u = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dt.itemsize]
    return raw.astype(u).view(dt).copy()


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(TYPES),
       bits=st.lists(st.integers(0, 2**64 - 1), min_size=2, max_size=12),
       flip=st.one_of(st.none(), st.integers(0, 11)),
       min_ulp=st.integers(0, 2), max_ulp=st.integers(0, 4))
def test_identical_bits_shortcut_agrees_with_the_elementwise_check(name, bits, flip, min_ulp, max_ulp):
    et = ELEMENT_TYPES[name]
    a = _array(et, np.array(bits, dtype=np.uint64))
    b = a.copy()
    if flip is not None and b.size:
        k = flip % b.size
        b[k] = np.nextafter(b[k].real, np.inf) if not et.is_complex else b[k] + 1
    checks = [(check.expect_eq, (a, b, et)), (check.expect_almost_eq, (a, b, et, 1e-3)),
              (check.expect_close, (a, b, et, min_ulp, max_ulp))]
    fast = [_verdict(fn, *args) for fn, args in checks]
    shortcut = check._bits_identical
    check._bits_identical = lambda x, y: False
    try:
        slow = [_verdict(fn, *args) for fn, args in checks]
    finally:
        check._bits_identical = shortcut
    assert fast == slow


def test_identical_arrays_fail_a_check_that_wants_a_nonzero_distance():
    et = ELEMENT_TYPES["f32"]
    a = np.array([1.0, np.nan, -0.0], np.float32)
    check.expect_close(a, a.copy(), et, 0, 0)
    with pytest.raises(CheckFailure):
        check.expect_close(a, a.copy(), et, 1, 3)
