// RUN: tofu-opt %s -split-input-file --tofu-autodiff="weights=all" -verify-diagnostics
// RUN: rm -f %t.empty.mlir && touch %t.empty.mlir
// RUN: not tofu-opt %t.empty.mlir --tofu-train-pipeline="devices=2" 2>&1 | FileCheck %s --check-prefix=EMPTY

// EMPTY: error: tofu-autodiff: empty input: the module holds no function (give a forward model in linalg on tensors)

// Tests that a half-precision model stops at the first stage, with what to
// do, rather than after the search and the partition.

// expected-error @+1 {{tofu-autodiff: argument 0 of '@forward' is f16: training steps run in f32 or f64 (convert the model, e.g. with --tofu-convert-float-type="from=f16 to=f32")}}
func.func @forward(%w: tensor<4xf16>) -> tensor<f16> {
  %zero = arith.constant 0.0 : f16
  %empty = tensor.empty() : tensor<f16>
  %init = linalg.fill ins(%zero : f16) outs(%empty : tensor<f16>) -> tensor<f16>
  %sum = linalg.reduce ins(%w : tensor<4xf16>) outs(%init : tensor<f16>) dimensions = [0]
    (%in: f16, %acc: f16) {
      %s = arith.addf %in, %acc : f16
      linalg.yield %s : f16
    }
  return %sum : tensor<f16>
}

// -----

// Tests that a dynamic batch gets one line that says what to do.

// expected-error @+1 {{tofu-autodiff: argument 0 of '@forward' has a dynamic shape 'tensor<?x6xf32>': export the model with a static batch and static shapes}}
func.func @forward(%x: tensor<?x6xf32>, %w: tensor<6xf32>) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<f32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%w : tensor<6xf32>) outs(%init : tensor<f32>) dimensions = [0]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %sum : tensor<f32>
}
