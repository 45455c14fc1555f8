// RUN: tofu-opt %s --split-input-file --tofu-fuse-elementwise | FileCheck %s
// RUN: tofu-opt %s --split-input-file --tofu-fuse-elementwise="keep-results=false" \
// RUN:   | FileCheck %s --check-prefix=OFF

// Adam's update of a weight: the new moments are read by the weight's
// update and returned. With keep-results (the default) the three maps are
// one generic that yields all three results; without it they stay three.

#map = affine_map<(d0, d1) -> (d0, d1)>
#scalar = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @adam
// CHECK: linalg.generic
// CHECK-NOT: linalg.generic
// CHECK: math.sqrt
// CHECK: %[[W:.*]] = arith.subf
// CHECK: linalg.yield {{.*}}, {{.*}}, %[[W]] : f32, f32, f32
// CHECK: return %[[R:.*]]#2, %[[R]]#1, %[[R]]#0
// OFF-LABEL: func.func @adam
// OFF-COUNT-3: linalg.generic
// OFF-NOT: linalg.generic
// OFF: return
func.func @adam(%w: tensor<16x8xf32>, %g: tensor<16x8xf32>, %m: tensor<16x8xf32>,
                %v: tensor<16x8xf32>, %c1: tensor<f32>, %c2: tensor<f32>)
    -> (tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>) {
  %b1 = arith.constant 0.9 : f32
  %b1c = arith.constant 0.1 : f32
  %b2 = arith.constant 0.999 : f32
  %b2c = arith.constant 0.001 : f32
  %eps = arith.constant 1.0e-8 : f32
  %lr = arith.constant 1.0e-3 : f32
  %e0 = tensor.empty() : tensor<16x8xf32>
  %mn = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%m, %g : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e0 : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.mulf %a, %b1 : f32
    %1 = arith.mulf %b, %b1c : f32
    %2 = arith.addf %0, %1 : f32
    linalg.yield %2 : f32
  } -> tensor<16x8xf32>
  %e1 = tensor.empty() : tensor<16x8xf32>
  %vn = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel", "parallel"]}
      ins(%v, %g : tensor<16x8xf32>, tensor<16x8xf32>) outs(%e1 : tensor<16x8xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %0 = arith.mulf %b, %b : f32
    %1 = arith.mulf %a, %b2 : f32
    %2 = arith.mulf %0, %b2c : f32
    %3 = arith.addf %1, %2 : f32
    linalg.yield %3 : f32
  } -> tensor<16x8xf32>
  %e2 = tensor.empty() : tensor<16x8xf32>
  %wn = linalg.generic {indexing_maps = [#map, #map, #map, #scalar, #scalar, #map], iterator_types = ["parallel", "parallel"]}
      ins(%w, %mn, %vn, %c1, %c2 : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>, tensor<f32>, tensor<f32>)
      outs(%e2 : tensor<16x8xf32>) {
  ^bb0(%a: f32, %mm: f32, %vv: f32, %s1: f32, %s2: f32, %o: f32):
    %0 = arith.divf %mm, %s1 : f32
    %1 = arith.divf %vv, %s2 : f32
    %2 = math.sqrt %1 : f32
    %3 = arith.addf %2, %eps : f32
    %4 = arith.divf %0, %3 : f32
    %5 = arith.mulf %4, %lr : f32
    %6 = arith.subf %a, %5 : f32
    linalg.yield %6 : f32
  } -> tensor<16x8xf32>
  return %wn, %mn, %vn : tensor<16x8xf32>, tensor<16x8xf32>, tensor<16x8xf32>
}

// -----

// A producer with a use before the consumer stays: the fused op, which
// stands where the consumer stood, would not dominate that use.

#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @use_before_consumer
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: call @sink(%[[P]])
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.*}} :
func.func private @sink(tensor<64xf32>)
func.func @use_before_consumer(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = math.exp %x : f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  call @sink(%p) : (tensor<64xf32>) -> ()
  %e1 = tensor.empty() : tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%p, %b : tensor<64xf32>, tensor<64xf32>) outs(%e1 : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.addf %x, %y : f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  return %c : tensor<64xf32>
}

// -----

// A consumer that reads each element of the producer more than once (a
// broadcast over a second loop) would recompute it: both stay.

#in = affine_map<(d0, d1) -> (d0)>
#out = affine_map<(d0, d1) -> (d0, d1)>
#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @broadcast_consumer
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: linalg.generic {{.*}} ins(%[[P]] :
// CHECK: return %[[P]]
func.func @broadcast_consumer(%a: tensor<64xf32>) -> (tensor<64xf32>, tensor<64x4xf32>) {
  %e = tensor.empty() : tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = math.exp %x : f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  %e1 = tensor.empty() : tensor<64x4xf32>
  %c = linalg.generic {indexing_maps = [#in, #out], iterator_types = ["parallel", "parallel"]}
      ins(%p : tensor<64xf32>) outs(%e1 : tensor<64x4xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = arith.mulf %x, %x : f32
    linalg.yield %0 : f32
  } -> tensor<64x4xf32>
  return %p, %c : tensor<64xf32>, tensor<64x4xf32>
}

// -----

// A consumer that reads the producer and accumulates into it as its init
// would keep the producer for the init and compute exp again: both stay.

#map = affine_map<(d0) -> (d0)>
// CHECK-LABEL: func.func @producer_as_init
// CHECK: %[[P:.*]] = linalg.generic
// CHECK: math.exp
// CHECK: linalg.generic {{.*}} ins(%[[P]], %{{.*}} : tensor<64xf32>, tensor<64xf32>) outs(%[[P]] : tensor<64xf32>)
// CHECK-NOT: math.exp
// CHECK: return
func.func @producer_as_init(%a: tensor<64xf32>, %b: tensor<64xf32>) -> tensor<64xf32> {
  %e = tensor.empty() : tensor<64xf32>
  %p = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%a : tensor<64xf32>) outs(%e : tensor<64xf32>) {
  ^bb0(%x: f32, %o: f32):
    %0 = math.exp %x : f32
    linalg.yield %0 : f32
  } -> tensor<64xf32>
  %c = linalg.generic {indexing_maps = [#map, #map, #map], iterator_types = ["parallel"]}
      ins(%p, %b : tensor<64xf32>, tensor<64xf32>) outs(%p : tensor<64xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %0 = arith.mulf %x, %y : f32
    %1 = arith.addf %0, %o : f32
    linalg.yield %1 : f32
  } -> tensor<64xf32>
  return %c : tensor<64xf32>
}
