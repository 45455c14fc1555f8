// RUN: tofu-opt %s --tofu-loss="kind=sum result=1" | FileCheck %s

// Tests that result= puts the loss on one of several results (a BERT model
// returns its sequence output and its pooled output), drops the others and
// keeps the chosen result's attributes.

// CHECK-LABEL: func.func @two(
// CHECK-SAME:    -> (tensor<f32> {jax.result_info = "pooled"})
// CHECK:         %[[L:.*]] = linalg.generic {{.*}} ins(%{{.*}} : tensor<2xf32>)
// CHECK:         return %[[L]] : tensor<f32>
func.func @two(%x: tensor<2x3xf32>, %p: tensor<2xf32>) -> (tensor<2x3xf32> {jax.result_info = "sequence"}, tensor<2xf32> {jax.result_info = "pooled"}) {
  return %x, %p : tensor<2x3xf32>, tensor<2xf32>
}
