// RUN: tofu-opt %s --tofu-cpu-scalar-powers | FileCheck %s

// Tests that powers by 2, 3, 0.5, -0.5, -1 and -2 become the arithmetic
// PyTorch's CPU kernel uses, in f32 and f64, and that other exponents and
// exponents that are not constants stay math.powf.

// CHECK-LABEL: func.func @powers
// CHECK-SAME: (%[[X:.*]]: f32, %[[Y:.*]]: f64, %[[E:.*]]: f32)
// CHECK: %[[SQ:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[SQ2:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[CUBE:.*]] = arith.mulf %[[SQ2]], %[[X]] : f32
// CHECK: %[[ROOT:.*]] = math.sqrt %[[X]] : f32
// CHECK: %[[RROOT:.*]] = math.rsqrt %[[X]] : f32
// CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[INV:.*]] = arith.divf %[[ONE]], %[[X]] : f32
// CHECK: %[[ONE2:.*]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[SQ3:.*]] = arith.mulf %[[X]], %[[X]] : f32
// CHECK: %[[INVSQ:.*]] = arith.divf %[[ONE2]], %[[SQ3]] : f32
// CHECK: %[[YSQ:.*]] = arith.mulf %[[Y]], %[[Y]] : f64
// CHECK: %[[YCUBE:.*]] = arith.mulf %[[YSQ]], %[[Y]] : f64
// CHECK: %[[OTHER:.*]] = math.powf %[[X]], %{{.*}} : f32
// CHECK: %[[VAR:.*]] = math.powf %[[X]], %[[E]] : f32
// CHECK: return %[[SQ]], %[[CUBE]], %[[ROOT]], %[[RROOT]], %[[INV]], %[[INVSQ]], %[[YCUBE]], %[[OTHER]], %[[VAR]]
func.func @powers(%x: f32, %y: f64, %e: f32) -> (f32, f32, f32, f32, f32, f32, f64, f32, f32) {
  %c2 = arith.constant 2.0 : f32
  %c3 = arith.constant 3.0 : f32
  %half = arith.constant 0.5 : f32
  %mhalf = arith.constant -0.5 : f32
  %m1 = arith.constant -1.0 : f32
  %m2 = arith.constant -2.0 : f32
  %d3 = arith.constant 3.0 : f64
  %c4 = arith.constant 4.0 : f32
  %0 = math.powf %x, %c2 : f32
  %1 = math.powf %x, %c3 : f32
  %2 = math.powf %x, %half : f32
  %3 = math.powf %x, %mhalf : f32
  %4 = math.powf %x, %m1 : f32
  %5 = math.powf %x, %m2 : f32
  %6 = math.powf %y, %d3 : f64
  %7 = math.powf %x, %c4 : f32
  %8 = math.powf %x, %e : f32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f32, f32, f32, f32, f32, f64, f32, f32
}

// Tests that f16 and bf16 powers stay math.powf (pow computes them in f32;
// x * x would overflow in f16 from 256 on), and so do vectors.

// CHECK-LABEL: func.func @narrow
// CHECK-COUNT-3: math.powf
// CHECK-NOT: arith.mulf
func.func @narrow(%h: f16, %b: bf16, %v: vector<4xf32>) -> (f16, bf16, vector<4xf32>) {
  %h2 = arith.constant -2.0 : f16
  %b2 = arith.constant 2.0 : bf16
  %v2 = arith.constant dense<2.0> : vector<4xf32>
  %0 = math.powf %h, %h2 : f16
  %1 = math.powf %b, %b2 : bf16
  %2 = math.powf %v, %v2 : vector<4xf32>
  return %0, %1, %2 : f16, bf16, vector<4xf32>
}
