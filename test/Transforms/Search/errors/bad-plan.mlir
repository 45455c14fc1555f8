// RUN: %python -c "import json; json.dump({'format': 'tofu-plan', 'version': 1, 'algorithm': 'tofu', 'devices': '2', 'tensors': [], 'ops': []}, open('%t.json', 'w'))"
// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 plan-in=%t.json" -verify-diagnostics
// A plan for a different program is refused.

module {
  // expected-error@+1 {{tofu-search: invalid plan '}}
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
