// RUN: tofu-opt %s --tofu-convert-float-type="from=f32 to=f64" -split-input-file -verify-diagnostics -allow-unregistered-dialect
// RUN: not tofu-opt %s --tofu-convert-float-type="from=f32 to=i64" -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION
// RUN: not tofu-opt %s --tofu-convert-float-type="from=float to=f64" -split-input-file 2>&1 | FileCheck %s --check-prefix=OPTION-FROM

// OPTION: tofu-convert-float-type: 'to' must be a float type such as f32 or f64, not 'i64'
// OPTION-FROM: tofu-convert-float-type: 'from' must be a float type such as f32 or f64, not 'float'

// Tests that a bitcast of an f32 value is an error: its bits mean nothing
// in f64.
func.func @bitcast(%x: f32) -> i32 {
  // expected-error @+1 {{'arith.bitcast' op reinterprets the bits of 'f32' values, which has no meaning after the conversion}}
  %b = arith.bitcast %x : f32 to i32
  return %b : i32
}

// -----

// Tests that a declaration whose signature uses f32 is an error: the
// function behind it would still expect f32.
// expected-error @+1 {{'func.func' op is a declaration whose signature uses 'f32'; its callee would still expect it}}
func.func private @external(tensor<4xf32>) -> tensor<4xf32>

// -----

// Tests that an op of a dialect the pass does not know is an error when it
// uses f32.
func.func @unknown(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'mystery.op' op uses 'f32' but ops of dialect 'mystery' are not supported by tofu-convert-float-type}}
  %r = "mystery.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

// Tests that an op of an unknown dialect that does not use f32 is left
// alone.
func.func @unknown_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %r = "mystery.op"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %r : tensor<4xi32>
}

// -----

// Tests that a constant whose values are not a dense literal (a resource
// blob) is an error that says how to get rid of it.
func.func @resource() -> tensor<2xf32> {
  // expected-error @+1 {{'arith.constant' op holds a constant of 'f32' elements that is not a dense literal (dense_resource<blob> : tensor<2xf32>); lift it to an argument first (tofu-lift-constants)}}
  %c = arith.constant dense_resource<blob> : tensor<2xf32>
  return %c : tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040"
    }
  }
#-}
