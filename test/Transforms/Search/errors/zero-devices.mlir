// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=0" -verify-diagnostics
// No devices.

// expected-error@+1 {{tofu-search: devices must be positive integers separated by 'x' (such as '8' or '2x4'), got '0'}}
module {
  func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %e = tensor.empty() : tensor<4x4xf32>
    %c = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                       outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    return %c : tensor<4x4xf32>
  }
}
