// RUN: tofu-opt %s --tofu-gpu-parallel-loops --split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-gpu-parallel-loops="block-size=128" --split-input-file | FileCheck %s --check-prefix=BLOCK

// Tests that a bias gradient (reduction loop first) gets its parallel loop
// outside: 300 columns in blocks of 256 threads with a bound guard, and the
// reduction over 4 rows as a sequential loop in each thread that carries
// the sum in a register: the output element is loaded once before the
// loop and stored once after it.

// CHECK-LABEL: func.func @bias_gradient
// CHECK-DAG: %[[C300:.*]] = arith.constant 300 : index
// CHECK-DAG: %[[C4:.*]] = arith.constant 4 : index
// CHECK-DAG: %[[C256:.*]] = arith.constant 256 : index
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %[[C256]] : index
// CHECK: scf.parallel (%[[BID:.*]]) = (%{{.*}}) to (%[[C300]]) step (%[[STEP]]) {
// CHECK: scf.parallel (%[[THREAD:.*]]) = (%{{.*}}) to (%[[STEP]]) step
// CHECK: arith.addi %{{.*}}, %[[BID]] : index
// CHECK: arith.cmpi ult, %{{.*}}, %[[C300]] : index
// CHECK: scf.if
// CHECK: %[[OLD:.*]] = memref.load %arg1
// CHECK: %[[SUM:.*]] = scf.for %{{.*}} = %{{.*}} to %[[C4]] step %{{.*}} iter_args(%[[ACC:.*]] = %[[OLD]]) -> (f32) {
// CHECK-NOT: memref.store
// CHECK: %[[NEW:.*]] = arith.addf %[[ACC]], %{{.*}} : f32
// CHECK-NEXT: scf.yield %[[NEW]] : f32
// CHECK: memref.store %[[SUM]], %arg1
// CHECK-NOT: linalg.generic
// BLOCK-LABEL: func.func @bias_gradient
// BLOCK: arith.constant 128 : index
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @bias_gradient(%g: memref<4x300xf32>, %b: memref<300xf32>) {
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]} ins(%g : memref<4x300xf32>) outs(%b : memref<300xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %out, %in : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that the loops of a 3-D op are collapsed into one loop over the
// 2 * 3 * 5 elements before tiling, so that one kernel has a 1-D grid
// of 256-thread blocks whatever the rank.

// CHECK-LABEL: func.func @relu_3d
// CHECK: %[[N0:.*]] = arith.muli %{{.*}}, %{{.*}} : index
// CHECK-NEXT: %[[N1:.*]] = arith.muli %[[N0]], %{{.*}} : index
// CHECK-NEXT: %[[N:.*]] = arith.muli %[[N1]], %{{.*}} : index
// CHECK: scf.parallel (%{{.*}}) = (%{{.*}}) to (%[[N]]) step
// CHECK-NEXT: scf.parallel (%{{[a-z0-9]+}}) = (%{{.*}}) to (%{{.*}}) step (%{{[a-z0-9_]+}}) {
// CHECK: arith.maximumf
// CHECK-NOT: scf.parallel
// CHECK: return
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @relu_3d(%x: memref<2x3x5xf32>, %y: memref<2x3x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x : memref<2x3x5xf32>) outs(%y : memref<2x3x5xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %zero : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Tests that the parallel loop that walks the last dimension of the
// largest operand (the 64 x 300 input, not the 300 x 64 output) varies
// fastest: the collapsed thread index t reads x[r, t mod 300], so that
// neighbouring threads read neighbouring elements.

// CHECK-LABEL: func.func @coalesced
// CHECK: scf.if
// CHECK-NEXT: %[[COL:.*]] = arith.remsi %{{.*}}, %c300{{.*}} : index
// CHECK-NEXT: %[[ROW:.*]] = arith.divsi %{{.*}}, %c300{{.*}} : index
// CHECK-NEXT: %[[I:.*]] = affine.apply #{{.*}}(%[[ROW]])
// CHECK-NEXT: %[[J:.*]] = affine.apply #{{.*}}(%[[COL]])
// CHECK-NEXT: memref.load %arg0[%[[I]], %[[J]]] : memref<64x300xf32>
#xy = affine_map<(d0, d1) -> (d0, d1)>
#yx = affine_map<(d0, d1) -> (d1, d0)>
func.func @coalesced(%x: memref<64x300xf32>, %y: memref<300x64xf32>) {
  linalg.generic {indexing_maps = [#xy, #yx], iterator_types = ["parallel", "parallel"]} ins(%x : memref<64x300xf32>) outs(%y : memref<300x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.negf %in : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Tests that a full reduction without parallel loops and a 0-d op (no
// loop at all) still become one-iteration parallel loops (kernels), with
// no scalar code left on the host, and that a named op (fill) is
// generalized.

// CHECK-LABEL: func.func @full_reduction
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.for
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: memref.store
// CHECK: scf.parallel
// CHECK: scf.parallel
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %{{.*}}[] : memref<f32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.reduce
// CHECK: return
#all = affine_map<(d0) -> (d0)>
#none = affine_map<(d0) -> ()>
func.func @full_reduction(%x: memref<64xf32>, %s: memref<f32>, %v: memref<8xf32>, %t: memref<f32>) {
  linalg.generic {indexing_maps = [#all, #none], iterator_types = ["reduction"]} ins(%x : memref<64xf32>) outs(%s : memref<f32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%v : memref<8xf32>)
  linalg.fill ins(%one : f32) outs(%t : memref<f32>)
  return
}
