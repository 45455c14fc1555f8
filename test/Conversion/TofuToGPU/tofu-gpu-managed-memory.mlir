// RUN: tofu-opt %s --tofu-gpu-managed-memory --split-input-file | FileCheck %s

// Tests that a buffer that the host may touch (here: returned) moves to
// managed memory and one that only kernels use (copies of ranked buffers)
// to device memory, deallocations become synchronous gpu.dealloc (queued
// later by tofu-gpu-stream-order), copies become linalg.copy (kernels), and
// a constant global is copied on the host into a managed buffer at the
// entry, freed before the return.

// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK: %[[HOST:.*]] = memref.get_global @table
// CHECK: %[[TABLE:.*]] = gpu.alloc host_shared () : memref<4xf32>
// CHECK: memref.copy %[[HOST]], %[[TABLE]]
// CHECK: %[[A:.*]] = gpu.alloc host_shared () : memref<4xf32>
// CHECK: linalg.copy ins(%[[TABLE]] : memref<4xf32>) outs(%[[A]] : memref<4xf32>)
// CHECK: %[[B:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: linalg.copy ins(%[[X]] : memref<4xf32>) outs(%[[B]] : memref<4xf32>)
// CHECK: gpu.dealloc %[[B]] : memref<4xf32>
// CHECK: gpu.dealloc %[[TABLE]] : memref<4xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.dealloc
// CHECK-NOT: gpu.wait
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

// -----

// Tests which buffers the host may touch: device memory for buffers that
// only kernels (linalg ops with loops, also through a view) and library
// calls (an address) use; managed memory for one that a 0-d op (host code)
// reads, one passed to a call, and one stored to.

func.func private @use(memref<8xf32>)
// CHECK-LABEL: func.func @placement
// CHECK: %[[KERNEL:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: %[[VIEWED:.*]] = gpu.alloc () : memref<2x4xf32>
// CHECK: %[[LIBRARY:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: %[[SCALAR:.*]] = gpu.alloc host_shared () : memref<f32>
// CHECK: %[[CALLED:.*]] = gpu.alloc host_shared () : memref<8xf32>
// CHECK: %[[STORED:.*]] = gpu.alloc host_shared () : memref<8xf32>
func.func @placement(%f: f32, %i: index) {
  %kernel = memref.alloc() : memref<8xf32>
  linalg.fill ins(%f : f32) outs(%kernel : memref<8xf32>)
  %viewed = memref.alloc() : memref<2x4xf32>
  %flat = memref.collapse_shape %viewed [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  linalg.fill ins(%f : f32) outs(%flat : memref<8xf32>)
  %library = memref.alloc() : memref<8xf32>
  %address = memref.extract_aligned_pointer_as_index %library : memref<8xf32> -> index
  %scalar = memref.alloc() : memref<f32>
  linalg.fill ins(%f : f32) outs(%scalar : memref<f32>)
  %called = memref.alloc() : memref<8xf32>
  func.call @use(%called) : (memref<8xf32>) -> ()
  %stored = memref.alloc() : memref<8xf32>
  memref.store %f, %stored[%i] : memref<8xf32>
  memref.dealloc %kernel : memref<8xf32>
  memref.dealloc %viewed : memref<2x4xf32>
  memref.dealloc %library : memref<8xf32>
  memref.dealloc %scalar : memref<f32>
  memref.dealloc %called : memref<8xf32>
  memref.dealloc %stored : memref<8xf32>
  return
}
