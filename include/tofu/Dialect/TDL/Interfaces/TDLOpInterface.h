//===- TDLOpInterface.h - Operations that TDL can describe ------*- C++ -*-===//
//
// The TDLOpInterface and the registration of its external models for the
// upstream dialects: linalg (named ops and linalg.generic), tensor, arith,
// math and tosa.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TDL_INTERFACES_TDLOPINTERFACE_H
#define TOFU_DIALECT_TDL_INTERFACES_TDLOPINTERFACE_H

#include "mlir/IR/OpDefinition.h"
#include "tofu/TDL/TDL.h"

#include <string>

namespace mlir {
class DialectRegistry;
} // namespace mlir

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h.inc"

namespace tofu {
namespace tdl {

/// Attaches the external models of every upstream dialect below.
void registerTDLExternalModels(mlir::DialectRegistry &registry);

/// linalg structured ops, from their indexing maps and iterator types.
void registerLinalgTDLExternalModels(mlir::DialectRegistry &registry);
/// Element-wise arith and math ops on ranked tensors.
void registerArithMathTDLExternalModels(mlir::DialectRegistry &registry);
/// tensor.pad, extract_slice, insert_slice, expand_shape, collapse_shape,
/// concat.
void registerTensorTDLExternalModels(mlir::DialectRegistry &registry);
/// tosa.matmul, conv2d, element-wise and reduce ops.
void registerTosaTDLExternalModels(mlir::DialectRegistry &registry);

/// The TDL expression of a scalar operation named `opName` (without its
/// dialect prefix) applied to `args`: `+ - * /` for add/sub/mul/div, unary
/// minus for negf, and a call `opName(args)` otherwise.
std::string printScalarOp(llvm::StringRef opName,
                          llvm::ArrayRef<std::string> args);

/// Variable names `d0, d1, ...` joined with commas, for `rank` dimensions.
std::string printDimList(unsigned rank);
/// The variable name `d<d>`.
std::string printDim(int64_t d);
/// Input names `in0, in1, ...` for the operands of `op`, joined with commas.
std::string printOperandNames(mlir::Operation *op);

/// The ranked tensors that the regions of `op` read without taking them as
/// operands (values defined above, such as the table of an embedding
/// lookup), in order of first use. A description lists them as inputs after
/// the operands, named `cap0, cap1, ...`.
llvm::SmallVector<mlir::Value> getCapturedTensors(mlir::Operation *op);

/// The values that a description of `op` names as its inputs: the operands,
/// then the captured tensors.
llvm::SmallVector<mlir::Value> getDescribedInputs(mlir::Operation *op);

/// Parses `text`, which an external model built, as a description. Failure
/// means the model produced a malformed description: `reason` says so.
mlir::FailureOr<OpDesc> parseGeneratedDescription(const std::string &text,
                                                  std::string &reason);

} // namespace tdl
} // namespace tofu

#endif // TOFU_DIALECT_TDL_INTERFACES_TDLOPINTERFACE_H
