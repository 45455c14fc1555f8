// RUN: tofu-opt %s --tofu-autodiff="weights=all inputs=0" -split-input-file | FileCheck %s
// RUN: tofu-opt --tofu-autodiff="weights=all inputs=0" -split-input-file < %s | FileCheck %s --check-prefix=STDIN

// Tests that tofu-autodiff records each argument's name as tofu.name, so
// that tofu-run names the tensors of weight, data and checkpoint files after
// the exporter's names: a name location (as exporters write state_dict
// keys), else the SSA name in the source file, never over a tofu.name that
// is there, and not a name that two arguments share or that the files give
// something else (`arg<N>`, the name of an argument without one, and
// `optimizer.*`). Read from stdin, an argument has no source file to take
// its SSA name from.

// CHECK-LABEL: func.func @located_train(
// CHECK-SAME:    %arg0: tensor<2x4xf32> {tofu.name = "input"},
// CHECK-SAME:    %arg1: tensor<4xf32> {tofu.name = "0.weight", tofu.weight},
// CHECK-SAME:    %arg2: tensor<4xf32> {tofu.name = "kept", tofu.weight},
// CHECK-SAME:    %arg3: tensor<4xf32> {tofu.name = "w3", tofu.weight},
// CHECK-SAME:    %arg4: tensor<4xf32> {tofu.weight},
// CHECK-SAME:    %arg5: tensor<4xf32> {tofu.weight},
// CHECK-SAME:    %arg6: tensor<4xf32> {tofu.weight},
// CHECK-SAME:    %arg7: tensor<4xf32> {tofu.weight})
// STDIN-LABEL: func.func @located_train(
// STDIN-SAME:    %arg0: tensor<2x4xf32> {tofu.name = "input"},
// STDIN-SAME:    %arg1: tensor<4xf32> {tofu.name = "0.weight", tofu.weight},
// STDIN-SAME:    %arg2: tensor<4xf32> {tofu.name = "kept", tofu.weight},
// STDIN-SAME:    %arg3: tensor<4xf32> {tofu.weight},
// STDIN-SAME:    %arg4: tensor<4xf32> {tofu.weight},
// STDIN-SAME:    %arg5: tensor<4xf32> {tofu.weight},
// STDIN-SAME:    %arg6: tensor<4xf32> {tofu.weight},
// STDIN-SAME:    %arg7: tensor<4xf32> {tofu.weight})
func.func @located(%arg0: tensor<2x4xf32> loc("input"),
                   %arg1: tensor<4xf32> loc("0.weight"),
                   %arg2: tensor<4xf32> {tofu.name = "kept"} loc("other"),
                   %w3: tensor<4xf32>,
                   %arg4: tensor<4xf32> loc("twice"),
                   %arg5: tensor<4xf32> loc("twice"),
                   %arg1_: tensor<4xf32> loc("arg1"),
                   %arg9: tensor<4xf32> loc("optimizer.step")) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%arg0, %arg1, %arg2, %w3, %arg4, %arg5, %arg1_, %arg9 : tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%i : tensor<f32>) {
  ^bb0(%x: f32, %a: f32, %b: f32, %c: f32, %d: f32, %f: f32, %g: f32, %h: f32, %acc: f32):
    %p = arith.mulf %x, %a : f32
    %q = arith.mulf %p, %b : f32
    %r = arith.mulf %q, %c : f32
    %s = arith.mulf %r, %d : f32
    %t = arith.mulf %s, %f : f32
    %t2 = arith.mulf %t, %g : f32
    %t3 = arith.mulf %t2, %h : f32
    %u = arith.addf %acc, %t3 : f32
    linalg.yield %u : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
