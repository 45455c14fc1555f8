// A BERT-like embedding model: token ids (i64 inputs) gather rows of a 50x16
// table, then a dense layer and a tanh-sum loss. Run with int-bound 50 so
// that every id is a row of the table.

#m2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mm_a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#mm_b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#mm_c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#all3 = affine_map<(d0, d1, d2) -> ()>
func.func @bert_embed(%ids: tensor<4x8xi64>, %table: tensor<50x16xf32> {tofu.weight},
                      %w: tensor<16x16xf32> {tofu.weight}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x16xf32>
  %emb = linalg.generic {indexing_maps = [#m2, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<4x8xi64>) outs(%e : tensor<4x8x16xf32>) {
  ^bb0(%id: i64, %o: f32):
    %r = arith.index_cast %id : i64 to index
    %h = linalg.index 2 : index
    %v = tensor.extract %table[%r, %h] : tensor<50x16xf32>
    linalg.yield %v : f32
  } -> tensor<4x8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x16xf32>) -> tensor<4x8x16xf32>
  %y = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%emb, %w : tensor<4x8x16xf32>, tensor<16x16xf32>) outs(%z : tensor<4x8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8x16xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#m3, #all3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<4x8x16xf32>) outs(%zl : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = math.tanh %v : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
