// RUN: tofu-opt %s --tofu-loss -split-input-file -allow-unregistered-dialect -verify-diagnostics
// RUN: not tofu-opt %s -allow-unregistered-dialect --tofu-loss=kind=hinge 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not tofu-opt %s -allow-unregistered-dialect --tofu-loss=func=missing 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not tofu-opt %s -allow-unregistered-dialect --tofu-loss=labels=f16 2>&1 | FileCheck %s --check-prefix=LABELS
// RUN: not tofu-opt %s -allow-unregistered-dialect --tofu-loss="kind=mse labels=i64" 2>&1 | FileCheck %s --check-prefix=LABELS-MSE
// RUN: not tofu-opt %s -allow-unregistered-dialect --tofu-loss="kind=sum labels=i32" 2>&1 | FileCheck %s --check-prefix=LABELS-SUM
// RUN: not tofu-opt %s -allow-unregistered-dialect -split-input-file --tofu-loss=result=2 2>&1 | FileCheck %s --check-prefix=RESULT

// KIND: error: tofu-loss: unknown kind 'hinge' (expected softmax-cross-entropy, mse or sum)
// MISSING: error: tofu-loss: no function named 'missing'
// LABELS: error: tofu-loss: unknown labels 'f16' (expected probabilities, i64 or i32)
// LABELS-MSE: error: tofu-loss: labels=i64 needs kind=softmax-cross-entropy, not kind=mse
// LABELS-SUM: error: tofu-loss: labels=i32 needs kind=softmax-cross-entropy, not kind=sum
// RESULT: error: tofu-loss: result=2 is out of range: '@two' returns 2 results

// Tests that a function returning two tensors is an error on its return.
func.func @two(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  // expected-error @+1 {{tofu-loss: expected '@two' to return one tensor of logits, found 2 results; pass result=<index> to put the loss on one of them}}
  return %x, %x : tensor<4x3xf32>, tensor<4x3xf32>
}

// -----

// Tests that integer results are an error.
func.func @ints(%x: tensor<4x3xi32>) -> tensor<4x3xi32> {
  // expected-error @+1 {{tofu-loss: expected a tensor of floats, found 'tensor<4x3xi32>'}}
  return %x : tensor<4x3xi32>
}

// -----

// Tests that dynamic shapes are an error.
func.func @dynamic(%x: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{tofu-loss: dynamic shapes are not supported, found 'tensor<?x3xf32>'; export the model with static shapes (a fixed batch)}}
  return %x : tensor<?x3xf32>
}

// -----

// Tests that a function that already returns a 0-d tensor is an error.
func.func @scalar(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{tofu-loss: '@scalar' already returns a 0-d tensor; leave out tofu-loss if it is the loss}}
  return %x : tensor<f32>
}

// -----

// Tests that an empty result is an error.
func.func @empty(%x: tensor<0x3xf32>) -> tensor<0x3xf32> {
  // expected-error @+1 {{tofu-loss: the result 'tensor<0x3xf32>' has no elements}}
  return %x : tensor<0x3xf32>
}

// -----

// Tests that control flow is an error on the function's line.
// expected-error @+1 {{tofu-loss: '@branches' has more than one block (control flow is not supported)}}
func.func @branches(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  cf.br ^bb1
^bb1:
  return %x : tensor<4x3xf32>
}

// -----

// Tests that a module without a public function is an error.
// expected-error @+1 {{tofu-loss: no public function with a body}}
module {
  func.func private @helper(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
    return %x : tensor<4x3xf32>
  }
}

// -----

// Tests that a function ending in another terminator is an error.
// expected-error @+1 {{tofu-loss: '@other_end' does not end with 'func.return'}}
func.func @other_end(%x: tensor<4x3xf32>) -> tensor<4x3xf32> {
  "test.end"(%x) : (tensor<4x3xf32>) -> ()
}
