// RUN: tofu-opt %s --tofu-train-pipeline="optimizer=sgd devices=2 report=none" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: tofu-opt %s --tofu-train-pipeline="optimizer=sgd devices=2 report=none" 2>/dev/null | FileCheck %s

// Tests that weights=all (the pipeline's default) trains the weights of a
// model that computes its own loss but not its target, which only the
// loss reads: the target leads with the batch and reaches the loss through
// element-wise ops and the final sum alone. The bias b1 also reaches the
// loss element-wise, but is broadcast over the batch, so it stays a weight.
// One remark names the weights and the data.

// REMARK: remark: tofu-autodiff: '@forward': weights: w0 (arg1), b0 (arg2), w1 (arg3), b1 (arg4); data: x (arg0), target (arg5) read only by the loss

// CHECK-LABEL: func.func @forward_train(
// CHECK-SAME: %arg4: tensor<3xf32> {tofu.name = "b1", tofu.tiling = [{{[^]]*}}], tofu.weight},
// CHECK-SAME: %arg5: tensor<4x3xf32> {tofu.name = "target", tofu.tiling = [{{[^]]*}}]}) ->

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
#map2 = affine_map<(d0, d1) -> ()>
func.func @forward(%x: tensor<4x6xf32>, %w0: tensor<8x6xf32>, %b0: tensor<8xf32>,
                   %w1: tensor<3x8xf32>, %b1: tensor<3xf32>,
                   %target: tensor<4x3xf32>) -> tensor<f32> {
  %cst = arith.constant 0.000000e+00 : f32
  %0 = tensor.empty() : tensor<6x8xf32>
  %t0 = linalg.transpose ins(%w0 : tensor<8x6xf32>) outs(%0 : tensor<6x8xf32>) permutation = [1, 0]
  %1 = tensor.empty() : tensor<4x8xf32>
  %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %3 = linalg.matmul ins(%x, %t0 : tensor<4x6xf32>, tensor<6x8xf32>) outs(%2 : tensor<4x8xf32>) -> tensor<4x8xf32>
  %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %b0 : tensor<4x8xf32>, tensor<8xf32>) outs(%1 : tensor<4x8xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %20 = arith.addf %in, %in_0 : f32
    linalg.yield %20 : f32
  } -> tensor<4x8xf32>
  %6 = tensor.empty() : tensor<8x3xf32>
  %t1 = linalg.transpose ins(%w1 : tensor<3x8xf32>) outs(%6 : tensor<8x3xf32>) permutation = [1, 0]
  %7 = tensor.empty() : tensor<4x3xf32>
  %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %9 = linalg.matmul ins(%4, %t1 : tensor<4x8xf32>, tensor<8x3xf32>) outs(%8 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %10 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %b1 : tensor<4x3xf32>, tensor<3xf32>) outs(%7 : tensor<4x3xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %20 = arith.addf %in, %in_0 : f32
    linalg.yield %20 : f32
  } -> tensor<4x3xf32>
  %11 = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]} ins(%10, %target : tensor<4x3xf32>, tensor<4x3xf32>) outs(%7 : tensor<4x3xf32>) {
  ^bb0(%in: f32, %in_0: f32, %out: f32):
    %20 = arith.subf %in, %in_0 : f32
    %21 = arith.mulf %20, %20 : f32
    linalg.yield %21 : f32
  } -> tensor<4x3xf32>
  %12 = tensor.empty() : tensor<f32>
  %13 = linalg.fill ins(%cst : f32) outs(%12 : tensor<f32>) -> tensor<f32>
  %14 = linalg.generic {indexing_maps = [#map, #map2], iterator_types = ["reduction", "reduction"]} ins(%11 : tensor<4x3xf32>) outs(%13 : tensor<f32>) {
  ^bb0(%in: f32, %out: f32):
    %20 = arith.addf %in, %out : f32
    linalg.yield %20 : f32
  } -> tensor<f32>
  return %14 : tensor<f32>
}
