//===- FuseElementwise.cpp - Element-wise fusion around library calls -----===//
//
// Implements tofu-fuse-elementwise, which both backends run: upstream
// element-wise fusion of linalg.generic ops on tensors, controlled so that
// every matrix product and convolution stays a library call, and nothing
// is recomputed unless asked.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"
#include "tofu/Transforms/ScalarDerivative.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#include <numeric>

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

/// Whether `v` is a slice of another tensor, through reshapes. A product
/// that accumulates into such a view writes into the other tensor's
/// buffer, which one-shot bufferization cannot prove free of later reads
/// (the other slices of a batched product): it copies the slice first.
static bool isSliceView(Value v) {
  while (Operation *definer = v.getDefiningOp()) {
    if (isa<tensor::ExtractSliceOp>(definer))
      return true;
    if (!isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp>(definer))
      return false;
    v = definer->getOperand(0);
  }
  return false;
}

/// A sum `a + p` of two tensors, where `p` is the only use of a product (a
/// GEMM or a convolution by the shared matchers) that accumulates into a
/// zero fill, becomes the product accumulating into `a`: library calls then
/// add into `a`'s buffer with beta = 1. tofu-autodiff sums a weight's
/// gradient over its uses this way; for an LSTM's input weights, one
/// product per time step, each zeroing and writing a whole weight-sized
/// result that the sum then reads again. Only the rounding changes: the
/// product adds its terms to `a` instead of to zero and then to `a`.
/// A term `a` that is a slice of another tensor stays a sum: accumulating
/// into it would cost a copy of the slice, where the sum fuses with the
/// element-wise ops around it (an LSTM cell's gates, which add the
/// recurrent product to their time step's slice of the batched input
/// product).
struct AccumulateIntoProduct : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!tofu::isTensorSum(op))
      return failure();
    // The later-defined product first: the other term then already
    // dominates it.
    for (unsigned i : {1u, 0u}) {
      Value term = op.getDpsInputs()[i], other = op.getDpsInputs()[1 - i];
      auto product = term.getDefiningOp<linalg::LinalgOp>();
      if (!product || !term.hasOneUse() || product->getNumResults() != 1 ||
          product.getNumDpsInits() != 1 || !tofu::isProductOp(product))
        continue;
      OpOperand *init = product.getDpsInitOperand(0);
      auto fill = init->get().getDefiningOp<linalg::FillOp>();
      if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()) ||
          isSliceView(other))
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

/// A static box of a tensor: the offsets and sizes of a unit-stride slice.
struct SliceBox {
  SmallVector<int64_t> offsets, sizes;
  bool overlaps(const SliceBox &other) const {
    for (auto [lo, size, otherLo, otherSize] :
         llvm::zip_equal(offsets, sizes, other.offsets, other.sizes))
      if (lo + size <= otherLo || otherLo + otherSize <= lo)
        return false;
    return true;
  }
};

/// The slices inserted into a zero fill, innermost first: `v` is
/// `insert_slice(s_n, ... insert_slice(s_1, fill(0)))`, each insert with
/// static offsets and sizes, unit strides and no other use than the next.
struct ZeroPaddedSlices {
  linalg::FillOp fill;
  SmallVector<tensor::InsertSliceOp> inserts;
  SmallVector<SliceBox> boxes;
};

std::optional<ZeroPaddedSlices> matchZeroPaddedSlices(Value v) {
  ZeroPaddedSlices result;
  while (auto insert = v.getDefiningOp<tensor::InsertSliceOp>()) {
    if (!v.hasOneUse() || !insert.hasUnitStride() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
        ShapedType::isDynamicShape(insert.getStaticSizes()))
      return std::nullopt;
    result.inserts.push_back(insert);
    result.boxes.push_back({llvm::to_vector(insert.getStaticOffsets()),
                            llvm::to_vector(insert.getStaticSizes())});
    v = insert.getDest();
  }
  result.fill = v.getDefiningOp<linalg::FillOp>();
  if (!result.fill || !v.hasOneUse() ||
      !matchPattern(result.fill.value(), m_AnyZeroFloat()))
    return std::nullopt;
  std::reverse(result.inserts.begin(), result.inserts.end());
  std::reverse(result.boxes.begin(), result.boxes.end());
  return result;
}

/// Whether the body of `op` yields the sum of its inputs, each once.
bool yieldsSumOfInputs(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  SmallVector<Value> pending = {yield.getValues()[0]};
  llvm::SmallPtrSet<Value, 8> leaves;
  unsigned adds = 0;
  while (!pending.empty()) {
    Value v = pending.pop_back_val();
    if (auto add = v.getDefiningOp<arith::AddFOp>();
        add && add->getBlock() == &body) {
      if (!add->hasOneUse())
        return false;
      ++adds;
      pending.append({add.getLhs(), add.getRhs()});
      continue;
    }
    if (!llvm::is_contained(op.getRegionInputArgs(), v) ||
        !leaves.insert(v).second)
      return false;
  }
  return leaves.size() == op.getNumDpsInputs() &&
         body.getOperations().size() == adds + 1;
}

/// A sum of tensors that are zeros but for disjoint slices becomes those
/// slices inserted into one tensor. tofu-autodiff gives each use of a
/// slice (an LSTM's four gates of one product) a gradient of the whole
/// tensor, zero outside the slice, and sums them: four fills, four
/// inserts and a sum over four whole tensors per cell, where one tensor
/// and its inserts do (and no fill when the slices cover it). Exact: no
/// element is added to anything but zeros, up to the sign of zeros (a -0.0
/// slice element now stays -0.0; outside the slices the first fill's zero
/// stands where fills of both signs were summed).
struct SumOfDisjointSlices : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || op.getNumDpsInits() != 1 ||
        op->getNumResults() != 1 || op.getNumDpsInputs() < 2 ||
        op.getNumReductionLoops() != 0 ||
        !llvm::all_of(op.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); }) ||
        !yieldsSumOfInputs(op))
      return failure();
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    if (!type.hasStaticShape())
      return failure();
    SmallVector<ZeroPaddedSlices> terms;
    SmallVector<SliceBox> boxes;
    int64_t covered = 0;
    for (Value input : op.getDpsInputs()) {
      std::optional<ZeroPaddedSlices> term = matchZeroPaddedSlices(input);
      if (!term || input.getType() != type)
        return failure();
      for (const SliceBox &box : term->boxes) {
        if (llvm::any_of(boxes,
                         [&](const SliceBox &b) { return b.overlaps(box); }))
          return failure();
        boxes.push_back(box);
        covered += std::accumulate(box.sizes.begin(), box.sizes.end(),
                                   int64_t(1), std::multiplies<int64_t>());
      }
      terms.push_back(std::move(*term));
    }
    if (boxes.empty())
      return failure();
    // Slices that cover the tensor leave nothing of the fill.
    Location loc = op.getLoc();
    Value result = covered == type.getNumElements()
                       ? tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                                 type.getElementType())
                             .getResult()
                       : terms.front().fill.getResult(0);
    for (const ZeroPaddedSlices &term : terms)
      for (tensor::InsertSliceOp insert : term.inserts)
        result = tensor::InsertSliceOp::create(
            rewriter, loc, insert.getSource(), result, insert.getMixedOffsets(),
            insert.getMixedSizes(), insert.getMixedStrides());
    rewriter.replaceOp(op, result);
    return success();
  }
};

/// Whether `operand`'s op may take in its producer: a linalg op that does
/// not become a library call (a GEMM or a convolution).
bool takesProducer(OpOperand &operand) {
  auto consumer = dyn_cast<linalg::LinalgOp>(operand.getOwner());
  return consumer && !tofu::isProductOp(consumer);
}

/// Whether `op`'s body reads its outputs (an accumulation).
bool readsOutputs(linalg::GenericOp op) {
  return llvm::any_of(op.getRegionOutputArgs(),
                      [](BlockArgument a) { return !a.use_empty(); });
}

/// Whether the all-parallel `producer` may fuse into the consumer of
/// `operand` while its results stay available to their other uses (the
/// fused op yields them too): the consumer is an all-parallel generic over
/// the same loops that reads each of the producer's elements once (both
/// maps are permutations), so nothing is recomputed and each preserved
/// result is written once, and every other use comes after the consumer,
/// where the fused op stands. Adam's new moments are such producers: the
/// weight's update reads them and the step returns them; fused, the
/// update of a weight is one pass over memory instead of three.
bool fusesKeepingResults(linalg::GenericOp producer, OpOperand *operand,
                         unsigned maxOperands) {
  auto consumer = dyn_cast<linalg::GenericOp>(operand->getOwner());
  if (!consumer || consumer->getBlock() != producer->getBlock() ||
      producer.getNumLoops() != producer.getNumParallelLoops() ||
      consumer.getNumLoops() != consumer.getNumParallelLoops() ||
      consumer.getNumLoops() != producer.getNumLoops() ||
      !consumer.getMatchingIndexingMap(operand).isPermutation() ||
      consumer->getNumOperands() - 1 + producer->getNumOperands() >
          maxOperands ||
      !linalg::areElementwiseOpsFusable(operand))
    return false;
  // A consumer that also writes into the producer's result would keep the
  // producer alive for its init and compute the producer's body again.
  if (llvm::any_of(consumer.getDpsInits(), [&](Value init) {
        return init.getDefiningOp() == producer.getOperation();
      }))
    return false;
  for (OpResult result : producer->getResults()) {
    if (!producer.getIndexingMapMatchingResult(result).isPermutation())
      return false;
    for (Operation *user : result.getUsers()) {
      if (user == consumer)
        continue;
      Operation *ancestor = consumer->getBlock()->findAncestorOpInBlock(*user);
      if (!ancestor || !consumer->isBeforeInBlock(ancestor))
        return false;
    }
  }
  return true;
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
  if (!generic || readsOutputs(generic))
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

/// Fuses a producer with other uses into a consumer where
/// fusesKeepingResults allows it; the producer's results then come from
/// the fused op for every use.
/// With `duplicate`, a producer that shouldFuse duplicates into all of its
/// consumers is left to that.
struct FuseKeepingResults : OpRewritePattern<linalg::GenericOp> {
  FuseKeepingResults(MLIRContext *context, bool duplicate)
      : OpRewritePattern(context), duplicate(duplicate) {}
  LogicalResult matchAndRewrite(linalg::GenericOp consumer,
                                PatternRewriter &rewriter) const override {
    if (!consumer.hasPureTensorSemantics())
      return failure();
    for (OpOperand &operand : consumer->getOpOperands()) {
      auto producer = operand.get().getDefiningOp<linalg::GenericOp>();
      if (!producer || producer->hasOneUse() ||
          !producer.hasPureTensorSemantics() || readsOutputs(producer) ||
          (duplicate && shouldFuse(&operand, /*duplicate=*/true)) ||
          !fusesKeepingResults(producer, &operand, kMaxOperands))
        continue;
      FailureOr<linalg::ElementwiseOpFusionResult> fused =
          linalg::fuseElementwiseOps(rewriter, &operand);
      if (failed(fused))
        continue;
      for (auto [original, replacement] : fused->replacements)
        rewriter.replaceUsesWithIf(original, replacement, [&](OpOperand &use) {
          return use.getOwner() != fused->fusedOp;
        });
      if (producer->use_empty())
        rewriter.eraseOp(producer);
      if (consumer->use_empty())
        rewriter.eraseOp(consumer);
      return success();
    }
    return failure();
  }

  /// A fused op that keeps results has an output per result (Adam's
  /// update: gradient, weight, two moments, two step factors, and three
  /// outputs).
  static constexpr unsigned kMaxOperands = 12;
  bool duplicate;
};

/// Folds an input that holds one value everywhere (a linalg.fill's, a
/// splat constant's, a scalar constant) into the body of an op that takes
/// producers: the loops read the scalar instead of the tensor, and the
/// unused input is then erased. Upstream's FoldFillWithGenericOp and
/// FoldScalarOrSplatConstant do this for every linalg.generic, products
/// included, where it turns a GEMM into generated loops with a strided
/// reduction: the partitioned LSTM's product of its zero initial state by
/// a recurrent weight. They are taken out of the pattern set for this one.
struct FoldUniformInput : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(linalg::GenericOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics())
      return failure();
    bool folded = false;
    for (OpOperand *input : op.getDpsInputOperands()) {
      if (!takesProducer(*input) || !op.payloadUsesValueFromOperand(input))
        continue;
      Value scalar = getUniformValue(rewriter, op, input->get());
      if (!scalar)
        continue;
      BlockArgument arg = op.getMatchingBlockArgument(input);
      rewriter.modifyOpInPlace(op, [&] { arg.replaceAllUsesWith(scalar); });
      folded = true;
    }
    return success(folded);
  }

  /// The value that `input` holds everywhere, as a scalar that dominates
  /// `op`: a fill's value, a splat constant's element, or a scalar
  /// operand that is a constant; null otherwise (other scalar operands
  /// stay operands, as upstream leaves them).
  static Value getUniformValue(PatternRewriter &rewriter, Operation *op,
                               Value input) {
    auto shaped = dyn_cast<ShapedType>(input.getType());
    if (!shaped)
      return matchPattern(input, m_Constant()) ? input : Value();
    if (auto fill = input.getDefiningOp<linalg::FillOp>())
      return fill.value();
    SplatElementsAttr splat;
    if (!matchPattern(input, m_Constant(&splat)))
      return Value();
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.setInsertionPoint(op);
    auto constant = arith::ConstantOp::materialize(
        rewriter, splat.getSplatValue<Attribute>(), shaped.getElementType(),
        op->getLoc());
    return constant ? constant.getResult() : Value();
  }
};

/// Removes from `patterns` the pattern of each of `names` (a class name,
/// in or out of a namespace), and says whether it found exactly one of
/// each.
static bool removePatterns(RewritePatternSet &patterns,
                           ArrayRef<StringRef> names) {
  auto &native = patterns.getNativePatterns();
  for (StringRef name : names) {
    auto named = [&](const std::unique_ptr<RewritePattern> &pattern) {
      StringRef debugName = pattern->getDebugName();
      return debugName == name ||
             (debugName.ends_with(name) &&
              debugName.drop_back(name.size()).ends_with("::"));
    };
    if (llvm::count_if(native, named) != 1)
      return false;
    llvm::erase_if(native, named);
  }
  return true;
}

struct TofuFuseElementwisePass
    : public tofu::impl::TofuFuseElementwiseBase<
          TofuFuseElementwisePass> {
  using Base::Base;
  void runOnOperation() override {
    // Sums into products and slices first, before fusion merges the sums'
    // chain; permuting copies that products read or make folded into the
    // products' maps. A chain of T sums (a gradient summed over T time steps)
    // may take T rounds of the driver; each rewrite removes a linalg.generic
    // and creates none, so no limit is needed.
    RewritePatternSet accumulations(&getContext());
    accumulations.add<AccumulateIntoProduct, SumOfDisjointSlices>(
        &getContext());
    tofu::populatePermutedOperandPatterns(accumulations);
    applyToSteps(std::move(accumulations),
                 GreedyRewriteConfig().setMaxIterations(
                     GreedyRewriteConfig::kNoLimit));
    RewritePatternSet patterns(&getContext());
    patterns.add<DropZeroAccumulation>(&getContext());
    // Again: tofu-autodiff's gradient of a transpose accumulates into a
    // zero fill, a permuting copy only once DropZeroAccumulation has made
    // it a map (and folding has dropped its product by 1.0).
    tofu::populatePermutedOperandPatterns(patterns);
    bool fuseIntoAll = duplicate;
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [fuseIntoAll](OpOperand *operand) {
          return shouldFuse(operand, fuseIntoAll);
        });
    if (!removePatterns(
            patterns, {"FoldFillWithGenericOp", "FoldScalarOrSplatConstant"})) {
      getOperation().emitError("tofu-fuse-elementwise: this MLIR's "
                               "element-wise fusion patterns are not those "
                               "it was written for");
      return signalPassFailure();
    }
    patterns.add<FoldUniformInput>(&getContext());
    if (keepResults)
      patterns.add<FuseKeepingResults>(&getContext(), duplicate);
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    applyToSteps(std::move(patterns), GreedyRewriteConfig());
  }

  /// Applies `patterns` to every function but the training driver, whose
  /// tensors are handed to runtime calls through bufferization.to_buffer.
  /// Every pattern keeps the program's meaning, so a driver that stops
  /// early leaves a correct program with fewer ops rewritten: a warning.
  void applyToSteps(RewritePatternSet &&patterns,
                    const GreedyRewriteConfig &config) {
    FrozenRewritePatternSet frozen(std::move(patterns));
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (!func.isExternal() && !func->hasAttr(tofu::attrs::kDriver) &&
          failed(applyPatternsGreedily(func, frozen, config)))
        func.emitWarning("tofu-fuse-elementwise: the rewrite did not "
                         "converge; some ops stay as they were");
  }
};

} // namespace
