// RUN: tofu-opt %s --tofu-outline-loops=min-loops=2 | FileCheck %s
// RUN: tofu-opt %s --tofu-outline-loops=min-loops=3 | FileCheck %s --check-prefix=KEEP

// Tests that the two top-level loop nests of a function with at least
// min-loops of them become private noinline functions, called in their
// place with what they use as arguments, the host code between them
// staying; with fewer loop nests than min-loops nothing changes.

// CHECK-LABEL: func.func private @step_loops0(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: scf.for
// CHECK: arith.mulf
// CHECK-LABEL: func.func private @step_loops1(
// CHECK-SAME: attributes {passthrough = ["noinline"]}
// CHECK: scf.parallel
// CHECK-LABEL: func.func @step(
// CHECK-NOT: scf.
// CHECK: call @step_loops0(%arg0, %arg2, %arg1,
// CHECK-NEXT: %[[V:.*]] = memref.load %arg1
// CHECK-NEXT: call @step_loops1(%[[V]], %arg0,
// CHECK-NEXT: return

// KEEP-NOT: func.func private
// KEEP: scf.for
// KEEP: scf.parallel

func.func @step(%a: memref<4xf32>, %b: memref<4xf32>, %s: f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.mulf %x, %s : f32
    memref.store %y, %b[%i] : memref<4xf32>
  }
  %v = memref.load %b[%c0] : memref<4xf32>
  scf.parallel (%i) = (%c0) to (%c4) step (%c1) {
    memref.store %v, %a[%i] : memref<4xf32>
  }
  return
}
