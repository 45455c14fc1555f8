//===- GemmPlan.h - Strided GEMMs as cuBLAS calls ---------------*- C++ -*-===//
//
// How tofu_gpu_sgemm maps a product of strided row- or column-major views
// onto one column-major cuBLAS call (cublasSgemm or
// cublasSgemmStridedBatched): the transposition flags, leading dimensions
// and operand order. Plain C++, shared by the CUDA runtime and by the CPU
// stand-in that tests the plan without a GPU.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_GEMMPLAN_H
#define TOFU_RUNTIME_GEMMPLAN_H

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>

namespace tofu {
namespace gpu {

/// One strided operand: X[b](r, c) = x[b * batch + r * row + c * col].
struct StridedMatrix {
  intptr_t rows = 0, cols = 0;
  intptr_t row = 0, col = 0, batch = 0;
};

/// How cuBLAS sees one operand: column-major storage of the matrix itself
/// (`transposed` false) or of its transpose, with leading dimension `ld`.
struct BlasOperand {
  bool transposed = false;
  int ld = 1;
  intptr_t batchStride = 0;
};

/// The cuBLAS call: C'(rows x cols) = op(first) * op(second) + beta C',
/// column-major, where C' is C or, when `swapped`, C^T (then `first` is B
/// and `second` is A). `kind` says whether there is anything to compute.
struct GemmPlan {
  enum Kind { Gemm, Nothing, ZeroC } kind = Gemm;
  bool swapped = false;
  int batch = 1, rows = 0, cols = 0, k = 0;
  BlasOperand first, second, c;
};

/// Describes a matrix as column-major storage of itself or of its
/// transpose. A dimension of extent 1 accepts any stride. Returns false
/// when neither dimension has a unit stride or a value overflows int.
inline bool describeOperand(const StridedMatrix &x, BlasOperand &out) {
  intptr_t rows = std::max<intptr_t>(x.rows, 1);
  intptr_t cols = std::max<intptr_t>(x.cols, 1);
  intptr_t ld = 0;
  if ((x.row == 1 || rows == 1) && (cols == 1 || x.col >= rows)) {
    out.transposed = false;
    ld = cols == 1 ? rows : x.col;
  } else if ((x.col == 1 || cols == 1) && (rows == 1 || x.row >= cols)) {
    out.transposed = true;
    ld = rows == 1 ? cols : x.row;
  } else {
    return false;
  }
  if (ld < 1 || ld > INT_MAX)
    return false;
  out.ld = static_cast<int>(ld);
  out.batchStride = x.batch;
  return true;
}

/// Plans C[b] (m x n) = A[b] (m x k) B[b] (k x n) + beta C[b] for b < batch.
/// Returns an empty string on success, or what is wrong.
inline std::string planGemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                            StridedMatrix a, StridedMatrix b, StridedMatrix c,
                            GemmPlan &plan) {
  for (intptr_t v : {batch, m, n, k})
    if (v < 0 || v > INT_MAX)
      return "a size is negative or does not fit in int";
  a.rows = m;
  a.cols = k;
  b.rows = k;
  b.cols = n;
  c.rows = m;
  c.cols = n;
  plan = GemmPlan();
  plan.batch = static_cast<int>(batch);
  if (batch == 0 || m == 0 || n == 0) {
    plan.kind = GemmPlan::Nothing;
    return "";
  }
  BlasOperand oa, ob;
  char message[160];
  auto fail = [&](const char *name, const StridedMatrix &x) {
    std::snprintf(message, sizeof(message),
                  "operand %s (%ld x %ld, strides %ld, %ld) has no usable "
                  "unit-stride dimension",
                  name, long(x.rows), long(x.cols), long(x.row), long(x.col));
    return std::string(message);
  };
  if (!describeOperand(c, plan.c))
    return fail("C", c);
  if (k == 0) {
    plan.kind = GemmPlan::ZeroC;
    plan.rows = static_cast<int>(plan.c.transposed ? n : m);
    plan.cols = static_cast<int>(plan.c.transposed ? m : n);
    return "";
  }
  if (!describeOperand(a, oa))
    return fail("A", a);
  if (!describeOperand(b, ob))
    return fail("B", b);
  plan.k = static_cast<int>(k);
  if (!plan.c.transposed) {
    plan.rows = static_cast<int>(m);
    plan.cols = static_cast<int>(n);
    plan.first = oa;
    plan.second = ob;
    return "";
  }
  // C is stored row-major: compute C^T = B^T A^T, column-major. B^T is
  // column-major exactly when B is stored row-major, and so on.
  plan.swapped = true;
  plan.rows = static_cast<int>(n);
  plan.cols = static_cast<int>(m);
  plan.first = ob;
  plan.second = oa;
  plan.first.transposed = !ob.transposed;
  plan.second.transposed = !oa.transposed;
  return "";
}

/// planGemm on the operands as the library entry points take them (the
/// row, column and batch strides of A, B and C), shared by the CPU, CUDA
/// and host stand-in runtimes.
inline std::string planStridedGemm(intptr_t batch, intptr_t m, intptr_t n,
                                   intptr_t k, intptr_t aRow, intptr_t aCol,
                                   intptr_t aBatch, intptr_t bRow,
                                   intptr_t bCol, intptr_t bBatch,
                                   intptr_t cRow, intptr_t cCol,
                                   intptr_t cBatch, GemmPlan &plan) {
  StridedMatrix a, b, c;
  a.row = aRow, a.col = aCol, a.batch = aBatch;
  b.row = bRow, b.col = bCol, b.batch = bBatch;
  c.row = cRow, c.col = cCol, c.batch = cBatch;
  return planGemm(batch, m, n, k, a, b, c, plan);
}

/// Executes `plan` on the host exactly as cuBLAS defines the call
/// (column-major, op(X) = X or X^T, strided batches) with alpha = 1: the
/// reference against which the plan is tested without a GPU. `a`, `b` and
/// `c` are the operands of planGemm; `first` and `second` are chosen here.
inline void runPlanOnHost(const GemmPlan &plan, const float *a, const float *b,
                          float *c, float beta) {
  if (plan.kind == GemmPlan::Nothing)
    return;
  for (int batch = 0; batch < plan.batch; ++batch) {
    float *cb = c + intptr_t(batch) * plan.c.batchStride;
    if (plan.kind == GemmPlan::ZeroC) {
      if (beta == 0.0f)
        for (int j = 0; j < plan.cols; ++j)
          for (int i = 0; i < plan.rows; ++i)
            cb[i + intptr_t(j) * plan.c.ld] = 0.0f;
      continue;
    }
    const float *p =
        (plan.swapped ? b : a) + intptr_t(batch) * plan.first.batchStride;
    const float *q =
        (plan.swapped ? a : b) + intptr_t(batch) * plan.second.batchStride;
    // op(P)(i, l) and op(Q)(l, j) of column-major P and Q.
    auto opP = [&](int i, int l) {
      return plan.first.transposed ? p[l + intptr_t(i) * plan.first.ld]
                                   : p[i + intptr_t(l) * plan.first.ld];
    };
    auto opQ = [&](int l, int j) {
      return plan.second.transposed ? q[j + intptr_t(l) * plan.second.ld]
                                    : q[l + intptr_t(j) * plan.second.ld];
    };
    for (int j = 0; j < plan.cols; ++j)
      for (int i = 0; i < plan.rows; ++i) {
        float sum = 0.0f;
        for (int l = 0; l < plan.k; ++l)
          sum += opP(i, l) * opQ(l, j);
        float &out = cb[i + intptr_t(j) * plan.c.ld];
        out = beta == 0.0f ? sum : sum + beta * out;
      }
  }
}

/// The profile's name of a planned call: `prefix` ("sgemm", "dgemm"), the
/// operands' transposes, extents, batch and, when it accumulates, beta.
inline std::string describeGemm(const char *prefix, const GemmPlan &plan,
                                bool accumulates) {
  char text[160];
  std::snprintf(text, sizeof(text), "%s %c%c m=%d n=%d k=%d batch=%d%s", prefix,
                plan.first.transposed ? 'T' : 'N',
                plan.second.transposed ? 'T' : 'N', plan.rows, plan.cols,
                plan.k, plan.batch, accumulates ? " beta=1" : "");
  return text;
}

} // namespace gpu
} // namespace tofu

#endif // TOFU_RUNTIME_GEMMPLAN_H
