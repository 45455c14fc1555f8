// RUN: tofu-opt %s --convert-tofu-to-mpi=runtime=tpu -verify-diagnostics

// Tests that a runtime other than cpu or gpu is rejected, before anything
// is rewritten.

// expected-error @+1 {{convert-tofu-to-mpi: runtime must be cpu or gpu, not 'tpu'}}
module {
  shard.grid @g(shape = 2)
  func.func @gather(%x: tensor<2x6xf32>) -> tensor<4x6xf32> {
    %0 = shard.all_gather %x on @g grid_axes = [0] gather_axis = 0
        : tensor<2x6xf32> -> tensor<4x6xf32>
    return %0 : tensor<4x6xf32>
  }
}
