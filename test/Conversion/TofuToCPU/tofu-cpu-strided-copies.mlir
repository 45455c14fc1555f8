// RUN: tofu-opt %s --tofu-cpu-strided-copies | FileCheck %s

// Tests that a copy into a column block of a wider buffer (a q, k or v
// gradient into the fused gradient) and a copy from a layout known only at
// run time become generics that yield their input, and that a copy of one
// contiguous block, a 0-d copy and the training driver's copies stay
// memref.copy.

// CHECK-LABEL: func.func @copies
// CHECK: linalg.generic {indexing_maps = [#[[ID:.*]], #[[ID]]], iterator_types = ["parallel", "parallel"]}
// CHECK-SAME: ins(%arg0 : memref<4x8xf32>) outs(%{{.*}} : memref<4x8xf32, strided<[24, 1], offset: 8>>)
// CHECK-NEXT: ^bb0(%[[IN:.*]]: f32, %{{.*}}: f32):
// CHECK-NEXT: linalg.yield %[[IN]] : f32
// CHECK: linalg.generic
// CHECK-SAME: ins(%arg2 : memref<4x8xf32, strided<[?, ?], offset: ?>>) outs(%arg0 : memref<4x8xf32>)
// CHECK: memref.copy %arg0, %arg3 : memref<4x8xf32> to memref<4x8xf32>
// CHECK: memref.copy %arg4, %arg5 : memref<f32> to memref<f32>
func.func @copies(%g: memref<4x8xf32>, %fused: memref<4x24xf32>, %dyn: memref<4x8xf32, strided<[?, ?], offset: ?>>,
                  %whole: memref<4x8xf32>, %s: memref<f32>, %t: memref<f32>) {
  %cols = memref.subview %fused[0, 8] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 8>>
  memref.copy %g, %cols : memref<4x8xf32> to memref<4x8xf32, strided<[24, 1], offset: 8>>
  memref.copy %dyn, %g : memref<4x8xf32, strided<[?, ?], offset: ?>> to memref<4x8xf32>
  memref.copy %g, %whole : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %s, %t : memref<f32> to memref<f32>
  return
}

// CHECK-LABEL: func.func @driver
// CHECK-NOT: linalg.generic
// CHECK: memref.copy
func.func @driver(%g: memref<4x8xf32>, %fused: memref<4x24xf32>) attributes {tofu.driver} {
  %cols = memref.subview %fused[0, 8] [4, 8] [1, 1] : memref<4x24xf32> to memref<4x8xf32, strided<[24, 1], offset: 8>>
  memref.copy %g, %cols : memref<4x8xf32> to memref<4x8xf32, strided<[24, 1], offset: 8>>
  return
}
