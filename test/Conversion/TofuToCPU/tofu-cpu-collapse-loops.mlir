// RUN: tofu-opt %s --tofu-cpu-collapse-loops | FileCheck %s

// The maps of the collapsed ops: the group is the last loop; an operand
// that does not see it keeps its results over the loops before it.
// CHECK-DAG: #[[ID:.*]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[SCALAR:.*]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[X3:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[KEPT:.*]] = affine_map<(d0, d1, d2) -> (0, d1, 0, 0)>
// CHECK-DAG: #[[CHANNEL:.*]] = affine_map<(d0, d1, d2) -> (d1)>

// Tests that an element-wise update of a 8 x 3 x 3 filter (Adam's, whose
// innermost loop would be 3 long) becomes one loop over 72 elements of
// collapsed views, with a scalar operand left alone.

// CHECK-LABEL: func.func @update
// CHECK-DAG: %[[W:.*]] = memref.collapse_shape %arg0 {{\[\[}}0, 1, 2]] : memref<8x3x3xf32> into memref<72xf32>
// CHECK-DAG: %[[G:.*]] = memref.collapse_shape %arg1 {{\[\[}}0, 1, 2]] : memref<8x3x3xf32> into memref<72xf32>
// CHECK-DAG: %[[O:.*]] = memref.collapse_shape %arg3 {{\[\[}}0, 1, 2]] : memref<8x3x3xf32> into memref<72xf32>
// CHECK: linalg.generic {indexing_maps = [#[[ID]], #[[ID]], #[[SCALAR]], #[[ID]]], iterator_types = ["parallel"]}
// CHECK-SAME: ins(%[[W]], %[[G]], %arg2 : memref<72xf32>, memref<72xf32>, memref<f32>) outs(%[[O]] : memref<72xf32>)
func.func @update(%w: memref<8x3x3xf32>, %g: memref<8x3x3xf32>, %lr: memref<f32>, %out: memref<8x3x3xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>,
                                   affine_map<(d0, d1, d2) -> ()>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>],
                  iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%w, %g, %lr : memref<8x3x3xf32>, memref<8x3x3xf32>, memref<f32>) outs(%out : memref<8x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %r: f32, %o: f32):
    %m = arith.mulf %b, %r : f32
    %s = arith.subf %a, %m : f32
    linalg.yield %s : f32
  }
  return
}

// Tests that a batch norm's sum over images, height and width into a
// keepdim 1 x C x 1 x 1 output collapses height and width into one
// reduction loop; the images' loop and the channels' stay, and the output,
// which does not see the collapsed loops, keeps its map.

// CHECK-LABEL: func.func @batch_norm_sum
// CHECK: %[[X:.*]] = memref.collapse_shape %arg0 {{\[\[}}0], [1], [2, 3]] : memref<2x4x8x8xf32> into memref<2x4x64xf32>
// CHECK: linalg.generic {indexing_maps = [#[[X3]], #[[KEPT]]], iterator_types = ["reduction", "parallel", "reduction"]}
// CHECK-SAME: ins(%[[X]] : memref<2x4x64xf32>) outs(%arg1 : memref<1x4x1x1xf32>)
func.func @batch_norm_sum(%x: memref<2x4x8x8xf32>, %sum: memref<1x4x1x1xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (0, d1, 0, 0)>],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction"]}
      ins(%x : memref<2x4x8x8xf32>) outs(%sum : memref<1x4x1x1xf32>) {
  ^bb0(%a: f32, %o: f32):
    %r = arith.addf %a, %o : f32
    linalg.yield %r : f32
  }
  return
}

// Tests that a broadcast of a channel vector over (N, C, H, W) collapses H
// and W: the vector does not see them.

// CHECK-LABEL: func.func @channel_broadcast
// CHECK: linalg.generic {indexing_maps = [#[[X3]], #[[CHANNEL]], #[[X3]]], iterator_types = ["parallel", "parallel", "parallel"]}
// CHECK-SAME: ins(%{{.*}}, %arg1 : memref<2x4x64xf32>, memref<4xf32>) outs(%{{.*}} : memref<2x4x64xf32>)
func.func @channel_broadcast(%x: memref<2x4x8x8xf32>, %c: memref<4xf32>, %out: memref<2x4x8x8xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d1)>,
                                   affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x, %c : memref<2x4x8x8xf32>, memref<4xf32>) outs(%out : memref<2x4x8x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %r = arith.mulf %a, %b : f32
    linalg.yield %r : f32
  }
  return
}

// Tests what stays as it is: a view whose rows are not contiguous (a slice
// of columns), a layout known only at run time, a transposed operand,
// loops of different iterator types, and an op that reads its indices.

// CHECK-LABEL: func.func @unchanged
// CHECK-NOT: memref.collapse_shape
// CHECK-COUNT-3: iterator_types = ["parallel", "parallel"]
// CHECK: iterator_types = ["parallel", "reduction"]
// CHECK: iterator_types = ["parallel", "parallel"]
// CHECK-NOT: memref.collapse_shape
func.func @unchanged(%a: memref<4x8xf32>, %b: memref<4x8xf32, strided<[16, 1], offset: 2>>,
                     %c: memref<4x8xf32, strided<[?, ?], offset: ?>>, %t: memref<8x4xf32>,
                     %out: memref<4x8xf32>, %row: memref<4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%b : memref<4x8xf32, strided<[16, 1], offset: 2>>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%c : memref<4x8xf32, strided<[?, ?], offset: ?>>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%t : memref<8x4xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    linalg.yield %x : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>],
                  iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<4x8xf32>) outs(%row : memref<4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %r = arith.addf %x, %o : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                  iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<4x8xf32>) outs(%out : memref<4x8xf32>) {
  ^bb0(%x: f32, %o: f32):
    %i = linalg.index 1 : index
    %k = arith.index_cast %i : index to i64
    %f = arith.sitofp %k : i64 to f32
    %r = arith.addf %x, %f : f32
    linalg.yield %r : f32
  }
  return
}
