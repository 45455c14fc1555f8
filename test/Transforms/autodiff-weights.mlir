// RUN: tofu-opt %s --tofu-autodiff="weights=all inputs=0" -split-input-file | FileCheck %s --check-prefix=ALL
// RUN: tofu-opt %s --tofu-autodiff="weights=all inputs=x" -split-input-file | FileCheck %s --check-prefix=ALL
// RUN: tofu-opt %s --tofu-autodiff="weights=w,b" -split-input-file | FileCheck %s --check-prefix=NAMED

// Tests that weights=all takes every float tensor argument except the inputs
// named by inputs= and those marked tofu.input, and that weights can be
// named by SSA name, name location or tofu.name.

// ALL-LABEL: func.func @named_loss_train
// ALL-SAME:    %{{.*}}: tensor<4xf32> {tofu.name = "x"},
// ALL-SAME:    %{{.*}}: tensor<4xf32> {tofu.name = "w", tofu.weight},
// ALL-SAME:    %{{.*}}: tensor<4xf32> {tofu.name = "b", tofu.weight},
// ALL-SAME:    %{{.*}}: tensor<4xi32> {tofu.name = "ids"},
// ALL-SAME:    %{{.*}}: tensor<4xf32> {tofu.input, tofu.name = "t"})
// ALL-SAME:    -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 1 : i64}, tensor<4xf32> {tofu.grad_of_arg = 2 : i64})
// NAMED-LABEL: func.func @named_loss_train
// NAMED-SAME:    -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 1 : i64}, tensor<4xf32> {tofu.grad_of_arg = 2 : i64})
func.func @named_loss(%x: tensor<4xf32>, %w: tensor<4xf32>,
                      %arg2: tensor<4xf32> {tofu.name = "b"}, %ids: tensor<4xi32>,
                      %t: tensor<4xf32> {tofu.input}) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%x, %w, %arg2, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%i : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %p = arith.addf %m, %c : f32
    %q = arith.subf %p, %d : f32
    %s = arith.addf %o, %q : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// Tests that names come from name locations, as exporters write them, and
// that weights=all skips functions that do not return a loss.

// ALL-LABEL: func.func @helper(
// ALL-LABEL: func.func @located_train
// ALL-SAME:    -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 1 : i64}, tensor<4xf32> {tofu.grad_of_arg = 2 : i64})
// NAMED-LABEL: func.func @located_train
// NAMED-SAME:    -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 1 : i64}, tensor<4xf32> {tofu.grad_of_arg = 2 : i64})
func.func @helper(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
func.func @located(%arg0: tensor<4xf32> loc("x"), %arg1: tensor<4xf32> loc("w"),
                   %arg2: tensor<4xf32> loc("b"),
                   %arg3: tensor<4xf32> {tofu.input} loc("t")) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%arg0, %arg1, %arg2, %arg3 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) outs(%i : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %p = arith.addf %m, %c : f32
    %q = arith.subf %p, %d : f32
    %s = arith.addf %o, %q : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
