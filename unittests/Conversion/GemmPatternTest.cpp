//===- GemmPatternTest.cpp - Matrix products from loop structure ----------===//
//
// The rule of matchGemmPattern on hand-written loop sets: plain, batched
// and transposed products in any loop order, the backward products of
// tofu-autodiff, and the forms that must not match (a reduction that
// indexes the output, a parallel K, a loop that indexes one operand
// alone, a loop used twice, a missing N); and grouped products (several
// loops per M, N or K, held adjacent and in one order) with the groups it
// must refuse.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/GemmPattern.h"

#include <gtest/gtest.h>

using namespace tofu::gemm;

namespace {

constexpr bool P = true, R = false;

TEST(GemmPattern, Matmul) {
  // linalg.matmul: (m, n, k), A(m, k), B(k, n), C(m, n).
  auto match = matchGemmPattern(3, {P, P, R}, {{0, 2}, {2, 1}, {0, 1}});
  ASSERT_TRUE(match);
  EXPECT_TRUE(match->batchLoops.empty());
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{0}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{1}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{2}));
}

TEST(GemmPattern, TransposedOperandsAndAnyLoopOrder) {
  // A^T: A(k, m); B^T: B(n, k); loops (k, n, m).
  auto match = matchGemmPattern(3, {R, P, P}, {{0, 2}, {1, 0}, {2, 1}});
  ASSERT_TRUE(match);
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{2}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{1}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{0}));
}

TEST(GemmPattern, BatchedKeepsTheBatchLoopsInOrder) {
  // batch_matmul with two batch loops: (b0, b1, m, n, k).
  auto match = matchGemmPattern(5, {P, P, P, P, R},
                                {{0, 1, 2, 4}, {0, 1, 4, 3}, {0, 1, 2, 3}});
  ASSERT_TRUE(match);
  EXPECT_EQ(match->batchLoops, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{2}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{3}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{4}));
}

TEST(GemmPattern, BroadcastBatchOfA1x1Convolution) {
  // Y(n, f, h, w) += X(n, c, h, w) * W(f, c): loops (n, f, h, w, c). The
  // images are a batch that W does not hold; M = (h, w), N = f, K = c.
  auto match = matchGemmPattern(5, {P, P, P, P, R},
                                {{0, 4, 2, 3}, {1, 4}, {0, 1, 2, 3}});
  ASSERT_TRUE(match);
  EXPECT_EQ(match->batchLoops, (std::vector<unsigned>{0}));
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{1}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{4}));
  // Its data gradient: dX(n, c, h, w) += W(f, c) * dY(n, f, h, w), loops
  // (n, c, h, w, f), W as A.
  match = matchGemmPattern(5, {P, P, P, P, R},
                           {{4, 1}, {0, 4, 2, 3}, {0, 1, 2, 3}});
  ASSERT_TRUE(match);
  EXPECT_EQ(match->batchLoops, (std::vector<unsigned>{0}));
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{1}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{2, 3}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{4}));
}

TEST(GemmPattern, BroadcastOnlyWhereTheGroupsAreNotContiguous) {
  // A plain matmul keeps M: C's outermost loop is A's too, but the groups
  // already match.
  auto match = matchGemmPattern(3, {P, P, R}, {{0, 2}, {2, 1}, {0, 1}});
  ASSERT_TRUE(match);
  EXPECT_TRUE(match->batchLoops.empty());
  // No broadcast of a loop that is not the input's outermost dimension:
  // X(c, n, h, w).
  EXPECT_FALSE(matchGemmPattern(5, {P, P, P, P, R},
                                {{4, 0, 2, 3}, {1, 4}, {0, 1, 2, 3}}));
}

TEST(GemmPattern, AccumulatesOverTheImagesOfA1x1FilterGradient) {
  // dW(f, c) += dY(n, f, h, w) * X(n, c, h, w): loops (n, f, c, h, w). K =
  // (n, h, w) is not one dimension of dY; n, the outermost dimension of
  // both inputs and a reduction, becomes an accumulation loop (one product
  // per image added into dW) and K = (h, w).
  auto match = matchGemmPattern(5, {R, P, P, R, R},
                                {{0, 1, 3, 4}, {0, 2, 3, 4}, {1, 2}});
  ASSERT_TRUE(match);
  EXPECT_TRUE(match->batchLoops.empty());
  EXPECT_EQ(match->accumulateLoops, (std::vector<unsigned>{0}));
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{1}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{2}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{3, 4}));
  // Products whose K is contiguous keep it whole: the weight gradient of a
  // linear layer over (batch, tokens) sums both in one call.
  match = matchGemmPattern(4, {P, P, R, R}, {{2, 3, 0}, {2, 3, 1}, {0, 1}});
  ASSERT_TRUE(match);
  EXPECT_TRUE(match->accumulateLoops.empty());
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{2, 3}));
  // Not a loop that is the outermost dimension of one input only.
  EXPECT_FALSE(matchGemmPattern(5, {R, P, P, R, R},
                                {{1, 0, 3, 4}, {0, 2, 3, 4}, {1, 2}}));
  // Nor a parallel loop that C does not hold (no product at all).
  EXPECT_FALSE(matchGemmPattern(5, {P, P, P, R, R},
                                {{0, 1, 3, 4}, {0, 2, 3, 4}, {1, 2}}));
}

TEST(GemmPattern, WeightGradientOfALinearLayer) {
  // dW(i, o) += X(b, i) * dY(b, o): loops (i, o, b), K = the batch.
  auto match = matchGemmPattern(3, {P, P, R}, {{2, 0}, {2, 1}, {0, 1}});
  ASSERT_TRUE(match);
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{0}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{1}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{2}));
}

TEST(GemmPattern, RejectsWhatIsNoProduct) {
  // A reduction loop that indexes the output.
  EXPECT_FALSE(matchGemmPattern(3, {P, R, R}, {{0, 2}, {2, 1}, {0, 1}}));
  // K marked parallel.
  EXPECT_FALSE(matchGemmPattern(3, {P, P, P}, {{0, 2}, {2, 1}, {0, 1}}));
  // A loop that indexes A alone (a reduction inside A: no GEMM).
  EXPECT_FALSE(matchGemmPattern(4, {P, P, R, R}, {{0, 2, 3}, {2, 1}, {0, 1}}));
  // A loop used twice by one operand (a diagonal).
  EXPECT_FALSE(matchGemmPattern(3, {P, P, R}, {{0, 0}, {2, 1}, {0, 1}}));
  // No N: a matrix-vector product.
  EXPECT_FALSE(matchGemmPattern(2, {P, R}, {{0, 1}, {1}, {0}}));
  // Loops out of range and the wrong operand count.
  EXPECT_FALSE(matchGemmPattern(3, {P, P, R}, {{0, 5}, {2, 1}, {0, 1}}));
  EXPECT_FALSE(matchGemmPattern(3, {P, P, R}, {{0, 2}, {2, 1}}));
}

TEST(GemmPattern, TwoMLoopsAreOneGroup) {
  // C(m0, m1, n) += A(m0, m1, k) * B(k, n): loops (m0, m1, n, k).
  auto match =
      matchGemmPattern(4, {P, P, P, R}, {{0, 1, 3}, {3, 2}, {0, 1, 2}});
  ASSERT_TRUE(match);
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{0, 1}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{2}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{3}));
}

TEST(GemmPattern, GroupedGatesOfAnLSTM) {
  // gates(b, g, h) += x(b, k) * wx(k, g, h): loops (b, g, h, k), N = (g, h).
  auto match =
      matchGemmPattern(4, {P, P, P, R}, {{0, 3}, {3, 1, 2}, {0, 1, 2}});
  ASSERT_TRUE(match);
  EXPECT_TRUE(match->batchLoops.empty());
  EXPECT_EQ(match->mLoops, (std::vector<unsigned>{0}));
  EXPECT_EQ(match->nLoops, (std::vector<unsigned>{1, 2}));
  EXPECT_EQ(match->kLoops, (std::vector<unsigned>{3}));
}

TEST(GemmPattern, GroupedGradientsKeepTheOperandsOrder) {
  // dx(b, k) += dgates(b, g, h) * wx(k, g, h): loops (b, k, g, h), K = (g, h).
  auto dx = matchGemmPattern(4, {P, P, R, R}, {{0, 2, 3}, {1, 2, 3}, {0, 1}});
  ASSERT_TRUE(dx);
  EXPECT_EQ(dx->kLoops, (std::vector<unsigned>{2, 3}));
  // dwx(k, g, h) += x(b, k) * dgates(b, g, h) with the loops numbered
  // (h, k, b, g): the group follows the operands (g before h), not the
  // loop numbers.
  auto dw = matchGemmPattern(4, {P, P, R, P}, {{2, 1}, {2, 3, 0}, {1, 3, 0}});
  ASSERT_TRUE(dw);
  EXPECT_EQ(dw->mLoops, (std::vector<unsigned>{1}));
  EXPECT_EQ(dw->nLoops, (std::vector<unsigned>{3, 0}));
  EXPECT_EQ(dw->kLoops, (std::vector<unsigned>{2}));
}

TEST(GemmPattern, RefusesGroupsThatDoNotCollapse) {
  // N = (g, h) held as (g, h) by B but (h, g) by C.
  EXPECT_FALSE(
      matchGemmPattern(4, {P, P, P, R}, {{0, 3}, {3, 1, 2}, {0, 2, 1}}));
  // N = (g, h) not adjacent in C: C(g, b, h).
  EXPECT_FALSE(
      matchGemmPattern(4, {P, P, P, R}, {{0, 3}, {3, 1, 2}, {1, 0, 2}}));
  // K = (k0, k1) split by M in A, A(k0, m, k1), and held as (k1, k0) by
  // B (k0 is no accumulation loop: B does not lead with it).
  EXPECT_FALSE(
      matchGemmPattern(4, {P, P, R, R}, {{2, 0, 3}, {3, 2, 1}, {0, 1}}));
  // A reduction that indexes the output, and an empty N.
  EXPECT_FALSE(matchGemmPattern(3, {P, R, R}, {{0, 2}, {2, 1}, {0, 1}}));
  EXPECT_FALSE(matchGemmPattern(3, {P, P, R}, {{0, 1, 2}, {2}, {0, 1}}));
}

} // namespace
