// RUN: tofu-opt %s --convert-tofu-to-cpu --canonicalize 2>/dev/null | FileCheck %s --check-prefixes=CHECK,CPU
// RUN: tofu-opt %s --convert-tofu-to-gpu --canonicalize 2>/dev/null | FileCheck %s --check-prefixes=CHECK,GPU
// RUN: tofu-opt %s --convert-tofu-to-cpu -verify-diagnostics -o /dev/null

// The same calls from both backends, oneDNN's on the CPU and cuDNN's on
// the GPU, which differ only in their entry points.

// Tests that depthwise convolutions become calls of the grouped
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
// CHECK: call @tofu_{{cpu|gpu}}_conv2d_forward(%c2, %c6, %c9, %c9, %c6, %c6, %c3, %c3, %c4, %c4, %c2, %c2, %c0, %c0, %{{.*}}, %c486, %c81, %c9, %c1, %{{.*}}, %c9, %c1, %c3, %c1, %{{.*}}, %c96, %c16, %c4, %c1, %cst)
// CHECK-SAME: tofu.flops = 3456 : i64
// CPU-SAME: tofu.library = "onednn"
// GPU-SAME: tofu.library = "cudnn"
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
// CHECK: call @tofu_{{cpu|gpu}}_conv2d_backward_data(%c2, %c6, %c9, %c9, %c6, %c6, %c3, %c3, %c4, %c4, %c2, %c2, %c0, %c0,
// CHECK-SAME: %[[ZERO]])
// CHECK: call @tofu_{{cpu|gpu}}_conv2d_backward_filter(%c2, %c6, %c9, %c9, %c6, %c6, %c3, %c3, %c4, %c4, %c2, %c2, %c0, %c0,
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

// Tests that a grouped convolution (2 groups) becomes a call whose image,
// filter and output take the group and channel dimensions as one: (N, C),
// (F, C / groups) and (N, F) of 2 groups, the merged dimension's stride
// the channels'.
#gx = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, c, oh + kh, ow + kw)>
#gw = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g, f, c, kh, kw)>
#gy = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>

// CHECK-LABEL: func.func @grouped
// n, c, h, w, f, groups, kh, kw, oh, ow, strides, paddings.
// CHECK: call @tofu_{{cpu|gpu}}_conv2d_forward(%c2, %c6, %c5, %c5, %c4, %c2, %c3, %c3, %c3, %c3, %c1, %c1, %c0, %c0, %{{.*}}, %c150, %c25, %c5, %c1, %{{.*}}, %c27, %c9, %c3, %c1, %{{.*}}, %c36, %c9, %c3, %c1, %cst)
// CPU-SAME: tofu.library = "onednn"
// GPU-SAME: tofu.library = "cudnn"
func.func @grouped(%x: memref<2x2x3x5x5xf32>, %w: memref<2x2x3x3x3xf32>, %y: memref<2x2x2x3x3xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x2x2x3x3xf32>)
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x2x3x5x5xf32>, memref<2x2x3x3x3xf32>) outs(%y : memref<2x2x2x3x3xf32>)
  return
}

// A group dimension that does not stride over its channels (a view of
// every other group) stays loops.
// CHECK-LABEL: func.func @gapped_groups
// CHECK-NOT: call @tofu_{{cpu|gpu}}_conv2d
// CHECK: linalg.conv_2d_ngchw_gfchw
func.func @gapped_groups(%x: memref<2x2x3x5x5xf32, strided<[300, 150, 25, 5, 1]>>, %w: memref<2x2x3x3x3xf32>,
                         %y: memref<2x2x2x3x3xf32>) {
  // expected-remark @+1 {{convert-tofu-to-cpu: not a library call (the groups and the channels are not one dimension of the buffers); the convolution stays generated code}}
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x2x3x5x5xf32, strided<[300, 150, 25, 5, 1]>>, memref<2x2x3x3x3xf32>) outs(%y : memref<2x2x2x3x3xf32>)
  return
}
