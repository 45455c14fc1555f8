//===- FuseElementwise.cpp - Element-wise fusion for the GPU --------------===//
//
// Implements tofu-gpu-fuse-elementwise: upstream element-wise fusion of
// linalg.generic ops on tensors, controlled so that every matrix product
// and convolution stays a library call and nothing is recomputed.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUFUSEELEMENTWISE
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// Fuses the producer of `operand` into its consumer when the producer has
/// no other use, does not read its own output, and the consumer is not an
/// op that becomes a library call (a GEMM or a convolution). Upstream
/// fusion of a producer that accumulates into its output (`out + f(in)` on
/// a zero fill, as tofu-autodiff's backward ops do) changed the training
/// losses of the MLP step, so such producers stay separate kernels.
bool shouldFuse(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  auto generic = dyn_cast<linalg::GenericOp>(producer);
  if (!generic || llvm::any_of(generic.getRegionOutputArgs(),
                               [](BlockArgument a) { return !a.use_empty(); }))
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  return consumer && !tofu::isLibraryOp(consumer);
}

struct TofuGPUFuseElementwisePass
    : public tofu::impl::TofuGPUFuseElementwiseBase<
          TofuGPUFuseElementwisePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(patterns, shouldFuse);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      return signalPassFailure();
  }
};

} // namespace
