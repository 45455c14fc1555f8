// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=8 bandwidth=-5" -verify-diagnostics
// Bandwidths are positive.

// expected-error@+1 {{tofu-search: bandwidths must be positive numbers (GB/s) separated by ',', got '-5'}}
module {
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
