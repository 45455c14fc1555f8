//===- LibraryCalls.cpp - GEMMs of the CPU runtime through OpenBLAS -------===//
//
// The entry points of convert-tofu-to-cpu: a strided (batched) product of
// row- or column-major views becomes cblas_sgemm or cblas_dgemm calls,
// column-major, planned exactly as the CUDA runtime plans its cuBLAS call
// (include/tofu/Runtime/GemmPlan.h). OpenBLAS has no strided-batched GEMM
// in Debian's version, so the batch is a loop of calls here. A view that
// BLAS cannot take (no unit-stride dimension, known only at run time) is
// multiplied as contiguous copies. The number of
// OpenBLAS threads is set explicitly, once: TOFU_NUM_THREADS (tofu-run
// --threads), 1 by default, so that `mpiexec -n <cores>` fills a machine
// with one core per rank.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/GemmPlan.h"
#include "tofu/Runtime/TofuRuntime.h"

#include "Profile.h"
#include "RuntimeSupport.h"

#include <cblas.h>

#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

[[noreturn]] void misuse(const char *entry, const std::string &why) {
  std::fprintf(stderr, "tofu runtime: %s: %s\n", entry, why.c_str());
  std::fflush(stderr);
  std::abort();
}

/// Sets OpenBLAS's thread count once, from TOFU_NUM_THREADS.
void setThreadsOnce() {
  static const bool done = [] {
    openblas_set_num_threads(tofu::runtime::getLibraryThreads());
    return true;
  }();
  (void)done;
}

/// cblas_sgemm or cblas_dgemm with alpha = 1.
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          const float *a, int lda, const float *b, int ldb, float beta,
          float *c, int ldc) {
  cblas_sgemm(CblasColMajor, ta, tb, m, n, k, 1.0f, a, lda, b, ldb, beta, c,
              ldc);
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int m, int n, int k,
          const double *a, int lda, const double *b, int ldb, double beta,
          double *c, int ldc) {
  cblas_dgemm(CblasColMajor, ta, tb, m, n, k, 1.0, a, lda, b, ldb, beta, c,
              ldc);
}

/// A strided batch of matrices: `batch` of `rows` x `cols` elements at
/// `base`, with strides in elements.
struct View {
  intptr_t base, batch, rows, cols, rowStride, colStride, batchStride;
};

/// Copies `view` into or out of `packed`, contiguous and row-major.
template <typename T>
void copyView(const View &view, T *packed, bool intoPacked) {
  T *data = reinterpret_cast<T *>(view.base);
  for (intptr_t b = 0; b < view.batch; ++b)
    for (intptr_t i = 0; i < view.rows; ++i)
      for (intptr_t j = 0; j < view.cols; ++j) {
        T &strided = data[b * view.batchStride + i * view.rowStride +
                          j * view.colStride];
        T &dense = packed[(b * view.rows + i) * view.cols + j];
        if (intoPacked)
          dense = strided;
        else
          strided = dense;
      }
}

template <typename T>
void stridedGemm(const char *entry, intptr_t batch, intptr_t m, intptr_t n,
                 intptr_t k, intptr_t a, intptr_t aRow, intptr_t aCol,
                 intptr_t aBatch, intptr_t b, intptr_t bRow, intptr_t bCol,
                 intptr_t bBatch, intptr_t c, intptr_t cRow, intptr_t cCol,
                 intptr_t cBatch, float beta);

/// stridedGemm on contiguous copies of A, B and C, for views that BLAS
/// cannot take: a view with no unit-stride dimension (a slice with a step
/// of a function argument, whose strides the lowering did not know).
/// Returns false when the sizes do not allow it.
template <typename T>
bool packedGemm(const char *entry, intptr_t batch, intptr_t m, intptr_t n,
                intptr_t k, intptr_t a, intptr_t aRow, intptr_t aCol,
                intptr_t aBatch, intptr_t b, intptr_t bRow, intptr_t bCol,
                intptr_t bBatch, intptr_t c, intptr_t cRow, intptr_t cCol,
                intptr_t cBatch, float beta) {
  for (intptr_t v : {batch, m, n, k})
    if (v < 0 || v > INT_MAX)
      return false;
  View va{a, batch, m, k, aRow, aCol, aBatch};
  View vb{b, batch, k, n, bRow, bCol, bBatch};
  View vc{c, batch, m, n, cRow, cCol, cBatch};
  std::vector<T> pa(size_t(batch * m * k)), pb(size_t(batch * k * n)),
      pc(size_t(batch * m * n));
  copyView(va, pa.data(), /*intoPacked=*/true);
  copyView(vb, pb.data(), /*intoPacked=*/true);
  if (beta != 0.0f)
    copyView(vc, pc.data(), /*intoPacked=*/true);
  stridedGemm<T>(entry, batch, m, n, k, intptr_t(pa.data()), k, 1, m * k,
                 intptr_t(pb.data()), n, 1, k * n, intptr_t(pc.data()), n, 1,
                 m * n, beta);
  copyView(vc, pc.data(), /*intoPacked=*/false);
  return true;
}

/// C[b] (m x n) = A[b] (m x k) B[b] (k x n) + beta C[b] on strided views
/// (addresses and strides in elements), for b < batch.
template <typename T>
void stridedGemm(const char *entry, intptr_t batch, intptr_t m, intptr_t n,
                 intptr_t k, intptr_t a, intptr_t aRow, intptr_t aCol,
                 intptr_t aBatch, intptr_t b, intptr_t bRow, intptr_t bCol,
                 intptr_t bBatch, intptr_t c, intptr_t cRow, intptr_t cCol,
                 intptr_t cBatch, float beta) {
  if (beta != 0.0f && beta != 1.0f)
    misuse(entry, "beta must be 0 or 1");
  setThreadsOnce();
  tofu::gpu::GemmPlan plan;
  std::string error = tofu::gpu::planStridedGemm(
      batch, m, n, k, aRow, aCol, aBatch, bRow, bCol, bBatch, cRow, cCol,
      cBatch, plan);
  if (!error.empty()) {
    if (!packedGemm<T>(entry, batch, m, n, k, a, aRow, aCol, aBatch, b, bRow,
                       bCol, bBatch, c, cRow, cCol, cBatch, beta))
      misuse(entry, error);
    return;
  }
  if (plan.kind == tofu::gpu::GemmPlan::Nothing)
    return;
  auto *pc = reinterpret_cast<T *>(c);
  if (plan.kind == tofu::gpu::GemmPlan::ZeroC) {
    // k = 0: C = beta * C, so only an overwritten C changes (to zero).
    if (beta == 0.0f)
      for (int i = 0; i < plan.batch; ++i)
        for (int j = 0; j < plan.cols; ++j)
          std::memset(pc + intptr_t(i) * plan.c.batchStride +
                          intptr_t(j) * plan.c.ld,
                      0, size_t(plan.rows) * sizeof(T));
    return;
  }
  auto *first = reinterpret_cast<const T *>(plan.swapped ? b : a);
  auto *second = reinterpret_cast<const T *>(plan.swapped ? a : b);
  CBLAS_TRANSPOSE opFirst = plan.first.transposed ? CblasTrans : CblasNoTrans;
  CBLAS_TRANSPOSE opSecond =
      plan.second.transposed ? CblasTrans : CblasNoTrans;
  tofu::runtime::ProfiledCall call(tofu::gpu::OpClass::Blas, [&] {
    return tofu::gpu::describeGemm(sizeof(T) == 4 ? "sgemm" : "dgemm", plan,
                                   beta != 0.0f);
  });
  for (int i = 0; i < plan.batch; ++i)
    gemm(opFirst, opSecond, plan.rows, plan.cols, plan.k,
         first + intptr_t(i) * plan.first.batchStride, plan.first.ld,
         second + intptr_t(i) * plan.second.batchStride, plan.second.ld,
         T(beta), pc + intptr_t(i) * plan.c.batchStride, plan.c.ld);
}

} // namespace

extern "C" {

void tofu_cpu_sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                    intptr_t a, intptr_t aRow, intptr_t aCol, intptr_t aBatch,
                    intptr_t b, intptr_t bRow, intptr_t bCol, intptr_t bBatch,
                    intptr_t c, intptr_t cRow, intptr_t cCol, intptr_t cBatch,
                    float beta) {
  stridedGemm<float>("tofu_cpu_sgemm", batch, m, n, k, a, aRow, aCol, aBatch,
                     b, bRow, bCol, bBatch, c, cRow, cCol, cBatch, beta);
}

void tofu_cpu_dgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                    intptr_t a, intptr_t aRow, intptr_t aCol, intptr_t aBatch,
                    intptr_t b, intptr_t bRow, intptr_t bCol, intptr_t bBatch,
                    intptr_t c, intptr_t cRow, intptr_t cCol, intptr_t cBatch,
                    float beta) {
  stridedGemm<double>("tofu_cpu_dgemm", batch, m, n, k, a, aRow, aCol, aBatch,
                      b, bRow, bCol, bBatch, c, cRow, cCol, cBatch, beta);
}

} // extern "C"
