// RUN: tofu-opt %s --tofu-autodiff=func=f -split-input-file -verify-diagnostics
// RUN: not tofu-opt %s --tofu-autodiff="func=f weights=5" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not tofu-opt %s --tofu-autodiff=func=g 2>&1 | FileCheck %s --check-prefix=MISSING

// RUN: not tofu-opt %s --tofu-autodiff="func=f weights=wieght" 2>&1 | FileCheck %s --check-prefix=NAME

// NAME: error: tofu-autodiff: no argument of '@f' is named 'wieght' (its names: x)
// RANGE: error: tofu-autodiff: weight argument 5 out of range: '@f' has 1 arguments
// MISSING: tofu-autodiff: no function named 'g'

// Tests that a named function without weights says how to mark them.
// expected-error @+1 {{tofu-autodiff: '@f' has no weight arguments; mark them {tofu.weight}, or pass weights=all (with inputs=... for the data arguments), weights=<indices> or weights=<names>}}
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}

