//===- SplitReductions.cpp - Long reductions in two levels ----------------===//
//
// Implements tofu-gpu-split-reductions: reductions over several loops
// become partial results over all but the last reduction loop, and long
// single-loop reductions are split by a divisor of their length with
// upstream linalg::splitReduction (inner-parallel), so that a generated
// kernel never reduces a long row in one thread.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/Debug.h"

#include <deque>

#define DEBUG_TYPE "tofu-gpu-split-reductions"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUSPLITREDUCTIONS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

std::pair<Operation *, TypedAttr>
tofu::getReductionCombiner(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1 || op.hasIndexSemantics())
    return {};
  SmallVector<Operation *, 1> combiners;
  BlockArgument out = op.getRegionOutputArgs()[0];
  if (!out.hasOneUse() ||
      !matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return {};
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiners[0]);
  if (!neutral)
    return {};
  return {combiners[0], *neutral};
}

std::optional<unsigned> tofu::getRowLoop(linalg::GenericOp op) {
  std::optional<unsigned> loop;
  int64_t most = -1;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    auto type = dyn_cast<ShapedType>(operand->get().getType());
    if (!type || type.getRank() == 0 || !type.hasStaticShape() ||
        type.getNumElements() <= most)
      continue;
    auto dim = dyn_cast<AffineDimExpr>(
        op.getMatchingIndexingMap(operand).getResults().back());
    most = type.getNumElements();
    loop = dim ? std::optional<unsigned>(dim.getPosition()) : std::nullopt;
  }
  return loop;
}

namespace {

SmallVector<unsigned> getReductionLoops(linalg::GenericOp op) {
  SmallVector<unsigned> loops;
  op.getReductionDims(loops);
  return loops;
}

/// A tensor of `shape` filled with `neutral`.
Value createFilled(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   TypedAttr neutral) {
  Value empty = tensor::EmptyOp::create(b, loc, shape, neutral.getType());
  Value value = arith::ConstantOp::create(b, loc, neutral);
  return linalg::FillOp::create(b, loc, value, empty).getResult(0);
}

/// Turns every reduction loop of `op` but the last into a parallel loop of
/// a partial result, and adds the op that combines the partials into the
/// original output. Returns the combining op.
linalg::GenericOp promoteOuterReductions(RewriterBase &rewriter,
                                         linalg::GenericOp op,
                                         Operation *combiner,
                                         TypedAttr neutral) {
  SmallVector<unsigned> reductions = getReductionLoops(op);
  ArrayRef<unsigned> promoted = ArrayRef<unsigned>(reductions).drop_back();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Location loc = op.getLoc();
  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(op);

  // The partial result: the promoted loops followed by the output's shape,
  // so that the threads of the combining op (one per output element) read
  // neighbouring elements.
  OpOperand *init = op.getDpsInitOperand(0);
  auto initType = cast<RankedTensorType>(init->get().getType());
  SmallVector<int64_t> partialShape;
  SmallVector<AffineExpr> partialResults;
  for (unsigned loop : promoted) {
    partialShape.push_back(ranges[loop]);
    partialResults.push_back(rewriter.getAffineDimExpr(loop));
  }
  llvm::append_range(partialShape, initType.getShape());
  llvm::append_range(partialResults,
                     op.getMatchingIndexingMap(init).getResults());
  Value partialInit = createFilled(rewriter, loc, partialShape, neutral);

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  maps.back() = AffineMap::get(op.getNumLoops(), 0, partialResults,
                               rewriter.getContext());
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop : promoted)
    iterators[loop] = utils::IteratorType::parallel;
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{partialInit.getType()}, op.getInputs(),
      ValueRange{partialInit}, maps, iterators);
  partial->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.cloneRegionBefore(op.getRegion(), partial.getRegion(),
                             partial.getRegion().begin());

  // Combine the partials into the original output: the loops are the
  // output's, then the promoted ones.
  unsigned rank = initType.getRank();
  unsigned combineLoops = rank + promoted.size();
  SmallVector<AffineExpr> partialIndex, outputIndex;
  for (unsigned d = rank; d < combineLoops; ++d)
    partialIndex.push_back(rewriter.getAffineDimExpr(d));
  for (unsigned d = 0; d < rank; ++d) {
    partialIndex.push_back(rewriter.getAffineDimExpr(d));
    outputIndex.push_back(rewriter.getAffineDimExpr(d));
  }
  SmallVector<AffineMap> combineMaps{
      AffineMap::get(combineLoops, 0, partialIndex, rewriter.getContext()),
      AffineMap::get(combineLoops, 0, outputIndex, rewriter.getContext())};
  SmallVector<utils::IteratorType> combineIterators(
      rank, utils::IteratorType::parallel);
  combineIterators.append(promoted.size(), utils::IteratorType::reduction);
  auto combine = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initType}, ValueRange{partial.getResult(0)},
      ValueRange{init->get()}, combineMaps, combineIterators,
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping mapping;
        // The combiner folds the output argument and the reduced value.
        Value outArg = op.getRegionOutputArgs()[0];
        Value other = combiner->getOperand(0) == outArg
                          ? combiner->getOperand(1)
                          : combiner->getOperand(0);
        mapping.map(outArg, args[1]);
        mapping.map(other, args[0]);
        Operation *clone = b.clone(*combiner, mapping);
        linalg::YieldOp::create(b, l, clone->getResult(0));
      });
  combine->setDiscardableAttrs(op->getDiscardableAttrDictionary());
  rewriter.replaceOp(op, combine.getResults());
  return combine;
}

/// The largest divisor of `length` in [2, limit], or 0.
int64_t getSplitRatio(int64_t length, int64_t limit) {
  for (int64_t r = std::min(limit, length / 2); r >= 2; --r)
    if (length % r == 0)
      return r;
  return 0;
}

struct TofuGPUSplitReductionsPass
    : public tofu::impl::TofuGPUSplitReductionsBase<
          TofuGPUSplitReductionsPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void TofuGPUSplitReductionsPass::runOnOperation() {
  if (minLength < 2 || ratio < 2) {
    getOperation().emitError("tofu-gpu-split-reductions: min-length and "
                             "ratio must be at least 2");
    return signalPassFailure();
  }
  std::deque<linalg::GenericOp> worklist;
  getOperation().walk([&](linalg::GenericOp op) { worklist.push_back(op); });
  IRRewriter rewriter(&getContext());
  while (!worklist.empty()) {
    linalg::GenericOp op = worklist.front();
    worklist.pop_front();
    if (!op.hasPureTensorSemantics() || tofu::isLibraryOp(op))
      continue;
    SmallVector<unsigned> reductions = getReductionLoops(op);
    if (reductions.empty())
      continue;
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      continue;
    auto [combiner, neutral] = tofu::getReductionCombiner(op);
    if (!combiner)
      continue;
    if (reductions.size() > 1) {
      int64_t total = 1;
      for (unsigned loop : reductions)
        total *= ranges[loop];
      if (total < minLength)
        continue;
      linalg::GenericOp combine =
          promoteOuterReductions(rewriter, op, combiner, neutral);
      LLVM_DEBUG(llvm::dbgs() << "promoted outer reductions\n");
      // The partial op now has one reduction loop; the combining op may
      // still be long.
      if (auto partial =
              combine.getInputs()[0].getDefiningOp<linalg::GenericOp>())
        worklist.push_back(partial);
      worklist.push_back(combine);
      continue;
    }
    int64_t length = ranges[reductions[0]];
    if (length < minLength)
      continue;
    // Rows that tofu-gpu-warp-reductions takes (f32) stay whole.
    if (!rows && tofu::getRowLoop(op) == reductions[0] &&
        getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
      continue;
    // linalg::splitReduction rewrites each operand's results as loops: an
    // index that is a constant (the unit dimension of a layer norm's
    // keepdim row statistics, `(d0, 0)`) would come out as a loop over a
    // dimension of size 1, an op that does not verify. Such reductions
    // stay whole.
    if (!llvm::all_of(op.getIndexingMapsArray(), [](AffineMap map) {
          return map.isProjectedPermutation();
        }))
      continue;
    int64_t r = getSplitRatio(length, ratio);
    if (!r)
      continue;
    // linalg::splitReduction expects the reduction loop last and the
    // output indexed by the parallel loops in order: interchange the loops
    // into the output's order followed by the reduction (the partials of
    // promoteOuterReductions lead with the promoted loops), and leave any
    // other output layout alone.
    unsigned numLoops = op.getNumLoops();
    SmallVector<unsigned> order;
    for (AffineExpr e :
         op.getMatchingIndexingMap(op.getDpsInitOperand(0)).getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        order.push_back(dim.getPosition());
    order.push_back(reductions[0]);
    SmallVector<unsigned> sorted(order);
    llvm::sort(sorted);
    if (sorted != llvm::to_vector(llvm::seq<unsigned>(0, numLoops)))
      continue;
    if (!llvm::equal(order, llvm::seq<unsigned>(0, numLoops))) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::GenericOp> interchanged =
          linalg::interchangeGenericOp(rewriter, op, order);
      if (failed(interchanged))
        continue;
      op = *interchanged;
    }
    AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    SmallVector<AffineExpr> prefix;
    for (unsigned loop = 0; loop + 1 < numLoops; ++loop)
      prefix.push_back(rewriter.getAffineDimExpr(loop));
    if (outMap != AffineMap::get(numLoops, 0, prefix, &getContext()))
      continue;
    auto control = [&](linalg::LinalgOp) {
      linalg::SplitReductionOptions options;
      options.ratio = r;
      // The partials lead (r x rows): the combining op's threads, one per
      // row, read neighbouring elements.
      options.index = 0;
      options.innerParallel = true;
      return options;
    };
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::SplitReductionResult> split =
        linalg::splitReduction(rewriter, op, control);
    if (failed(split))
      continue;
    LLVM_DEBUG(llvm::dbgs()
               << "split a reduction of " << length << " by " << r << "\n");
    if (auto combine =
            dyn_cast<linalg::GenericOp>(*split->resultCombiningLinalgOp))
      worklist.push_back(combine);
    if (auto partial = dyn_cast<linalg::GenericOp>(*split->splitLinalgOp))
      worklist.push_back(partial);
  }
}
