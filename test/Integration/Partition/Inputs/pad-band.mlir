// A pad whose bands are wider than a rank's tile: 4 rows padded to 12 (4
// before, 4 after), cut into 3 tiles of 4 rows, so that the first and the
// last rank read nothing of the source and build their tile from the pad
// value alone. Weight %w (8x5), input %x (4x8); 5 columns and 4 rows do not
// divide by 3, so the plan cuts the padded rows. The loss is the sum of
// squares.

#id = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> ()>
module {
  func.func @forward(%x: tensor<4x8xf32>, %w: tensor<8x5xf32> {tofu.weight}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %e0 = tensor.empty() : tensor<4x5xf32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<4x5xf32>) -> tensor<4x5xf32>
    %h = linalg.matmul ins(%x, %w : tensor<4x8xf32>, tensor<8x5xf32>) outs(%f0 : tensor<4x5xf32>) -> tensor<4x5xf32>
    %p = tensor.pad %h low[4, 0] high[4, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %half : f32
    } : tensor<4x5xf32> to tensor<12x5xf32>
    %e2 = tensor.empty() : tensor<f32>
    %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction", "reduction"]} ins(%p : tensor<12x5xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      %t = arith.addf %o, %sq : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
