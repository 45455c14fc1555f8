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
#include <optional>
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

/// Contiguous row-major copies of the A, B and C of a product, for views
/// that BLAS cannot take: a view with no unit-stride dimension (a slice
/// with a step of a function argument, whose strides the lowering did not
/// know). C goes back into its view when the copies go.
template <typename T> class PackedOperands {
public:
  PackedOperands(const View &aView, const View &bView, const View &cView,
                 bool readC)
      : cView(cView), a(pack(aView, true)), b(pack(bView, true)),
        c(pack(cView, readC)) {}
  ~PackedOperands() { copy(cView, c, /*intoPacked=*/false); }

  View view(const View &of, std::vector<T> &packed) const {
    return {
        intptr_t(packed.data()), of.batch,         of.rows, of.cols, of.cols,
        /*colStride=*/1,         of.rows * of.cols};
  }

  const View cView;
  std::vector<T> a, b, c;

private:
  static std::vector<T> pack(const View &view, bool read) {
    std::vector<T> packed(size_t(view.batch * view.rows * view.cols));
    if (read)
      copy(view, packed, /*intoPacked=*/true);
    return packed;
  }
  static void copy(const View &view, std::vector<T> &packed, bool intoPacked) {
    T *data = reinterpret_cast<T *>(view.base);
    for (intptr_t n = 0; n < view.batch; ++n)
      for (intptr_t i = 0; i < view.rows; ++i)
        for (intptr_t j = 0; j < view.cols; ++j) {
          T &strided = data[n * view.batchStride + i * view.rowStride +
                            j * view.colStride];
          T &dense = packed[size_t((n * view.rows + i) * view.cols + j)];
          if (intoPacked)
            dense = strided;
          else
            strided = dense;
        }
  }
};

/// C[b] (m x n) = A[b] (m x k) B[b] (k x n) + beta C[b] on strided views
/// (addresses and strides in elements), for b < batch.
template <typename T>
void stridedGemm(const char *entry, intptr_t m, intptr_t n, intptr_t k, View a,
                 View b, View c, float beta) {
  if (beta != 0.0f && beta != 1.0f)
    misuse(entry, "beta must be 0 or 1");
  setThreadsOnce();
  intptr_t batch = c.batch;
  a.rows = c.rows = m;
  a.cols = b.rows = k;
  b.cols = c.cols = n;
  a.batch = b.batch = batch;
  auto planFor = [&](tofu::gpu::GemmPlan &plan) {
    return tofu::gpu::planStridedGemm(batch, m, n, k, a.rowStride, a.colStride,
                                      a.batchStride, b.rowStride, b.colStride,
                                      b.batchStride, c.rowStride, c.colStride,
                                      c.batchStride, plan);
  };
  tofu::gpu::GemmPlan plan;
  std::string error = planFor(plan);
  std::optional<PackedOperands<T>> packed;
  if (!error.empty()) {
    bool sizesFit = true;
    for (intptr_t v : {batch, m, n, k})
      sizesFit &= v >= 0 && v <= INT_MAX;
    if (!sizesFit)
      misuse(entry, error);
    packed.emplace(a, b, c, /*readC=*/beta != 0.0f);
    a = packed->view(a, packed->a);
    b = packed->view(b, packed->b);
    c = packed->view(c, packed->c);
    error = planFor(plan);
    if (!error.empty())
      misuse(entry, error);
  }
  if (plan.kind == tofu::gpu::GemmPlan::Nothing)
    return;
  auto *pc = reinterpret_cast<T *>(c.base);
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
  auto *first = reinterpret_cast<const T *>(plan.swapped ? b.base : a.base);
  auto *second = reinterpret_cast<const T *>(plan.swapped ? a.base : b.base);
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
  stridedGemm<float>("tofu_cpu_sgemm", m, n, k,
                     {a, batch, m, k, aRow, aCol, aBatch},
                     {b, batch, k, n, bRow, bCol, bBatch},
                     {c, batch, m, n, cRow, cCol, cBatch}, beta);
}

void tofu_cpu_dgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                    intptr_t a, intptr_t aRow, intptr_t aCol, intptr_t aBatch,
                    intptr_t b, intptr_t bRow, intptr_t bCol, intptr_t bBatch,
                    intptr_t c, intptr_t cRow, intptr_t cCol, intptr_t cBatch,
                    float beta) {
  stridedGemm<double>("tofu_cpu_dgemm", m, n, k,
                      {a, batch, m, k, aRow, aCol, aBatch},
                      {b, batch, k, n, bRow, bCol, bBatch},
                      {c, batch, m, n, cRow, cCol, cBatch}, beta);
}

} // extern "C"
