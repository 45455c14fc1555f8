//===- GPUReport.cpp - Kernels and FLOPs of a GPU-lowered step ------------===//
//
// Implements tofu-gpu-report: counts, per function, the generated kernels
// and the floating-point operations that go to cuBLAS, to cuDNN and to
// generated kernels, and prints the library share.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUREPORT
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// What one function (or the module) sends where.
struct Counts {
  int64_t kernels = 0;
  int64_t cublasCalls = 0, cudnnCalls = 0, collectiveCalls = 0;
  int64_t cublasFlops = 0, cudnnFlops = 0, generatedFlops = 0;
  /// Ops whose FLOPs are unknown (dynamic shapes).
  int64_t uncounted = 0;

  void add(const Counts &o) {
    kernels += o.kernels;
    cublasCalls += o.cublasCalls;
    cudnnCalls += o.cudnnCalls;
    collectiveCalls += o.collectiveCalls;
    cublasFlops += o.cublasFlops;
    cudnnFlops += o.cudnnFlops;
    generatedFlops += o.generatedFlops;
    uncounted += o.uncounted;
  }

  void print(llvm::raw_ostream &os, StringRef name) const {
    int64_t library = cublasFlops + cudnnFlops;
    int64_t total = library + generatedFlops;
    double share = total ? 100.0 * double(library) / double(total) : 0.0;
    os << "tofu-gpu-report: " << name << "\n";
    os << "  kernels: " << kernels << "\n";
    os << "  cublas: " << cublasCalls << " calls, " << cublasFlops << " FLOP\n";
    os << "  cudnn: " << cudnnCalls << " calls, " << cudnnFlops << " FLOP\n";
    if (collectiveCalls)
      os << "  collectives: " << collectiveCalls << " calls\n";
    os << "  generated: " << generatedFlops << " FLOP\n";
    os << "  library share: " << llvm::format("%.2f", share) << "%\n";
    if (uncounted)
      os << "  not counted (dynamic shapes): " << uncounted << " ops\n";
  }
};

Counts countFunction(FunctionOpInterface func) {
  Counts counts;
  func.walk([&](Operation *op) {
    // What runs only where the strides rule out a library call.
    if (op->hasAttr(tofu::kLibraryFallbackAttr))
      return;
    if (auto call = dyn_cast<func::CallOp>(op)) {
      auto library = call->getAttrOfType<StringAttr>(tofu::kLibraryAttr);
      if (!library)
        return;
      // Communication (convert-tofu-to-mpi{runtime=gpu}) computes nothing.
      if (library.getValue() == "collective") {
        ++counts.collectiveCalls;
        return;
      }
      auto flops = call->getAttrOfType<IntegerAttr>("tofu.flops");
      if (!flops)
        ++counts.uncounted;
      int64_t f = flops ? flops.getInt() : 0;
      if (library.getValue() == "cudnn") {
        ++counts.cudnnCalls;
        counts.cudnnFlops += f;
      } else {
        ++counts.cublasCalls;
        counts.cublasFlops += f;
      }
      return;
    }
    if (isa<gpu::LaunchOp, gpu::LaunchFuncOp>(op)) {
      ++counts.kernels;
      return;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      // Every op becomes a kernel, a 0-d one a kernel of one thread.
      ++counts.kernels;
      if (std::optional<int64_t> flops = tofu::getKernelFlops(linalgOp))
        counts.generatedFlops += *flops;
      else
        ++counts.uncounted;
    }
  });
  return counts;
}

struct TofuGPUReportPass
    : public tofu::impl::TofuGPUReportBase<TofuGPUReportPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void TofuGPUReportPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::string text;
  llvm::raw_string_ostream os(text);
  Counts total;
  unsigned functions = 0;
  for (auto func : module.getOps<FunctionOpInterface>()) {
    if (func.isExternal())
      continue;
    Counts counts = countFunction(func);
    if (!counts.kernels && !counts.cublasCalls && !counts.cudnnCalls &&
        !counts.collectiveCalls)
      continue;
    counts.print(os, ("@" + func.getName()).str());
    total.add(counts);
    ++functions;
  }
  if (functions != 1)
    total.print(os, "total");

  if (failed(tofu::writeReport(module, "tofu-gpu-report", output, text)))
    signalPassFailure();
}
