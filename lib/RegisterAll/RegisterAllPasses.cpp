//===- RegisterAllPasses.cpp - Register every Tofu pass -------------------===//
//
// Implements the public entry point that registers the Tofu passes and pass
// pipelines with MLIR's global pass registry.
//
//===----------------------------------------------------------------------===//

#include "tofu/InitAllPasses.h"

#include "tofu/Conversion/Passes.h"
#include "tofu/Dialect/TDL/Transforms/Passes.h"
#include "tofu/Dialect/Tofu/Transforms/Passes.h"
#include "tofu/Transforms/Passes.h"

void tofu::registerAllPasses() {
  tdl::registerTDLPasses();
  registerTofuPasses();
  registerTofuTrainPipeline();
  registerTofuPartitionPasses();
  registerTofuConversionPasses();
  registerTofuCPUPipeline();
  registerTofuGPUPipeline();
}
