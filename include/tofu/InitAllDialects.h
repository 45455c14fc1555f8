//===- InitAllDialects.h - Register every Tofu dialect ----------*- C++ -*-===//
//
// The entry point that a compiler embedding Tofu-MLIR calls to make the Tofu
// dialects and the TDL descriptions of upstream operations available in its
// own DialectRegistry or MLIRContext.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_INITALLDIALECTS_H
#define TOFU_INITALLDIALECTS_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace tofu {

/// Adds the TDL and Tofu dialects to `registry`, and the external models
/// that give linalg, tensor, arith, math and tosa operations their TDL
/// descriptions. The external models attach when those dialects load, so a
/// compiler registers the upstream dialects it uses itself.
void registerAllDialects(mlir::DialectRegistry &registry);

/// Adds the same dialects and external models to `context`.
void registerAllDialects(mlir::MLIRContext &context);

} // namespace tofu

#endif // TOFU_INITALLDIALECTS_H
