"""JAX's custom calls for shape polymorphism (`@stablehlo.dynamic_*`), `@ApproxTopK` and host
callbacks (stablehlo_ref/interpreter/jax_dynamic.py): programs as jax writes them, checked
against numpy here and against jax.jit in the interop tests below."""
import os

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from stablehlo_ref import parse, run
from stablehlo_ref.errors import InterpreterError, NotImplementedOpError

_CUMSUM = """
module {
  func.func @reducer(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }
  func.func @main(%x: tensor<?x?xf32>, %w: tensor<2xi32>, %pad: tensor<2x2xi32>) -> tensor<?x?xf32> {
    %z = stablehlo.constant dense<0.0> : tensor<f32>
    %one = stablehlo.constant dense<1> : tensor<2xi32>
    %r = stablehlo.custom_call @stablehlo.dynamic_reduce_window(%x, %z, %w, %one, %one, %one, %pad) {api_version = 2 : i32, called_computations = [@reducer]} : (tensor<?x?xf32>, tensor<f32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2xi32>, tensor<2x2xi32>) -> tensor<?x?xf32>
    return %r : tensor<?x?xf32>
  }
}
"""


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 4), st.integers(1, 6))
def test_dynamic_reduce_window_is_a_cumulative_sum(b, n):
    """jnp.cumsum under shape polymorphism: a window of n with n-1 low padding."""
    x = np.arange(b * n, dtype=np.float32).reshape(b, n)
    (r,) = run(parse(_CUMSUM), x, np.array([1, n], np.int32), np.array([[0, 0], [n - 1, 0]], np.int32))
    np.testing.assert_array_equal(r, np.cumsum(x, axis=1))


def test_dynamic_top_k_and_rng_bit_generator():
    src = """
func.func @main(%x: tensor<?x?xf32>, %k: tensor<i32>, %s: tensor<2xui64>, %shape: tensor<2xi32>) -> (tensor<?x?xf32>, tensor<?x?xi32>, tensor<2xui64>, tensor<?x?xui32>) {
  %v:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x, %k) : (tensor<?x?xf32>, tensor<i32>) -> (tensor<?x?xf32>, tensor<?x?xi32>)
  %r:2 = stablehlo.custom_call @stablehlo.dynamic_rng_bit_generator(%s, %shape) {rng_algorithm = #stablehlo<rng_algorithm THREE_FRY>} : (tensor<2xui64>, tensor<2xi32>) -> (tensor<2xui64>, tensor<?x?xui32>)
  return %v#0, %v#1, %r#0, %r#1 : tensor<?x?xf32>, tensor<?x?xi32>, tensor<2xui64>, tensor<?x?xui32>
}
"""
    static = """
func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<3x5xui32>) {
  %r:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<3x5xui32>)
  return %r#0, %r#1 : tensor<2xui64>, tensor<3x5xui32>
}
"""
    x = np.array([[3, 1, 2, 5], [0, -1, 7, 7]], np.float32)
    s = np.array([1, 2], np.uint64)
    v, i, s2, bits = run(parse(src), x, np.int32(3), s, np.array([3, 5], np.int32))
    assert v.tolist() == [[5, 3, 2], [7, 7, 0]] and i.tolist() == [[3, 0, 2], [2, 3, 0]]
    want_s, want_bits = run(parse(static), s)
    assert s2.tolist() == want_s.tolist() and bits.tolist() == want_bits.tolist()


_APPROX = """
module {
  func.func @cmp(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<i32>, %d: tensor<i32>) -> tensor<i1> {
    %r = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %r : tensor<i1>
  }
  func.func @main(%x: tensor<3x8xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>) {
    %i = stablehlo.iota dim = 1 : tensor<3x8xi32>
    %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %m = stablehlo.constant dense<-1> : tensor<i32>
    %r:2 = stablehlo.custom_call @ApproxTopK(%x, %i, %init, %m) {called_computations = [@cmp], mhlo.backend_config = {aggregate_to_topk = true, is_fallback = true, recall_target = 0.949999988 : f32, reduction_dim = 1 : i64, reduction_input_size_override = -1 : i64, top_k = 2 : i64}} : (tensor<3x8xf32>, tensor<3x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<3x2xf32>, tensor<3x2xi32>)
    return %r#0, %r#1 : tensor<3x2xf32>, tensor<3x2xi32>
  }
}
"""


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(-5, 5), min_size=24, max_size=24))
def test_approx_top_k_is_exact_and_stable(vals):
    """XLA CPU computes ApproxTopK exactly: a stable sort by the comparator, then the first k."""
    x = np.array(vals, np.float32).reshape(3, 8)
    v, i = run(parse(_APPROX), x)
    order = np.argsort(-x, axis=1, kind="stable")[:, :2]
    assert i.tolist() == order.tolist()
    assert v.tolist() == np.take_along_axis(x, order, axis=1).tolist()


def test_host_callback_names_the_python_process():
    src = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%x) {backend_config = "", mhlo.backend_config = {index = 0 : ui64}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
    with pytest.raises(NotImplementedOpError, match="calls back into the Python process that exported it"):
        run(parse(src), np.zeros(4, np.float32))


def test_dynamic_call_with_wrong_operands_is_an_error():
    src = """
func.func @main(%x: tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi32>) {
  %v:2 = stablehlo.custom_call @stablehlo.dynamic_top_k(%x) : (tensor<?x?xf32>) -> (tensor<?x?xf32>, tensor<?x?xi32>)
  return %v#0, %v#1 : tensor<?x?xf32>, tensor<?x?xi32>
}
"""
    with pytest.raises(InterpreterError, match="dynamic_top_k takes 2 operands, got 1"):
        run(parse(src), np.zeros((2, 3), np.float32))


# ----------------------------------------------------------------------------- with jax

def _jax():
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
    return pytest.importorskip("jax")


def _poly_programs(jax):
    import jax.numpy as jnp
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 6)).astype(np.float32)
    big = rng.standard_normal((3, 600)).astype(np.float32)
    return {
        "cumsum": (lambda x: jnp.cumsum(x, axis=1), (x,), ("b, n",)),
        "maxpool": (lambda x: jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, x.shape[1] // 2), (1, 1), "VALID"),
                    (x,), ("b, 2*n",)),
        "top_k_symbolic_k": (lambda x: jax.lax.top_k(x, x.shape[1] // 2), (x,), ("b, 2*n",)),
        "rbg_bits": (lambda x: jax.random.bits(jax.random.key(0, impl="rbg"), x.shape, jnp.uint32), (x,), ("b, n",)),
        "approx_max_k": (lambda x: jax.lax.approx_max_k(x, 2), (x,), None),
        "approx_min_k_dim0": (lambda x: jax.lax.approx_min_k(x, 3, reduction_dimension=0), (x,), None),
        "approx_max_k_not_aggregated": (lambda x: jax.lax.approx_max_k(x, 2, aggregate_to_topk=False), (big,), None),
        "approx_max_k_poly": (lambda x: jax.lax.approx_max_k(x, 2), (x,), ("b, 6",)),
        "pad_concat": (lambda x: jnp.concatenate([jnp.pad(x, ((0, 0), (1, 2))), x[:, :1] * 2], axis=1), (x,), ("b, n",)),
        "bits_poly": (lambda x: jax.random.uniform(jax.random.key(1), x.shape) + x, (x,), ("b, n",)),
    }


@pytest.mark.parametrize("name", ["cumsum", "maxpool", "top_k_symbolic_k", "rbg_bits", "approx_max_k",
                                  "approx_min_k_dim0", "approx_max_k_not_aggregated", "approx_max_k_poly",
                                  "pad_concat", "bits_poly"])
def test_jax_programs_match_xla(name):
    jax = _jax()
    from jax import export
    fn, args, poly = _poly_programs(jax)[name]
    if poly:
        specs = export.symbolic_args_specs(args, poly)
    else:
        specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in args]
    text = export.export(jax.jit(fn))(*specs).mlir_module()
    got = run(parse(text), *args)
    want = jax.tree.leaves(jax.jit(fn)(*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert np.shape(g) == np.shape(w)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-6)


def test_jax_host_callback_is_an_error():
    jax = _jax()
    x = np.zeros((2, 3), np.float32)
    text = jax.jit(lambda x: jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x)).lower(x).as_text()
    with pytest.raises(NotImplementedOpError, match="calls back into the Python process"):
        run(parse(text), x)
