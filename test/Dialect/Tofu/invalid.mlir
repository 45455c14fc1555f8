// RUN: tofu-opt %s -split-input-file -verify-diagnostics

shard.grid @g(shape = 2)
// Tests that held regions may not overlap.
func.func @overlap(%x: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{held regions [0:2] and [1:3] overlap}}
  %0 = tofu.fetch %x on @g shape [4] from [0, 1] to [0, 0] : tensor<3xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2)
// Tests that a requested region must lie inside the tensor.
func.func @outside(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{the requested region [3:4] of rank 1 is outside the tensor}}
  %0 = tofu.fetch %x on @g shape [4] from [0, 2] to [0, 3] : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @g(shape = 2)
// Tests that every requested element must be held by some rank.
func.func @uncovered(%x: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{rank 0 requires [0:3] but only 2 of its 4 elements are held}}
  %0 = tofu.fetch %x on @g shape [4] from [0, 2] to [0, 0] : tensor<1xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

shard.grid @g(shape = 2x2)
// Tests that the offsets must have one row per rank of the grid.
func.func @ranks(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{has offsets for 2 ranks but the grid has 4}}
  %0 = tofu.fetch %x on @g shape [4] from [0, 2] to [0, 2] : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// Tests that the grid must be a shard.grid.
func.func @nogrid(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'nowhere' is not a shard.grid}}
  %0 = tofu.fetch %x on @nowhere shape [2] from [0] to [0] : tensor<2xf32> -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

shard.grid @g(shape = 2)
// Tests that a fetch keeps the element type.
func.func @type(%x: tensor<2xf32>) -> tensor<2xf64> {
  // expected-error @+1 {{changes the element type}}
  %0 = tofu.fetch %x on @g shape [4] from [0, 2] to [0, 2] : tensor<2xf32> -> tensor<2xf64>
  return %0 : tensor<2xf64>
}

// -----

// Tests that a grid axis cannot both cut and hold partial values.
// expected-error @+1 {{grid axis 0 both cuts a dimension and holds partial values}}
func.func @layout(%x: tensor<2xf32> {tofu.layout = #tofu.layout<[0], partial = [0]>}) {
  return
}

// -----

// Tests that partial axes must be grid axes.
// expected-error @+1 {{partial axis 3 is not one of the 2 grid axes}}
func.func @layout_axis(%x: tensor<2xf32> {tofu.layout = #tofu.layout<[-1, -1], partial = [3]>}) {
  return
}
