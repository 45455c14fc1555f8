// RUN: tofu-opt %s --convert-tofu-to-mpi -split-input-file | FileCheck %s

// Tests that an all-gather over two grid axes calls the runtime with the
// grid shape, the axes as a bit mask (3), the gathered dimension and the
// element size, into a fresh result buffer, in a region of its own, tagged
// as writing that buffer alone, and that the grid is removed.

// CHECK-NOT: shard.grid
// CHECK-LABEL: func.func @gather(
// CHECK-SAME: %[[X:.*]]: tensor<2x6xf32>
// CHECK-DAG: %[[GRID:.*]] = arith.constant dense<[2, 3]> : tensor<2xi64>
// CHECK-DAG: %[[MASK:.*]] = arith.constant 3 : i64
// CHECK-DAG: %[[DIM:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[BYTES:.*]] = arith.constant 4 : i64
// CHECK: %[[R:.*]] = scf.execute_region -> tensor<2x36xf32> no_inline {
// CHECK-NEXT: %[[OUT:.*]] = memref.alloc() : memref<2x36xf32>
// CHECK-NEXT: %[[IN:.*]] = bufferization.to_buffer %[[X]] read_only
// CHECK: call @tofu_all_gather(%{{.*}}, %{{.*}}, %{{.*}}, %[[MASK]], %[[DIM]], %[[BYTES]]) {tofu.writes_operand = 1 : i64}
// CHECK-NEXT: %[[T:.*]] = bufferization.to_tensor %[[OUT]] restrict writable
// CHECK-NEXT: scf.yield %[[T]]
// CHECK: return %[[R]]
// CHECK: func.func private @tofu_all_gather(memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64, i64) attributes {llvm.emit_c_interface}
shard.grid @g(shape = 2x3)
func.func @gather(%x: tensor<2x6xf32>) -> tensor<2x36xf32> {
  %0 = shard.all_gather %x on @g grid_axes = [0, 1] gather_axis = 1
      : tensor<2x6xf32> -> tensor<2x36xf32>
  return %0 : tensor<2x36xf32>
}

// -----

// Tests that an all-to-all of f64 tiles calls the f64 entry point with the
// axis mask (2: axis 1), the split and concatenated dimensions and the
// element size.

// CHECK-LABEL: func.func @to_all(
// CHECK-DAG: %[[MASK:.*]] = arith.constant 2 : i64
// CHECK-DAG: %[[SPLIT:.*]] = arith.constant 1 : i64
// CHECK-DAG: %[[CONCAT:.*]] = arith.constant 0 : i64
// CHECK-DAG: %[[BYTES:.*]] = arith.constant 8 : i64
// CHECK: memref.alloc() : memref<6x2xf64>
// CHECK: call @tofu_all_to_all_f64(%{{.*}}, %{{.*}}, %{{.*}}, %[[MASK]], %[[SPLIT]], %[[CONCAT]], %[[BYTES]])
// CHECK: func.func private @tofu_all_to_all_f64(memref<*xf64>, memref<*xf64>, memref<*xi64>, i64, i64, i64, i64)
shard.grid @g(shape = 2x3)
func.func @to_all(%x: tensor<2x6xf64>) -> tensor<6x2xf64> {
  %0 = shard.all_to_all %x on @g grid_axes = [1] split_axis = 1
      concat_axis = 0 : tensor<2x6xf64> -> tensor<6x2xf64>
  return %0 : tensor<6x2xf64>
}

// -----

// Tests that an all-slice over grid axes [0, 1] of a 2x3 grid is a local
// slice at the rank's row-major index over those axes, (rank / 3) * 3 +
// rank mod 3, times the chunk size, with no communication.

// CHECK-LABEL: func.func @slice(
// CHECK-SAME: %[[X:.*]]: tensor<12x5xf32>
// CHECK: %[[RANK64:.*]] = call @tofu_rank() : () -> i64
// CHECK: %[[RANK:.*]] = arith.index_cast %[[RANK64]] : i64 to index
// CHECK: %[[C0:.*]] = arith.divui %[[RANK]], %{{.*}} : index
// CHECK: %[[C1:.*]] = arith.remui %[[RANK]], %{{.*}} : index
// CHECK: %[[M:.*]] = arith.muli %[[C0]], %{{.*}} : index
// CHECK: %[[I:.*]] = arith.addi %[[M]], %[[C1]] : index
// CHECK: %[[OFF:.*]] = arith.muli %[[I]], %{{.*}} : index
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][%[[OFF]], 0] [2, 5] [1, 1] : tensor<12x5xf32> to tensor<2x5xf32>
// CHECK: return %[[S]]
// CHECK-NOT: call @tofu_all
shard.grid @g(shape = 2x3)
func.func @slice(%x: tensor<12x5xf32>) -> tensor<2x5xf32> {
  %0 = shard.all_slice %x on @g grid_axes = [0, 1] slice_axis = 0
      : tensor<12x5xf32> -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Tests that an all-slice over the last axis only takes the rank's
// coordinate on it, rank mod 3, and that a collective over no grid axes is
// its input.

// CHECK-LABEL: func.func @slice_inner(
// CHECK-SAME: %[[X:.*]]: tensor<2x6xf32>
// CHECK: %[[RANK:.*]] = arith.index_cast
// CHECK-NOT: arith.divui
// CHECK: %[[C:.*]] = arith.remui %[[RANK]], %{{.*}} : index
// CHECK: %[[OFF:.*]] = arith.muli %[[C]], %{{.*}} : index
// CHECK: %[[S:.*]] = tensor.extract_slice %[[X]][0, %[[OFF]]] [2, 2] [1, 1]
// CHECK: return %[[S]], %[[X]]
shard.grid @g(shape = 2x3)
func.func @slice_inner(%x: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x6xf32>) {
  %0 = shard.all_slice %x on @g grid_axes = [1] slice_axis = 1
      : tensor<2x6xf32> -> tensor<2x2xf32>
  %1 = shard.all_gather %x on @g gather_axis = 1
      : tensor<2x6xf32> -> tensor<2x6xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2x6xf32>
}

// -----

// Tests that two reads of one tile keep their own buffer views after cse
// and canonicalize: outside a region, cse merged the second `to_buffer`
// into the first, and bufferization, which takes the tile as read at its
// `to_buffer`, could then reuse the tile's buffer before the second call.

// RUN: tofu-opt %s --convert-tofu-to-mpi --cse --canonicalize -split-input-file | FileCheck %s --check-prefix=CSE
// CSE-LABEL: func.func @two_reads(
// CSE-SAME: %[[X:.*]]: tensor<4xf32>
// CSE: scf.execute_region -> tensor<4xf32> no_inline {
// CSE: bufferization.to_buffer %[[X]] read_only
// CSE: call @tofu_fetch(
// CSE: linalg.add
// CSE: scf.execute_region -> tensor<4xf32> no_inline {
// CSE: bufferization.to_buffer %[[X]] read_only
// CSE: call @tofu_fetch(
shard.grid @g(shape = 2)
func.func @two_reads(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = tofu.fetch %x on @g shape [8] from [0, 4] to [4, 0]
      : tensor<4xf32> -> tensor<4xf32>
  %1 = linalg.add ins(%x, %0 : tensor<4xf32>, tensor<4xf32>)
      outs(%x : tensor<4xf32>) -> tensor<4xf32>
  %2 = tofu.fetch %x on @g shape [8] from [0, 4] to [4, 0]
      : tensor<4xf32> -> tensor<4xf32>
  %3 = linalg.add ins(%1, %2 : tensor<4xf32>, tensor<4xf32>)
      outs(%1 : tensor<4xf32>) -> tensor<4xf32>
  return %3 : tensor<4xf32>
}
