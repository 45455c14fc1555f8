// RUN: tofu-opt %s --tofu-autodiff -split-input-file -verify-diagnostics

// An operation without an adjoint rule on the path from a weight to the loss.
func.func @no_rule(%w: tensor<2x3xf32> {tofu.weight}) -> tensor<f32> {
  %e = tensor.empty() : tensor<2x3xf32>
  // expected-error @+1 {{tofu-autodiff: cannot differentiate 'linalg.softmax'}}
  %s = linalg.softmax dimension(1) ins(%w : tensor<2x3xf32>) outs(%e : tensor<2x3xf32>) -> tensor<2x3xf32>
  %c = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%s : tensor<2x3xf32>) outs(%i : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %o, %v : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A scalar operation without a derivative rule in a linalg body.
func.func @no_scalar_rule(%w: tensor<4xf32> {tofu.weight}) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{tofu-autodiff: cannot differentiate 'math.sin' in the body of 'linalg.generic'}}
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%w : tensor<4xf32>) outs(%i : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %s = math.sin %v : f32
    %a = arith.addf %o, %s : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// A reduction whose combiner is not add, max or min.
func.func @product(%w: tensor<4xf32> {tofu.weight}) -> tensor<f32> {
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%one : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{its reduction is not 'acc + f', 'max(acc, f)' or 'min(acc, f)'}}
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%w : tensor<4xf32>) outs(%i : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.mulf %o, %v : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The loss must be a 0-d tensor.
// expected-error @+1 {{tofu-autodiff: the loss must be a 0-d float tensor, found 'tensor<4xf32>'}}
func.func @not_scalar(%w: tensor<4xf32> {tofu.weight}) -> tensor<4xf32> {
  return %w : tensor<4xf32>
}

// -----

// Control flow on the weight path is not differentiated.
func.func @region(%w: tensor<4xf32> {tofu.weight}, %c: i1) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{tofu-autodiff: cannot differentiate 'scf.if' with regions}}
  %r = scf.if %c -> tensor<4xf32> {
    scf.yield %w : tensor<4xf32>
  } else {
    scf.yield %w : tensor<4xf32>
  }
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%r : tensor<4xf32>) outs(%i : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %o, %v : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
