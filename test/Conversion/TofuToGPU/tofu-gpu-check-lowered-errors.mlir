// RUN: tofu-opt %s --tofu-gpu-check-lowered --split-input-file -verify-diagnostics

// Tests that a linalg op and a parallel loop left behind are errors.
func.func @left_behind(%x: memref<4xf32>) {
  %c0 = arith.constant 0 : index
  %c4 = arith.constant 4 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  // expected-error @+1 {{tofu-gpu-check-lowered: a linalg op is left after the GPU lowering}}
  linalg.fill ins(%one : f32) outs(%x : memref<4xf32>)
  // expected-error @+1 {{tofu-gpu-check-lowered: a parallel loop was not mapped to the GPU}}
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %one, %x[%i] : memref<4xf32>
  }
  return
}

// -----

// Tests that kernels that were never serialized are errors: the
// gpu.module is left and no gpu.binary holds the launched kernel.
// expected-error @+1 {{tofu-gpu-check-lowered: kernels are launched but no gpu.binary holds them}}
module attributes {gpu.container_module} {
  // expected-error @+1 {{tofu-gpu-check-lowered: a gpu.module was not serialized to a binary}}
  gpu.module @kernels {
    gpu.func @k() kernel {
      gpu.return
    }
  }
  func.func @launch() {
    %c1 = arith.constant 1 : index
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1)
    return
  }
}

// -----

// Tests that GPU host ops that the host lowering left (an asynchronous
// managed allocation, which gpu-to-llvm refuses) are errors.
func.func @host_ops_left() {
  // expected-error @+1 {{tofu-gpu-check-lowered: the host lowering left this op, it was not turned into runtime calls}}
  %t = gpu.wait async
  // expected-error @+1 {{tofu-gpu-check-lowered: the host lowering left this op, it was not turned into runtime calls}}
  %m, %t2 = gpu.alloc async [%t] host_shared () : memref<4xf32>
  // expected-error @+1 {{tofu-gpu-check-lowered: the host lowering left this op, it was not turned into runtime calls}}
  gpu.wait [%t2]
  return
}
