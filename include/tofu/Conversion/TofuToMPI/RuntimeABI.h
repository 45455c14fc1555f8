//===- RuntimeABI.h - Calling the CPU runtime from IR -----------*- C++ -*-===//
//
// How IR calls include/tofu/Runtime/TofuRuntime.h: functions declared
// private with the C interface when they take buffers, and tensors passed
// as read-only unranked memrefs. Shared by convert-tofu-to-mpi and
// tofu-train-driver.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CONVERSION_TOFUTOMPI_RUNTIMEABI_H
#define TOFU_CONVERSION_TOFUTOMPI_RUNTIMEABI_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace tofu {

/// Declares the runtime function `name` in `module` once, with
/// `llvm.emit_c_interface` when it takes a buffer, and returns it.
mlir::func::FuncOp declareRuntimeFunction(mlir::ModuleOp module,
                                          llvm::StringRef name,
                                          mlir::TypeRange inputs,
                                          mlir::TypeRange results);

/// A read-only unranked view of a tensor's buffer (any layout).
mlir::Value getUnrankedView(mlir::OpBuilder &b, mlir::Location loc,
                            mlir::Value tensor);

/// A constant i64 vector as a read-only unranked buffer.
mlir::Value getConstantInts(mlir::OpBuilder &b, mlir::Location loc,
                            llvm::ArrayRef<int64_t> values);

} // namespace tofu

#endif // TOFU_CONVERSION_TOFUTOMPI_RUNTIMEABI_H
