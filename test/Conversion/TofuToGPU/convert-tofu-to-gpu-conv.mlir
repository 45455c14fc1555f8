// RUN: tofu-opt %s --convert-tofu-to-gpu --split-input-file | FileCheck %s

// Tests that a forward convolution whose output was just zero-filled
// becomes one cudnnConvolutionForward call that overwrites it (beta = 0,
// the fill is dropped), with the extents of the image, the filter and the
// output, the stride and the strides of the three buffers.

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x3x9x9xf32>, %[[W:[a-z0-9]+]]: memref<4x3x3x3xf32>, %[[Y:[a-z0-9]+]]: memref<2x4x4x4xf32>
// CHECK-NOT: linalg.fill
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[XS:.*]]:4, %[[XST:.*]]:4 = memref.extract_strided_metadata %[[X]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[WS:.*]]:4, %[[WST:.*]]:4 = memref.extract_strided_metadata %[[W]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[YS:.*]]:4, %[[YST:.*]]:4 = memref.extract_strided_metadata %[[Y]]
// CHECK: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: call @tofu_gpu_conv2d_forward(%[[XS]]#0, %[[XS]]#1, %[[XS]]#2, %[[XS]]#3, %[[WS]]#0, %c1{{(_[0-9]+)?}}, %[[WS]]#2, %[[WS]]#3, %[[YS]]#2, %[[YS]]#3, %[[S:c[0-9]+]]{{(_[0-9]+)?}}, %[[S]]{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %{{[a-z0-9_]+}}, %[[XST]]#0, %[[XST]]#1, %[[XST]]#2, %[[XST]]#3, %{{[a-z0-9_]+}}, %[[WST]]#0, %[[WST]]#1, %[[WST]]#2, %[[WST]]#3, %{{[a-z0-9_]+}}, %[[YST]]#0, %[[YST]]#1, %[[YST]]#2, %[[YST]]#3, %[[BETA]])
// 2 * 2 * 4 * 4 * 4 * 3 * 3 * 3
// CHECK-SAME: tofu.flops = 6912 : i64, tofu.library = "cudnn"
// CHECK-NOT: linalg.conv_2d_nchw_fchw
// CHECK: func.func private @tofu_gpu_conv2d_forward(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32)
func.func @forward(%x: memref<2x3x9x9xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%y : memref<2x4x4x4xf32>)
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%x, %w : memref<2x3x9x9xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x4x4xf32>)
  return
}

// -----

// Tests that a forward convolution into a bias that was broadcast into its
// output (as torch-mlir emits it) accumulates into it (beta = 1).

// CHECK-LABEL: func.func @forward_onto_bias
// CHECK: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: call @tofu_gpu_conv2d_forward({{.*}}, %[[BETA]])
func.func @forward_onto_bias(%x: memref<2x3x6x6xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x4x4xf32>) {
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x3x6x6xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x4x4xf32>)
  return
}

// -----

// Tests the data gradient of tofu-autodiff: a generic over the forward
// loops (n, f, oh, ow, c, kh, kw) that reads the filter and the output's
// gradient and writes the (padded) image's gradient through the window
// index oh * 2 + kh. It becomes cudnnConvolutionBackwardData, with the
// filter's and dY's buffers in the places of W and Y.

#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-LABEL: func.func @backward_data
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<4x3x3x3xf32>, %[[DY:[a-z0-9]+]]: memref<2x4x4x4xf32>, %[[DX:[a-z0-9]+]]: memref<2x3x9x9xf32>
// CHECK-NOT: linalg.fill
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[XS:.*]]:4, %[[XST:.*]]:4 = memref.extract_strided_metadata %[[DX]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[WS:.*]]:4, %[[WST:.*]]:4 = memref.extract_strided_metadata %[[W]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[YS:.*]]:4, %[[YST:.*]]:4 = memref.extract_strided_metadata %[[DY]]
// CHECK: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: call @tofu_gpu_conv2d_backward_data(%[[XS]]#0, %[[XS]]#1, %[[XS]]#2, %[[XS]]#3, %[[WS]]#0, %c1{{(_[0-9]+)?}}, %[[WS]]#2, %[[WS]]#3, %[[YS]]#2, %[[YS]]#3, %[[S:c[0-9]+]]{{(_[0-9]+)?}}, %[[S]]{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %{{[a-z0-9_]+}}, %[[XST]]#0, %[[XST]]#1, %[[XST]]#2, %[[XST]]#3, %{{[a-z0-9_]+}}, %[[WST]]#0, %[[WST]]#1, %[[WST]]#2, %[[WST]]#3, %{{[a-z0-9_]+}}, %[[YST]]#0, %[[YST]]#1, %[[YST]]#2, %[[YST]]#3, %[[BETA]])
// CHECK-SAME: tofu.flops = 6912 : i64, tofu.library = "cudnn"
// CHECK-NOT: linalg.generic
func.func @backward_data(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x4x4xf32>, %dx: memref<2x3x9x9xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dx : memref<2x3x9x9xf32>)
  linalg.generic {indexing_maps = [#w, #y, #x],
                  iterator_types = ["parallel", "reduction", "parallel", "parallel", "parallel", "parallel", "parallel"]}
    ins(%w, %dy : memref<4x3x3x3xf32>, memref<2x4x4x4xf32>) outs(%dx : memref<2x3x9x9xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests the filter gradient of tofu-autodiff: the generic reads the image
// and dY and writes the filter's gradient; it becomes
// cudnnConvolutionBackwardFilter.

#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @backward_filter
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x3x6x6xf32>, %[[DY:[a-z0-9]+]]: memref<2x4x4x4xf32>, %[[DW:[a-z0-9]+]]: memref<4x3x3x3xf32>
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[XS:.*]]:4, %[[XST:.*]]:4 = memref.extract_strided_metadata %[[X]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[WS:.*]]:4, %[[WST:.*]]:4 = memref.extract_strided_metadata %[[DW]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[YS:.*]]:4, %[[YST:.*]]:4 = memref.extract_strided_metadata %[[DY]]
// CHECK: call @tofu_gpu_conv2d_backward_filter(%[[XS]]#0, %[[XS]]#1, %[[XS]]#2, %[[XS]]#3, %[[WS]]#0, %c1{{(_[0-9]+)?}}, %[[WS]]#2, %[[WS]]#3, %[[YS]]#2, %[[YS]]#3, %[[S:c[0-9]+]]{{(_[0-9]+)?}}, %[[S]]{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %{{[a-z0-9_]+}}, %[[XST]]#0, %[[XST]]#1, %[[XST]]#2, %[[XST]]#3, %{{[a-z0-9_]+}}, %[[WST]]#0, %[[WST]]#1, %[[WST]]#2, %[[WST]]#3, %{{[a-z0-9_]+}}, %[[YST]]#0, %[[YST]]#1, %[[YST]]#2, %[[YST]]#3, %{{[a-z0-9_]+}})
// CHECK-SAME: tofu.flops = 6912 : i64, tofu.library = "cudnn"
// CHECK-NOT: linalg.generic
func.func @backward_filter(%x: memref<2x3x6x6xf32>, %dy: memref<2x4x4x4xf32>, %dw: memref<4x3x3x3xf32>) {
  linalg.generic {indexing_maps = [#x, #y, #w],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
    ins(%x, %dy : memref<2x3x6x6xf32>, memref<2x4x4x4xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %b, %a : f32
    %s = arith.addf %p, %acc : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests a 1-D convolution (the zoo's conv1d): it is a 2-D one of height 1,
// with unit height, kernel height and stride in the call.

#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 + d4)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @conv1d
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x3x10xf32>, %[[W:[a-z0-9]+]]: memref<4x3x3xf32>, %[[Y:[a-z0-9]+]]: memref<2x4x8xf32>
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[XS:.*]]:3, %[[XST:.*]]:3 = memref.extract_strided_metadata %[[X]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[WS:.*]]:3, %[[WST:.*]]:3 = memref.extract_strided_metadata %[[W]]
// CHECK-DAG: %{{.*}}, %{{.*}}, %[[YS:.*]]:3, %[[YST:.*]]:3 = memref.extract_strided_metadata %[[Y]]
// CHECK: call @tofu_gpu_conv2d_forward(%[[XS]]#0, %[[XS]]#1, %c1{{(_[0-9]+)?}}, %[[XS]]#2, %[[WS]]#0, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %[[WS]]#2, %c1{{(_[0-9]+)?}}, %[[YS]]#2, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %{{[a-z0-9_]+}}, %[[XST]]#0, %[[XST]]#1, %c1{{(_[0-9]+)?}}, %[[XST]]#2, %{{[a-z0-9_]+}}, %[[WST]]#0, %[[WST]]#1, %c1{{(_[0-9]+)?}}, %[[WST]]#2, %{{[a-z0-9_]+}}, %[[YST]]#0, %[[YST]]#1, %c1{{(_[0-9]+)?}}, %[[YST]]#2, %{{[a-z0-9_]+}})
// CHECK-SAME: tofu.flops = 1152 : i64, tofu.library = "cudnn"
func.func @conv1d(%x: memref<2x3x10xf32>, %w: memref<4x3x3xf32>, %y: memref<2x4x8xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
    ins(%x, %w : memref<2x3x10xf32>, memref<4x3x3xf32>) outs(%y : memref<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that a windowed op that is not a multiply-accumulate (a max pool)
// is no convolution: it stays a linalg op, without a remark.

// CHECK-LABEL: func.func @max_pool
// CHECK: linalg.pooling_nchw_max
// CHECK-NOT: call
func.func @max_pool(%x: memref<2x3x6x6xf32>, %window: memref<2x2xf32>, %y: memref<2x3x3x3xf32>) {
  linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%x, %window : memref<2x3x6x6xf32>, memref<2x2xf32>) outs(%y : memref<2x3x3x3xf32>)
  return
}
