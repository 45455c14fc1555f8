// RUN: tofu-opt %s --tdl-attach -split-input-file | FileCheck %s
// RUN: tofu-opt %s --tdl-attach --test-tdl-strategies -split-input-file -o /dev/null | FileCheck %s --check-prefix=STRAT

// Tests that a reduction loop seen only through linalg.index and the map of
// an operand the body does not read (a one-hot pick of each row's class)
// gets its extent declared from the loop ranges, and that cutting it is a
// partial-sum strategy.

// CHECK-LABEL: func.func @one_hot_pick
// CHECK: linalg.generic
// CHECK-SAME: tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0) = init0[d0] + (sum(d1 : 10) select(cmpi(index_cast(in1[d0]), d1), 1.0, 0.0))>
// STRAT-LABEL: op linalg.generic (workers = 2)
// STRAT:      loops: d0=4 d1=10
// STRAT:      d0 output unread cut(0) cut(0) cut(0)
// STRAT-NEXT: d1 reduce unread whole  whole  partial
#map = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
func.func @one_hot_pick(%x: tensor<4x10xf32>, %ids: tensor<4xi64>, %init: tensor<4xf32>) -> tensor<4xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %r = linalg.generic {indexing_maps = [#map, #row, #row], iterator_types = ["parallel", "reduction"]}
      ins(%x, %ids : tensor<4x10xf32>, tensor<4xi64>) outs(%init : tensor<4xf32>) {
  ^bb0(%a: f32, %id: i64, %acc: f32):
    %c = linalg.index 1 : index
    %i = arith.index_cast %id : i64 to index
    %hit = arith.cmpi eq, %i, %c : index
    %t = arith.select %hit, %one, %zero : f32
    %s = arith.addf %acc, %t : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that a reduction loop that only an unread input's map mentions (a
// count of each row's elements) gets its extent declared, while the loops
// that an access indexes with keep theirs from the shapes.

// CHECK-LABEL: func.func @count_rows
// CHECK: linalg.generic
// CHECK-SAME: tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0) = init0[d0] + (sum(d1 : 6, d2) in1[d2])>
// STRAT-LABEL: op linalg.generic (workers = 2)
// STRAT:      loops: d0=3 d1=6 d2=5
#x = affine_map<(d0, d1, d2) -> (d0, d1)>
#y = affine_map<(d0, d1, d2) -> (d2)>
#o = affine_map<(d0, d1, d2) -> (d0)>
func.func @count_rows(%x: tensor<3x6xf32>, %y: tensor<5xf32>, %init: tensor<3xf32>) -> tensor<3xf32> {
  %r = linalg.generic {indexing_maps = [#x, #y, #o], iterator_types = ["parallel", "reduction", "reduction"]}
      ins(%x, %y : tensor<3x6xf32>, tensor<5xf32>) outs(%init : tensor<3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %s = arith.addf %acc, %b : f32
    linalg.yield %s : f32
  } -> tensor<3xf32>
  return %r : tensor<3xf32>
}

// -----

// Tests that a body that ignores the accumulator over a unit reduction loop
// (a comparison broadcast over a dimension of size 1, as exporters emit for a
// causal mask) is the sum of its one term, with no init.

// CHECK-LABEL: func.func @unit_reduction_mask
// CHECK: linalg.generic
// CHECK-SAME: tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1) = sum(d2) cmpi(in0[d1], in1[d0, d2])>
// STRAT-LABEL: op linalg.generic (workers = 2)
// STRAT:      loops: d0=8 d1=8 d2=1
#p = affine_map<(d0, d1, d2) -> (d1)>
#q = affine_map<(d0, d1, d2) -> (d0, d2)>
#r = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @unit_reduction_mask(%a: tensor<8xi64>, %b: tensor<8x1xi64>, %init: tensor<8x8xi1>) -> tensor<8x8xi1> {
  %r = linalg.generic {indexing_maps = [#p, #q, #r], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%a, %b : tensor<8xi64>, tensor<8x1xi64>) outs(%init : tensor<8x8xi1>) {
  ^bb0(%x: i64, %y: i64, %o: i1):
    %c = arith.cmpi sgt, %x, %y : i64
    linalg.yield %c : i1
  } -> tensor<8x8xi1>
  return %r : tensor<8x8xi1>
}
