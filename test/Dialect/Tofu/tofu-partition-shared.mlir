// RUN: tofu-opt %s --tdl-attach --tofu-partition | FileCheck %s
// RUN: tofu-opt %s --tdl-attach --tofu-partition=report=- -o /dev/null 2>&1 | FileCheck %s --check-prefix=BYTES

// Tests that two operators reading the same regions of a tensor share one
// conversion: %w is cut by rows and both products read it whole, so it is
// all-gathered once; the plan's program bytes count that fetch once too,
// where the step model charges both edges.

// BYTES: tofu-partition @shared_gather: cost-model bytes 384 B/step, program bytes 192 B/step, generated 192 B/step

// CHECK-LABEL: func.func @shared_gather(
// CHECK: %[[W:.*]] = shard.all_gather %{{.*}} on @shared_gather_grid
// CHECK-NOT: shard.all_gather
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[W]] :
// CHECK-NOT: shard.all_gather
// CHECK: linalg.generic {{.*}} ins(%{{.*}}, %[[W]] :
func.func @shared_gather(%x: tensor<4x8xf32> {tofu.tiling = ["cut(0)"]},
                         %y: tensor<4x8xf32> {tofu.tiling = ["cut(0)"]},
                         %w: tensor<8x6xf32> {tofu.tiling = ["cut(0)"]})
    -> (tensor<4x6xf32>, tensor<4x6xf32>)
    attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() {tofu.tilings = [["cut(0)"]]} : tensor<4x6xf32>
  %f = linalg.fill {tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      ins(%z : f32) outs(%e : tensor<4x6xf32>) -> tensor<4x6xf32>
  %m = linalg.matmul {tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      ins(%x, %w : tensor<4x8xf32>, tensor<8x6xf32>)
      outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  %n = linalg.matmul {tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      ins(%y, %w : tensor<4x8xf32>, tensor<8x6xf32>)
      outs(%f : tensor<4x6xf32>) -> tensor<4x6xf32>
  return %m, %n : tensor<4x6xf32>, tensor<4x6xf32>
}
