// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 plan-out=%t.json svg=none report=none" -o /dev/null
// RUN: %python -c "import json; p = json.load(open('%t.json')); p['tensors'][0]['tilings'] = ['rep']; json.dump(p, open('%t.json', 'w'))"
// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 plan-in=%t.json" -verify-diagnostics -o /dev/null
// Tests that an imported plan cannot replicate a tensor that can be cut when
// the plan was made without replication: it would be outside the search
// space (and replicating everything would cost 0 bytes).

module {
  // expected-error@+1 {{step 0: tensor %arg0 cannot be rep: replication is off and it can be cut over 2 workers}}
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
