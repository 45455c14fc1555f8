// RUN: tofu-opt %s --tdl-attach="library=%S/Inputs/out-of-bounds.tdl" -verify-diagnostics -allow-unregistered-dialect

// Tests that a library description whose access lies entirely outside the
// operand on the operation's shapes is an error.

func.func @shift(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error@+1 {{'my.shift' op TDL description does not fit the operation: access 'x[i - 100, j + 1000]' is entirely outside input 'x': its index in dimension 0 ranges over [-100, -93] but the dimension has size 8}}
  %0 = "my.shift"(%x) : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
