//===- TofuToGPU.h - Lowering training steps to the GPU ---------*- C++ -*-===//
//
// The passes of the GPU path (library calls, fusion, reduction splitting,
// managed memory, report, final check), the GEMM and convolution matchers
// they share, and the registration of tofu-gpu-pipeline. See docs/gpu.md.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CONVERSION_TOFUTOGPU_TOFUTOGPU_H
#define TOFU_CONVERSION_TOFUTOGPU_TOFUTOGPU_H

#include "tofu/Conversion/TofuToGPU/ConvPattern.h"

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
#define GEN_PASS_DECL_TOFUGPUFUSEELEMENTWISE
#define GEN_PASS_DECL_TOFUGPUSPLITREDUCTIONS
#define GEN_PASS_DECL_TOFUGPUMANAGEDMEMORY
#define GEN_PASS_DECL_TOFUGPUPARALLELLOOPS
#define GEN_PASS_DECL_TOFUGPUREPORT
#define GEN_PASS_DECL_TOFUGPUSTREAMORDER
#define GEN_PASS_DECL_TOFUGPUCHECKLOWERED
#include "tofu/Conversion/Passes.h.inc"

/// The loops of a linalg op that computes C[b..](m, n) += A[b..](m, k) *
/// B[b..](k, n): loop positions of the batch loops (outermost first), of M,
/// N and K, and which input is A (the one indexed by M).
struct GemmMatch {
  llvm::SmallVector<unsigned> batchLoops;
  unsigned mLoop = 0, nLoop = 0, kLoop = 0;
  unsigned lhsInput = 0, rhsInput = 1;
};

/// Matches a single-precision linalg op (named or generic, on tensors or
/// buffers) whose body is `out + in0 * in1` and whose indexing maps are
/// projected permutations with one M, one N, one K and any number of batch
/// loops. Returns std::nullopt for anything else.
std::optional<GemmMatch> matchGemm(mlir::linalg::LinalgOp op);

/// Whether the body of `op` is exactly `yield(out + in0 * in1)` (in either
/// order of the sum and of the product).
bool isMultiplyAccumulate(mlir::linalg::LinalgOp op);

/// Matches a single-precision multiply-accumulate op (named or generic, on
/// tensors or buffers) that is a 1-D or 2-D convolution with dilation 1:
/// the forward convolution, or a data or filter gradient
/// (conv::matchConvPattern). Returns std::nullopt for anything else; then
/// `whyNot` (if given) says why a windowed multiply-accumulate op is not
/// one, and stays empty for ops that are no convolution at all.
std::optional<conv::ConvPattern>
matchConvolution(mlir::linalg::LinalgOp op, std::string *whyNot = nullptr);

/// The zero pads that the cuDNN convolutions of a module take as cuDNN's
/// padding (ConvPadding.cpp, conv::foldZeroPad): analyze every
/// convolution before any op is rewritten, lower each with the image that
/// lookup gives, then erase the pads that no convolution reads any more.
class ConvPadding {
public:
  /// How a convolution's call sees its image: `buffer`, starting at
  /// `offsets` (elements per spatial dimension), with `extents` (the
  /// buffer's own when empty), and cuDNN's `padding`.
  struct Image {
    mlir::Value buffer;
    llvm::SmallVector<int64_t> offsets, extents, padding;
  };

  /// Decides the padding of every convolution: a forward convolution or
  /// filter gradient reads the unpadded image when every reader of the
  /// padded one can; a data gradient writes the interior of its padded
  /// image when only that interior is read. Remarks name the pads that
  /// stay copies next to a convolution and why.
  void analyze(llvm::ArrayRef<std::pair<mlir::linalg::LinalgOp,
                                        conv::ConvPattern>>
                   convolutions);
  /// The image of the call of `op`, or null when it has no padding.
  const Image *lookup(mlir::Operation *op) const;
  /// Erases the pads (fill, copy, buffer) folded into the calls; call after
  /// the convolutions are lowered.
  void eraseFoldedPads();

private:
  void analyzeReaders(
      mlir::Value padded,
      llvm::ArrayRef<std::pair<mlir::linalg::LinalgOp, conv::ConvPattern>>
          convolutions,
      llvm::ArrayRef<unsigned> readers);
  void analyzeDataGradient(mlir::linalg::LinalgOp op,
                           const conv::ConvPattern &pattern);

  llvm::DenseMap<mlir::Operation *, Image> images;
  llvm::SmallVector<mlir::Operation *> deadOps;
};

/// Whether convert-tofu-to-gpu turns `op` into a library call (cuBLAS or
/// cuDNN); the passes before it leave such ops as they are.
bool isLibraryOp(mlir::linalg::LinalgOp op);

/// 2 * the product of the static loop ranges of a multiply-accumulate op
/// (its FLOPs as a GEMM or convolution), or std::nullopt when a range is
/// dynamic or the product overflows.
std::optional<int64_t> getMultiplyAccumulateFlops(mlir::linalg::LinalgOp op);

/// The floating-point operations of one generated kernel for `op`: its
/// static iteration count times the floating-point arith and math ops of
/// its body; std::nullopt when a loop range is dynamic.
std::optional<int64_t> getKernelFlops(mlir::linalg::LinalgOp op);

/// Whether `call` is a library call of convert-tofu-to-gpu (tagged
/// `tofu.library`), which the CUDA runtime queues on its one stream.
bool isLibraryCall(mlir::Operation *op);

/// Registers `tofu-gpu-pipeline` (docs/gpu.md).
void registerTofuGPUPipeline();

} // namespace tofu

#endif // TOFU_CONVERSION_TOFUTOGPU_TOFUTOGPU_H
