// RUN: tofu-opt %s --tofu-fuse-elementwise | FileCheck %s --check-prefix=ONCE
// RUN: tofu-opt %s --tofu-fuse-elementwise=duplicate=true | FileCheck %s --check-prefix=DUP

// Tests that an element-wise producer with two consumers (a row sum and a
// map, as in a softmax: e = exp(x - m), s = sum(e), e / s) stays a separate
// op by default, and with `duplicate` is recomputed in both consumers and
// disappears; a producer that a matrix product also reads stays.

// ONCE-LABEL: func.func @softmax
// ONCE-COUNT-3: linalg.generic
// ONCE-NOT: linalg.generic
// DUP-LABEL: func.func @softmax
// DUP: linalg.generic
// DUP-SAME: iterator_types = ["parallel", "reduction"]
// DUP: math.exp
// DUP: arith.addf
// DUP: linalg.generic
// DUP-SAME: iterator_types = ["parallel", "parallel"]
// DUP: math.exp
// DUP: arith.divf
// DUP-NOT: linalg.generic
#id = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @softmax(%x: tensor<4x8xf32>, %m: tensor<4xf32>) -> tensor<4x8xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x8xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %m : tensor<4x8xf32>, tensor<4xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.subf %a, %b : f32
    %r = math.exp %d : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  %empty1 = tensor.empty() : tensor<4xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty1 : tensor<4xf32>) -> tensor<4xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<4x8xf32>, tensor<4xf32>) outs(%empty : tensor<4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.divf %a, %b : f32
    linalg.yield %r : f32
  } -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}



// ONCE-LABEL: func.func @product_reads_it
// DUP-LABEL: func.func @product_reads_it
// DUP: math.exp
// DUP: linalg.matmul
func.func @product_reads_it(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<4x4xf32>
  %e = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x4xf32>) outs(%empty : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = math.exp %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%empty : tensor<4x4xf32>) -> tensor<4x4xf32>
  %p = linalg.matmul ins(%e, %e : tensor<4x4xf32>, tensor<4x4xf32>) outs(%acc : tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e : tensor<4x4xf32>) outs(%empty : tensor<4x4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.negf %a : f32
    linalg.yield %r : f32
  } -> tensor<4x4xf32>
  return %p, %n : tensor<4x4xf32>, tensor<4x4xf32>
}
