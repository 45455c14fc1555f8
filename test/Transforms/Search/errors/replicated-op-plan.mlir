// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 replication=1 plan-out=%t.json svg=none report=none" -o /dev/null
// RUN: %python -c "import json; p = json.load(open('%t.json')); p['ops'][0]['steps'][0]['strategy'] = 'replicated'; json.dump(p, open('%t.json', 'w'))"
// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 replication=1 plan-in=%t.json" -verify-diagnostics -o /dev/null
// Tests that an imported plan cannot run an operator replicated when it has
// an even strategy, even with replication (replicated tilings are in the
// search space, replicated operators only as a fallback).

module {
  // expected-error@+1 {{step 0: operator 0 (linalg.matmul) cannot run replicated: it has an even strategy}}
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
