// RUN: tofu-opt %s --tofu-early-dealloc -split-input-file | FileCheck %s

// Tests that a buffer is freed right after its last use, a use through a
// subview included, and not before it.
// CHECK-LABEL: func.func @after_last_use
// CHECK:         %[[A:.*]] = memref.alloc() : memref<8xf32>
// CHECK:         %[[V:.*]] = memref.subview %[[A]]
// CHECK:         linalg.fill ins(%{{.*}} : f32) outs(%[[A]]
// CHECK-NEXT:    linalg.copy ins(%[[V]] : {{.*}}) outs(%{{.*}} :
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         memref.dealloc %[[B]]
// CHECK-NEXT:    return
func.func @after_last_use(%out: memref<4xf32>, %c: f32) {
  %a = memref.alloc() : memref<8xf32>
  %v = memref.subview %a[2] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1], offset: 2>>
  linalg.fill ins(%c : f32) outs(%a : memref<8xf32>)
  linalg.copy ins(%v : memref<4xf32, strided<[1], offset: 2>>) outs(%out : memref<4xf32>)
  %b = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%b : memref<4xf32>)
  linalg.copy ins(%b : memref<4xf32>) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// Tests that a buffer passed to a call through an unranked cast lives until
// the call, and that the call's result is not taken for a view of it.
// CHECK-LABEL: func.func @through_call
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[R:.*]] = call @f(%{{.*}}) : (memref<*xf32>) -> memref<4xf32>
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK:         linalg.copy ins(%[[R]]
// CHECK-NEXT:    memref.dealloc %[[R]]
func.func private @f(memref<*xf32>) -> memref<4xf32>
func.func @through_call(%out: memref<4xf32>) {
  %a = memref.alloc() : memref<4xf32>
  %u = memref.cast %a : memref<4xf32> to memref<*xf32>
  %r = func.call @f(%u) : (memref<*xf32>) -> memref<4xf32>
  %c = arith.constant 1.0 : f32
  linalg.copy ins(%r : memref<4xf32>) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %r : memref<4xf32>
  return
}

// -----

// Tests that a use inside a loop counts as a use by the loop, and that a
// view yielded out of the loop keeps the buffer alive where it is used.
// CHECK-LABEL: func.func @nested
// CHECK:         %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK:         %[[L:.*]] = scf.for
// CHECK:         linalg.copy ins(%[[L]]
// CHECK-NEXT:    memref.dealloc %[[A]]
// CHECK-NEXT:    arith.addf
func.func @nested(%out: memref<4xf32>, %x: f32) -> f32 {
  %a = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %l = scf.for %i = %c0 to %c2 step %c1 iter_args(%it = %a) -> (memref<4xf32>) {
    memref.store %x, %it[%i] : memref<4xf32>
    scf.yield %it : memref<4xf32>
  }
  linalg.copy ins(%l : memref<4xf32>) outs(%out : memref<4xf32>)
  %y = arith.addf %x, %x : f32
  memref.dealloc %a : memref<4xf32>
  return %y : f32
}

// -----

// Tests that a buffer whose address escapes as an integer, and one
// allocated in another block, keep their deallocations in place.
// CHECK-LABEL: func.func @kept
// CHECK:         memref.extract_aligned_pointer_as_index
// CHECK:         arith.addi
// CHECK-NEXT:    memref.dealloc
// CHECK:       ^bb1:
// CHECK-NEXT:    arith.addi
// CHECK-NEXT:    memref.dealloc
func.func @kept(%x: index) -> index {
  %a = memref.alloc() : memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %b = memref.alloc() : memref<4xf32>
  %y = arith.addi %p, %x : index
  memref.dealloc %a : memref<4xf32>
  cf.br ^bb1
^bb1:
  %z = arith.addi %y, %x : index
  memref.dealloc %b : memref<4xf32>
  return %z : index
}

// -----

// Tests that a buffer whose address escapes inside a loop that receives it
// keeps its deallocation in place.
// CHECK-LABEL: func.func @escapes_in_loop
// CHECK:         scf.for
// CHECK:         memref.extract_aligned_pointer_as_index
// CHECK:         arith.addi
// CHECK-NEXT:    memref.dealloc
// CHECK-NEXT:    return
func.func @escapes_in_loop(%x: index) -> index {
  %a = memref.alloc() : memref<4xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %l:2 = scf.for %i = %c0 to %c2 step %c1 iter_args(%it = %a, %p = %x) -> (memref<4xf32>, index) {
    %q = memref.extract_aligned_pointer_as_index %it : memref<4xf32> -> index
    scf.yield %it, %q : memref<4xf32>, index
  }
  %y = arith.addi %l#1, %x : index
  memref.dealloc %a : memref<4xf32>
  return %y : index
}
