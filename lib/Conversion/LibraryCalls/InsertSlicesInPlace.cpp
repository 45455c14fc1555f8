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

/// A concat of static shape becomes inserts into a tensor.empty
/// (upstream's decomposition). Dynamic ones stay: their inserts would need
/// offsets computed at run time, which the chains below do not take.
struct DecomposeStaticConcat : OpRewritePattern<tensor::ConcatOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(tensor::ConcatOp concat,
                                PatternRewriter &rewriter) const override {
    if (!concat.getResultType().hasStaticShape() ||
        !llvm::all_of(concat.getInputs(), [](Value input) {
          return cast<RankedTensorType>(input.getType()).hasStaticShape();
        }))
      return failure();
    FailureOr<SmallVector<Value>> decomposed =
        concat.decomposeOperation(rewriter);
    if (failed(decomposed))
      return failure();
    rewriter.replaceOp(concat, *decomposed);
    return success();
  }
};

/// Whether an insert has a static box: static offsets and sizes, and
/// strides that are the attribute 1 (not a value that is 1, which a moved
/// insert might no longer be dominated by).
bool hasStaticBox(tensor::InsertSliceOp insert) {
  return !ShapedType::isDynamicShape(insert.getStaticOffsets()) &&
         !ShapedType::isDynamicShape(insert.getStaticSizes()) &&
         llvm::all_of(insert.getStaticStrides(),
                      [](int64_t stride) { return stride == 1; });
}

/// Whether the static boxes of two inserts into tensors of one shape do
/// not overlap.
bool areDisjoint(tensor::InsertSliceOp a, tensor::InsertSliceOp b) {
  ArrayRef<int64_t> aLo = a.getStaticOffsets(), aSize = a.getStaticSizes();
  ArrayRef<int64_t> bLo = b.getStaticOffsets(), bSize = b.getStaticSizes();
  for (size_t d = 0; d < aLo.size(); ++d)
    if (aLo[d] + aSize[d] <= bLo[d] || bLo[d] + bSize[d] <= aLo[d])
      return true;
  return false;
}

/// The insert that continues a chain after `insert`: its result's only
/// user, a link in the same block that inserts into it.
tensor::InsertSliceOp getNextLink(tensor::InsertSliceOp insert) {
  if (!insert->hasOneUse())
    return {};
  auto next = dyn_cast<tensor::InsertSliceOp>(*insert->getUsers().begin());
  if (!next || next.getDest() != insert.getResult() ||
      next->getBlock() != insert->getBlock() || !hasStaticBox(next))
    return {};
  return next;
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
    if (insert->getBlock() != block || !hasStaticBox(insert) ||
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

/// Whether op `a` of a block runs before op `b` of it, where nullptr
/// stands for the block's start (a value defined before the block).
bool isBefore(Operation *a, Operation *b) {
  return !a ? b != nullptr : b && a->isBeforeInBlock(b);
}

/// Moves the ops of `chain`: its root before the first op that makes one
/// of its slices, and each insert right after the op that makes its
/// slice, in the order those ops run, each inserting into the one before.
/// Disjoint inserts commute, so the tensor is the same.
void reorder(InsertChain &chain, RewriterBase &rewriter) {
  Block *block = chain.inserts.front()->getBlock();
  struct Link {
    Operation *def;  // of the slice; nullptr: before the block
    size_t position; // in the chain
    tensor::InsertSliceOp insert;
  };
  SmallVector<Link> bySource;
  for (auto [position, insert] : llvm::enumerate(chain.inserts))
    bySource.push_back(
        {getDefinitionIn(block, insert.getSource()), position, insert});
  llvm::sort(bySource, [](const Link &a, const Link &b) {
    if (a.def != b.def)
      return isBefore(a.def, b.def);
    return a.position < b.position;
  });
  // The root moves up to the first source made in the block unless a
  // fill's value is defined by that op or after it.
  Operation *rootAnchor = nullptr;
  for (const Link &link : bySource)
    if ((rootAnchor = link.def))
      break;
  Operation *fill = chain.root.size() > 1 ? chain.root.back() : nullptr;
  Operation *valueDef =
      fill ? getDefinitionIn(block, fill->getOperand(0)) : nullptr;
  if (rootAnchor && rootAnchor->isBeforeInBlock(chain.root.front()) &&
      !isBefore(rootAnchor, valueDef) && rootAnchor != valueDef)
    for (Operation *op : chain.root)
      rewriter.moveOpBefore(op, rootAnchor);
  // The tensor's readers, which read the last insert's result from now on.
  SmallVector<OpOperand *> readers;
  for (OpOperand &use : chain.inserts.back()->getUses())
    readers.push_back(&use);
  Operation *previous = chain.root.back();
  for (const Link &link : bySource) {
    tensor::InsertSliceOp insert = link.insert;
    Operation *after = isBefore(previous, link.def) ? link.def : previous;
    Value dest = previous->getResult(0);
    rewriter.moveOpAfter(insert, after);
    rewriter.modifyOpInPlace(insert,
                             [&] { insert.getDestMutable().assign(dest); });
    previous = insert;
  }
  for (OpOperand *use : readers)
    rewriter.modifyOpInPlace(use->getOwner(),
                             [&] { use->set(previous->getResult(0)); });
}

struct TofuInsertSlicesInPlacePass
    : public tofu::impl::TofuInsertSlicesInPlaceBase<
          TofuInsertSlicesInPlacePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<DecomposeStaticConcat, InsertUnexpanded>(&getContext());
    FrozenRewritePatternSet frozen(std::move(patterns));
    // Only these rewrites: no folding, no constants moved, no region
    // simplification of the rest of the function.
    GreedyRewriteConfig config;
    config.enableFolding(false)
        .enableConstantCSE(false)
        .setRegionSimplificationLevel(GreedySimplifyRegionLevel::Disabled);
    IRRewriter rewriter(&getContext());
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      // The training driver's tensors go to runtime calls as they are.
      if (func.isExternal() || func->hasAttr(tofu::attrs::kDriver))
        continue;
      if (failed(applyPatternsGreedily(func, frozen, config)))
        func.emitWarning("tofu-insert-slices-in-place: the rewrite did not "
                         "converge; some inserts stay as they were");
      SmallVector<InsertChain> chains;
      // Each chain from its last link, collected before any op moves.
      func.walk([&](tensor::InsertSliceOp insert) {
        if (hasStaticBox(insert) && !getNextLink(insert))
          if (std::optional<InsertChain> chain = matchChain(insert))
            chains.push_back(std::move(*chain));
      });
      for (InsertChain &chain : chains)
        reorder(chain, rewriter);
    }
  }
};

} // namespace
