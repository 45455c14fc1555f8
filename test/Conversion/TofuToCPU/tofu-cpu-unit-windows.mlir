// RUN: tofu-opt %s --tofu-cpu-unit-windows | FileCheck %s

// Tests that a 1x1 forward convolution with unit strides and its data and
// filter gradients become products of the filter collapsed to F x C and
// the images, which the shared GEMM rule takes as one call per image (the
// filter gradient's result expanded back to F x C x 1 x 1); and that a 3x3
// window and a stride of 2 stay convolutions.

// CHECK-DAG: #[[IMG:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
// CHECK-DAG: #[[FIL:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func.func @forward
// CHECK:      %[[W:.*]] = tensor.collapse_shape %arg1 {{\[}}[0], [1, 2, 3]] : tensor<8x4x1x1xf32> into tensor<8x4xf32>
// CHECK-NEXT: %[[P:.*]] = linalg.generic {indexing_maps = [#[[IMG]], #[[FIL]], #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%arg0, %[[W]] : tensor<2x4x5x5xf32>, tensor<8x4xf32>) outs(%arg2 : tensor<2x8x5x5xf32>) attrs = {tofu.op_id = 7 : i64}
// CHECK:      arith.mulf
// CHECK-NEXT: arith.addf
// CHECK:      return %[[P]]
func.func @forward(%x: tensor<2x4x5x5xf32>, %w: tensor<8x4x1x1xf32>, %y: tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>, tofu.op_id = 7 : i64} ins(%x, %w : tensor<2x4x5x5xf32>, tensor<8x4x1x1xf32>) outs(%y : tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  return %0 : tensor<2x8x5x5xf32>
}

// The data gradient as tofu-autodiff writes it: dX[n, c, h + kh, w + kw]
// += W[f, c, kh, kw] * dY[n, f, h, w].
#w = affine_map<(n, c, h, w, f, kh, kw) -> (f, c, kh, kw)>
#dy = affine_map<(n, c, h, w, f, kh, kw) -> (n, f, h, w)>
#dx = affine_map<(n, c, h, w, f, kh, kw) -> (n, c, h + kh, w + kw)>
// CHECK-LABEL: func.func @data_gradient
// CHECK:      %[[W:.*]] = tensor.collapse_shape %arg0
// CHECK-NEXT: %[[P:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}, #[[IMG2:.*]]], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%[[W]], %arg1 : tensor<8x4xf64>, tensor<2x8x5x5xf64>) outs(%arg2 : tensor<2x4x5x5xf64>)
// CHECK:      return %[[P]]
func.func @data_gradient(%w: tensor<8x4x1x1xf64>, %dy: tensor<2x8x5x5xf64>, %dx: tensor<2x4x5x5xf64>) -> tensor<2x4x5x5xf64> {
  %0 = linalg.generic {indexing_maps = [#w, #dy, #dx], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%w, %dy : tensor<8x4x1x1xf64>, tensor<2x8x5x5xf64>) outs(%dx : tensor<2x4x5x5xf64>) {
  ^bb0(%a: f64, %b: f64, %o: f64):
    %m = arith.mulf %a, %b : f64
    %s = arith.addf %o, %m : f64
    linalg.yield %s : f64
  } -> tensor<2x4x5x5xf64>
  return %0 : tensor<2x4x5x5xf64>
}

// The filter gradient: dW[f, c, kh, kw] += X[n, c, h + kh, w + kw] * dY[n,
// f, h, w], summed over the images and the pixels.
#x = affine_map<(f, c, kh, kw, n, h, w) -> (n, c, h + kh, w + kw)>
#dy2 = affine_map<(f, c, kh, kw, n, h, w) -> (n, f, h, w)>
#dw = affine_map<(f, c, kh, kw, n, h, w) -> (f, c, kh, kw)>
// CHECK-LABEL: func.func @kept
// CHECK-NOT: tensor.collapse_shape
// CHECK:     linalg.conv_2d_nchw_fchw {{.*}} tensor<8x4x3x3xf32>
// CHECK:     linalg.conv_2d_nchw_fchw {{.*}} strides = dense<2>
// CHECK:     %[[DW:.*]] = tensor.collapse_shape %arg3 {{\[}}[0], [1, 2, 3]] : tensor<8x4x1x1xf32> into tensor<8x4xf32>
// CHECK:     %[[G:.*]] = linalg.generic {indexing_maps = [#[[IMG]], #[[OUT]], #[[FIL]]], iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction"]} ins(%arg0, %arg4 : tensor<2x4x5x5xf32>, tensor<2x8x5x5xf32>) outs(%[[DW]] : tensor<8x4xf32>)
// CHECK:     %[[E:.*]] = tensor.expand_shape %[[G]] {{\[}}[0], [1, 2, 3]] output_shape [8, 4, 1, 1] : tensor<8x4xf32> into tensor<8x4x1x1xf32>
// CHECK:     return %{{.*}}, %{{.*}}, %[[E]]
func.func @kept(%x: tensor<2x4x5x5xf32>, %w3: tensor<8x4x3x3xf32>, %y3: tensor<2x8x3x3xf32>, %w: tensor<8x4x1x1xf32>, %dy: tensor<2x8x5x5xf32>) -> (tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32>, tensor<8x4x1x1xf32>) {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%x, %w3 : tensor<2x4x5x5xf32>, tensor<8x4x3x3xf32>) outs(%y3 : tensor<2x8x3x3xf32>) -> tensor<2x8x3x3xf32>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : tensor<2xi64>, strides = dense<2> : tensor<2xi64>} ins(%x, %w : tensor<2x4x5x5xf32>, tensor<8x4x1x1xf32>) outs(%y3 : tensor<2x8x3x3xf32>) -> tensor<2x8x3x3xf32>
  %2 = linalg.generic {indexing_maps = [#x, #dy2, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %dy : tensor<2x4x5x5xf32>, tensor<2x8x5x5xf32>) outs(%w : tensor<8x4x1x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4x1x1xf32>
  return %0, %1, %2 : tensor<2x8x3x3xf32>, tensor<2x8x3x3xf32>, tensor<8x4x1x1xf32>
}

// Tests that a zero-filled filter gradient fills the collapsed filter, so
// that the fill and the product write one buffer (the library call then
// takes the fill's place, beta 0).

// CHECK-LABEL: func.func @filled_filter_gradient
// CHECK:     %[[E:.*]] = tensor.empty() : tensor<8x4x1x1xf32>
// CHECK:     %[[C:.*]] = tensor.collapse_shape %[[E]] {{\[}}[0], [1, 2, 3]] : tensor<8x4x1x1xf32> into tensor<8x4xf32>
// CHECK:     %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[C]] : tensor<8x4xf32>)
// CHECK:     linalg.generic {{.*}} outs(%[[Z]] : tensor<8x4xf32>)
func.func @filled_filter_gradient(%x: tensor<2x4x5x5xf32>, %dy: tensor<2x8x5x5xf32>) -> tensor<8x4x1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x4x1x1xf32>
  %w = linalg.fill ins(%zero : f32) outs(%e : tensor<8x4x1x1xf32>) -> tensor<8x4x1x1xf32>
  %g = linalg.generic {indexing_maps = [#x, #dy2, #dw], iterator_types = ["parallel", "parallel", "parallel", "parallel", "reduction", "reduction", "reduction"]} ins(%x, %dy : tensor<2x4x5x5xf32>, tensor<2x8x5x5xf32>) outs(%w : tensor<8x4x1x1xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x4x1x1xf32>
  return %g : tensor<8x4x1x1xf32>
}
