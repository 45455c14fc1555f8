// RUN: tofu-opt %s --tofu-gpu-device-memory --split-input-file -verify-diagnostics

// Tests that a buffer in a memory space is rejected.
func.func @memory_space() {
  // expected-error @+1 {{tofu-gpu-device-memory: buffers in a memory space are not supported}}
  %a = memref.alloc() : memref<4xf32, 3>
  return
}

// -----

// Tests that a global with a dynamic layout that the GPU reads is rejected.
memref.global "private" constant @strided : memref<2x2xf32, strided<[1, 2]>> = dense<1.0>
func.func @strided_global(%out: memref<2x2xf32, strided<[1, 2]>>) {
  // expected-error @+1 {{tofu-gpu-device-memory: only globals with a static shape and the identity layout are supported}}
  %t = memref.get_global @strided : memref<2x2xf32, strided<[1, 2]>>
  memref.copy %t, %out : memref<2x2xf32, strided<[1, 2]>> to memref<2x2xf32, strided<[1, 2]>>
  return
}

// -----

// Tests that a device buffer that an op with regions uses is rejected: the
// op cannot be given a host copy.
func.func @region(%n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %a = memref.alloc() : memref<4xf32>
  memref.copy %a, %a : memref<4xf32> to memref<4xf32>
  // expected-error @+1 {{tofu-gpu-device-memory: cannot place a buffer that this op uses (an op with regions, an alias of the buffer, a terminator that passes it on, or a copy of an unranked buffer)}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%b = %a) -> memref<4xf32> {
    scf.yield %b : memref<4xf32>
  }
  return
}

// -----

// Tests that the host's access to a device buffer of dynamic shape is
// rejected: its host copy would need the sizes.
func.func @dynamic(%n: index, %i: index) -> f32 {
  %a = memref.alloc(%n) : memref<?xf32>
  memref.copy %a, %a : memref<?xf32> to memref<?xf32>
  // expected-error @+1 {{tofu-gpu-device-memory: the host accesses a device buffer of type 'memref<?xf32>', which has no static shape and identity layout}}
  %v = memref.load %a[%i] : memref<?xf32>
  return %v : f32
}

// -----

// Tests that an op that returns an alias of a device buffer (not a view) is
// rejected: its result would point into a host copy freed after it.
func.func @alias(%c: i1) {
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  memref.copy %a, %b : memref<4xf32> to memref<4xf32>
  // expected-error @+1 {{tofu-gpu-device-memory: cannot place a buffer that this op uses}}
  %s = arith.select %c, %a, %b : memref<4xf32>
  return
}

// -----

// Tests that a global that is not constant is rejected: each call would
// write a device copy of its own.
memref.global "private" @state : memref<4xf32> = dense<0.0>
func.func @mutable_global(%out: memref<4xf32>) {
  // expected-error @+1 {{tofu-gpu-device-memory: only constant globals are supported (each call would write its own copy)}}
  %t = memref.get_global @state : memref<4xf32>
  memref.copy %t, %out : memref<4xf32> to memref<4xf32>
  return
}
