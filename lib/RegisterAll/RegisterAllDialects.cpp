//===- RegisterAllDialects.cpp - Register every Tofu dialect --------------===//
//
// Implements the public entry point that adds the Tofu dialects and the TDL
// external models to a registry or a context.
//
//===----------------------------------------------------------------------===//

#include "tofu/InitAllDialects.h"

#include "tofu/Dialect/TDL/IR/TDL.h"
#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"
#include "tofu/Dialect/Tofu/IR/Tofu.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"

void tofu::registerAllDialects(mlir::DialectRegistry &registry) {
  registry.insert<tdl::TDLDialect, TofuDialect>();
  tdl::registerTDLExternalModels(registry);
}

void tofu::registerAllDialects(mlir::MLIRContext &context) {
  mlir::DialectRegistry registry;
  registerAllDialects(registry);
  context.appendDialectRegistry(registry);
}
