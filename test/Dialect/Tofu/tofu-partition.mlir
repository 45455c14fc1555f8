// RUN: tofu-opt %s --tdl-attach --tofu-partition -split-input-file | FileCheck %s

// Tests that a matmul whose reduction loop is cut produces partial sums that
// are reduce-scattered into the row-cut layout of the result, that every
// rank starts from the zero fill (the sum's identity) without a select, and
// that the unpartitioned function is kept as the reference.

// CHECK: shard.grid @mm_grid(shape = 2)
// CHECK-LABEL: func.func @mm_reference(
// CHECK-SAME: %{{.*}}: tensor<4x8xf32>
// CHECK-LABEL: func.func @mm(
// CHECK-SAME: %[[A:.*]]: tensor<4x4xf32> {tofu.layout = #tofu.layout<[1]>}
// CHECK-SAME: %[[B:.*]]: tensor<4x6xf32> {tofu.layout = #tofu.layout<[0]>}
// CHECK-SAME: -> (tensor<2x6xf32> {tofu.layout = #tofu.layout<[0]>})
// CHECK-NOT: arith.select
// CHECK: %[[F:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%{{.*}} : tensor<4x6xf32>)
// CHECK-NOT: arith.select
// CHECK: %[[P:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[B]] : tensor<4x4xf32>, tensor<4x6xf32>) outs(%[[F]] : tensor<4x6xf32>) attrs = {tofu.layout = #tofu.layout<[-1], partial = [0]>}
// CHECK: %[[R:.*]] = shard.reduce_scatter %[[P]] on @mm_grid grid_axes = [0] scatter_axis = 0 {tofu.layout = #tofu.layout<[0]>} : tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK: return %[[R]]
func.func @mm(%a: tensor<4x8xf32> {tofu.tiling = ["cut(1)"]},
              %b: tensor<8x6xf32> {tofu.tiling = ["cut(0)"]})
    -> tensor<4x6xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() {tofu.tilings = [["cut(0)"]]} : tensor<4x6xf32>
  %f = linalg.fill {tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %m = linalg.matmul {tofu.strategy = ["d2"], tofu.tilings = [["cut(0)"]]}
      ins(%a, %b : tensor<4x8xf32>, tensor<8x6xf32>)
      outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %m : tensor<4x6xf32>
}

// -----

// Tests that a replicated result of cut reductions is all-reduced over both
// grid axes in turn, and that only the first rank of each reduction group
// starts from the initial value (the others from the sum's identity 0).

// CHECK-LABEL: func.func @dot(
// CHECK-SAME: -> (tensor<f32> {tofu.layout = #tofu.layout<[-1, -1]>})
// CHECK: %[[RANK:.*]] = shard.process_linear_index on @dot_grid
// CHECK: %[[FIRST:.*]] = arith.cmpi eq
// CHECK: %[[INIT:.*]] = arith.select %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>
// CHECK: %[[S:.*]] = linalg.generic {{.*}} outs(%[[INIT]] : tensor<f32>)
// CHECK: %[[R0:.*]] = shard.all_reduce %[[S]] on @dot_grid grid_axes = [0]
// CHECK: %[[R1:.*]] = shard.all_reduce %[[R0]] on @dot_grid grid_axes = [1]
// CHECK: return %[[R1]]
func.func @dot(%x: tensor<8xf32> {tofu.tiling = ["cut(0)", "cut(0)"]},
               %acc: tensor<f32> {tofu.tiling = ["rep", "rep"]})
    -> tensor<f32> attributes {tofu.plan = {devices = "4", steps = [2, 2]}} {
  %s = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>],
                       iterator_types = ["reduction"],
                       tofu.strategy = ["d0", "d0"], tofu.tilings = [["rep", "rep"]]}
      ins(%x : tensor<8xf32>) outs(%acc : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %r = arith.addf %o, %v : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}

// -----

// Tests that a window read (x + dx) fetches a halo: each of 2 ranks computes
// 4 outputs and reads 6 inputs, rows [0, 5] and [4, 9], from a row-cut input
// held as rows [0, 4] and [5, 9]; the replicated filter is read in place.

// CHECK-LABEL: func.func @window(
// CHECK-SAME: %[[X:.*]]: tensor<5xf32> {tofu.layout = #tofu.layout<[0]>}, %[[W:.*]]: tensor<3xf32> {tofu.layout = #tofu.layout<[-1]>}
// CHECK: %[[H:.*]] = tofu.fetch %[[X]] on @window_grid shape [10] from [0, 5] to [0, 4] : tensor<5xf32> -> tensor<6xf32>
// CHECK: linalg.generic {{.*}} ins(%[[H]], %[[W]] : tensor<6xf32>, tensor<3xf32>) outs(%{{.*}} : tensor<4xf32>)
func.func @window(%x: tensor<10xf32> {tofu.tiling = ["cut(0)"]},
                  %w: tensor<3xf32> {tofu.tiling = ["rep"]})
    -> tensor<8xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %e = tensor.empty() {tofu.tilings = [["cut(0)"]]} : tensor<8xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0 + d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"],
                       tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      ins(%x, %w : tensor<10xf32>, tensor<3xf32>) outs(%e : tensor<8xf32>) {
  ^bb0(%v: f32, %f: f32, %o: f32):
    %m = arith.mulf %v, %f : f32
    %r = arith.addf %o, %m : f32
    linalg.yield %r : f32
  } -> tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// Tests that a strided read (2 * d1) of a tensor held whole along that
// dimension reads the rows it holds: the batch is cut, each rank holds its
// 2 x 8 rows, and the stride-2 window reads rows 0, 2, 4, 6 of them, a
// region of 7 rows that the op reads as the held 8 (no slice), as the
// unpartitioned op does. A unit read (d1) is not widened.

// CHECK-LABEL: func.func @strided(
// CHECK-SAME: %[[X:.*]]: tensor<2x8xf32> {tofu.layout = #tofu.layout<[0]>}
// CHECK-NOT: tensor.extract_slice
// CHECK: linalg.generic {{.*}} ins(%[[X]] : tensor<2x8xf32>) outs(%{{.*}} : tensor<2x4xf32>)
func.func @strided(%x: tensor<4x8xf32> {tofu.tiling = ["cut(0)"]})
    -> tensor<4x4xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %e = tensor.empty() {tofu.tilings = [["cut(0)"]]} : tensor<4x4xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1 * 2)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"],
                       tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4x4xf32>
  return %s : tensor<4x4xf32>
}

// -----

// Tests that a pad cut along a padded dimension runs on each rank's output
// box: rank 0's rows 0..2 hold two pad rows and source row 0, rank 1's rows
// 3..5 source rows 1..3. The ranks read regions of different sizes, so each
// fetches a same-sized window, slices its region out and pads it by
// per-rank amounts.

// CHECK-LABEL: func.func @pad(
// CHECK-SAME: %[[X:.*]]: tensor<2x4xf32> {tofu.layout = #tofu.layout<[0]>}
// CHECK: %[[W:.*]] = tofu.fetch %[[X]] on @pad_grid shape [4, 4] from [0, 0, 2, 0] to [0, 0, 1, 0] : tensor<2x4xf32> -> tensor<3x4xf32>
// CHECK: %[[S:.*]] = tensor.extract_slice %[[W]][0, 0] [%{{.*}}, 4] [1, 1] : tensor<3x4xf32> to tensor<?x4xf32>
// CHECK: %[[P:.*]] = tensor.pad %[[S]] low[%{{.*}}, 0] high[0, 0]
// CHECK: tensor.cast %[[P]] {tofu.layout = #tofu.layout<[0]>} : tensor<?x4xf32> to tensor<3x4xf32>
func.func @pad(%x: tensor<4x4xf32> {tofu.tiling = ["cut(0)"]})
    -> tensor<6x4xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %z = arith.constant 0.0 : f32
  %p = tensor.pad %x low[2, 0] high[0, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } {tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      : tensor<4x4xf32> to tensor<6x4xf32>
  return %p : tensor<6x4xf32>
}

// -----

// Tests that reshapes run on local boxes when each box is contiguous in the
// source (here rows of the expanded tensor), with no communication.

// CHECK-LABEL: func.func @reshapes(
// CHECK-SAME: %[[X:.*]]: tensor<6xf32>
// CHECK-NOT: tofu.fetch
// CHECK: %[[E:.*]] = tensor.expand_shape %[[X]] {{\[\[}}0, 1]] output_shape [2, 3] {tofu.layout = #tofu.layout<[0]>} : tensor<6xf32> into tensor<2x3xf32>
// CHECK: %[[C:.*]] = tensor.collapse_shape %[[E]] {{\[\[}}0, 1]] {tofu.layout = #tofu.layout<[0]>} : tensor<2x3xf32> into tensor<6xf32>
// CHECK: return %[[E]], %[[C]]
func.func @reshapes(%x: tensor<12xf32> {tofu.tiling = ["cut(0)"]})
    -> (tensor<4x3xf32>, tensor<12xf32>)
    attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %e = tensor.expand_shape %x [[0, 1]] output_shape [4, 3]
      {tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      : tensor<12xf32> into tensor<4x3xf32>
  %c = tensor.collapse_shape %e [[0, 1]]
      {tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      : tensor<4x3xf32> into tensor<12xf32>
  return %e, %c : tensor<4x3xf32>, tensor<12xf32>
}

// -----

// Tests that a reshape whose output box is not contiguous in its source (a
// cut of the inner dimension: columns 0..2 or 3..5 of every row) reshapes
// the smallest contiguous hull of the box and slices the box out of it.

// CHECK-LABEL: func.func @strided_box(
// CHECK: %[[W:.*]] = shard.all_gather {{.*}} : tensor<6xf32> -> tensor<12xf32>
// CHECK: %[[E:.*]] = tensor.expand_shape %[[W]] {{\[\[}}0, 1]] output_shape [2, 6] : tensor<12xf32> into tensor<2x6xf32>
// CHECK: shard.all_slice %[[E]] on @strided_box_grid grid_axes = [0] slice_axis = 1 {tofu.layout = #tofu.layout<[1]>} : tensor<2x6xf32> -> tensor<2x3xf32>
func.func @strided_box(%x: tensor<12xf32> {tofu.tiling = ["cut(0)"]})
    -> tensor<2x6xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %e = tensor.expand_shape %x [[0, 1]] output_shape [2, 6]
      {tofu.strategy = ["d1"], tofu.tilings = [["cut(1)"]]}
      : tensor<12xf32> into tensor<2x6xf32>
  return %e : tensor<2x6xf32>
}

// -----

// Tests that reading whole a tensor whose rows are cut over both grid axes
// is one all-gather over both axes (the group order is the order of the
// recursive halving), and that removing only the last axis's cut of the
// columns gathers along that axis alone.

// CHECK-LABEL: func.func @gathers(
// CHECK-SAME: %[[X:.*]]: tensor<2x6xf32> {tofu.layout = #tofu.layout<[0, 0]>}, %[[Y:.*]]: tensor<8x3xf32> {tofu.layout = #tofu.layout<[-1, 1]>}
// CHECK-NOT: tofu.fetch
// CHECK: %[[G:.*]] = shard.all_gather %[[X]] on @gathers_grid grid_axes = [0, 1] gather_axis = 0 : tensor<2x6xf32> -> tensor<8x6xf32>
// CHECK: linalg.generic {{.*}} ins(%[[G]] : tensor<8x6xf32>)
// CHECK: %[[H:.*]] = shard.all_gather %[[Y]] on @gathers_grid grid_axes = [1] gather_axis = 1 : tensor<8x3xf32> -> tensor<8x6xf32>
// CHECK: linalg.generic {{.*}} ins(%[[H]] : tensor<8x6xf32>)
func.func @gathers(%x: tensor<8x6xf32> {tofu.tiling = ["cut(0)", "cut(0)"]},
                   %y: tensor<8x6xf32> {tofu.tiling = ["rep", "cut(1)"]})
    -> (tensor<8x6xf32>, tensor<8x6xf32>)
    attributes {tofu.plan = {devices = "4", steps = [2, 2]}} {
  %e = tensor.empty() {tofu.tilings = [["rep", "rep"]]} : tensor<8x6xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"],
                       tofu.strategy = ["replicated", "replicated"], tofu.tilings = [["rep", "rep"]]}
      ins(%x : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<8x6xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"],
                       tofu.strategy = ["replicated", "replicated"], tofu.tilings = [["rep", "rep"]]}
      ins(%y : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<8x6xf32>
  return %a, %b : tensor<8x6xf32>, tensor<8x6xf32>
}

// -----

// Tests that a row cut read as a column cut over the same grid axis is one
// all-to-all (split the columns, concatenate the rows), and that a
// replicated tensor read as a row cut is an all-slice of the local value.

// CHECK-LABEL: func.func @moves(
// CHECK-SAME: %[[X:.*]]: tensor<2x6xf32> {tofu.layout = #tofu.layout<[0]>}, %[[Y:.*]]: tensor<4x6xf32> {tofu.layout = #tofu.layout<[-1]>}
// CHECK-NOT: tofu.fetch
// CHECK: %[[T:.*]] = shard.all_to_all %[[X]] on @moves_grid grid_axes = [0] split_axis = 1 concat_axis = 0 : tensor<2x6xf32> -> tensor<4x3xf32>
// CHECK: linalg.generic {{.*}} ins(%[[T]] : tensor<4x3xf32>)
// CHECK: %[[S:.*]] = shard.all_slice %[[Y]] on @moves_grid grid_axes = [0] slice_axis = 0 : tensor<4x6xf32> -> tensor<2x6xf32>
// CHECK: linalg.generic {{.*}} ins(%[[S]] : tensor<2x6xf32>)
func.func @moves(%x: tensor<4x6xf32> {tofu.tiling = ["cut(0)"]},
                 %y: tensor<4x6xf32> {tofu.tiling = ["rep"]})
    -> (tensor<4x6xf32>, tensor<4x6xf32>)
    attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %e = tensor.empty() {tofu.tilings = [["cut(1)"]]} : tensor<4x6xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"],
                       tofu.strategy = ["d1"], tofu.tilings = [["cut(1)"]]}
      ins(%x : tensor<4x6xf32>) outs(%e : tensor<4x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x6xf32>
  %f = tensor.empty() {tofu.tilings = [["cut(0)"]]} : tensor<4x6xf32>
  %b = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"],
                       tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      ins(%y : tensor<4x6xf32>) outs(%f : tensor<4x6xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x6xf32>
  return %a, %b : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// Tests that a move across grid axes ([[0],[1]] -> [[1],[0]]), which no
// single collective does, stays a fetch.

// CHECK-LABEL: func.func @transpose_axes(
// CHECK-NOT: shard.all_to_all
// CHECK: %[[F:.*]] = tofu.fetch %{{.*}} on @transpose_axes_grid shape [4, 4] from [0, 0, 0, 2, 2, 0, 2, 2] to [0, 0, 2, 0, 0, 2, 2, 2] : tensor<2x2xf32> -> tensor<2x2xf32>
// CHECK: linalg.generic {{.*}} ins(%[[F]] : tensor<2x2xf32>)
func.func @transpose_axes(%x: tensor<4x4xf32> {tofu.tiling = ["cut(0)", "cut(1)"]})
    -> tensor<4x4xf32> attributes {tofu.plan = {devices = "4", steps = [2, 2]}} {
  %e = tensor.empty() {tofu.tilings = [["cut(1)", "cut(0)"]]} : tensor<4x4xf32>
  %a = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>],
                       iterator_types = ["parallel", "parallel"],
                       tofu.strategy = ["d1", "d0"], tofu.tilings = [["cut(1)", "cut(0)"]]}
      ins(%x : tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
  ^bb0(%v: f32, %o: f32):
    %n = arith.negf %v : f32
    linalg.yield %n : f32
  } -> tensor<4x4xf32>
  return %a : tensor<4x4xf32>
}
