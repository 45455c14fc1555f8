// RUN: tofu-opt %s --tofu-approximate-math | %run_cpu | FileCheck %s
// The checker itself: the upstream lowering of expm1 and log1p (exp(x) - 1
// and log(1 + x) in f32) loses the digits near 0 and fails it.
// RUN: cat %s | %run_cpu | FileCheck %s --check-prefix=UPSTREAM
//
// f32 transcendentals through tofu-approximate-math against the f64 libm
// functions (which the pass leaves alone), on 100001 points of each range:
// the largest relative error, with the reference below 1e-6 in magnitude
// counted against 1e-6. Each line: the function, the error in units of
// 2^-23 (an f32 ulp at 1), and whether it is within the bound of 8.

func.func @tanh_error() -> f64 {
  %c0 = arith.constant 0 : index
  %n = arith.constant 100001 : index
  %c1 = arith.constant 1 : index
  %lo = arith.constant -1.000000e+01 : f64
  %span = arith.constant 2.000000e+01 : f64
  %last = arith.constant 100000.0 : f64
  %floor = arith.constant 1.0e-6 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %t = arith.divf %fi, %last : f64
    %u0 = arith.mulf %t, %span : f64
    %u = arith.addf %u0, %lo : f64
    %xd = arith.addf %u, %zero : f64
    %x = arith.truncf %xd : f64 to f32
    %a = math.tanh %x : f32
    %xr = arith.extf %x : f32 to f64
    %r = math.tanh %xr : f64
    %ad = arith.extf %a : f32 to f64
    %d = arith.subf %ad, %r : f64
    %ed = math.absf %d : f64
    %rm = math.absf %r : f64
    %den = arith.maximumf %rm, %floor : f64
    %e = arith.divf %ed, %den : f64
    %m2 = arith.maximumf %m, %e : f64
    scf.yield %m2 : f64
  }
  return %max : f64
}

func.func @exp_error() -> f64 {
  %c0 = arith.constant 0 : index
  %n = arith.constant 100001 : index
  %c1 = arith.constant 1 : index
  %lo = arith.constant -8.700000e+01 : f64
  %span = arith.constant 1.750000e+02 : f64
  %last = arith.constant 100000.0 : f64
  %floor = arith.constant 1.0e-6 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %t = arith.divf %fi, %last : f64
    %u0 = arith.mulf %t, %span : f64
    %u = arith.addf %u0, %lo : f64
    %xd = arith.addf %u, %zero : f64
    %x = arith.truncf %xd : f64 to f32
    %a = math.exp %x : f32
    %xr = arith.extf %x : f32 to f64
    %r = math.exp %xr : f64
    %ad = arith.extf %a : f32 to f64
    %d = arith.subf %ad, %r : f64
    %ed = math.absf %d : f64
    %rm = math.absf %r : f64
    %den = arith.maximumf %rm, %floor : f64
    %e = arith.divf %ed, %den : f64
    %m2 = arith.maximumf %m, %e : f64
    scf.yield %m2 : f64
  }
  return %max : f64
}

func.func @expm1_error() -> f64 {
  %c0 = arith.constant 0 : index
  %n = arith.constant 100001 : index
  %c1 = arith.constant 1 : index
  %lo = arith.constant -1.000000e+01 : f64
  %span = arith.constant 2.000000e+01 : f64
  %last = arith.constant 100000.0 : f64
  %floor = arith.constant 1.0e-6 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %t = arith.divf %fi, %last : f64
    %u0 = arith.mulf %t, %span : f64
    %u = arith.addf %u0, %lo : f64
    %xd = arith.addf %u, %zero : f64
    %x = arith.truncf %xd : f64 to f32
    %a = math.expm1 %x : f32
    %xr = arith.extf %x : f32 to f64
    %r = math.expm1 %xr : f64
    %ad = arith.extf %a : f32 to f64
    %d = arith.subf %ad, %r : f64
    %ed = math.absf %d : f64
    %rm = math.absf %r : f64
    %den = arith.maximumf %rm, %floor : f64
    %e = arith.divf %ed, %den : f64
    %m2 = arith.maximumf %m, %e : f64
    scf.yield %m2 : f64
  }
  return %max : f64
}

func.func @log_error() -> f64 {
  %c0 = arith.constant 0 : index
  %n = arith.constant 100001 : index
  %c1 = arith.constant 1 : index
  %lo = arith.constant -8.000000e+01 : f64
  %span = arith.constant 1.600000e+02 : f64
  %last = arith.constant 100000.0 : f64
  %floor = arith.constant 1.0e-6 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %t = arith.divf %fi, %last : f64
    %u0 = arith.mulf %t, %span : f64
    %u = arith.addf %u0, %lo : f64
    %xd = math.exp %u : f64
    %x = arith.truncf %xd : f64 to f32
    %a = math.log %x : f32
    %xr = arith.extf %x : f32 to f64
    %r = math.log %xr : f64
    %ad = arith.extf %a : f32 to f64
    %d = arith.subf %ad, %r : f64
    %ed = math.absf %d : f64
    %rm = math.absf %r : f64
    %den = arith.maximumf %rm, %floor : f64
    %e = arith.divf %ed, %den : f64
    %m2 = arith.maximumf %m, %e : f64
    scf.yield %m2 : f64
  }
  return %max : f64
}

func.func @log1p_error() -> f64 {
  %c0 = arith.constant 0 : index
  %n = arith.constant 100001 : index
  %c1 = arith.constant 1 : index
  %lo = arith.constant -9.990000e-01 : f64
  %span = arith.constant 1.009990e+02 : f64
  %last = arith.constant 100000.0 : f64
  %floor = arith.constant 1.0e-6 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %t = arith.divf %fi, %last : f64
    %u0 = arith.mulf %t, %span : f64
    %u = arith.addf %u0, %lo : f64
    %xd = arith.addf %u, %zero : f64
    %x = arith.truncf %xd : f64 to f32
    %a = math.log1p %x : f32
    %xr = arith.extf %x : f32 to f64
    %r = math.log1p %xr : f64
    %ad = arith.extf %a : f32 to f64
    %d = arith.subf %ad, %r : f64
    %ed = math.absf %d : f64
    %rm = math.absf %r : f64
    %den = arith.maximumf %rm, %floor : f64
    %e = arith.divf %ed, %den : f64
    %m2 = arith.maximumf %m, %e : f64
    scf.yield %m2 : f64
  }
  return %max : f64
}

func.func @erf_error() -> f64 {
  %c0 = arith.constant 0 : index
  %n = arith.constant 100001 : index
  %c1 = arith.constant 1 : index
  %lo = arith.constant -5.000000e+00 : f64
  %span = arith.constant 1.000000e+01 : f64
  %last = arith.constant 100000.0 : f64
  %floor = arith.constant 1.0e-6 : f64
  %zero = arith.constant 0.0 : f64
  %max = scf.for %i = %c0 to %n step %c1 iter_args(%m = %zero) -> (f64) {
    %ii = arith.index_cast %i : index to i64
    %fi = arith.sitofp %ii : i64 to f64
    %t = arith.divf %fi, %last : f64
    %u0 = arith.mulf %t, %span : f64
    %u = arith.addf %u0, %lo : f64
    %xd = arith.addf %u, %zero : f64
    %x = arith.truncf %xd : f64 to f32
    %a = math.erf %x : f32
    %xr = arith.extf %x : f32 to f64
    %r = math.erf %xr : f64
    %ad = arith.extf %a : f32 to f64
    %d = arith.subf %ad, %r : f64
    %ed = math.absf %d : f64
    %rm = math.absf %r : f64
    %den = arith.maximumf %rm, %floor : f64
    %e = arith.divf %ed, %den : f64
    %m2 = arith.maximumf %m, %e : f64
    scf.yield %m2 : f64
  }
  return %max : f64
}
func.func @main() {
  %ulp = arith.constant 8388608.0 : f64
  %bound = arith.constant 8.0 : f64
  %tanh_e = func.call @tanh_error() : () -> f64
  %tanh_u = arith.mulf %tanh_e, %ulp : f64
  %tanh_ok = arith.cmpf ole, %tanh_u, %bound : f64
  vector.print str "tanh "
  vector.print %tanh_u : f64 punctuation <no_punctuation>
  vector.print str " "
  vector.print %tanh_ok : i1
  %exp_e = func.call @exp_error() : () -> f64
  %exp_u = arith.mulf %exp_e, %ulp : f64
  %exp_ok = arith.cmpf ole, %exp_u, %bound : f64
  vector.print str "exp "
  vector.print %exp_u : f64 punctuation <no_punctuation>
  vector.print str " "
  vector.print %exp_ok : i1
  %expm1_e = func.call @expm1_error() : () -> f64
  %expm1_u = arith.mulf %expm1_e, %ulp : f64
  %expm1_ok = arith.cmpf ole, %expm1_u, %bound : f64
  vector.print str "expm1 "
  vector.print %expm1_u : f64 punctuation <no_punctuation>
  vector.print str " "
  vector.print %expm1_ok : i1
  %log_e = func.call @log_error() : () -> f64
  %log_u = arith.mulf %log_e, %ulp : f64
  %log_ok = arith.cmpf ole, %log_u, %bound : f64
  vector.print str "log "
  vector.print %log_u : f64 punctuation <no_punctuation>
  vector.print str " "
  vector.print %log_ok : i1
  %log1p_e = func.call @log1p_error() : () -> f64
  %log1p_u = arith.mulf %log1p_e, %ulp : f64
  %log1p_ok = arith.cmpf ole, %log1p_u, %bound : f64
  vector.print str "log1p "
  vector.print %log1p_u : f64 punctuation <no_punctuation>
  vector.print str " "
  vector.print %log1p_ok : i1
  %erf_e = func.call @erf_error() : () -> f64
  %erf_u = arith.mulf %erf_e, %ulp : f64
  %erf_ok = arith.cmpf ole, %erf_u, %bound : f64
  vector.print str "erf "
  vector.print %erf_u : f64 punctuation <no_punctuation>
  vector.print str " "
  vector.print %erf_ok : i1
  return
}

// CHECK: tanh {{[0-9.e+-]+}} 1
// CHECK-NEXT: exp {{[0-9.e+-]+}} 1
// CHECK-NEXT: expm1 {{[0-9.e+-]+}} 1
// CHECK-NEXT: log {{[0-9.e+-]+}} 1
// CHECK-NEXT: log1p {{[0-9.e+-]+}} 1
// CHECK-NEXT: erf {{[0-9.e+-]+}} 1

// UPSTREAM: expm1 {{[0-9.e+-]+}} 0
// UPSTREAM: log1p {{[0-9.e+-]+}} 0
