//===- SimplifyDeallocs.cpp - Dealloc simplification but for the driver ---===//
//
// Implements tofu-simplify-deallocs: upstream
// buffer-deallocation-simplification on every function except the training
// driver's @main, whose deallocations of a step's results make its alias
// queries take minutes on large models (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToMPI/EarlyDealloc.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUSIMPLIFYDEALLOCS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

struct TofuSimplifyDeallocsPass
    : public tofu::impl::TofuSimplifyDeallocsBase<TofuSimplifyDeallocsPass> {
  TofuSimplifyDeallocsPass() : simplify(func::FuncOp::getOperationName()) {
    simplify.addPass(
        bufferization::createBufferDeallocationSimplificationPass());
  }
  TofuSimplifyDeallocsPass(const TofuSimplifyDeallocsPass &other)
      : tofu::impl::TofuSimplifyDeallocsBase<TofuSimplifyDeallocsPass>(other),
        simplify(other.simplify) {}

  void getDependentDialects(DialectRegistry &registry) const override {
    simplify.getDependentDialects(registry);
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func->hasAttr(tofu::attrs::kDriver) || func.isExternal())
        continue;
      if (failed(runPipeline(simplify, func)))
        return signalPassFailure();
    }
  }

  OpPassManager simplify;
};

} // namespace
