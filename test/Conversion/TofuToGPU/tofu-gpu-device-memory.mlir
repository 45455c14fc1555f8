// RUN: tofu-opt %s --tofu-gpu-device-memory --split-input-file | FileCheck %s

// Tests that buffers that the GPU uses move to device memory (a returned
// one too), deallocations become synchronous gpu.dealloc (queued later by
// tofu-gpu-stream-order), copies become linalg.copy (kernels), and a
// constant global that a kernel reads is copied into a device buffer at
// the entry, freed before the return. No buffer is managed.

// CHECK-LABEL: func.func @buffers
// CHECK-SAME: (%[[X:.*]]: memref<4xf32>)
// CHECK: %[[HOST:.*]] = memref.get_global @table
// CHECK: %[[TABLE:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: gpu.memcpy %[[TABLE]], %[[HOST]]
// CHECK: %[[A:.*]] = gpu.alloc () : memref<4xf32>
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

// Tests where the host touches device buffers: a load works on a host
// copy filled from the device before it; a store and a call of an
// external function (through a cast) also copy the host copy back after
// it. A 0-d op, a kernel through a view and a library call's address put
// their buffers on the device without a host copy. A buffer that only the
// host touches stays in host memory, with its host deallocation.

func.func private @use(memref<*xf32>)
// CHECK-LABEL: func.func @placement
// CHECK: %[[KERNEL:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: %[[VIEWED:.*]] = gpu.alloc () : memref<2x4xf32>
// CHECK: %[[LIBRARY:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: %[[SCALAR:.*]] = gpu.alloc () : memref<f32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[SCALAR]] : memref<f32>)
// CHECK: %[[H1:.*]] = memref.alloc() : memref<f32>
// CHECK-NEXT: gpu.memcpy %[[H1]], %[[SCALAR]]
// CHECK-NEXT: memref.load %[[H1]][]
// CHECK-NEXT: memref.dealloc %[[H1]]
// CHECK: %[[CALLED:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: linalg.fill ins(%{{.*}} : f32) outs(%[[CALLED]] : memref<8xf32>)
// CHECK: %[[H2:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: gpu.memcpy %[[H2]], %[[CALLED]]
// CHECK-NEXT: %[[CAST:.*]] = memref.cast %[[H2]] : memref<8xf32> to memref<*xf32>
// CHECK-NEXT: call @use(%[[CAST]])
// CHECK-NEXT: gpu.memcpy %[[CALLED]], %[[H2]]
// CHECK-NEXT: memref.dealloc %[[H2]]
// CHECK: %[[STORED:.*]] = gpu.alloc () : memref<8xf32>
// CHECK: %[[H3:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: gpu.memcpy %[[H3]], %[[STORED]]
// CHECK-NEXT: memref.store %{{.*}}, %[[H3]][%{{.*}}]
// CHECK-NEXT: gpu.memcpy %[[STORED]], %[[H3]]
// CHECK-NEXT: memref.dealloc %[[H3]]
// CHECK: %[[HOSTONLY:.*]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: memref.store %{{.*}}, %[[HOSTONLY]][%{{.*}}]
// CHECK: gpu.dealloc %[[KERNEL]]
// CHECK: gpu.dealloc %[[VIEWED]]
// CHECK: gpu.dealloc %[[LIBRARY]]
// CHECK: gpu.dealloc %[[SCALAR]]
// CHECK: gpu.dealloc %[[CALLED]]
// CHECK: gpu.dealloc %[[STORED]]
// CHECK: memref.dealloc %[[HOSTONLY]]
// CHECK-NOT: host_shared
func.func @placement(%f: f32, %i: index) -> f32 {
  %kernel = memref.alloc() : memref<8xf32>
  linalg.fill ins(%f : f32) outs(%kernel : memref<8xf32>)
  %viewed = memref.alloc() : memref<2x4xf32>
  %flat = memref.collapse_shape %viewed [[0, 1]] : memref<2x4xf32> into memref<8xf32>
  linalg.fill ins(%f : f32) outs(%flat : memref<8xf32>)
  %library = memref.alloc() : memref<8xf32>
  %address = memref.extract_aligned_pointer_as_index %library : memref<8xf32> -> index
  %scalar = memref.alloc() : memref<f32>
  linalg.fill ins(%f : f32) outs(%scalar : memref<f32>)
  %v = memref.load %scalar[] : memref<f32>
  %called = memref.alloc() : memref<8xf32>
  linalg.fill ins(%f : f32) outs(%called : memref<8xf32>)
  %cast = memref.cast %called : memref<8xf32> to memref<*xf32>
  func.call @use(%cast) : (memref<*xf32>) -> ()
  %stored = memref.alloc() : memref<8xf32>
  linalg.fill ins(%f : f32) outs(%stored : memref<8xf32>)
  memref.store %f, %stored[%i] : memref<8xf32>
  %hostonly = memref.alloc() : memref<8xf32>
  memref.store %f, %hostonly[%i] : memref<8xf32>
  memref.dealloc %kernel : memref<8xf32>
  memref.dealloc %viewed : memref<2x4xf32>
  memref.dealloc %library : memref<8xf32>
  memref.dealloc %scalar : memref<f32>
  memref.dealloc %called : memref<8xf32>
  memref.dealloc %stored : memref<8xf32>
  memref.dealloc %hostonly : memref<8xf32>
  return %v : f32
}

// -----

// Tests that the results of a call of a function of the module are device
// buffers: the caller's load of one works on a host copy, and its
// deallocation becomes gpu.dealloc; the callee's argument and result are
// device buffers too.

// CHECK-LABEL: func.func @step
// CHECK-SAME: (%[[W:.*]]: memref<4xf32>)
// CHECK: %[[OUT:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: linalg.copy ins(%[[W]] : memref<4xf32>) outs(%[[OUT]] : memref<4xf32>)
// CHECK: return %[[OUT]]
func.func @step(%w: memref<4xf32>) -> memref<4xf32> {
  %out = memref.alloc() : memref<4xf32>
  memref.copy %w, %out : memref<4xf32> to memref<4xf32>
  return %out : memref<4xf32>
}
// CHECK-LABEL: func.func @driver
// CHECK: %[[IN:.*]] = gpu.alloc () : memref<4xf32>
// CHECK: %[[R:.*]] = call @step(%[[IN]])
// CHECK: %[[H:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: gpu.memcpy %[[H]], %[[R]]
// CHECK-NEXT: memref.load %[[H]]
// CHECK-NEXT: memref.dealloc %[[H]]
// CHECK: gpu.dealloc %[[IN]]
// CHECK: gpu.dealloc %[[R]]
func.func @driver(%i: index) -> f32 {
  %in = memref.alloc() : memref<4xf32>
  %r = func.call @step(%in) : (memref<4xf32>) -> memref<4xf32>
  %v = memref.load %r[%i] : memref<4xf32>
  memref.dealloc %in : memref<4xf32>
  memref.dealloc %r : memref<4xf32>
  return %v : f32
}

// -----

// Tests a GPU collective (convert-tofu-to-mpi{runtime=gpu}): its first
// `tofu.device_operands` operands, the input and the result, are device
// buffers that it takes as they are (no host copy); its other buffer
// operand, the grid, is a host constant that stays in host memory.

// CHECK-LABEL: func.func @collective
// CHECK-SAME: (%[[X:.*]]: memref<2x6xf32>)
// CHECK-DAG: %[[GRID:.*]] = memref.get_global @grid : memref<1xi64>
// CHECK-DAG: %[[OUT:.*]] = gpu.alloc () : memref<4x6xf32>
// CHECK-DAG: %[[XU:.*]] = memref.cast %[[X]] : memref<2x6xf32> to memref<*xf32>
// CHECK-DAG: %[[OUTU:.*]] = memref.cast %[[OUT]] : memref<4x6xf32> to memref<*xf32>
// CHECK-DAG: %[[GRIDU:.*]] = memref.cast %[[GRID]] : memref<1xi64> to memref<*xi64>
// CHECK: call @tofu_gpu_all_gather(%[[XU]], %[[OUTU]], %[[GRIDU]],
// CHECK-NOT: gpu.memcpy
// CHECK: return %[[OUT]]
memref.global "private" constant @grid : memref<1xi64> = dense<2>
func.func private @tofu_gpu_all_gather(memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64, i64)
func.func @collective(%x: memref<2x6xf32>) -> memref<4x6xf32> {
  %grid = memref.get_global @grid : memref<1xi64>
  %out = memref.alloc() : memref<4x6xf32>
  %xu = memref.cast %x : memref<2x6xf32> to memref<*xf32>
  %outu = memref.cast %out : memref<4x6xf32> to memref<*xf32>
  %gridu = memref.cast %grid : memref<1xi64> to memref<*xi64>
  %c1 = arith.constant 1 : i64
  %c0 = arith.constant 0 : i64
  %c4 = arith.constant 4 : i64
  call @tofu_gpu_all_gather(%xu, %outu, %gridu, %c1, %c0, %c4)
      {tofu.device_operands = 2 : i64, tofu.library = "collective", tofu.writes_operand = 1 : i64}
      : (memref<*xf32>, memref<*xf32>, memref<*xi64>, i64, i64, i64) -> ()
  return %out : memref<4x6xf32>
}
