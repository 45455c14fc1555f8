// RUN: tofu-opt %s --tofu-autodiff=func=f -verify-diagnostics
// RUN: not tofu-opt %s --tofu-autodiff="func=f weights=5" 2>&1 | FileCheck %s --check-prefix=RANGE
// RUN: not tofu-opt %s --tofu-autodiff=func=g 2>&1 | FileCheck %s --check-prefix=MISSING

// RANGE: weight argument 5 out of range
// MISSING: tofu-autodiff: no function named 'g'

// expected-error @+1 {{tofu-autodiff: no weight arguments (mark them {tofu.weight} or pass weights=...)}}
func.func @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
