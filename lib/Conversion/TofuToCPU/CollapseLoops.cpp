//===- CollapseLoops.cpp - One loop over contiguous trailing dimensions ---===//
//
// Implements tofu-cpu-collapse-loops: the innermost loops of a linalg.generic
// on buffers that walk the trailing dimensions of its operands contiguously
// become one loop over collapsed views, so that LLVM vectorizes the whole
// run rather than a short innermost loop (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUCPUCOLLAPSELOOPS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// How an operand sees the loops [first, n): not at all, or as its trailing
/// dimensions in order (to be collapsed into one).
enum class Use { None, Trailing, Other };

Use getUse(AffineMap map, unsigned first) {
  unsigned n = map.getNumDims(), group = n - first;
  unsigned results = map.getNumResults();
  bool any = false;
  for (unsigned d = first; d < n; ++d)
    any |= map.isFunctionOfDim(d);
  if (!any)
    return Use::None;
  if (results < group)
    return Use::Other;
  for (unsigned i = 0; i < results; ++i) {
    AffineExpr e = map.getResult(i);
    if (i + group < results) {
      // A leading result may not see the group.
      for (unsigned d = first; d < n; ++d)
        if (e.isFunctionOfDim(d))
          return Use::Other;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || dim.getPosition() != first + (i + group - results))
      return Use::Other;
  }
  return Use::Trailing;
}

/// The reassociation that collapses the last `group` of `rank` dimensions.
SmallVector<ReassociationIndices> getTrailingGroup(unsigned rank,
                                                   unsigned group) {
  SmallVector<ReassociationIndices> groups;
  for (unsigned i = 0; i + group < rank; ++i)
    groups.push_back({static_cast<int64_t>(i)});
  ReassociationIndices last;
  for (unsigned i = rank - group; i < rank; ++i)
    last.push_back(i);
  groups.push_back(last);
  return groups;
}

/// Whether the loops [first, n) of `op` may become one.
bool canCollapse(linalg::GenericOp op, unsigned first) {
  unsigned n = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = first + 1; d < n; ++d)
    if (iterators[d] != iterators[first])
      return false;
  for (OpOperand &operand : op->getOpOperands()) {
    Use use = getUse(op.getMatchingIndexingMap(&operand), first);
    if (use == Use::Other)
      return false;
    if (use == Use::None)
      continue;
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !type.hasStaticShape() ||
        !memref::CollapseShapeOp::isGuaranteedCollapsible(
            type, getTrailingGroup(type.getRank(), n - first)))
      return false;
  }
  return true;
}

void collapse(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.hasIndexSemantics() ||
      op.getNumLoops() < 2 ||
      llvm::any_of(op.getStaticLoopRanges(), ShapedType::isDynamic))
    return;
  unsigned n = op.getNumLoops(), first = n - 1;
  while (first > 0 && canCollapse(op, first - 1))
    --first;
  if (first == n - 1)
    return;

  // The new loops: [0, first) as they were, then the group as loop `first`.
  MLIRContext *ctx = op.getContext();
  SmallVector<AffineExpr> replacements;
  for (unsigned d = 0; d < n; ++d)
    replacements.push_back(getAffineDimExpr(std::min(d, first), ctx));
  IRRewriter rewriter(op);
  Location loc = op.getLoc();
  SmallVector<Value> operands;
  SmallVector<AffineMap> maps;
  for (OpOperand &operand : op->getOpOperands()) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    Value value = operand.get();
    if (getUse(map, first) == Use::None) {
      operands.push_back(value);
      maps.push_back(map.replaceDimsAndSymbols(replacements, {}, first + 1, 0));
      continue;
    }
    auto type = cast<MemRefType>(value.getType());
    unsigned rank = type.getRank(), group = n - first;
    operands.push_back(memref::CollapseShapeOp::create(
        rewriter, loc, value, getTrailingGroup(rank, group)));
    SmallVector<AffineExpr> results(map.getResults().take_front(rank - group));
    results.push_back(getAffineDimExpr(first, ctx));
    maps.push_back(AffineMap::get(first + 1, 0, results, ctx));
  }
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  iterators.resize(first + 1);
  unsigned inputs = op.getNumDpsInputs();
  auto collapsed = linalg::GenericOp::create(
      rewriter, loc, TypeRange{}, ArrayRef(operands).take_front(inputs),
      ArrayRef(operands).drop_front(inputs), maps, iterators);
  rewriter.inlineRegionBefore(op.getRegion(), collapsed.getRegion(),
                              collapsed.getRegion().begin());
  rewriter.eraseOp(op);
}

struct TofuCPUCollapseLoopsPass
    : public tofu::impl::TofuCPUCollapseLoopsBase<TofuCPUCollapseLoopsPass> {
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) { ops.push_back(op); });
    for (linalg::GenericOp op : ops)
      collapse(op);
  }
};

} // namespace
