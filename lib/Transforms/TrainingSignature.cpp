//===- TrainingSignature.cpp - How a training step feeds itself -----------===//

#include "tofu/Transforms/TrainingSignature.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;

SmallVector<int> tofu::getFedArguments(func::FuncOp step) {
  SmallVector<int> feeds(step.getNumResults(), -1);
  int64_t numArgs = step.getNumArguments();
  llvm::SmallDenseSet<unsigned> taken;
  for (unsigned r = 0; r < step.getNumResults(); ++r) {
    if (Attribute updated = step.getResultAttr(r, attrs::kUpdatedArg)) {
      std::optional<int64_t> w = attrs::getInt64(updated);
      if (w && *w >= 0 && *w < numArgs)
        feeds[r] = *w;
      continue;
    }
    std::optional<int64_t> of =
        attrs::getInt64(step.getResultAttr(r, attrs::kStateOf));
    if (!of)
      continue;
    for (unsigned a = 0; a < numArgs; ++a) {
      std::optional<int64_t> argOf =
          attrs::getInt64(step.getArgAttr(a, attrs::kStateOf));
      if (argOf == of && !taken.contains(a)) {
        feeds[r] = a;
        taken.insert(a);
        break;
      }
    }
  }
  return feeds;
}

/// The product of the static extents of the reduction loops of `op` that
/// `operand` is indexed by (all its reduction loops when `operand` is
/// null); none when one is dynamic or there is none.
static std::optional<int64_t> getReducedExtent(linalg::LinalgOp op,
                                               OpOperand *operand) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  llvm::SmallBitVector indexed(op.getNumLoops(), operand == nullptr);
  if (operand)
    for (AffineExpr e : op.getMatchingIndexingMap(operand).getResults())
      e.walk([&](AffineExpr inner) {
        if (auto dim = dyn_cast<AffineDimExpr>(inner))
          indexed.set(dim.getPosition());
      });
  int64_t product = 1;
  bool any = false;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop) {
    if (!indexed.test(loop) ||
        iterators[loop] != utils::IteratorType::reduction)
      continue;
    if (ShapedType::isDynamic(ranges[loop]) || ranges[loop] < 1)
      return std::nullopt;
    product *= ranges[loop];
    any = true;
  }
  if (!any)
    return std::nullopt;
  return product;
}

/// Whether `op` contracts its inputs: a linalg op with reduction loops and
/// at least two inputs (a product, not a plain sum).
static bool isContraction(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && linalgOp.getNumReductionLoops() > 0 &&
         linalgOp.getNumDpsInputs() >= 2;
}

std::optional<int64_t> tofu::getFanIn(func::FuncOp func, unsigned arg) {
  if (func.isExternal() || arg >= func.getNumArguments())
    return std::nullopt;
  // Breadth first, a few ops deep, through ops without reductions.
  constexpr unsigned kMaxDepth = 6;
  SmallVector<Value> frontier{func.getArgument(arg)};
  llvm::SmallPtrSet<Operation *, 16> seen;
  for (unsigned depth = 0; depth < kMaxDepth && !frontier.empty(); ++depth) {
    SmallVector<Value> next;
    for (Value v : frontier)
      for (OpOperand &use : v.getUses()) {
        Operation *user = use.getOwner();
        if (!seen.insert(user).second)
          continue;
        auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
        if (linalgOp && isContraction(user) &&
            linalgOp.isDpsInput(&use))
          if (std::optional<int64_t> fanIn = getReducedExtent(linalgOp, &use))
            return fanIn;
        // A bias: added element-wise to the result of a contraction.
        if (linalgOp && linalgOp.getNumReductionLoops() == 0)
          for (OpOperand *input : linalgOp.getDpsInputOperands()) {
            auto producer = input->get().getDefiningOp<linalg::LinalgOp>();
            if (input != &use && producer && isContraction(producer))
              if (std::optional<int64_t> fanIn =
                      getReducedExtent(producer, nullptr))
                return fanIn;
          }
        if (linalgOp && linalgOp.getNumReductionLoops() > 0)
          continue;
        llvm::append_range(next, user->getResults());
      }
    frontier = std::move(next);
  }
  return std::nullopt;
}

std::string tofu::getFileTensorName(func::FuncOp func, unsigned arg) {
  if (auto name = func.getArgAttrOfType<StringAttr>(arg, attrs::kName))
    if (!name.getValue().empty())
      return name.getValue().str();
  return "arg" + std::to_string(arg);
}
