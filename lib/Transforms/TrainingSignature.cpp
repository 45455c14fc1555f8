//===- TrainingSignature.cpp - How a training step feeds itself -----------===//

#include "tofu/Transforms/TrainingSignature.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

SmallVector<int> tofu::getFedArguments(func::FuncOp step) {
  SmallVector<int> feeds(step.getNumResults(), -1);
  int64_t numArgs = step.getNumArguments();
  llvm::SmallDenseSet<unsigned> taken;
  for (unsigned r = 0; r < step.getNumResults(); ++r) {
    if (auto w = step.getResultAttrOfType<IntegerAttr>(r, attrs::kUpdatedArg)) {
      if (w.getInt() >= 0 && w.getInt() < numArgs)
        feeds[r] = w.getInt();
      continue;
    }
    auto of = step.getResultAttrOfType<IntegerAttr>(r, attrs::kStateOf);
    if (!of)
      continue;
    for (unsigned a = 0; a < numArgs; ++a) {
      auto argOf = step.getArgAttrOfType<IntegerAttr>(a, attrs::kStateOf);
      if (argOf && argOf.getInt() == of.getInt() && !taken.contains(a)) {
        feeds[r] = a;
        taken.insert(a);
        break;
      }
    }
  }
  return feeds;
}
