// RUN: tofu-opt %s --tofu-approximate-math | FileCheck %s

// f32 transcendentals become arithmetic; f64 ones and the functions the
// pass does not approximate stay.
// CHECK-LABEL: func.func @f32_ops
// CHECK-NOT: math.tanh
// CHECK-NOT: math.exp
// CHECK-NOT: math.log
// CHECK-NOT: math.erf
// CHECK-NOT: math.fma
// CHECK: arith.mulf {{.*}} fastmath<contract>
// CHECK: arith.addf {{.*}} fastmath<contract>
// CHECK-NOT: math.fma
// CHECK: math.sqrt
// CHECK: return
func.func @f32_ops(%x: f32, %v: vector<8xf32>) -> (f32, f32, f32, f32, f32, f32, vector<8xf32>, f32) {
  %0 = math.tanh %x : f32
  %1 = math.exp %x : f32
  %2 = math.expm1 %x : f32
  %3 = math.log %x : f32
  %4 = math.log1p %x : f32
  %5 = math.erf %x : f32
  %6 = math.tanh %v : vector<8xf32>
  %7 = math.sqrt %x : f32
  return %0, %1, %2, %3, %4, %5, %6, %7 : f32, f32, f32, f32, f32, f32, vector<8xf32>, f32
}

// CHECK-LABEL: func.func @f64_ops
// CHECK: math.tanh
// CHECK: math.exp
// CHECK: math.log
func.func @f64_ops(%x: f64) -> (f64, f64, f64) {
  %0 = math.tanh %x : f64
  %1 = math.exp %x : f64
  %2 = math.log %x : f64
  return %0, %1, %2 : f64, f64, f64
}

// The polynomials' multiply-adds become a multiply and an add that LLVM
// may contract (fused with FMA instructions, never a libm fmaf call); an
// fma of the input stays.
// CHECK-LABEL: func.func @given_fma
// CHECK: math.fma
// CHECK-NOT: math.fma
// CHECK: return
func.func @given_fma(%a: f32, %b: f32, %c: f32) -> (f32, f32) {
  %0 = math.fma %a, %b, %c : f32
  %1 = math.tanh %a : f32
  return %0, %1 : f32, f32
}
