// RUN: tofu-opt %s --tofu-split-call-deallocs -split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-split-call-deallocs --bufferization-lower-deallocations \
// RUN:   --canonicalize --tofu-early-dealloc -split-input-file \
// RUN:   | FileCheck %s --check-prefix=EARLY

// A training loop as tofu-train-driver writes it, after ownership-based
// deallocation: the step returns buffers it allocates, and the caller frees
// its own buffer and both steps' results in one deallocation at the end.
// Each gets a deallocation of its own, of the buffer itself (not of the
// extracted base buffer), and tofu-early-dealloc then frees the first
// step's weight right after the second step, each loss after its load, and
// the unused last weight right after the step that makes it.

func.func private @step(%w: memref<4xf32>) -> (memref<f32>, memref<4xf32>) {
  %l = memref.alloc() : memref<f32>
  %n = memref.alloc() : memref<4xf32>
  %v = memref.subview %n[0] [4] [1] : memref<4xf32> to memref<4xf32, strided<[1]>>
  %c = memref.cast %v : memref<4xf32, strided<[1]>> to memref<4xf32>
  return %l, %c : memref<f32>, memref<4xf32>
}

// CHECK-LABEL: func.func @loop
// CHECK:         %[[W:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[S0:.*]]:2 = call @step(%[[W]])
// CHECK:         %[[S1:.*]]:2 = call @step(%[[S0]]#1)
// CHECK-NOT:     bufferization.dealloc ({{.*}},
// CHECK-DAG:     bufferization.dealloc (%[[W]] : memref<4xf32>) if (%true)
// CHECK-DAG:     bufferization.dealloc (%[[S0]]#0 : memref<f32>) if (%true)
// CHECK-DAG:     bufferization.dealloc (%[[S0]]#1 : memref<4xf32>) if (%true)
// CHECK-DAG:     bufferization.dealloc (%[[S1]]#0 : memref<f32>) if (%true)
// CHECK-DAG:     bufferization.dealloc (%[[S1]]#1 : memref<4xf32>) if (%true)
// CHECK:         return

// EARLY-LABEL: func.func @loop
// EARLY:         %[[W:.*]] = memref.alloc() : memref<4xf32>
// EARLY:         %[[S0:.*]]:2 = call @step(%[[W]])
// EARLY-NEXT:    memref.dealloc %[[W]]
// EARLY-NEXT:    memref.load %[[S0]]#0[]
// EARLY-NEXT:    memref.dealloc %[[S0]]#0
// EARLY-NEXT:    %[[S1:.*]]:2 = call @step(%[[S0]]#1)
// EARLY-DAG:     memref.dealloc %[[S0]]#1
// EARLY-DAG:     memref.dealloc %[[S1]]#1
// EARLY:         memref.load %[[S1]]#0[]
// EARLY-NEXT:    memref.dealloc %[[S1]]#0
// EARLY-NEXT:    return
func.func @loop() -> (f32, f32) {
  %true = arith.constant true
  %w = memref.alloc() : memref<4xf32>
  %s0:2 = call @step(%w) : (memref<4xf32>) -> (memref<f32>, memref<4xf32>)
  %l0 = memref.load %s0#0[] : memref<f32>
  %s1:2 = call @step(%s0#1) : (memref<4xf32>) -> (memref<f32>, memref<4xf32>)
  %l1 = memref.load %s1#0[] : memref<f32>
  %b0, %o0 = memref.extract_strided_metadata %s0#0 : memref<f32> -> memref<f32>, index
  %b1, %o1, %z1, %t1 = memref.extract_strided_metadata %s0#1 : memref<4xf32> -> memref<f32>, index, index, index
  %b2, %o2 = memref.extract_strided_metadata %s1#0 : memref<f32> -> memref<f32>, index
  %b3, %o3, %z3, %t3 = memref.extract_strided_metadata %s1#1 : memref<4xf32> -> memref<f32>, index, index, index
  bufferization.dealloc (%w, %b0, %b1, %b2, %b3 : memref<4xf32>, memref<f32>, memref<f32>, memref<f32>, memref<f32>) if (%true, %true, %true, %true, %true)
  return %l0, %l1 : f32, f32
}

// -----

// A callee that may return its argument, or the same buffer twice, or a
// buffer it does not allocate: the combined deallocation stays.

func.func private @maybe_arg(%w: memref<4xf32>, %c: i1) -> memref<4xf32> {
  %n = memref.alloc() : memref<4xf32>
  %r = arith.select %c, %w, %n : memref<4xf32>
  return %r : memref<4xf32>
}

func.func private @twice() -> (memref<4xf32>, memref<4xf32>) {
  %n = memref.alloc() : memref<4xf32>
  return %n, %n : memref<4xf32>, memref<4xf32>
}

// CHECK-LABEL: func.func @kept
// CHECK:         bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<f32>)
// CHECK:         bufferization.dealloc (%{{.*}}, %{{.*}}, %{{.*}} : memref<4xf32>, memref<f32>, memref<f32>)
// CHECK:         return
func.func @kept(%c: i1) {
  %true = arith.constant true
  %w = memref.alloc() : memref<4xf32>
  %r = call @maybe_arg(%w, %c) : (memref<4xf32>, i1) -> memref<4xf32>
  %b, %o, %z, %t = memref.extract_strided_metadata %r : memref<4xf32> -> memref<f32>, index, index, index
  bufferization.dealloc (%w, %b : memref<4xf32>, memref<f32>) if (%true, %true)
  %p:2 = call @twice() : () -> (memref<4xf32>, memref<4xf32>)
  %b4, %o4, %z4, %t4 = memref.extract_strided_metadata %p#0 : memref<4xf32> -> memref<f32>, index, index, index
  %b5, %o5, %z5, %t5 = memref.extract_strided_metadata %p#1 : memref<4xf32> -> memref<f32>, index, index, index
  %v = memref.alloc() : memref<4xf32>
  bufferization.dealloc (%v, %b4, %b5 : memref<4xf32>, memref<f32>, memref<f32>) if (%true, %true, %true)
  return
}

// -----

// A deallocation that retains a value stays whole.

func.func private @fresh() -> memref<4xf32> {
  %n = memref.alloc() : memref<4xf32>
  return %n : memref<4xf32>
}

// CHECK-LABEL: func.func @retains
// CHECK:         bufferization.dealloc (%{{.*}}, %{{.*}} : memref<4xf32>, memref<f32>) if (%{{.*}}, %{{.*}}) retain (%{{.*}} : memref<4xf32>)
func.func @retains() -> memref<4xf32> {
  %true = arith.constant true
  %w = memref.alloc() : memref<4xf32>
  %r = call @fresh() : () -> memref<4xf32>
  %b, %o, %z, %t = memref.extract_strided_metadata %r : memref<4xf32> -> memref<f32>, index, index, index
  %k = bufferization.dealloc (%w, %b : memref<4xf32>, memref<f32>) if (%true, %true) retain (%r : memref<4xf32>)
  return %r : memref<4xf32>
}
