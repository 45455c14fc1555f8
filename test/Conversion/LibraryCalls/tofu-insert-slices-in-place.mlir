// RUN: tofu-opt %s --tofu-insert-slices-in-place --split-input-file | FileCheck %s

// Tests that a concat of time steps (tofu-stack-product-sums' stacks)
// becomes inserts, each right after the op that makes its slice and
// rank-reducing instead of through an expand_shape, into an empty placed
// before the first of those ops.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @concat
// CHECK:      %[[ALL:.*]] = tensor.empty() : tensor<2x4x3xf32>
// CHECK-NEXT: %[[A:.*]] = linalg.generic
// CHECK:      %[[INA:.*]] = tensor.insert_slice %[[A]] into %[[ALL]][0, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<4x3xf32> into tensor<2x4x3xf32>
// CHECK-NEXT: tensor.empty() : tensor<4x3xf32>
// CHECK-NEXT: %[[B:.*]] = linalg.generic
// CHECK:      %[[INB:.*]] = tensor.insert_slice %[[B]] into %[[INA]][1, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<4x3xf32> into tensor<2x4x3xf32>
// CHECK-NEXT: return %[[INB]]
// CHECK-NOT: tensor.concat
func.func @concat(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x4x3xf32> {
  %ea = tensor.empty() : tensor<4x3xf32>
  %ta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x3xf32>) outs(%ea : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = math.tanh %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %eb = tensor.empty() : tensor<4x3xf32>
  %tb = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%b, %ta : tensor<4x3xf32>, tensor<4x3xf32>) outs(%eb : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %t = arith.mulf %i, %j : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %xa = tensor.expand_shape %ta [[0, 1], [2]] output_shape [1, 4, 3] : tensor<4x3xf32> into tensor<1x4x3xf32>
  %xb = tensor.expand_shape %tb [[0, 1], [2]] output_shape [1, 4, 3] : tensor<4x3xf32> into tensor<1x4x3xf32>
  %c = tensor.concat dim(0) %xa, %xb : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<2x4x3xf32>
  return %c : tensor<2x4x3xf32>
}

// -----

// Tests that a chain of inserts into a zero fill (tofu-fuse-elementwise's
// sum of zero-padded slices) is rebuilt in the order its slices are made:
// the chain inserts the first-made slice last. An argument's slice goes
// first, right after the fill.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @reordered
// CHECK:      %[[FILL:.*]] = linalg.fill
// CHECK-NEXT: %[[IN0:.*]] = tensor.insert_slice %arg2 into %[[FILL]][0, 6] [4, 2] [1, 1]
// CHECK-NEXT: %[[A:.*]] = linalg.generic
// CHECK:      %[[IN1:.*]] = tensor.insert_slice %[[A]] into %[[IN0]][0, 3] [4, 3] [1, 1]
// CHECK-NEXT: %[[B:.*]] = linalg.generic
// CHECK:      %[[IN2:.*]] = tensor.insert_slice %[[B]] into %[[IN1]][0, 0] [4, 3] [1, 1]
// CHECK-NEXT: return %[[IN2]]
func.func @reordered(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>, %c: tensor<4x2xf32>) -> tensor<4x9xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %ta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = math.tanh %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %tb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.negf %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %all = tensor.empty() : tensor<4x9xf32>
  %f = linalg.fill ins(%zero : f32) outs(%all : tensor<4x9xf32>) -> tensor<4x9xf32>
  %0 = tensor.insert_slice %tb into %f[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x9xf32>
  %1 = tensor.insert_slice %c into %0[0, 6] [4, 2] [1, 1] : tensor<4x2xf32> into tensor<4x9xf32>
  %2 = tensor.insert_slice %ta into %1[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x9xf32>
  return %2 : tensor<4x9xf32>
}

// -----

// Tests that chains whose inserts may not commute or move stay as they
// are: overlapping boxes, a dynamic offset, and a destination that is not
// fresh. Of a chain whose intermediate tensor something else reads, or
// whose next insert has a dynamic offset, only the inserts before move.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @kept
// CHECK:      %[[TA:.*]] = linalg.generic
// CHECK:      %[[E9:.*]] = tensor.empty() : tensor<4x9xf32>
// CHECK-NEXT: %[[E6B:.*]] = tensor.empty() : tensor<4x6xf32>
// CHECK-NEXT: %[[TB:.*]] = linalg.generic
// CHECK:      %[[S0:.*]] = tensor.insert_slice %[[TB]] into %[[E6B]][0, 0] [4, 3]
// CHECK-NEXT: %[[D0:.*]] = tensor.insert_slice %[[TB]] into %[[E9]][0, 0] [4, 3]
// CHECK-NEXT: %[[E6:.*]] = tensor.empty() : tensor<4x6xf32>
// CHECK-NEXT: %[[O0:.*]] = tensor.insert_slice %[[TB]] into %[[E6]][0, 0] [4, 3]
// CHECK-NEXT: %[[O1:.*]] = tensor.insert_slice %[[TA]] into %[[O0]][0, 2] [4, 3]
// CHECK-NEXT: %[[D1:.*]] = tensor.insert_slice %[[TA]] into %[[D0]][0, %arg2] [4, 3]
// CHECK-NEXT: %[[S1:.*]] = tensor.insert_slice %[[TA]] into %[[S0]][0, 3] [4, 3]
// CHECK-NEXT: %[[A0:.*]] = tensor.insert_slice %[[TB]] into %arg3[0, 0] [4, 3]
// CHECK-NEXT: %[[A1:.*]] = tensor.insert_slice %[[TA]] into %[[A0]][0, 3] [4, 3]
// CHECK-NEXT: return %[[O1]], %[[D1]], %[[S1]], %[[S0]], %[[A1]]
func.func @kept(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>, %k: index, %d: tensor<4x6xf32>) -> (tensor<4x6xf32>, tensor<4x9xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>) {
  %e = tensor.empty() : tensor<4x3xf32>
  %ta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = math.tanh %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %tb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.negf %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %e6 = tensor.empty() : tensor<4x6xf32>
  %o0 = tensor.insert_slice %tb into %e6[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %o1 = tensor.insert_slice %ta into %o0[0, 2] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %e9 = tensor.empty() : tensor<4x9xf32>
  %d0 = tensor.insert_slice %tb into %e9[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x9xf32>
  %d1 = tensor.insert_slice %ta into %d0[0, %k] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x9xf32>
  %e6b = tensor.empty() : tensor<4x6xf32>
  %s0 = tensor.insert_slice %tb into %e6b[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %s1 = tensor.insert_slice %ta into %s0[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %a0 = tensor.insert_slice %tb into %d[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %a1 = tensor.insert_slice %ta into %a0[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  return %o1, %d1, %s1, %s0, %a1 : tensor<4x6xf32>, tensor<4x9xf32>, tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// Tests that a fill whose value is made after the first slice stays where
// it is (its inserts then follow it), that an expand which splits a
// dimension is not folded into its insert, and that a concat of dynamic
// shape stays a concat.

#id = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @guards
// CHECK:      %[[TA:.*]] = linalg.generic
// CHECK:      %[[V:.*]] = tensor.extract %[[TA]]
// CHECK-NEXT: %[[E:.*]] = tensor.empty() : tensor<4x6xf32>
// CHECK-NEXT: %[[F:.*]] = linalg.fill ins(%[[V]] : f32) outs(%[[E]] : tensor<4x6xf32>)
// CHECK-NEXT: %[[I:.*]] = tensor.insert_slice %[[TA]] into %[[F]][0, 3] [4, 3]
// CHECK-NEXT: tensor.empty() : tensor<4x2x3xf32>
// CHECK-NEXT: %[[X:.*]] = tensor.expand_shape %arg1
// CHECK-NEXT: %[[S:.*]] = tensor.insert_slice %[[X]] into
// CHECK-NEXT: %[[C:.*]] = tensor.concat dim(0) %arg2, %arg2
// CHECK-NEXT: return %[[I]], %[[S]], %[[C]]
func.func @guards(%a: tensor<4x3xf32>, %b: tensor<6xf32>, %d: tensor<?x3xf32>) -> (tensor<4x6xf32>, tensor<4x2x3xf32>, tensor<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %e = tensor.empty() : tensor<4x3xf32>
  %ta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = math.tanh %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %v = tensor.extract %ta[%c0, %c0] : tensor<4x3xf32>
  %all = tensor.empty() : tensor<4x6xf32>
  %f = linalg.fill ins(%v : f32) outs(%all : tensor<4x6xf32>) -> tensor<4x6xf32>
  %i0 = tensor.insert_slice %ta into %f[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %x = tensor.expand_shape %b [[0, 1]] output_shape [2, 3] : tensor<6xf32> into tensor<2x3xf32>
  %e3 = tensor.empty() : tensor<4x2x3xf32>
  %s0 = tensor.insert_slice %x into %e3[1, 0, 0] [1, 2, 3] [1, 1, 1] : tensor<2x3xf32> into tensor<4x2x3xf32>
  %c = tensor.concat dim(0) %d, %d : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
  return %i0, %s0, %c : tensor<4x6xf32>, tensor<4x2x3xf32>, tensor<?x3xf32>
}
