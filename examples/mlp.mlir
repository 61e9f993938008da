// A two-layer perceptron: relu(x @ w1 + b1) @ w2 + b2, then a softmax over the classes.
// Run it with: stablehlo-ref run examples/mlp.mlir --inputs examples/mlp_inputs.npz
module @mlp {
  func.func @main(%x: tensor<4x8xf32>, %w1: tensor<8x16xf32>, %b1: tensor<16xf32>,
                  %w2: tensor<16x3xf32>, %b2: tensor<3xf32>) -> tensor<4x3xf32> {
    %h = stablehlo.dot_general %x, %w1, contracting_dims = [1] x [0] : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %b1b = stablehlo.broadcast_in_dim %b1, dims = [1] : (tensor<16xf32>) -> tensor<4x16xf32>
    %h1 = stablehlo.add %h, %b1b : tensor<4x16xf32>
    %zero = stablehlo.constant dense<0.0> : tensor<4x16xf32>
    %relu = stablehlo.maximum %h1, %zero : tensor<4x16xf32>
    %o = stablehlo.dot_general %relu, %w2, contracting_dims = [1] x [0] : (tensor<4x16xf32>, tensor<16x3xf32>) -> tensor<4x3xf32>
    %b2b = stablehlo.broadcast_in_dim %b2, dims = [1] : (tensor<3xf32>) -> tensor<4x3xf32>
    %logits = stablehlo.add %o, %b2b : tensor<4x3xf32>
    %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %mx = stablehlo.reduce(%logits init: %ninf) applies stablehlo.maximum across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
    %mxb = stablehlo.broadcast_in_dim %mx, dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
    %shifted = stablehlo.subtract %logits, %mxb : tensor<4x3xf32>
    %e = stablehlo.exponential %shifted : tensor<4x3xf32>
    %zero_s = stablehlo.constant dense<0.0> : tensor<f32>
    %sum = stablehlo.reduce(%e init: %zero_s) applies stablehlo.add across dimensions = [1] : (tensor<4x3xf32>, tensor<f32>) -> tensor<4xf32>
    %sumb = stablehlo.broadcast_in_dim %sum, dims = [0] : (tensor<4xf32>) -> tensor<4x3xf32>
    %probs = stablehlo.divide %e, %sumb : tensor<4x3xf32>
    return %probs : tensor<4x3xf32>
  }
}
