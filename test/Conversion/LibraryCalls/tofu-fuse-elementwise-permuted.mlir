// RUN: tofu-opt %s --tofu-fuse-elementwise -split-input-file | FileCheck %s

// Tests that a GEMM reads the source of a transposed weight along the
// composed map (torch-mlir's nn.Linear: matmul(x, transpose(W))), so that
// the 16x8 copy disappears, and that a transpose that something else also
// reads stays for that use.

// CHECK-DAG: #[[MK:.*]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[NK:.*]] = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-DAG: #[[MN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME:    (%[[X:.*]]: tensor<4x8xf32>, %[[W:.*]]: tensor<16x8xf32>
// CHECK-NOT:   linalg.transpose
// CHECK:       %[[Y:.*]] = linalg.generic {indexing_maps = [#[[MK]], #[[NK]], #[[MN]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[W]] : tensor<4x8xf32>, tensor<16x8xf32>) outs(%{{.*}} : tensor<4x16xf32>) attrs = {tofu.op_id = 3 : i64}
// CHECK-NEXT:  ^bb0(%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f32):
// CHECK-NEXT:    %[[P:.*]] = arith.mulf %[[A]], %[[B]] : f32
// CHECK-NEXT:    %[[S:.*]] = arith.addf %[[C]], %[[P]] : f32
// CHECK-NEXT:    linalg.yield %[[S]] : f32
// CHECK:       return %[[Y]]
func.func @linear(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> tensor<4x16xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<4x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul {tofu.op_id = 3 : i64} ins(%x, %wt : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y : tensor<4x16xf32>
}

// -----

// CHECK-LABEL: func.func @shared_transpose
// CHECK:       %[[WT:.*]] = linalg.transpose
// CHECK:       linalg.generic {{.*}} ins(%{{.*}}, %arg1 : tensor<4x8xf32>, tensor<16x8xf32>)
// CHECK:       return %{{.*}}, %[[WT]]
func.func @shared_transpose(%x: tensor<4x8xf32>, %w: tensor<16x8xf32>) -> (tensor<4x16xf32>, tensor<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %wt = linalg.transpose ins(%w : tensor<16x8xf32>) outs(%e : tensor<8x16xf32>) permutation = [1, 0]
  %e2 = tensor.empty() : tensor<4x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<4x16xf32>) -> tensor<4x16xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x8xf32>, tensor<8x16xf32>) outs(%z : tensor<4x16xf32>) -> tensor<4x16xf32>
  return %y, %wt : tensor<4x16xf32>, tensor<8x16xf32>
}

// -----

// Tests that tofu-autodiff's gradient of a transposed weight, the product
// X^T dY accumulated into a zero fill and copied along the transpose into
// another zero fill (`out + 1.0 * in`), becomes one GEMM that writes the
// 16x8 gradient in the weight's order.

// CHECK-DAG: #[[KM:.*]] = affine_map<(d0, d1, d2) -> (d2, d0)>
// CHECK-DAG: #[[KN:.*]] = affine_map<(d0, d1, d2) -> (d2, d1)>
// CHECK-DAG: #[[NM:.*]] = affine_map<(d0, d1, d2) -> (d1, d0)>
// CHECK-LABEL: func.func @weight_gradient
// CHECK:       %[[E:.*]] = tensor.empty() : tensor<16x8xf32>
// CHECK:       %[[Z:.*]] = linalg.fill ins(%{{.*}} : f32) outs(%[[E]] : tensor<16x8xf32>)
// CHECK:       %[[G:.*]] = linalg.generic {indexing_maps = [#[[KM]], #[[KN]], #[[NM]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%arg0, %arg1 : tensor<4x8xf32>, tensor<4x16xf32>) outs(%[[Z]] : tensor<16x8xf32>)
// CHECK-NOT:   linalg.generic
// CHECK:       return %[[G]]
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#t = affine_map<(d0, d1) -> (d1, d0)>
func.func @weight_gradient(%x: tensor<4x8xf32>, %dy: tensor<4x16xf32>) -> tensor<16x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %gt = linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %dy : tensor<4x8xf32>, tensor<4x16xf32>) outs(%z : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<16x8xf32>) -> tensor<16x8xf32>
  %g = linalg.generic {indexing_maps = [#id, #t], iterator_types = ["parallel", "parallel"]} ins(%gt : tensor<8x16xf32>) outs(%z2 : tensor<16x8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %one = arith.constant 1.0 : f32
    %m = arith.mulf %one, %in : f32
    %s = arith.addf %out, %m : f32
    linalg.yield %s : f32
  } -> tensor<16x8xf32>
  return %g : tensor<16x8xf32>
}

// -----

// Tests that the copy stays where the product has another use, or does not
// start from zeros (it accumulates into a partial gradient).

// CHECK-LABEL: func.func @kept
// CHECK:         %[[GT:.*]] = linalg.generic
// CHECK:         %[[G:.*]] = linalg.transpose ins(%[[GT]]
// CHECK:         %[[HT:.*]] = linalg.generic
// CHECK:         %[[H:.*]] = linalg.transpose ins(%[[HT]]
// CHECK:         return %[[G]], %[[GT]], %[[H]]
#km = affine_map<(d0, d1, d2) -> (d2, d0)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
func.func @kept(%x: tensor<4x8xf32>, %dy: tensor<4x16xf32>, %acc: tensor<8x16xf32>) -> (tensor<16x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<8x16xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32>) -> tensor<8x16xf32>
  %gt = linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %dy : tensor<4x8xf32>, tensor<4x16xf32>) outs(%z : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %g = linalg.transpose ins(%gt : tensor<8x16xf32>) outs(%e2 : tensor<16x8xf32>) permutation = [1, 0]
  %ht = linalg.generic {indexing_maps = [#km, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x, %dy : tensor<4x8xf32>, tensor<4x16xf32>) outs(%acc : tensor<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  } -> tensor<8x16xf32>
  %h = linalg.transpose ins(%ht : tensor<8x16xf32>) outs(%e2 : tensor<16x8xf32>) permutation = [1, 0]
  return %g, %gt, %h : tensor<16x8xf32>, tensor<8x16xf32>, tensor<16x8xf32>
}

// -----

// Tests that no copy folds where the product would then hold a batch loop as
// an operand's innermost dimension: a contiguous operand would have no
// unit-stride matrix dimension for the library to take.

// CHECK-LABEL: func.func @batch_innermost_input
// CHECK:         %[[A:.*]] = linalg.transpose
// CHECK:         linalg.batch_matmul ins(%[[A]], %arg1
func.func @batch_innermost_input(%s: tensor<4x3x2xf32>, %b: tensor<2x3x5xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x4x3xf32>
  %a = linalg.transpose ins(%s : tensor<4x3x2xf32>) outs(%e : tensor<2x4x3xf32>) permutation = [2, 0, 1]
  %e2 = tensor.empty() : tensor<2x4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%z : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %y : tensor<2x4x5xf32>
}

// CHECK-LABEL: func.func @batch_innermost_result
// CHECK:         %[[Y:.*]] = linalg.batch_matmul
// CHECK:         linalg.transpose ins(%[[Y]]
func.func @batch_innermost_result(%a: tensor<2x4x3xf32>, %b: tensor<2x3x5xf32>) -> tensor<4x5x2xf32> {
  %zero = arith.constant 0.0 : f32
  %e2 = tensor.empty() : tensor<2x4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %y = linalg.batch_matmul ins(%a, %b : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%z : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %e = tensor.empty() : tensor<4x5x2xf32>
  %t = linalg.transpose ins(%y : tensor<2x4x5xf32>) outs(%e : tensor<4x5x2xf32>) permutation = [1, 2, 0]
  return %t : tensor<4x5x2xf32>
}

// -----

// Tests that a batched product reads a copy that swaps its matrix dimensions
// (Q K^T of attention, K stored as (batch, seq, dim)) from its source: the
// batch stays the outermost dimension of every operand.

// CHECK-DAG: #[[BIK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[BJK:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d2, d3)>
// CHECK-DAG: #[[BIJ:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @swapped_matrix_dimensions
// CHECK-NOT:     linalg.transpose
// CHECK:         linalg.generic {indexing_maps = [#[[BIK]], #[[BJK]], #[[BIJ]]], {{.*}} ins(%arg0, %arg1 : tensor<2x4x3xf32>, tensor<2x5x3xf32>)
func.func @swapped_matrix_dimensions(%q: tensor<2x4x3xf32>, %k: tensor<2x5x3xf32>) -> tensor<2x4x5xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x3x5xf32>
  %kt = linalg.transpose ins(%k : tensor<2x5x3xf32>) outs(%e : tensor<2x3x5xf32>) permutation = [0, 2, 1]
  %e2 = tensor.empty() : tensor<2x4x5xf32>
  %z = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  %y = linalg.batch_matmul ins(%q, %kt : tensor<2x4x3xf32>, tensor<2x3x5xf32>) outs(%z : tensor<2x4x5xf32>) -> tensor<2x4x5xf32>
  return %y : tensor<2x4x5xf32>
}
