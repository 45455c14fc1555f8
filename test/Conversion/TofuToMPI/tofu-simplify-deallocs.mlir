// RUN: tofu-opt %s --tofu-simplify-deallocs | FileCheck %s

// Tests that upstream buffer-deallocation-simplification runs on a step
// (a buffer both freed and retained is not freed: the dealloc folds away)
// and not on the training driver tagged tofu.driver, whose dealloc stays
// as it is for bufferization-lower-deallocations.

// CHECK-LABEL: func.func @step
// CHECK-NOT: bufferization.dealloc
// CHECK: return %arg1 : i1
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]] = bufferization.dealloc (%arg0 : memref<2xf32>) if (%arg1) retain (%arg0 : memref<2xf32>)
// CHECK: return %[[R]] : i1
func.func @step(%m: memref<2xf32>, %c: i1) -> i1 {
  %r = bufferization.dealloc (%m : memref<2xf32>) if (%c) retain (%m : memref<2xf32>)
  return %r : i1
}
func.func @main(%m: memref<2xf32>, %c: i1) -> i1 attributes {tofu.driver} {
  %r = bufferization.dealloc (%m : memref<2xf32>) if (%c) retain (%m : memref<2xf32>)
  return %r : i1
}
