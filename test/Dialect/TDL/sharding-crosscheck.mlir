// RUN: tofu-opt %s --tdl-attach --test-tdl-sharding-crosscheck -o /dev/null | FileCheck %s

// Tests that for every category of linalg named op, TDL's strategies cut
// every loop that upstream's ShardingInterface exposes, as Case 1 for
// parallel loops and Case 2 for reduction loops.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: crosscheck linalg.matmul: 3 loops agree
// CHECK-NEXT:  crosscheck linalg.batch_matmul: 4 loops agree
// CHECK-NEXT:  crosscheck linalg.matvec: 2 loops agree
// CHECK-NEXT:  crosscheck linalg.conv_1d_ncw_fcw: 5 loops agree
// CHECK-NEXT:  crosscheck linalg.conv_2d_nchw_fchw: 7 loops agree
// CHECK-NEXT:  crosscheck linalg.conv_3d_ncdhw_fcdhw: 9 loops agree
// CHECK-NEXT:  crosscheck linalg.depthwise_conv_2d_nhwc_hwc: 6 loops agree
// CHECK-NEXT:  crosscheck linalg.pooling_nhwc_sum: 6 loops agree
// CHECK-NEXT:  crosscheck linalg.transpose: 2 loops agree
// CHECK-NEXT:  crosscheck linalg.broadcast: 2 loops agree
// CHECK-NEXT:  crosscheck linalg.reduce: 2 loops agree
// CHECK-NEXT:  crosscheck linalg.fill: 2 loops agree
// CHECK-NEXT:  crosscheck linalg.copy: 2 loops agree
// CHECK-NEXT:  crosscheck linalg.add: 2 loops agree
// CHECK-NEXT:  crosscheck linalg.generic: 2 loops agree
func.func @all(%a: tensor<8x6xf32>, %b: tensor<6x4xf32>, %c: tensor<8x4xf32>,
               %ba: tensor<2x8x6xf32>, %bb: tensor<2x6x4xf32>, %bc: tensor<2x8x4xf32>,
               %v: tensor<6xf32>, %y: tensor<8xf32>,
               %x1: tensor<4x3x10xf32>, %w1: tensor<8x3x3xf32>, %o1: tensor<4x8x8xf32>,
               %x2: tensor<2x3x9x9xf32>, %w2: tensor<4x3x2x2xf32>, %o2: tensor<2x4x8x8xf32>,
               %x3: tensor<2x2x6x6x6xf32>, %w3: tensor<4x2x3x3x3xf32>, %o3: tensor<2x4x4x4x4xf32>,
               %xd: tensor<2x9x9x4xf32>, %wd: tensor<2x2x4xf32>, %od: tensor<2x8x8x4xf32>,
               %win: tensor<2x2xf32>, %s: f32) {
  %0 = linalg.matmul ins(%a, %b : tensor<8x6xf32>, tensor<6x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = linalg.batch_matmul ins(%ba, %bb : tensor<2x8x6xf32>, tensor<2x6x4xf32>) outs(%bc : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  %2 = linalg.matvec ins(%a, %v : tensor<8x6xf32>, tensor<6xf32>) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  %3 = linalg.conv_1d_ncw_fcw ins(%x1, %w1 : tensor<4x3x10xf32>, tensor<8x3x3xf32>) outs(%o1 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  %4 = linalg.conv_2d_nchw_fchw ins(%x2, %w2 : tensor<2x3x9x9xf32>, tensor<4x3x2x2xf32>) outs(%o2 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %5 = linalg.conv_3d_ncdhw_fcdhw ins(%x3, %w3 : tensor<2x2x6x6x6xf32>, tensor<4x2x3x3x3xf32>) outs(%o3 : tensor<2x4x4x4x4xf32>) -> tensor<2x4x4x4x4xf32>
  %6 = linalg.depthwise_conv_2d_nhwc_hwc ins(%xd, %wd : tensor<2x9x9x4xf32>, tensor<2x2x4xf32>) outs(%od : tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  %7 = linalg.pooling_nhwc_sum ins(%xd, %win : tensor<2x9x9x4xf32>, tensor<2x2xf32>) outs(%od : tensor<2x8x8x4xf32>) -> tensor<2x8x8x4xf32>
  %t = tensor.empty() : tensor<6x8xf32>
  %8 = linalg.transpose ins(%a : tensor<8x6xf32>) outs(%t : tensor<6x8xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x6xf32>
  %9 = linalg.broadcast ins(%v : tensor<6xf32>) outs(%e : tensor<8x6xf32>) dimensions = [0]
  %10 = linalg.reduce ins(%a : tensor<8x6xf32>) outs(%y : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %m = arith.maximumf %in, %acc : f32
      linalg.yield %m : f32
    }
  %11 = linalg.fill ins(%s : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %12 = linalg.copy ins(%a : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %13 = linalg.add ins(%a, %a : tensor<8x6xf32>, tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  %14 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x6xf32>) outs(%y : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %p = arith.mulf %acc, %x : f32
    linalg.yield %p : f32
  } -> tensor<8xf32>
  return
}
