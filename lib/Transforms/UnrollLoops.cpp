//===- UnrollLoops.cpp - Fully unroll static loops ------------------------===//
//
// The tofu-unroll-loops pass: replaces every `scf.for` with static bounds by
// copies of its body, one per iteration, with the induction variable a
// constant, so that a recurrent model (an LSTM whose time loop carries its
// state in iter_args) becomes the straight-line program the search
// partitions. Each copy reads the same weights, which is what coarsening
// recognises as the time steps of one cell.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tofu-unroll-loops"

namespace tofu {
#define GEN_PASS_DEF_TOFUUNROLLLOOPS
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// The static trip count of `loop`, or an error located on it.
static FailureOr<uint64_t> getTripCount(scf::ForOp loop) {
  APInt lb, ub, step;
  if (!matchPattern(loop.getLowerBound(), m_ConstantInt(&lb)) ||
      !matchPattern(loop.getUpperBound(), m_ConstantInt(&ub)) ||
      !matchPattern(loop.getStep(), m_ConstantInt(&step)))
    return loop.emitError("tofu-unroll-loops: cannot unroll a loop whose "
                          "bounds and step are not constants");
  bool isSigned = !loop.getUnsignedCmp();
  int64_t lower = isSigned ? lb.getSExtValue() : int64_t(lb.getZExtValue());
  int64_t upper = isSigned ? ub.getSExtValue() : int64_t(ub.getZExtValue());
  int64_t stride = step.getSExtValue();
  if (stride <= 0)
    return loop.emitError("tofu-unroll-loops: the step must be positive, "
                          "found ")
           << stride;
  if (upper <= lower)
    return uint64_t(0);
  // Computed in unsigned arithmetic: upper - lower may exceed INT64_MAX.
  return (uint64_t(upper) - uint64_t(lower) - 1) / uint64_t(stride) + 1;
}

/// Replaces `loop` by `tripCount` copies of its body; the copies' operations
/// are appended to `created`.
static void unroll(scf::ForOp loop, uint64_t tripCount,
                   SmallVectorImpl<Operation *> &created) {
  OpBuilder b(loop);
  Location loc = loop.getLoc();
  APInt lb, step;
  matchPattern(loop.getLowerBound(), m_ConstantInt(&lb));
  matchPattern(loop.getStep(), m_ConstantInt(&step));
  Type ivType = loop.getInductionVar().getType();
  SmallVector<Value> carried(loop.getInitArgs());
  Block *body = loop.getBody();
  auto yield = cast<scf::YieldOp>(body->getTerminator());
  for (uint64_t i = 0; i < tripCount; ++i) {
    IRMapping mapping;
    APInt value = lb + step * APInt(lb.getBitWidth(), i);
    auto iv = arith::ConstantOp::create(
        b, loc, b.getIntegerAttr(ivType, value.getSExtValue()));
    created.push_back(iv);
    mapping.map(loop.getInductionVar(), iv.getResult());
    mapping.map(loop.getRegionIterArgs(), carried);
    for (Operation &op : body->without_terminator())
      created.push_back(b.clone(op, mapping));
    for (auto [j, v] : llvm::enumerate(yield.getOperands()))
      carried[j] = mapping.lookupOrDefault(v);
  }
  loop.replaceAllUsesWith(carried);
  // Copies that unrolling inner loops made inside this body die with it.
  llvm::erase_if(created,
                 [&](Operation *op) { return loop->isProperAncestor(op); });
  loop.erase();
}

struct TofuUnrollLoopsPass
    : public tofu::impl::TofuUnrollLoopsBase<TofuUnrollLoopsPass> {
  using TofuUnrollLoopsBase::TofuUnrollLoopsBase;

  void runOnOperation() override {
    // Check every loop first, so that a failure leaves the IR unchanged.
    SmallVector<std::pair<scf::ForOp, uint64_t>> loops;
    llvm::DenseMap<Operation *, uint64_t> nestCount;
    bool failed = false;
    getOperation()->walk<WalkOrder::PreOrder>([&](scf::ForOp loop) {
      FailureOr<uint64_t> trips = getTripCount(loop);
      if (mlir::failed(trips)) {
        failed = true;
        return WalkResult::interrupt();
      }
      // Iterations of the whole nest: this loop's times its parents'.
      uint64_t outer = 1;
      if (auto parent = loop->getParentOfType<scf::ForOp>())
        outer = nestCount.lookup(parent);
      uint64_t total = *trips;
      if (outer && total > maxIterations / outer) {
        loop.emitError("tofu-unroll-loops: unrolling gives ")
            << (outer > 1 ? std::to_string(outer) + " x " : "") << *trips
            << " iterations, more than max-iterations="
            << uint64_t(maxIterations)
            << " (raise it to unroll this loop)";
        failed = true;
        return WalkResult::interrupt();
      }
      nestCount[loop] = outer * total;
      loops.push_back({loop, *trips});
      return WalkResult::advance();
    });
    if (failed)
      return signalPassFailure();

    // Innermost first, so that outer bodies hold the unrolled inner loops.
    SmallVector<Operation *> created;
    for (auto [loop, trips] : llvm::reverse(loops)) {
      LLVM_DEBUG(llvm::dbgs() << "unrolling " << trips << " iterations at "
                              << loop.getLoc() << "\n");
      unroll(loop, trips, created);
    }
    if (created.empty())
      return;

    // Fold the constant induction variables into the copies (static slice
    // offsets), touching only the operations the unrolling created.
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    for (RegisteredOperationName name : ctx->getRegisteredOperations())
      if (llvm::is_contained({"arith", "tensor", "affine"},
                             name.getDialectNamespace()))
        name.getCanonicalizationPatterns(patterns, ctx);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(created, std::move(patterns), config);
  }
};

} // namespace
