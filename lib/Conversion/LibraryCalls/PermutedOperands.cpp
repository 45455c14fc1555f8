//===- PermutedOperands.cpp - GEMMs that read and write permuted tensors --===//
//
// Exporters transpose weights before each matrix product (torch-mlir's
// nn.Linear is `matmul(x, transpose(W))`), and tofu-autodiff's gradient of
// that transpose is a transposed copy of the product that makes W's
// gradient. A library GEMM takes each operand in either order, so neither
// copy is needed: the product reads W, and writes its gradient, along the
// permuted map. Each copy of a 1024 x 1024 weight, a strided pass over 4 MB
// in generated loops, cost more than the product's own share of the step.
// A fold is made only where every operand keeps a unit-stride matrix
// dimension (hasContiguousGemmLayout): a permutation that puts a batch loop
// innermost would leave the product no BLAS operand.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"

#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;

namespace {

/// The source of `v` and the map from `v`'s indices to the source's, when
/// `v` is made by a permuting copy: a linalg op on tensors with one input
/// and one init, parallel loops only, a body that yields its input, and
/// permutations as both maps (linalg.transpose, or the generic that
/// torch-mlir writes for a permute).
std::optional<std::pair<Value, AffineMap>> permutedSource(Value v) {
  auto copy = v.getDefiningOp<linalg::LinalgOp>();
  if (!copy || !copy.hasPureTensorSemantics() || copy.getNumDpsInputs() != 1 ||
      copy.getNumDpsInits() != 1 || copy->getNumResults() != 1 ||
      copy.getNumLoops() != copy.getNumParallelLoops())
    return std::nullopt;
  Block *body = copy.getBlock();
  auto yield = dyn_cast_or_null<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1 ||
      yield.getOperand(0) != body->getArgument(0))
    return std::nullopt;
  SmallVector<AffineMap> maps = copy.getIndexingMapsArray();
  if (!maps[0].isPermutation() || !maps[1].isPermutation())
    return std::nullopt;
  // in[maps[0](l)] = out[maps[1](l)]: the source index of an output index.
  return std::make_pair(copy.getDpsInputOperand(0)->get(),
                        maps[0].compose(inversePermutation(maps[1])));
}

/// A GEMM that reads a permuting copy reads the copy's source instead,
/// along the composed map. The copy stays for its other uses.
struct PermutedInputIntoProduct : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp op,
                                PatternRewriter &rewriter) const override {
    if (!op.hasPureTensorSemantics() || !tofu::matchGemm(op))
      return failure();
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    SmallVector<Value> inputs = op.getDpsInputs();
    bool changed = false;
    for (unsigned i = 0; i < 2; ++i) {
      auto source = permutedSource(inputs[i]);
      if (!source)
        continue;
      SmallVector<AffineMap> folded = maps;
      folded[i] = source->second.compose(maps[i]);
      if (!tofu::hasContiguousGemmLayout(folded, op.getIteratorTypesArray()))
        continue;
      maps = std::move(folded);
      inputs[i] = source->first;
      changed = true;
    }
    if (!changed)
      return failure();
    linalg::GenericOp product = tofu::createMultiplyAccumulate(
        rewriter, op, inputs, op.getDpsInitOperand(0)->get(), maps,
        op.getIteratorTypesArray());
    rewriter.replaceOp(op, product->getResults());
    return success();
  }
};

/// A permuting copy of a GEMM's result, where the copy is the product's
/// only use and the product starts from a zero fill, becomes the GEMM
/// writing the permuted result into a zero fill of the copy's destination.
struct PermutedResultOfProduct : OpInterfaceRewritePattern<linalg::LinalgOp> {
  using OpInterfaceRewritePattern::OpInterfaceRewritePattern;
  LogicalResult matchAndRewrite(linalg::LinalgOp copy,
                                PatternRewriter &rewriter) const override {
    if (copy->getNumResults() == 0)
      return failure();
    // permutedSource checks that the copy has this one result.
    auto source = permutedSource(copy->getResult(0));
    if (!source || !source->first.hasOneUse())
      return failure();
    auto product = source->first.getDefiningOp<linalg::LinalgOp>();
    if (!product || !product.hasPureTensorSemantics() ||
        !tofu::matchGemm(product))
      return failure();
    auto fill =
        product.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
    if (!fill || !matchPattern(fill.value(), m_AnyZeroFloat()))
      return failure();
    // out[i] = product[source(i)]: the product's loops write out at
    // inverse(source) of their index into the product's result.
    SmallVector<AffineMap> maps = product.getIndexingMapsArray();
    maps[2] = inversePermutation(source->second).compose(maps[2]);
    if (!tofu::hasContiguousGemmLayout(maps, product.getIteratorTypesArray()))
      return failure();
    rewriter.setInsertionPoint(copy);
    Value zero = linalg::FillOp::create(rewriter, fill.getLoc(), fill.value(),
                                        copy.getDpsInitOperand(0)->get())
                     .getResult(0);
    linalg::GenericOp permuted = tofu::createMultiplyAccumulate(
        rewriter, product, product.getDpsInputs(), zero, maps,
        product.getIteratorTypesArray());
    rewriter.replaceOp(copy, permuted->getResults());
    return success();
  }
};

} // namespace

void tofu::populatePermutedOperandPatterns(RewritePatternSet &patterns) {
  patterns.add<PermutedInputIntoProduct, PermutedResultOfProduct>(
      patterns.getContext());
}
