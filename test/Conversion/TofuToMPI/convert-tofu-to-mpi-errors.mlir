// RUN: tofu-opt %s --convert-tofu-to-mpi -split-input-file -verify-diagnostics

// Tests that grid axes out of increasing order are rejected: the runtime
// orders a group by its ranks' row-major index over increasing axes.

shard.grid @g(shape = 2x2)
func.func @unordered(%x: tensor<2x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{convert-tofu-to-mpi: grid axes must increase}}
  %0 = shard.all_gather %x on @g grid_axes = [1, 0] gather_axis = 0
      : tensor<2x6xf32> -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

// Tests that element types the runtime has no entry point for are rejected.

shard.grid @g(shape = 2)
func.func @bf16(%x: tensor<2x6xbf16>) -> tensor<4x6xbf16> {
  // expected-error @+1 {{convert-tofu-to-mpi: element type 'bf16' is not supported (f32, f64, i32 or i64)}}
  %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0
      : tensor<2x6xbf16> -> tensor<4x6xbf16>
  return %0 : tensor<4x6xbf16>
}

// -----

// Tests that an all-to-all that splits and concatenates one dimension is
// rejected.

shard.grid @g(shape = 2)
func.func @same_dim(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{convert-tofu-to-mpi: an all_to_all that splits and concatenates the same dimension is not supported}}
  %0 = shard.all_to_all %x on @g grid_axes = [0] split_axis = 0
      concat_axis = 0 : tensor<2x6xf32> -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

