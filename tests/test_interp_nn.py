"""batch_norm_* and the legacy einsum ops against direct numpy formulas."""
import numpy as np

import stablehlo_ref as shlo

BN = """
func.func @main(%x: tensor<2x3x4xf32>, %scale: tensor<3xf32>, %offset: tensor<3xf32>,
                %mean: tensor<3xf32>, %var: tensor<3xf32>, %g: tensor<2x3x4xf32>)
    -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>,
        tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  %inf = "stablehlo.batch_norm_inference"(%x, %scale, %offset, %mean, %var) {epsilon = 0.001 : f32, feature_index = 1 : i64}
      : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4xf32>
  %tr:3 = "stablehlo.batch_norm_training"(%x, %scale, %offset) {epsilon = 0.001 : f32, feature_index = 1 : i64}
      : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %gr:3 = "stablehlo.batch_norm_grad"(%x, %scale, %mean, %var, %g) {epsilon = 0.001 : f32, feature_index = 1 : i64}
      : (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %inf, %tr#0, %tr#1, %tr#2, %gr#0, %gr#1, %gr#2 : tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x3x4xf32>, tensor<3xf32>, tensor<3xf32>
}
"""


def test_batch_norm_family_matches_formulas():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    scale, offset = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    mean, var = rng.standard_normal(3).astype(np.float32), rng.uniform(0.5, 2, 3).astype(np.float32)
    g = rng.standard_normal((2, 3, 4)).astype(np.float32)
    inf, tr, bm, bv, gx, gs, go = shlo.run(shlo.parse(BN), x, scale, offset, mean, var, g)
    eps = np.float64(np.float32(0.001))
    v = lambda a: np.asarray(a, np.float64).reshape(1, 3, 1)
    xf = x.astype(np.float64)
    np.testing.assert_allclose(inf, v(scale) * (xf - v(mean)) / np.sqrt(v(var) + eps) + v(offset), rtol=1e-6)
    m = xf.mean(axis=(0, 2))
    s2 = xf.var(axis=(0, 2))
    np.testing.assert_allclose(bm, m, rtol=1e-6)
    np.testing.assert_allclose(bv, s2, rtol=1e-6)
    np.testing.assert_allclose(tr, v(scale) * (xf - v(m)) / np.sqrt(v(s2) + eps) + v(offset), rtol=1e-5, atol=1e-6)
    # grad: compare with finite differences of sum(g * batch_norm_inference) w.r.t. x
    # through the closed form used by XLA
    n = 8
    std = np.sqrt(v(var) + eps)
    norm = (xf - v(mean)) / std
    go_ref = g.astype(np.float64).sum(axis=(0, 2))
    gs_ref = (g * norm).sum(axis=(0, 2))
    gx_ref = v(scale) / std * (g - v(go_ref) / n - norm * v(gs_ref) / n)
    np.testing.assert_allclose(go, go_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gs, gs_ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx, gx_ref, rtol=1e-5, atol=1e-6)


def test_einsum_and_unary_einsum():
    text = """
func.func @main(%a: tensor<2x3xi32>, %b: tensor<3x4xi32>) -> (tensor<2x4xi32>, tensor<3x2xi32>) {
  %0 = stablehlo.einsum %a, %b, config = "ab,bc->ac" : (tensor<2x3xi32>, tensor<3x4xi32>) -> tensor<2x4xi32>
  %1 = "stablehlo.unary_einsum"(%a) {einsum_config = "ab->ba"} : (tensor<2x3xi32>) -> tensor<3x2xi32>
  return %0, %1 : tensor<2x4xi32>, tensor<3x2xi32>
}
"""
    a = np.arange(6, dtype=np.int32).reshape(2, 3)
    b = np.arange(12, dtype=np.int32).reshape(3, 4)
    r0, r1 = shlo.run(shlo.parse(text), a, b)
    assert (r0 == a @ b).all() and r0.dtype == np.int32
    assert (r1 == a.T).all()
