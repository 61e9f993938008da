"""The printer writes MLIR's canonical pretty form (what stablehlo-opt / jaxlib print)."""
import numpy as np

from stablehlo_ref import parse, print_module
from stablehlo_ref.ir.types import ELEMENT_TYPES
from stablehlo_ref.text.printer import format_float


def test_floats_as_mlir_writes_them():
    f32, f64 = ELEMENT_TYPES["f32"], ELEMENT_TYPES["f64"]
    assert format_float(1.0, f32) == "1.000000e+00"
    assert format_float(1.001e-05, f32) == "1.001000e-05"
    assert format_float(float(np.float32(3.33855581)), f32) == "3.33855581"
    assert format_float(0.51025006358717651, f64) == "0.51025006358717651"
    assert format_float(-1.300025009986248e-08, f64) == "-1.300025009986248E-8"
    assert format_float(float(np.float32(123456789.0)), f32) == "0x4CEB79A3"
    for v in (0.1, 1 / 3, 2.5e-300, -7.0):
        assert float(format_float(v, f64)) == v


def _body(text):
    return print_module(parse(text)).splitlines()


def test_call_keeps_its_prefix_inside_non_func_regions():
    text = """
func.func private @g(%x: tensor<i32>) -> tensor<i32> {
  func.return %x : tensor<i32>
}
func.func @f(%p: tensor<i1>, %x: tensor<i32>) -> tensor<i32> {
  %0 = "stablehlo.if"(%p) ({
    %1 = func.call @g(%x) : (tensor<i32>) -> tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }, {
    stablehlo.return %x : tensor<i32>
  }) : (tensor<i1>) -> tensor<i32>
  %2 = func.call @g(%0) : (tensor<i32>) -> tensor<i32>
  func.return %2 : tensor<i32>
}"""
    lines = [l.strip() for l in _body(text)]
    assert "%1 = func.call @g(%arg1) : (tensor<i32>) -> tensor<i32>" in lines
    assert "%1 = call @g(%0) : (tensor<i32>) -> tensor<i32>" in lines
    assert "return %1 : tensor<i32>" in lines


def test_dense_forms_and_spacing():
    text = """
func.func @f(%a: tensor<2xf32>, %t: tuple<tensor<f32>>) -> tensor<0x3xf32> {
  %0 = stablehlo.constant dense<[]> : tensor<0x3xf32>
  %1 = stablehlo.constant dense<[4]> : tensor<1xi64>
  %2 = stablehlo.custom_call @foo(%a) : (tensor<2xf32>) -> tensor<2xf32>
  %3 = stablehlo.get_tuple_element %t[0] : (tuple<tensor<f32>>) -> tensor<f32>
  %4 = stablehlo.dot %a, %a : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>
  %5 = stablehlo.after_all : !stablehlo.token
  func.return %0 : tensor<0x3xf32>
}"""
    lines = [l.strip() for l in _body(text)]
    assert "%0 = stablehlo.constant dense<> : tensor<0x3xf32>" in lines
    assert "%1 = stablehlo.constant dense<4> : tensor<1xi64>" in lines
    assert "%2 = stablehlo.custom_call @foo(%arg0) : (tensor<2xf32>) -> tensor<2xf32>" in lines
    assert "%3 = stablehlo.get_tuple_element %arg1[0] : (tuple<tensor<f32>>) -> tensor<f32>" in lines
    assert "%4 = stablehlo.dot %arg0, %arg0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>" in lines
    assert "%5 = stablehlo.after_all  : !stablehlo.token" in lines     # (sic: MLIR's spacing)


def test_unprintable_pretty_forms_fall_back_to_generic():
    text = """
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 1 : i32, mantissa_bits = -1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}"""
    printed = print_module(parse(text))
    assert '"stablehlo.reduce_precision"(%arg0)' in printed
    assert print_module(parse(printed)) == printed
