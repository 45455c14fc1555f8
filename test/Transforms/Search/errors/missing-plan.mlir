// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 plan-in=%t.does-not-exist.json" -verify-diagnostics
// An imported plan that cannot be read.

module {
  // expected-error@+1 {{tofu-search: cannot read plan}}
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
