// RUN: tofu-opt %s --tofu-outline-loops=min-loops=2 --split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-outline-loops=min-loops=3 --split-input-file | FileCheck %s --check-prefix=KEEP

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

// -----

// Tests that a loop with results (as the training driver's step loop,
// whose results are used after it) is not outlined, that two nests with
// the same text on different values share one function (compiled once),
// and that the functions tagged tofu.driver are left alone.

// CHECK-LABEL: func.func private @carried_loops0(
// CHECK-NOT: @carried_loops1
// CHECK-LABEL: func.func @carried(
// CHECK: %[[R:.*]] = scf.for {{.*}} iter_args
// CHECK: call @carried_loops0(%[[R]], %arg0,
// CHECK-NEXT: call @carried_loops0(%arg1, %arg0,
// CHECK-LABEL: func.func @driver(
// CHECK-SAME: tofu.driver
// CHECK: scf.for
// CHECK: scf.for
func.func @carried(%a: memref<4xf32>, %s: f32) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c1 iter_args(%acc = %s) -> f32 {
    %x = memref.load %a[%i] : memref<4xf32>
    %y = arith.addf %acc, %x : f32
    scf.yield %y : f32
  }
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %r, %a[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %s, %a[%i] : memref<4xf32>
  }
  return %r : f32
}
func.func @driver(%a: memref<4xf32>, %s: f32) attributes {tofu.driver} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %s, %a[%i] : memref<4xf32>
  }
  scf.for %i = %c0 to %c4 step %c1 {
    memref.store %s, %a[%i] : memref<4xf32>
  }
  return
}
