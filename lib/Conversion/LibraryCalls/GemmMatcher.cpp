//===- GemmMatcher.cpp - Recognising matrix products in linalg ------------===//
//
// Finds the linalg ops that a (strided-batched) GEMM computes: named
// matmuls and the `linalg.generic` products of tofu-autodiff's backward
// pass, from their indexing maps (gemm::matchGemmPattern) and a
// multiply-accumulate body (which the convolution matcher shares). Also
// the FLOP counts that the backends' reports add up.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace {

/// Whether `v` is `mulf(in0, in1)` of the block's two inputs, in any order.
bool isProductOfInputs(Value v, Block &body) {
  auto mul = v.getDefiningOp<arith::MulFOp>();
  if (!mul || mul->getBlock() != &body)
    return false;
  Value x = mul.getLhs(), y = mul.getRhs();
  Value in0 = body.getArgument(0), in1 = body.getArgument(1);
  return (x == in0 && y == in1) || (x == in1 && y == in0);
}

} // namespace

bool tofu::isMultiplyAccumulate(linalg::LinalgOp op) {
  Block *body = op.getBlock();
  if (!body || body->getNumArguments() != 3)
    return false;
  // mulf, addf and the yield.
  if (body->getOperations().size() != 3)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(body->getTerminator());
  if (!yield || yield.getNumOperands() != 1)
    return false;
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body)
    return false;
  Value out = body->getArgument(2);
  if (add.getLhs() == out)
    return isProductOfInputs(add.getRhs(), *body);
  if (add.getRhs() == out)
    return isProductOfInputs(add.getLhs(), *body);
  return false;
}

namespace {

std::optional<int64_t> staticIterations(linalg::LinalgOp op) {
  int64_t count = 1;
  for (int64_t range : op.getStaticLoopRanges()) {
    if (ShapedType::isDynamic(range))
      return std::nullopt;
    if (llvm::MulOverflow(count, range, count))
      return std::nullopt;
  }
  return count;
}

} // namespace

Type tofu::getLibraryElementType(linalg::LinalgOp op) {
  Type element;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    if (!type || !(type.getElementType().isF32() ||
                   type.getElementType().isF64()))
      return nullptr;
    if (element && element != type.getElementType())
      return nullptr;
    element = type.getElementType();
  }
  return element;
}

/// gemm::matchGemmPattern on indexing maps and iterators.
static std::optional<tofu::gemm::GemmPattern>
matchGemmLoops(ArrayRef<AffineMap> maps,
               ArrayRef<utils::IteratorType> iterators) {
  std::vector<std::vector<unsigned>> operandLoops;
  for (AffineMap map : maps) {
    if (map.getNumDims() != iterators.size() ||
        !map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
    std::vector<unsigned> &loops = operandLoops.emplace_back();
    for (AffineExpr e : map.getResults())
      loops.push_back(cast<AffineDimExpr>(e).getPosition());
  }
  std::vector<bool> parallel;
  for (utils::IteratorType t : iterators)
    parallel.push_back(t == utils::IteratorType::parallel);
  return tofu::gemm::matchGemmPattern(iterators.size(), parallel, operandLoops);
}

std::optional<unsigned> tofu::getInnermostLoop(AffineMap map) {
  if (map.getNumResults() == 0)
    return std::nullopt;
  return cast<AffineDimExpr>(map.getResults().back()).getPosition();
}

bool tofu::hasContiguousGemmLayout(ArrayRef<AffineMap> maps,
                                   ArrayRef<utils::IteratorType> iterators) {
  std::optional<gemm::GemmPattern> pattern = matchGemmLoops(maps, iterators);
  if (!pattern)
    return false;
  return llvm::all_of(maps, [&](AffineMap map) {
    std::optional<unsigned> innermost = getInnermostLoop(map);
    return innermost && !llvm::is_contained(pattern->batchLoops, *innermost);
  });
}

linalg::GenericOp
tofu::createMultiplyAccumulate(OpBuilder &b, Operation *like, ValueRange inputs,
                               Value init, ArrayRef<AffineMap> maps,
                               ArrayRef<utils::IteratorType> iterators) {
  auto product = linalg::GenericOp::create(
      b, like->getLoc(), init.getType(), inputs, init, maps, iterators,
      [](OpBuilder &nested, Location loc, ValueRange args) {
        Value mul = arith::MulFOp::create(nested, loc, args[0], args[1]);
        Value sum = arith::AddFOp::create(nested, loc, args[2], mul);
        linalg::YieldOp::create(nested, loc, sum);
      });
  for (NamedAttribute attr : like->getDiscardableAttrs())
    if (attr.getName().getValue().starts_with("tofu."))
      product->setAttr(attr.getName(), attr.getValue());
  return product;
}

std::optional<tofu::GemmMatch> tofu::matchGemm(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumRegions() != 1 || op.hasIndexSemantics())
    return std::nullopt;
  Type element = getLibraryElementType(op);
  if (!element || !isMultiplyAccumulate(op))
    return std::nullopt;
  std::optional<gemm::GemmPattern> pattern =
      matchGemmLoops(op.getIndexingMapsArray(), op.getIteratorTypesArray());
  if (!pattern)
    return std::nullopt;
  GemmMatch match;
  match.batchLoops.assign(pattern->batchLoops.begin(),
                          pattern->batchLoops.end());
  match.mLoops.assign(pattern->mLoops.begin(), pattern->mLoops.end());
  match.nLoops.assign(pattern->nLoops.begin(), pattern->nLoops.end());
  match.kLoops.assign(pattern->kLoops.begin(), pattern->kLoops.end());
  match.accumulateLoops.assign(pattern->accumulateLoops.begin(),
                               pattern->accumulateLoops.end());
  // A is the input indexed by M: input 0 by the pattern's rule.
  match.lhsInput = 0;
  match.rhsInput = 1;
  match.elementType = element;
  return match;
}

std::optional<int64_t> tofu::getMultiplyAccumulateFlops(linalg::LinalgOp op) {
  std::optional<int64_t> iterations = staticIterations(op);
  int64_t flops = 0;
  if (!iterations || llvm::MulOverflow(*iterations, int64_t(2), flops))
    return std::nullopt;
  return flops;
}

std::optional<int64_t> tofu::getKernelFlops(linalg::LinalgOp op) {
  std::optional<int64_t> iterations = staticIterations(op);
  if (!iterations)
    return std::nullopt;
  int64_t perIteration = 0;
  if (Block *body = op.getBlock()) {
    for (Operation &inner : body->without_terminator()) {
      if (isa<arith::ConstantOp>(inner))
        continue;
      bool floating = llvm::any_of(inner.getResultTypes(), [](Type t) {
        return isa<FloatType>(getElementTypeOrSelf(t));
      });
      bool isArithOrMath =
          isa<arith::ArithDialect, math::MathDialect>(inner.getDialect());
      if (floating && isArithOrMath)
        ++perIteration;
    }
  }
  int64_t flops = 0;
  if (llvm::MulOverflow(*iterations, perIteration, flops))
    return std::nullopt;
  return flops;
}
