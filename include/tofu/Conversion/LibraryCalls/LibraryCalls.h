//===- LibraryCalls.h - Linalg ops as library calls -------------*- C++ -*-===//
//
// What every backend shares to turn linalg ops into library calls: the
// GEMM and convolution matchers (their MLIR-free rules are GemmPattern.h
// and ConvPattern.h), the zero pads that a convolution takes as its
// padding, and the lowering of a match to a call with the addresses,
// extents and strides of its operands. The CPU backend (OpenBLAS, oneDNN)
// and the GPU backend (cuBLAS, cuDNN) differ only in the entry points they
// name (LibraryCallEntries).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CONVERSION_LIBRARYCALLS_LIBRARYCALLS_H
#define TOFU_CONVERSION_LIBRARYCALLS_LIBRARYCALLS_H

#include "tofu/Conversion/LibraryCalls/ConvPattern.h"
#include "tofu/Conversion/LibraryCalls/GemmPattern.h"
#include "tofu/Transforms/ReportOutput.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

#include <optional>
#include <string>

namespace tofu {

#define GEN_PASS_DECL_TOFUFUSEELEMENTWISE
#define GEN_PASS_DECL_TOFUINSERTSLICESINPLACE
#include "tofu/Conversion/Passes.h.inc"

/// Tags a call of a library: its value names the library (openblas, onednn,
/// cublas, cudnn, or collective for the GPU collectives of
/// convert-tofu-to-mpi{runtime=gpu}); the reports count the calls by it.
inline constexpr llvm::StringLiteral kLibraryAttr = "tofu.library";

/// On what runs where the buffers' strides, checked at run time, rule out
/// a library call on the operands as they are: the linalg op that the call
/// replaces, or a call on contiguous copies of its inputs and the copies.
/// The reports count the first call, not these.
inline constexpr llvm::StringLiteral kLibraryFallbackAttr =
    "tofu.library_fallback";

/// On a runtime call: the one operand (a buffer) that the call writes; it
/// reads its other buffer operands and frees nothing. convert-tofu-to-mpi
/// tags its collectives so, which lets the library calls' analyses see
/// through them (a zero pad folds across an all-gather of the filter).
inline constexpr llvm::StringLiteral kWritesOperandAttr = "tofu.writes_operand";

/// On a library call that takes buffers: how many of its first operands
/// are device buffers (the others are host buffers that it reads).
inline constexpr llvm::StringLiteral kDeviceOperandsAttr =
    "tofu.device_operands";

/// The loops of a linalg op that computes C[b..](m.., n..) += A[b..](m..,
/// k..) * B[b..](k.., n..): loop positions of the batch loops (outermost
/// first), of the M, N and K groups (usually one loop each; several when
/// the operands hold a group's dimensions adjacent and in one order, as an
/// einsum `bk,kgh->bgh` does), and which input is A (the one indexed by M).
struct GemmMatch {
  llvm::SmallVector<unsigned> batchLoops;
  llvm::SmallVector<unsigned> mLoops, nLoops, kLoops;
  /// Reductions outside K: one call per iteration, each adding into C.
  llvm::SmallVector<unsigned> accumulateLoops;
  unsigned lhsInput = 0, rhsInput = 1;
  /// The element type of every operand (f32 or f64).
  mlir::Type elementType;
};

/// Matches a linalg op (named or generic, on tensors or buffers) on f32 or
/// f64 operands of one element type whose body is `out + in0 * in1` and
/// whose indexing maps are projected permutations with an M, an N and a K
/// group and any number of batch loops (gemm::matchGemmPattern).
/// Returns std::nullopt for anything else. A group of several loops is one
/// dimension of the call where each operand holds it contiguously; the
/// lowering checks that on the buffers' strides.
std::optional<GemmMatch> matchGemm(mlir::linalg::LinalgOp op);

/// The loop that indexes the innermost dimension of an operand with `map`
/// (a projected permutation), or none for a 0-d operand.
std::optional<unsigned> getInnermostLoop(mlir::AffineMap map);

/// Whether a multiply-accumulate op with these indexing maps (A, B, C) and
/// iterators would be a GEMM by matchGemm's rule on its maps whose operands,
/// stored contiguously, are BLAS operands: the innermost dimension of each
/// is a loop of one of its groups, not a batch loop (it must have a unit
/// stride).
bool hasContiguousGemmLayout(
    llvm::ArrayRef<mlir::AffineMap> maps,
    llvm::ArrayRef<mlir::utils::IteratorType> iterators);

/// A `linalg.generic` that computes `out + in0 * in1` on `inputs` into
/// `init` with `maps` and `iterators`, carrying the tofu tags of `like`
/// (tofu.op_id, tofu.grad_of, ...; not its TDL description or a named op's
/// own attributes, which describe other operands): the form in which the
/// rewrites that reshape a product hand it to the matchers.
mlir::linalg::GenericOp
createMultiplyAccumulate(mlir::OpBuilder &b, mlir::Operation *like,
                         mlir::ValueRange inputs, mlir::Value init,
                         llvm::ArrayRef<mlir::AffineMap> maps,
                         llvm::ArrayRef<mlir::utils::IteratorType> iterators);

/// Adds the patterns that let GEMMs read and write permuted tensors in
/// place (PermutedOperands.cpp): a permuting copy (linalg.transpose, or a
/// generic that copies its input along a permutation) that a GEMM reads
/// becomes the GEMM's map of the copy's source, and a permuting copy of a
/// GEMM's result that is the product's only use becomes the GEMM writing
/// the permuted result. Library calls take strided operands, so each fold
/// saves a pass over the tensor.
void populatePermutedOperandPatterns(mlir::RewritePatternSet &patterns);

/// Whether `op` is a GEMM (f32 or f64, the types the GEMM matcher takes)
/// or a convolution (of any element type; depthwise and grouped ones
/// included) by the matchers: the ops that element-wise fusion leaves
/// whole, so that each backend can turn them into library calls.
bool isProductOp(mlir::linalg::LinalgOp op);

/// Whether the body of `op` is exactly `yield(out + in0 * in1)` (in either
/// order of the sum and of the product).
bool isMultiplyAccumulate(mlir::linalg::LinalgOp op);

/// Matches a multiply-accumulate op (named or generic, on tensors or
/// buffers, f32 or f64 operands of one element type) that is a 1-D or 2-D
/// convolution with dilation 1:
/// the forward convolution, or a data or filter gradient
/// (conv::matchConvPattern; depthwise and grouped ones with `allowGroups`).
/// Returns
/// std::nullopt for anything else; then `whyNot` (if given) says why a
/// windowed multiply-accumulate op is not one, and stays empty for ops
/// that are no convolution at all.
std::optional<conv::ConvPattern> matchConvolution(mlir::linalg::LinalgOp op,
                                                  std::string *whyNot = nullptr,
                                                  bool allowGroups = false);

/// The zero pads that the library convolutions of a module take as the
/// call's padding (ConvPadding.cpp, conv::foldZeroPad): analyze every
/// convolution before any op is rewritten, lower each with the image that
/// lookup gives, then erase the pads that no convolution reads any more.
class ConvPadding {
public:
  /// `pass` names the caller in remarks. With `foldStridedDataGradients`
  /// false, a data gradient with a stride other than 1 writes a packed
  /// image that is then copied into the padded one.
  explicit ConvPadding(llvm::StringRef pass,
                       bool foldStridedDataGradients = true)
      : pass(pass), foldStridedDataGradients(foldStridedDataGradients) {}

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

  std::string pass;
  bool foldStridedDataGradients;
  llvm::DenseMap<mlir::Operation *, Image> images;
  llvm::SmallVector<mlir::Operation *> deadOps;
};

/// 2 * the product of the static loop ranges of a multiply-accumulate op
/// (its FLOPs as a GEMM or convolution), or std::nullopt when a range is
/// dynamic or the product overflows.
std::optional<int64_t> getMultiplyAccumulateFlops(mlir::linalg::LinalgOp op);

/// The floating-point operations of one generated kernel for `op`: its
/// static iteration count times the floating-point arith and math ops of
/// its body; std::nullopt when a loop range is dynamic.
std::optional<int64_t> getKernelFlops(mlir::linalg::LinalgOp op);

/// The element type of the operands of a library op (f32 or f64).
mlir::Type getLibraryElementType(mlir::linalg::LinalgOp op);

/// The entry points of one backend's library calls for one element type;
/// an empty name leaves such ops to generated code.
struct LibraryCallEntries {
  /// The strided (batched) GEMM: (batch, m, n, k, then for A, B and C the
  /// address and the strides along M/K, K/N, M/N and the batch, then
  /// beta) as tofu_gpu_sgemm in include/tofu/Runtime/TofuCudaRuntime.h.
  llvm::StringRef gemm;
  /// The convolutions by conv::ConvKind: forward, data and filter gradient.
  llvm::StringRef conv[3];
  /// The libraries named in the calls' `tofu.library` tags.
  llvm::StringRef gemmLibrary, convLibrary;
  /// Without convolution entries: why, for the remark on each convolution
  /// that then stays generated code (no remark when empty).
  llvm::StringRef noConvReason;
  /// Whether the convolution entries take groups: depthwise convolutions
  /// (as many groups as channels) and grouped ones.
  bool grouped = false;
};

/// Replaces every GEMM and convolution on buffers in `module` whose
/// element type `entriesFor` gives entry points for by a call of them,
/// tagged `tofu.library` and `tofu.flops`, and folds the zero pads of the
/// convolutions into their padding. `pass` names the caller in
/// diagnostics: a GEMM or convolution still on tensors is an error.
mlir::LogicalResult
lowerLibraryCalls(mlir::ModuleOp module, llvm::StringRef pass,
                  llvm::function_ref<LibraryCallEntries(mlir::Type)> entriesFor,
                  bool foldStridedDataGradients = true);

} // namespace tofu

#endif // TOFU_CONVERSION_LIBRARYCALLS_LIBRARYCALLS_H
