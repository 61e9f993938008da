"""Dynamic-shape ops evaluated through their static counterparts."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.errors import StableHLOError


def run(src, *args):
    return stablehlo_ref.run(stablehlo_ref.parse(src), *args)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 1))
def test_dynamic_iota_matches_static_iota(a, b, dim):
    src = f"""
func.func @main(%s: tensor<2xi64>) -> tensor<?x?xi32> {{
  %r = stablehlo.dynamic_iota %s, dim = {dim} : (tensor<2xi64>) -> tensor<?x?xi32>
  return %r : tensor<?x?xi32>
}}
"""
    (r,) = run(src, np.array([a, b]))
    want = np.indices((a, b))[dim]
    assert r.tolist() == want.tolist()


def test_dynamic_reshape_broadcast_slice_and_pad():
    src = """
func.func @main(%x: tensor<6xi32>) -> (tensor<2x3xi32>, tensor<2x2x3xi32>, tensor<2xi32>, tensor<8xi32>) {
  %s = stablehlo.constant dense<[2, 3]> : tensor<2xi64>
  %r = stablehlo.dynamic_reshape %x, %s : (tensor<6xi32>, tensor<2xi64>) -> tensor<2x3xi32>
  %bs = stablehlo.constant dense<[2, 2, 3]> : tensor<3xi64>
  %b = stablehlo.dynamic_broadcast_in_dim %r, %bs, dims = [1, 2] : (tensor<2x3xi32>, tensor<3xi64>) -> tensor<2x2x3xi32>
  %st = stablehlo.constant dense<[1]> : tensor<1xi64>
  %li = stablehlo.constant dense<[5]> : tensor<1xi64>
  %sd = stablehlo.constant dense<[3]> : tensor<1xi64>
  %sl = stablehlo.real_dynamic_slice %x, %st, %li, %sd : (tensor<6xi32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<2xi32>
  %pv = stablehlo.constant dense<0> : tensor<i32>
  %lo = stablehlo.constant dense<[1]> : tensor<1xi64>
  %hi = stablehlo.constant dense<[-1]> : tensor<1xi64>
  %in = stablehlo.constant dense<[0]> : tensor<1xi64>
  %p = stablehlo.dynamic_pad %x, %pv, %lo, %hi, %in : (tensor<6xi32>, tensor<i32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<6xi32>
  %p2 = stablehlo.concatenate %p, %sl, dim = 0 : (tensor<6xi32>, tensor<2xi32>) -> tensor<8xi32>
  return %r, %b, %sl, %p2 : tensor<2x3xi32>, tensor<2x2x3xi32>, tensor<2xi32>, tensor<8xi32>
}
"""
    x = np.arange(1, 7, dtype=np.int32)
    r, b, sl, p = run(src, x)
    assert r.tolist() == [[1, 2, 3], [4, 5, 6]]
    assert b.tolist() == [r.tolist(), r.tolist()]
    assert sl.tolist() == [2, 5]
    assert p.tolist() == [0, 1, 2, 3, 4, 5, 2, 5]


def test_dynamic_reshape_with_a_wrong_element_count_is_an_error():
    src = """
func.func @main(%x: tensor<6xi32>) -> tensor<?xi32> {
  %s = stablehlo.constant dense<[4]> : tensor<1xi64>
  %r = stablehlo.dynamic_reshape %x, %s : (tensor<6xi32>, tensor<1xi64>) -> tensor<?xi32>
  return %r : tensor<?xi32>
}
"""
    with pytest.raises(StableHLOError, match="reshape"):
        run(src, np.zeros(6, np.int32))


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 4), st.integers(1, 4), st.integers(-1, 2), st.integers(0, 2), st.integers(0, 2))
def test_static_ops_with_open_dims_take_sizes_from_operands(b, n, lo, hi, interior):
    """Shape-polymorphic programs (jax.export) keep `?` in static ops' result types: pad,
    broadcast_in_dim, reshape and bitcast_convert size their results from the operands."""
    src = f"""
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<2x?x?xf32>, tensor<?xf32>, tensor<?x?x2xi16>) {{
  %z = stablehlo.constant dense<-1.0> : tensor<f32>
  %p = stablehlo.pad %x, %z, low = [0, {lo}], high = [1, {hi}], interior = [0, {interior}] : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
  %b = stablehlo.broadcast_in_dim %x, dims = [1, 2] : (tensor<?x?xf32>) -> tensor<2x?x?xf32>
  %r = stablehlo.reshape %x : (tensor<?x?xf32>) -> tensor<?xf32>
  %c = stablehlo.bitcast_convert %x : (tensor<?x?xf32>) -> tensor<?x?x2xi16>
  return %p, %b, %r, %c : tensor<?x?xf32>, tensor<2x?x?xf32>, tensor<?xf32>, tensor<?x?x2xi16>
}}
"""
    x = np.arange(b * n, dtype=np.float32).reshape(b, n) + 1
    p, bc, r, c = run(src, x)
    grid = np.full((b + 1, n + (n - 1) * interior), -1.0, np.float32)
    grid[:b, ::interior + 1] = x
    grid = np.concatenate([np.full((b + 1, max(lo, 0)), -1.0, np.float32), grid[:, max(-lo, 0):],
                           np.full((b + 1, hi), -1.0, np.float32)], axis=1)
    assert grid.shape == (b + 1, n + (n - 1) * interior + lo + hi)
    assert p.tolist() == grid.tolist()
    assert bc.tolist() == np.broadcast_to(x, (2, b, n)).tolist()
    assert r.tolist() == x.reshape(-1).tolist()
    assert c.tolist() == x.view(np.int16).reshape(b, n, 2).tolist()
