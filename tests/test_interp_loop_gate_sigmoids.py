"""Sigmoids of slices of one array in a compiled loop body, as an LSTM or GRU cell computes its
gates from one matmul split in parts (`jax_idioms._sigmoids_of_slices`): the first computes
the sigmoid of the whole array and each takes its slice. The bits of the general path (every
op through its registered kernel) for any values, whether the gates tile the array or leave
parts of it to another function (tanh) or to nothing, with the array also carried to the next
iteration; and the sharing is made only where the whole array is not much larger than the
slices."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from stablehlo_ref.interpreter import jax_idioms

from loop_helpers import record_calls, run_both, values


def _sigmoid(name, lo, hi, t, rows, w):
    s = f"tensor<{rows}x{hi - lo}x{t}>"
    return (f"    %{name}_x = stablehlo.slice %z [0:{rows}, {lo}:{hi}] : (tensor<{rows}x{w}x{t}>) -> {s}\n"
            f"    %{name}_n = stablehlo.negate %{name}_x : {s}\n"
            f"    %{name}_e = stablehlo.exponential %{name}_n : {s}\n"
            f"    %{name}_c1 = stablehlo.constant dense<1.0> : tensor<{t}>\n"
            f"    %{name}_o1 = stablehlo.broadcast_in_dim %{name}_c1, dims = [] : (tensor<{t}>) -> {s}\n"
            f"    %{name}_d = stablehlo.add %{name}_o1, %{name}_e : {s}\n"
            f"    %{name}_c2 = stablehlo.constant dense<1.0> : tensor<{t}>\n"
            f"    %{name}_o2 = stablehlo.broadcast_in_dim %{name}_c2, dims = [] : (tensor<{t}>) -> {s}\n"
            f"    %{name} = stablehlo.divide %{name}_o2, %{name}_d : {s}\n")


def _cell(t, rows, k, n, carry_z=False, gap=0):
    """An LSTM-like cell in a loop: z (rows x (4k + gap)) carried, gates i, f, o the
    sigmoids of three k-wide slices of it, g the tanh of the fourth, `gap` more columns that
    nothing reads; z's next value is z plus the new h (padded), or with `carry_z` z itself
    (then the array the gates are cut from is also a result of the body)."""
    w = 4 * k + gap
    zt, kt = f"tensor<{rows}x{w}x{t}>", f"tensor<{rows}x{k}x{t}>"
    gates = "".join(_sigmoid(nm, lo, lo + k, t, rows, w) for nm, lo in (("i", 0), ("f", k), ("o", 3 * k)))
    return f"""func.func @main(%z0: {zt}, %c0: {kt}) -> ({zt}, {kt}) {{
  %n0 = stablehlo.constant dense<0> : tensor<i32>
  %r:3 = stablehlo.while(%it = %n0, %z = %z0, %c = %c0) : tensor<i32>, {zt}, {kt}
   cond {{
    %n = stablehlo.constant dense<{n}> : tensor<i32>
    %lt = stablehlo.compare LT, %it, %n, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }} do {{
    %one = stablehlo.constant dense<1> : tensor<i32>
    %it2 = stablehlo.add %it, %one : tensor<i32>
{gates}    %g_x = stablehlo.slice %z [0:{rows}, {2 * k}:{3 * k}] : ({zt}) -> {kt}
    %g = stablehlo.tanh %g_x : {kt}
    %fc = stablehlo.multiply %f, %c : {kt}
    %ig = stablehlo.multiply %i, %g : {kt}
    %c2 = stablehlo.add %fc, %ig : {kt}
    %tc = stablehlo.tanh %c2 : {kt}
    %h = stablehlo.multiply %o, %tc : {kt}
    %cz = stablehlo.constant dense<0.0> : tensor<{t}>
    %hp = stablehlo.pad %h, %cz, low = [0, 0], high = [0, {w - k}], interior = [0, 0] : ({kt}, tensor<{t}>) -> {zt}
    %zs = stablehlo.add %z, %hp : {zt}
    stablehlo.return %it2, {"%z" if carry_z else "%zs"}, %c2 : tensor<i32>, {zt}, {kt}
  }}
  return %r#1, %r#2 : {zt}, {kt}
}}"""


@pytest.mark.parametrize("t", ["f32", "f64"])
@pytest.mark.parametrize("carry_z", [False, True])
@pytest.mark.parametrize("gap", [0, 3])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.sampled_from([1, 5, 9]))
def test_shared_gate_sigmoids_match_the_general_path(t, carry_z, gap, data, n):
    rows, k = 2, 3
    z = values(t, (rows, 4 * k + gap), data.draw)
    c = values(t, (rows, k), data.draw)
    run_both(_cell(t, rows, k, n, carry_z, gap), z, c)


def _shared(monkeypatch):
    return record_calls(monkeypatch, jax_idioms, "_shared_sigmoid")


@pytest.mark.parametrize("gap,shared", [(0, True), (3, True), (2000, False)])
def test_shared_only_where_the_array_is_not_much_larger(monkeypatch, gap, shared):
    made = _shared(monkeypatch)
    rows, k = 2, 8
    z = np.linspace(-3, 3, rows * (4 * k + gap), dtype=np.float32).reshape(rows, -1)
    c = np.linspace(-1, 1, rows * k, dtype=np.float32).reshape(rows, k)
    run_both(_cell("f32", rows, k, 9, False, gap), z, c)
    assert bool(made) == shared
    if shared:
        assert sum(1 for a in made if a[0]) >= 1 and len(made) % 3 == 0   # first of each group of 3


def test_f16_gates_are_not_fused(monkeypatch):
    made = _shared(monkeypatch)
    z = np.linspace(-3, 3, 24, dtype=np.float16).reshape(2, 12)
    c = np.linspace(-1, 1, 6, dtype=np.float16).reshape(2, 3)
    run_both(_cell("f16", 2, 3, 9), z, c)
    assert not made
