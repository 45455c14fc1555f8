//===- ParallelLoops.cpp - Linalg ops to kernel-shaped parallel loops -----===//
//
// Implements tofu-gpu-parallel-loops: each linalg op left after the
// library calls becomes one collapsed, tiled scf.parallel (blocks x
// threads) with its reductions as sequential loops inside, ready for
// gpu-map-parallel-loops and convert-parallel-loops-to-gpu.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

#include <numeric>

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUPARALLELLOOPS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

struct TofuGPUParallelLoopsPass
    : public tofu::impl::TofuGPUParallelLoopsBase<TofuGPUParallelLoopsPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// The permutation that puts the parallel loops of `op` first, both groups
/// in their original order, or an empty vector when they already are.
SmallVector<unsigned> getParallelFirst(linalg::GenericOp op) {
  SmallVector<unsigned> parallel, reduction;
  for (auto [i, t] : llvm::enumerate(op.getIteratorTypesArray()))
    (t == utils::IteratorType::parallel ? parallel : reduction).push_back(i);
  SmallVector<unsigned> order(parallel);
  order.append(reduction);
  SmallVector<unsigned> identity(order.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (order == identity)
    return {};
  return order;
}

} // namespace

void TofuGPUParallelLoopsPass::runOnOperation() {
  if (blockSize < 1 || blockSize > 1024) {
    getOperation().emitError("tofu-gpu-parallel-loops: block-size must be "
                             "in [1, 1024]");
    return signalPassFailure();
  }
  SmallVector<linalg::LinalgOp> ops;
  getOperation().walk([&](linalg::LinalgOp op) {
    if (!op->getParentOfType<gpu::GPUModuleOp>())
      ops.push_back(op);
  });
  IRRewriter rewriter(&getContext());
  for (linalg::LinalgOp op : ops) {
    if (!op.hasPureBufferSemantics()) {
      op->emitOpError("tofu-gpu-parallel-loops: expects buffers; bufferize "
                      "first");
      return signalPassFailure();
    }
    rewriter.setInsertionPoint(op);
    linalg::LinalgOp current = op;
    if (!isa<linalg::GenericOp>(op.getOperation())) {
      FailureOr<linalg::GenericOp> generic =
          linalg::generalizeNamedOp(rewriter, op);
      if (failed(generic)) {
        op->emitOpError("tofu-gpu-parallel-loops: cannot generalize");
        return signalPassFailure();
      }
      current = *generic;
    }
    auto generic = cast<linalg::GenericOp>(current.getOperation());
    SmallVector<unsigned> order = getParallelFirst(generic);
    if (!order.empty()) {
      FailureOr<linalg::GenericOp> interchanged =
          linalg::interchangeGenericOp(rewriter, generic, order);
      if (failed(interchanged)) {
        generic->emitOpError("tofu-gpu-parallel-loops: cannot put the "
                             "parallel loops first");
        return signalPassFailure();
      }
      generic = *interchanged;
    }
    bool hasParallel = generic.getNumParallelLoops() > 0;
    rewriter.setInsertionPoint(generic);
    FailureOr<linalg::LinalgLoops> loops =
        linalg::linalgOpToParallelLoops(rewriter, generic);
    if (failed(loops)) {
      generic->emitOpError("tofu-gpu-parallel-loops: cannot lower to loops");
      return signalPassFailure();
    }
    rewriter.eraseOp(generic);
    scf::ParallelOp parallel = hasParallel && !loops->empty()
                                   ? dyn_cast<scf::ParallelOp>(loops->front())
                                   : scf::ParallelOp();
    if (!parallel) {
      // No parallel loop (a full reduction or a 0-d op): one thread runs
      // it, in a one-iteration parallel loop so that it still becomes a
      // kernel rather than host code.
      Operation *first = loops->empty() ? nullptr : loops->front();
      Block *block = first ? first->getBlock() : nullptr;
      if (!first || !block) {
        continue;
      }
      rewriter.setInsertionPoint(first);
      Location loc = first->getLoc();
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      auto wrapper = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                             ValueRange{one}, ValueRange{one});
      rewriter.moveOpBefore(first, wrapper.getBody()->getTerminator());
      parallel = wrapper;
    }
    if (parallel.getNumLoops() > 1) {
      std::vector<unsigned> all(parallel.getNumLoops());
      std::iota(all.begin(), all.end(), 0);
      // The collapsed loop replaces `parallel` at the same place.
      Block *block = parallel->getBlock();
      Operation *next = parallel->getNextNode();
      rewriter.setInsertionPoint(parallel);
      collapseParallelLoops(rewriter, parallel, {all});
      parallel = nullptr;
      for (Operation *op = next ? next->getPrevNode() : &block->back(); op;
           op = op->getPrevNode()) {
        if ((parallel = dyn_cast<scf::ParallelOp>(op)))
          break;
      }
      if (!parallel) {
        getOperation().emitError("tofu-gpu-parallel-loops: lost a "
                                 "collapsed loop");
        return signalPassFailure();
      }
    }
    scf::tileParallelLoop(parallel, {blockSize}, /*noMinMaxBounds=*/true);
  }
}
