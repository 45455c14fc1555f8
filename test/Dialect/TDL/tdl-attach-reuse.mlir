// RUN: tofu-opt %s --tdl-attach | FileCheck %s

// Tests that tdl-attach, which describes equal operations once, tells apart
// operations that differ only in a constant their body captures, in the
// captured table and its index, or in their shapes.

// CHECK-LABEL: func.func @reuse
// CHECK: tdl.desc = #tdl.desc<(in0, init0) -> (d0, d1) = in0[d0, d1] + 1.0>
// CHECK: tdl.desc = #tdl.desc<(in0, init0) -> (d0, d1) = in0[d0, d1] + 1.0>
// CHECK: tdl.desc = #tdl.desc<(in0, init0) -> (d0, d1) = in0[d0, d1] + 2.0>
// CHECK: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d0, d1) = in0[d0, d1] * cap0[d0 + 1, d1]>
// CHECK: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d0, d1) = in0[d0, d1] * cap0[d0 + 2, d1]>
// CHECK: tdl.desc = #tdl.desc<(in0, init0) -> (d0) = init0[d0] + (sum(d1) in0[d0, d1])>
// CHECK: tdl.desc = #tdl.desc<(in0, init0) -> (d0) = init0[d0] + (sum(d1) in0[d0, d1])>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @reuse(%x: tensor<4x3xf32>, %t: tensor<8x3xf32>, %y: tensor<4x5xf32>)
    -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>) {
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %e = tensor.empty() : tensor<4x3xf32>
  %0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %one : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%0 : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %one : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%1 : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %two : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %3 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%2 : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %c1 : index
    %v = tensor.extract %t[%k, %j] : tensor<8x3xf32>
    %r = arith.mulf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %4 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%3 : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = arith.addi %i, %c2 : index
    %v = tensor.extract %t[%k, %j] : tensor<8x3xf32>
    %r = arith.mulf %a, %v : f32
    linalg.yield %r : f32
  } -> tensor<4x3xf32>
  %z = tensor.empty() : tensor<4xf32>
  %5 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%4 : tensor<4x3xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  %6 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%y : tensor<4x5xf32>) outs(%z : tensor<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  } -> tensor<4xf32>
  return %0, %1, %2, %3, %4, %5, %6 : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>
}
