// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 plan-out=%t.json svg=none report=none" -o /dev/null
// RUN: %python -c "import json; p = json.load(open('%t.json')); p['tensors'][0]['tilings'] = ['cut(1)']; json.dump(p, open('%t.json', 'w'))"
// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 plan-in=%t.json" -verify-diagnostics
// An edited plan that cuts a dimension of 3 in two is refused.

module {
  // expected-error@+1 {{tofu-search: invalid plan '}}
  func.func @f(%a: tensor<4x3xf32>, %b: tensor<3x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
