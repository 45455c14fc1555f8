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
