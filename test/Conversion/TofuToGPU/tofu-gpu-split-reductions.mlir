// RUN: tofu-opt %s --tofu-gpu-split-reductions --split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-gpu-split-reductions="min-length=2000" --split-input-file | FileCheck %s --check-prefix=LONGER
// RUN: tofu-opt %s --tofu-gpu-split-reductions="rows=false" --split-input-file | FileCheck %s --check-prefix=NOROWS

// Tests that a row reduction of 1024 becomes 32 partial results per row
// (inner-parallel: thread j reads elements j, j + 32, ...) combined by a
// reduction of 32, starting from the combiner's neutral element. The
// partials lead their tensor (32x4), so that the combining op's threads,
// one per row, read neighbouring elements.

// CHECK-LABEL: func.func @row_max
// CHECK: tensor.expand_shape %{{.*}} {{\[\[}}0], [1, 2]] output_shape [4, 32, 32]
// CHECK: %[[NEUTRAL:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[INIT:.*]] = linalg.fill ins(%[[NEUTRAL]] : f32) outs(%{{.*}} : tensor<32x4xf32>)
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]{{.*}} outs(%[[INIT]] : tensor<32x4xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[PARTIAL]] : tensor<32x4xf32>) outs(%{{.*}} : tensor<4xf32>)
// CHECK: arith.maximumf
// With rows=false (for tofu-gpu-warp-reductions) the row stays whole.
// NOROWS-LABEL: func.func @row_max
// NOROWS-NOT: tensor.expand_shape
// NOROWS: linalg.generic
// NOROWS-NOT: linalg.generic
// NOROWS: return
// LONGER-LABEL: func.func @row_max
// LONGER-NOT: tensor.expand_shape
// LONGER: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#r0 = affine_map<(d0, d1) -> (d0)>
func.func @row_max(%x: tensor<4x1024xf32>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %r = linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x1024xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.maximumf %o, %i : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests a full reduction over two loops (a loss): the outer loop becomes a
// parallel loop of 16 partials, each row of 512 is split by 32, and two
// small reductions combine the partials into the original output.

// CHECK-LABEL: func.func @loss
// CHECK: %[[ROWS:.*]] = linalg.fill {{.*}} -> tensor<16xf32>
// CHECK: %[[SPLIT:.*]] = linalg.generic {{.*}} iterator_types = ["parallel", "reduction", "parallel"]{{.*}} outs(%{{.*}} : tensor<32x16xf32>)
// CHECK: arith.mulf
// CHECK: arith.addf
// CHECK: %[[PERROW:.*]] = linalg.generic {{.*}} ins(%[[SPLIT]] : tensor<32x16xf32>) outs(%[[ROWS]] : tensor<16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction"]{{.*}} ins(%[[PERROW]] : tensor<16xf32>) outs(%{{.*}} : tensor<f32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#s = affine_map<(d0, d1) -> ()>
func.func @loss(%x: tensor<16x512xf32>, %y: tensor<16x512xf32>, %init: tensor<f32>) -> tensor<f32> {
  %r = linalg.generic {indexing_maps = [#id, #id, #s], iterator_types = ["reduction", "reduction"]} ins(%x, %y : tensor<16x512xf32>, tensor<16x512xf32>) outs(%init : tensor<f32>) {
  ^bb0(%i: f32, %j: f32, %o: f32):
    %p = arith.mulf %i, %j : f32
    %a = arith.addf %o, %p : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %r : tensor<f32>
}

// -----

// Tests a column sum (a bias gradient): the rows are reduced last after an
// interchange, and the 32 partials lead (32x64), so that neighbouring
// threads of both ops touch neighbouring columns.

// CHECK-LABEL: func.func @column_sum
// A column is no row: split with rows=false too.
// NOROWS-LABEL: func.func @column_sum
// NOROWS: outs(%{{.*}} : tensor<32x64xf32>)
// CHECK: %[[PARTIAL:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<32x64xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["reduction", "parallel"]{{.*}} ins(%[[PARTIAL]] : tensor<32x64xf32>) outs(%{{.*}} : tensor<64xf32>)
#id = affine_map<(d0, d1) -> (d0, d1)>
#c = affine_map<(d0, d1) -> (d1)>
func.func @column_sum(%x: tensor<1024x64xf32>, %init: tensor<64xf32>) -> tensor<64xf32> {
  %r = linalg.generic {indexing_maps = [#id, #c], iterator_types = ["reduction", "parallel"]} ins(%x : tensor<1024x64xf32>) outs(%init : tensor<64xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %o, %i : f32
    linalg.yield %a : f32
  } -> tensor<64xf32>
  return %r : tensor<64xf32>
}

// -----

// Tests a reduction over an outer and an inner loop with a kept middle
// one: the outer loop's 8 partials lead the partial tensor (8x16).

// CHECK-LABEL: func.func @outer_and_inner
// With rows=false the outer loop's partials are made, and the rows of 512
// left whole.
// NOROWS-LABEL: func.func @outer_and_inner
// NOROWS-NOT: tensor.expand_shape
// NOROWS: outs(%{{.*}} : tensor<8x16xf32>)
// NOROWS-NOT: tensor.expand_shape
// NOROWS: return
// CHECK: %[[OUTER:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[OUTER]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<16xf32>)
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#m3 = affine_map<(d0, d1, d2) -> (d1)>
func.func @outer_and_inner(%x: tensor<8x16x512xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [#x3, #m3], iterator_types = ["reduction", "parallel", "reduction"]} ins(%x : tensor<8x16x512xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %o, %i : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// Tests the same with the kept loop outermost: the outer reduction's 8
// partials lead (8x16, read through (d1, d0)), and the loops of the partial
// op are interchanged into that order before its row of 512 is split.

// CHECK-LABEL: func.func @kept_outermost
// CHECK: %[[SPLIT:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<32x8x16xf32>)
// CHECK: %[[OUTER:.*]] = linalg.generic {{.*}} ins(%[[SPLIT]] : tensor<32x8x16xf32>) outs(%{{.*}} : tensor<8x16xf32>)
// CHECK: linalg.generic {{.*}} iterator_types = ["parallel", "reduction"]{{.*}} ins(%[[OUTER]] : tensor<8x16xf32>) outs(%{{.*}} : tensor<16xf32>)
#x3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#m3 = affine_map<(d0, d1, d2) -> (d0)>
func.func @kept_outermost(%x: tensor<16x8x512xf32>, %init: tensor<16xf32>) -> tensor<16xf32> {
  %r = linalg.generic {indexing_maps = [#x3, #m3], iterator_types = ["parallel", "reduction", "reduction"]} ins(%x : tensor<16x8x512xf32>) outs(%init : tensor<16xf32>) {
  ^bb0(%i: f32, %o: f32):
    %a = arith.addf %o, %i : f32
    linalg.yield %a : f32
  } -> tensor<16xf32>
  return %r : tensor<16xf32>
}

// -----

// Tests that short rows, and rows whose length has no divisor to split by,
// are left alone.

// CHECK-LABEL: func.func @left_alone
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
#id = affine_map<(d0, d1) -> (d0, d1)>
#r0 = affine_map<(d0, d1) -> (d0)>
func.func @left_alone(%x: tensor<4x8xf32>, %p: tensor<4x1021xf32>, %init: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r = linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %o, %i : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  %q = linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%p : tensor<4x1021xf32>) outs(%init : tensor<4xf32>) {
  ^bb0(%i: f32, %o: f32):
    %m = arith.addf %o, %i : f32
    linalg.yield %m : f32
  } -> tensor<4xf32>
  return %r, %q : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a column sum that reads a keepdim row statistic through a
// constant index (a layer norm's weight gradient over 1024 tokens, which
// reads each token's (d1, 0) statistic) stays whole: upstream
// splitReduction would index the unit dimension with a loop, an op that
// does not verify.

// CHECK-LABEL: func.func @keepdim_operand
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic
// CHECK-SAME: iterator_types = ["parallel", "reduction"]
// CHECK-NOT: linalg.generic
// CHECK: return
#x = affine_map<(d0, d1) -> (d1, d0)>
#kept = affine_map<(d0, d1) -> (d1, 0)>
#col = affine_map<(d0, d1) -> (d0)>
func.func @keepdim_operand(%dy: tensor<1024x8xf32>, %stat: tensor<1024x1xf32>, %init: tensor<8xf32>) -> tensor<8xf32> {
  %r = linalg.generic {indexing_maps = [#x, #kept, #col], iterator_types = ["parallel", "reduction"]} ins(%dy, %stat : tensor<1024x8xf32>, tensor<1024x1xf32>) outs(%init : tensor<8xf32>) {
  ^bb0(%g: f32, %s: f32, %o: f32):
    %p = arith.mulf %g, %s : f32
    %m = arith.addf %o, %p : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  return %r : tensor<8xf32>
}

// -----

// Tests that the filter gradients of a grouped and of a depthwise
// convolution, whose reductions over the images and the output's rows and
// columns (8 x 16 x 16 = 2048) are long enough to split, stay whole:
// convert-tofu-to-gpu makes them cuDNN calls.

// CHECK-LABEL: func.func @convolution_gradients
// CHECK-NOT: tensor.expand_shape
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: return
#gx = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, c, oh + kh, ow + kw)>
#gy = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>
#gw = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g, f, c, kh, kw)>
#dx = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh + kh, ow + kw)>
#dy = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, ow)>
#dw = affine_map<(n, c, oh, ow, kh, kw) -> (c, kh, kw)>
func.func @convolution_gradients(%x: tensor<8x2x2x18x18xf32>, %dy: tensor<8x2x2x16x16xf32>, %w: tensor<2x2x2x3x3xf32>,
                                 %x2: tensor<8x4x18x18xf32>, %dy2: tensor<8x4x16x16xf32>, %w2: tensor<4x3x3xf32>)
    -> (tensor<2x2x2x3x3xf32>, tensor<4x3x3xf32>) {
  %g = linalg.generic {indexing_maps = [#gx, #gy, #gw],
                       iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : tensor<8x2x2x18x18xf32>, tensor<8x2x2x16x16xf32>) outs(%w : tensor<2x2x2x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x2x2x3x3xf32>
  %d = linalg.generic {indexing_maps = [#dx, #dy, #dw],
                       iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x2, %dy2 : tensor<8x4x18x18xf32>, tensor<8x4x16x16xf32>) outs(%w2 : tensor<4x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x3x3xf32>
  return %g, %d : tensor<2x2x2x3x3xf32>, tensor<4x3x3xf32>
}

// -----

// Tests that an f64 row, which tofu-gpu-warp-reductions does not take, is
// split with rows=false too.

// CHECK-LABEL: func.func @f64_row
// CHECK: tensor.expand_shape
// NOROWS-LABEL: func.func @f64_row
// NOROWS: tensor.expand_shape
#id = affine_map<(d0, d1) -> (d0, d1)>
#r0 = affine_map<(d0, d1) -> (d0)>
func.func @f64_row(%x: tensor<4x1024xf64>, %init: tensor<4xf64>) -> tensor<4xf64> {
  %r = linalg.generic {indexing_maps = [#id, #r0], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x1024xf64>) outs(%init : tensor<4xf64>) {
  ^bb0(%i: f64, %o: f64):
    %a = arith.addf %o, %i : f64
    linalg.yield %a : f64
  } -> tensor<4xf64>
  return %r : tensor<4xf64>
}
