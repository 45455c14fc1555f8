//===- GemmMatcher.cpp - Recognising matrix products in linalg ------------===//
//
// Finds the linalg ops that a (strided-batched) GEMM computes: named
// matmuls and the `linalg.generic` products of tofu-autodiff's backward
// pass, from their indexing maps and a multiply-accumulate body (which the
// convolution matcher shares). Also the FLOP counts that tofu-gpu-report
// adds up.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

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

/// The loops that `map` reads, as a bit per loop.
llvm::SmallBitVector loopsOf(AffineMap map) {
  llvm::SmallBitVector bits(map.getNumDims());
  for (AffineExpr e : map.getResults())
    bits.set(cast<AffineDimExpr>(e).getPosition());
  return bits;
}

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

std::optional<tofu::GemmMatch> tofu::matchGemm(linalg::LinalgOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumRegions() != 1 || op.hasIndexSemantics())
    return std::nullopt;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = dyn_cast<ShapedType>(operand.get().getType());
    if (!type || !type.getElementType().isF32())
      return std::nullopt;
  }
  if (!isMultiplyAccumulate(op))
    return std::nullopt;

  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  for (AffineMap map : maps)
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/false))
      return std::nullopt;
  llvm::SmallBitVector in0 = loopsOf(maps[0]), in1 = loopsOf(maps[1]),
                       out = loopsOf(maps[2]);

  GemmMatch match;
  std::optional<unsigned> m, n, k;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned loop = 0, e = op.getNumLoops(); loop < e; ++loop) {
    bool a = in0.test(loop), b = in1.test(loop), c = out.test(loop);
    bool parallel = iterators[loop] == utils::IteratorType::parallel;
    if (a && b && c && parallel) {
      match.batchLoops.push_back(loop);
    } else if (a && !b && c && parallel && !m) {
      m = loop;
    } else if (!a && b && c && parallel && !n) {
      n = loop;
    } else if (a && b && !c && !parallel && !k) {
      k = loop;
    } else {
      return std::nullopt;
    }
  }
  if (!m || !n || !k)
    return std::nullopt;
  match.mLoop = *m;
  match.nLoop = *n;
  match.kLoop = *k;
  // A is the input indexed by M: input 0 by construction above.
  match.lhsInput = 0;
  match.rhsInput = 1;
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
