//===- GemmPlanTest.cpp - Strided GEMMs as cuBLAS calls -------------------===//
//
// Executes the cuBLAS call that planGemm chooses on the host, with cuBLAS's
// column-major semantics, and compares it with the strided product it
// stands for: every combination of row- and column-major operands, padded
// leading dimensions, degenerate sizes, batches, broadcast operands and
// both betas.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/GemmPlan.h"

#include <gtest/gtest.h>

#include <vector>

using namespace tofu::gpu;

namespace {

/// A strided matrix of rows x cols per batch in its own storage.
struct Operand {
  StridedMatrix view;
  std::vector<float> data;

  float at(intptr_t b, intptr_t r, intptr_t c) const {
    return data[b * view.batch + r * view.row + c * view.col];
  }
};

/// Row-major (or column-major) storage with `pad` unused elements after
/// each row (or column), `batches` matrices, batch stride 0 for a
/// broadcast operand.
Operand makeOperand(intptr_t rows, intptr_t cols, bool rowMajor, intptr_t pad,
                    intptr_t batches, bool broadcast, float seed) {
  Operand x;
  intptr_t ld = (rowMajor ? cols : rows) + pad;
  x.view.row = rowMajor ? ld : 1;
  x.view.col = rowMajor ? 1 : ld;
  intptr_t footprint = ld * (rowMajor ? rows : cols);
  x.view.batch = broadcast ? 0 : footprint;
  x.data.resize(std::max<intptr_t>(footprint * (broadcast ? 1 : batches), 1));
  for (size_t i = 0; i < x.data.size(); ++i)
    x.data[i] = seed + 0.25f * float(i % 7) - 0.5f * float(i % 3);
  return x;
}

/// Plans and runs C = A B + beta C and checks every element against the
/// strided definition.
void check(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, bool aRow,
           bool bRow, bool cRow, intptr_t pad, bool broadcastB, float beta) {
  Operand a = makeOperand(m, k, aRow, pad, batch, false, 1.0f);
  Operand b = makeOperand(k, n, bRow, pad, batch, broadcastB, -2.0f);
  Operand c = makeOperand(m, n, cRow, pad, batch, false, 0.5f);
  Operand expected = c;
  for (intptr_t bb = 0; bb < batch; ++bb)
    for (intptr_t i = 0; i < m; ++i)
      for (intptr_t j = 0; j < n; ++j) {
        float sum = 0.0f;
        for (intptr_t l = 0; l < k; ++l)
          sum += a.at(bb, i, l) * b.at(bb, l, j);
        float &out =
            expected.data[bb * c.view.batch + i * c.view.row + j * c.view.col];
        out = beta == 0.0f ? sum : sum + beta * out;
      }
  GemmPlan plan;
  std::string error = planGemm(batch, m, n, k, a.view, b.view, c.view, plan);
  ASSERT_EQ(error, "");
  runPlanOnHost(plan, a.data.data(), b.data.data(), c.data.data(), beta);
  for (size_t i = 0; i < c.data.size(); ++i)
    ASSERT_NEAR(c.data[i], expected.data[i], 1e-4)
        << "batch " << batch << " m " << m << " n " << n << " k " << k
        << " layouts " << aRow << bRow << cRow << " pad " << pad << " beta "
        << beta << " element " << i;
}

} // namespace

TEST(GemmPlanTest, EveryLayoutMatchesTheStridedProduct) {
  int cases = 0;
  for (intptr_t batch : {1, 3})
    for (intptr_t m : {1, 4})
      for (intptr_t n : {1, 3})
        for (intptr_t k : {1, 5})
          for (int layouts = 0; layouts < 8; ++layouts)
            for (intptr_t pad : {0, 2})
              for (float beta : {0.0f, 1.0f}) {
                check(batch, m, n, k, layouts & 1, layouts & 2, layouts & 4,
                      pad, /*broadcastB=*/false, beta);
                ++cases;
              }
  EXPECT_EQ(cases, 512);
}

TEST(GemmPlanTest, BroadcastOperandHasBatchStrideZero) {
  check(4, 3, 5, 2, true, false, true, 0, /*broadcastB=*/true, 0.0f);
  check(4, 3, 5, 2, false, true, false, 1, /*broadcastB=*/true, 1.0f);
}

TEST(GemmPlanTest, RowMajorOutputSwapsTheOperands) {
  StridedMatrix a{0, 0, 6, 1, 0}, b{0, 0, 8, 1, 0}, c{0, 0, 8, 1, 0};
  GemmPlan plan;
  ASSERT_EQ(planGemm(1, 4, 8, 6, a, b, c, plan), "");
  EXPECT_TRUE(plan.swapped);
  EXPECT_EQ(plan.rows, 8);
  EXPECT_EQ(plan.cols, 4);
  EXPECT_FALSE(plan.first.transposed);
  EXPECT_FALSE(plan.second.transposed);
  EXPECT_EQ(plan.first.ld, 8);
  EXPECT_EQ(plan.second.ld, 6);
  EXPECT_EQ(plan.c.ld, 8);
}

TEST(GemmPlanTest, EmptyAndZeroDepthProducts) {
  GemmPlan plan;
  StridedMatrix a{0, 0, 1, 1, 0}, b{0, 0, 1, 1, 0}, c{0, 0, 3, 1, 0};
  ASSERT_EQ(planGemm(1, 0, 3, 2, a, b, c, plan), "");
  EXPECT_EQ(plan.kind, GemmPlan::Nothing);
  ASSERT_EQ(planGemm(0, 2, 3, 2, a, b, c, plan), "");
  EXPECT_EQ(plan.kind, GemmPlan::Nothing);
  // k = 0 with beta = 0 zeroes C.
  check(2, 2, 3, 0, true, true, true, 1, false, 0.0f);
  check(2, 2, 3, 0, true, true, false, 0, false, 1.0f);
  ASSERT_EQ(planGemm(1, 2, 3, 0, a, b, c, plan), "");
  EXPECT_EQ(plan.kind, GemmPlan::ZeroC);
}

TEST(GemmPlanTest, RejectsOperandsWithoutUnitStride) {
  GemmPlan plan;
  StridedMatrix a{0, 0, 12, 2, 0}, b{0, 0, 4, 1, 0}, c{0, 0, 4, 1, 0};
  std::string error = planGemm(1, 3, 4, 5, a, b, c, plan);
  EXPECT_NE(error.find("operand A"), std::string::npos) << error;
  // Overlapping rows: a leading dimension smaller than the row length.
  StridedMatrix overlap{0, 0, 2, 1, 0};
  error = planGemm(1, 3, 4, 5, overlap, b, c, plan);
  EXPECT_NE(error.find("operand A"), std::string::npos) << error;
  EXPECT_NE(planGemm(-1, 3, 4, 5, b, b, c, plan), "");
}
