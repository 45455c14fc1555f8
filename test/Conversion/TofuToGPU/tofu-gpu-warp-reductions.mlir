// RUN: tofu-opt %s --tofu-gpu-warp-reductions --split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-gpu-warp-reductions="min-length=2000" --split-input-file | FileCheck %s --check-prefix=LONGER
// RUN: tofu-opt %s --split-input-file --pass-pipeline="builtin.module(tofu-gpu-warp-reductions,func.func(gpu-map-parallel-loops,convert-parallel-loops-to-gpu),canonicalize)" \
// RUN:   | FileCheck %s --check-prefix=LAUNCH

// Tests that a row reduction of 1024 (a variance's sum of squares, which
// also reads the row's mean) becomes one block per row (4) of one warp
// (32 lanes): lane j applies the body to elements j, j + 32, ... starting
// from 0, five xor shuffles (16, 8, 4, 2, 1) combine the lanes' sums, and
// lane 0 adds the row's sum to the output element.

// CHECK-LABEL: func.func @row_sum_of_squares
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x1024xf32>, %[[M:[a-z0-9]+]]: memref<4xf32>, %[[OUT:[a-z0-9]+]]: memref<4xf32>
// CHECK-DAG: %[[C0:.*]] = arith.constant 0 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[ROW:.*]]) = (%{{.*}}) to (%[[C4]])
// CHECK: scf.parallel (%[[LANE:.*]]) = (%{{.*}}) to (%[[C32:.*]]) step
// CHECK: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: %[[SUM:.*]] = scf.for %[[K:.*]] = %[[LANE]] to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f32)
// CHECK: memref.load %[[X]]
// CHECK: memref.load %[[M]]
// CHECK: arith.subf
// CHECK: %[[SQ:.*]] = arith.mulf
// CHECK: %[[NEXT:.*]] = arith.addf %[[ACC]], %[[SQ]]
// CHECK: scf.yield %[[NEXT]]
// CHECK: %[[S16:.*]], %{{.*}} = gpu.shuffle  xor %[[SUM]], %c16_i32, %c32_i32 : f32
// CHECK: %[[A16:.*]] = arith.addf %[[SUM]], %[[S16]]
// CHECK: gpu.shuffle  xor %[[A16]], %c8_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
// CHECK: %[[S1:.*]], %{{.*}} = gpu.shuffle  xor %[[A2:.*]], %c1_i32, %c32_i32 : f32
// CHECK: %[[TOTAL:.*]] = arith.addf %[[A2]], %[[S1]]
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %[[C0]]
// CHECK: scf.if %[[FIRST]]
// CHECK: %[[OLD:.*]] = memref.load %[[OUT]]
// CHECK: %[[NEW:.*]] = arith.addf %[[OLD]], %[[TOTAL]]
// CHECK: memref.store %[[NEW]], %[[OUT]]
// CHECK-NOT: linalg.generic
// The loops map to a launch of one block per row (4) and 32 threads per
// block, the shuffles in every thread, outside any loop or guard.
// LAUNCH-LABEL: func.func @row_sum_of_squares
// LAUNCH-DAG: %[[C4:.*]] = arith.constant 4 : index
// LAUNCH-DAG: %[[C32:.*]] = arith.constant 32 : index
// LAUNCH: gpu.launch blocks(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C4]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}}) threads(%{{.*}}, %{{.*}}, %{{.*}}) in (%{{.*}} = %[[C32]], %{{.*}} = %c1{{.*}}, %{{.*}} = %c1{{.*}})
// LAUNCH: scf.for
// LAUNCH: scf.yield
// LAUNCH-NEXT: }
// LAUNCH-NOT: scf.if
// LAUNCH-COUNT-5: gpu.shuffle  xor
// LAUNCH: scf.if
// LAUNCH: gpu.terminator
// LONGER-LABEL: func.func @row_sum_of_squares
// LONGER: linalg.generic
// LONGER-NOT: gpu.shuffle
#id = affine_map<(d0, d1) -> (d0, d1)>
#r0 = affine_map<(d0, d1) -> (d0)>
func.func @row_sum_of_squares(%x: memref<4x1024xf32>, %m: memref<4xf32>, %out: memref<4xf32>) {
  linalg.generic {indexing_maps = [#id, #r0, #r0], iterator_types = ["parallel", "reduction"]} ins(%x, %m : memref<4x1024xf32>, memref<4xf32>) outs(%out : memref<4xf32>) {
  ^bb0(%i: f32, %mean: f32, %o: f32):
    %d = arith.subf %i, %mean : f32
    %sq = arith.mulf %d, %d : f32
    %s = arith.addf %o, %sq : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests a softmax's row maximum into a keepdim output (d0, 0): the lanes
// start from -inf and combine with maximumf; the output element is
// indexed through the constant 0.

// CHECK-LABEL: func.func @keepdim_row_max
// CHECK: arith.constant 0xFF800000 : f32
// CHECK: scf.for
// CHECK: arith.maximumf
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK: scf.if
// CHECK: arith.maximumf
// CHECK: memref.store
#id = affine_map<(d0, d1) -> (d0, d1)>
#kept = affine_map<(d0, d1) -> (d0, 0)>
func.func @keepdim_row_max(%x: memref<8x512xf32>, %out: memref<8x1xf32>) {
  linalg.generic {indexing_maps = [#id, #kept], iterator_types = ["parallel", "reduction"]} ins(%x : memref<8x512xf32>) outs(%out : memref<8x1xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.maximumf %o, %i : f32
    linalg.yield %m : f32
  }
  return
}

// -----

// Tests a batch norm's sum over images, rows and columns (4 x 8 x 16 = 512
// per channel, the reduction loops not adjacent in the op): one block per
// channel; each lane's index k is split into the column (k mod 16), the
// row ((k / 16) mod 8) and the image ((k / 128) mod 4).

// CHECK-LABEL: func.func @channel_sums
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[C3:.*]]) step
// CHECK: scf.for %[[K:.*]] = %{{.*}} to %[[C512:.*]] step
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK: %[[COL:.*]] = arith.remui %[[K]], %[[C16]]
// CHECK: %[[K1:.*]] = arith.divui %[[K]], %[[C16]]
// CHECK: %[[ROWI:.*]] = arith.remui %[[K1]], %{{.*}}
// CHECK: %[[K2:.*]] = arith.divui %[[K1]], %{{.*}}
// CHECK: %[[IMG:.*]] = arith.remui %[[K2]], %{{.*}}
// CHECK-COUNT-5: gpu.shuffle  xor
#x = affine_map<(n, c, h, w) -> (n, c, h, w)>
#s = affine_map<(n, c, h, w) -> (0, c, 0, 0)>
func.func @channel_sums(%x: memref<4x3x8x16xf32>, %out: memref<1x3x1x1xf32>) {
  linalg.generic {indexing_maps = [#x, #s], iterator_types = ["reduction", "parallel", "reduction", "reduction"]} ins(%x : memref<4x3x8x16xf32>) outs(%out : memref<1x3x1x1xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %o, %i : f32
    linalg.yield %a : f32
  }
  return
}

// -----

// Tests what is left to tofu-gpu-parallel-loops: a column sum (its
// reduction loop walks rows, not the contiguous columns), a short row, a
// row whose last dimension is strided, an op reading its loop indices and
// an f64 row.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-5: linalg.generic
// CHECK-NOT: gpu.shuffle
#id = affine_map<(d0, d1) -> (d0, d1)>
#r0 = affine_map<(d0, d1) -> (d0)>
#r1 = affine_map<(d0, d1) -> (d1)>
func.func @left_alone(%x: memref<1024x64xf32>, %cols: memref<64xf32>, %short: memref<4x32xf32>, %rows: memref<4xf32>,
                      %strided: memref<4x1024xf32, strided<[2048, 2]>>, %row: memref<4x1024xf32>,
                      %d: memref<4x1024xf64>, %drows: memref<4xf64>) {
  linalg.generic {indexing_maps = [#id, #r1], iterator_types = ["reduction", "parallel"]} ins(%x : memref<1024x64xf32>) outs(%cols : memref<64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %o, %i : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%short : memref<4x32xf32>) outs(%rows : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %o, %i : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%strided : memref<4x1024xf32, strided<[2048, 2]>>) outs(%rows : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %o, %i : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%row : memref<4x1024xf32>) outs(%rows : memref<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %j = linalg.index 1 : index
    %k = arith.index_cast %j : index to i32
    %f = arith.sitofp %k : i32 to f32
    %p = arith.mulf %i, %f : f32
    %a = arith.addf %o, %p : f32
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%d : memref<4x1024xf64>) outs(%drows : memref<4xf64>) {
  ^bb0(%i: f64, %o: f64):
    %a = arith.addf %o, %i : f64
    linalg.yield %a : f64
  }
  return
}

// -----

// Tests three more ops left alone: an output that is also an input (the
// lanes would read it before lane 0 writes it), an op inside another
// parallel loop (whose mapping would put the lanes in a sequential loop),
// and rows that share one output element (a rank-0 output: the blocks'
// lanes 0 would update it together).

// CHECK-LABEL: func.func @more_left_alone
// CHECK-NOT: gpu.shuffle
// CHECK-COUNT-3: linalg.generic
// CHECK-NOT: gpu.shuffle
#id = affine_map<(d0, d1) -> (d0, d1)>
#r0 = affine_map<(d0, d1) -> (d0)>
#all = affine_map<(d0, d1) -> ()>
func.func @more_left_alone(%x: memref<4x1024xf32>, %rows: memref<4xf32>, %b: memref<2x4x128xf32>,
                           %brows: memref<2x4xf32>, %total: memref<f32>) {
  linalg.generic {indexing_maps = [#id, #r0, #r0], iterator_types = ["parallel", "reduction"]} ins(%x, %rows : memref<4x1024xf32>, memref<4xf32>) outs(%rows : memref<4xf32>) {
  ^bb0(%i: f32, %r: f32, %o: f32):
    %p = arith.mulf %i, %r : f32
    %a = arith.addf %o, %p : f32
    linalg.yield %a : f32
  }
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.parallel (%i) = (%c0) to (%c2) step (%c1) {
    %xs = memref.subview %b[%i, 0, 0] [1, 4, 128] [1, 1, 1] : memref<2x4x128xf32> to memref<4x128xf32, strided<[128, 1], offset: ?>>
    %os = memref.subview %brows[%i, 0] [1, 4] [1, 1] : memref<2x4xf32> to memref<4xf32, strided<[1], offset: ?>>
    linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%xs : memref<4x128xf32, strided<[128, 1], offset: ?>>) outs(%os : memref<4xf32, strided<[1], offset: ?>>) {
    ^bb0(%v: f32, %o: f32):
      %a = arith.addf %o, %v : f32
      linalg.yield %a : f32
    }
    scf.reduce
  }
  linalg.generic {indexing_maps = [#id, #all], iterator_types = ["parallel", "reduction"]} ins(%x : memref<4x1024xf32>) outs(%total : memref<f32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %o, %i : f32
    linalg.yield %a : f32
  }
  return
}
