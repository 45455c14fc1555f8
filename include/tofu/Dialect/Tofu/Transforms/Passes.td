//===- Passes.td - Partitioned-program passes ----------------*- tablegen -*-===//
//
// Passes that turn a training step with a plan into an SPMD program and
// wrap it in a driver that trains it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TOFU_TRANSFORMS_PASSES_TD
#define TOFU_DIALECT_TOFU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TofuPartition : Pass<"tofu-partition", "mlir::ModuleOp"> {
  let summary = "Generate the SPMD program of a plan (Tofu §6)";
  let description = [{
    Rewrites every function that carries a plan (the attributes of
    `tofu-search`) into an SPMD function on a `shard.grid @tofu_grid` with
    one axis per recursion step. Arguments and results take their local
    shapes and a `tofu.layout`.

    Every `linalg` operation runs on its local iteration box, the recursion
    of its per-step strategies. Its inputs are fetched just before it (the
    region each rank reads is the image of its box under the operand's
    indexing map, so halos and strided reads need no special case), with
    indexing maps rebased onto the local regions and `linalg.index`
    offset by the rank's box. Outputs whose reduction loop was cut are
    partial; they are reduced into the tensor's layout with
    `shard.reduce_scatter` when the layout cuts the axis and
    `shard.all_reduce` when it replicates. A conversion that is exactly
    an upstream collective is `shard.all_gather` (one per dimension when
    several dimensions lose their cuts), `shard.all_to_all` or
    `shard.all_slice`; every other one is a `tofu.fetch`, or a local
    `tensor.extract_slice` when no rank needs anything it does not hold.
    The original operation order is kept.

    The data-movement operations of the tensor dialect (pad, slices,
    reshapes, concat) run on their output boxes too. Other operations run
    replicated on whole inputs, with a remark.

    Layouts the partitioner cannot build (a cut that does not divide, a
    strategy that is not a loop) are errors. `verify-plan` (implied by
    `report`) also re-evaluates the whole plan under the cost model first,
    which rejects plans outside the search space but costs about as much
    as the rest of the pass. The unpartitioned function is kept as `@<name>_reference`
    for differential testing.

    Before (plan attributes abbreviated):
    ```mlir
    func.func @f_train(%x: tensor<8x4xf32> {tofu.tiling = ["cut(0)"]}, ...)
    ```
    After:
    ```mlir
    shard.grid @tofu_grid(shape = 2)
    func.func @f_train(%x: tensor<4x4xf32> {tofu.layout = #tofu.layout<[0]>}, ...)
    ```
  }];
  let options = [
    Option<"keepReference", "keep-reference", "bool", /*default=*/"true",
           "Keep the unpartitioned function as @<name>_reference">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "Write the plan's bytes per step next to the generated "
           "program's, itemised per tensor where they differ, to this file "
           "('-' for stderr)">,
    Option<"verifyPlan", "verify-plan", "bool", /*default=*/"false",
           "Re-evaluate the plan under the cost model and reject plans "
           "outside the search space (always done with 'report')">,
  ];
  let dependentDialects = [
    "::tofu::TofuDialect", "::mlir::shard::ShardDialect",
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def TofuCombineCollectives : Pass<"tofu-combine-collectives"> {
  let summary = "Make one collective of several small independent ones";
  let description = [{
    Every collective of a partitioned step is a rendezvous of its group,
    which costs a few microseconds whatever its size; a step of small tiles
    (an LSTM's gate gradients, gathered one after the other) makes hundreds.
    This pass stacks the inputs of `shard.all_gather`, `all_reduce`,
    `reduce_scatter` and `all_to_all` ops of the same kind, grid, axes,
    reduction and tile type along a new leading dimension and makes one
    collective of the stack, with its axes shifted by one; slices of its
    result replace the old results. The same elements move in fewer calls,
    so the bytes a runtime counts do not change.

    Collectives are taken in program order within a block: one joins a
    group when its input is defined before the first use of any result of
    the group (and is not one of them); the combined collective is placed
    before that first use. Tiles of more than `max-bytes` bytes are left
    alone (their transfer, not the rendezvous, dominates).
    `tofu-run` runs this pass on partitioned steps before
    `convert-tofu-to-mpi`.
  }];
  let options = [
    Option<"maxBytes", "max-bytes", "uint64_t", /*default=*/"65536",
           "Combine only collectives whose input has at most this many "
           "bytes">,
  ];
  let dependentDialects = ["::mlir::tensor::TensorDialect"];
}

def TofuTrainDriver : Pass<"tofu-train-driver", "mlir::ModuleOp"> {
  let summary = "Add a main that trains a (partitioned) step for some steps";
  let description = [{
    Adds `@main`, which initialises the runtime, fills every argument of the
    training step deterministically from a counter-based hash of each
    element's global index (every rank generates only its own tile), runs
    `steps` steps feeding updated weights and optimizer state back, prints
    the loss of every step on rank 0, and finalizes the runtime.

    With `reference`, it also runs `@<name>_reference` (the unpartitioned
    step kept by `tofu-partition`) on whole tensors, prints its losses, and
    compares every final weight and optimizer state with the reference's:
    the largest relative norm ||a - b|| / ||b|| of a tensor, and the largest
    element-wise difference relative to each tensor's magnitude (over the
    losses too):
    ```
    relative norm difference: 3.1e-08
    max relative difference: 1.2e-07
    ```

    The steps run in an `scf.for` loop (`unroll` repeats the step call
    instead, as the GPU lowering expects). Files in the safetensors format
    (docs/training.md, "Files") replace the made-up values: `init` holds
    initial weights (and optionally optimizer state), `resume` a checkpoint
    to continue from (weights, optimizer state and the step count), `data`
    one tensor per data argument with a leading sample dimension, of which
    step s takes the samples [s b, (s + 1) b) modulo their number (b: the
    argument's batch). `save` writes the weights and optimizer state every
    `save-every` steps and after the last, atomically. Tensors are named by
    their argument's `tofu.name`, else `arg<N>`; each rank reads and writes
    only its own tiles.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"\"",
           "The training step (default: the function with tofu.loss)">,
    Option<"steps", "steps", "unsigned", /*default=*/"3", "Training steps">,
    Option<"seed", "seed", "uint64_t", /*default=*/"1",
           "Seed of the initial values">,
    Option<"reference", "reference", "bool", /*default=*/"false",
           "Also run the unpartitioned step and compare">,
    Option<"intBound", "int-bound", "uint64_t", /*default=*/"2",
           "Integer inputs (i32/i64, such as token ids) take values in "
           "[0, int-bound)">,
    Option<"unroll", "unroll", "bool", /*default=*/"false",
           "Repeat the step call `steps` times instead of a loop (no "
           "resume)">,
    Option<"initFile", "init", "std::string", /*default=*/"\"\"",
           "Initial weights (and optimizer state): a safetensors file">,
    Option<"dataFile", "data", "std::string", /*default=*/"\"\"",
           "Training data: a safetensors file with one tensor per data "
           "argument">,
    Option<"resumeFile", "resume", "std::string", /*default=*/"\"\"",
           "Continue from this checkpoint (weights, state, step count)">,
    Option<"saveFile", "save", "std::string", /*default=*/"\"\"",
           "Write a checkpoint here after the last step">,
    Option<"saveEvery", "save-every", "unsigned", /*default=*/"0",
           "Also write the checkpoint every N steps">,
    Option<"learningRate", "lr", "double", /*default=*/"0",
           "The learning rate of a step built with tofu-optimizer{lr-arg=1} "
           "(default: the one it was built with)">,
    Option<"logEvery", "log-every", "unsigned", /*default=*/"1",
           "Print the loss and the speed every N steps (and the last)">,
    Option<"logFile", "log", "std::string", /*default=*/"\"\"",
           "Also write one JSON line per step to this file">,
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect", "::mlir::arith::ArithDialect",
    "::mlir::scf::SCFDialect", "::mlir::shard::ShardDialect",
    "::mlir::memref::MemRefDialect",
    "::mlir::bufferization::BufferizationDialect"
  ];
}

#endif // TOFU_DIALECT_TOFU_TRANSFORMS_PASSES_TD
