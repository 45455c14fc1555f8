//===- IntervalTest.cpp - Tests of the symbolic interval arithmetic -------===//

#include "tofu/Partition/Interval.h"

#include "gtest/gtest.h"

using namespace tofu;

namespace {

std::pair<int64_t, int64_t> range(int64_t lo, int64_t hi) { return {lo, hi}; }

TEST(RationalTest, NormalizesAndRounds) {
  EXPECT_EQ(Rational(2, 4), Rational(1, 2));
  EXPECT_EQ(Rational(3, -6), Rational(-1, 2));
  EXPECT_EQ(Rational(7, 2).floor(), 3);
  EXPECT_EQ(Rational(7, 2).ceil(), 4);
  EXPECT_EQ(Rational(-7, 2).floor(), -4);
  EXPECT_EQ(Rational(-7, 2).ceil(), -3);
  EXPECT_EQ(Rational(-4, 2).floor(), -2);
  EXPECT_EQ((Rational(1, 3) + Rational(1, 6)).str(), "1/2");
}

TEST(IntervalTest, VariableAndShare) {
  // i in [0, N - 1]; the two halves of Tofu's Case 1.
  auto i = SymbolicInterval::variable(1, 0);
  EXPECT_EQ(i.evaluate({10}), range(0, 9));
  auto h0 = SymbolicInterval::share(1, 0, 0, 2);
  auto h1 = SymbolicInterval::share(1, 0, 1, 2);
  EXPECT_EQ(h0.evaluate({10}), range(0, 4));
  EXPECT_EQ(h1.evaluate({10}), range(5, 9));
  EXPECT_EQ(h1.str({"N"}), "[N/2, N - 1]");
}

TEST(IntervalTest, ShiftTwo) {
  // The paper's shift_two: B[i] = A[i + 2] with i in [0, 9].
  auto h0 = SymbolicInterval::share(1, 0, 0, 2) + Rational(2);
  auto h1 = SymbolicInterval::share(1, 0, 1, 2) + Rational(2);
  EXPECT_EQ(h0.evaluate({10}), range(2, 6));
  EXPECT_EQ(h1.evaluate({10}), range(7, 11));
}

TEST(IntervalTest, NegativeCoefficientsSwapBounds) {
  // 9 - i for i in [0, 9] is [0, 9]; for the first half [5, 9].
  auto i = SymbolicInterval::share(1, 0, 0, 2);
  auto r = SymbolicInterval::constant(1, Rational(9)) - i;
  EXPECT_EQ(r.evaluate({10}), range(5, 9));
  auto neg = i * Rational(-2);
  EXPECT_EQ(neg.evaluate({10}), range(-8, 0));
}

TEST(IntervalTest, SumOfTwoVariablesIsAHalo) {
  // x + dx, x cut in two, dx whole: [0, N_x/2 + N_dx - 2].
  auto x = SymbolicInterval::share(2, 0, 0, 2);
  auto dx = SymbolicInterval::variable(2, 1);
  auto r = x + dx;
  EXPECT_EQ(r.str({"N_x", "N_dx"}), "[0, N_x/2 + N_dx - 2]");
  EXPECT_EQ(r.evaluate({8, 3}), range(0, 5));
}

TEST(IntervalTest, FloorDivRounding) {
  // i floordiv 2 with i in [5, 9] is [2, 4]; with i in [0, 4] it is [0, 2].
  auto h0 = SymbolicInterval::share(1, 0, 0, 2).floorDiv(2);
  auto h1 = SymbolicInterval::share(1, 0, 1, 2).floorDiv(2);
  EXPECT_EQ(h0.evaluate({10}), range(0, 2));
  EXPECT_EQ(h1.evaluate({10}), range(2, 4));
  // Uneven: i in [0, 6] of 14; i floordiv 2 is [0, 3].
  EXPECT_EQ(h0.evaluate({14}), range(0, 3));
  // Negative numbers round towards minus infinity.
  auto c = SymbolicInterval::constant(1, Rational(-3)).floorDiv(2);
  EXPECT_EQ(c.evaluate({1}), range(-2, -2));
}

TEST(IntervalTest, CeilDivAndMod) {
  auto h1 = SymbolicInterval::share(1, 0, 1, 2).ceilDiv(2);
  EXPECT_EQ(h1.evaluate({10}), range(3, 5));
  auto m = SymbolicInterval::variable(1, 0).mod(4);
  EXPECT_EQ(m.evaluate({10}), range(0, 3));
  auto c = SymbolicInterval::constant(1, Rational(-1)).mod(4);
  EXPECT_EQ(c.evaluate({1}), range(3, 3));
}

TEST(IntervalTest, ProductNeedsAConstant) {
  auto i = SymbolicInterval::variable(2, 0);
  auto j = SymbolicInterval::variable(2, 1);
  EXPECT_FALSE(SymbolicInterval::product(i, j).has_value());
  auto three = SymbolicInterval::constant(2, Rational(3));
  auto p = SymbolicInterval::product(three, i);
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->evaluate({4, 1}), range(0, 9));
}

TEST(IntervalTest, RealDivisionFollowsFigure4) {
  auto i = SymbolicInterval::variable(1, 0) + Rational(1);
  auto d = i.divide(Rational(2));
  EXPECT_EQ(d.str({"N"}), "[1/2, N/2]");
}

} // namespace
