//===- InsertSlicesInPlace.cpp - Slices written where they are made -------===//
//
// Implements tofu-insert-slices-in-place: a tensor assembled from disjoint
// slices (a concat, or the inserts that tofu-fuse-elementwise makes of a
// sum of zero-padded slices) gets its inserts next to the ops that make
// the slices, so that eliminate-empty-tensors can have each of those ops
// write into its slice and one-shot bufferization copies nothing.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUINSERTSLICESINPLACE
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// `insert_slice(expand_shape(x))`, where the expand only adds unit
/// dimensions, becomes a rank-reducing `insert_slice(x)`: the same
/// elements in the same order, and a source that eliminate-empty-tensors
/// can trace to the op that makes it.
struct InsertUnexpanded : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    auto expand = insert.getSource().getDefiningOp<tensor::ExpandShapeOp>();
    if (!expand || !expand.getSrcType().hasStaticShape() ||
        ShapedType::isDynamicShape(insert.getStaticSizes()))
      return failure();
    for (const ReassociationIndices &group : expand.getReassociationIndices())
      if (llvm::count_if(group, [&](int64_t d) {
            return expand.getResultType().getDimSize(d) != 1;
          }) > 1)
        return failure();
    auto box = RankedTensorType::get(insert.getStaticSizes(),
                                     expand.getSrcType().getElementType());
    if (isRankReducedType(box, expand.getSrcType()) !=
        SliceVerificationResult::Success)
      return failure();
    rewriter.replaceOpWithNewOp<tensor::InsertSliceOp>(
        insert, expand.getSrc(), insert.getDest(), insert.getMixedOffsets(),
        insert.getMixedSizes(), insert.getMixedStrides());
    return success();
  }
};

/// The static box of an insert with unit strides, or nothing.
std::optional<std::pair<ArrayRef<int64_t>, ArrayRef<int64_t>>>
getBox(tensor::InsertSliceOp insert) {
  if (!insert.hasUnitStride() ||
      ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
      ShapedType::isDynamicShape(insert.getStaticSizes()))
    return std::nullopt;
  return std::make_pair(insert.getStaticOffsets(), insert.getStaticSizes());
}

bool areDisjoint(tensor::InsertSliceOp a, tensor::InsertSliceOp b) {
  auto [aLo, aSize] = *getBox(a);
  auto [bLo, bSize] = *getBox(b);
  for (size_t d = 0; d < aLo.size(); ++d)
    if (aLo[d] + aSize[d] <= bLo[d] || bLo[d] + bSize[d] <= aLo[d])
      return true;
  return false;
}

/// A chain `insert(s_n, ... insert(s_1, root))` in one block, innermost
/// first, of disjoint static boxes, each result used only by the next
/// insert; `root` is a static tensor.empty or a fill of one.
struct InsertChain {
  SmallVector<Operation *> root;
  SmallVector<tensor::InsertSliceOp> inserts;
};

std::optional<InsertChain> matchChain(tensor::InsertSliceOp last) {
  InsertChain chain;
  Block *block = last->getBlock();
  Value v = last.getResult();
  while (auto insert = v.getDefiningOp<tensor::InsertSliceOp>()) {
    if (insert->getBlock() != block || !getBox(insert) ||
        (insert != last && !v.hasOneUse()))
      return std::nullopt;
    chain.inserts.push_back(insert);
    v = insert.getDest();
  }
  std::reverse(chain.inserts.begin(), chain.inserts.end());
  if (auto fill = v.getDefiningOp<linalg::FillOp>()) {
    if (!v.hasOneUse() || fill->getBlock() != block)
      return std::nullopt;
    chain.root.push_back(fill);
    v = fill.getDpsInitOperand(0)->get();
  }
  auto empty = v.getDefiningOp<tensor::EmptyOp>();
  if (!empty || !empty.getType().hasStaticShape() ||
      empty->getBlock() != block || !v.hasOneUse())
    return std::nullopt;
  chain.root.insert(chain.root.begin(), empty);
  for (size_t i = 0; i < chain.inserts.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (!areDisjoint(chain.inserts[i], chain.inserts[j]))
        return std::nullopt;
  return chain;
}

/// The op of `block` at or around `v`'s definition: nullptr when `v` is
/// defined before the block starts (an argument, or in an enclosing block).
Operation *getDefinitionIn(Block *block, Value v) {
  Operation *def = v.getDefiningOp();
  return def ? block->findAncestorOpInBlock(*def) : nullptr;
}

bool isBefore(Operation *a, Operation *b) {
  return !a ? b != nullptr : b && a->isBeforeInBlock(b);
}

/// Rebuilds `chain` with its root before the first op that makes one of
/// its slices and each insert right after the op that makes its slice, in
/// the order those ops run. Disjoint inserts commute, so the tensor is the
/// same.
void reorder(InsertChain &chain, RewriterBase &rewriter) {
  Block *block = chain.inserts.front()->getBlock();
  SmallVector<std::pair<Operation *, tensor::InsertSliceOp>> bySource;
  for (tensor::InsertSliceOp insert : chain.inserts)
    bySource.push_back({getDefinitionIn(block, insert.getSource()), insert});
  std::stable_sort(
      bySource.begin(), bySource.end(),
      [](const auto &a, const auto &b) { return isBefore(a.first, b.first); });
  // The root moves up to the first source made in the block unless a
  // fill's value is defined after it.
  Operation *rootAnchor = nullptr;
  for (auto &entry : bySource)
    if ((rootAnchor = entry.first))
      break;
  Operation *fill = chain.root.size() > 1 ? chain.root.back() : nullptr;
  Operation *valueDef =
      fill ? getDefinitionIn(block, fill->getOperand(0)) : nullptr;
  if (rootAnchor && rootAnchor->isBeforeInBlock(chain.root.front()) &&
      !isBefore(rootAnchor, valueDef) && rootAnchor != valueDef)
    for (Operation *op : chain.root)
      rewriter.moveOpBefore(op, rootAnchor);
  Operation *previous = chain.root.back();
  Value dest = previous->getResult(0);
  for (auto [def, insert] : bySource) {
    Operation *after = isBefore(previous, def) ? def : previous;
    rewriter.setInsertionPointAfter(after);
    auto rebuilt = tensor::InsertSliceOp::create(
        rewriter, insert.getLoc(), insert.getSource(), dest,
        insert.getMixedOffsets(), insert.getMixedSizes(),
        insert.getMixedStrides());
    previous = rebuilt;
    dest = rebuilt.getResult();
  }
  rewriter.replaceAllUsesWith(chain.inserts.back().getResult(), dest);
  for (tensor::InsertSliceOp insert : llvm::reverse(chain.inserts))
    rewriter.eraseOp(insert);
}

struct TofuInsertSlicesInPlacePass
    : public tofu::impl::TofuInsertSlicesInPlaceBase<
          TofuInsertSlicesInPlacePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    tensor::populateDecomposeTensorConcatPatterns(patterns);
    patterns.add<InsertUnexpanded>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    IRRewriter rewriter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // The training driver's tensors go to runtime calls as they are.
      if (func.isExternal() || func->hasAttr(tofu::attrs::kDriver))
        continue;
      if (failed(applyPatternsGreedily(func, frozen)))
        func.emitWarning("tofu-insert-slices-in-place: the rewrite did not "
                         "converge; some inserts stay as they were");
      SmallVector<InsertChain> chains;
      func.walk([&](tensor::InsertSliceOp insert) {
        bool continues =
            insert->hasOneUse() &&
            isa<tensor::InsertSliceOp>(*insert->getUsers().begin()) &&
            cast<tensor::InsertSliceOp>(*insert->getUsers().begin())
                    .getDest() == insert.getResult();
        if (!continues)
          if (std::optional<InsertChain> chain = matchChain(insert))
            chains.push_back(std::move(*chain));
      });
      for (InsertChain &chain : chains)
        reorder(chain, rewriter);
    }
  }
};

} // namespace
