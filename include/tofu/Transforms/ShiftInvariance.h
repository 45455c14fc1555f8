//===- ShiftInvariance.h - Shifts that a normalisation cancels --*- C++ -*-===//
//
// Finds the tensors whose gradient is zero because what the function
// computes from them does not depend on them: the row maximum that softmax
// and log-softmax subtract for stability, which the normalisation by the
// row's sum of exponentials cancels exactly.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_SHIFTINVARIANCE_H
#define TOFU_TRANSFORMS_SHIFTINVARIANCE_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/DenseSet.h"

namespace tofu {

/// The results of max reductions in `body` on which nothing that `body`
/// computes from them depends. Each such `m` is only subtracted from values
/// (broadcast along the rows it was reduced over) and what follows cancels
/// it: `exp(x - m) / sum(exp(x - m))`, `(x - m) - log(sum(exp(x - m)))`.
/// The proof follows each value computed from `m` as `u + k*m` or
/// `u * exp(k*m)`, with `u` independent of `m`, through `linalg.generic`
/// bodies of `+ - * /`, negation, `exp`, `log` and sum reductions, until
/// `k` is 0 everywhere `m` can reach. Each value computed from `m` must be
/// written whole (no element left at its initial value) by an operation
/// whose body has no regions; any other use keeps `m` out of the result.
/// Differentiating with such an `m` held constant is exact.
llvm::DenseSet<mlir::Value> findCancelledShifts(mlir::Block &body);

} // namespace tofu

#endif // TOFU_TRANSFORMS_SHIFTINVARIANCE_H
