// RUN: tofu-opt %s --tofu-lift-constants -split-input-file -allow-unregistered-dialect | FileCheck %s

// Tests that the parameters an export bakes in as constants (a dense_resource
// weight and a non-splat dense bias) become trailing arguments named after
// their resource key (or const<N>), while a splat fill value and an integer
// table stay constants.

// CHECK-LABEL: func.func @forward(
// CHECK-SAME:    %[[X:[^:]*]]: tensor<1x3xf32>,
// CHECK-SAME:    %[[W:[^:]*]]: tensor<3x2xf32> {tofu.name = "fc_weight"},
// CHECK-SAME:    %[[B:[^:]*]]: tensor<2xf32> {tofu.name = "const1"}) -> tensor<1x2xf32>
// CHECK-NOT:     dense_resource
// CHECK:         arith.constant dense<0.000000e+00> : tensor<1x2xf32>
// CHECK:         arith.constant dense<[0, 1]> : tensor<2xi64>
// CHECK:         linalg.matmul ins(%[[X]], %[[W]] :
// CHECK:         linalg.generic {{.*}} ins(%{{.*}}, %[[B]] :
func.func @forward(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense_resource<fc_weight> : tensor<3x2xf32>
  %b = arith.constant dense<[0.5, -0.5]> : tensor<2xf32>
  %z = arith.constant dense<0.0> : tensor<1x2xf32>
  %ids = arith.constant dense<[0, 1]> : tensor<2xi64>
  %y = linalg.matmul ins(%x, %w : tensor<1x3xf32>, tensor<3x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32>
  %e = tensor.empty() : tensor<1x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<1x2xf32>, tensor<2xf32>) outs(%e : tensor<1x2xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<1x2xf32>
  "test.use"(%ids) : (tensor<2xi64>) -> ()
  return %r : tensor<1x2xf32>
}

// -----

// Tests that a splat that a linalg op reads as an input is a parameter (an
// export that leaves out the weights' values), while a splat used only as an
// init and one used by an element-wise op stay constants.

// CHECK-LABEL: func.func @splat_weight(
// CHECK-SAME:    %{{.*}}: tensor<1x3xf32>,
// CHECK-SAME:    %[[W:[^:]*]]: tensor<3x2xf32> {tofu.name = "const0"}) -> tensor<1x2xf32>
// CHECK:         %[[Z:.*]] = arith.constant dense<0.000000e+00> : tensor<1x2xf32>
// CHECK:         linalg.matmul ins(%{{.*}}, %[[W]] : {{.*}}) outs(%[[Z]] :
// CHECK:         arith.maximumf %{{.*}}, %[[Z]] : tensor<1x2xf32>
func.func @splat_weight(%x: tensor<1x3xf32>) -> tensor<1x2xf32> {
  %w = arith.constant dense<1.0> : tensor<3x2xf32>
  %z = arith.constant dense<0.0> : tensor<1x2xf32>
  %y = linalg.matmul ins(%x, %w : tensor<1x3xf32>, tensor<3x2xf32>) outs(%z : tensor<1x2xf32>) -> tensor<1x2xf32>
  %r = arith.maximumf %y, %z : tensor<1x2xf32>
  return %r : tensor<1x2xf32>
}

// -----

// Tests that a splat gathered inside a linalg op's body (an embedding table
// whose values the export left out) is a parameter too.

#ids = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @splat_table(
// CHECK-SAME:    %{{.*}}: tensor<4xi64>,
// CHECK-SAME:    %[[T:[^:]*]]: tensor<10x3xf32> {tofu.name = "const0"}) -> tensor<4x3xf32>
// CHECK:         tensor.extract %[[T]][
func.func @splat_table(%ids: tensor<4xi64>) -> tensor<4x3xf32> {
  %table = arith.constant dense<1.0> : tensor<10x3xf32>
  %e = tensor.empty() : tensor<4x3xf32>
  %r = linalg.generic {indexing_maps = [#ids, #out], iterator_types = ["parallel", "parallel"]}
      ins(%ids : tensor<4xi64>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%id: i64, %o: f32):
    %i = arith.index_cast %id : i64 to index
    %j = linalg.index 1 : index
    %v = tensor.extract %table[%i, %j] : tensor<10x3xf32>
    linalg.yield %v : f32
  } -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}

// -----

// Tests that private functions keep their constants.

// CHECK-LABEL: func.func private @helper(%{{.*}}: tensor<2xf32>) -> tensor<2xf32>
// CHECK:         arith.constant dense<[1.000000e+00, 2.000000e+00]> : tensor<2xf32>
func.func private @helper(%x: tensor<2xf32>) -> tensor<2xf32> {
  %c = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %r = arith.addf %x, %c : tensor<2xf32>
  return %r : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      fc_weight: "0x040000000000803F0000004000004040000080400000A0400000C040"
    }
  }
#-}
