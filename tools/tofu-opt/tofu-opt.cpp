//===- tofu-opt.cpp - The Tofu-MLIR optimizer driver ----------------------===//
//
// Registers the Tofu dialects and passes with the upstream dialects and
// passes that users combine with them, then runs MlirOptMain.
//
//===----------------------------------------------------------------------===//

#include "tofu/InitAllDialects.h"
#include "tofu/InitAllPasses.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/Linalg/Transforms/ShardingInterfaceImpl.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardDialect.h"
#include "mlir/Dialect/Shard/Transforms/Passes.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"
#include "mlir/Transforms/Passes.h"

namespace tofu {
namespace test {
void registerTestTDLStrategiesPass();
void registerTestShardingCrossCheckPass();
void registerTestCoarsenPass();
void registerTestGradCheckPass();
void registerTestTrainLoopPass();
void registerTestFanInPass();
void registerTestEmulateWarpsPass();
} // namespace test
} // namespace tofu

int main(int argc, char **argv) {
  tofu::setDefaultCudaHome(); // For tofu-gpu-pipeline's ptxas.
  mlir::DialectRegistry registry;
  // Upstream dialects, interfaces and passes that pipelines combine with
  // ours (linalg, tensor, arith, math, func, scf, tosa, shard,
  // bufferization and the conversions).
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // Serializing GPU kernels (gpu-module-to-binary) translates them to LLVM
  // IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  mlir::registerAllPasses();
  // Ours, through the same entry points that other compilers use
  // (examples/standalone-opt).
  tofu::registerAllDialects(registry);
  tofu::registerAllPasses();
  tofu::test::registerTestTDLStrategiesPass();
  tofu::test::registerTestShardingCrossCheckPass();
  tofu::test::registerTestCoarsenPass();
  tofu::test::registerTestGradCheckPass();
  tofu::test::registerTestTrainLoopPass();
  tofu::test::registerTestFanInPass();
  tofu::test::registerTestEmulateWarpsPass();
  // A misspelled option of a Tofu pass names the pass and the nearest
  // option, instead of the options parser's bare "no such option".
  if (!tofu::checkPassOptionSpelling(argc, argv, "tofu-opt"))
    return 1;
  // --help: the Tofu passes and pipelines first, then everything else.
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg(argv[i]);
    if (arg == "--")
      break;
    if (arg == "--help" || arg == "-help" || arg == "-h") {
      tofu::printTofuPassHelp();
      break;
    }
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "Tofu-MLIR optimizer driver\n", registry));
}
