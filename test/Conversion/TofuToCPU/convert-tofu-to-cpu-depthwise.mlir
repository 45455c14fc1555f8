// RUN: tofu-opt %s --convert-tofu-to-cpu --canonicalize | FileCheck %s

// Tests that depthwise convolutions become oneDNN calls of the grouped
// convolution with as many groups as channels: the (C, KH, KW) filter
// passed as (C, 1, KH, KW) (one channel per group, its stride a unit
// dimension's), the forward convolution on a zero-filled output (beta 0)
// with its stride, and tofu-autodiff's data gradient and filter gradient
// (the latter accumulating into the filter: beta 1).

#x = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh * 2 + kh, ow * 2 + kw)>
#w = affine_map<(n, c, oh, ow, kh, kw) -> (c, kh, kw)>
#y = affine_map<(n, c, oh, ow, kh, kw) -> (n, c, oh, ow)>

// CHECK-LABEL: func.func @forward
// CHECK-NOT: linalg.fill
// n, c, h, w, f, groups, kh, kw, oh, ow, strides, paddings; the filter's
// strides 9, 1 (the unit channel dimension), 3, 1.
// CHECK: call @tofu_cpu_conv2d_forward(%c2, %c6, %c9, %c9, %c6, %c6, %c3, %c3, %c4, %c4, %c2, %c2, %c0, %c0, %{{.*}}, %c486, %c81, %c9, %c1, %{{.*}}, %c9, %c1, %c3, %c1, %{{.*}}, %c96, %c16, %c4, %c1, %cst)
// CHECK-SAME: tofu.flops = 3456 : i64, tofu.library = "onednn"
// CHECK-NOT: linalg.depthwise_conv_2d_nchw_chw
func.func @forward(%x: memref<2x6x9x9xf32>, %w: memref<6x3x3xf32>, %y: memref<2x6x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x6x4x4xf32>)
  linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%x, %w : memref<2x6x9x9xf32>, memref<6x3x3xf32>) outs(%y : memref<2x6x4x4xf32>)
  return
}

// CHECK-LABEL: func.func @gradients
// CHECK-DAG: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
// CHECK: call @tofu_cpu_conv2d_backward_data(%c2, %c6, %c9, %c9, %c6, %c6, %c3, %c3, %c4, %c4, %c2, %c2, %c0, %c0,
// CHECK-SAME: %[[ZERO]])
// CHECK: call @tofu_cpu_conv2d_backward_filter(%c2, %c6, %c9, %c9, %c6, %c6, %c3, %c3, %c4, %c4, %c2, %c2, %c0, %c0,
// CHECK-SAME: %[[ONE]])
// CHECK-NOT: linalg.generic
func.func @gradients(%w: memref<6x3x3xf32>, %dy: memref<2x6x4x4xf32>, %dx: memref<2x6x9x9xf32>,
                     %x: memref<2x6x9x9xf32>, %dw: memref<6x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x6x9x9xf32>)
  linalg.generic {indexing_maps = [#w, #y, #x],
                  iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%w, %dy : memref<6x3x3xf32>, memref<2x6x4x4xf32>) outs(%dx : memref<2x6x9x9xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  linalg.generic {indexing_maps = [#x, #y, #w],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel"]}
      ins(%x, %dy : memref<2x6x9x9xf32>, memref<2x6x4x4xf32>) outs(%dw : memref<6x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  }
  return
}
