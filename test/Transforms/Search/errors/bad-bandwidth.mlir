// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2x4 bandwidth=10" -verify-diagnostics
// One bandwidth per level.

// expected-error@+1 {{tofu-search: devices '2x4' has 2 level(s) but 1 bandwidth(s) were given}}
module {
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
