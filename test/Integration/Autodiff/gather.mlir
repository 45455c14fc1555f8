// Finite-difference check (f64, rtol 1e-4) of the gather rule: tables read
// with tensor.extract in linalg bodies get a scatter-add gradient. The ids
// repeat a row (accumulation) and leave rows unread (zero gradient); the
// tables are read by an id (embedding), by a loop index (position table),
// by arith on loop indices (shifted rotary-style table), under a sum
// reduction and twice in one body.
// RUN: tofu-opt %s --tofu-autodiff=keep-forward --test-tofu-gradcheck="func=gather" | %run_cpu | FileCheck %s
// RUN: tofu-opt %s --tofu-autodiff --tdl-attach | FileCheck %s --check-prefix=TDL
// CHECK: GRADCHECK checked=45
// CHECK: GRADCHECK failures=0

// The gradients of the tables are reductions over the forward loops into
// the whole table, with one loop per row read by an id (d3 here): tdl-attach
// describes them affinely, so the table gradient can be cut along its rows
// or along h.
// TDL-LABEL: func.func @gather_train
// TDL: tdl.desc = #tdl.desc<(in0, in1, in2, init0) -> (d3, d2) = init0[d3, d2] + (sum(d0, d1) select(cmpi(index_cast(in0[d0, d1]), d3), in1[d0, d1, d2] * in2[d0, d2], 0.0))>, tofu.bwd_of = 7
// TDL: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d1, d2) = init0[d1, d2] + (sum(d0) cap0[d1 + 1, d2] * in0[d0, d1, d2])>, tofu.bwd_of = 3 : i64, tofu.grad_of = array<i64: -1, 1>
// TDL: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d3, d2) = init0[d3, d2] + (sum(d0, d1) select(cmpi(d1 + 1, d3), cap0[d1, d2] * in0[d0, d1, d2], 0.0))>, tofu.bwd_of = 3 : i64, tofu.grad_of = array<i64: -1, 2>

#m2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#s3 = affine_map<(d0, d1, d2) -> ()>
#r3 = affine_map<(d0, d1, d2) -> (d0, d2)>

func.func @gather(%table: tensor<5x3xf64> {tofu.weight}, %pos: tensor<4x3xf64> {tofu.weight},
                  %rot: tensor<6x3xf64> {tofu.weight}) -> tensor<f64> {
  %ids = arith.constant dense<[[1, 3, 1, 0], [4, 1, 3, 3]]> : tensor<2x4xi64>
  %c1 = arith.constant 1 : index
  %e = tensor.empty() : tensor<2x4x3xf64>
  // emb[b, s, h] = table[ids[b, s], h] * table[ids[b, s], h] + pos[s, h] * rot[s + 1, h]
  %x = linalg.generic {indexing_maps = [#m2, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<2x4xi64>) outs(%e : tensor<2x4x3xf64>) {
  ^bb0(%id: i64, %o: f64):
    %r = arith.index_cast %id : i64 to index
    %s = linalg.index 1 : index
    %h = linalg.index 2 : index
    %t = tensor.extract %table[%r, %h] : tensor<5x3xf64>
    %p = tensor.extract %pos[%s, %h] : tensor<4x3xf64>
    %s1 = arith.addi %s, %c1 : index
    %q = tensor.extract %rot[%s1, %h] : tensor<6x3xf64>
    %tt = arith.mulf %t, %t : f64
    %pq = arith.mulf %p, %q : f64
    %y = arith.addf %tt, %pq : f64
    linalg.yield %y : f64
  } -> tensor<2x4x3xf64>
  // bag[b, h] = sum(s) table[ids[b, s], h] * emb[b, s, h]
  %eb = tensor.empty() : tensor<2x3xf64>
  %zero = arith.constant 0.0 : f64
  %zb = linalg.fill ins(%zero : f64) outs(%eb : tensor<2x3xf64>) -> tensor<2x3xf64>
  %bag = linalg.generic {indexing_maps = [#m2, #m3, #r3], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%ids, %x : tensor<2x4xi64>, tensor<2x4x3xf64>) outs(%zb : tensor<2x3xf64>) {
  ^bb0(%id: i64, %v: f64, %acc: f64):
    %r = arith.index_cast %id : i64 to index
    %h = linalg.index 2 : index
    %t = tensor.extract %table[%r, %h] : tensor<5x3xf64>
    %m = arith.mulf %t, %v : f64
    %a = arith.addf %acc, %m : f64
    linalg.yield %a : f64
  } -> tensor<2x3xf64>
  %el = tensor.empty() : tensor<f64>
  %zl = linalg.fill ins(%zero : f64) outs(%el : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]}
      ins(%bag : tensor<2x3xf64>) outs(%zl : tensor<f64>) {
  ^bb0(%v: f64, %acc: f64):
    %t = math.tanh %v : f64
    %a = arith.addf %acc, %t : f64
    linalg.yield %a : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
