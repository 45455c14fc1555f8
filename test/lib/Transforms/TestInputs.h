//===- TestInputs.h - Deterministic inputs for execution tests --*- C++ -*-===//
//
// Builders of the constant inputs with which the execution harnesses call
// training steps.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TEST_TRANSFORMS_TESTINPUTS_H
#define TOFU_TEST_TRANSFORMS_TESTINPUTS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace tofu {
namespace test {

/// A constant tensor of `type` with values uniform in [-scale, scale) (or
/// [0, scale) if `nonNegative`) drawn from a fixed linear congruential
/// generator seeded with `seed`.
mlir::Value randomTensor(mlir::OpBuilder &b, mlir::Location loc,
                         mlir::RankedTensorType type, uint64_t seed,
                         double scale, bool nonNegative = false);

/// A constant tensor of `type` (integer elements) with values uniform in
/// [0, bound) drawn from the same generator as randomTensor.
mlir::Value randomIntTensor(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::RankedTensorType type, uint64_t seed,
                            uint64_t bound);

/// The range of the initial values of a weight of `type`: 1/sqrt(fan-in),
/// with the fan-in estimated as the number of elements over the largest
/// dimension, which keeps activations of deep models of order one.
double weightScale(mlir::RankedTensorType type);

/// Prints `label` followed by `value` and a newline with vector.print.
void printValue(mlir::OpBuilder &b, mlir::Location loc, llvm::StringRef label,
                mlir::Value value);

} // namespace test
} // namespace tofu

#endif // TOFU_TEST_TRANSFORMS_TESTINPUTS_H
