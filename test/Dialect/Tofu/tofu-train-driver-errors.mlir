// RUN: tofu-opt %s -split-input-file --tofu-train-driver="steps=0" -verify-diagnostics
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="steps=10001 unroll=1" 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="int-bound=0" 2>&1 | FileCheck %s --check-prefix=BOUND
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="reference=1" 2>&1 | FileCheck %s --check-prefix=REF
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="init=a resume=b" 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="unroll=1 resume=b" 2>&1 | FileCheck %s --check-prefix=UNROLL
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="save-every=2" 2>&1 | FileCheck %s --check-prefix=EVERY
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="lr=0.1" 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="lr=-1" 2>&1 | FileCheck %s --check-prefix=NEGLR
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver="log-every=0" 2>&1 | FileCheck %s --check-prefix=LOGEVERY
// RUN: not tofu-opt %s -split-input-file --tofu-train-driver --tofu-train-driver 2>&1 | FileCheck %s --check-prefix=TWICE

// Tests that the driver range-checks its options on a valid step: no steps
// at all (which used to crash with reference=1), too many steps, an empty
// range of integer inputs, a reference that tofu-partition did not keep,
// and files that do not go together.

// MANY: tofu-train-driver: with unroll=1, steps must be at most 10000, not 10001
// BOUND: tofu-train-driver: int-bound must be in [1, 2^31]
// REF: tofu-train-driver: reference=1 needs @step_reference (kept by tofu-partition)
// BOTH: tofu-train-driver: init and resume exclude each other
// UNROLL: tofu-train-driver: resume needs the step loop (unroll=0)
// EVERY: tofu-train-driver: save-every needs a save file
// LR: tofu-train-driver: the step's learning rate is a constant; build it with tofu-optimizer{lr-arg=1} to set it at run time
// NEGLR: tofu-train-driver: lr must be positive
// LOGEVERY: tofu-train-driver: log-every must be at least 1
// TWICE: tofu-train-driver: the module already has @main (a driver); give the step as it was before tofu-train-driver

// expected-error @+1 {{tofu-train-driver: steps must be at least 1, not 0}}
func.func @step(%w: tensor<4xf32> {tofu.weight}, %x: tensor<4xf32>)
    -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.updated_arg = 0 : i64}) {
  %empty = tensor.empty() : tensor<f32>
  %zero = arith.constant 0.0 : f32
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%w, %x : tensor<4xf32>, tensor<4xf32>) outs(%init : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss, %w : tensor<f32>, tensor<4xf32>
}
