// RUN: tofu-opt %s --convert-tofu-to-gpu --split-input-file -verify-diagnostics

// Tests that a matrix product on tensors is rejected: the library calls
// take buffers.
func.func @on_tensors(%a: tensor<4x6xf32>, %b: tensor<6x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{convert-tofu-to-gpu: a matrix product on tensors; bufferize before the library calls}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x6xf32>, tensor<6x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
