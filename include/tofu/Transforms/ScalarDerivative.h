//===- ScalarDerivative.h - Derivatives of scalar bodies --------*- C++ -*-===//
//
// Forward-mode differentiation of the scalar body of a linalg operation:
// the building block from which tofu-autodiff derives every adjoint.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_SCALARDERIVATIVE_H
#define TOFU_TRANSFORMS_SCALARDERIVATIVE_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

namespace tofu {

/// Clones into `b` the operations of `root`'s block that `root` depends on,
/// remapping values through `mapping`, and emits d root / d wrt after them.
/// `wrt` is a value of that block (usually a block argument). Returns the
/// derivative, a null value when it is identically zero, or failure after
/// reporting the operation without a rule as an error on `owner`.
mlir::FailureOr<mlir::Value>
emitScalarDerivative(mlir::OpBuilder &b, mlir::Location loc, mlir::Value root,
                     mlir::Value wrt, mlir::IRMapping &mapping,
                     mlir::Operation *owner);

/// True if `value` depends on `source` inside their block.
bool dependsOn(mlir::Value value, mlir::Value source);

/// How a linalg body combines its accumulator with the per-iteration value.
enum class Combiner { None, Add, Max, Min };

/// The combiner of `g`'s body `yield combine(acc, e)` (acc: the first
/// output's block argument, e independent of it), and e; None for any
/// other body.
Combiner matchCombiner(mlir::linalg::GenericOp g, mlir::Value &e);

/// Whether `g` adds two tensors of its result's type element-wise: identity
/// maps, parallel loops, body `yield in0 + in1` (as tofu-autodiff sums a
/// value's gradient over its uses).
bool isTensorSum(mlir::linalg::GenericOp g);

} // namespace tofu

#endif // TOFU_TRANSFORMS_SCALARDERIVATIVE_H
