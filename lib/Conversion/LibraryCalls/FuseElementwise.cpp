//===- FuseElementwise.cpp - Element-wise fusion around library calls -----===//
//
// Implements tofu-fuse-elementwise, which both backends run: upstream
// element-wise fusion of linalg.generic ops on tensors, controlled so that
// every matrix product and convolution stays a library call, and nothing
// is recomputed unless asked.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUFUSEELEMENTWISE
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// tofu-autodiff's backward element-wise ops accumulate into a zero fill:
/// `out + f(in)` on an output that no other iteration writes. Since
/// 0 + v = v (up to the sign of a zero v on a +0.0 fill), the op becomes a
/// plain map that writes the fill's destination without reading it: one
/// pass over memory less for the fill, one for the read of the zeros, and
/// an op that fusion may merge with its neighbours. Ops with reduction
/// loops (GEMMs, reductions) and library ops keep their fills (the library
/// calls turn a zero fill into beta = 0).
struct DropZeroAccumulation : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumReductionLoops() != 0 || tofu::isProductOp(op))
      return failure();
    OpOperand *init = op.getDpsInitOperand(0);
    if (!op.getMatchingIndexingMap(init).isPermutation())
      return failure();
    auto fill = init->get().getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()))
      return failure();
    BlockArgument out = op.getMatchingBlockArgument(init);
    if (!out.hasOneUse())
      return failure();
    auto add = dyn_cast<arith::AddFOp>(*out.getUsers().begin());
    if (!add || !add->hasOneUse() ||
        !isa<linalg::YieldOp>(*add->getUsers().begin()))
      return failure();
    Value value = add.getLhs() == out ? add.getRhs() : add.getLhs();
    rewriter.replaceAllUsesWith(add.getResult(), value);
    rewriter.eraseOp(add);
    Value destination = fill.getDpsInitOperand(0)->get();
    rewriter.modifyOpInPlace(op, [&] { init->set(destination); });
    return success();
  }
};

/// A sum `a + p` of two tensors, where `p` is the only use of a product (a
/// GEMM or a convolution by the shared matchers) that accumulates into a
/// zero fill, becomes the product accumulating into `a`: library calls then
/// add into `a`'s buffer with beta = 1. tofu-autodiff sums a weight's
/// gradient over its uses this way; for an LSTM's input weights, one
/// product per time step, each zeroing and writing a whole weight-sized
/// result that the sum then reads again. Only the rounding changes: the
/// product adds its terms to `a` instead of to zero and then to `a`.
struct AccumulateIntoProduct : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
        op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
        op.getNumReductionLoops() != 0 ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }))
      return failure();
    Block &body = op.getRegion().front();
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
    if (!add || &body.front() != add.getOperation() ||
        !llvm::is_contained(op.getRegionInputArgs(), add.getLhs()) ||
        !llvm::is_contained(op.getRegionInputArgs(), add.getRhs()) ||
        add.getLhs() == add.getRhs())
      return failure();
    Type type = op->getResult(0).getType();
    // The later-defined product first: the other term then already
    // dominates it.
    for (unsigned i : {1u, 0u}) {
      Value term = op.getDpsInputs()[i], other = op.getDpsInputs()[1 - i];
      auto product = term.getDefiningOp<linalg::LinalgOp>();
      if (!product || !term.hasOneUse() || product->getNumResults() != 1 ||
          product.getNumDpsInits() != 1 || term.getType() != type ||
          other.getType() != type || !tofu::isProductOp(product))
        continue;
      OpOperand *init = product.getDpsInitOperand(0);
      auto fill = init->get().getDefiningOp<linalg::FillOp>();
      if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()))
        continue;
      Operation *definer = other.getDefiningOp();
      if (definer && definer->getBlock() == product->getBlock() &&
          !definer->isBeforeInBlock(product))
        rewriter.moveOpAfter(product, definer);
      else if (definer && definer->getBlock() != product->getBlock())
        continue;
      rewriter.modifyOpInPlace(product, [&] { init->set(other); });
      rewriter.replaceOp(op, term);
      return success();
    }
    return failure();
  }
};

/// Whether `operand`'s op may take in its producer: a linalg op that does
/// not become a library call (a GEMM or a convolution).
bool takesProducer(OpOperand &operand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(operand.getOwner());
  return consumer && !tofu::isProductOp(consumer);
}

/// Fuses the producer of `operand` into its consumer when the producer does
/// not read its own output, the consumer is not an op that becomes a
/// library call (a GEMM or a convolution), and the producer has no other
/// use or, with `duplicate`, is all-parallel with one result and every one
/// of its uses can take it (it is then recomputed in each and disappears).
/// Upstream fusion of a producer that reads its own output (an
/// accumulation that DropZeroAccumulation could not turn into a map)
/// changed the training losses of the MLP step, so such producers stay
/// separate kernels.
bool shouldFuse(OpOperand *operand, bool duplicate) {
  Operation *producer = operand->get().getDefiningOp();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(producer);
  if (!generic || llvm::any_of(generic.getRegionOutputArgs(),
                               [](BlockArgument a) { return !a.use_empty(); }))
    return false;
  if (!takesProducer(*operand))
    return false;
  if (producer->hasOneUse())
    return true;
  // Each consumer takes the producer's inputs as operands of its own: a
  // bound keeps kernels' parameter lists short (without it, fusion chains
  // in the BERT slice made kernels whose parameters exceeded ptxas's
  // limit of 4352 bytes).
  constexpr unsigned kMaxOperands = 8;
  unsigned producerInputs = generic.getNumDpsInputs();
  return duplicate && generic->getNumResults() == 1 &&
         generic.getNumLoops() == generic.getNumParallelLoops() &&
         llvm::all_of(generic->getResult(0).getUses(), [&](OpOperand &use) {
           return takesProducer(use) &&
                  use.getOwner()->getNumOperands() - 1 + producerInputs <=
                      kMaxOperands &&
                  linalg::areElementwiseOpsFusable(&use);
         });
}

struct TofuFuseElementwisePass
    : public tofu::impl::TofuFuseElementwiseBase<
          TofuFuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    // Sums into products first, before fusion merges the sums' chain.
    RewritePatternSet accumulations(&getContext());
    accumulations.add<AccumulateIntoProduct>(&getContext());
    FrozenRewritePatternSet frozenAccumulations(std::move(accumulations));
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func->hasAttr(tofu::attrs::kDriver))
        if (failed(applyPatternsGreedily(func, frozenAccumulations)))
          return signalPassFailure();
    RewritePatternSet patterns(&getContext());
    patterns.add<DropZeroAccumulation>(&getContext());
    bool fuseIntoAll = duplicate;
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [fuseIntoAll](OpOperand *operand) {
          return shouldFuse(operand, fuseIntoAll);
        });
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    FrozenRewritePatternSet frozen(std::move(patterns));
    // The training driver's tensors are handed to runtime calls through
    // bufferization.to_buffer: it is left as it is.
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func->hasAttr(tofu::attrs::kDriver))
        if (failed(applyPatternsGreedily(func, frozen)))
          return signalPassFailure();
  }
};

} // namespace
