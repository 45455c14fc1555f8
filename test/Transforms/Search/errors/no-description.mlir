// RUN: tofu-opt %s --tofu-search="devices=2" -verify-diagnostics
// tdl-attach described the first operation only; the search refuses to
// guess the second.

func.func @f(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %e = tensor.empty() : tensor<4x4xf32>
  %c = linalg.matmul {tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1) = init0[d0, d1] + (sum(d2) in0[d0, d2] * in1[d2, d1])>}
      ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>)
      outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  // expected-error@+1 {{operation has no TDL description; run tdl-attach first or describe it in a library}}
  %d = linalg.matmul ins(%c, %b : tensor<4x4xf32>, tensor<4x4xf32>)
                     outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %d : tensor<4x4xf32>
}
