// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=1048576x1048576x1048576x1048576" -verify-diagnostics
// Tests that a hierarchy whose device count exceeds 64 bits is rejected, not
// wrapped around to a small count.

// expected-error@+1 {{tofu-search: at most 1048576 devices are supported, got '1048576x1048576x1048576x1048576'}}
module {
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
