"""Custom calls JAX writes into exported programs (stablehlo_ref/interpreter/jax_calls.py)."""
import numpy as np
import pytest

from stablehlo_ref import parse, run
from stablehlo_ref.errors import InterpreterError

_PROG = """
func.func public @main(%arg0: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %c = stablehlo.constant dense<2> : tensor<i32>
  %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
  %1 = stablehlo.compare GE, %0, %c, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  stablehlo.custom_call @shape_assertion(%1, %0) {api_version = 2 : i32, error_message = "Expected value >= 2 for dimension variable 'b'; got 'b' = {0}.", has_side_effect = true} : (tensor<i1>, tensor<i32>) -> ()
  %2 = stablehlo.add %arg0, %arg0 : tensor<?x4xf32>
  return %2 : tensor<?x4xf32>
}
"""


def test_shape_assertion_passes_when_true():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    (out,) = run(parse(_PROG), x)
    np.testing.assert_array_equal(out, x + x)


def test_shape_assertion_fails_with_jax_message():
    with pytest.raises(InterpreterError, match=r"shape assertion failed: Expected value >= 2 for dimension variable 'b'; got 'b' = 1\."):
        run(parse(_PROG), np.zeros((1, 4), np.float32))
