// RUN: tofu-opt %s -split-input-file --tdl-attach --tofu-search="devices=2 report=- plan-out=none svg=none" -o /dev/null 2>&1 | FileCheck %s

// Tests that integer and complex tensors are partitioned, with their bytes
// counted from their element types: the same element-wise add on i8, i32 and
// complex<f32> (1, 4 and 8 bytes per element).

// CHECK-LABEL: tofu plan
// CHECK: activations 32 B,
func.func @i8(%a: tensor<4x4xi8>, %b: tensor<4x4xi8>) -> tensor<4x4xi8> {
  %e = tensor.empty() : tensor<4x4xi8>
  %c = linalg.add ins(%a, %b : tensor<4x4xi8>, tensor<4x4xi8>) outs(%e : tensor<4x4xi8>) -> tensor<4x4xi8>
  return %c : tensor<4x4xi8>
}

// -----

// CHECK-LABEL: tofu plan
// CHECK: activations 128 B,
func.func @i32(%a: tensor<4x4xi32>, %b: tensor<4x4xi32>) -> tensor<4x4xi32> {
  %e = tensor.empty() : tensor<4x4xi32>
  %c = linalg.add ins(%a, %b : tensor<4x4xi32>, tensor<4x4xi32>) outs(%e : tensor<4x4xi32>) -> tensor<4x4xi32>
  return %c : tensor<4x4xi32>
}

// -----

// CHECK-LABEL: tofu plan
// CHECK: activations 256 B,
func.func @complex(%a: tensor<4x4xcomplex<f32>>, %b: tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>> {
  %e = tensor.empty() : tensor<4x4xcomplex<f32>>
  %c = linalg.add ins(%a, %b : tensor<4x4xcomplex<f32>>, tensor<4x4xcomplex<f32>>) outs(%e : tensor<4x4xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
  return %c : tensor<4x4xcomplex<f32>>
}
