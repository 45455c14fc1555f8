// RUN: not tofu-opt %s --tofu-optimizer 2>&1 | FileCheck %s --check-prefix=NOSTEP
// RUN: not tofu-opt %s --tofu-optimizer=kind=rmsprop 2>&1 | FileCheck %s --check-prefix=KIND

// NOSTEP: tofu-optimizer: no training step found (run tofu-autodiff first)
// KIND: tofu-optimizer: unknown kind 'rmsprop' (expected sgd, momentum or adam)

func.func @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
