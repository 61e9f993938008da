"""Transposed convolutions (input dilation, unit window strides) through `conv._lhs_dilated`
against the window (im2col) form over the dilated input."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref.interpreter import conv
from stablehlo_ref.ir.types import element_type


def _dims(ns, layout):
    if layout == "channels_last":          # [b, 0, 1, f] x [0, 1, i, o] -> [b, 0, 1, f]
        sp = list(range(1, 1 + ns))
        return {"input_batch_dimension": 0, "input_feature_dimension": ns + 1,
                "input_spatial_dimensions": sp, "kernel_input_feature_dimension": ns,
                "kernel_output_feature_dimension": ns + 1,
                "kernel_spatial_dimensions": list(range(ns)), "output_batch_dimension": 0,
                "output_feature_dimension": ns + 1, "output_spatial_dimensions": sp}
    sp = list(range(2, 2 + ns))                  # [b, f, 0, 1] x [o, i, 0, 1] -> [b, f, 0, 1]
    return {"input_batch_dimension": 0, "input_feature_dimension": 1,
            "input_spatial_dimensions": sp, "kernel_input_feature_dimension": 1,
            "kernel_output_feature_dimension": 0, "kernel_spatial_dimensions": sp,
            "output_batch_dimension": 0, "output_feature_dimension": 1,
            "output_spatial_dimensions": sp}


def _both(x, w, **kw):
    new = conv.convolve(x, w, **kw)
    keep = conv._lhs_dilated
    conv._lhs_dilated = lambda *a: None
    try:
        old = conv.convolve(x, w, **kw)
    finally:
        conv._lhs_dilated = keep
    return new, old


@settings(max_examples=80, deadline=None)
@given(st.integers(0, 2 ** 32 - 1), st.integers(1, 2), st.sampled_from(["channels_last", "nchw"]),
       st.sampled_from(["f32", "i32", "f64"]), st.data())
def test_transposed_convolution_is_the_window_form(seed, ns, layout, t, data):
    rng = np.random.default_rng(seed)
    n, c, o = (int(v) for v in rng.integers(1, 4, 3))
    S = [int(v) for v in rng.integers(1, 6, ns)]
    K = [int(v) for v in rng.integers(1, 4, ns)]
    dil = [data.draw(st.integers(1, 3)) for _ in range(ns)]
    rdil = [data.draw(st.integers(1, 2)) for _ in range(ns)]
    pad = [(data.draw(st.integers(-2, 3)), data.draw(st.integers(-2, 3))) for _ in range(ns)]
    rev = [data.draw(st.booleans()) for _ in range(ns)]
    dt = {"f32": np.float32, "i32": np.int32, "f64": np.float64}[t]
    if layout == "channels_last":
        xs, ws = [n] + S + [c], K + [c, o]
    else:
        xs, ws = [n, c] + S, [o, c] + K
    if t == "i32":
        x, w = rng.integers(-9, 9, xs).astype(dt), rng.integers(-9, 9, ws).astype(dt)
    else:
        x, w = rng.standard_normal(xs).astype(dt), rng.standard_normal(ws).astype(dt)
    kw = dict(strides=[1] * ns, padding=pad, lhs_dilation=dil, rhs_dilation=rdil, reversal=rev,
              dims=_dims(ns, layout), feature_group_count=1, batch_group_count=1,
              et=element_type(t))
    try:
        new, old = _both(x, w, **kw)
    except Exception as e:                  # an empty result: both forms must refuse alike
        with pytest.raises(type(e)):
            conv._lhs_dilated, keep = (lambda *a: None), conv._lhs_dilated
            try:
                conv.convolve(x, w, **kw)
            finally:
                conv._lhs_dilated = keep
        return
    assert new.shape == old.shape and new.dtype == old.dtype
    if t == "i32":
        assert new.tobytes() == old.tobytes()
    else:
        # the same sums in another order: f64 accumulations, f32 rounded once after
        np.testing.assert_allclose(new, old, rtol=1e-6 if t == "f32" else 1e-13, atol=1e-12)


def test_jax_conv_transpose_shape_takes_the_scatter_form(monkeypatch):
    calls = []
    keep = conv._lhs_dilated
    monkeypatch.setattr(conv, "_lhs_dilated", lambda *a: calls.append(1) or keep(*a))
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 5, 5, 3)).astype(np.float32)
    w = rng.standard_normal((3, 3, 3, 4)).astype(np.float32)
    kw = dict(strides=[1, 1], padding=[(2, 1), (2, 1)], lhs_dilation=[2, 2], rhs_dilation=[1, 1],
              reversal=[False, False], dims=_dims(2, "channels_last"), feature_group_count=1,
              batch_group_count=1, et=element_type("f32"))
    out = conv.convolve(x, w, **kw)
    assert calls and out.shape == (2, 10, 10, 4)
    # against a direct loop over the definition
    xd = np.zeros((2, 9, 9, 3))
    xd[:, ::2, ::2] = x
    xp = np.pad(xd, [(0, 0), (2, 1), (2, 1), (0, 0)])
    want = np.zeros((2, 10, 10, 4))
    for i in range(10):
        for j in range(10):
            want[:, i, j] = np.einsum("nabc,abco->no", xp[:, i:i + 3, j:j + 3], w.astype(np.float64))
    np.testing.assert_allclose(out, want.astype(np.float32), rtol=1e-6, atol=1e-6)
