// The product `ikb,kjb->bij`, whose batch loop is the innermost dimension
// of its first input: where that input is contiguous it has no unit-stride
// matrix dimension, and the step reaches it with strides known only at run
// time (library-calls.test).
func.func @forward(%x: tensor<4x3x2xf64> {tofu.input}, %w: tensor<2x3x5xf64> {tofu.weight}) -> tensor<f64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<2x4x5xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<2x4x5xf64>) -> tensor<2x4x5xf64>
  %y = linalg.generic {indexing_maps = [affine_map<(b, i, j, k) -> (i, k, b)>, affine_map<(b, i, j, k) -> (b, k, j)>, affine_map<(b, i, j, k) -> (b, i, j)>], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%x, %w : tensor<4x3x2xf64>, tensor<2x3x5xf64>) outs(%z : tensor<2x4x5xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %q = arith.addf %acc, %p : f64
    linalg.yield %q : f64
  } -> tensor<2x4x5xf64>
  %e0 = tensor.empty() : tensor<f64>
  %z0 = linalg.fill ins(%zero : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l = linalg.generic {indexing_maps = [affine_map<(b, i, j) -> (b, i, j)>, affine_map<(b, i, j) -> ()>], iterator_types = ["reduction", "reduction", "reduction"]} ins(%y : tensor<2x4x5xf64>) outs(%z0 : tensor<f64>) {
  ^bb0(%a: f64, %acc: f64):
    %s = arith.mulf %a, %a : f64
    %q = arith.addf %acc, %s : f64
    linalg.yield %q : f64
  } -> tensor<f64>
  return %l : tensor<f64>
}
