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

// Tests a batch norm's sum over images and pixels into a keepdim output: the
// images' loop, a reduction outside the row, loads and stores the channel's
// partial sum around each row; the output's unit dimensions are index 0.

// CHECK-LABEL: func.func @images_and_pixels
// CHECK: scf.for %[[N:.*]] = %c0 to %c2 step %c1 {
// CHECK:   scf.for %[[C:.*]] = %c0 to %c4 step %c1 {
// CHECK:     %[[START:.*]] = memref.load %arg1[%c0, %[[C]], %c0, %c0] : memref<1x4x1x1xf32>
// CHECK:     %[[SUM:.*]] = scf.for %[[P:.*]] = %c0 to %c64 step %c1 iter_args(%[[ACC:.*]] = %[[START]]) -> (f32) {
// CHECK:       memref.load %arg0[%[[N]], %[[C]], %[[P]]] : memref<2x4x64xf32>
// CHECK:       arith.addf %{{.*}} fastmath<reassoc> : f32
// CHECK:     memref.store %[[SUM]], %arg1[%c0, %[[C]], %c0, %c0] : memref<1x4x1x1xf32>
func.func @images_and_pixels(%x: memref<2x4x64xf32>, %sum: memref<1x4x1x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (0, d1, 0, 0)>],
                  iterator_types = ["reduction", "parallel", "reduction"]}
      ins(%x : memref<2x4x64xf32>) outs(%sum : memref<1x4x1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  return
}

// Tests that two innermost reduction loops (rows of 8 x 8 that a layout
// known only at run time keeps apart) both carry the partial sum.

// CHECK-LABEL: func.func @two_row_loops
// CHECK: scf.for %[[C:.*]] = %c0 to %c4 step %c1 {
// CHECK:   %[[START:.*]] = memref.load %arg1[%[[C]]]
// CHECK:   %[[OUTER:.*]] = scf.for %{{.*}} = %c0 to %c8 step %c1 iter_args(%[[A0:.*]] = %[[START]]) -> (f32) {
// CHECK:     %[[INNER:.*]] = scf.for %{{.*}} = %c0 to %{{c8.*}} step %c1 iter_args(%[[A1:.*]] = %[[A0]]) -> (f32) {
// CHECK:       arith.addf %{{.*}} fastmath<reassoc> : f32
// CHECK:     scf.yield %[[INNER]] : f32
// CHECK:   memref.store %[[OUTER]], %arg1[%[[C]]]
func.func @two_row_loops(%x: memref<4x8x8xf32, strided<[?, ?, ?], offset: ?>>, %sum: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0)>],
                  iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x : memref<4x8x8xf32, strided<[?, ?, ?], offset: ?>>) outs(%sum : memref<4xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  return
}

// Tests a whole-tensor sum into a 0-d output (a loss): no loop outside the
// row, the output loaded before it and stored after.

// CHECK-LABEL: func.func @total
// CHECK: %[[START:.*]] = memref.load %arg1[] : memref<f32>
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %c0 to %c32 step %c1 iter_args(%{{.*}} = %[[START]]) -> (f32) {
// CHECK: memref.store %[[SUM]], %arg1[] : memref<f32>
func.func @total(%x: memref<32xf32>, %out: memref<f32>) {
  linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                  iterator_types = ["reduction"]}
      ins(%x : memref<32xf32>) outs(%out : memref<f32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  return
}
