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

// -----

// A linalg operation with two outputs.
func.func @two_outputs(%w: tensor<4xf32> {tofu.weight}) -> tensor<f32> {
  %e = tensor.empty() : tensor<4xf32>
  // expected-error @+1 {{tofu-autodiff: cannot differentiate 'linalg.generic': expected one tensor result, found 2}}
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%w : tensor<4xf32>) outs(%e, %e : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32, %p: f32):
    linalg.yield %v, %v : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%r#0 : tensor<4xf32>) outs(%i : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %o, %v : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// -----

// The function must return exactly the loss.
// expected-error @+1 {{tofu-autodiff: expected a function returning one scalar loss, found 2 results}}
func.func @two_results(%w: tensor<f32> {tofu.weight}) -> (tensor<f32>, tensor<f32>) {
  return %w, %w : tensor<f32>, tensor<f32>
}

// -----

// Dynamic shapes are not differentiated.
func.func @dynamic(%w: tensor<2x3xf32> {tofu.weight}) -> tensor<f32> {
  %d = tensor.cast %w : tensor<2x3xf32> to tensor<?x3xf32>
  // expected-error @+1 {{tofu-autodiff: cannot differentiate 'tensor.collapse_shape' with a dynamic shape}}
  %c = tensor.collapse_shape %d [[0, 1]] : tensor<?x3xf32> into tensor<?xf32>
  %z = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<f32>
  %i = linalg.fill ins(%z : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%c : tensor<?xf32>) outs(%i : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %a = arith.addf %o, %v : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
