// A two-layer MLP, in the linalg-on-tensors form that torch-mlir's
// TorchToLinalg emits for nn.Linear (weights stored out x in and transposed,
// bias broadcast-added) and nn.ReLU (cmpf ugt + select). The forward export
// returns the logits; tofu-loss adds the loss. Batch 4, 6 features, 8 hidden
// units, 3 outputs.

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
module attributes {torch.debug_module_name = "MLP"} {
  func.func @forward(%x: tensor<4x6xf32>, %w0: tensor<8x6xf32>, %b0: tensor<8xf32>,
                     %w1: tensor<3x8xf32>, %b1: tensor<3xf32>) -> tensor<4x3xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<6x8xf32>
    %transposed = linalg.transpose ins(%w0 : tensor<8x6xf32>) outs(%0 : tensor<6x8xf32>) permutation = [1, 0]
    %1 = tensor.empty() : tensor<4x8xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = linalg.matmul ins(%x, %transposed : tensor<4x6xf32>, tensor<6x8xf32>) outs(%2 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %b0 : tensor<4x8xf32>, tensor<8xf32>) outs(%1 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %20 = arith.addf %in, %in_0 : f32
      linalg.yield %20 : f32
    } -> tensor<4x8xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<4x8xf32>) outs(%1 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.cmpf ugt, %in, %cst : f32
      %21 = arith.select %20, %in, %cst : f32
      linalg.yield %21 : f32
    } -> tensor<4x8xf32>
    %6 = tensor.empty() : tensor<8x3xf32>
    %transposed_1 = linalg.transpose ins(%w1 : tensor<3x8xf32>) outs(%6 : tensor<8x3xf32>) permutation = [1, 0]
    %7 = tensor.empty() : tensor<4x3xf32>
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %9 = linalg.matmul ins(%5, %transposed_1 : tensor<4x8xf32>, tensor<8x3xf32>) outs(%8 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %b1 : tensor<4x3xf32>, tensor<3xf32>) outs(%7 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %20 = arith.addf %in, %in_0 : f32
      linalg.yield %20 : f32
    } -> tensor<4x3xf32>
    return %10 : tensor<4x3xf32>
  }
}
