"""jax.nn.sigmoid's lowering in a compiled loop body, `1 / (1 + exp(-x))` of f32/f64 arrays,
run as one step (`jax_idioms._fused_sigmoid`): the bits of the general path (every op through
its registered kernel) for any values (NaN payloads, infinities, subnormals), either operand
order of the add, and where the pattern's inner values are also read elsewhere."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.interpreter import jax_idioms

from loop_helpers import record_calls, run_both, values

LOOP = """func.func @main(%x0: tensor<3x4x{t}>, %h0: tensor<3x4x{t}>) -> (tensor<3x4x{t}>, tensor<3x4x{t}>) {{
  %c0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%i = %c0, %x = %x0, %h = %h0) : tensor<i32>, tensor<3x4x{t}>, tensor<3x4x{t}>
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %i, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %i2 = stablehlo.add %i, %one : tensor<i32>
    %ng = stablehlo.negate %x : tensor<3x4x{t}>
    %ex = stablehlo.exponential %ng : tensor<3x4x{t}>
    %c1 = stablehlo.constant dense<1.0> : tensor<{t}>
    %o1 = stablehlo.broadcast_in_dim %c1, dims = [] : (tensor<{t}>) -> tensor<3x4x{t}>
    %den = stablehlo.add {add} : tensor<3x4x{t}>
    %c2 = stablehlo.constant dense<1.0> : tensor<{t}>
    %o2 = stablehlo.broadcast_in_dim %c2, dims = [] : (tensor<{t}>) -> tensor<3x4x{t}>
    %s = stablehlo.divide %o2, %den : tensor<3x4x{t}>
    %h2 = stablehlo.{combine} %h, %s : tensor<3x4x{t}>
    %x2 = stablehlo.subtract {next} : tensor<3x4x{t}>
    stablehlo.return %i2, %x2, %h2 : tensor<i32>, tensor<3x4x{t}>, tensor<3x4x{t}>
  }}
  return %r#1, %r#2 : tensor<3x4x{t}>, tensor<3x4x{t}>
}}"""


def _loop(t, n, swap=False, leak=False):
    return LOOP.format(t=t, n=n, add="%ex, %o1" if swap else "%o1, %ex",
                       combine="add", next="%x, %ng" if leak else "%x, %s")


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("swap", [False, True])
@pytest.mark.parametrize("leak", [False, True])
@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.sampled_from([1, 4, 9]))
def test_fused_sigmoid_matches_the_general_path(t, swap, leak, data, n):
    x = values(t, (3, 4), data.draw)
    h = values(t, (3, 4), data.draw)
    run_both(_loop(t, n, swap, leak), x, h)


@pytest.mark.parametrize("t,fused", [("f32", True), ("f64", True), ("f16", False)])
def test_sigmoid_is_fused_for_f32_and_f64(monkeypatch, t, fused):
    made = record_calls(monkeypatch, jax_idioms, "_fused_sigmoid")
    dt = {"f16": np.float16, "f32": np.float32, "f64": np.float64}[t]
    x = (np.arange(12, dtype=dt).reshape(3, 4) - 6) / 3
    run_both(_loop(t, 9), x, x)
    assert bool(made) == fused
