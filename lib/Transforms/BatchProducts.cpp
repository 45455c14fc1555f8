//===- BatchProducts.cpp - One product over the slices of a tensor --------===//
//
// The tofu-batch-products pass: products (contractions into a zero fill)
// that share one operand and whose other operand is, for each index t of
// a tensor's first dimension, its slice t, become one product over the
// whole tensor with t as an outer parallel loop; each old product's result
// is slice t of the new one. An unrolled RNN multiplies each time step's
// input by the same weight: T products of a few rows, each reading the
// whole weight, become one product of T times the rows (and autodiff then
// derives one weight-gradient product, with K = T times the rows, instead
// of T). Each output element sums the same terms in the same order.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUBATCHPRODUCTS
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// `v` as slice `index` of `whole` along its first dimension: an
/// extract_slice at offsets (index, 0, ...) of sizes (1, whole's other
/// extents), unit strides, either rank-reducing or followed by a
/// collapse_shape that merges the unit dimension into the next one.
struct FirstDimSlice {
  Value whole;
  int64_t index;
};

std::optional<FirstDimSlice> matchFirstDimSlice(Value v) {
  bool collapsed = false;
  if (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>()) {
    collapsed = true;
    auto reassociation = collapse.getReassociationIndices();
    auto source = collapse.getSrcType();
    if (source.getRank() < 2 || source.getDimSize(0) != 1 ||
        reassociation.front() != ReassociationIndices{0, 1})
      return std::nullopt;
    for (auto [i, group] : llvm::enumerate(llvm::drop_begin(reassociation)))
      if (group != ReassociationIndices{int64_t(i) + 2})
        return std::nullopt;
    v = collapse.getSrc();
  }
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice || !slice.hasUnitStride())
    return std::nullopt;
  RankedTensorType whole = slice.getSourceType();
  ArrayRef<int64_t> offsets = slice.getStaticOffsets();
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  if (!whole.hasStaticShape() || whole.getRank() < 2 ||
      ShapedType::isDynamic(offsets[0]) || sizes[0] != 1)
    return std::nullopt;
  // Exactly the first dimension dropped: by the slice itself, or by the
  // collapse of a slice that keeps every dimension.
  llvm::SmallBitVector dropped = slice.getDroppedDims();
  if (collapsed ? dropped.any() : dropped.count() != 1 || !dropped.test(0))
    return std::nullopt;
  for (int64_t d = 1; d < whole.getRank(); ++d)
    if (offsets[d] != 0 || sizes[d] != whole.getDimSize(d))
      return std::nullopt;
  return FirstDimSlice{slice.getSource(), offsets[0]};
}

/// A product that may join a batch: a contraction of two inputs into a
/// zero fill that nothing else reads, with static shapes and no index ops.
bool isBatchableProduct(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      !linalg::isaContractionOpInterface(op) || op.hasIndexSemantics() ||
      !op.hasOnlyProjectedPermutations())
    return false;
  Value init = op.getDpsInitOperand(0)->get();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  auto type = cast<RankedTensorType>(init.getType());
  return fill && init.hasOneUse() &&
         matchPattern(fill.value(), m_AnyZeroFloat()) &&
         type.hasStaticShape() && type.getRank() >= 1;
}

/// The value a batchable product's zero fill writes (+0.0 or -0.0).
Attribute getFillValue(linalg::LinalgOp op) {
  Attribute value;
  matchPattern(
      op.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>().value(),
      m_Constant(&value));
  return value;
}

/// What the products of one batch share: the sliced tensor, the shared
/// operand, the sliced operand's position, the op, its maps, its result
/// type and its fill's value.
using BatchId = std::tuple<const void *, const void *, unsigned, const void *,
                           const void *, const void *, const void *>;

/// Whether two products' bodies are the same: the same ops with the same
/// attributes on the same block arguments.
bool haveSameBody(linalg::LinalgOp a, linalg::LinalgOp b) {
  return OperationEquivalence::isRegionEquivalentTo(
      &a->getRegion(0), &b->getRegion(0),
      OperationEquivalence::IgnoreLocations);
}

/// Replaces `batch` (products indexed by slice, each index once, covering
/// the tensor's first dimension) with one product over the tensor.
void batchProducts(ArrayRef<linalg::LinalgOp> batch, Value whole,
                   unsigned slicedPosition) {
  linalg::LinalgOp first = batch.front();
  for (linalg::LinalgOp op : batch)
    if (op->isBeforeInBlock(first))
      first = op;
  OpBuilder b(first);
  Location loc = first.getLoc();
  auto resultType = cast<RankedTensorType>(first->getResult(0).getType());
  int64_t steps = cast<RankedTensorType>(whole.getType()).getDimSize(0);
  SmallVector<int64_t> shape = {steps};
  llvm::append_range(shape, resultType.getShape());
  Type element = resultType.getElementType();
  Value zero =
      first.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>().value();
  Value empty = tensor::EmptyOp::create(b, loc, shape, element);
  Value init = linalg::FillOp::create(b, loc, zero, empty).getResult(0);
  // The maps gain an outer loop t: the sliced operand and the result are
  // indexed by it, the shared operand is not.
  MLIRContext *ctx = b.getContext();
  unsigned loops = first.getNumLoops();
  SmallVector<AffineMap> maps;
  for (auto [i, map] : llvm::enumerate(first.getIndexingMapsArray())) {
    AffineMap shifted = map.shiftDims(1);
    if (i == slicedPosition || i == 2)
      shifted = shifted.insertResult(getAffineDimExpr(0, ctx), 0);
    maps.push_back(AffineMap::get(loops + 1, 0, shifted.getResults(), ctx));
  }
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::parallel};
  llvm::append_range(iterators, first.getIteratorTypesArray());
  SmallVector<Value> inputs = first.getDpsInputs();
  inputs[slicedPosition] = whole;
  auto product =
      linalg::GenericOp::create(b, loc, TypeRange{init.getType()}, inputs,
                                ValueRange{init}, maps, iterators);
  IRMapping mapping;
  first->getRegion(0).cloneInto(&product.getRegion(), mapping);
  // Each old product's result is its slice of the new one.
  for (linalg::LinalgOp op : batch) {
    b.setInsertionPoint(op);
    int64_t index =
        matchFirstDimSlice(op.getDpsInputs()[slicedPosition])->index;
    SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0)), sizes,
        strides(shape.size(), b.getIndexAttr(1));
    offsets[0] = b.getIndexAttr(index);
    sizes.push_back(b.getIndexAttr(1));
    for (int64_t extent : resultType.getShape())
      sizes.push_back(b.getIndexAttr(extent));
    Value slice = tensor::ExtractSliceOp::create(
        b, op.getLoc(), product.getResult(0), offsets, sizes, strides);
    SmallVector<ReassociationIndices> reassociation = {{0, 1}};
    for (int64_t d = 2; d < int64_t(shape.size()); ++d)
      reassociation.push_back({d});
    Value result = tensor::CollapseShapeOp::create(b, op.getLoc(), resultType,
                                                   slice, reassociation);
    Operation *fill = op.getDpsInitOperand(0)->get().getDefiningOp();
    Value sliced = op.getDpsInputs()[slicedPosition];
    op->getResult(0).replaceAllUsesWith(result);
    op->erase();
    fill->erase();
    // The slice of the input, when nothing else reads it.
    while (Operation *def = sliced.getDefiningOp()) {
      if (!def->use_empty() ||
          !isa<tensor::CollapseShapeOp, tensor::ExtractSliceOp>(def))
        break;
      sliced = def->getOperand(0);
      def->erase();
    }
  }
}

struct TofuBatchProductsPass
    : public tofu::impl::TofuBatchProductsBase<TofuBatchProductsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      // Each batch with the position of its sliced operand.
      llvm::MapVector<BatchId,
                      std::pair<unsigned, SmallVector<linalg::LinalgOp>>>
          batches;
      for (Operation &op : func.getBody().front()) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(&op);
        if (!linalgOp || !isBatchableProduct(linalgOp))
          continue;
        for (unsigned position : {0u, 1u}) {
          std::optional<FirstDimSlice> slice =
              matchFirstDimSlice(linalgOp.getDpsInputs()[position]);
          // A product of two such slices has no shared operand.
          Value shared = linalgOp.getDpsInputs()[1 - position];
          if (!slice || matchFirstDimSlice(shared))
            continue;
          BatchId id{slice->whole.getAsOpaquePointer(),
                     shared.getAsOpaquePointer(),
                     position,
                     op.getName().getAsOpaquePointer(),
                     linalgOp.getIndexingMaps().getAsOpaquePointer(),
                     op.getResult(0).getType().getAsOpaquePointer(),
                     getFillValue(linalgOp).getAsOpaquePointer()};
          auto &batch = batches[id];
          batch.first = position;
          batch.second.push_back(linalgOp);
          break;
        }
      }
      for (auto &[id, keyed] : batches) {
        auto &[slicedPosition, batch] = keyed;
        // The sliced tensor from the operands again: an earlier batch may
        // have replaced it (it was one of that batch's results).
        std::optional<FirstDimSlice> first =
            matchFirstDimSlice(batch.front().getDpsInputs()[slicedPosition]);
        if (!first)
          continue;
        // Slices of that tensor, each index of its first dimension once,
        // and bodies alike.
        int64_t steps =
            cast<RankedTensorType>(first->whole.getType()).getDimSize(0);
        if (int64_t(batch.size()) != steps || steps < 2)
          continue;
        llvm::SmallBitVector seen(steps);
        bool complete = true;
        for (linalg::LinalgOp op : batch) {
          std::optional<FirstDimSlice> slice =
              matchFirstDimSlice(op.getDpsInputs()[slicedPosition]);
          if (!slice || slice->whole != first->whole || slice->index < 0 ||
              slice->index >= steps || seen.test(slice->index) ||
              !haveSameBody(op, batch.front()))
            complete = false;
          else
            seen.set(slice->index);
        }
        if (complete)
          batchProducts(batch, first->whole, slicedPosition);
      }
    }
  }
};

} // namespace
