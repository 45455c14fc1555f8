// RUN: tofu-opt %s --tofu-gpu-managed-memory --split-input-file | FileCheck %s

// Tests that buffers move to managed memory, deallocations wait on a
// stream, copies become linalg.copy (kernels), and a constant global is
// copied on the host into a managed buffer at the entry, freed before the
// return.

// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK: %[[HOST:.*]] = memref.get_global @table
// CHECK: %[[TABLE:.*]] = gpu.alloc host_shared () : memref<4xf32>
// CHECK: memref.copy %[[HOST]], %[[TABLE]]
// CHECK: %[[A:.*]] = gpu.alloc host_shared () : memref<4xf32>
// CHECK: linalg.copy ins(%[[TABLE]] : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK: %[[B:.*]] = gpu.alloc host_shared () : memref<4xf32>
// CHECK: linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK: %[[T0:.*]] = gpu.wait async
// CHECK: %[[T1:.*]] = gpu.dealloc async [%[[T0]]] %[[B]]
// CHECK: gpu.wait [%[[T1]]]
// CHECK: %[[T2:.*]] = gpu.wait async
// CHECK: %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[TABLE]]
// CHECK: gpu.wait [%[[T3]]]
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK: return %[[A]]
memref.global "private" constant @table : memref<4xf32> = dense<[1.0, 2.0, 3.0, 4.0]>
func.func @buffers(%x: memref<4xf32>) -> memref<4xf32> {
  %t = memref.get_global @table : memref<4xf32>
  %a = memref.alloc() : memref<4xf32>
  memref.copy %t, %a : memref<4xf32> to memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %x, %b : memref<4xf32> to memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  return %a : memref<4xf32>
}
