// RUN: tofu-opt %s --tofu-loss --tofu-autodiff="weights=all inputs=auto" -split-input-file -verify-diagnostics | FileCheck %s

// Tests that with inputs=auto the data input is the argument that leads with
// the batch (the labels' leading dimension) when argument 0 does not, as in
// exports that pass the weights first and the data last, with a remark on
// it; and that an exporter's result attributes stay on the loss.

// CHECK-LABEL: func.func @weights_first_train(
// CHECK-SAME:    %{{.*}}: tensor<6x8xf32> {tofu.name = "w", tofu.weight},
// CHECK-SAME:    %{{.*}}: tensor<6xf32> {tofu.name = "b", tofu.weight},
// CHECK-SAME:    %{{.*}}: tensor<2x8xf32> {tofu.name = "x"},
// CHECK-SAME:    %{{.*}}: tensor<2x6xf32> {tofu.input, tofu.name = "labels"})
// CHECK-SAME:    -> (tensor<f32> {jax.result_info = "result[0]", tofu.loss}, tensor<6x8xf32> {tofu.grad_of_arg = 0 : i64}, tensor<6xf32> {tofu.grad_of_arg = 1 : i64})
// expected-remark @+1 {{tofu-autodiff: '@weights_first': weights: w (arg0), b (arg1); data: x (arg2), labels (arg3)}}
func.func @weights_first(%w: tensor<6x8xf32>, %b: tensor<6xf32>,
    // expected-remark @+1 {{tofu-autodiff: argument 2 is the data input: it leads with the batch (2) and argument 0 does not; pass inputs= to choose}}
    %x: tensor<2x8xf32>) -> (tensor<2x6xf32> {jax.result_info = "result[0]"}) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x6xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %y = linalg.matmul indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>]
      ins(%x, %w : tensor<2x8xf32>, tensor<6x8xf32>) outs(%i : tensor<2x6xf32>) -> tensor<2x6xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<2x6xf32>, tensor<6xf32>) outs(%e : tensor<2x6xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<2x6xf32>
  return %r : tensor<2x6xf32>
}

// -----

// Tests that argument 0 stays the data input when it leads with the batch,
// with no remark about the data input (only the line that names the
// weights and the data).

// CHECK-LABEL: func.func @data_first_train(
// CHECK-SAME:    %{{.*}}: tensor<2x8xf32> {tofu.name = "x"},
// CHECK-SAME:    %{{.*}}: tensor<8x2xf32> {tofu.name = "w", tofu.weight},
// expected-remark @+1 {{tofu-autodiff: '@data_first': weights: w (arg1); data: x (arg0), labels (arg2)}}
func.func @data_first(%x: tensor<2x8xf32>, %w: tensor<8x2xf32>) -> tensor<2x2xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<2x8xf32>, tensor<8x2xf32>) outs(%i : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %y : tensor<2x2xf32>
}
