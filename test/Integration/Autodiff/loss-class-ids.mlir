// Tests that tofu-loss with integer class ids computes softmax
// cross-entropy: -1/4 sum over rows of (x[r, id] - logsumexp(x[r])), where
// the last row's id (5) is outside [0, 3) and adds nothing. The expected
// value, 0.9122874704..., is computed independently in double precision.
// The pass rewrites @f; the main that calls it with the new signature is
// appended in place of the module's closing brace (the only one in column 0).
// RUN: tofu-opt %s --tofu-loss="func=f labels=i64" | sed '/^}$/d' \
// RUN:   | cat - %S/Inputs/loss-class-ids-main.mlir | sed 's/LABEL/i64/g' \
// RUN:   | %run_cpu | FileCheck %s
// RUN: tofu-opt %s --tofu-loss="func=f labels=i32" | sed '/^}$/d' \
// RUN:   | cat - %S/Inputs/loss-class-ids-main.mlir | sed 's/LABEL/i32/g' \
// RUN:   | %run_cpu | FileCheck %s
// CHECK: 0.912287{{$}}

func.func @f(%x: tensor<4x3xf64>) -> tensor<4x3xf64> {
  return %x : tensor<4x3xf64>
}
