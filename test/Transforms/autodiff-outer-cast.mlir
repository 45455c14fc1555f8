// RUN: tofu-opt %s --tofu-autodiff="weights=1" | FileCheck %s

// Tests that a body that truncates a value defined outside it (a batch
// norm's f64 epsilon, as torch-mlir exports it) differentiates: the cast has
// no tangent, and the variance's gradient goes through the rsqrt.

// CHECK-LABEL: func.func @batch_norm_train(
// CHECK-SAME:    -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 1 : i64})
// CHECK:         linalg.generic
// CHECK:           arith.truncf
// CHECK:           math.rsqrt
// CHECK:         return
#m4 = affine_map<(d0, d1) -> (d0, d1)>
#m1 = affine_map<(d0, d1) -> (d1)>
#m0 = affine_map<(d0, d1) -> ()>
func.func @batch_norm(%x: tensor<2x4xf32>, %var: tensor<4xf32>) -> tensor<f32> {
  %eps = arith.constant 1.0e-05 : f64
  %e = tensor.empty() : tensor<2x4xf32>
  %y = linalg.generic {indexing_maps = [#m4, #m1, #m4], iterator_types = ["parallel", "parallel"]} ins(%x, %var : tensor<2x4xf32>, tensor<4xf32>) outs(%e : tensor<2x4xf32>) {
  ^bb0(%in: f32, %v: f32, %out: f32):
    %c = arith.truncf %eps : f64 to f32
    %s = arith.addf %v, %c : f32
    %r = math.rsqrt %s : f32
    %m = arith.mulf %in, %r : f32
    linalg.yield %m : f32
  } -> tensor<2x4xf32>
  %z = arith.constant 0.0 : f32
  %l0 = tensor.empty() : tensor<f32>
  %l1 = linalg.fill ins(%z : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#m4, #m0], iterator_types = ["reduction", "reduction"]} ins(%y : tensor<2x4xf32>) outs(%l1 : tensor<f32>) {
  ^bb0(%in: f32, %acc: f32):
    %a = arith.addf %acc, %in : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
