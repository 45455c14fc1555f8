// Data movement on partitioned tensors: a pad, a concat, reshapes, a strided
// slice and an insert_slice, all along the dimension the plan cuts, so that
// ranks hold regions of different shapes (padding on some ranks only,
// pieces of several concat inputs, an insert that misses some ranks).
// Weight %w (8x6), input %x (12x8); the loss is the sum of squares.

#id = affine_map<(d0, d1) -> (d0, d1)>
#sum = affine_map<(d0, d1) -> ()>
module {
  func.func @forward(%x: tensor<12x8xf32>, %w: tensor<8x6xf32> {tofu.weight}) -> tensor<f32> {
    %zero = arith.constant 0.0 : f32
    %half = arith.constant 0.5 : f32
    %e0 = tensor.empty() : tensor<12x6xf32>
    %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<12x6xf32>) -> tensor<12x6xf32>
    %h = linalg.matmul ins(%x, %w : tensor<12x8xf32>, tensor<8x6xf32>) outs(%f0 : tensor<12x6xf32>) -> tensor<12x6xf32>
    // 12 rows padded to 15: 1 row before, 2 after, with 0.5.
    %p = tensor.pad %h low[1, 0] high[2, 0] {
    ^bb0(%i: index, %j: index):
      tensor.yield %half : f32
    } : tensor<12x6xf32> to tensor<15x6xf32>
    // 15 + 12 + 3 rows.
    %tail = tensor.extract_slice %h[2, 0] [3, 6] [4, 1] : tensor<12x6xf32> to tensor<3x6xf32>
    %c = tensor.concat dim(0) %p, %h, %tail : (tensor<15x6xf32>, tensor<12x6xf32>, tensor<3x6xf32>) -> tensor<30x6xf32>
    %r = tensor.expand_shape %c [[0], [1, 2]] output_shape [30, 2, 3] : tensor<30x6xf32> into tensor<30x2x3xf32>
    %q = tensor.collapse_shape %r [[0, 1], [2]] : tensor<30x2x3xf32> into tensor<60x3xf32>
    // Every third row of the reshaped tensor, into rows 7.. of a 30x3 zero.
    %s = tensor.extract_slice %q[1, 0] [20, 3] [3, 1] : tensor<60x3xf32> to tensor<20x3xf32>
    %e1 = tensor.empty() : tensor<30x3xf32>
    %z = linalg.fill ins(%zero : f32) outs(%e1 : tensor<30x3xf32>) -> tensor<30x3xf32>
    %ins = tensor.insert_slice %s into %z[7, 0] [20, 3] [1, 1] : tensor<20x3xf32> into tensor<30x3xf32>
    %e2 = tensor.empty() : tensor<f32>
    %acc = linalg.fill ins(%zero : f32) outs(%e2 : tensor<f32>) -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#id, #sum], iterator_types = ["reduction", "reduction"]} ins(%ins : tensor<30x3xf32>) outs(%acc : tensor<f32>) {
    ^bb0(%a: f32, %o: f32):
      %sq = arith.mulf %a, %a : f32
      %t = arith.addf %o, %sq : f32
      linalg.yield %t : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
