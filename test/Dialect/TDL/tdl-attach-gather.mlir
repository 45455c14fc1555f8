// RUN: tofu-opt %s --tdl-attach -split-input-file | FileCheck %s
// RUN: tofu-opt %s --tdl-attach --test-tdl-strategies -split-input-file -o /dev/null | FileCheck %s --check-prefix=STRAT

// Tests that an embedding lookup (a tensor.extract of a captured table with a
// row index read from the ids operand) takes the table as input `cap0`, with
// an opaque row index and an affine column: b, s and h are all strategies,
// and only h cuts the table.

// CHECK-LABEL: func.func @embedding
// CHECK: linalg.generic
// CHECK-SAME: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d0, d1, d2) = cap0[opaque(index_cast(in0[d0, d1])), d2]>
// STRAT-LABEL: op linalg.generic (workers = 2)
// STRAT-NEXT: desc: (in0, init0, cap0) -> (d0, d1, d2) = cap0[opaque(index_cast(in0[d0, d1])), d2]
// STRAT:      d0 output cut(0) unread whole  cut(0)
// STRAT-NEXT: d1 output cut(1) unread whole  cut(1)
// STRAT-NEXT: d2 output whole  unread cut(1) cut(2)
// STRAT:      strategy d0:
// STRAT:        cap0 100x16: w0 [0:99, 0:15] w1 [0:99, 0:15]
// STRAT-NEXT:     symbolic w0: [0, 99] [0, N_d2 - 1]
// STRAT-NEXT:     fetch: cut(0)=1600 cut(1)=1600 rep=0 partial=3200
// STRAT:      strategy d2:
// STRAT:        cap0 100x16: w0 [0:99, 0:7] w1 [0:99, 8:15]
// STRAT-NEXT:     symbolic w0: [0, 99] [0, N_d2/2 - 1]
// STRAT-NEXT:     fetch: cut(0)=800 cut(1)=0 rep=0 partial=1600
#m2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @embedding(%ids: tensor<2x8xi64>, %table: tensor<100x16xf32>) -> tensor<2x8x16xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %0 = linalg.generic {indexing_maps = [#m2, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%ids : tensor<2x8xi64>) outs(%e : tensor<2x8x16xf32>) {
  ^bb0(%id: i64, %o: f32):
    %r = arith.index_cast %id : i64 to index
    %h = linalg.index 2 : index
    %v = tensor.extract %table[%r, %h] : tensor<100x16xf32>
    linalg.yield %v : f32
  } -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// Tests that a position-embedding read through linalg.index is affine: the
// table is cut along the positions with s and along h with h.

// CHECK-LABEL: func.func @positions
// CHECK: linalg.generic
// CHECK-SAME: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d0, d1, d2) = in0[d0, d1, d2] + cap0[d1, d2]>
// STRAT-LABEL: op linalg.generic (workers = 2)
// STRAT:      d0 output cut(0) unread whole  cut(0)
// STRAT-NEXT: d1 output cut(1) unread cut(0) cut(1)
// STRAT-NEXT: d2 output cut(2) unread cut(1) cut(2)
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @positions(%x: tensor<2x8x16xf32>, %pos: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %0 = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x16xf32>) outs(%e : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = linalg.index 1 : index
    %h = linalg.index 2 : index
    %p = tensor.extract %pos[%s, %h] : tensor<8x16xf32>
    %y = arith.addf %a, %p : f32
    linalg.yield %y : f32
  } -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}

// -----

// Tests that a rotary-table read whose indices are arith on linalg.index
// values (an offset and a halving of a non-negative index) stays affine.

// CHECK-LABEL: func.func @rotary
// CHECK: linalg.generic
// CHECK-SAME: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d0, d1, d2, d3) = in0[d0, d1, d2, d3] * cap0[d1 + 2, d3 floordiv 2]>
// STRAT-LABEL: op linalg.generic (workers = 2)
// STRAT:      strategy d3:
// STRAT:        cap0 10x4: w0 [2:9, 0:1] w1 [2:9, 2:3]
#r4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
func.func @rotary(%x: tensor<2x8x2x8xf32>, %cos: tensor<10x4xf32>) -> tensor<2x8x2x8xf32> {
  %ex = tensor.empty() : tensor<2x8x2x8xf32>
  %c2 = arith.constant 2 : index
  %0 = linalg.generic {indexing_maps = [#r4, #r4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x2x8xf32>) outs(%ex : tensor<2x8x2x8xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = linalg.index 1 : index
    %d = linalg.index 3 : index
    %s2 = arith.addi %s, %c2 : index
    %d2 = arith.divui %d, %c2 : index
    %c = tensor.extract %cos[%s2, %d2] : tensor<10x4xf32>
    %y = arith.mulf %a, %c : f32
    linalg.yield %y : f32
  } -> tensor<2x8x2x8xf32>
  return %0 : tensor<2x8x2x8xf32>
}

// -----

// Tests that an index that is not affine in the loops (a product of two
// linalg.index values, a signed division of a possibly negative value) is
// opaque, so the table dimension it selects is read whole.

// CHECK-LABEL: func.func @nonaffine
// CHECK: linalg.generic
// CHECK-SAME: tdl.desc = #tdl.desc<(in0, init0, cap0) -> (d0, d1, d2) = in0[d0, d1, d2] + cap0[opaque(d0 * d1), opaque((d2 - 1) / 2)]>
// STRAT-LABEL: op linalg.generic (workers = 2)
// STRAT:      d0 output cut(0) unread whole cut(0)
// STRAT-NEXT: d1 output cut(1) unread whole cut(1)
// STRAT-NEXT: d2 output cut(2) unread whole cut(2)
#m3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
func.func @nonaffine(%x: tensor<2x8x16xf32>, %table: tensor<100x16xf32>) -> tensor<2x8x16xf32> {
  %e = tensor.empty() : tensor<2x8x16xf32>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %0 = linalg.generic {indexing_maps = [#m3, #m3], iterator_types = ["parallel", "parallel", "parallel"]}
      ins(%x : tensor<2x8x16xf32>) outs(%e : tensor<2x8x16xf32>) {
  ^bb0(%a: f32, %o: f32):
    %b = linalg.index 0 : index
    %s = linalg.index 1 : index
    %h = linalg.index 2 : index
    %bs = arith.muli %b, %s : index
    %hm = arith.subi %h, %c1 : index
    %hh = arith.divsi %hm, %c2 : index
    %p = tensor.extract %table[%bs, %hh] : tensor<100x16xf32>
    %y = arith.addf %a, %p : f32
    linalg.yield %y : f32
  } -> tensor<2x8x16xf32>
  return %0 : tensor<2x8x16xf32>
}
