"""The strided window views reduce_window, select_and_scatter and convolution read their
windows through (`windows.window_view`, `numerics.sliding_windows`, both made by
`numerics.strided_view`) against numpy's `sliding_window_view` sliced by the strides and the
window dilations: the same shape and elements, read-only, for contiguous arrays, views of
others (transposed, sliced, broadcast) and ml_dtypes' types."""
import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from numpy.lib.stride_tricks import sliding_window_view

from stablehlo_ref.interpreter.numerics import sliding_windows, strided_view
from stablehlo_ref.interpreter.windows import window_view

DTYPES = [np.float32, np.int8, np.bool_, np.complex128, ml_dtypes.bfloat16,
          ml_dtypes.float8_e5m2, ml_dtypes.int4]


def _reference(x, window, strides, dilations):
    eff = [(w - 1) * d + 1 if w > 0 else 0 for w, d in zip(window, dilations)]
    if any(e > n for e, n in zip(eff, x.shape)) or any(e == 0 for e in eff):
        return None
    bits = x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.num >= 256 else x
    v = sliding_window_view(bits, eff)
    v = v[tuple(slice(None, None, s) for s in strides) + tuple(slice(None, None, d) for d in dilations)]
    return v.view(x.dtype) if x.dtype.num >= 256 else v


def _layout(x, how):
    if how == "transposed":
        return x.T
    if how == "sliced":
        return x[(slice(None, None, -1),) * x.ndim]
    if how == "broadcast":
        return np.broadcast_to(x[(slice(0, 1),) * x.ndim], x.shape)
    return x


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_window_view_is_sliding_window_view(data):
    rank = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.lists(st.integers(1, 6), min_size=rank, max_size=rank)))
    window = tuple(data.draw(st.lists(st.integers(0, 4), min_size=rank, max_size=rank)))
    strides = tuple(data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    dil = tuple(data.draw(st.lists(st.integers(1, 3), min_size=rank, max_size=rank)))
    dt = data.draw(st.sampled_from(DTYPES))
    how = data.draw(st.sampled_from(["contiguous", "transposed", "sliced", "broadcast"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2 ** 32 - 1)))
    x = _layout(rng.integers(-7, 8, shape).astype(dt), how)
    got = window_view(x, window, strides, dil)
    want = _reference(x, window, strides, dil)
    if want is None:
        assert got is None
        return
    assert got.shape == want.shape and got.dtype == want.dtype
    assert not got.flags.writeable
    assert np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(want).tobytes()


@pytest.mark.parametrize("dt", DTYPES)
def test_sliding_windows_over_some_axes(dt):
    x = np.arange(2 * 5 * 6 * 3).reshape(2, 5, 6, 3).astype(dt)
    for arr in (x, x.transpose(0, 2, 1, 3)):
        got = sliding_windows(arr, (2, 3), (1, 2))
        bits = arr.view(np.dtype(f"u{arr.dtype.itemsize}")) if arr.dtype.num >= 256 else arr
        want = sliding_window_view(bits, (2, 3), axis=(1, 2))
        assert got.shape == want.shape
        assert np.ascontiguousarray(got).view(np.uint8).tobytes() == \
            np.ascontiguousarray(want).view(np.uint8).tobytes()


def test_strided_view_rank0():
    x = np.arange(6, dtype=np.float64)
    v = strided_view(x, (3, 2), (16, 8))
    assert v.tolist() == [[0, 1], [2, 3], [4, 5]] and v.base is not None
    assert window_view(np.float32(3) * np.ones(()), (), (), ()).shape == ()
