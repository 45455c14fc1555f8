//===- CPUReport.cpp - Library and generated FLOPs of a CPU step ----------===//
//
// Implements tofu-cpu-report: counts, per function, the library calls of
// convert-tofu-to-cpu and their FLOPs, and the FLOPs of the linalg ops
// left to generated loops, and prints the library share.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUCPUREPORT
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// What one function (or the module) sends where.
struct Counts {
  /// Calls and FLOPs per library, in order of appearance.
  llvm::MapVector<StringRef, std::pair<int64_t, int64_t>> libraries;
  int64_t generatedOps = 0, generatedFlops = 0;
  /// Ops whose FLOPs are unknown (dynamic shapes).
  int64_t uncounted = 0;

  bool empty() const { return libraries.empty() && !generatedFlops; }

  void add(const Counts &o) {
    for (auto &[name, c] : o.libraries) {
      libraries[name].first += c.first;
      libraries[name].second += c.second;
    }
    generatedOps += o.generatedOps;
    generatedFlops += o.generatedFlops;
    uncounted += o.uncounted;
  }

  void print(llvm::raw_ostream &os, StringRef name) const {
    int64_t library = 0;
    os << "tofu-cpu-report: " << name << "\n";
    for (auto &[lib, c] : libraries) {
      os << "  " << lib << ": " << c.first << " calls, " << c.second
         << " FLOP\n";
      library += c.second;
    }
    int64_t total = library + generatedFlops;
    double share = total ? 100.0 * double(library) / double(total) : 0.0;
    os << "  generated: " << generatedOps << " ops, " << generatedFlops
       << " FLOP\n";
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
      auto flops = call->getAttrOfType<IntegerAttr>("tofu.flops");
      if (!flops)
        ++counts.uncounted;
      auto &c = counts.libraries[library.getValue()];
      ++c.first;
      c.second += flops ? flops.getInt() : 0;
      return;
    }
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op)) {
      ++counts.generatedOps;
      if (std::optional<int64_t> flops = tofu::getKernelFlops(linalgOp))
        counts.generatedFlops += *flops;
      else
        ++counts.uncounted;
    }
  });
  return counts;
}

struct TofuCPUReportPass
    : public tofu::impl::TofuCPUReportBase<TofuCPUReportPass> {
  using Base::Base;
  void runOnOperation() override;
};

} // namespace

void TofuCPUReportPass::runOnOperation() {
  ModuleOp module = getOperation();
  std::string text;
  llvm::raw_string_ostream os(text);
  Counts total;
  unsigned functions = 0;
  for (auto func : module.getOps<FunctionOpInterface>()) {
    if (func.isExternal())
      continue;
    Counts counts = countFunction(func);
    if (counts.empty())
      continue;
    counts.print(os, ("@" + func.getName()).str());
    total.add(counts);
    ++functions;
  }
  if (functions != 1)
    total.print(os, "total");
  if (failed(tofu::writeReport(module, "tofu-cpu-report", output, text)))
    signalPassFailure();
}
