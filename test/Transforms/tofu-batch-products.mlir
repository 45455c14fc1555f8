// RUN: tofu-opt %s --tofu-batch-products -split-input-file | FileCheck %s

// Tests that the products of each slice of %x (3 time steps) by the same
// weight become one product over %x with the time step as an outer parallel
// loop, and that each old result is its slice of the new one. The slices'
// order in the body does not matter; the slice ops and fills that only the
// old products read are gone.

// CHECK-DAG: #[[X:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[W:.*]] = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
// CHECK-DAG: #[[Y:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @matmuls(
// CHECK-SAME:      %[[XS:.*]]: tensor<3x2x4xf32>, %[[WT:.*]]: tensor<4x5xf32>
// CHECK:         %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<3x2x5xf32>
// CHECK:         %[[ALL:.*]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XS]], %[[WT]] : tensor<3x2x4xf32>, tensor<4x5xf32>) outs(%[[FILL]] : tensor<3x2x5xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK:         %[[S2:.*]] = tensor.extract_slice %[[ALL]][2, 0, 0] [1, 2, 5] [1, 1, 1]
// CHECK:         %[[R2:.*]] = tensor.collapse_shape %[[S2]] {{\[\[}}0, 1], [2]]
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[ALL]][0, 0, 0] [1, 2, 5] [1, 1, 1]
// CHECK:         %[[R0:.*]] = tensor.collapse_shape %[[S0]]
// CHECK:         %[[S1:.*]] = tensor.extract_slice %[[ALL]][1, 0, 0] [1, 2, 5] [1, 1, 1]
// CHECK:         %[[R1:.*]] = tensor.collapse_shape %[[S1]]
// CHECK-NOT:     linalg.matmul
// CHECK-NOT:     tensor.extract_slice %[[XS]]
// CHECK:         return %[[R0]], %[[R1]], %[[R2]]
func.func @matmuls(%xs: tensor<3x2x4xf32>, %w: tensor<4x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %s2 = tensor.extract_slice %xs[2, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<1x2x4xf32>
  %x2 = tensor.collapse_shape %s2 [[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
  %e2 = tensor.empty() : tensor<2x5xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %y2 = linalg.matmul ins(%x2, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%f2 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %s0 = tensor.extract_slice %xs[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<1x2x4xf32>
  %x0 = tensor.collapse_shape %s0 [[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
  %e0 = tensor.empty() : tensor<2x5xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %y0 = linalg.matmul ins(%x0, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%f0 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %s1 = tensor.extract_slice %xs[1, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<1x2x4xf32>
  %x1 = tensor.collapse_shape %s1 [[0, 1], [2]] : tensor<1x2x4xf32> into tensor<2x4xf32>
  %e1 = tensor.empty() : tensor<2x5xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %y1 = linalg.matmul ins(%x1, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%f1 : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %y0, %y1, %y2 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// Tests a product whose sliced operand comes second and is a
// rank-reducing slice (y = w x_t): the shared operand stays unindexed by
// the new loop.

// CHECK-DAG: #[[WS:.*]] = affine_map<(d0, d1, d2, d3) -> (d1, d3)>
// CHECK-DAG: #[[XS2:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d3, d2)>
// CHECK-DAG: #[[YS:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @sliced_second(
// CHECK:         linalg.generic {indexing_maps = [#[[WS]], #[[XS2]], #[[YS]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%{{.*}}, %{{.*}} : tensor<3x4xf32>, tensor<2x4x6xf32>) outs(%{{.*}} : tensor<2x3x6xf32>)
// CHECK-COUNT-2: tensor.extract_slice %{{.*}} [1, 3, 6] [1, 1, 1] : tensor<2x3x6xf32> to tensor<1x3x6xf32>
#gk = affine_map<(g, h, k) -> (g, k)>
#kh = affine_map<(g, h, k) -> (k, h)>
#gh = affine_map<(g, h, k) -> (g, h)>
func.func @sliced_second(%xs: tensor<2x4x6xf32>, %w: tensor<3x4xf32>) -> (tensor<3x6xf32>, tensor<3x6xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<3x6xf32>
  %x0 = tensor.extract_slice %xs[0, 0, 0] [1, 4, 6] [1, 1, 1] : tensor<2x4x6xf32> to tensor<4x6xf32>
  %x1 = tensor.extract_slice %xs[1, 0, 0] [1, 4, 6] [1, 1, 1] : tensor<2x4x6xf32> to tensor<4x6xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e : tensor<3x6xf32>) -> tensor<3x6xf32>
  %y0 = linalg.generic {indexing_maps = [#gk, #kh, #gh], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %x0 : tensor<3x4xf32>, tensor<4x6xf32>) outs(%f0 : tensor<3x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x6xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e : tensor<3x6xf32>) -> tensor<3x6xf32>
  %y1 = linalg.generic {indexing_maps = [#gk, #kh, #gh], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w, %x1 : tensor<3x4xf32>, tensor<4x6xf32>) outs(%f1 : tensor<3x6xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x6xf32>
  return %y0, %y1 : tensor<3x6xf32>, tensor<3x6xf32>
}

// -----

// Tests what stays as it is: a slice missing (2 of 3 time steps), a slice
// taken twice, products of another weight, a fill that is not zero, a fill
// that something else reads, and a slice of the other dimensions.

// CHECK-LABEL: func.func @kept(
// CHECK-COUNT-11: linalg.matmul
// CHECK-NOT:     linalg.generic
func.func @kept(%xs: tensor<3x2x4xf32>, %w: tensor<4x5xf32>, %v: tensor<4x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e = tensor.empty() : tensor<2x5xf32>
  %s0 = tensor.extract_slice %xs[0, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
  %s1 = tensor.extract_slice %xs[1, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
  %s2 = tensor.extract_slice %xs[2, 0, 0] [1, 2, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<2x4xf32>
  // Two of three slices by %w.
  %a0f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %a0 = linalg.matmul ins(%s0, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%a0f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %a1f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %a1 = linalg.matmul ins(%s1, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%a1f : tensor<2x5xf32>) -> tensor<2x5xf32>
  // Slice 0 twice by %v, with slice 1 and 2 once.
  %b0f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %b0 = linalg.matmul ins(%s0, %v : tensor<2x4xf32>, tensor<4x5xf32>) outs(%b0f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %b1f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %b1 = linalg.matmul ins(%s0, %v : tensor<2x4xf32>, tensor<4x5xf32>) outs(%b1f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %b2f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %b2 = linalg.matmul ins(%s1, %v : tensor<2x4xf32>, tensor<4x5xf32>) outs(%b2f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %b3f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %b3 = linalg.matmul ins(%s2, %v : tensor<2x4xf32>, tensor<4x5xf32>) outs(%b3f : tensor<2x5xf32>) -> tensor<2x5xf32>
  // All three slices by %x's own slice 2 (a sliced shared operand), into
  // fills of one and of a zero read twice.
  %c0f = linalg.fill ins(%one : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %c0 = linalg.matmul ins(%s2, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%c0f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %c1f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %c1 = linalg.matmul ins(%s1, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%c1f : tensor<2x5xf32>) -> tensor<2x5xf32>
  // A slice of the second dimension.
  %t = tensor.extract_slice %xs[0, 0, 0] [3, 1, 4] [1, 1, 1] : tensor<3x2x4xf32> to tensor<3x4xf32>
  %t0 = tensor.extract_slice %t[0, 0] [2, 4] [1, 1] : tensor<3x4xf32> to tensor<2x4xf32>
  %d0f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %d0 = linalg.matmul ins(%t0, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%d0f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %t1 = tensor.extract_slice %t[1, 0] [2, 4] [1, 1] : tensor<3x4xf32> to tensor<2x4xf32>
  %d1f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x5xf32>) -> tensor<2x5xf32>
  %d1 = linalg.matmul ins(%t1, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%d1f : tensor<2x5xf32>) -> tensor<2x5xf32>
  %e3 = tensor.empty() : tensor<2x5xf32>
  %shared = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x5xf32>) -> tensor<2x5xf32>
  %g0 = linalg.matmul ins(%s0, %w : tensor<2x4xf32>, tensor<4x5xf32>) outs(%shared : tensor<2x5xf32>) -> tensor<2x5xf32>
  return %a0, %a1, %b0, %b1, %b2, %b3, %c0, %c1, %d0, %d1, %g0, %shared : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}

// -----

// Tests more that stays as it is: slices that keep the unit dimension
// without a collapse, products with 0-d results, bodies with the same op
// names on other operands, and zero fills of both signs.

#mk = affine_map<(m, n, k) -> (m, k)>
#kn = affine_map<(m, n, k) -> (k, n)>
#mn = affine_map<(m, n, k) -> (m, n)>
// CHECK-LABEL: func.func @kept_shapes(
// CHECK-COUNT-2: linalg.batch_matmul
// CHECK-COUNT-2: linalg.dot
// CHECK-COUNT-4: linalg.generic {{.*}} outs(%{{.*}} : tensor<3x5xf32>)
// CHECK-NOT:     tensor<2x3x5xf32>
func.func @kept_shapes(%xs: tensor<2x3x4xf32>, %w3: tensor<1x4x5xf32>, %vs: tensor<2x4xf32>, %v: tensor<4xf32>, %w: tensor<4x5xf32>, %w2: tensor<4x5xf32>) -> (tensor<1x3x5xf32>, tensor<1x3x5xf32>, tensor<f32>, tensor<f32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>) {
  %z = arith.constant 0.0 : f32
  %nz = arith.constant -0.0 : f32
  %e3 = tensor.empty() : tensor<1x3x5xf32>
  %u0 = tensor.extract_slice %xs[0, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<1x3x4xf32>
  %uf0 = linalg.fill ins(%z : f32) outs(%e3 : tensor<1x3x5xf32>) -> tensor<1x3x5xf32>
  %uy0 = linalg.batch_matmul ins(%u0, %w3 : tensor<1x3x4xf32>, tensor<1x4x5xf32>) outs(%uf0 : tensor<1x3x5xf32>) -> tensor<1x3x5xf32>
  %u1 = tensor.extract_slice %xs[1, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<1x3x4xf32>
  %uf1 = linalg.fill ins(%z : f32) outs(%e3 : tensor<1x3x5xf32>) -> tensor<1x3x5xf32>
  %uy1 = linalg.batch_matmul ins(%u1, %w3 : tensor<1x3x4xf32>, tensor<1x4x5xf32>) outs(%uf1 : tensor<1x3x5xf32>) -> tensor<1x3x5xf32>
  %e0 = tensor.empty() : tensor<f32>
  %d0 = tensor.extract_slice %vs[0, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<4xf32>
  %df0 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %dy0 = linalg.dot ins(%d0, %v : tensor<4xf32>, tensor<4xf32>) outs(%df0 : tensor<f32>) -> tensor<f32>
  %d1 = tensor.extract_slice %vs[1, 0] [1, 4] [1, 1] : tensor<2x4xf32> to tensor<4xf32>
  %df1 = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %dy1 = linalg.dot ins(%d1, %v : tensor<4xf32>, tensor<4xf32>) outs(%df1 : tensor<f32>) -> tensor<f32>
  %e = tensor.empty() : tensor<3x5xf32>
  %s0 = tensor.extract_slice %xs[0, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<3x4xf32>
  %s1 = tensor.extract_slice %xs[1, 0, 0] [1, 3, 4] [1, 1, 1] : tensor<2x3x4xf32> to tensor<3x4xf32>
  // The same op names, on other operands: -x * y against x * y.
  %f0 = linalg.fill ins(%z : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %y0 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s0, %w : tensor<3x4xf32>, tensor<4x5xf32>) outs(%f0 : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %n = arith.negf %x : f32
    %m = arith.mulf %n, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %y1 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s1, %w : tensor<3x4xf32>, tensor<4x5xf32>) outs(%f1 : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %n = arith.negf %y : f32
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  // Fills of -0.0 and +0.0 (another weight: a batch of its own).
  %g0 = linalg.fill ins(%nz : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %h0 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s0, %w2 : tensor<3x4xf32>, tensor<4x5xf32>) outs(%g0 : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  %g1 = linalg.fill ins(%z : f32) outs(%e : tensor<3x5xf32>) -> tensor<3x5xf32>
  %h1 = linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%s1, %w2 : tensor<3x4xf32>, tensor<4x5xf32>) outs(%g1 : tensor<3x5xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %m = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %m : f32
    linalg.yield %s : f32
  } -> tensor<3x5xf32>
  return %uy0, %uy1, %dy0, %dy1, %y0, %y1, %h0, %h1 : tensor<1x3x5xf32>, tensor<1x3x5xf32>, tensor<f32>, tensor<f32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>, tensor<3x5xf32>
}

// -----

// Tests that a batch that slices the result of an earlier batch takes the
// tensor that replaced it: the rows of the first product of x by %w, each
// by %v, become one product over that slice of the first batch's result.

// CHECK-LABEL: func.func @chained(
// CHECK:         %[[FIRST:.*]] = linalg.generic {{.*}} ins(%{{.*}}, %{{.*}} : tensor<2x4x5xf32>, tensor<5x6xf32>) outs(%{{.*}} : tensor<2x4x6xf32>)
// CHECK:         %[[ROW:.*]] = tensor.extract_slice %[[FIRST]][0, 0, 0] [1, 4, 6]
// CHECK:         %[[P0:.*]] = tensor.collapse_shape %[[ROW]]
// CHECK:         linalg.generic {{.*}} ins(%[[P0]], %{{.*}} : tensor<4x6xf32>, tensor<6x3xf32>) outs(%{{.*}} : tensor<4x3xf32>)
func.func @chained(%xs: tensor<2x4x5xf32>, %w: tensor<5x6xf32>, %v: tensor<6x3xf32>) -> (tensor<4x6xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x6xf32>
  %s0 = tensor.extract_slice %xs[0, 0, 0] [1, 4, 5] [1, 1, 1] : tensor<2x4x5xf32> to tensor<4x5xf32>
  %f0 = linalg.fill ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p0 = linalg.matmul ins(%s0, %w : tensor<4x5xf32>, tensor<5x6xf32>) outs(%f0 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %s1 = tensor.extract_slice %xs[1, 0, 0] [1, 4, 5] [1, 1, 1] : tensor<2x4x5xf32> to tensor<4x5xf32>
  %f1 = linalg.fill ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %p1 = linalg.matmul ins(%s1, %w : tensor<4x5xf32>, tensor<5x6xf32>) outs(%f1 : tensor<4x6xf32>) -> tensor<4x6xf32>
  %e3 = tensor.empty() : tensor<3xf32>
  %r0 = tensor.extract_slice %p0[0, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
  %g0 = linalg.fill ins(%z : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %q0 = linalg.vecmat ins(%r0, %v : tensor<6xf32>, tensor<6x3xf32>) outs(%g0 : tensor<3xf32>) -> tensor<3xf32>
  %r1 = tensor.extract_slice %p0[1, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
  %g1 = linalg.fill ins(%z : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %q1 = linalg.vecmat ins(%r1, %v : tensor<6xf32>, tensor<6x3xf32>) outs(%g1 : tensor<3xf32>) -> tensor<3xf32>
  %r2 = tensor.extract_slice %p0[2, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
  %g2 = linalg.fill ins(%z : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %q2 = linalg.vecmat ins(%r2, %v : tensor<6xf32>, tensor<6x3xf32>) outs(%g2 : tensor<3xf32>) -> tensor<3xf32>
  %r3 = tensor.extract_slice %p0[3, 0] [1, 6] [1, 1] : tensor<4x6xf32> to tensor<6xf32>
  %g3 = linalg.fill ins(%z : f32) outs(%e3 : tensor<3xf32>) -> tensor<3xf32>
  %q3 = linalg.vecmat ins(%r3, %v : tensor<6xf32>, tensor<6x3xf32>) outs(%g3 : tensor<3xf32>) -> tensor<3xf32>
  return %p1, %q0, %q1, %q2, %q3 : tensor<4x6xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
