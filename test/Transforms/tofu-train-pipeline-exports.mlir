// RUN: tofu-opt %s --tofu-train-pipeline="loss=softmax-cross-entropy optimizer=sgd devices=2 plan-out=none svg=none report=none" | FileCheck %s

// Tests that the pipeline trains the weights an export bakes in as constants
// (they become arguments), and differentiates element-wise ops on whole
// tensors (a ReLU as `arith.maximumf` on tensors, as StableHLO-to-linalg
// exports leave it) once they are linalg.generics.

// CHECK-LABEL: func.func @forward_train(
// CHECK-SAME:    %{{.*}}: tensor<4x3xf32> {tofu.name = "x", tofu.tiling = [{{.*}}]},
// CHECK-SAME:    %{{.*}}: tensor<3x2xf32> {tofu.name = "const0", tofu.tiling = [{{.*}}], tofu.weight},
// CHECK-SAME:    %{{.*}}: tensor<4x2xf32> {tofu.input, tofu.name = "labels", tofu.tiling = [{{.*}}]})
// CHECK-SAME:    -> (tensor<f32> {tofu.loss}, tensor<3x2xf32> {tofu.updated_arg = 1 : i64})
// CHECK-NOT:     arith.maximumf {{.*}} : tensor
// CHECK:         return
func.func @forward(%x: tensor<4x3xf32>) -> tensor<4x2xf32> {
  %w = arith.constant dense<[[1.0, -1.0], [0.5, 2.0], [-0.25, 0.75]]> : tensor<3x2xf32>
  %zero = arith.constant dense<0.0> : tensor<4x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x3xf32>, tensor<3x2xf32>) outs(%zero : tensor<4x2xf32>) -> tensor<4x2xf32>
  %r = arith.maximumf %y, %zero : tensor<4x2xf32>
  return %r : tensor<4x2xf32>
}
