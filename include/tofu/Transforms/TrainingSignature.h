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

#include <optional>
#include <string>

namespace tofu {

/// For every result of `step`, the argument it feeds in the next step, or
/// -1. A `tofu.state_of = w` result feeds the first unused argument with
/// the same `tofu.state_of`. Out-of-range attributes feed nothing.
llvm::SmallVector<int> getFedArguments(mlir::func::FuncOp step);

/// The name of argument `arg` of `func` in weight, data and checkpoint
/// files (docs/training.md, "Files"): its `tofu.name`, else `arg<N>`, its
/// position in the forward function (which the training step keeps in
/// front of the optimizer state that tofu-optimizer appends and names).
std::string getFileTensorName(mlir::func::FuncOp func, unsigned arg);

/// The fan-in of weight argument `arg` of `func`, as PyTorch's default
/// initialization defines it (docs/training.md, "Initial values"): the
/// product of the extents of the reduction loops through which the first
/// contraction that reads the weight reads it (a dense weight's input
/// features, a convolution filter's channels times its window), found by
/// following the weight through transposes, reshapes and other ops without
/// reductions. A weight that is added element-wise to the result of a
/// contraction (a bias) takes that contraction's reduction extents. None
/// when no contraction reads the weight within a few ops.
std::optional<int64_t> getFanIn(mlir::func::FuncOp func, unsigned arg);

} // namespace tofu

#endif // TOFU_TRANSFORMS_TRAININGSIGNATURE_H
