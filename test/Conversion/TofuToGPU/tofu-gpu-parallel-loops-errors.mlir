// RUN: tofu-opt %s --tofu-gpu-parallel-loops --split-input-file -verify-diagnostics

// Tests that an op on tensors is rejected: kernels take buffers.
func.func @on_tensors(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{tofu-gpu-parallel-loops: expects buffers; bufferize first}}
  %0 = linalg.copy ins(%x : tensor<4xf32>) outs(%y : tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
