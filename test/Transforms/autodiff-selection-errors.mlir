// RUN: tofu-opt %s --tofu-autodiff="weights=all inputs=x" -split-input-file -verify-diagnostics
// RUN: not tofu-opt %s --tofu-autodiff="weights=x inputs=x" -split-input-file 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not tofu-opt %s --tofu-autodiff="weights=all inputs=7" -split-input-file 2>&1 | FileCheck %s --check-prefix=INPUT

// BOTH: :[[@LINE+5]]:{{[0-9]+}}: error: tofu-autodiff: argument 0 is both a weight and an input
// INPUT: error: tofu-autodiff: input argument 7 out of range: '@no_weights' has 1 arguments

// Tests that a loss without weights is an error that says how to mark them.
// expected-error @+1 {{tofu-autodiff: nothing to differentiate: no function with a 0-d loss has weight arguments; mark them {tofu.weight}, or pass weights=all (with inputs=... for the data arguments), weights=<indices> or weights=<names>}}
func.func @no_weights(%x: tensor<3xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  return %i : tensor<f32>
}

// -----

// Tests that a model without a loss is an error that names tofu-loss.
// expected-error @+1 {{tofu-autodiff: nothing to differentiate: no function returns a 0-d loss (add one with tofu-loss{kind=softmax-cross-entropy|mse|sum})}}
func.func @logits(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  return %w : tensor<3xf32>
}
