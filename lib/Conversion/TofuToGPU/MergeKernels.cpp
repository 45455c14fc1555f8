//===- MergeKernels.cpp - One gpu.module for a step's kernels -------------===//
//
// Implements tofu-gpu-merge-kernels: the kernels that gpu-kernel-outlining
// put in a gpu.module each move into one module, identical kernels once,
// each under a name that says what it computes (docs/gpu.md, *Compile
// time*).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUMERGEKERNELS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// The text of `kernel` under a fixed name: two kernels with the same text
/// compute the same thing.
std::string getKernelKey(gpu::GPUFuncOp kernel) {
  gpu::GPUFuncOp probe = kernel.clone();
  probe.setName("kernel");
  std::string text;
  llvm::raw_string_ostream os(text);
  probe->print(os, OpPrintingFlags().useLocalScope());
  probe->erase();
  return text;
}

/// `map` or `loop`, then the first three distinct floating-point and math
/// operations of the body, e.g. `loop_maximumf` or `map_subf_exp_divf`.
std::string describeKernel(gpu::GPUFuncOp kernel) {
  bool hasLoop = false;
  llvm::SetVector<StringRef> ops;
  kernel.walk([&](Operation *op) {
    hasLoop |= isa<LoopLikeOpInterface>(op);
    bool isMath = isa<math::MathDialect>(op->getDialect());
    bool isFloatArith =
        isa<arith::ArithDialect>(op->getDialect()) &&
        !isa<arith::ConstantOp>(op) && op->getNumResults() == 1 &&
        (isa<FloatType>(op->getResult(0).getType()) || isa<arith::CmpFOp>(op));
    if ((isMath || isFloatArith) && ops.size() < 3)
      ops.insert(op->getName().stripDialect());
  });
  std::string name = hasLoop ? "loop" : "map";
  for (StringRef op : ops)
    name += "_" + op.str();
  if (ops.empty())
    name += "_copy";
  return name;
}

/// Whether `module` holds exactly one op, a kernel function: what
/// gpu-kernel-outlining makes, and all this pass moves.
bool isOutlinedKernelModule(gpu::GPUModuleOp module) {
  Block &body = module.getBodyRegion().front();
  if (!llvm::hasSingleElement(body))
    return false;
  auto func = dyn_cast<gpu::GPUFuncOp>(body.front());
  return func && func.isKernel();
}

struct TofuGPUMergeKernelsPass
    : public tofu::impl::TofuGPUMergeKernelsBase<TofuGPUMergeKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp launch) { launches.push_back(launch); });

    gpu::GPUModuleOp merged;
    llvm::StringMap<StringAttr> nameOfKey;
    DenseMap<SymbolRefAttr, SymbolRefAttr> newRef;
    llvm::SetVector<Operation *> emptied;
    for (gpu::LaunchFuncOp launch : launches) {
      SymbolRefAttr ref = launch.getKernel();
      auto found = newRef.find(ref);
      if (found == newRef.end()) {
        auto source = symbols.lookup<gpu::GPUModuleOp>(ref.getRootReference());
        if (!source || source == merged || !isOutlinedKernelModule(source))
          continue;
        auto kernel = cast<gpu::GPUFuncOp>(source.getBody()->front());
        if (kernel.getNameAttr() != ref.getLeafReference())
          continue;
        if (!merged) {
          OpBuilder builder(source);
          merged = gpu::GPUModuleOp::create(builder, module.getLoc(),
                                            "tofu_kernels");
          symbols.insert(merged);
        }
        auto [entry, inserted] =
            nameOfKey.try_emplace(getKernelKey(kernel), StringAttr());
        if (inserted) {
          std::string name = "k" + std::to_string(nameOfKey.size() - 1) + "_" +
                             describeKernel(kernel);
          kernel->moveBefore(merged.getBody(), merged.getBody()->end());
          kernel.setName(name);
          entry->second = kernel.getNameAttr();
        }
        emptied.insert(source);
        found =
            newRef
                .try_emplace(ref, SymbolRefAttr::get(
                                      merged.getNameAttr(),
                                      {FlatSymbolRefAttr::get(entry->second)}))
                .first;
      }
      launch.setKernelAttr(found->second);
    }
    for (Operation *op : emptied)
      op->erase();
  }
};

} // namespace
