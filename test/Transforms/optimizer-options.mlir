// RUN: not tofu-opt %s --tofu-optimizer=lr=-0.1 2>&1 | FileCheck %s --check-prefix=NEGLR
// RUN: not tofu-opt %s --tofu-optimizer=lr=nan 2>&1 | FileCheck %s --check-prefix=NANLR
// RUN: not tofu-opt %s --tofu-optimizer="kind=adam eps=0" 2>&1 | FileCheck %s --check-prefix=EPS
// RUN: not tofu-opt %s --tofu-optimizer="kind=adam beta2=1" 2>&1 | FileCheck %s --check-prefix=BETA
// RUN: not tofu-opt %s --tofu-optimizer="kind=momentum momentum=-0.5" 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not tofu-opt %s --tofu-optimizer 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not tofu-opt %tofu_src/models/torch-mlir-style/mlp.mlir --tofu-train-pipeline="loss=mse lr=-1 devices=2" 2>&1 | FileCheck %s --check-prefix=PIPELINE

// Tests that the optimizer's hyperparameters are range-checked (a negative
// learning rate trains uphill, NaN trains to NaN), and that a step that
// already updates its weights gets no second optimizer.

// NEGLR: tofu-optimizer: lr must be positive and finite, not -0.1
// NANLR: tofu-optimizer: lr must be positive and finite, not nan
// EPS: tofu-optimizer: eps must be positive and finite, not 0
// BETA: tofu-optimizer: beta2 must be in [0, 1), not 1
// MOMENTUM: tofu-optimizer: momentum must be in [0, 1), not -0.5
// TWICE: tofu-optimizer: the step already has an optimizer (its results update its weights); run tofu-optimizer once
// PIPELINE: tofu-optimizer: lr must be positive and finite, not -1

func.func @step(%w: tensor<4xf32> {tofu.weight})
    -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.updated_arg = 0 : i64}) {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  return %i, %w : tensor<f32>, tensor<4xf32>
}
