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
    - `shard.all_gather`, `shard.all_to_all`, `shard.all_reduce` and
      `shard.reduce_scatter` call `tofu_all_gather`, `tofu_all_to_all`,
      `tofu_all_reduce` and `tofu_reduce_scatter` with the grid shape and
      the axes (increasing, the runtime's group order);
    - `shard.all_slice` is a `tensor.extract_slice` at the rank's index in
      its group, computed from `tofu_rank`;
    - `shard.process_linear_index` calls `tofu_rank`.

    Buffers pass as unranked memrefs: the input through
    `bufferization.to_buffer`, the result as a fresh `memref.alloc` that
    becomes a tensor again with `bufferization.to_tensor restrict`. Each
    call and its buffers sit in one `scf.execute_region no_inline`, so that
    rewrites before bufferization (`cse`, code motion) cannot separate the
    input's `to_buffer` from the call that reads it. The
    `shard.grid` symbols and every `tofu.*` and `tdl.*` attribute are then
    removed, so that the module runs under `mlir-runner`. A `shard` or
    `tofu` operation that is left is an error, never a silent success.

    With `runtime=gpu` the calls name the GPU collectives of
    `include/tofu/Runtime/TofuCudaRuntime.h` instead (`tofu_gpu_fetch`,
    `tofu_gpu_all_gather`, ...: the same arguments, on device buffers), and
    each is tagged `tofu.library = "collective"` with
    `tofu.device_operands = 2`: for `tofu-gpu-pipeline` it is a library
    call whose first two operands (the input and the result) are device
    buffers and whose others (the grid, the offsets) are host constants,
    queued on the step's stream.

    ```mlir
    %1 = tofu.fetch %0 on @g shape [4] from [0, 2] to [2, 0]
        : tensor<2xf32> -> tensor<2xf32>
    // becomes
    %1 = scf.execute_region -> tensor<2xf32> no_inline {
      %m = memref.alloc() : memref<2xf32>
      %b = bufferization.to_buffer %0 read_only : ...
      func.call @tofu_fetch(%bu, %mu, %src, %dst, %c4) : ...
      %t = bufferization.to_tensor %m restrict writable : ...
      scf.yield %t : tensor<2xf32>
    }
    ```
  }];
  let options = [
    Option<"runtime", "runtime", "std::string", /*default=*/"\"cpu\"",
           "Whose collectives the calls name: cpu (the MPI runtime, "
           "tofu_*) or gpu (the GPU collectives, tofu_gpu_*, on device "
           "buffers)">
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::arith::ArithDialect", "::mlir::tensor::TensorDialect",
    "::mlir::scf::SCFDialect"
  ];
}

def TofuEarlyDealloc : Pass<"tofu-early-dealloc"> {
  let summary = "Free each buffer right after its last use";
  let description = [{
    `buffer-deallocation-pipeline` (ownership-based deallocation) frees the
    buffers allocated in a block at the end of that block, so a
    straight-line training step keeps every intermediate buffer until it
    returns: its peak is the sum of all its buffers. This pass moves each
    `memref.dealloc` of a `memref.alloc` (or of a `func.call` result, which
    the callee owns and hands over) in the same block up to just after
    the last operation of the block that uses the buffer or any view of it
    (subviews, casts, reshapes, strided metadata, and values that a region
    or an unknown operation may derive from it). Run it after
    `buffer-deallocation-pipeline`.

    A `func.call` result is never a view of its operands: the
    ownership-based deallocation makes callees return buffers they own. A
    buffer used outside the block, or whose address escapes into an
    integer or an LLVM value, keeps its deallocation where it is.

    ```mlir
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    %b = memref.alloc() : memref<4xf32>
    ...
    memref.dealloc %a : memref<4xf32>
    // becomes
    %a = memref.alloc() : memref<4xf32>
    linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
    linalg.copy ins(%a : memref<4xf32>) outs(%out : memref<4xf32>)
    memref.dealloc %a : memref<4xf32>
    %b = memref.alloc() : memref<4xf32>
    ```
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def TofuInlineExecuteRegions : Pass<"tofu-inline-execute-regions"> {
  let summary = "Inline single-block scf.execute_region ops, no_inline ones "
                "too";
  let description = [{
    `convert-tofu-to-mpi` puts each communication call and its buffers in
    an `scf.execute_region no_inline`, so that nothing run before
    bufferization can separate the call from the read of its input. Once
    the module is on buffers, the regions have done their work. The GPU
    pipeline inlines them after bufferization, because
    `tofu-gpu-device-memory` places only buffers whose every use it sees
    (a buffer that a region yields is not one). Regions with several
    blocks are left as they are.
  }];
}

def TofuSimplifyDeallocs : Pass<"tofu-simplify-deallocs", "mlir::ModuleOp"> {
  let summary = "buffer-deallocation-simplification on every function but "
                "the training driver";
  let description = [{
    Runs upstream `buffer-deallocation-simplification` on each `func.func`
    except those tagged `tofu.driver` (tofu-train-driver's `@main`). Its
    alias queries over the deallocations of `@main`, which hold a step's
    hundreds of results and are answered by walks over every other buffer,
    took 51 of the 60 s that the GPU pipeline spent on the 4-layer
    BERT-Large slice with its driver, for nothing that matters at run
    time: `bufferization-lower-deallocations` then checks those buffers for
    aliases at run time, once per step, on a few hundred pointers.
  }];
}

def TofuSplitCallDeallocs : Pass<"tofu-split-call-deallocs"> {
  let summary = "Free call results on their own, not through one combined "
                "deallocation at the end of the block";
  let description = [{
    Ownership-based deallocation frees the results of a `func.call` with one
    `bufferization.dealloc` at the end of the caller's block, together with
    the caller's other buffers; since it cannot prove that call results do
    not alias each other, `bufferization-lower-deallocations` turns it into
    a run-time alias check over all of them, and `tofu-early-dealloc`
    cannot move it. In a training loop (tofu-train-driver's `@main`) every
    step's updated weights then stay allocated until the loop ends.

    This pass splits such a `bufferization.dealloc` (one that retains
    nothing) into one deallocation per buffer when every buffer that it may
    free is fresh and distinct from the others: an allocation (`memref.alloc`,
    `bufferization.clone`, ...) or the result of a `func.call` whose callee
    returns fresh buffers (every returned value is a view of a distinct
    buffer that the callee allocates). Each new deallocation frees the
    buffer itself rather than the base buffer extracted from it, is lowered
    to a plain `memref.dealloc`, and is then moved to the buffer's last use
    by `tofu-early-dealloc`.

    Run it between `buffer-deallocation-simplification` and
    `bufferization-lower-deallocations`.
  }];
  let dependentDialects = [
    "::mlir::memref::MemRefDialect",
    "::mlir::bufferization::BufferizationDialect"
  ];
}

//===----------------------------------------------------------------------===//
// TofuToGPU
//===----------------------------------------------------------------------===//

def ConvertTofuToCPU : Pass<"convert-tofu-to-cpu", "mlir::ModuleOp"> {
  let summary = "Replace GEMM-shaped linalg ops on buffers with OpenBLAS "
                "calls";
  let description = [{
    The CPU backend's library calls: every linalg operation on buffers that
    `convert-tofu-to-gpu` would turn into a cuBLAS call, in f32 or f64,
    becomes a call of `tofu_cpu_sgemm` or `tofu_cpu_dgemm` in the CPU
    runtime (`runtime/cpu`), which calls OpenBLAS's `cblas_sgemm` or
    `cblas_dgemm` once per batch. The matcher, the operand strides, the
    batch loops and the zero fill that becomes beta = 0 are the GPU
    backend's (`LibraryCalls.h`); only the entry points differ:

    ```mlir
    // Before: a product of a row-major A and a transposed B.
    linalg.fill ins(%zero : f32) outs(%c : memref<256x1024xf32>)
    linalg.matmul ins(%a, %bt : memref<256x1024xf32>,
                      memref<1024x1024xf32, strided<[1, 1024]>>)
                  outs(%c : memref<256x1024xf32>)
    // After (operand views elided):
    call @tofu_cpu_sgemm(%c1, %c256, %c1024, %c1024, %pa, %c1024, %c1,
        %c0, %pb, %c1, %c1024, %c0, %pc, %c1024, %c1, %c0, %beta0)
        {tofu.flops = 536870912 : i64, tofu.library = "openblas"}
    ```

    Anything else, convolutions included, stays a linalg op that the rest
    of `tofu-cpu-pipeline` lowers to loops. A GEMM still on tensors is an
    error: bufferize first.
  }];
}

def TofuOutlineLoops : Pass<"tofu-outline-loops", "mlir::ModuleOp"> {
  let summary = "Give each loop nest of a long function a function of its own";
  let description = [{
    A training step lowered for the CPU is one function with a loop nest
    per linalg op: an LSTM unrolled over 20 time steps has thousands.
    LLVM's scalar evolution answers its loop queries by walking the
    blocks that dominate each loop, so optimizing such a function takes
    time quadratic in its length: `tofu-run` did not finish compiling the
    zoo's default LSTM step in 10 minutes. This pass moves every top-level
    `scf.for` and `scf.parallel` without results of a function that has
    at least `min-loops` of them into a private function of its own (its
    operands become the function's arguments), marked `noinline`, and
    calls it in its place. Loops with results (the training driver's step
    loop) and the functions tagged `tofu.driver` stay as they are. Runs
    after `convert-linalg-to-loops`, before the lowering of scf.
  }];
  let options = [
    Option<"minLoops", "min-loops", "unsigned", /*default=*/"64",
           "Outline the loop nests of functions with at least this many">
  ];
  let dependentDialects = ["mlir::func::FuncDialect",
                           "mlir::scf::SCFDialect"];
}

def TofuLLVMResultsInMemory
    : Pass<"tofu-llvm-results-in-memory", "mlir::ModuleOp"> {
  let summary = "Return a long struct of results through memory";
  let description = [{
    A training step lowered to the LLVM dialect returns its updated
    weights and optimizer state as one struct of memref descriptors: the
    ResNeXt-50 step returns 485 of them, 3,381 scalars, built by a chain
    of `llvm.insertvalue`s and taken apart by the driver's
    `llvm.extractvalue`s. LLVM's instruction selection handles the whole
    aggregate at each insertion: on that step, the code generation of
    the block that built it took 4.4 to 5.9 s (docs/cpu.md). This pass
    gives each private or internal function that returns a struct of at
    least `min-members` members (none packed) and whose calls only
    extract members (direct calls in C's convention, without attributes
    of their arguments or operand bundles) a pointer argument in front,
    `llvm.noalias`, and makes it return nothing: each `llvm.return`
    stores the members (from the insertions that built them where it
    can) and the chain of insertions goes. Each call writes into an
    `llvm.alloca` of the struct in the entry block of its allocation
    scope and loads the members that it extracted right after the call.
    Public functions keep their signature, and so do functions whose
    passed-through attributes say what memory they touch
    (`memory_effects` are dropped). `tofu-run` runs it, with
    `min-members=2`, after it makes every function but `@main` internal.
  }];
  let options = [
    Option<"minMembers", "min-members", "unsigned", /*default=*/"16",
           "Rewrite functions whose result struct has at least this many "
           "members">
  ];
  let dependentDialects = ["mlir::LLVM::LLVMDialect"];
}

def TofuCPUUnitWindows
    : Pass<"tofu-cpu-unit-windows", "mlir::ModuleOp"> {
  let summary = "1x1 convolutions with unit strides as products batched "
                "over the images";
  let description = [{
    A convolution or gradient (the shared convolution matcher) on tensors of
    static shapes whose window is one element with unit strides becomes a
    `linalg.generic` product of the filter, collapsed to F x C, and the
    images: `nchw,fc->nfhw`, `fc,nfhw->nchw` (the same multiply-accumulate,
    the images' loop a batch that the filter does not hold) and, for the
    filter gradient, `nfhw,nchw->fc` (the images' loop an accumulation: each
    image's product added into the filter's). `convert-tofu-to-cpu` makes
    it one OpenBLAS call per image: in the benchmark's Wide ResNet on an
    Intel Xeon, 68 ms per step where oneDNN's 1x1 kernels took about 97 for
    the forward convolutions and data gradients (docs/cpu.md).
    `tofu-cpu-pipeline` runs it before bufferization; functions tagged
    `tofu.driver` are left alone.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def TofuCPUStridedCopies
    : Pass<"tofu-cpu-strided-copies", "mlir::ModuleOp"> {
  let summary = "Copies between strided views as linalg.generics";
  let description = [{
    `finalize-memref-to-llvm` lowers a `memref.copy` between contiguous
    buffers to a `memcpy`, and every other one to a call of the runner
    utilities' `memrefCopy`, which walks the elements one at a time through
    their descriptors (2% of a GPT-2 step's samples: its q, k and v
    gradients copied into their columns of the fused gradient). This pass
    makes each copy whose source or target is not one contiguous block of
    static shape a `linalg.generic` that yields its input, which
    `tofu-cpu-collapse-loops` and LLVM then treat as any other loop nest.
    The training driver's copies (a function tagged `tofu.driver`, which
    is compiled without optimization) stay as they are. Runs in
    `tofu-cpu-pipeline` after bufferization.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

def TofuCPUCollapseLoops
    : Pass<"tofu-cpu-collapse-loops", "mlir::ModuleOp"> {
  let summary = "One loop over the contiguous trailing dimensions of a "
                "linalg.generic on buffers";
  let description = [{
    `convert-linalg-to-loops` gives a `linalg.generic` one loop per
    dimension, and LLVM vectorizes only the innermost: Adam's update of a
    512 x 512 x 3 x 3 filter runs in vectors of 3, and a batch norm's sum
    over a 32 x 32 image in rows of 32. This pass makes the innermost loops
    one loop when they have the same iterator type and every operand either
    does not see them or has them, in order, as its trailing dimensions,
    which its static layout lays out contiguously: such operands are read
    through a `memref.collapse_shape` view (no copy), the others as they
    were. Index semantics, dynamic shapes and other layouts stay as they
    are. Runs in `tofu-cpu-pipeline` after bufferization, before
    `tofu-cpu-row-reductions`.
  }];
  let dependentDialects = ["mlir::memref::MemRefDialect"];
}

def TofuCPUScalarPowers : Pass<"tofu-cpu-scalar-powers"> {
  let summary = "Powers by constant exponents as the arithmetic PyTorch "
                "uses";
  let description = [{
    torch-mlir writes `x.pow(2)` (LLaMA's RMSNorm) and `torch.pow(x, 3.0)`
    (GPT-2's GELU) as `math.powf` by a constant, which the CPU lowering
    makes one libm `powf` call per element: a loop that does not vectorize
    (11% of a GPT-2 step's samples under `perf`). PyTorch's CPU kernel
    computes these exponents without `pow`, and so does this pass, on f32
    and f64 scalars: 2 is `x * x`, 3 `(x * x) * x`, 0.5 `sqrt(x)`, -0.5
    `rsqrt(x)`, -1 `1 / x`, -2 `1 / (x * x)`. Where these differ from
    libm's `pow` they agree with PyTorch: `sqrt(-0)` is -0 and
    `sqrt(-inf)` NaN where `pow` gives +0 and +inf, and `1 / (x * x)` is 0
    where `x * x` overflows. Other exponents, f16, bf16 and vectors stay
    `math.powf` (`pow` computes the narrow types in f32). Runs in
    `tofu-cpu-pipeline` after `convert-linalg-to-loops`.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect"];
}

def TofuCPURowReductions
    : Pass<"tofu-cpu-row-reductions", "mlir::ModuleOp"> {
  let summary = "Reduce long rows with the partial sum in a register, "
                "reassociable";
  let description = [{
    `convert-linalg-to-loops` reduces a row by loading, adding and storing
    the output element at every step: a chain through memory that LLVM can
    neither keep in a register (it cannot prove that the output does not
    alias an input) nor vectorize (a float sum may not be reordered). This
    pass lowers each `linalg.generic` on buffers whose innermost loops are
    reductions (the row), of static extents whose product is at least
    `min-length`, whose indexing maps are bare loops or 0 (a keepdim
    output's unit dimensions) and whose output is folded in by one
    `arith.addf` (sums, means, sums of squares, softmax denominators, batch
    norm's statistics, the loss) or one float maximum or minimum (softmax's
    row maximum): loops over the other dimensions, parallel or reductions
    (a batch norm's images), which load the output element before each row
    and store it after, and `scf.for`s over the row that carry the partial
    result as their iteration argument, an add marked `reassoc`, so that
    LLVM's loop vectorizer sums the innermost loop in vector lanes. Only
    the rounding of sums changes. Runs in `tofu-cpu-pipeline` after
    `tofu-cpu-collapse-loops`, just before `convert-linalg-to-loops`.
  }];
  let options = [
    Option<"minLength", "min-length", "int64_t", /*default=*/"16",
           "Lower reductions whose row has at least this many elements">
  ];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect"];
}

def TofuApproximateMath : Pass<"tofu-approximate-math"> {
  let summary = "Compute f32 tanh, exp, log and erf by polynomials that "
                "vectorize";
  let description = [{
    On the CPU, `math.tanh`, `math.exp`, `math.expm1`, `math.log`,
    `math.log1p` and `math.erf` on f32 otherwise become calls to libm, one
    element at a time: a loop with such a call does not vectorize, and in a
    Transformer step GELU's tanh alone took 12% of the time. This pass
    rewrites them with MLIR's polynomial approximations (plain arithmetic
    and bit operations, which LLVM's loop vectorizer widens). Their error
    against libm is measured in test/Conversion/TofuToCPU/
    tofu-approximate-math-accuracy.mlir. f64 stays with libm: the f64
    steps are the exact references of the differential tests.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect",
                           "mlir::math::MathDialect",
                           "mlir::vector::VectorDialect"];
}

def TofuCPUReport : Pass<"tofu-cpu-report", "mlir::ModuleOp"> {
  let summary = "Print the FLOPs of a CPU-lowered step that go to library "
                "calls and to generated loops";
  let description = [{
    For a module after `convert-tofu-to-cpu` (library calls marked with
    `tofu.library` and `tofu.flops`), prints per function and in total the
    library calls, their FLOPs, the FLOPs of the linalg ops left to
    generated loops (iteration count times the floating-point arith and
    math ops of the body) and the library share:

    ```
    tofu-cpu-report: @forward_train
      openblas: 9 calls, 4831838208 FLOP
      generated: 21 ops, 9437184 FLOP
      library share: 99.81%
    ```

    The report goes to `output` (`-` for stderr); the IR is unchanged.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "file to write the report to ('-' for stderr)">
  ];
}

def ConvertTofuToGPU : Pass<"convert-tofu-to-gpu", "mlir::ModuleOp"> {
  let summary = "Replace GEMM-shaped linalg ops on buffers with cuBLAS calls "
                "and convolutions with cuDNN calls";
  let description = [{
    Rewrites every single-precision linalg operation on buffers that computes
    a (batched) matrix product into a call of `tofu_gpu_sgemm` in the CUDA
    runtime (`runtime/cuda`), which calls `cublasSgemm` or
    `cublasSgemmStridedBatched`. This covers `linalg.matmul`,
    `linalg.batch_matmul` and every `linalg.generic` whose body is
    `out + in0 * in1` and whose indexing maps are projected permutations
    with exactly one M, one N and one K loop and any number of batch loops:
    the backward products that `tofu-autodiff` emits, transposed operands
    included.

    Each operand is passed as the address of its first element and its
    strides along the logical rows, columns and batches; the runtime picks
    the cuBLAS transposition flags from the strides (row-major operands
    through the identity (AB)^T = B^T A^T). The innermost batch loop
    becomes the batch of the strided-batched call; outer batch loops become
    `scf.for` loops around the call. When the op's output was just filled
    with zero, the fill is dropped and the call overwrites (beta = 0);
    otherwise it accumulates (beta = 1).

    Convolutions become calls of `tofu_gpu_conv2d_forward`,
    `tofu_gpu_conv2d_backward_data` or `tofu_gpu_conv2d_backward_filter`
    (`cudnnConvolutionForward`, `BackwardData`, `BackwardFilter`): every
    single-precision multiply-accumulate op, named or generic, whose
    indexing maps are those of a 1-D or 2-D convolution with dilation 1 and
    any stride on an NCHW image, an FCHW filter and an NFHW output. Which
    of the three tensors the op writes selects the call, so that the data
    and filter gradients of `tofu-autodiff` (generics that write the image
    or the filter) are recognised from their maps. Padding is the
    `tensor.pad` before the convolution (the call itself pads nothing); a
    1-D convolution is a 2-D one of height 1. A windowed multiply-accumulate
    op that is not such a convolution (other layouts, dilations, groups,
    3-D, f64, an output extent that does not follow from the image) stays
    a generated kernel, with a remark that says why.

    Each call carries `tofu.library = "cublas"` or `"cudnn"` and, for
    static shapes, `tofu.flops` (2 * the iteration count of the op) for
    `tofu-gpu-report`.

    ```mlir
    linalg.matmul ins(%a, %b : memref<4x6xf32>, memref<6x8xf32>)
                  outs(%c : memref<4x8xf32>)
    // becomes
    func.call @tofu_gpu_sgemm(%c1, %c4, %c8, %c6, %pa, %c6, %c1, %c0,
        %pb, %c8, %c1, %c0, %pc, %c8, %c1, %c0, %beta)
        {tofu.flops = 384 : i64, tofu.library = "cublas"} : (...) -> ()
    ```

    A GEMM-shaped op or a convolution on tensors is an error: bufferize
    first.
  }];
  let options = [
    Option<"foldStridedDataGradients", "fold-strided-data-gradients", "bool",
           /*default=*/"false",
           "A data gradient with a stride above 1 writes the interior of its "
           "zero-padded image (cuDNN's padding) instead of a packed image "
           "whose interior is copied out (cuDNN's data gradients are "
           "several times slower on such strided windows)">,
  ];
  let dependentDialects = [
    "::mlir::func::FuncDialect", "::mlir::memref::MemRefDialect",
    "::mlir::arith::ArithDialect", "::mlir::scf::SCFDialect"
  ];
}

def TofuFuseElementwise
    : Pass<"tofu-fuse-elementwise", "mlir::ModuleOp"> {
  let summary = "Fuse element-wise linalg chains, keeping every library "
                "call whole";
  let description = [{
    Upstream producer-consumer fusion of `linalg.generic` ops on tensors
    (`populateElementwiseOpsFusionPatterns`), restricted so that the result
    still maps onto libraries and loops well:

    - a producer is fused into its single consumer (no recomputation),
      unless the option `duplicate` is set: then an all-parallel producer
      whose every consumer can take it is fused into all of them and
      disappears (each consumer recomputes its element-wise body, which
      saves a pass over memory where such ops are memory-bound: the GPU);
    - with `keep-results` (default on), an all-parallel producer with
      other uses is fused into an all-parallel consumer over the same loops
      that reads each of its elements once, and the fused op also yields
      the producer's results for the other uses, which must come after the
      consumer (Adam's new moments, which the weight's update reads and
      the step returns: one loop per weight instead of three);
    - a producer that reads its own output (accumulating into a fill, as
      the backward ops of `tofu-autodiff` do) is not fused: upstream fusion
      of such producers changed the losses of the MLP training step. Such
      an accumulation into a zero fill first becomes a plain map
      (`0 + v = v`), which may fuse;
    - nothing is fused into a GEMM-shaped op or a convolution (the shared
      matchers of `lib/Conversion/LibraryCalls`), so that every product
      stays a BLAS call and every convolution a oneDNN or cuDNN call;
    - first of all, a sum `a + p` whose term `p` is a product into a zero
      fill with no other use becomes the product accumulating into `a`
      (a library call with beta = 1): a weight's gradient summed over its
      uses (an LSTM's, over the time steps) no longer zeroes, writes and
      re-reads a weight-sized buffer per use;
    - also first, a sum of tensors that are zeros but for disjoint static
      slices (the gradients `tofu-autodiff` gives each use of a slice: an
      LSTM's four gates, or the time steps of a batched input product)
      becomes those slices inserted into one tensor, with no fill when they
      cover it: no sum, and one buffer instead of one per slice.

    Functions tagged `tofu.driver` are left alone. `tofu-gpu-pipeline`
    runs it first; on the CPU `tofu-run` runs it after `tofu-train-driver`
    and before `convert-tofu-to-mpi` (`tofu-cpu-pipeline` only with its
    option `fuse-elementwise`, for modules without communication calls;
    docs/cpu.md). A fused chain is one loop nest on the CPU and one kernel
    on the GPU.
  }];
  let options = [
    Option<"duplicate", "duplicate", "bool", /*default=*/"false",
           "fuse an element-wise producer into all of its consumers, "
           "recomputing it in each, when every consumer can take it">,
    Option<"keepResults", "keep-results", "bool", /*default=*/"true",
           "fuse an all-parallel producer with other uses into a consumer "
           "over the same loops, the fused op yielding the producer's "
           "results for those uses">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def TofuInsertSlicesInPlace
    : Pass<"tofu-insert-slices-in-place", "mlir::ModuleOp"> {
  let summary = "Put the inserts that assemble a tensor next to the ops "
                "that make its slices";
  let description = [{
    A tensor assembled from disjoint slices is copied together by one-shot
    bufferization: each slice has a buffer of its own, copied into the
    tensor's at the insert, which comes after all of them (a `tensor.concat`
    of an LSTM's time steps for `tofu-stack-product-sums`, the time steps'
    gate gradients that `tofu-fuse-elementwise` inserts into the batched
    input product's gradient). This pass

    - decomposes static `tensor.concat` ops into `tensor.insert_slice`
      chains into a `tensor.empty` (upstream's decomposition);
    - makes `insert_slice(expand_shape(x))`, where the expand only adds unit
      dimensions, a rank-reducing insert of `x`;
    - moves each chain of inserts of disjoint static boxes (static offsets
      and sizes, strides the attribute 1) into a `tensor.empty` (or a fill
      of one), each intermediate result used only by the next insert, all
      in one block: the root before the first op that makes a slice
      (unless a fill's value is made there or later), each insert right
      after the op that makes its slice. Disjoint inserts commute: the
      tensor is the same. A chain starts at its last insert that is such
      a link.

    It applies only these rewrites: no folding or clean-up of the rest of
    the function. `eliminate-empty-tensors` then has each of those ops
    write into its slice of the tensor's buffer, and bufferization copies
    nothing (a value inserted into two tensors is written into one and
    copied into the other).
    `tofu-cpu-pipeline` runs both before `one-shot-bufferize`. Functions
    tagged `tofu.driver` are left alone.
  }];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect"
  ];
}

def TofuGPUSplitReductions
    : Pass<"tofu-gpu-split-reductions", "mlir::ModuleOp"> {
  let summary = "Split long reductions so that kernels do not reduce a row "
                "per thread";
  let description = [{
    A generated kernel maps the parallel loops of a linalg op to threads and
    runs its reduction loops sequentially in each thread. For reductions
    whose rows are long, this pass splits the reduction in two, on tensors:

    1. every reduction loop but the innermost becomes a parallel loop of a
       partial result (one partial per value of that loop), initialised
       with the combiner's neutral element;
    2. when the remaining reduction is at least `min-length` long, it is
       split by a factor `ratio` that divides it (upstream
       `linalg::splitReduction`, inner-parallel): thread j of a row reduces
       elements j, j + ratio, j + 2 ratio, ..., so that neighbouring
       threads read neighbouring elements;
    3. small combining ops reduce the partials.

    Each thread then reduces at most `length / ratio` elements and the
    number of threads grows by `ratio`. Reductions whose combiner is not
    recognised (`linalg::matchReduction`: addf, mulf, maximumf, minimumf
    and the integer ones), GEMM-shaped ops and convolutions are left
    alone, and so is step 2 for an op with an operand indexed by anything
    but its loops (a layer norm's keepdim row statistics, `(d0, 0)`):
    `linalg::splitReduction` indexes such a constant with a loop and makes
    an op that does not verify. With `rows=false`, an f32 reduction along
    the last dimension of its largest input (a row) is left whole for
    `tofu-gpu-warp-reductions`.
  }];
  let options = [
    Option<"minLength", "min-length", "int64_t", /*default=*/"256",
           "split reductions at least this long">,
    Option<"ratio", "ratio", "int64_t", /*default=*/"32",
           "preferred number of partial results per row (a divisor of the "
           "row length is used)">,
    Option<"rows", "rows", "bool", /*default=*/"true",
           "also split a reduction whose loop walks the last dimension of "
           "its largest input (a row); false leaves f32 rows whole for "
           "tofu-gpu-warp-reductions">
  ];
  let dependentDialects = [
    "::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
    "::mlir::arith::ArithDialect"
  ];
}

def TofuGPUDeviceMemory : Pass<"tofu-gpu-device-memory", "mlir::ModuleOp"> {
  let summary = "Put the GPU's buffers in device memory, with host copies "
                "where the host touches them";
  let description = [{
    Moves the buffers of a bufferized program to the GPU. A buffer that a
    linalg op (a generated kernel, 0-d ops included), a copy, a library
    call (its address), a return or a call of a function of the module
    uses, through views, becomes device memory, `gpu.alloc`. Where the host
    reads or writes such a buffer or a function's argument (a load, a
    store, a call of an external function such as the CPU runtime's
    fills), the op works on a host copy instead: the buffer is copied to a
    fresh host buffer before the op, and back after it unless the op only
    loads (`gpu.memcpy`, queued on the stream by tofu-gpu-stream-order).
    Buffers that only the host touches stay in host memory. No buffer is
    put in managed memory.

    `memref.dealloc` of a device buffer becomes a synchronous
    `gpu.dealloc`, which tofu-gpu-stream-order queues on the stream, and
    `memref.copy` a `linalg.copy`, so that copies run as kernels. A
    `memref.get_global` of a constant (in host memory) that the GPU reads is
    copied into a device buffer at each entry of the function. A buffer
    that an op with regions, an op returning an alias of it (other than a
    view), a terminator other than `func.return` or a copy of unranked
    buffers uses is an error, as is a host access to a device buffer of
    dynamic shape.

    ```mlir
    %m = memref.alloc() : memref<4x8xf32>
    linalg.fill ins(%c : f32) outs(%m : memref<4x8xf32>)
    %v = memref.load %m[%i, %j] : memref<4x8xf32>
    // becomes
    %m = gpu.alloc () : memref<4x8xf32>
    linalg.fill ins(%c : f32) outs(%m : memref<4x8xf32>)
    %h = memref.alloc() : memref<4x8xf32>
    gpu.memcpy %h, %m : memref<4x8xf32>, memref<4x8xf32>
    %v = memref.load %h[%i, %j] : memref<4x8xf32>
    memref.dealloc %h : memref<4x8xf32>
    ```
  }];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect", "::mlir::linalg::LinalgDialect",
    "::mlir::memref::MemRefDialect"
  ];
}

def TofuGPUWarpReductions
    : Pass<"tofu-gpu-warp-reductions", "mlir::ModuleOp"> {
  let summary = "Reduce each row of a row reduction with one warp";
  let description = [{
    A `linalg.generic` on buffers that reduces rows (its innermost
    reduction loop walks the contiguous last dimension of its largest
    input, the reduction is at least `min-length` long, its combiner is
    one that `linalg::matchReduction` recognises, and its shapes are
    static f32 ones: a softmax's maximum and sum, a layer norm's
    statistics, a loss; each row its own output element, which no input
    is; not inside another parallel loop) becomes two nested
    `scf.parallel` loops that
    `gpu-map-parallel-loops` maps to one block per row and 32 threads per
    block, one warp:

    1. lane j applies the op's body to elements j, j + 32, j + 64, ... of
       the row (neighbouring lanes read neighbouring elements), starting
       from the combiner's neutral element;
    2. five `gpu.shuffle xor` steps (offsets 16, 8, 4, 2, 1) combine the 32
       partial results, in the same order on every run;
    3. lane 0 combines the result into the output element.

    The reduction loops are taken row-major as one loop of their product,
    the parallel loops likewise as the rows. Other ops are left to
    `tofu-gpu-parallel-loops`; ops inside `gpu.module`s are left alone.
  }];
  let options = [
    Option<"minLength", "min-length", "int64_t", /*default=*/"64",
           "reduce rows at least this long with a warp">
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::affine::AffineDialect",
    "::mlir::gpu::GPUDialect"
  ];
}

def TofuGPUParallelLoops : Pass<"tofu-gpu-parallel-loops", "mlir::ModuleOp"> {
  let summary = "Lower the remaining linalg ops to tiled 1-D parallel loops";
  let description = [{
    Prepares every linalg op on buffers that is left after the library calls
    to become one GPU kernel with `gpu-map-parallel-loops` and
    `convert-parallel-loops-to-gpu`:

    1. named ops are generalized and the loops interchanged so that all
       parallel loops come before the reduction loops (a reduction loop
       outside a parallel one would otherwise become a host loop around
       the kernel);
    2. the op becomes an `scf.parallel` over its parallel loops with
       `scf.for` reductions inside (`linalg::linalgOpToParallelLoops`); an
       op without parallel loops (a full reduction, or a 0-d op, whose
       scalar code has no loop at all) is wrapped in a one-iteration
       `scf.parallel`, a kernel of one thread, so that no op stays host
       code;
    3. the parallel loops are collapsed into one (row-major, so that the
       innermost loop is the fastest and neighbouring threads touch
       neighbouring elements) and tiled by `block-size`, with a guard
       instead of min/max bounds: the outer loop maps to blocks and the
       inner one to `block-size` threads.

    With `vector-loads=true`, an element-wise op (no reduction loop, static
    extents, every output indexed by the innermost loop in its contiguous
    last dimension only, whose extent is a multiple of the group; integer
    or float elements) becomes a loop over groups of 16 bytes of its
    first output's element type instead (4 f32, 2 f64): a thread applies the op's body to the group's
    elements and reads and writes each contiguous operand of the group with
    one 16-byte vector access when the group's address is a multiple of 16
    bytes (tested in the kernel; otherwise one access per element). Steps
    (1) and (3) apply to it as to the others.

    Ops inside `gpu.module`s are left alone.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "threads per block of the generated kernels">,
    Option<"vectorLoads", "vector-loads", "bool", /*default=*/"false",
           "element-wise ops read and write groups of 16 bytes per thread">
  ];
  let dependentDialects = [
    "::mlir::scf::SCFDialect", "::mlir::arith::ArithDialect",
    "::mlir::memref::MemRefDialect", "::mlir::affine::AffineDialect",
    "::mlir::vector::VectorDialect"
  ];
}

def TofuGPUReport : Pass<"tofu-gpu-report", "mlir::ModuleOp"> {
  let summary = "Print kernels and FLOPs per target of a GPU-lowered step";
  let description = [{
    For a module after `convert-tofu-to-gpu` (buffers, library calls
    marked with `tofu.library`), prints one line per function and a total:
    the number of generated kernels (each remaining linalg op becomes one
    `gpu.launch`, a 0-d op one of a single thread; a module that is already
    lowered further counts its `gpu.launch` and `gpu.launch_func` ops), and the floating-point
    operations that go to cuBLAS, to cuDNN and to generated kernels, with
    the library share. A generated kernel's FLOPs are its iteration count
    times the floating-point arith and math ops of its body.

    ```
    tofu-gpu-report @forward_train: kernels 12 cublas 1.2e+09 cudnn 0
      generated 4.1e+06 library-share 99.66%
    ```

    The report goes to `output` (`-`, the default, for stderr); the IR is
    unchanged.
  }];
  let options = [
    Option<"output", "output", "std::string", /*default=*/"\"-\"",
           "file to write the report to ('-' for stderr)">
  ];
}

def TofuGPUStreamOrder : Pass<"tofu-gpu-stream-order", "mlir::ModuleOp"> {
  let summary = "Queue kernels and library calls on one stream, wait only "
                "where the host needs memory";
  let description = [{
    Runs on host code with outlined kernels (`gpu.launch_func` without
    tokens), after `gpu-kernel-outlining`. Each block is walked in order
    with a current async token: a synchronous `gpu.launch_func` becomes an
    asynchronous one that depends on the current token (a `gpu.wait async`
    starts one when there is none) and yields the next; a library call of
    `convert-tofu-to-gpu` (a `func.call` tagged `tofu.library`, or a loop
    of nothing but such calls and pure ops) keeps the token, since the CUDA
    runtime queues it on the same stream; a synchronous device allocation
    (`gpu.alloc` without `host_shared`), deallocation (`gpu.dealloc`) or
    copy (`gpu.memcpy`, as `tofu-gpu-device-memory` emits them) becomes an
    asynchronous one on the current token (the runtime hands out and takes
    back cached blocks in stream order, without waiting); an op with no
    memory effect, or only managed allocations, changes nothing. Before any
    other op with memory effects (host loads and stores, other calls, an op
    with regions) and before the terminator of a region, a `gpu.wait` on
    the current token makes the host wait for the queued work, and the next
    launch starts a new chain.

    A function returns without waiting: its work stays queued on the
    stream. After a call of a function of the module, the caller's next
    host op waits for the callee's work too, and a function's first host
    op waits for what its caller queued (except in the function tagged
    `tofu.driver`, which nothing calls). A C caller waits with
    `tofu_gpu_synchronize`.

    This relies on the contract of the CUDA runtime (`runtime/cuda`,
    docs/gpu.md): every stream that `mgpuStreamCreate` returns is the one
    stream of the process, on which the library calls are queued too.

    Before:

    ```mlir
    gpu.launch_func @k0::@k0 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<4xf32>)
    func.call @tofu_gpu_sgemm(...) {tofu.library = "cublas"} : (...) -> ()
    gpu.launch_func @k1::@k1 blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%b : memref<4xf32>)
    %v = memref.load %b[%c0] : memref<4xf32>
    ```

    After:

    ```mlir
    %t0 = gpu.wait async
    %t1 = gpu.launch_func async [%t0] @k0::@k0 ...
    func.call @tofu_gpu_sgemm(...) {tofu.library = "cublas"} : (...) -> ()
    %t2 = gpu.launch_func async [%t1] @k1::@k1 ...
    gpu.wait [%t2]
    %v = memref.load %b[%c0] : memref<4xf32>
    ```
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def TofuGPUMergeKernels : Pass<"tofu-gpu-merge-kernels", "mlir::ModuleOp"> {
  let summary = "Put every outlined kernel in one gpu.module, each "
                "distinct kernel once, under a name that says what it does";
  let description = [{
    Runs after `gpu-kernel-outlining`, which gives every launch a
    `gpu.module` of its own: a step with a thousand launches would be
    compiled by a thousand NVPTX pipelines and `ptxas` runs, and every
    kernel would be called after its function (`step_kernel`), so that a
    profile could not tell them apart. This pass moves the kernels into
    one `gpu.module @tofu_kernels`, serialized once. Kernels whose bodies
    are the same (the same layer of a deep model, the same element-wise op
    on the same shape) become one kernel that all their launches call.
    Each kernel is named `k<N>_<kind>_<ops>`: N numbers the distinct
    kernels in the order of their first launch, kind is `map` for a kernel
    without loops and `loop` for one with a loop in each thread (a
    reduction, or a copy of a strided row), and ops are the first three
    distinct floating-point and math operations of the body.

    ```mlir
    gpu.module @step_kernel { gpu.func @step_kernel(...) kernel {...} }
    gpu.module @step_kernel_0 { gpu.func @step_kernel(...) kernel {...} }
    ```

    become `gpu.module @tofu_kernels { gpu.func @k0_map_mulf(...) ... }`,
    and every `gpu.launch_func` names its kernel there.
  }];
  let dependentDialects = ["mlir::gpu::GPUDialect"];
}

def TofuGPUCheckLowered : Pass<"tofu-gpu-check-lowered", "mlir::ModuleOp"> {
  let summary = "Check that a module is fully lowered for the GPU";
  let description = [{
    The last step of `tofu-gpu-pipeline`: fails with a diagnostic on any
    linalg op or `scf.parallel` that is left, on any `gpu.alloc`,
    `gpu.dealloc` or `gpu.wait` that the host lowering did not turn into
    runtime calls, and when kernels were
    generated but no `gpu.binary` holds them, so that a lowering that
    silently stopped half-way never looks like a success. It loads the tofu
    dialect, whose printer names the lowered step's large result structs
    (`!tofu_struct`) instead of repeating them in every use.
  }];
  let dependentDialects = ["::tofu::TofuDialect"];
}

#endif // TOFU_CONVERSION_PASSES_TD
