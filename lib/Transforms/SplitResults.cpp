//===- SplitResults.cpp - One linalg.generic per result -------------------===//
//
// The tofu-split-results pass: a linalg.generic that yields several
// independent results (torch-mlir's adaptive average pooling sums each
// window and yields the window's size) becomes one generic per result, each
// with the body ops its value depends on. A result that does not read its
// accumulator and depends only on the loops of its output map becomes a
// parallel generic over those loops.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUSPLITRESULTS
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// The body ops that one yielded value depends on, and the block arguments
/// it reads.
struct ResultSlice {
  llvm::SetVector<Operation *> ops;
  llvm::SmallDenseSet<unsigned> args;
  llvm::SmallDenseSet<unsigned> indexDims;
};

/// The slice of `value` in `body`, or std::nullopt if an op of it holds
/// regions.
static std::optional<ResultSlice> getSlice(Block *body, Value value) {
  ResultSlice slice;
  SmallVector<Value> worklist{value};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() == body)
        slice.args.insert(arg.getArgNumber());
      continue;
    }
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != body || slice.ops.contains(def))
      continue;
    if (def->getNumRegions() != 0)
      return std::nullopt;
    slice.ops.insert(def);
    if (auto index = dyn_cast<linalg::IndexOp>(def))
      slice.indexDims.insert(index.getDim());
    llvm::append_range(worklist, def->getOperands());
  }
  return slice;
}

/// Clones the ops of `slice` in body order into `b`, with `mapping` holding
/// the new block arguments and `remapDim` the new loop of each index.
static Value cloneSlice(OpBuilder &b, Block *body, const ResultSlice &slice,
                        Value yielded, IRMapping &mapping,
                        ArrayRef<int64_t> remapDim) {
  for (Operation &op : body->without_terminator()) {
    if (!slice.ops.contains(&op))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(&op)) {
      Value newIndex = linalg::IndexOp::create(b, op.getLoc(),
                                               remapDim[index.getDim()]);
      mapping.map(index.getResult(), newIndex);
      continue;
    }
    b.clone(op, mapping);
  }
  return mapping.lookupOrDefault(yielded);
}

/// Splits `op` into one generic per used result; leaves it unchanged if a
/// used result reads another's accumulator or an op of a slice holds
/// regions.
static void splitResults(linalg::GenericOp op) {
  Block *body = op.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  unsigned numInputs = op.getNumDpsInputs();
  unsigned numResults = op->getNumResults();
  // Results nobody uses (the indices of a max that only the max feeds) are
  // dropped, and may read the others' accumulators.
  SmallVector<unsigned> kept;
  for (unsigned r = 0; r < numResults; ++r)
    if (!op->getResult(r).use_empty())
      kept.push_back(r);
  if (kept.empty())
    return;
  SmallVector<ResultSlice> slices(numResults);
  for (unsigned r : kept) {
    std::optional<ResultSlice> slice = getSlice(body, yield.getOperand(r));
    if (!slice)
      return;
    for (unsigned a : slice->args)
      if (a >= numInputs && a != numInputs + r)
        return;
    slices[r] = std::move(*slice);
  }

  OpBuilder b(op);
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned numLoops = op.getNumLoops();
  SmallVector<Value> results(numResults);
  for (unsigned r : kept) {
    const ResultSlice &slice = slices[r];
    Value init = op.getDpsInitOperand(r)->get();
    AffineMap outMap = maps[numInputs + r];
    // The loops of the output map, if the value depends on no other loop.
    llvm::SmallDenseSet<unsigned> outDims;
    bool projected = outMap.isProjectedPermutation(/*allowZeroInResults=*/false);
    for (AffineExpr e : outMap.getResults())
      if (auto d = dyn_cast<AffineDimExpr>(e))
        outDims.insert(d.getPosition());
    bool parallel = projected && !slice.args.contains(numInputs + r);
    for (unsigned d : slice.indexDims)
      parallel &= outDims.contains(d);
    for (unsigned a : slice.args)
      if (a < numInputs)
        for (unsigned d = 0; d < numLoops; ++d)
          if (maps[a].isFunctionOfDim(d))
            parallel &= outDims.contains(d);

    SmallVector<Value> inputs;
    SmallVector<AffineMap> newMaps;
    SmallVector<utils::IteratorType> newIterators;
    SmallVector<int64_t> remapDim(numLoops, -1);
    SmallVector<unsigned> inputArgs;
    if (parallel) {
      // Loops in the order the output map lists them.
      SmallVector<AffineExpr> replacements(numLoops,
                                           b.getAffineConstantExpr(0));
      for (auto [i, e] : llvm::enumerate(outMap.getResults())) {
        unsigned d = cast<AffineDimExpr>(e).getPosition();
        remapDim[d] = i;
        replacements[d] = b.getAffineDimExpr(i);
      }
      unsigned newLoops = outMap.getNumResults();
      for (unsigned a = 0; a < numInputs; ++a) {
        if (!slice.args.contains(a))
          continue;
        inputs.push_back(op.getDpsInputOperand(a)->get());
        newMaps.push_back(maps[a].replaceDimsAndSymbols(replacements, {},
                                                         newLoops, 0));
        inputArgs.push_back(a);
      }
      newMaps.push_back(
          outMap.replaceDimsAndSymbols(replacements, {}, newLoops, 0));
      newIterators.assign(newLoops, utils::IteratorType::parallel);
    } else {
      for (unsigned a = 0; a < numInputs; ++a) {
        inputs.push_back(op.getDpsInputOperand(a)->get());
        newMaps.push_back(maps[a]);
        inputArgs.push_back(a);
      }
      newMaps.push_back(outMap);
      newIterators = iterators;
      for (unsigned d = 0; d < numLoops; ++d)
        remapDim[d] = d;
    }
    auto generic = linalg::GenericOp::create(
        b, op.getLoc(), TypeRange{init.getType()}, inputs, ValueRange{init},
        newMaps, newIterators,
        [&](OpBuilder &nb, Location loc, ValueRange args) {
          IRMapping mapping;
          for (auto [i, a] : llvm::enumerate(inputArgs))
            mapping.map(body->getArgument(a), args[i]);
          mapping.map(body->getArgument(numInputs + r), args.back());
          Value v = cloneSlice(nb, body, slice, yield.getOperand(r), mapping,
                               remapDim);
          linalg::YieldOp::create(nb, loc, v);
        });
    generic->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    results[r] = generic.getResult(0);
  }
  for (unsigned r : kept)
    op->getResult(r).replaceAllUsesWith(results[r]);
  op->erase();
}

struct TofuSplitResultsPass
    : public tofu::impl::TofuSplitResultsBase<TofuSplitResultsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->getNumResults() > 1 && op.hasPureTensorSemantics())
        ops.push_back(op);
    });
    for (linalg::GenericOp op : ops)
      splitResults(op);
  }
};

} // namespace
