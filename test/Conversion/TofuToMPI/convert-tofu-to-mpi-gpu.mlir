// RUN: tofu-opt %s --convert-tofu-to-mpi=runtime=gpu -split-input-file | FileCheck %s

// Tests that with runtime=gpu every collective calls the GPU collectives'
// entry point of the same arguments (tofu_gpu_*, the element type's
// variant where the MPI runtime has one), tagged as a library call of the
// GPU pipeline whose first two operands (input and result) are device
// buffers, and that the tags survive the removal of the tofu.* attributes.

// CHECK-LABEL: func.func @collectives(
// CHECK: call @tofu_gpu_all_gather(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {tofu.device_operands = 2 : i64, tofu.library = "collective", tofu.writes_operand = 1 : i64}
// CHECK: call @tofu_gpu_reduce_scatter(%{{.*}}) {tofu.device_operands = 2 : i64, tofu.library = "collective", tofu.writes_operand = 1 : i64}
// CHECK: call @tofu_gpu_all_reduce(%{{.*}}) {tofu.device_operands = 2 : i64, tofu.library = "collective", tofu.writes_operand = 1 : i64}
// CHECK: call @tofu_gpu_all_to_all_f64(%{{.*}}) {tofu.device_operands = 2 : i64, tofu.library = "collective", tofu.writes_operand = 1 : i64}
// CHECK: call @tofu_gpu_fetch(%{{.*}}) {tofu.device_operands = 2 : i64, tofu.library = "collective", tofu.writes_operand = 1 : i64}
// CHECK-NOT: call @tofu_all
// CHECK-NOT: call @tofu_fetch
// CHECK-DAG: func.func private @tofu_gpu_all_gather(memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64, i64) attributes {llvm.emit_c_interface}
// CHECK-DAG: func.func private @tofu_gpu_fetch(memref<*xf32>, memref<*xf32>, memref<*xi64>, memref<*xi64>, i64) attributes {llvm.emit_c_interface}
shard.grid @g(shape = 2)
func.func @collectives(%x: tensor<2x6xf32>, %y: tensor<4x6xf32>,
                       %z: tensor<2x6xf64>, %w: tensor<8xf32>)
    -> (tensor<4x6xf32>, tensor<2x6xf32>, tensor<4x6xf32>, tensor<4x3xf64>,
        tensor<8xf32>) {
  %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0
      : tensor<2x6xf32> -> tensor<4x6xf32>
  %1 = shard.reduce_scatter %y on @g grid_axes = [0] scatter_axis = 0
      : tensor<4x6xf32> -> tensor<2x6xf32>
  %2 = shard.all_reduce %y on @g grid_axes = [0]
      : tensor<4x6xf32> -> tensor<4x6xf32>
  %3 = shard.all_to_all %z on @g grid_axes = [0] split_axis = 1
      concat_axis = 0 : tensor<2x6xf64> -> tensor<4x3xf64>
  %4 = tofu.fetch %w on @g shape [16] from [0, 8] to [4, 8]
      : tensor<8xf32> -> tensor<8xf32>
  return %0, %1, %2, %3, %4 : tensor<4x6xf32>, tensor<2x6xf32>,
      tensor<4x6xf32>, tensor<4x3xf64>, tensor<8xf32>
}
