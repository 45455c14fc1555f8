//===- Passes.td - Tofu conversion passes --------------------*- tablegen -*-===//

#ifndef TOFU_CONVERSION_PASSES_TD
#define TOFU_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertTofuToMPI : Pass<"convert-tofu-to-mpi", "mlir::ModuleOp"> {
  let summary = "Lower tofu.fetch and the shard collectives to the MPI runtime";
  let description = [{
    Replaces every communication operation of a partitioned program with a
    call into the CPU runtime (`runtime/cpu`, C ABI with the `tofu_`
    prefix), on tensors, before bufferization:

    - `tofu.fetch` calls `tofu_fetch` with the per-rank offsets;
    - `shard.all_reduce` and `shard.reduce_scatter` call `tofu_all_reduce`
      and `tofu_reduce_scatter` with the grid shape and the axes;
    - `shard.process_linear_index` calls `tofu_rank`.

    Buffers pass as unranked memrefs: the input through
    `bufferization.to_buffer`, the result as a fresh `memref.alloc` that
    becomes a tensor again with `bufferization.to_tensor restrict`. The
    `shard.grid` symbols and every `tofu.*` and `tdl.*` attribute are then
    removed, so that the module runs under `mlir-runner`. A `shard` or
    `tofu` operation that is left is an error, never a silent success.

    ```mlir
    %1 = tofu.fetch %0 on @g shape [4] from [0, 2] to [2, 0]
        : tensor<2xf32> -> tensor<2xf32>
    // becomes
    %b = bufferization.to_buffer %0 : ...
    %m = memref.alloc() : memref<2xf32>
    func.call @tofu_fetch(%bu, %mu, %src, %dst, %c4) : ...
    %1 = bufferization.to_tensor %m restrict writable : ...
    ```
  }];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect"
  ];
}

#endif // TOFU_CONVERSION_PASSES_TD
