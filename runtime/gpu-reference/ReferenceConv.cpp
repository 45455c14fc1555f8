//===- ReferenceConv.cpp - The convolution entry points on the host -------===//
//
// A CPU stand-in for the tofu_gpu_conv2d_* entry points of the CUDA
// runtime: it checks each call exactly as the CUDA runtime does before it
// calls cuDNN (include/tofu/Runtime/ConvPlan.h) and computes the
// convolution on the host with cuDNN's semantics. Loaded into mlir-runner
// in place of the CUDA runtime, it checks the convolution calls that
// convert-tofu-to-gpu emits (addresses, strides, extents and beta)
// numerically on a machine without a GPU. TOFU_GPU_TRACE traces the calls
// as the CUDA runtime does (CallTrace.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/CallTrace.h"
#include "tofu/Runtime/ConvPlan.h"

#include <cstdio>
#include <cstdlib>

namespace {

void runConv(const char *entry, tofu::gpu::ConvKind kind,
             tofu::gpu::ConvProblem p) {
  std::string error = tofu::gpu::planConv(p);
  if (!error.empty()) {
    std::fprintf(stderr, "tofu gpu reference: %s: %s\n", entry, error.c_str());
    std::abort();
  }
  tofu::trace::traceCall(
      /*worker=*/0, [&] { return tofu::gpu::describeConv(entry, p); },
      [&] { return tofu::trace::getConvOperands(kind, p); },
      [&] { tofu::gpu::runConvOnHost(kind, p); },
      tofu::trace::checksumOperandOnHost);
}

} // namespace

TOFU_GPU_DEFINE_CONV2D_ENTRY_POINTS(runConv)
