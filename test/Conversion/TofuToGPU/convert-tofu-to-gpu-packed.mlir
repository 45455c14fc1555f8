// RUN: tofu-opt %s --convert-tofu-to-gpu -verify-diagnostics | FileCheck %s
// RUN: tofu-opt %s --convert-tofu-to-gpu=fold-strided-data-gradients=false -verify-diagnostics | FileCheck %s

// Tests that by default (fold-strided-data-gradients=false) the stride-2 data
// gradient of convert-tofu-to-gpu-pad.mlir's @data_gradient_interior writes
// its whole 10x10 buffer with padding 0 (a packed image at the buffer's own
// address, overwritten: the zero fill is dropped) instead of the buffer's
// 8x8 interior with cuDNN's padding 1, and the interior is then copied out.

#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-LABEL: func.func @data_gradient_packed
// CHECK: %[[G:.*]] = memref.alloc() : memref<2x3x10x10xf32>
// CHECK-NOT: linalg.fill
// CHECK: %{{.*}}, %{{.*}}, %[[GS:.*]]:4, %[[GST:.*]]:4 = memref.extract_strided_metadata %[[G]]
// CHECK: call @tofu_gpu_conv2d_backward_data(%[[GS]]#0, %[[GS]]#1, %[[GS]]#2, %[[GS]]#3, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}},
// CHECK: memref.subview %[[G]][0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1]
// CHECK: memref.copy
func.func @data_gradient_packed(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x4x4xf32>, %dx: memref<2x3x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %g = memref.alloc() : memref<2x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<2x3x10x10xf32>)
  // expected-remark @+1 {{convert-tofu-to-gpu: the strided data gradient writes a packed image, copied into its padded one}}
  linalg.generic {indexing_maps = [#w, #y, #x],
                  iterator_types = ["parallel", "reduction", "parallel", "parallel", "parallel", "parallel", "parallel"]}
    ins(%w, %dy : memref<4x3x3x3xf32>, memref<2x4x4x4xf32>) outs(%g : memref<2x3x10x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %interior = memref.subview %g[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %interior, %dx : memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>> to memref<2x3x8x8xf32>
  memref.dealloc %g : memref<2x3x10x10xf32>
  return
}
