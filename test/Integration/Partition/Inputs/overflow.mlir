// A model whose loss overflows for any weights but zero: sum(exp(1e30 * w)).

#m2 = affine_map<(d0, d1) -> (d0, d1)>
#all = affine_map<(d0, d1) -> ()>
func.func @overflow(%x: tensor<4x4xf32>, %w: tensor<4x4xf32> {tofu.weight}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %big = arith.constant 1.0e30 : f32
  %e = tensor.empty() : tensor<f32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#m2, #m2, #all], iterator_types = ["reduction", "reduction"]}
      ins(%x, %w : tensor<4x4xf32>, tensor<4x4xf32>) outs(%z : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %b, %big : f32
    %q = arith.mulf %p, %p : f32
    %t = math.exp %q : f32
    %u = arith.addf %t, %a : f32
    %s = arith.addf %acc, %u : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
