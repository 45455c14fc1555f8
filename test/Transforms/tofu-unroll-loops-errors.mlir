// RUN: tofu-opt %s --tofu-unroll-loops=max-iterations=8 -split-input-file -verify-diagnostics

// Tests that a loop with more iterations than the limit is an error on the
// loop that says how to raise it.
func.func @too_long(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c9 = arith.constant 9 : index
  // expected-error @+1 {{tofu-unroll-loops: unrolling gives 9 iterations, more than max-iterations=8 (raise it to unroll this loop)}}
  %r = scf.for %i = %c0 to %c9 step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that the limit counts the iterations of the whole nest.
func.func @nest(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %r = scf.for %i = %c0 to %c3 step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    // expected-error @+1 {{tofu-unroll-loops: unrolling gives 3 x 3 iterations, more than max-iterations=8}}
    %r2 = scf.for %j = %c0 to %c3 step %c1 iter_args(%b = %a) -> (tensor<4xf32>) {
      scf.yield %b : tensor<4xf32>
    }
    scf.yield %r2 : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that bounds that are not constants are an error.
func.func @dynamic(%x: tensor<4xf32>, %n: index) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // expected-error @+1 {{tofu-unroll-loops: cannot unroll a loop whose bounds and step are not constants}}
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    scf.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that a negative step is an error, not a crash.
func.func @negative_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : i32
  %c4 = arith.constant 4 : i32
  %m1 = arith.constant -1 : i32
  // expected-error @+1 {{tofu-unroll-loops: the step must be positive, found -1}}
  %r = scf.for %i = %c0 to %c4 step %m1 iter_args(%a = %x) -> (tensor<4xf32>) : i32 {
    scf.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
