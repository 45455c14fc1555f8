// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 algorithm=brute-force" -verify-diagnostics
// Brute force enumerates every assignment; a chain of 12 products is
// already past its bound of 2^24.

module {
  // expected-error@+1 {{tofu-search: brute force would enumerate more than 16777216 assignments at a step of 2; use it on small graphs only}}
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c1 = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c2 = linalg.matmul ins(%c1, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c3 = linalg.matmul ins(%c2, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c4 = linalg.matmul ins(%c3, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c5 = linalg.matmul ins(%c4, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c6 = linalg.matmul ins(%c5, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c7 = linalg.matmul ins(%c6, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c8 = linalg.matmul ins(%c7, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c9 = linalg.matmul ins(%c8, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c10 = linalg.matmul ins(%c9, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c11 = linalg.matmul ins(%c10, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %c12 = linalg.matmul ins(%c11, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c12 : tensor<4x4xf32>
  }
}
