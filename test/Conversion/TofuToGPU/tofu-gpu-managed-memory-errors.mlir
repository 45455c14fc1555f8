// RUN: tofu-opt %s --tofu-gpu-managed-memory --split-input-file -verify-diagnostics

// Tests that a buffer in a memory space is rejected.
func.func @memory_space() {
  // expected-error @+1 {{tofu-gpu-managed-memory: buffers in a memory space are not supported}}
  %a = memref.alloc() : memref<4xf32, 3>
  return
}

// -----

// Tests that a global with a dynamic layout is rejected.
memref.global "private" constant @strided : memref<2x2xf32, strided<[1, 2]>> = dense<1.0>
func.func @strided_global() {
  // expected-error @+1 {{tofu-gpu-managed-memory: only globals with a static shape and the identity layout are supported}}
  %t = memref.get_global @strided : memref<2x2xf32, strided<[1, 2]>>
  return
}
