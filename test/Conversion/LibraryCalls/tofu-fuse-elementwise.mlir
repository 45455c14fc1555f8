// RUN: tofu-opt %s --tofu-fuse-elementwise | FileCheck %s

// Tests that an element-wise chain with single uses becomes one generic, and
// that the scaling of a GEMM operand is not fused into the GEMM, which stays
// a multiply-accumulate for cuBLAS (upstream fusion would fuse it).

// CHECK-LABEL: func.func @chain
// CHECK: linalg.generic
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: math.exp
// CHECK-NEXT: linalg.yield
// CHECK: %[[SCALED:.*]] = linalg.generic
// CHECK: arith.mulf
// CHECK: %[[FILL:.*]] = linalg.fill
// CHECK: linalg.generic {{.*}} ins(%[[SCALED]], %{{.*}} : tensor<4x8xf32>, tensor<8x3xf32>) outs(%[[FILL]] : tensor<4x3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.mulf
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
#id = affine_map<(d0, d1) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @chain(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x8xf32>, tensor<4x3xf32>) {
  %e = tensor.empty() : tensor<4x8xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %y : tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %b = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %s = math.exp %i : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %o: f32):
    %c = arith.constant 2.0 : f32
    %s = arith.mulf %i, %c : f32
    linalg.yield %s : f32
  } -> tensor<4x8xf32>
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s2, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %b, %m : tensor<4x8xf32>, tensor<4x3xf32>
}

// Tests that a sum of two products into zero fills, each used once (a
// weight's gradient summed over two uses), becomes the later product
// accumulating into the earlier one (beta = 1 for the library call), and
// that a product with another use keeps its zero fill and the sum.

// CHECK-LABEL: func.func @accumulate
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[FIRST:.*]] = linalg.generic {{.*}} outs(%[[ZERO]] : tensor<4x3xf32>)
// CHECK-NOT: linalg.fill
// CHECK: %[[SECOND:.*]] = linalg.generic {{.*}} ins(%arg2, %arg3 : tensor<4x8xf32>, tensor<8x3xf32>) outs(%[[FIRST]] : tensor<4x3xf32>)
// CHECK-NOT: linalg.generic
// CHECK: return %[[SECOND]]
func.func @accumulate(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %y: tensor<4x8xf32>, %v: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m1 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f1 : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m2 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%y, %v : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f2 : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m1, %m2 : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %sum : tensor<4x3xf32>
}

// CHECK-LABEL: func.func @shared_product
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[PRODUCT:.*]] = linalg.generic {{.*}} outs(%[[ZERO]] : tensor<4x3xf32>)
// CHECK: %[[SUM:.*]] = linalg.generic {{.*}} ins(%arg2, %[[PRODUCT]] : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: arith.addf
// CHECK: return %[[SUM]], %[[PRODUCT]]
func.func @shared_product(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %a: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m1 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f1 : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %m1 : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %sum, %m1 : tensor<4x3xf32>, tensor<4x3xf32>
}

// Tests that a product is not made to accumulate into a slice of another
// tensor (an LSTM's recurrent product added to its time step's slice of
// the batched input product), through a reshape or not: bufferization
// would copy the slice first. The sums stay and fuse.

// CHECK-LABEL: func.func @slice_term
// CHECK: %[[ZERO:.*]] = linalg.fill
// CHECK: %[[PRODUCT:.*]] = linalg.generic {{.*}} outs(%[[ZERO]] : tensor<4x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[PRODUCT]] : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: arith.addf
// CHECK: %[[ZERO2:.*]] = linalg.fill
// CHECK: %[[PRODUCT2:.*]] = linalg.generic {{.*}} outs(%[[ZERO2]] : tensor<4x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%[[PRODUCT2]], %{{.*}} : tensor<4x3xf32>, tensor<4x3xf32>)
// CHECK: arith.addf
func.func @slice_term(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>, %all: tensor<2x4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %a = tensor.extract_slice %all[0, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<2x4x3xf32> to tensor<4x3xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m1 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f1 : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %sum = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%a, %m1 : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %b3 = tensor.extract_slice %all[1, 0, 0] [1, 4, 3] [1, 1, 1] : tensor<2x4x3xf32> to tensor<1x4x3xf32>
  %b = tensor.collapse_shape %b3 [[0, 1], [2]] : tensor<1x4x3xf32> into tensor<4x3xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m2 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f2 : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %sum2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%m2, %b : tensor<4x3xf32>, tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  return %sum, %sum2 : tensor<4x3xf32>, tensor<4x3xf32>
}

// Tests that a sum of tensors that are zeros but for disjoint slices (the
// gradient of an LSTM's gates, one slice per gate) becomes the slices
// inserted into one tensor: with no fill when they cover it, into a zero
// fill when they do not. Overlapping slices, a fill other than zero, and a
// sum that also scales stay sums.

#id2 = affine_map<(d0, d1) -> (d0, d1)>

// CHECK-LABEL: func.func @slices_cover
// CHECK-SAME:      %[[A:[a-z0-9]+]]: tensor<2x3xf32>, %[[B:[a-z0-9]+]]: tensor<2x3xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<2x6xf32>
// CHECK:         %[[I0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0] [2, 3] [1, 1]
// CHECK:         %[[I1:.*]] = tensor.insert_slice %[[B]] into %[[I0]][0, 3] [2, 3] [1, 1]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[I1]]
func.func @slices_cover(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x6xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x6xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p0 = tensor.insert_slice %a into %z0[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p1 = tensor.insert_slice %b into %z1[0, 3] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %o = tensor.empty() : tensor<2x6xf32>
  %s = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p0, %p1 : tensor<2x6xf32>, tensor<2x6xf32>) outs(%o : tensor<2x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x6xf32>
  return %s : tensor<2x6xf32>
}

// CHECK-LABEL: func.func @slices_chain
// CHECK:         %[[Z:.*]] = linalg.fill {{.*}} -> tensor<2x8xf32>
// CHECK:         %[[I0:.*]] = tensor.insert_slice %{{.*}} into %[[Z]][0, 0] [2, 2] [1, 1]
// CHECK:         %[[I1:.*]] = tensor.insert_slice %{{.*}} into %[[I0]][0, 2] [2, 2] [1, 1]
// CHECK:         %[[I2:.*]] = tensor.insert_slice %{{.*}} into %[[I1]][0, 6] [2, 2] [1, 1]
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[I2]]
func.func @slices_chain(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %c: tensor<2x2xf32>) -> tensor<2x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8xf32>
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %p0 = tensor.insert_slice %a into %z0[0, 0] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %p1 = tensor.insert_slice %b into %z1[0, 2] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8xf32>) -> tensor<2x8xf32>
  %p2 = tensor.insert_slice %c into %z2[0, 6] [2, 2] [1, 1] : tensor<2x2xf32> into tensor<2x8xf32>
  %o = tensor.empty() : tensor<2x8xf32>
  %s0 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p0, %p1 : tensor<2x8xf32>, tensor<2x8xf32>) outs(%o : tensor<2x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  %s1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%s0, %p2 : tensor<2x8xf32>, tensor<2x8xf32>) outs(%o : tensor<2x8xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x8xf32>
  return %s1 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @slices_kept
// CHECK-COUNT-3: linalg.generic
func.func @slices_kept(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<2x6xf32>
  %o = tensor.empty() : tensor<2x6xf32>
  // Overlapping: columns 0-2 and 2-4.
  %z0 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p0 = tensor.insert_slice %a into %z0[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p1 = tensor.insert_slice %b into %z1[0, 2] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %s0 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p0, %p1 : tensor<2x6xf32>, tensor<2x6xf32>) outs(%o : tensor<2x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x6xf32>
  // A fill of one.
  %z2 = linalg.fill ins(%one : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p2 = tensor.insert_slice %a into %z2[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p3 = tensor.insert_slice %b into %z3[0, 3] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %s1 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p2, %p3 : tensor<2x6xf32>, tensor<2x6xf32>) outs(%o : tensor<2x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.addf %x, %y : f32
    linalg.yield %r : f32
  } -> tensor<2x6xf32>
  // A sum that also scales.
  %z4 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p4 = tensor.insert_slice %a into %z4[0, 0] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %z5 = linalg.fill ins(%zero : f32) outs(%e : tensor<2x6xf32>) -> tensor<2x6xf32>
  %p5 = tensor.insert_slice %b into %z5[0, 3] [2, 3] [1, 1] : tensor<2x3xf32> into tensor<2x6xf32>
  %s2 = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%p4, %p5 : tensor<2x6xf32>, tensor<2x6xf32>) outs(%o : tensor<2x6xf32>) {
  ^bb0(%x: f32, %y: f32, %out: f32):
    %r = arith.addf %x, %y : f32
    %m = arith.mulf %r, %two : f32
    linalg.yield %m : f32
  } -> tensor<2x6xf32>
  return %s0, %s1, %s2 : tensor<2x6xf32>, tensor<2x6xf32>, tensor<2x6xf32>
}

// Tests that a product whose operand is a fill or a splat constant (an
// LSTM's zero initial state times a recurrent weight, once the partitioner
// has made the matmul a generic) keeps that operand, and so stays a GEMM
// for the library call, while an element-wise op reads the fill's value
// and the constant's as scalars and drops those operands.

// CHECK-LABEL: func.func @uniform_inputs
// CHECK-DAG: %[[H:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-DAG: %[[C:.*]] = arith.constant dense<3.000000e+00> : tensor<8x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[H]], %{{.*}} : tensor<4x8xf32>, tensor<8x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[C]] : tensor<4x8xf32>, tensor<8x3xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}} : tensor<4x8xf32>) outs(%{{.*}} : tensor<4x8xf32>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[IN]], %{{.*}} : f32
// CHECK-NEXT: arith.mulf %[[SUM]], %{{.*}} : f32
func.func @uniform_inputs(%x: tensor<4x8xf32>, %w: tensor<8x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %half = arith.constant 0.5 : f32
  %e = tensor.empty() : tensor<4x8xf32>
  %h = linalg.fill ins(%half : f32) outs(%e : tensor<4x8xf32>) -> tensor<4x8xf32>
  %c = arith.constant dense<3.0> : tensor<8x3xf32>
  %c48 = arith.constant dense<2.0> : tensor<4x8xf32>
  %e2 = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x3xf32>) -> tensor<4x3xf32>
  %m = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%h, %w : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %n = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %c : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3xf32>
  %a = linalg.generic {indexing_maps = [#id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%x, %h, %c48 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) outs(%e : tensor<4x8xf32>) {
  ^bb0(%i: f32, %j: f32, %k: f32, %o: f32):
    %s = arith.addf %i, %j : f32
    %t = arith.mulf %s, %k : f32
    linalg.yield %t : f32
  } -> tensor<4x8xf32>
  return %m, %n, %a : tensor<4x3xf32>, tensor<4x3xf32>, tensor<4x8xf32>
}

// Tests the operands that are not tensors of one value: a scalar operand
// stays an operand unless it is a constant, a rank-0 fill folds like any
// other, and a convolution (a generic one, as the partitioner leaves it)
// keeps a filled filter.

// CHECK-LABEL: func.func @scalar_operands
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[S:[a-z0-9_]+]] : tensor<4xf32>, f32)
// CHECK-NEXT: ^bb0(%[[X:.*]]: f32, %[[Y:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[A:.*]] = arith.addf %[[M]], %{{.*}} : f32
// CHECK-NEXT: arith.subf %[[A]], %{{.*}} : f32
// CHECK: %[[W:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<3x3x5xf32>)
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[W]] : tensor<2x10x3xf32>, tensor<3x3x5xf32>)
#v = affine_map<(d0) -> (d0)>
#s = affine_map<(d0) -> ()>
#image = affine_map<(n, f, x, c, w) -> (n, x + w, c)>
#filter = affine_map<(n, f, x, c, w) -> (w, c, f)>
#result = affine_map<(n, f, x, c, w) -> (n, x, f)>
func.func @scalar_operands(%a: tensor<4xf32>, %s: f32, %x: tensor<2x10x3xf32>) -> (tensor<4xf32>, tensor<2x8x5xf32>) {
  %two = arith.constant 2.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %r0 = linalg.fill ins(%two : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %r = linalg.generic {indexing_maps = [#v, #s, #s, #s, #v], iterator_types = ["parallel"]} ins(%a, %s, %two, %r0 : tensor<4xf32>, f32, f32, tensor<f32>) outs(%e : tensor<4xf32>) {
  ^bb0(%i: f32, %j: f32, %k: f32, %l: f32, %o: f32):
    %m = arith.mulf %i, %j : f32
    %n = arith.addf %m, %k : f32
    %p = arith.subf %n, %l : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %ew = tensor.empty() : tensor<3x3x5xf32>
  %w = linalg.fill ins(%s : f32) outs(%ew : tensor<3x3x5xf32>) -> tensor<3x3x5xf32>
  %eo = tensor.empty() : tensor<2x8x5xf32>
  %o = linalg.fill ins(%zero : f32) outs(%eo : tensor<2x8x5xf32>) -> tensor<2x8x5xf32>
  %c = linalg.generic {indexing_maps = [#image, #filter, #result], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %w : tensor<2x10x3xf32>, tensor<3x3x5xf32>) outs(%o : tensor<2x8x5xf32>) {
  ^bb0(%i: f32, %j: f32, %acc: f32):
    %p = arith.mulf %i, %j : f32
    %q = arith.addf %acc, %p : f32
    linalg.yield %q : f32
  } -> tensor<2x8x5xf32>
  return %r, %c : tensor<4xf32>, tensor<2x8x5xf32>
}
