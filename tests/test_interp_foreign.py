"""arith / tensor / scf ops beside StableHLO (stablehlo_ref/interpreter/foreign.py)."""
import numpy as np
import pytest

from stablehlo_ref import parse, run
from stablehlo_ref.errors import InterpreterError


def test_scf_for_with_tensor_and_arith_ops():
    prog = """func.func @main(%arg0: tensor<4xf32>) -> (tensor<4xf32>, i32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %two = arith.constant 2.0 : f32
  %k0 = arith.constant 0 : i32
  %k3 = arith.constant 3 : i32
  %r:2 = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %arg0, %n = %k0) -> (tensor<4xf32>, i32) {
    %x = tensor.extract %acc[%i] : tensor<4xf32>
    %y = arith.mulf %x, %two : f32
    %z = tensor.insert %y into %acc[%i] : tensor<4xf32>
    %m = arith.addi %n, %k3 : i32
    scf.yield %z, %m : tensor<4xf32>, i32
  }
  return %r#0, %r#1 : tensor<4xf32>, i32
}"""
    x = np.array([1, 2, 3, 4], np.float32)
    out, n = run(parse(prog), x)
    np.testing.assert_array_equal(out, 2 * x)
    assert int(n) == 12


@pytest.mark.parametrize("op, a, b, want", [
    ("divsi", -7, 2, -3), ("remsi", -7, 2, -1), ("divsi", 7, -2, -3),
    ("divui", -8, 2, 2147483644), ("remui", -1, 10, 5), ("addi", 2147483647, 1, -2147483648),
    ("maxsi", -3, 2, 2), ("xori", 5, 3, 6),
])
def test_arith_integer_semantics(op, a, b, want):
    prog = f"""func.func @main() -> i32 {{
  %a = arith.constant {a} : i32
  %b = arith.constant {b} : i32
  %r = arith.{op} %a, %b : i32
  return %r : i32
}}"""
    (r,) = run(parse(prog))
    assert int(r) == want


def test_tensor_extract_out_of_bounds_is_an_error():
    prog = """func.func @main(%t: tensor<2xf32>) -> f32 {
  %c5 = arith.constant 5 : index
  %x = tensor.extract %t[%c5] : tensor<2xf32>
  return %x : f32
}"""
    with pytest.raises(InterpreterError, match="out of bounds"):
        run(parse(prog), np.zeros(2, np.float32))
