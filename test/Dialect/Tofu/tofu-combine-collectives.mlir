// RUN: tofu-opt %s --tofu-combine-collectives -split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-combine-collectives=max-bytes=32 -split-input-file | FileCheck %s --check-prefix=SMALL
// RUN: tofu-opt %s --tofu-combine-collectives=max-bytes=96 -split-input-file | FileCheck %s --check-prefix=PAIRS

// Four independent gathers of the same kind, axes and tile type become one
// gather of their stack (gather axis 0 -> 1), placed before the first use
// of any of their results; each old result is a slice of the new one. The
// layout attribute, a tile's, does not keep them apart and is not copied to
// the stack. With max-bytes=32 (each tile has 48 bytes) nothing changes;
// with max-bytes=96 a stack holds two tiles.

// CHECK-LABEL: func.func @gates(
// CHECK-SAME: %[[A:[^:]+]]: tensor<2x6xf32>, %[[B:[^:]+]]: tensor<2x6xf32>, %[[C:[^:]+]]: tensor<2x6xf32>, %[[D:[^:]+]]: tensor<2x6xf32>
// CHECK: %[[E:.*]] = tensor.empty() : tensor<4x2x6xf32>
// CHECK: %[[S0:.*]] = tensor.insert_slice %[[A]] into %[[E]][0, 0, 0] [1, 2, 6] [1, 1, 1] : tensor<2x6xf32> into tensor<4x2x6xf32>
// CHECK: %[[S1:.*]] = tensor.insert_slice %[[B]] into %[[S0]][1, 0, 0] [1, 2, 6] [1, 1, 1]
// CHECK: %[[S2:.*]] = tensor.insert_slice %[[C]] into %[[S1]][2, 0, 0] [1, 2, 6] [1, 1, 1]
// CHECK: %[[S3:.*]] = tensor.insert_slice %[[D]] into %[[S2]][3, 0, 0] [1, 2, 6] [1, 1, 1]
// CHECK: %[[G:.*]] = shard.all_gather %[[S3]] on @g grid_axes = [0] gather_axis = 1 : tensor<4x2x6xf32> -> tensor<4x4x6xf32>
// CHECK: %[[R0:.*]] = tensor.extract_slice %[[G]][0, 0, 0] [1, 4, 6] [1, 1, 1] : tensor<4x4x6xf32> to tensor<4x6xf32>
// CHECK: %[[R1:.*]] = tensor.extract_slice %[[G]][1, 0, 0] [1, 4, 6] [1, 1, 1]
// CHECK: %[[R2:.*]] = tensor.extract_slice %[[G]][2, 0, 0] [1, 4, 6] [1, 1, 1]
// CHECK: %[[R3:.*]] = tensor.extract_slice %[[G]][3, 0, 0] [1, 4, 6] [1, 1, 1]
// CHECK-NOT: shard.all_gather
// CHECK: %[[X:.*]] = arith.addf %[[R0]], %[[R1]]
// CHECK: %[[Y:.*]] = arith.addf %[[R2]], %[[R3]]
// CHECK: return %[[X]], %[[Y]]
// SMALL-LABEL: func.func @gates(
// SMALL-COUNT-4: shard.all_gather %{{.*}} gather_axis = 0
// SMALL-NOT: tensor.insert_slice
// PAIRS-LABEL: func.func @gates(
// PAIRS-COUNT-2: shard.all_gather %{{.*}} gather_axis = 1 : tensor<2x2x6xf32> -> tensor<2x4x6xf32>
// PAIRS-NOT: shard.all_gather
shard.grid @g(shape = 2)
func.func @gates(%a: tensor<2x6xf32>, %b: tensor<2x6xf32>,
                 %c: tensor<2x6xf32>, %d: tensor<2x6xf32>)
    -> (tensor<4x6xf32>, tensor<4x6xf32>) {
  %0 = shard.all_gather %a on @g grid_axes = [0] gather_axis = 0
      {tofu.layout = #tofu.layout<[0]>} : tensor<2x6xf32> -> tensor<4x6xf32>
  %1 = shard.all_gather %b on @g grid_axes = [0] gather_axis = 0
      : tensor<2x6xf32> -> tensor<4x6xf32>
  %2 = shard.all_gather %c on @g grid_axes = [0] gather_axis = 0
      : tensor<2x6xf32> -> tensor<4x6xf32>
  %3 = shard.all_gather %d on @g grid_axes = [0] gather_axis = 0
      : tensor<2x6xf32> -> tensor<4x6xf32>
  %x = arith.addf %0, %1 : tensor<4x6xf32>
  %y = arith.addf %2, %3 : tensor<4x6xf32>
  return %x, %y : tensor<4x6xf32>, tensor<4x6xf32>
}

// -----

// Not combined: a gather of a gather's result and an all-reduce of an
// all-reduce's result (the second depends on the first); a gather whose input is computed from an earlier result (defined
// after that result's first use); gathers along other axes, grid axes or
// grids, of other tile types; and a lone collective.

// CHECK-LABEL: func.func @apart(
// PAIRS-LABEL: func.func @apart(
// CHECK-NOT: tensor.insert_slice
// CHECK-COUNT-7: shard.all_gather
// CHECK-COUNT-2: shard.all_reduce
// CHECK-NOT: tensor.insert_slice
// CHECK: return
shard.grid @g2(shape = 2x2)
shard.grid @h(shape = 2x2)
func.func @apart(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>,
                 %c: tensor<2x2xf64>) -> (tensor<8x2xf32>, tensor<4x2xf32>,
                 tensor<2x4xf32>, tensor<4x2xf32>, tensor<4x2xf32>,
                 tensor<4x2xf64>, tensor<2x2xf32>) {
  %0 = shard.all_gather %a on @g2 grid_axes = [0] gather_axis = 0
      : tensor<2x2xf32> -> tensor<4x2xf32>
  %1 = shard.all_gather %0 on @g2 grid_axes = [0] gather_axis = 0
      : tensor<4x2xf32> -> tensor<8x2xf32>
  %s = tensor.extract_slice %0[0, 0] [2, 2] [1, 1]
      : tensor<4x2xf32> to tensor<2x2xf32>
  %2 = shard.all_gather %s on @g2 grid_axes = [0] gather_axis = 0
      : tensor<2x2xf32> -> tensor<4x2xf32>
  %3 = shard.all_gather %b on @g2 grid_axes = [0] gather_axis = 1
      : tensor<2x2xf32> -> tensor<2x4xf32>
  %4 = shard.all_gather %b on @g2 grid_axes = [1] gather_axis = 0
      : tensor<2x2xf32> -> tensor<4x2xf32>
  %5 = shard.all_gather %b on @h grid_axes = [1] gather_axis = 0
      : tensor<2x2xf32> -> tensor<4x2xf32>
  %6 = shard.all_gather %c on @g2 grid_axes = [0] gather_axis = 0
      : tensor<2x2xf64> -> tensor<4x2xf64>
  %7 = shard.all_reduce %b on @g2 grid_axes = [0]
      : tensor<2x2xf32> -> tensor<2x2xf32>
  %8 = shard.all_reduce %7 on @g2 grid_axes = [0]
      : tensor<2x2xf32> -> tensor<2x2xf32>
  return %1, %2, %3, %4, %5, %6, %8 : tensor<8x2xf32>, tensor<4x2xf32>,
      tensor<2x4xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<4x2xf64>,
      tensor<2x2xf32>
}

// -----

// Reductions keep their reduction kind and shift the scatter axis; an
// all-to-all shifts both axes. A collective whose input comes after the
// group's first use starts a new group: %r2 waits for %sum, which reads
// the first pair's results, so the pairs are combined apart.

// CHECK-LABEL: func.func @kinds(
// CHECK: %[[M:.*]] = shard.all_reduce %{{.*}} on @g grid_axes = [0] : tensor<2x4x6xf32> -> tensor<2x4x6xf32>
// CHECK: %[[M0:.*]] = tensor.extract_slice %[[M]][0, 0, 0] [1, 4, 6] [1, 1, 1]
// CHECK: %[[M1:.*]] = tensor.extract_slice %[[M]][1, 0, 0] [1, 4, 6] [1, 1, 1]
// CHECK: %[[SUM:.*]] = arith.addf %[[M0]], %[[M1]]
// CHECK: shard.reduce_scatter %{{.*}} on @g grid_axes = [0] reduction = max scatter_axis = 1 : tensor<2x4x6xf32> -> tensor<2x2x6xf32>
// CHECK: shard.all_reduce %{{.*}} on @g grid_axes = [0] : tensor<2x4x6xf32> -> tensor<2x4x6xf32>
// CHECK: shard.all_to_all %{{.*}} on @g grid_axes = [0] split_axis = 2 concat_axis = 1 : tensor<2x2x6xf32> -> tensor<2x4x3xf32>
// CHECK-NOT: shard.
// CHECK: return
shard.grid @g(shape = 2)
func.func @kinds(%a: tensor<4x6xf32>, %b: tensor<4x6xf32>,
                 %c: tensor<2x6xf32>, %d: tensor<2x6xf32>)
    -> (tensor<2x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<4x6xf32>,
        tensor<4x3xf32>, tensor<4x3xf32>) {
  %0 = shard.reduce_scatter %a on @g grid_axes = [0] reduction = max
      scatter_axis = 0 : tensor<4x6xf32> -> tensor<2x6xf32>
  %1 = shard.reduce_scatter %b on @g grid_axes = [0] reduction = max
      scatter_axis = 0 : tensor<4x6xf32> -> tensor<2x6xf32>
  %r0 = shard.all_reduce %a on @g grid_axes = [0]
      : tensor<4x6xf32> -> tensor<4x6xf32>
  %r1 = shard.all_reduce %b on @g grid_axes = [0]
      : tensor<4x6xf32> -> tensor<4x6xf32>
  %sum = arith.addf %r0, %r1 : tensor<4x6xf32>
  %r2 = shard.all_reduce %sum on @g grid_axes = [0]
      : tensor<4x6xf32> -> tensor<4x6xf32>
  %r3 = shard.all_reduce %a on @g grid_axes = [0]
      : tensor<4x6xf32> -> tensor<4x6xf32>
  %2 = shard.all_to_all %c on @g grid_axes = [0] split_axis = 1
      concat_axis = 0 : tensor<2x6xf32> -> tensor<4x3xf32>
  %3 = shard.all_to_all %d on @g grid_axes = [0] split_axis = 1
      concat_axis = 0 : tensor<2x6xf32> -> tensor<4x3xf32>
  return %0, %1, %r2, %r3, %2, %3 : tensor<2x6xf32>, tensor<2x6xf32>,
      tensor<4x6xf32>, tensor<4x6xf32>, tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// A loss summed over time steps, each step's 0-d term all-reduced: the sum
// (of scalars, free of side effects) moves down to the return, so that the
// three all-reduces have their first use there and become one of a stack
// of three. A large tensor computed from a collective stays in place, and
// so does the all-gather that it reads.

// CHECK-LABEL: func.func @loss_over_steps(
// CHECK: %[[BIG:.*]] = shard.all_gather
// CHECK-NEXT: %[[TWICE:.*]] = arith.addf %[[BIG]], %[[BIG]] : tensor<8x8xf32>
// CHECK: %[[R:.*]] = shard.all_reduce %{{.*}} on @g grid_axes = [0] : tensor<3xf32> -> tensor<3xf32>
// CHECK-NOT: shard.all_reduce
// CHECK: arith.addf {{.*}} : tensor<f32>
// CHECK: arith.addf {{.*}} : tensor<f32>
// CHECK-NEXT: return
// SMALL-LABEL: func.func @loss_over_steps(
// SMALL: shard.all_reduce %{{.*}} : tensor<3xf32> -> tensor<3xf32>
shard.grid @g(shape = 2)
func.func @loss_over_steps(%p0: tensor<f32>, %p1: tensor<f32>, %p2: tensor<f32>,
                           %big: tensor<4x8xf32>)
    -> (tensor<f32>, tensor<8x8xf32>) {
  %0 = shard.all_reduce %p0 on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %1 = shard.all_reduce %p1 on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %s1 = arith.addf %0, %1 : tensor<f32>
  %g = shard.all_gather %big on @g grid_axes = [0] gather_axis = 0
      : tensor<4x8xf32> -> tensor<8x8xf32>
  %twice = arith.addf %g, %g : tensor<8x8xf32>
  %2 = shard.all_reduce %p2 on @g grid_axes = [0] : tensor<f32> -> tensor<f32>
  %s2 = arith.addf %s1, %2 : tensor<f32>
  return %s2, %twice : tensor<f32>, tensor<8x8xf32>
}
