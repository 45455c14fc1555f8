//===- TofuToGPU.cpp - GEMM-shaped linalg ops to cuBLAS calls -------------===//
//
// Implements convert-tofu-to-gpu: every single-precision GEMM-shaped
// linalg op on buffers becomes a call of tofu_gpu_sgemm, every
// single-precision convolution a call of one of the tofu_gpu_conv2d_*
// entry points (include/tofu/Runtime/TofuCudaRuntime.h), through the
// backends' shared lowering (LibraryCalls.h); a zero pad of a
// convolution's image becomes the call's padding.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

namespace tofu {
#define GEN_PASS_DEF_CONVERTTOFUTOGPU
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// The CUDA runtime's entry points: cuBLAS and cuDNN in single precision.
LibraryCallEntries getGPUEntries(Type element) {
  LibraryCallEntries entries;
  if (!element.isF32()) {
    entries.noConvReason = "the convolution is not single precision";
    return entries;
  }
  entries.gemm = "tofu_gpu_sgemm";
  entries.conv[0] = "tofu_gpu_conv2d_forward";
  entries.conv[1] = "tofu_gpu_conv2d_backward_data";
  entries.conv[2] = "tofu_gpu_conv2d_backward_filter";
  entries.gemmLibrary = "cublas";
  entries.convLibrary = "cudnn";
  // cuDNN's group count takes depthwise and grouped convolutions.
  entries.grouped = true;
  return entries;
}

struct ConvertTofuToGPUPass
    : public tofu::impl::ConvertTofuToGPUBase<ConvertTofuToGPUPass> {
  using Base::Base;
  void runOnOperation() override {
    if (failed(lowerLibraryCalls(getOperation(), "convert-tofu-to-gpu",
                                 getGPUEntries, foldStridedDataGradients)))
      signalPassFailure();
  }
};

} // namespace

bool tofu::isLibraryOp(linalg::LinalgOp op) {
  Type element = getLibraryElementType(op);
  if (!element)
    return false;
  LibraryCallEntries entries = getGPUEntries(element);
  return (!entries.gemm.empty() && matchGemm(op)) ||
         (!entries.conv[0].empty() &&
          matchConvolution(op, /*whyNot=*/nullptr, entries.grouped));
}
