//===- ReferenceGemm.cpp - The GEMM entry point on the host ---------------===//
//
// A CPU stand-in for tofu_gpu_sgemm of the CUDA runtime: it plans the
// cuBLAS call exactly as the CUDA runtime does (include/tofu/Runtime/
// GemmPlan.h) and executes that call on the host. Loaded into mlir-runner
// in place of the CUDA runtime, it checks the library calls that
// convert-tofu-to-gpu emits (addresses, strides, transpositions, batches
// and beta) numerically on a machine without a GPU. TOFU_GPU_TRACE traces
// the calls as the CUDA runtime does (CallTrace.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/CallTrace.h"
#include "tofu/Runtime/GemmPlan.h"

#include <cstdio>
#include <cstdlib>

extern "C" void tofu_gpu_sgemm(intptr_t batch, intptr_t m, intptr_t n,
                               intptr_t k, intptr_t a, intptr_t aRow,
                               intptr_t aCol, intptr_t aBatch, intptr_t b,
                               intptr_t bRow, intptr_t bCol, intptr_t bBatch,
                               intptr_t c, intptr_t cRow, intptr_t cCol,
                               intptr_t cBatch, float beta) {
  if (beta != 0.0f && beta != 1.0f) {
    std::fprintf(stderr, "tofu gpu reference: tofu_gpu_sgemm: beta must be "
                         "0 or 1\n");
    std::abort();
  }
  tofu::gpu::GemmPlan plan;
  std::string error = tofu::gpu::planStridedGemm(
      batch, m, n, k, aRow, aCol, aBatch, bRow, bCol, bBatch, cRow, cCol,
      cBatch, plan);
  if (!error.empty()) {
    std::fprintf(stderr, "tofu gpu reference: tofu_gpu_sgemm: %s\n",
                 error.c_str());
    std::abort();
  }
  if (plan.kind == tofu::gpu::GemmPlan::Nothing)
    return; // Not traced, as in the CUDA runtime.
  tofu::trace::traceCall(
      /*worker=*/0,
      [&] { return tofu::gpu::describeGemm("sgemm", plan, beta != 0.0f); },
      [&] {
        return tofu::trace::getGemmOperands(batch, m, n, k, a, aRow, aCol,
                                            aBatch, b, bRow, bCol, bBatch, c,
                                            cRow, cCol, cBatch, beta);
      },
      [&] {
        tofu::gpu::runPlanOnHost(plan, reinterpret_cast<const float *>(a),
                                 reinterpret_cast<const float *>(b),
                                 reinterpret_cast<float *>(c), beta);
      },
      tofu::trace::checksumOperandOnHost);
}
