//===- TofuToGPU.h - Lowering training steps to the GPU ---------*- C++ -*-===//
//
// The passes of the GPU path (library calls, fusion, reduction splitting,
// managed memory, report, final check) and the registration of
// tofu-gpu-pipeline. See docs/gpu.md. The GEMM and convolution matchers
// are the backends' shared ones (LibraryCalls.h).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CONVERSION_TOFUTOGPU_TOFUTOGPU_H
#define TOFU_CONVERSION_TOFUTOGPU_TOFUTOGPU_H

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include <optional>

namespace tofu {

#define GEN_PASS_DECL_CONVERTTOFUTOGPU
#define GEN_PASS_DECL_TOFUGPUSPLITREDUCTIONS
#define GEN_PASS_DECL_TOFUGPUDEVICEMEMORY
#define GEN_PASS_DECL_TOFUGPUPARALLELLOOPS
#define GEN_PASS_DECL_TOFUGPUWARPREDUCTIONS
#define GEN_PASS_DECL_TOFUGPUREPORT
#define GEN_PASS_DECL_TOFUGPUSTREAMORDER
#define GEN_PASS_DECL_TOFUGPUMERGEKERNELS
#define GEN_PASS_DECL_TOFUGPUCHECKLOWERED
#include "tofu/Conversion/Passes.h.inc"

/// Whether convert-tofu-to-gpu turns `op` into a library call (cuBLAS or
/// cuDNN: a single-precision GEMM or convolution); the passes before it
/// leave such ops as they are.
bool isLibraryOp(mlir::linalg::LinalgOp op);

/// The single combiner of a one-output reduction (the op that folds the
/// output's block argument into the yielded value, as
/// linalg::matchReduction finds it) and its neutral element; a null op
/// when there is none.
std::pair<mlir::Operation *, mlir::TypedAttr>
getReductionCombiner(mlir::linalg::GenericOp op);

/// The loop of `op` that walks the last dimension of its input of static
/// shape with the most elements, if one does: a reduction along it reduces
/// rows, which neighbouring threads read coalesced.
std::optional<unsigned> getRowLoop(mlir::linalg::GenericOp op);

/// The vectorized loop of an element-wise `op` (all loops parallel, static
/// extents, every output indexed by the last loop in its contiguous last
/// dimension only, that loop's extent a multiple of the group, integer or
/// float elements, no input reading an output through another map): an
/// scf.parallel whose last loop counts groups of 16 bytes of the first
/// output's element type; each iteration applies the op's body to the
/// group's elements one after the other and reads and writes each
/// contiguous operand with one 16-byte vector access when all their
/// addresses are multiples of 16 bytes (tested in the loop), else with a
/// load or store per element. Created at the rewriter's insertion point;
/// `op` is left for the caller to erase. Null when `op` does not qualify.
mlir::scf::ParallelOp lowerToVectorLoop(mlir::RewriterBase &rewriter,
                                        mlir::linalg::GenericOp op);

/// Marks a call of the CUDA runtime that only queues work on the runtime's
/// one stream and does not wait (the step timers): tofu-gpu-stream-order
/// keeps it in the chain, as it does a library call.
inline constexpr llvm::StringLiteral kStreamOrderedAttr = "tofu.stream_ordered";

/// Whether `call` is a library call of convert-tofu-to-gpu (tagged
/// `tofu.library`), or a call marked `tofu.stream_ordered`: the CUDA runtime
/// queues both on its one stream.
bool isLibraryCall(mlir::Operation *op);

/// Whether `op` calls a function of the module that has a body: the
/// callee works on device buffers as its caller does, and returns with its
/// work queued on the runtime's stream.
bool callsFunctionWithBody(mlir::Operation *op);

/// Registers `tofu-gpu-pipeline` (docs/gpu.md).
void registerTofuGPUPipeline();

/// Sets CUDA_HOME to /usr/local/cuda when none of CUDA_HOME, CUDA_ROOT and
/// CUDA_PATH is set and /usr/local/cuda/bin/ptxas exists: the cubins are
/// serialized by the toolkit's ptxas, which upstream finds through them.
void setDefaultCudaHome();

} // namespace tofu

#endif // TOFU_CONVERSION_TOFUTOGPU_TOFUTOGPU_H
