// RUN: tofu-opt %s --tofu-optimizer -split-input-file -verify-diagnostics

// Tests that a 'tofu.grad_of_arg' naming an argument that does not exist is an
// error.

// expected-error@+1 {{tofu-optimizer: result 1 has an invalid 'tofu.grad_of_arg': argument 7 is out of range (the function has 1 arguments)}}
func.func @out_of_range(%w: tensor<4xf32>) -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 7 : i64}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Tests that a negative argument number is an error.

// expected-error@+1 {{tofu-optimizer: result 1 has an invalid 'tofu.grad_of_arg': argument -1 is out of range (the function has 1 arguments)}}
func.func @negative(%w: tensor<4xf32>) -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = -1 : i64}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Tests that a gradient of a scalar (non-tensor) argument is an error.

// expected-error@+1 {{tofu-optimizer: result 1 has an invalid 'tofu.grad_of_arg': argument 0 has type 'f32', not a statically shaped tensor of floats}}
func.func @scalar_argument(%w: f32) -> (tensor<f32> {tofu.loss}, f32 {tofu.grad_of_arg = 0 : i64}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, f32
}

// -----

// Tests that a gradient whose type differs from its argument's is an error.

// expected-error@+1 {{tofu-optimizer: result 1 has an invalid 'tofu.grad_of_arg': the gradient has type 'tensor<2xf32>' but argument 0 has type 'tensor<4xf32>'}}
func.func @type_mismatch(%w: tensor<4xf32>, %g: tensor<2xf32>) -> (tensor<f32> {tofu.loss}, tensor<2xf32> {tofu.grad_of_arg = 0 : i64}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %g : tensor<f32>, tensor<2xf32>
}

// -----

// Tests that two gradients of the same argument are an error.

// expected-error@+1 {{tofu-optimizer: result 2 has an invalid 'tofu.grad_of_arg': argument 0 already has a gradient}}
func.func @duplicate(%w: tensor<4xf32>) -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 0 : i64}, tensor<4xf32> {tofu.grad_of_arg = 0 : i64}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w, %w : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Tests that a 'tofu.grad_of_arg' that is not an integer is an error.

// expected-error@+1 {{tofu-optimizer: result 1 has an invalid 'tofu.grad_of_arg': expected an integer, found "w"}}
func.func @not_integer(%w: tensor<4xf32>) -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = "w"}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Tests that an integer too wide for 64 bits is an error.

// expected-error@+1 {{tofu-optimizer: result 1 has an invalid 'tofu.grad_of_arg': expected an integer, found 36893488147419103232 : i128}}
func.func @too_wide(%w: tensor<4xf32>) -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 36893488147419103232 : i128}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  return %l, %w : tensor<f32>, tensor<4xf32>
}

// -----

// Tests that a training step with more than one block is an error.

// expected-error@+1 {{tofu-optimizer: functions with more than one block (control flow) are not supported}}
func.func @blocks(%w: tensor<4xf32>) -> (tensor<f32> {tofu.loss}, tensor<4xf32> {tofu.grad_of_arg = 0 : i64}) {
  %l = arith.constant dense<0.0> : tensor<f32>
  cf.br ^bb1
^bb1:
  return %l, %w : tensor<f32>, tensor<4xf32>
}
