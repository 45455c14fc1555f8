// RUN: tofu-opt %s --tofu-autodiff | FileCheck %s

// y = x * w (broadcast over rows), w used twice: loss = sum(y) + sum(w).
// CHECK-LABEL: func.func @f_train(
// CHECK-SAME: %[[X:arg[0-9]+]]: tensor<2x3xf32> {tofu.name = "x"}, %[[W:arg[0-9]+]]: tensor<3xf32> {tofu.name = "w", tofu.weight})
// CHECK-SAME: -> (tensor<f32> {tofu.loss}, tensor<3xf32> {tofu.grad_of_arg = 1 : i64})
// CHECK: %[[Y:.*]] = linalg.generic {{.*}} ins(%[[X]], %[[W]] : {{.*}}) {{.*}}tofu.op_id = 1
// CHECK: %[[S:.*]] = linalg.generic {{.*}} ins(%[[Y]] : {{.*}}) {{.*}}tofu.op_id = 5
// CHECK: %[[L:.*]] = linalg.generic {{.*}} ins(%[[W]] : {{.*}}) outs(%[[S]] : {{.*}}) {{.*}}tofu.op_id = 6
// The loss seed, then the backward ops of op 6 (the sum of w)...
// CHECK: %[[SEED:.*]] = linalg.fill {tofu.grad_of = array<i64: 6, 0>}
// CHECK: %[[DW1:.*]] = linalg.generic {{.*}} ins(%[[SEED]] : tensor<f32>) {{.*}}tofu.bwd_of = 6 : i64, tofu.grad_of = array<i64: -1, 1>
// ... of op 5 (the sum of y): the gradient of y, reduction loops become parallel ...
// CHECK: %[[DY:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel"]{{.*}} ins(%[[SEED]] : tensor<f32>) {{.*}}tofu.bwd_of = 5 : i64, tofu.grad_of = array<i64: 1, 0>
// ... of op 1: x's row loop is a reduction of w's gradient, which reads only x and dy.
// CHECK: %[[DW2:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[X]], %[[DY]] : {{.*}}) {{.*}}tofu.bwd_of = 1 : i64, tofu.grad_of = array<i64: -1, 1>
// The two contributions to w's gradient are accumulated.
// CHECK: %[[DW:.*]] = linalg.generic {{.*}} ins(%[[DW1]], %[[DW2]] : {{.*}}) {{.*}}tofu.grad_accum, tofu.grad_of = array<i64: -1, 1>
// CHECK: return %[[L]], %[[DW]]

#id = affine_map<(d0, d1) -> (d0, d1)>
#col = affine_map<(d0, d1) -> (d1)>
func.func @f(%x: tensor<2x3xf32>, %w: tensor<3xf32> {tofu.weight}) -> tensor<f32> {
  %e = tensor.empty() : tensor<2x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %w : tensor<2x3xf32>, tensor<3xf32>) outs(%e : tensor<2x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    linalg.yield %m : f32
  } -> tensor<2x3xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%y : tensor<2x3xf32>) outs(%i0 : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%w : tensor<3xf32>) outs(%s : tensor<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
