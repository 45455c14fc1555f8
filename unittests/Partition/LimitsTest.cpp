//===- LimitsTest.cpp - Tests of the cost model's arithmetic limits -------===//
//
// Checked rational arithmetic, tensor size limits, and the access checks of
// the loop-space inference: values the model cannot represent are errors,
// never wrapped integers.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Graph.h"
#include "tofu/Partition/Strategy.h"

#include "gtest/gtest.h"

#include <limits>

using namespace tofu;
using namespace tofu::tdl;

namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

TEST(LimitsTest, RationalOverflowIsInvalidAndSticky) {
  Rational big(kMax);
  EXPECT_TRUE(big.isValid());
  EXPECT_FALSE((big + Rational(1)).isValid());
  EXPECT_FALSE((big * Rational(2)).isValid());
  EXPECT_FALSE((Rational(1, kMax) * Rational(1, 2)).isValid());
  EXPECT_FALSE((Rational(1) / Rational(0)).isValid());
  EXPECT_FALSE(Rational(1, 0).isValid());
  EXPECT_FALSE(Rational(std::numeric_limits<int64_t>::min()).isValid());
  // Every later operation keeps the invalid value.
  Rational bad = big + Rational(1);
  EXPECT_FALSE((bad - big).isValid());
  EXPECT_FALSE((bad * Rational(0)).isValid());
  EXPECT_FALSE(bad < Rational(0));
  EXPECT_FALSE(Rational(0) < bad);
  EXPECT_EQ(bad.str(), "invalid");
}

TEST(LimitsTest, RationalIntermediatesBeyond64BitsStayExact) {
  // (2^62 / 3) * (3 / 2^61) = 2: the product of the parts needs 124 bits.
  Rational a(int64_t(1) << 62, 3), b(3, int64_t(1) << 61);
  EXPECT_EQ(a * b, Rational(2));
  EXPECT_EQ(Rational(kMax) - Rational(kMax), Rational(0));
  EXPECT_TRUE(Rational(kMax, 2) < Rational(kMax - 1, 1));
}

TEST(LimitsTest, TensorSizes) {
  EXPECT_EQ(checkTensorSize({1024, 1024}, 4), "");
  EXPECT_EQ(checkTensorSize({}, 8), "");
  // A dimension beyond the limit is rejected even when another is 0.
  EXPECT_NE(checkTensorSize({0, int64_t(1) << 62}, 4), "");
  // 2^64 elements: the product overflows 64 bits.
  EXPECT_NE(checkTensorSize({int64_t(1) << 32, int64_t(1) << 32}, 4), "");
  EXPECT_NE(checkTensorSize({int64_t(1) << 40, 2}, 1), "");
  EXPECT_EQ(checkTensorSize({int64_t(1) << 40}, 1), "");
  EXPECT_NE(checkTensorSize({int64_t(1) << 40}, 512), "");
  EXPECT_NE(checkTensorSize({4, -2}, 4), "");
}

std::string loopSpaceError(const std::string &text, const OpShapes &shapes) {
  ParseError perr;
  std::optional<OpDesc> desc = parse(text, perr);
  EXPECT_TRUE(desc.has_value()) << perr.message;
  std::string error;
  std::optional<LoopSpace> space =
      desc ? inferLoopSpace(*desc, shapes, error) : std::nullopt;
  if (space && checkAccessBounds(*desc, shapes, *space, error))
    return "";
  return error;
}

TEST(LimitsTest, AccessEntirelyOutsideTheInput) {
  EXPECT_NE(loopSpaceError("(a) -> (i, j) = a[i - 100, j + 1000]",
                           {{{8, 8}}, {{8, 8}}})
                .find("is entirely outside input 'a'"),
            std::string::npos);
  // Partly outside, as in a padded convolution: accepted.
  EXPECT_EQ(loopSpaceError("(a) -> (i) = a[i - 1]", {{{8}}, {{8}}}), "");
  EXPECT_EQ(loopSpaceError("(a) -> (i) = a[i + 7]", {{{8}}, {{8}}}), "");
  EXPECT_NE(loopSpaceError("(a) -> (i) = a[i + 8]", {{{8}}, {{8}}}), "");
  // An empty loop space reads nothing and is not checked.
  EXPECT_EQ(loopSpaceError("(a) -> (i) = a[i + 8]", {{{8}}, {{0}}}), "");
}

TEST(LimitsTest, AccessIndicesBeyond64Bits) {
  EXPECT_NE(loopSpaceError("(a) -> (i, j) = a[i * 4611686018427387904, j]",
                           {{{8, 8}}, {{8, 8}}})
                .find("beyond what the cost model can represent"),
            std::string::npos);
}

} // namespace
