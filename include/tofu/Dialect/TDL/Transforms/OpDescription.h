//===- OpDescription.h - Operations as TDL sees them ------------*- C++ -*-===//
//
// The bridge between operations and the MLIR-free TDL analysis: which
// operations need a description, the concrete shapes of their inputs and
// outputs, and the description attached to them.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TDL_TRANSFORMS_OPDESCRIPTION_H
#define TOFU_DIALECT_TDL_TRANSFORMS_OPDESCRIPTION_H

#include "mlir/IR/Operation.h"
#include "tofu/Dialect/TDL/IR/TDL.h"
#include "tofu/Partition/Strategy.h"

#include <string>

namespace tofu {
namespace tdl {

/// True for operations that produce a ranked tensor and compute something:
/// everything but sources (tensor.empty, constants) and terminators.
bool needsDescription(mlir::Operation *op);

/// The shapes of the operation's described inputs (its operands, scalars as
/// rank 0, then the tensors its regions capture) and results.
/// Fails with a reason on dynamic shapes or non-tensor, non-scalar types.
mlir::FailureOr<OpShapes> getOpShapes(mlir::Operation *op, std::string &reason);

/// The description attached by `tdl-attach`, or null.
DescAttr getAttachedDesc(mlir::Operation *op);

/// The text of the bundled library of framework operators
/// (tdl/frameworks.tdl), compiled into the binary.
const char *getBundledLibraryText();

} // namespace tdl
} // namespace tofu

#endif // TOFU_DIALECT_TDL_TRANSFORMS_OPDESCRIPTION_H
