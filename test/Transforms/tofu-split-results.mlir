// RUN: tofu-opt %s --tofu-split-results -split-input-file | FileCheck %s

// Tests that an adaptive average pooling as torch-mlir exports it (one
// generic that sums each window of a captured tensor and also yields the
// window's size) becomes a reduction generic for the sums, with every loop
// and input kept, and a parallel generic over the output loops for the sizes.

// CHECK-LABEL: func.func @adaptive_pool(
// CHECK:         %[[SUM:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #{{.*}}], iterator_types = ["parallel", "parallel", "reduction"]} ins(%{{.*}} : tensor<3xi1>) outs(%{{.*}} : tensor<2x2xf32>)
// CHECK:           tensor.extract
// CHECK:           arith.addf
// CHECK-NOT:       arith.sitofp
// CHECK:         %[[SIZE:.*]] = linalg.generic {indexing_maps = [#[[OUT:.*]]], iterator_types = ["parallel"]} outs(%{{.*}} : tensor<2xf32>)
// CHECK:           linalg.index 0 : index
// CHECK:           arith.sitofp
// CHECK:         return %[[SUM]], %[[SIZE]]
func.func @adaptive_pool(%x: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2xf32>) {
  %c3 = arith.constant 3 : index
  %c1 = arith.constant 1 : index
  %w = tensor.empty() : tensor<3xi1>
  %s = tensor.empty() : tensor<2x2xf32>
  %n = tensor.empty() : tensor<2xf32>
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%w : tensor<3xi1>) outs(%s, %n : tensor<2x2xf32>, tensor<2xf32>) {
  ^bb0(%in: i1, %acc: f32, %size: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %base = arith.muli %i1, %c3 : index
    %col = arith.addi %base, %i2 : index
    %v = tensor.extract %x[%i0, %col] : tensor<2x6xf32>
    %a = arith.addf %v, %acc : f32
    %end = arith.addi %i1, %c1 : index
    %len = arith.subi %end, %i1 : index
    %li = arith.index_cast %len : index to i64
    %lf = arith.sitofp %li : i64 to f32
    linalg.yield %a, %lf : f32, f32
  } -> (tensor<2x2xf32>, tensor<2xf32>)
  return %r#0, %r#1 : tensor<2x2xf32>, tensor<2xf32>
}

// -----

// Tests that a generic in which one result reads another result's
// accumulator stays whole.

// CHECK-LABEL: func.func @coupled(
// CHECK:         linalg.generic {{.*}} outs(%{{.*}}, %{{.*}} : tensor<4xf32>, tensor<4xf32>)
func.func @coupled(%x: tensor<4xf32>, %a: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<4xf32>) outs(%a, %b : tensor<4xf32>, tensor<4xf32>) {
  ^bb0(%in: f32, %o0: f32, %o1: f32):
    %s = arith.addf %in, %o1 : f32
    linalg.yield %s, %in : f32, f32
  } -> (tensor<4xf32>, tensor<4xf32>)
  return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a result nobody uses (the indices of a max, as torch-mlir
// exports a softmax's row maximum) is dropped even though it reads the
// other result's accumulator.

// CHECK-LABEL: func.func @max_with_index(
// CHECK:         %[[M:.*]] = linalg.generic {{.*}} outs(%{{.*}} : tensor<4xf32>)
// CHECK:           arith.maximumf
// CHECK-NOT:       arith.select
// CHECK:         return %[[M]]
func.func @max_with_index(%x: tensor<4x8xf32>, %m: tensor<4xf32>, %i: tensor<4xi64>) -> tensor<4xf32> {
  %r:2 = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>, affine_map<(d0, d1) -> (d0)>], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<4x8xf32>) outs(%m, %i : tensor<4xf32>, tensor<4xi64>) {
  ^bb0(%in: f32, %acc: f32, %idx: i64):
    %c = linalg.index 1 : index
    %ci = arith.index_cast %c : index to i64
    %mx = arith.maximumf %in, %acc : f32
    %gt = arith.cmpf ogt, %in, %acc : f32
    %sel = arith.select %gt, %ci, %idx : i64
    linalg.yield %mx, %sel : f32, i64
  } -> (tensor<4xf32>, tensor<4xi64>)
  return %r#0 : tensor<4xf32>
}
