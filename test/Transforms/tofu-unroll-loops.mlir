// RUN: tofu-opt %s --tofu-unroll-loops -split-input-file | FileCheck %s

// Tests that a loop carrying tensors becomes one copy of its body per
// iteration, with static slice offsets and the carried values threaded.

// CHECK-LABEL: func.func @carry(
// CHECK-SAME:    %[[X:.*]]: tensor<3x4xf32>, %[[H0:.*]]: tensor<4xf32>)
// CHECK-NOT:     scf.for
// CHECK:         %[[S0:.*]] = tensor.extract_slice %[[X]][0, 0] [1, 4] [1, 1]
// CHECK:         %[[A0:.*]] = linalg.add ins(%[[S0]], %[[H0]] :
// CHECK:         %[[S1:.*]] = tensor.extract_slice %[[X]][1, 0] [1, 4] [1, 1]
// CHECK:         %[[A1:.*]] = linalg.add ins(%[[S1]], %[[A0]] :
// CHECK:         %[[S2:.*]] = tensor.extract_slice %[[X]][2, 0] [1, 4] [1, 1]
// CHECK:         %[[A2:.*]] = linalg.add ins(%[[S2]], %[[A1]] :
// CHECK:         return %[[A2]]
func.func @carry(%x: tensor<3x4xf32>, %h0: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %e = tensor.empty() : tensor<4xf32>
  %r = scf.for %t = %c0 to %c3 step %c1 iter_args(%h = %h0) -> (tensor<4xf32>) {
    %s = tensor.extract_slice %x[%t, 0] [1, 4] [1, 1] : tensor<3x4xf32> to tensor<4xf32>
    %a = linalg.add ins(%s, %h : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %a : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// -----

// Tests that nested loops unroll inside out, that a step other than one and
// an i32 induction variable are followed, and that an empty loop yields its
// initial values.

// CHECK-LABEL: func.func @nested(
// CHECK-NOT:     scf.for
// CHECK:         tensor.insert_slice {{.*}}[0, 0] [1, 1] [1, 1]
// CHECK:         tensor.insert_slice {{.*}}[0, 1] [1, 1] [1, 1]
// CHECK:         tensor.insert_slice {{.*}}[2, 0] [1, 1] [1, 1]
// CHECK:         tensor.insert_slice {{.*}}[2, 1] [1, 1] [1, 1]
// CHECK-NOT:     tensor.insert_slice
// CHECK:         return
func.func @nested(%x: tensor<4x2xf32>, %v: tensor<1x1xf32>) -> tensor<4x2xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %r = scf.for %i = %c0 to %c4 step %c2 iter_args(%a = %x) -> (tensor<4x2xf32>) {
    %r2 = scf.for %j = %c0 to %c2 step %c1 iter_args(%b = %a) -> (tensor<4x2xf32>) {
      %u = tensor.insert_slice %v into %b[%i, %j] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<4x2xf32>
      scf.yield %u : tensor<4x2xf32>
    }
    scf.yield %r2 : tensor<4x2xf32>
  }
  return %r : tensor<4x2xf32>
}

// CHECK-LABEL: func.func @integer_iv(
// CHECK-NOT:     scf.for
// CHECK-COUNT-2: linalg.add
// CHECK-NOT:     linalg.add
func.func @integer_iv(%x: tensor<4xf32>) -> tensor<4xf32> {
  %lb = arith.constant 5 : i32
  %ub = arith.constant 9 : i32
  %st = arith.constant 3 : i32
  %r = scf.for %i = %lb to %ub step %st iter_args(%a = %x) -> (tensor<4xf32>) : i32 {
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}

// CHECK-LABEL: func.func @empty(
// CHECK-SAME:    %[[X:.*]]: tensor<4xf32>)
// CHECK-NOT:     linalg.add
// CHECK:         return %[[X]]
func.func @empty(%x: tensor<4xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = scf.for %i = %c1 to %c0 step %c1 iter_args(%a = %x) -> (tensor<4xf32>) {
    %e = tensor.empty() : tensor<4xf32>
    %s = linalg.add ins(%a, %a : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
    scf.yield %s : tensor<4xf32>
  }
  return %r : tensor<4xf32>
}
