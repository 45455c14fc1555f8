// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=8 algorithm=magic" -verify-diagnostics
// Baselines are selected by name.

// expected-error@+1 {{tofu-search: unknown algorithm 'magic' (expected tofu, brute-force, data-parallel, batch-parallel, allrow-greedy, spartan, equalchop or icml18)}}
module {
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
