// RUN: tofu-opt %s --tofu-cpu-row-reductions | FileCheck %s

// Tests that a sum of squares along rows of 64 becomes a loop over the rows
// and an inner loop that carries the partial sum, its add reassociable, that
// a row maximum carries its partial maximum the same way, and that a short
// row and a reduction over the outer loop stay as they are.

// CHECK-LABEL: func.func @rows
// CHECK: scf.for %[[I:.*]] = %c0 to %c4 step %c1 {
// CHECK:   %[[START:.*]] = memref.load %arg1[%[[I]]] : memref<4xf32>
// CHECK:   %[[SUM:.*]] = scf.for %[[J:.*]] = %c0 to %c64 step %c1 iter_args(%[[ACC:.*]] = %[[START]]) -> (f32) {
// CHECK:     %[[X:.*]] = memref.load %arg0[%[[I]], %[[J]]] : memref<4x64xf32>
// CHECK:     %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK:     %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]] fastmath<reassoc> : f32
// CHECK:     scf.yield %[[NEXT]] : f32
// CHECK:   memref.store %[[SUM]], %arg1[%[[I]]] : memref<4xf32>
// CHECK-NOT: linalg.generic
func.func @rows(%x: memref<4x64xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x64xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.mulf %a, %a : f32
    %r = arith.addf %o, %s : f32
    linalg.yield %r : f32
  }
  return
}

// CHECK-LABEL: func.func @row_max
// CHECK: scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(%[[ACC:.*]] = %{{.*}}) -> (f32) {
// CHECK:   %[[X:.*]] = memref.load %arg0
// CHECK:   %[[NEXT:.*]] = arith.maximumf %[[ACC]], %[[X]] : f32
// CHECK:   scf.yield %[[NEXT]] : f32
func.func @row_max(%x: memref<2x32xf32>, %out: memref<2xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<2x32xf32>) outs(%out : memref<2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.maximumf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}

// CHECK-LABEL: func.func @short_and_outer
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: scf.for
func.func @short_and_outer(%x: memref<4x8xf32>, %out: memref<4xf32>, %y: memref<64x4xf32>, %col: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<4x8xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>],
                  iterator_types = ["reduction", "parallel"]}
      ins(%y : memref<64x4xf32>) outs(%col : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %o, %a : f32
    linalg.yield %r : f32
  }
  return
}
