// RUN: tofu-opt %s --tofu-gpu-merge-kernels | FileCheck %s

// The three outlined kernels become two in one gpu.module: the first two
// are the same kernel (same body under another module name), the third
// has a loop with exp and maximumf. Every launch names its kernel there,
// numbered in the order of the first launches; a module that holds more
// than one kernel is not gpu-kernel-outlining's and stays as it is.

// CHECK-LABEL: gpu.module @tofu_kernels
// CHECK: gpu.func @k0_map_mulf(
// CHECK: gpu.func @k1_loop_exp_maximumf(
// CHECK-NOT: gpu.func
// CHECK-NOT: gpu.module @step_kernel
// CHECK-LABEL: func.func @step
// CHECK-NEXT: arith.constant
// CHECK-NEXT: arith.constant
// CHECK-NEXT: gpu.launch_func @tofu_kernels::@k0_map_mulf {{.*}} args(%arg0 : memref<4xf32>, %arg1 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func @tofu_kernels::@k1_loop_exp_maximumf
// CHECK-NEXT: gpu.launch_func @tofu_kernels::@k0_map_mulf {{.*}} args(%arg1 : memref<4xf32>, %arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func @tofu_kernels::@k0_map_mulf {{.*}} args(%arg0 : memref<4xf32>, %arg0 : memref<4xf32>)
// CHECK-NEXT: gpu.launch_func @two_kernels::@a
// CHECK-NEXT: return
// CHECK: gpu.module @two_kernels
// CHECK-NEXT: gpu.func @a
// CHECK: gpu.func @b
// CHECK-NOT: gpu.module

module attributes {gpu.container_module} {
  gpu.module @step_kernel {
    gpu.func @step_kernel(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %a[%i] : memref<4xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %b[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_0 {
    gpu.func @step_kernel(%a: memref<4xf32>, %b: memref<4xf32>) kernel {
      %i = gpu.thread_id x
      %x = memref.load %a[%i] : memref<4xf32>
      %y = arith.mulf %x, %x : f32
      memref.store %y, %b[%i] : memref<4xf32>
      gpu.return
    }
  }
  gpu.module @step_kernel_1 {
    gpu.func @step_kernel(%a: memref<4xf32>, %b: memref<f32>) kernel {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %z = arith.constant 0.0 : f32
      %s = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %z) -> f32 {
        %x = memref.load %a[%i] : memref<4xf32>
        %e = math.exp %x : f32
        %m = arith.maximumf %acc, %e : f32
        scf.yield %m : f32
      }
      memref.store %s, %b[] : memref<f32>
      gpu.return
    }
  }
  func.func @step(%a: memref<4xf32>, %b: memref<4xf32>, %c: memref<f32>) {
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>, %b : memref<4xf32>)
    gpu.launch_func @step_kernel_1::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>, %c : memref<f32>)
    gpu.launch_func @step_kernel_0::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%b : memref<4xf32>, %a : memref<4xf32>)
    gpu.launch_func @step_kernel::@step_kernel blocks in (%c1, %c1, %c1) threads in (%c4, %c1, %c1) args(%a : memref<4xf32>, %a : memref<4xf32>)
    gpu.launch_func @two_kernels::@a blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    return
  }
  gpu.module @two_kernels {
    gpu.func @a(%a: memref<4xf32>) kernel {
      gpu.return
    }
    gpu.func @b(%a: memref<4xf32>) kernel {
      gpu.return
    }
  }
}
