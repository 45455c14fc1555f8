// RUN: tofu-opt %s --tdl-attach --tofu-search="" -verify-diagnostics
// Without devices the search has nothing to do.

// expected-error@+1 {{tofu-search needs the devices, e.g. --tofu-search="devices=8" or "devices=2x4"}}
module {
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
