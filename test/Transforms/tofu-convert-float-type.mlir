// RUN: tofu-opt %s --tofu-convert-float-type="from=f32 to=f64" -split-input-file | FileCheck %s
// RUN: tofu-opt %s --tofu-convert-float-type="from=f32 to=f64" -split-input-file \
// RUN:   | tofu-opt --tofu-convert-float-type="from=f64 to=f32" -split-input-file \
// RUN:   | FileCheck %s --check-prefix=BACK

// Tests that signatures, tensor types, a linalg.generic's block arguments,
// scalar and dense constants and tensor ops all become f64, with the
// constants' values kept.

// CHECK-LABEL: func.func @step(
// CHECK-SAME:      %[[W:.*]]: tensor<4xf64> {tofu.weight}, %[[X:.*]]: tensor<2x2xf64>) -> (tensor<4xf64>, tensor<f64>)
// CHECK:         %[[C:.*]] = arith.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<4xf64>
// CHECK:         %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
// CHECK:         %[[E:.*]] = tensor.empty() : tensor<4xf64>
// CHECK:         %[[R:.*]] = linalg.generic {{.*}} ins(%[[W]], %[[C]] : tensor<4xf64>, tensor<4xf64>) outs(%[[E]] : tensor<4xf64>)
// CHECK:         ^bb0(%[[A:.*]]: f64, %[[B:.*]]: f64, %{{.*}}: f64):
// CHECK:           %[[M:.*]] = arith.mulf %[[A]], %[[B]] : f64
// CHECK:           %[[K:.*]] = arith.constant 2.500000e-01 : f64
// CHECK:           arith.addf %[[M]], %[[K]] : f64
// CHECK:         } -> tensor<4xf64>
// CHECK:         %[[F:.*]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.*}} : tensor<f64>) -> tensor<f64>
// CHECK:         %[[S:.*]] = linalg.reduce ins(%[[X]] : tensor<2x2xf64>) outs(%[[F]] : tensor<f64>) dimensions = [0, 1]
// CHECK:         %[[SL:.*]] = tensor.extract_slice %[[R]][0] [2] [1] : tensor<4xf64> to tensor<2xf64>
// CHECK:         %[[IN:.*]] = tensor.insert_slice %[[SL]] into %[[R]][2] [2] [1] : tensor<2xf64> into tensor<4xf64>
// CHECK:         return %[[IN]], %[[S]] : tensor<4xf64>, tensor<f64>

// BACK-LABEL: func.func @step(
// BACK-SAME:      tensor<4xf32> {tofu.weight}, %{{.*}}: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<f32>)
// BACK:         arith.constant dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> : tensor<4xf32>
// BACK-NOT:     f64
#id = affine_map<(d0) -> (d0)>
func.func @step(%w: tensor<4xf32> {tofu.weight}, %x: tensor<2x2xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %c = arith.constant dense<[0.5, 1.0, 1.5, 2.0]> : tensor<4xf32>
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel"]}
      ins(%w, %c : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %k = arith.constant 0.25 : f32
    %s = arith.addf %m, %k : f32
    linalg.yield %s : f32
  } -> tensor<4xf32>
  %e0 = tensor.empty() : tensor<f32>
  %f = linalg.fill ins(%zero : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
  %sum = linalg.reduce ins(%x : tensor<2x2xf32>) outs(%f : tensor<f32>) dimensions = [0, 1]
    (%in: f32, %acc: f32) {
      %t = arith.addf %in, %acc : f32
      linalg.yield %t : f32
    }
  %sl = tensor.extract_slice %r[0] [2] [1] : tensor<4xf32> to tensor<2xf32>
  %ins = tensor.insert_slice %sl into %r[2] [2] [1] : tensor<2xf32> into tensor<4xf32>
  return %ins, %sum : tensor<4xf32>, tensor<f32>
}

// -----

// Tests that named linalg ops, calls between functions, splat constants and
// memrefs are converted, and that other float types and integers are not.

// CHECK-LABEL: func.func @callee(
// CHECK-SAME:      %{{.*}}: tensor<2x3xf64>, %{{.*}}: tensor<3x2xf64>) -> tensor<2x2xf64>
// CHECK:         arith.constant dense<1.000000e+00> : tensor<2x2xf64>
// CHECK:         linalg.matmul ins(%{{.*}}, %{{.*}} : tensor<2x3xf64>, tensor<3x2xf64>) outs(%{{.*}} : tensor<2x2xf64>) -> tensor<2x2xf64>
// CHECK-LABEL: func.func @caller(
// CHECK-SAME:      %{{.*}}: tensor<2x3xf64>, %{{.*}}: tensor<3x2xf64>, %{{.*}}: tensor<4xf16>, %{{.*}}: tensor<4xi32>, %{{.*}}: memref<4xf64>)
// CHECK:         call @callee(%{{.*}}, %{{.*}}) : (tensor<2x3xf64>, tensor<3x2xf64>) -> tensor<2x2xf64>
// CHECK:         memref.load %{{.*}}[%{{.*}}] : memref<4xf64>
// CHECK:         return %{{.*}}, %{{.*}}, %{{.*}} : tensor<2x2xf64>, tensor<4xf16>, f64
func.func @callee(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %init = arith.constant dense<1.0> : tensor<2x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%init : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
func.func @caller(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>, %h: tensor<4xf16>, %i: tensor<4xi32>, %m: memref<4xf32>) -> (tensor<2x2xf32>, tensor<4xf16>, f32) {
  %r = call @callee(%a, %b) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %c0 = arith.constant 0 : index
  %v = memref.load %m[%c0] : memref<4xf32>
  return %r, %h, %v : tensor<2x2xf32>, tensor<4xf16>, f32
}

// -----

// Tests that casts whose types become equal disappear and that a cast whose
// direction flips becomes the other cast.

// CHECK-LABEL: func.func @casts(
// CHECK-SAME:      %[[X:.*]]: f64, %[[Y:.*]]: f64, %[[H:.*]]: f16) -> (f64, f64, f64, f16)
// CHECK-NOT:     arith.extf %[[X]]
// CHECK:         %[[HE:.*]] = arith.extf %[[H]] : f16 to f64
// CHECK:         %[[YT:.*]] = arith.truncf %[[Y]] : f64 to f16
// CHECK:         return %[[X]], %[[Y]], %[[HE]], %[[YT]] : f64, f64, f64, f16
func.func @casts(%x: f32, %y: f64, %h: f16) -> (f64, f32, f32, f16) {
  %a = arith.extf %x : f32 to f64
  %b = arith.truncf %y : f64 to f32
  %c = arith.extf %h : f16 to f32
  %d = arith.truncf %b : f32 to f16
  return %a, %b, %c, %d : f64, f32, f32, f16
}

// -----

// Tests that f32 values that f64 cannot hold exactly in f32 again round
// to nearest on the way back, and that -0, inf and NaN survive.

// CHECK-LABEL: func.func @special(
// CHECK:         arith.constant dense<[-0.000000e+00, 0x7FF0000000000000, 0x7FF8000000000000, 0.10000000149011612]> : tensor<4xf64>
// BACK-LABEL: func.func @special(
// BACK:         arith.constant dense<[-0.000000e+00, 0x7F800000, 0x7FC00000, 1.000000e-01]> : tensor<4xf32>
func.func @special() -> tensor<4xf32> {
  %c = arith.constant dense<[-0.0, 0x7F800000, 0x7FC00000, 0.1]> : tensor<4xf32>
  return %c : tensor<4xf32>
}
