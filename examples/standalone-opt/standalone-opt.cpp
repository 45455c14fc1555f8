//===- standalone-opt.cpp - A compiler driver that embeds Tofu ------------===//
//
// An optimizer driver outside the Tofu-MLIR tree. It registers the upstream
// dialects its users' models are written in, the Tofu dialects and passes
// through their public entry points, and runs MlirOptMain: every Tofu pass
// and pipeline is then available on its command line and in its pass
// pipelines.
//
//===----------------------------------------------------------------------===//

#include "tofu/InitAllDialects.h"
#include "tofu/InitAllPasses.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  // The dialects of linalg-on-tensors models, as torch-mlir emits them.
  registry.insert<mlir::arith::ArithDialect, mlir::func::FuncDialect,
                  mlir::linalg::LinalgDialect, mlir::math::MathDialect,
                  mlir::scf::SCFDialect, mlir::tensor::TensorDialect>();
  // Upstream passes this compiler offers next to Tofu's (canonicalize,
  // cse, inline, ...).
  mlir::registerTransformsPasses();

  // Tofu: the TDL and Tofu dialects, the TDL descriptions of the upstream
  // operations registered above, and every Tofu pass.
  tofu::registerAllDialects(registry);
  tofu::registerAllPasses();

  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "A standalone optimizer driver with the Tofu passes\n",
      registry));
}
