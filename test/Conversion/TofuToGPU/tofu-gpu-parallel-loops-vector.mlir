// RUN: tofu-opt %s --tofu-gpu-parallel-loops="vector-loads=true" --canonicalize --cse --split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-gpu-parallel-loops --split-input-file | FileCheck %s --check-prefix=PLAIN

// Tests the groups of vector-loads: a bias added to rows and scaled by a
// transposed input and the column index. Each thread takes 4 consecutive
// columns (8 rows x 16 groups = 128 threads); the contiguous operands (the
// rows, the bias, the output) are read and written with one 16-byte
// access each when the group's addresses are multiples of 16 bytes, the
// transposed input with a load per element in either case, and the body
// is applied to the 4 elements one after the other (with their column
// index). Otherwise every access is per element.

// CHECK-LABEL: func.func @bias_scale
// CHECK-DAG: %[[C16:.*]] = arith.constant 16 : index
// CHECK-DAG: %[[C128:.*]] = arith.constant 128 : index
// CHECK: scf.parallel
// CHECK: arith.cmpi ult, %{{.*}}, %[[C128]] : index
// CHECK: scf.if
// CHECK: %[[GROUP:.*]] = arith.remsi %{{.*}}, %[[C16]] : index
// CHECK: %[[ROW:.*]] = arith.divsi %{{.*}}, %[[C16]] : index
// CHECK: %[[COL:.*]] = arith.muli %[[GROUP]], %{{.*}} : index
// CHECK: %[[XPTR:.*]] = memref.extract_aligned_pointer_as_index %arg0
// CHECK: %[[XTEST:.*]] = arith.cmpi eq
// CHECK: %[[BPTR:.*]] = memref.extract_aligned_pointer_as_index %arg1
// CHECK: %[[BTEST:.*]] = arith.cmpi eq
// CHECK: %[[XB:.*]] = arith.andi %[[XTEST]], %[[BTEST]] : i1
// CHECK: %[[YPTR:.*]] = memref.extract_aligned_pointer_as_index %arg3
// CHECK: %[[YTEST:.*]] = arith.cmpi eq
// CHECK: %[[ALL:.*]] = arith.andi %[[XB]], %[[YTEST]] : i1
// CHECK: scf.if %[[ALL]] {
// CHECK: %[[X:.*]] = vector.load %arg0[%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK-COUNT-4: vector.extract %[[X]][{{[0-3]}}] : f32 from vector<4xf32>
// CHECK: %[[B:.*]] = vector.load %arg1[%[[COL]]] {alignment = 16 : i64} : memref<64xf32>, vector<4xf32>
// CHECK-COUNT-4: vector.extract %[[B]][{{[0-3]}}] : f32 from vector<4xf32>
// CHECK-COUNT-4: memref.load %arg2[%{{.*}}, %[[ROW]]] : memref<64x8xf32>
// CHECK-COUNT-4: arith.sitofp
// CHECK: %[[Y:.*]] = vector.from_elements %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK-NEXT: vector.store %[[Y]], %arg3[%[[ROW]], %[[COL]]] {alignment = 16 : i64} : memref<8x64xf32>, vector<4xf32>
// CHECK-NEXT: } else {
// CHECK-NOT: vector.
// CHECK-COUNT-4: memref.load %arg0
// CHECK-COUNT-4: memref.load %arg1
// CHECK-COUNT-4: memref.load %arg2
// CHECK-COUNT-4: memref.store %{{.*}}, %arg3
// CHECK-NOT: vector.
// CHECK: return
// PLAIN-LABEL: func.func @bias_scale
// PLAIN-NOT: vector.
// PLAIN: return
#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#tr = affine_map<(i, j) -> (j, i)>
func.func @bias_scale(%x: memref<8x64xf32>, %b: memref<64xf32>, %t: memref<64x8xf32>, %y: memref<8x64xf32>) {
  linalg.generic {indexing_maps = [#id, #col, #tr, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b, %t : memref<8x64xf32>, memref<64xf32>, memref<64x8xf32>) outs(%y : memref<8x64xf32>) {
  ^bb0(%a: f32, %c: f32, %d: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    %u = arith.mulf %s, %d : f32
    %i = linalg.index 1 : index
    %ii = arith.index_cast %i : index to i32
    %f = arith.sitofp %ii : i32 to f32
    %v = arith.addf %u, %f : f32
    linalg.yield %v : f32
  }
  return
}

// -----

// Tests that a group is 16 bytes of the output's element type: 2 f64
// elements, from an f32 input read per element (4 of its elements would
// be 16 bytes, 2 are not); a scalar operand and a row-independent one are
// read once for both elements.

// CHECK-LABEL: func.func @widen
// CHECK: scf.if %{{.*}} {
// CHECK-COUNT-2: memref.load %arg0
// CHECK: memref.load %arg1[%{{.*}}] : memref<4xf64>
// CHECK-NOT: memref.load
// CHECK: vector.store %{{.*}}, %arg2[%{{.*}}, %{{.*}}] {alignment = 16 : i64} : memref<4x6xf64>, vector<2xf64>
// CHECK: } else {
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
#scalar = affine_map<(i, j) -> ()>
func.func @widen(%x: memref<4x6xf32>, %r: memref<4xf64>, %y: memref<4x6xf64>) {
  %k = arith.constant 2.0 : f64
  linalg.generic {indexing_maps = [#id2, #row, #scalar, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %r, %k : memref<4x6xf32>, memref<4xf64>, f64) outs(%y : memref<4x6xf64>) {
  ^bb0(%a: f32, %c: f64, %s: f64, %o: f64):
    %e = arith.extf %a : f32 to f64
    %m = arith.mulf %e, %c : f64
    %v = arith.mulf %m, %s : f64
    linalg.yield %v : f64
  }
  return
}

// -----

// Tests that an operand whose indices use the innermost loop anywhere but
// in the last one is read element by element: a diagonal, a skewed row.

// CHECK-LABEL: func.func @diagonal
// CHECK: scf.if %{{.*}} {
// CHECK-NOT: vector.load %arg0
// CHECK-NOT: vector.load %arg1
// CHECK-COUNT-4: memref.load %arg0
// CHECK-COUNT-4: memref.load %arg1
// CHECK: vector.store %{{.*}}, %arg2
// CHECK: } else {
#diag = affine_map<(i) -> (i, i)>
#skew = affine_map<(i) -> (i + 1, i)>
#vec = affine_map<(i) -> (i)>
func.func @diagonal(%x: memref<8x8xf32>, %z: memref<9x8xf32>, %y: memref<8xf32>) {
  linalg.generic {indexing_maps = [#diag, #skew, #vec], iterator_types = ["parallel"]}
      ins(%x, %z : memref<8x8xf32>, memref<9x8xf32>) outs(%y : memref<8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests what keeps one element per thread: a last loop of 6 f32 elements
// (not a multiple of 4), a reduction, a transposed output, a dynamic
// extent, a diagonal output, elements that are neither integers nor
// floats (index), and an input that reads the output's buffer through
// another map (the lanes of a group would read before the others wrote).

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: vector.
// CHECK: return
#id3 = affine_map<(i, j) -> (i, j)>
#tr3 = affine_map<(i, j) -> (j, i)>
#red = affine_map<(i, j) -> (i)>
#diag3 = affine_map<(i) -> (i, i)>
#lin3 = affine_map<(i) -> (i)>
func.func @left_alone(%x: memref<8x6xf32>, %s: memref<8xf32>, %z: memref<8x8xf32>, %zt: memref<8x8xf32>, %d: memref<?x8xf32>, %dy: memref<?x8xf32>,
                      %i: memref<8xindex>, %j: memref<8xindex>) {
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%x : memref<8x6xf32>) outs(%x : memref<8x6xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id3, #red], iterator_types = ["parallel", "reduction"]}
      ins(%z : memref<8x8xf32>) outs(%s : memref<8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.addf %a, %o : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#id3, #tr3], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<8x8xf32>) outs(%zt : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#id3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%d : memref<?x8xf32>) outs(%dy : memref<?x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %v = arith.negf %a : f32
    linalg.yield %v : f32
  }
  linalg.generic {indexing_maps = [#lin3, #diag3], iterator_types = ["parallel"]}
      ins(%s : memref<8xf32>) outs(%z : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  linalg.generic {indexing_maps = [#lin3, #lin3], iterator_types = ["parallel"]}
      ins(%i : memref<8xindex>) outs(%j : memref<8xindex>) {
  ^bb0(%a: index, %o: index):
    linalg.yield %a : index
  }
  linalg.generic {indexing_maps = [#tr3, #id3], iterator_types = ["parallel", "parallel"]}
      ins(%z : memref<8x8xf32>) outs(%z : memref<8x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  }
  return
}
