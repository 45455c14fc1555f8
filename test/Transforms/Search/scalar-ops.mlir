// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=2 plan-out=none svg=none report=-" -o /dev/null 2>&1 | FileCheck %s

// Tests that scalar work, which has nothing to split, runs replicated
// without a remark: the sum of the rows is cut, the scaling of the scalar
// result is not, and the report names no operator without an even
// strategy. (The zoo LSTM's step has 237 such scalar operators, its loss
// per time step and Adam's step-size factors.)

// CHECK: tofu plan: algorithm tofu, devices 2
// CHECK-NOT: have no even strategy
#row = affine_map<(d0) -> (d0)>
#all = affine_map<(d0) -> ()>
#scalar = affine_map<() -> ()>
func.func @f(%x: tensor<8xf32>) -> tensor<f32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#row, #all], iterator_types = ["reduction"]}
      ins(%x : tensor<8xf32>) outs(%f : tensor<f32>) {
  ^bb0(%v: f32, %acc: f32):
    %a = arith.addf %acc, %v : f32
    linalg.yield %a : f32
  } -> tensor<f32>
  %e2 = tensor.empty() : tensor<f32>
  %h = linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%s : tensor<f32>) outs(%e2 : tensor<f32>) {
  ^bb0(%v: f32, %o: f32):
    %m = arith.mulf %v, %v : f32
    linalg.yield %m : f32
  } -> tensor<f32>
  return %h : tensor<f32>
}
