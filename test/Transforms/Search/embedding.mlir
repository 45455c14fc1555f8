// RUN: tofu-opt %s --tofu-autodiff --tofu-optimizer=kind=adam --tdl-attach --tofu-search="devices=2 plan-out=none svg=none" 2>&1 | FileCheck %s
// RUN: tofu-opt %s --tofu-autodiff --tofu-optimizer=kind=adam --tdl-attach --tofu-search="devices=2 plan-out=none svg=none algorithm=data-parallel" -o /dev/null 2>&1 | FileCheck %s --check-prefix=DP

// Tests a BERT-like embedding model (an embedding lookup written as
// torch-mlir does, a dense layer and a loss) from forward model to plan with
// no allow-opaque: the table's gradient is a scatter-add that tdl-attach
// describes, and with a 30000x64 table the search cuts the table (and its
// gradient and Adam state) along h instead of replicating it and reducing
// its 7.7 MB gradient as data parallelism does.

// CHECK: cost-model bytes: 33288 (
// CHECK-LABEL: func.func @bert_embed_train
// CHECK-SAME: %arg0: tensor<4x8xi64> {tofu.name = "ids", tofu.tiling = ["cut(0)"]}
// CHECK-SAME: %arg1: tensor<30000x64xf32> {tofu.name = "table", tofu.tiling = ["cut(1)"], tofu.weight}
// CHECK-SAME: %arg4: tensor<30000x64xf32> {tofu.name = "table.exp_avg", tofu.state_of = 1 : i64, tofu.tiling = ["cut(1)"]}
// CHECK-SAME: %arg5: tensor<30000x64xf32> {tofu.name = "table.exp_avg_sq", tofu.state_of = 1 : i64, tofu.tiling = ["cut(1)"]}
// CHECK: linalg.generic
// CHECK-SAME: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d0, d1, d2) = cap0[opaque(index_cast(in0[d0, d1])), d2]>
// DP: cost-model bytes: 7717128 (

#m2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#mm_a = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#mm_b = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#mm_c = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#all3 = affine_map<(d0, d1, d2) -> ()>
func.func @bert_embed(%ids: tensor<4x8xi64>, %table: tensor<30000x64xf32> {tofu.weight},
                      %w: tensor<64x64xf32> {tofu.weight}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x8x64xf32>
  %emb = linalg.generic {indexing_maps = [#m2, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<4x8xi64>) outs(%e : tensor<4x8x64xf32>) {
  ^bb0(%id: i64, %o: f32):
    %r = arith.index_cast %id : i64 to index
    %h = linalg.index 2 : index
    %v = tensor.extract %table[%r, %h] : tensor<30000x64xf32>
    linalg.yield %v : f32
  } -> tensor<4x8x64xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x64xf32>) -> tensor<4x8x64xf32>
  %y = linalg.generic {indexing_maps = [#mm_a, #mm_b, #mm_c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%emb, %w : tensor<4x8x64xf32>, tensor<64x64xf32>) outs(%z : tensor<4x8x64xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  } -> tensor<4x8x64xf32>
  %el = tensor.empty() : tensor<f32>
  %zl = linalg.fill ins(%zero : f32) outs(%el : tensor<f32>) -> tensor<f32>
  %loss = linalg.generic {indexing_maps = [#m3, #all3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%y : tensor<4x8x64xf32>) outs(%zl : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %t = math.tanh %v : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<f32>
  return %loss : tensor<f32>
}
