//===- TrainingAttributes.h - Metadata of training steps --------*- C++ -*-===//
//
// Names of the discardable attributes with which tofu-autodiff and
// tofu-optimizer record how a training step was built. Graph coarsening
// reads them to group every backward operation with its forward operation
// and every gradient with its tensor (Tofu §5.1).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_TRAININGATTRIBUTES_H
#define TOFU_TRANSFORMS_TRAININGATTRIBUTES_H

#include "mlir/IR/BuiltinAttributes.h"

#include <optional>

namespace tofu {
namespace attrs {

/// Function argument: the argument is a trainable weight (unit).
inline constexpr char kWeight[] = "tofu.weight";
/// Function argument: data fed to the model (inputs, labels, targets), never
/// a weight, even under `weights=all` (unit).
inline constexpr char kInput[] = "tofu.input";
/// Function argument: its name, for selecting weights by name (string).
inline constexpr char kName[] = "tofu.name";
/// Forward operation: its identifier in the function (i64).
inline constexpr char kOpId[] = "tofu.op_id";
/// Backward operation: the identifier of the forward operation whose
/// adjoint it computes (i64).
inline constexpr char kBackwardOf[] = "tofu.bwd_of";
/// Operation producing (part of) a gradient: the forward tensor it is the
/// gradient of, as `array<i64: opId, resultNumber>`; opId -1 names the
/// function argument `resultNumber`.
inline constexpr char kGradientOf[] = "tofu.grad_of";
/// The sum that accumulates the gradients of a tensor used more than once.
inline constexpr char kGradientAccumulation[] = "tofu.grad_accum";
/// Function result: the loss (unit).
inline constexpr char kLoss[] = "tofu.loss";
/// Function result: the gradient of the given argument (i64).
inline constexpr char kGradientOfArg[] = "tofu.grad_of_arg";
/// Function result: the updated value of the given argument (i64).
inline constexpr char kUpdatedArg[] = "tofu.updated_arg";
/// Function argument: optimizer state of the given weight argument (i64).
inline constexpr char kStateOf[] = "tofu.state_of";
/// Function argument: a 0-d hyperparameter of the optimizer (the learning
/// rate), with its default value (f64).
inline constexpr char kHyperparameter[] = "tofu.hyperparameter";
/// Optimizer operation: the weight argument it updates (i64).
inline constexpr char kUpdateOf[] = "tofu.update_of";
/// Function (unit): tofu-train-driver's @main, which the lowering passes
/// that would spend long on it for nothing skip. The one attribute of ours
/// that convert-tofu-to-mpi keeps.
inline constexpr char kDriver[] = "tofu.driver";

/// The value of an integer attribute read back from the IR, or std::nullopt
/// when `attr` is absent, not an integer, or does not fit in 64 bits. The IR
/// may come from anywhere: callers still check the range of the value.
inline std::optional<int64_t> getInt64(mlir::Attribute attr) {
  auto integer = llvm::dyn_cast_or_null<mlir::IntegerAttr>(attr);
  if (!integer || integer.getValue().getSignificantBits() > 64)
    return std::nullopt;
  return integer.getValue().getSExtValue();
}

} // namespace attrs
} // namespace tofu

#endif // TOFU_TRANSFORMS_TRAININGATTRIBUTES_H
