//===- ParallelLoops.cpp - Linalg ops to kernel-shaped parallel loops -----===//
//
// Implements tofu-gpu-parallel-loops: each linalg op left after the
// library calls becomes one collapsed, tiled scf.parallel (blocks x
// threads) with its reductions as sequential loops inside, ready for
// gpu-map-parallel-loops and convert-parallel-loops-to-gpu; with
// vector-loads, an element-wise op's threads take groups of 16 bytes
// (VectorLoads.cpp).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

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

private:
  LogicalResult collapseAndTile(RewriterBase &rewriter,
                                scf::ParallelOp parallel);
};

/// The loop that walks the contiguous last dimension of the operand of
/// `op` with the most elements (the most memory traffic), if it is a
/// parallel loop: the collapsed thread index varies fastest along the
/// innermost parallel loop, so making it this one makes neighbouring
/// threads read neighbouring elements of that operand.
std::optional<unsigned> getCoalescingLoop(linalg::GenericOp op) {
  std::optional<unsigned> loop;
  int64_t most = -1;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || type.getRank() == 0 || !type.hasStaticShape() ||
        !type.isLastDimUnitStride())
      continue;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    auto dim = dyn_cast<AffineDimExpr>(map.getResults().back());
    if (!dim || type.getNumElements() <= most)
      continue;
    most = type.getNumElements();
    loop = linalg::isParallelIterator(
               op.getIteratorTypesArray()[dim.getPosition()])
               ? std::optional<unsigned>(dim.getPosition())
               : std::nullopt;
  }
  return loop;
}

/// The permutation that puts the parallel loops of `op` first, the
/// coalescing loop last among them, the others in their original order,
/// or an empty vector when they already are.
SmallVector<unsigned> getParallelFirst(linalg::GenericOp op) {
  SmallVector<unsigned> parallel, reduction;
  for (auto [i, t] : llvm::enumerate(op.getIteratorTypesArray()))
    (t == utils::IteratorType::parallel ? parallel : reduction).push_back(i);
  if (std::optional<unsigned> inner = getCoalescingLoop(op)) {
    llvm::erase(parallel, *inner);
    parallel.push_back(*inner);
  }
  SmallVector<unsigned> order(parallel);
  order.append(reduction);
  SmallVector<unsigned> identity(order.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (order == identity)
    return {};
  return order;
}

/// A reduction loop of linalg's lowering loads the output element, combines
/// and stores it back in every iteration: a read and a write of global
/// memory per element reduced. When the loop's only write is the store of
/// a loop-invariant element that one load of the same memref reads, the
/// element is loaded before the loop, carried in a register (an iter_arg)
/// and stored after it. Other loads may stay: a linalg op's inputs do not
/// alias the output it reduces into.
void carryAccumulators(RewriterBase &rewriter, Operation *root) {
  SmallVector<scf::ForOp> loops;
  root->walk([&](scf::ForOp loop) { loops.push_back(loop); }); // Inner first.
  // Two indices are the same when they are one value or computed alike
  // from the same values by pure ops (linalg's lowering applies the
  // indexing maps anew for each access).
  auto sameIndex = [](Value a, Value b) {
    if (a == b)
      return true;
    Operation *x = a.getDefiningOp(), *y = b.getDefiningOp();
    return x && y && isPure(x) && isPure(y) &&
           OperationEquivalence::isEquivalentTo(
               x, y, OperationEquivalence::IgnoreLocations);
  };
  for (scf::ForOp loop : loops) {
    moveLoopInvariantCode(cast<LoopLikeOpInterface>(loop.getOperation()));
    Block *body = loop.getBody();
    memref::StoreOp store;
    int writes = 0;
    body->walk([&](Operation *op) {
      if (isa<memref::StoreOp>(op) && op->getBlock() == body)
        store = cast<memref::StoreOp>(op);
      if (!isMemoryEffectFree(op) && !isa<memref::LoadOp>(op) &&
          !isa<scf::YieldOp, scf::ForOp>(op))
        ++writes;
    });
    if (!store || writes != 1)
      continue;
    auto invariant = [&](Value v) { return loop.isDefinedOutsideOfLoop(v); };
    if (!invariant(store.getMemRef()) ||
        !llvm::all_of(store.getIndices(), invariant))
      continue;
    memref::LoadOp load;
    int loadsOfMemRef = 0;
    body->walk([&](memref::LoadOp l) {
      if (l.getMemRef() != store.getMemRef())
        return;
      ++loadsOfMemRef;
      if (l->getBlock() == body &&
          llvm::equal(l.getIndices(), store.getIndices(), sameIndex))
        load = l;
    });
    if (!load || loadsOfMemRef != 1 || !load->isBeforeInBlock(store) ||
        !llvm::all_of(load.getIndices(), invariant))
      continue;
    rewriter.moveOpBefore(load, loop);
    Value stored = store.getValueToStore();
    FailureOr<LoopLikeOpInterface> carried = loop.replaceWithAdditionalYields(
        rewriter, ValueRange{load.getResult()},
        /*replaceInitOperandUsesInLoop=*/true,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{stored};
        });
    if (failed(carried))
      continue;
    Operation *newLoop = carried->getOperation();
    rewriter.moveOpAfter(store, newLoop);
    rewriter.modifyOpInPlace(store, [&] {
      store.getValueMutable().assign(newLoop->getResults().back());
    });
  }
}

} // namespace

/// Collapses the loops of `parallel` into one (row-major: the innermost
/// loop varies fastest) and tiles it by the block size, with a guard
/// instead of min/max bounds.
LogicalResult
TofuGPUParallelLoopsPass::collapseAndTile(RewriterBase &rewriter,
                                          scf::ParallelOp parallel) {
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
    if (!parallel)
      return getOperation().emitError("tofu-gpu-parallel-loops: lost a "
                                      "collapsed loop");
  }
  scf::tileParallelLoop(parallel, {blockSize}, /*noMinMaxBounds=*/true);
  return success();
}

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
    if (vectorLoads) {
      rewriter.setInsertionPoint(generic);
      if (scf::ParallelOp vector = tofu::lowerToVectorLoop(rewriter, generic)) {
        rewriter.eraseOp(generic);
        if (failed(collapseAndTile(rewriter, vector)))
          return signalPassFailure();
        continue;
      }
    }
    bool hasParallel = generic.getNumParallelLoops() > 0;
    // A 0-d op lowers to scalar code without a loop, emitted right before
    // it: the ops between `before` and the op.
    Operation *before = generic->getPrevNode();
    Block *block = generic->getBlock();
    rewriter.setInsertionPoint(generic);
    FailureOr<linalg::LinalgLoops> loops =
        linalg::linalgOpToParallelLoops(rewriter, generic);
    if (failed(loops)) {
      generic->emitOpError("tofu-gpu-parallel-loops: cannot lower to loops");
      return signalPassFailure();
    }
    SmallVector<Operation *> emitted;
    for (Operation *it = before ? before->getNextNode() : &block->front();
         it != generic.getOperation(); it = it->getNextNode())
      emitted.push_back(it);
    rewriter.eraseOp(generic);
    scf::ParallelOp parallel = hasParallel && !loops->empty()
                                   ? dyn_cast<scf::ParallelOp>(loops->front())
                                   : scf::ParallelOp();
    if (!parallel) {
      // No parallel loop (a full reduction or a 0-d op): one thread runs
      // it, in a one-iteration parallel loop, so that it becomes a kernel
      // rather than host code (which would need the host to wait for the
      // GPU and the buffers in host-reachable memory).
      if (!loops->empty())
        emitted.assign({loops->front()});
      if (emitted.empty())
        continue;
      rewriter.setInsertionPoint(emitted.front());
      Location loc = emitted.front()->getLoc();
      Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
      Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
      auto wrapper = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                             ValueRange{one}, ValueRange{one});
      for (Operation *op : emitted)
        rewriter.moveOpBefore(op, wrapper.getBody()->getTerminator());
      parallel = wrapper;
    }
    carryAccumulators(rewriter, parallel);
    if (failed(collapseAndTile(rewriter, parallel)))
      return signalPassFailure();
  }
}
