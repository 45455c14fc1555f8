// RUN: tofu-opt %s --tofu-gpu-stream-order --split-input-file | FileCheck %s

// Tests that consecutive launches and the library calls between them form
// one chain of async tokens (one stream), and that the host waits once,
// before it reads memory.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func private @tofu_gpu_sgemm(index)
  // CHECK-LABEL: func.func @chain
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@k
  // CHECK-NEXT: call @tofu_gpu_sgemm
  // CHECK-NEXT: %[[M:.*]] = gpu.alloc host_shared () : memref<4xf32>
  // CHECK-NEXT: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@k
  // CHECK-NEXT: gpu.wait [%[[T2]]]
  // CHECK-NEXT: memref.load
  // CHECK-NOT: gpu.wait
  // CHECK: return
  func.func @chain(%a: memref<4xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    func.call @tofu_gpu_sgemm(%c1) {tofu.library = "cublas"} : (index) -> ()
    %m = gpu.alloc host_shared () : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    %v = memref.load %m[%c0] : memref<4xf32>
    return %v : f32
  }
}

// -----

// Tests that a library call with no launch before it starts a chain, and
// that the function returns without waiting for it: its work stays queued
// on the stream.

module attributes {gpu.container_module} {
  func.func private @tofu_gpu_conv2d_forward(index)
  // CHECK-LABEL: func.func @library_only
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK-NEXT: call @tofu_gpu_conv2d_forward
  // CHECK-NEXT: call @tofu_gpu_conv2d_forward
  // CHECK-NEXT: return
  func.func @library_only() {
    %c1 = arith.constant 1 : index
    func.call @tofu_gpu_conv2d_forward(%c1) {tofu.library = "cudnn"} : (index) -> ()
    func.call @tofu_gpu_conv2d_forward(%c1) {tofu.library = "cudnn"} : (index) -> ()
    return
  }
}

// -----

// Tests loops: a loop of library calls (a GEMM's outer batch loop) stays
// in the chain; a loop with a launch is waited for before, and its body
// is a chain of its own, waited for before each iteration ends.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func private @tofu_gpu_sgemm(index)
  // CHECK-LABEL: func.func @loops
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T1:.*]] = gpu.launch_func async [%[[T0]]]
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: call @tofu_gpu_sgemm
  // CHECK-NEXT: {{^ +}}}
  // CHECK-NEXT: gpu.wait [%[[T1]]]
  // CHECK-NEXT: scf.for
  // CHECK-NEXT: %[[U0:.*]] = gpu.wait async
  // CHECK-NEXT: %[[U1:.*]] = gpu.launch_func async [%[[U0]]]
  // CHECK-NEXT: gpu.wait [%[[U1]]]
  // CHECK-NEXT: {{^ +}}}
  // CHECK-NEXT: return
  func.func @loops(%a: memref<4xf32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    scf.for %i = %c0 to %c4 step %c1 {
      func.call @tofu_gpu_sgemm(%i) {tofu.library = "cublas"} : (index) -> ()
    }
    scf.for %i = %c0 to %c4 step %c1 {
      gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    }
    return
  }
}

// -----

// Tests that the host waits before a call that is no library call and
// before a deallocation, and that the next launch starts a new chain.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func private @host(memref<4xf32>)
  // CHECK-LABEL: func.func @host_ops
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T1:.*]] = gpu.launch_func async [%[[T0]]]
  // CHECK-NEXT: gpu.wait [%[[T1]]]
  // CHECK-NEXT: call @host
  // CHECK-NEXT: %[[U0:.*]] = gpu.wait async
  // CHECK-NEXT: %[[U1:.*]] = gpu.launch_func async [%[[U0]]]
  // CHECK-NEXT: gpu.wait [%[[U1]]]
  // CHECK-NEXT: memref.dealloc
  // CHECK-NEXT: return
  func.func @host_ops(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    func.call @host(%a) : (memref<4xf32>) -> ()
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    memref.dealloc %a : memref<4xf32>
    return
  }
}

// -----

// Tests that device allocations, deallocations (device or managed) and
// copies join the chain instead of making the host wait, that a managed
// allocation stays synchronous, and that the host waits once, before it
// reads the copy.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @memory
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK-NEXT: %[[D:.*]], %[[T1:.*]] = gpu.alloc async [%[[T0]]] () : memref<4xf32>
  // CHECK-NEXT: %[[M:.*]] = gpu.alloc host_shared () : memref<4xf32>
  // CHECK-NEXT: %[[T2:.*]] = gpu.launch_func async [%[[T1]]] @kernels::@k {{.*}} args(%[[D]] : memref<4xf32>)
  // CHECK-NEXT: %[[T3:.*]] = gpu.launch_func async [%[[T2]]] @kernels::@k {{.*}} args(%[[M]] : memref<4xf32>)
  // CHECK-NEXT: %[[T4:.*]] = gpu.memcpy async [%[[T3]]] %[[H:.*]], %[[D]]
  // CHECK-NEXT: %[[T5:.*]] = gpu.dealloc async [%[[T4]]] %[[D]]
  // CHECK-NEXT: %[[T6:.*]] = gpu.dealloc async [%[[T5]]] %[[M]]
  // CHECK-NEXT: gpu.wait [%[[T6]]]
  // CHECK-NEXT: memref.load %[[H]]
  // CHECK-NEXT: return
  func.func @memory(%h: memref<4xf32>) -> f32 {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %d = gpu.alloc () : memref<4xf32>
    %m = gpu.alloc host_shared () : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%d : memref<4xf32>)
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    gpu.memcpy %h, %d : memref<4xf32>, memref<4xf32>
    gpu.dealloc %d : memref<4xf32>
    gpu.dealloc %m : memref<4xf32>
    %v = memref.load %h[%c0] : memref<4xf32>
    return %v : f32
  }
}

// -----

// Tests that a chain of deallocations only, started after the host waited,
// is not waited for before the next host op (a deallocation only hands the
// block back to the runtime's cache), that the next launch joins it, and
// that the function returns without waiting for it.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  // CHECK-LABEL: func.func @frees_only
  // CHECK: %[[T0:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T1:.*]] = gpu.launch_func async [%[[T0]]] @kernels::@k
  // CHECK-NEXT: gpu.wait [%[[T1]]]
  // CHECK-NEXT: memref.load %[[M:.*]][
  // CHECK-NEXT: %[[T2:.*]] = gpu.wait async
  // CHECK-NEXT: %[[T3:.*]] = gpu.dealloc async [%[[T2]]] %[[M]]
  // CHECK-NEXT: memref.load
  // CHECK-NEXT: %[[T4:.*]] = gpu.launch_func async [%[[T3]]] @kernels::@k
  // CHECK-NEXT: return
  func.func @frees_only(%m: memref<4xf32>, %n: memref<4xf32>) -> (f32, f32) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%m : memref<4xf32>)
    %x = memref.load %m[%c0] : memref<4xf32>
    gpu.dealloc %m : memref<4xf32>
    %y = memref.load %n[%c0] : memref<4xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%n : memref<4xf32>)
    return %x, %y : f32, f32
  }
}

// -----

// Tests that a function of the module returns with its work queued, and
// that its caller's next host op waits for it (through a chain started
// right after the call: the runtime's one stream), while an external call
// does not start one.

module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
  func.func private @host(memref<4xf32>)
  // CHECK-LABEL: func.func @step
  // CHECK: %[[T1:.*]] = gpu.launch_func async
  // CHECK-NEXT: return
  func.func @step(%a: memref<4xf32>) {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  // CHECK-LABEL: func.func @caller
  // CHECK-NEXT: call @step
  // CHECK-NEXT: %[[T0:.*]] = gpu.wait async
  // CHECK-NEXT: gpu.wait [%[[T0]]]
  // CHECK-NEXT: call @host
  // CHECK-NEXT: call @host
  // CHECK-NEXT: return
  func.func @caller(%a: memref<4xf32>) {
    func.call @step(%a) : (memref<4xf32>) -> ()
    func.call @host(%a) : (memref<4xf32>) -> ()
    func.call @host(%a) : (memref<4xf32>) -> ()
    return
  }
}
