"""Uniform quantization: quantize/dequantize arithmetic (per-tensor and per-axis), and ops on
quantized tensors evaluated as dequantize -> float op -> quantize."""
import numpy as np
from hypothesis import given, settings, strategies as st

import stablehlo_ref
from stablehlo_ref.interpreter.quantized import dequantize, quantize
from stablehlo_ref.ir.types import QuantizedType, element_type

I8, F32 = element_type("i8"), element_type("f32")


def run(src, *args):
    return stablehlo_ref.run(stablehlo_ref.parse(src), *args)


def test_per_tensor_quantize_rounds_half_to_even_and_clamps():
    qt = QuantizedType(I8, F32, (0.5,), (-10,))
    x = np.array([0.25, 0.75, 1.0, 1000.0, -1000.0], np.float32)
    # x/0.5 - 10: -9.5 -> -10 (even), -8.5 -> -8, -8, clamp 127, clamp -128
    assert quantize(x, qt).tolist() == [-10, -8, -8, 127, -128]


def test_per_axis_quantize_and_dequantize():
    qt = QuantizedType(I8, F32, (0.1, 0.5), (-30, -20), 0)
    q = quantize(np.array([4.0, 15.0], np.float32), qt)
    assert q.tolist() == [10, 10]
    np.testing.assert_allclose(dequantize(q, qt), [4.0, 15.0], rtol=1e-6)


def test_storage_range_limits_clamp():
    qt = QuantizedType(I8, F32, (1.0,), (0,), None, -5, 5)
    assert quantize(np.array([-9.0, 9.0], np.float32), qt).tolist() == [-5, 5]


@settings(max_examples=50, deadline=None)
@given(st.lists(st.integers(-128, 127), min_size=1, max_size=8),
       st.sampled_from([0.5, 0.25, 0.1, 2.0]), st.integers(-20, 20))
def test_quantize_inverts_dequantize(vals, scale, zp):
    qt = QuantizedType(I8, F32, (scale,), (zp,))
    q = np.array(vals, np.int8)
    assert quantize(dequantize(q, qt), qt).tolist() == vals


def test_quantized_add_runs_in_float_and_requantizes():
    src = """
func.func @main(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2xi8> {
  %qa = stablehlo.uniform_quantize %a : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.1:-30>>
  %qb = stablehlo.uniform_quantize %b : (tensor<2xf32>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %s = stablehlo.add %qa, %qb : (tensor<2x!quant.uniform<i8:f32, 0.1:-30>>, tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2x!quant.uniform<i8:f32, 0.5:-20>>
  %r = stablehlo.bitcast_convert %s : (tensor<2x!quant.uniform<i8:f32, 0.5:-20>>) -> tensor<2xi8>
  func.return %r : tensor<2xi8>
}
"""
    (r,) = run(src, np.array([1.0, 2.0], np.float32), np.array([3.0, 4.0], np.float32))
    assert r.tolist() == [-12, -8]


def test_movement_ops_keep_storage_and_compare_dequantizes():
    qt = "!quant.uniform<i8:f32, 0.5:1>"
    src = f"""
func.func @main(%a: tensor<4xf32>) -> (tensor<2x2xf32>, tensor<4xi1>) {{
  %q = stablehlo.uniform_quantize %a : (tensor<4xf32>) -> tensor<4x{qt}>
  %t = stablehlo.reshape %q : (tensor<4x{qt}>) -> tensor<2x2x{qt}>
  %d = stablehlo.uniform_dequantize %t : (tensor<2x2x{qt}>) -> tensor<2x2xf32>
  %c = stablehlo.compare GT, %q, %q : (tensor<4x{qt}>, tensor<4x{qt}>) -> tensor<4xi1>
  func.return %d, %c : tensor<2x2xf32>, tensor<4xi1>
}}
"""
    d, c = run(src, np.array([1.0, 2.0, 3.0, -1.0], np.float32))
    assert d.tolist() == [[1.0, 2.0], [3.0, -1.0]]
    assert not c.any()
