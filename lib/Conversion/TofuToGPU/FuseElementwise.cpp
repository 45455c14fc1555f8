//===- FuseElementwise.cpp - Element-wise fusion for the GPU --------------===//
//
// Implements tofu-gpu-fuse-elementwise: upstream element-wise fusion of
// linalg.generic ops on tensors, controlled so that every matrix product
// stays a library call and nothing is recomputed.
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
/// no other use and the consumer is not a GEMM-shaped op.
bool shouldFuse(OpOperand *operand) {
  Operation *producer = operand->get().getDefiningOp();
  if (!producer || !producer->hasOneUse())
    return false;
  auto consumer = dyn_cast<linalg::LinalgOp>(operand->getOwner());
  return consumer && !tofu::matchGemm(consumer);
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
