// A two-layer perceptron's forward pass and a sum-of-squares loss: small
// enough for brute force (used by search.mlir and brute-force.test).
func.func @forward(%x: tensor<16x8xf32>, %w0: tensor<8x8xf32> {tofu.weight},
                   %w1: tensor<8x4xf32> {tofu.weight}) -> tensor<f32> {
  %z0 = tensor.empty() : tensor<16x8xf32>
  %h = linalg.matmul ins(%x, %w0 : tensor<16x8xf32>, tensor<8x8xf32>)
                     outs(%z0 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %e1 = tensor.empty() : tensor<16x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                        affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%h : tensor<16x8xf32>) outs(%e1 : tensor<16x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %c0 = arith.constant 0.0 : f32
    %m = arith.maximumf %a, %c0 : f32
    linalg.yield %m : f32
  } -> tensor<16x8xf32>
  %z1 = tensor.empty() : tensor<16x4xf32>
  %y = linalg.matmul ins(%r, %w1 : tensor<16x8xf32>, tensor<8x4xf32>)
                     outs(%z1 : tensor<16x4xf32>) -> tensor<16x4xf32>
  %e2 = tensor.empty() : tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>,
                                           affine_map<(i, j) -> ()>],
                          iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<16x4xf32>) outs(%e2 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %sq = arith.mulf %a, %a : f32
    %s = arith.addf %o, %sq : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
