// RUN: tofu-opt --tofu-autodiff --tofu-optimizer="kind=adam lr=0.5" < %s | FileCheck %s --check-prefix=ADAM
// RUN: tofu-opt --tofu-autodiff --tofu-optimizer="kind=momentum lr=0.5" < %s | FileCheck %s --check-prefix=MOMENTUM
// RUN: tofu-opt --tofu-autodiff --tofu-optimizer="kind=sgd lr=0.25 lr-arg=1" < %s | FileCheck %s --check-prefix=LRARG

// Tests that tofu-optimizer names every state argument after its weight
// (its tofu.name, else arg<N>: read from stdin, %v has no name) and
// torch.optim's state keys, and that
// lr-arg makes the learning rate a 0-d argument that the update reads
// instead of a constant.

// ADAM-LABEL: func.func @f_train
// ADAM-SAME: %arg0: tensor<4xf32> {tofu.name = "w", tofu.weight}
// ADAM-SAME: %arg1: tensor<3xf32> {tofu.weight}
// ADAM-SAME: {tofu.name = "optimizer.step", tofu.state_of = -1 : i64}
// ADAM-SAME: {tofu.name = "w.exp_avg", tofu.state_of = 0 : i64}
// ADAM-SAME: {tofu.name = "w.exp_avg_sq", tofu.state_of = 0 : i64}
// ADAM-SAME: {tofu.name = "arg1.exp_avg", tofu.state_of = 1 : i64}
// ADAM-SAME: {tofu.name = "arg1.exp_avg_sq", tofu.state_of = 1 : i64}

// MOMENTUM-LABEL: func.func @f_train
// MOMENTUM-SAME: {tofu.name = "w.momentum_buffer", tofu.state_of = 0 : i64}
// MOMENTUM-SAME: {tofu.name = "arg1.momentum_buffer", tofu.state_of = 1 : i64}

// LRARG-LABEL: func.func @f_train
// LRARG-SAME: %[[LR:arg[0-9]+]]: tensor<f32> {tofu.hyperparameter = 2.500000e-01 : f64, tofu.name = "optimizer.lr"}
// LRARG-NOT: 2.500000e-01 : f32
// LRARG: linalg.generic {{.*}} ins(%arg0, %{{.*}}, %[[LR]] : tensor<4xf32>, tensor<4xf32>, tensor<f32>)
// LRARG: linalg.generic {{.*}} ins(%arg1, %{{.*}}, %[[LR]] : tensor<3xf32>, tensor<3xf32>, tensor<f32>)
func.func @f(%w: tensor<4xf32> {tofu.name = "w", tofu.weight}, %v: tensor<3xf32> {tofu.weight}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%w : tensor<4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %p = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%v : tensor<3xf32>) outs(%a : tensor<f32>) {
  ^bb0(%x: f32, %acc: f32):
    %p = arith.mulf %x, %x : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %b : tensor<f32>
}
