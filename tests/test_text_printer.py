"""The printer writes MLIR's canonical pretty form (what stablehlo-opt / jaxlib print)."""
import numpy as np

import pytest

from stablehlo_ref import parse, print_module
from stablehlo_ref.ir.types import ELEMENT_TYPES
from stablehlo_ref.ir.floats import format_float


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
    # (a nested region numbers on from the end of its parent region, as MLIR)
    assert "%2 = func.call @g(%arg1) : (tensor<i32>) -> tensor<i32>" in lines
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
    assert "%cst = stablehlo.constant dense<> : tensor<0x3xf32>" in lines
    assert "%c = stablehlo.constant dense<4> : tensor<1xi64>" in lines
    assert "%0 = stablehlo.custom_call @foo(%arg0) : (tensor<2xf32>) -> tensor<2xf32>" in lines
    assert "%1 = stablehlo.get_tuple_element %arg1[0] : (tuple<tensor<f32>>) -> tensor<f32>" in lines
    assert "%2 = stablehlo.dot %arg0, %arg0 : (tensor<2xf32>, tensor<2xf32>) -> tensor<f32>" in lines
    assert "%3 = stablehlo.after_all  : !stablehlo.token" in lines     # (sic: MLIR's spacing)


def test_unprintable_pretty_forms_fall_back_to_generic():
    text = """
func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "stablehlo.reduce_precision"(%a) {exponent_bits = 1 : i32, mantissa_bits = -1 : i32} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}"""
    printed = print_module(parse(text))
    assert '"stablehlo.reduce_precision"(%arg0)' in printed
    assert print_module(parse(printed)) == printed


def test_value_names_follow_mlir():
    text = """
func.func @f(%x: tensor<3xf32>, %n: tensor<i64>) -> (tensor<i64>, tensor<3xf32>, tensor<3xi32>) {
  %a = stablehlo.constant dense<1> : tensor<i64>
  %b = stablehlo.constant dense<1.0> : tensor<f32>
  %c = stablehlo.constant dense<2> : tensor<i64>
  %w:2 = stablehlo.while(%i = %a, %s = %x) : tensor<i64>, tensor<3xf32>
    cond {
    %k = stablehlo.constant dense<5> : tensor<i64>
    %p = stablehlo.compare LT, %i, %k : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %p : tensor<i1>
  } do {
    %k = stablehlo.constant dense<1> : tensor<i64>
    %j = stablehlo.add %i, %k : tensor<i64>
    stablehlo.return %j, %s : tensor<i64>, tensor<3xf32>
  }
  %v, %ix = chlo.top_k(%x, k = 3) : tensor<3xf32> -> (tensor<3xf32>, tensor<3xi32>)
  func.return %w#0, %v, %ix : tensor<i64>, tensor<3xf32>, tensor<3xi32>
}"""
    lines = [l.strip() for l in _body(text)]
    assert "%c = stablehlo.constant dense<1> : tensor<i64>" in lines
    assert "%cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>" in lines
    assert "%c_0 = stablehlo.constant dense<2> : tensor<i64>" in lines
    # block arguments of both regions are `iterArg`, one conflict counter for the region tree;
    # nested regions start from the parent's counters, so siblings reuse names and numbers
    assert "%0:2 = stablehlo.while(%iterArg = %c, %iterArg_1 = %arg0) : tensor<i64>, tensor<3xf32>" in lines
    assert "%c_2 = stablehlo.constant dense<5> : tensor<i64>" in lines
    assert "%c_2 = stablehlo.constant dense<1> : tensor<i64>" in lines
    assert "%1 = stablehlo.add %iterArg, %c_2 : tensor<i64>" in lines
    assert "%values, %indices = chlo.top_k(%arg0, k = 3) : tensor<3xf32> -> (tensor<3xf32>, tensor<3xi32>)" in lines
    assert "return %0#0, %values, %indices : tensor<i64>, tensor<3xf32>, tensor<3xi32>" in lines
    generic = print_module(parse(text), generic=True)
    assert "%c" not in generic and "%iterArg" not in generic     # generic form: numbers only


@pytest.mark.parametrize("value, et, text", [
    (3.140625, "bf16", "3.140630e+00"),           # ties round up on the exact digits
    (0.0999755859375, "f16", "9.997550e-02"),     # digits cut by APFloat's truncating division first
    (0.0009765625, "f32", "9.765625E-4"),        # (9.765620e-04 is another f32)
    (4.9406564584124654e-324, "f64", "4.940660e-324"),
    (1.0, "f32", "1.000000e+00"),
    (-0.0, "f32", "-0.000000e+00"),
    (0.1, "f64", "1.000000e-01"),
    (0.30000001192092896, "f32", "3.000000e-01"),
    (1.2345678, "f64", "1.2345678"),              # six digits do not read back: natural precision
    (float(np.float32(1.2345678)), "f32", "1.23456776"),
])
def test_floats_print_as_mlir(value, et, text):
    from stablehlo_ref.ir.types import ELEMENT_TYPES
    from stablehlo_ref.ir.floats import format_float
    assert format_float(value, ELEMENT_TYPES[et]) == text


def test_strings_escape_as_llvm():
    from stablehlo_ref.text.print_types import escape_string
    assert escape_string('x\ny\t"q\\ é \x7f') == '"x\\0Ay\\09\\22q\\\\ \\C3\\A9 \\7F"'
    m = parse('module attributes {a.b = "x\\0Ay\\09\\22q\\\\ \\C3\\A9 \\7F"} {\n}')
    assert m.op.attributes["a.b"].value == 'x\ny\t"q\\ é \x7f'


def test_defaults_are_left_out_and_equal_absent_ones():
    text = """
func.func @f(%a: tensor<f32>, %i: tensor<2x3xf32>, %j: tensor<1xi64>) -> (tensor<f32>, tensor<f32>, tensor<3xf32>) {
  %0 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<atol = 0.000000e+00, rtol = 0.000000e+00, ulps = 0, mode = #stablehlo.result_accuracy_mode<DEFAULT>>} : tensor<f32>
  %1 = stablehlo.exponential %a {result_accuracy = #stablehlo.result_accuracy<ulps = 2, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<f32>
  %2 = "stablehlo.gather"(%i, %j) <{dimension_numbers = #stablehlo.gather<offset_dims = [0], index_vector_dim = 0, collapsed_slice_dims = [0], start_index_map = [0]>, slice_sizes = array<i64: 1, 3>}> : (tensor<2x3xf32>, tensor<1xi64>) -> tensor<3xf32>
  func.return %0, %1, %2 : tensor<f32>, tensor<f32>, tensor<3xf32>
}"""
    m = parse(text)
    lines = [l.strip() for l in print_module(m).splitlines()]
    assert "%0 = stablehlo.exponential %arg0 : tensor<f32>" in lines
    assert ("%1 = stablehlo.exponential %arg0 {result_accuracy = #stablehlo.result_accuracy<ulps = 2, "
            "mode = #stablehlo.result_accuracy_mode<TOLERANCE>>} : tensor<f32>") in lines
    assert any("#stablehlo.gather<offset_dims = [0], collapsed_slice_dims = [0], start_index_map = [0]>" in l
               for l in lines)
    assert parse(print_module(m)) == m


def test_affine_maps_print_as_aliases_and_arrays_elide_i64():
    text = """module attributes {x.m = affine_map<(d0) -> (d0)>, x.n = [affine_map<(d0) -> (d0)>, affine_map<(d0, d1) -> (d1)>], x.l = [[0, 1], [2.5]]} {
}"""
    out = print_module(parse(text))
    assert out.startswith("#map = affine_map<(d0) -> (d0)>\n#map1 = affine_map<(d0, d1) -> (d1)>\n")
    assert "x.l = [[0, 1], [2.500000e+00]], x.m = #map, x.n = [#map, #map1]" in out
    assert parse(out) == parse(text)


def test_dense_lists_up_to_100_elements():
    big = ", ".join(str(i) for i in range(100))
    out = print_module(parse(f"""func.func @f() -> (tensor<100xi32>, tensor<101xi32>) {{
  %0 = stablehlo.constant dense<[{big}]> : tensor<100xi32>
  %1 = stablehlo.iota dim = 0 : tensor<101xi32>
  %2 = stablehlo.constant dense<[{big}, 100]> : tensor<101xi32>
  func.return %0, %2 : tensor<100xi32>, tensor<101xi32>
}}"""))
    assert f"dense<[{big}]> : tensor<100xi32>" in out
    assert 'dense<"0x00000000010000000200' in out


def test_scf_for_and_tensor_ops_round_trip_in_mlir_form():
    text = """func.func @g(%arg0: tensor<2xf32>, %n: i32, %m: i32) -> tensor<2xf32> {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  %r = scf.for %i = %c0 to %c2 step %c2 iter_args(%acc = %arg0) -> tensor<2xf32> {
    %x = tensor.extract %acc[%i] : tensor<2xf32>
    %y = tensor.insert %x into %acc[%c0] : tensor<2xf32>
    scf.yield %y : tensor<2xf32>
  }
  scf.for unsigned %j = %n to %m step %n : i32 {
    %z = tensor.extract %arg0[%c0] : tensor<2xf32>
  } {foo.bar = 1 : i32}
  return %r : tensor<2xf32>
}"""
    m = parse(text)
    out = print_module(m)
    lines = [l.strip() for l in out.splitlines()]
    assert "%0 = scf.for %arg3 = %c0 to %c2 step %c2 iter_args(%arg4 = %arg0) -> (tensor<2xf32>) {" in lines
    assert "%extracted = tensor.extract %arg4[%arg3] : tensor<2xf32>" in lines
    assert "%inserted = tensor.insert %extracted into %arg4[%c0] : tensor<2xf32>" in lines
    assert "scf.yield %inserted : tensor<2xf32>" in lines
    assert "scf.for unsigned %arg3 = %arg1 to %arg2 step %arg1  : i32 {" in lines   # (sic)
    assert "} {foo.bar = 1 : i32}" in lines
    assert lines.count("scf.yield") == 0          # the implicit terminator is not printed
    assert parse(out) == m


def test_debuginfo_prints_as_mlir_print_debuginfo():
    text = """module {
  func.func @f(%a: tensor<f32> loc("x"), %b: tensor<f32>) -> tensor<f32> {
    %0 = stablehlo.add %a, %b : tensor<f32> loc("f.py":3:4)
    %1 = stablehlo.add %0, %b : tensor<f32> loc("f.py":3:4)
    %2 = stablehlo.add %1, %b : tensor<f32> loc(fused["f.py":5:4, "g"])
    %3 = stablehlo.add %2, %b : tensor<f32> loc("name"("f.py":6:1))
    return %3 : tensor<f32>
  }
}"""
    # what jaxlib's MLIR prints for this text parsed from a string named "-"
    want = """#loc2 = loc("x")
#loc3 = loc("-":2:42)
module {
  func.func @f(%arg0: tensor<f32> loc("x"), %arg1: tensor<f32> loc("-":2:42)) -> tensor<f32> {
    %0 = stablehlo.add %arg0, %arg1 : tensor<f32> loc(#loc4)
    %1 = stablehlo.add %0, %arg1 : tensor<f32> loc(#loc4)
    %2 = stablehlo.add %1, %arg1 : tensor<f32> loc(#loc9)
    %3 = stablehlo.add %2, %arg1 : tensor<f32> loc(#loc10)
    return %3 : tensor<f32> loc(#loc8)
  } loc(#loc1)
} loc(#loc)
#loc = loc("-":1:1)
#loc1 = loc("-":2:3)
#loc4 = loc("f.py":3:4)
#loc5 = loc("f.py":5:4)
#loc6 = loc("g")
#loc7 = loc("f.py":6:1)
#loc8 = loc("-":7:5)
#loc9 = loc(fused[#loc5, #loc6])
#loc10 = loc("name"(#loc7))
"""
    m = parse(text, "-")
    out = print_module(m, debuginfo=True)
    assert out == want
    again = parse(out, "-")
    assert again == m
    assert print_module(again, debuginfo=True).count("#loc9 = loc(fused[#loc5, #loc6])") == 1
