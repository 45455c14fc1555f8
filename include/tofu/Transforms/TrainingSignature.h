//===- TrainingSignature.h - How a training step feeds itself ---*- C++ -*-===//
//
// A training step returns the loss, then updated weights and optimizer
// state. The next step takes them back as arguments: this header says
// which argument each result feeds, from the attributes of tofu-optimizer
// (`tofu.updated_arg` and `tofu.state_of`).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_TRAININGSIGNATURE_H
#define TOFU_TRANSFORMS_TRAININGSIGNATURE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tofu {

/// For every result of `step`, the argument it feeds in the next step, or
/// -1. A `tofu.state_of = w` result feeds the first unused argument with
/// the same `tofu.state_of`. Out-of-range attributes feed nothing.
llvm::SmallVector<int> getFedArguments(mlir::func::FuncOp step);

} // namespace tofu

#endif // TOFU_TRANSFORMS_TRAININGSIGNATURE_H
