//===- TofuToCPU.cpp - GEMM-shaped linalg ops to OpenBLAS calls -----------===//
//
// Implements convert-tofu-to-cpu: every GEMM-shaped linalg op on buffers,
// in f32 or f64, becomes a call of tofu_cpu_sgemm or tofu_cpu_dgemm, and
// every f32 convolution (forward, data and filter gradient) a call of
// tofu_cpu_conv2d_* (include/tofu/Runtime/TofuRuntime.h), through the
// backends' shared lowering (LibraryCalls.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"

namespace tofu {
#define GEN_PASS_DEF_CONVERTTOFUTOCPU
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// The CPU runtime's entry points: OpenBLAS GEMMs in f32 and f64, oneDNN
/// convolutions in f32, depthwise and grouped ones included (oneDNN has no
/// f64 convolution: those stay loops).
LibraryCallEntries getCPUEntries(Type element) {
  LibraryCallEntries entries;
  entries.gemm = element.isF32() ? "tofu_cpu_sgemm" : "tofu_cpu_dgemm";
  entries.gemmLibrary = "openblas";
  if (element.isF32()) {
    entries.conv[0] = "tofu_cpu_conv2d_forward";
    entries.conv[1] = "tofu_cpu_conv2d_backward_data";
    entries.conv[2] = "tofu_cpu_conv2d_backward_filter";
    entries.convLibrary = "onednn";
    entries.grouped = true;
  }
  return entries;
}

struct ConvertTofuToCPUPass
    : public tofu::impl::ConvertTofuToCPUBase<ConvertTofuToCPUPass> {
  void runOnOperation() override {
    if (failed(lowerLibraryCalls(getOperation(), "convert-tofu-to-cpu",
                                 getCPUEntries)))
      signalPassFailure();
  }
};

} // namespace
