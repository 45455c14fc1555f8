//===- IntervalTest.cpp - Tests of the symbolic interval arithmetic -------===//

#include "tofu/Partition/Interval.h"
#include "tofu/Partition/Strategy.h"
#include "tofu/TDL/TDL.h"

#include "gtest/gtest.h"

#include <iostream>
#include <random>

using namespace tofu;
using tdl::IndexExpr;

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

/// A random affine index expression over i and j of depth <= `depth`:
/// sums, differences, products with a constant, floordiv, ceildiv and mod by
/// positive constants; variables may occur several times.
IndexExpr randomIndex(std::mt19937 &rng, int depth) {
  auto uniform = [&](int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  };
  if (depth == 0 || uniform(0, 3) == 0) {
    if (uniform(0, 2) == 0)
      return IndexExpr::makeConst(uniform(-3, 3));
    return IndexExpr::makeVar(uniform(0, 1) ? "i" : "j");
  }
  IndexExpr l = randomIndex(rng, depth - 1);
  switch (uniform(0, 5)) {
  case 0:
    return IndexExpr::makeBinary(IndexExpr::Kind::Add, l,
                                 randomIndex(rng, depth - 1));
  case 1:
    return IndexExpr::makeBinary(IndexExpr::Kind::Sub, l,
                                 randomIndex(rng, depth - 1));
  case 2:
    return IndexExpr::makeBinary(IndexExpr::Kind::Mul,
                                 IndexExpr::makeConst(uniform(-3, 3)), l);
  case 3:
    return IndexExpr::makeBinary(IndexExpr::Kind::FloorDiv, l,
                                 IndexExpr::makeConst(uniform(1, 4)));
  case 4:
    return IndexExpr::makeBinary(IndexExpr::Kind::CeilDiv, l,
                                 IndexExpr::makeConst(uniform(1, 4)));
  default:
    return IndexExpr::makeBinary(IndexExpr::Kind::Mod, l,
                                 IndexExpr::makeConst(uniform(1, 4)));
  }
}

/// floor(a / b) for b > 0, written out.
int64_t floorOf(int64_t a, int64_t b) {
  int64_t q = a / b;
  return q * b > a ? q - 1 : q;
}

/// The value of `e` at (i, j): the test's own evaluator.
int64_t valueOf(const IndexExpr &e, int64_t i, int64_t j) {
  if (e.kind == IndexExpr::Kind::Var)
    return e.var == "i" ? i : j;
  if (e.kind == IndexExpr::Kind::Const)
    return e.value;
  int64_t l = valueOf(e.operands[0], i, j), r = valueOf(e.operands[1], i, j);
  switch (e.kind) {
  case IndexExpr::Kind::Add:
    return l + r;
  case IndexExpr::Kind::Sub:
    return l - r;
  case IndexExpr::Kind::Mul:
    return l * r;
  case IndexExpr::Kind::FloorDiv:
    return floorOf(l, r);
  case IndexExpr::Kind::CeilDiv:
    return -floorOf(-l, r);
  default:
    return l - floorOf(l, r) * r;
  }
}

/// The exact [min, max] of `e` over a box of (i, j), point by point.
std::pair<int64_t, int64_t> pointRange(const IndexExpr &e,
                                       std::pair<int64_t, int64_t> i,
                                       std::pair<int64_t, int64_t> j) {
  std::pair<int64_t, int64_t> out{INT64_MAX, INT64_MIN};
  for (int64_t x = i.first; x <= i.second; ++x)
    for (int64_t y = j.first; y <= j.second; ++y) {
      int64_t v = valueOf(e, x, y);
      out.first = std::min(out.first, v);
      out.second = std::max(out.second, v);
    }
  return out;
}

TEST(IntervalTest, IntervalsAreSoundOnEnumeratedPoints) {
  // For random expressions, extents and workers: every value the expression
  // takes on a worker's points lies in the interval the analysis gives, for
  // the concrete chunk bounds (what the regions use) and for the symbolic
  // share of the paper (on the points its bounds round inwards to); the
  // enumerated range is the exact hull; and interval arithmetic is exact when
  // isIntervalExact says so.
  std::mt19937 rng(42);
  unsigned cases = 0, exactCases = 0, looser = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    IndexExpr e = randomIndex(rng, 3);
    LoopSpace space;
    space.vars = {"i", "j"};
    space.extents = {std::uniform_int_distribution<int64_t>(1, 9)(rng),
                     std::uniform_int_distribution<int64_t>(1, 6)(rng)};
    space.opaque = {false, false};
    unsigned k = std::uniform_int_distribution<unsigned>(2, 4)(rng);
    for (unsigned w = 0; w < k; ++w) {
      auto chunk = getChunk(space.extents[0], k, w);
      std::pair<int64_t, int64_t> whole{0, space.extents[1] - 1};
      if (chunk.second < chunk.first)
        continue;
      std::string error;
      std::vector<SymbolicInterval> concrete{
          SymbolicInterval::constantRange(2, Rational(chunk.first),
                                          Rational(chunk.second)),
          SymbolicInterval::constantRange(2, Rational(0),
                                          Rational(whole.second))};
      auto iv = evaluateIndex(e, space, concrete, 1, error);
      ASSERT_TRUE(iv) << error;
      auto [lo, hi] = iv->evaluate(space.extents);
      auto truth = pointRange(e, chunk, whole);
      EXPECT_LE(lo, truth.first) << tdl::printIndexExpr(e);
      EXPECT_GE(hi, truth.second) << tdl::printIndexExpr(e);
      auto enumerated =
          enumerateIndexRange(e, space, {chunk, whole}, 1u << 16);
      ASSERT_TRUE(enumerated);
      EXPECT_EQ(*enumerated, truth) << tdl::printIndexExpr(e);
      if (isIntervalExact(e)) {
        ++exactCases;
        EXPECT_EQ(std::make_pair(lo, hi), truth) << tdl::printIndexExpr(e);
      }
      looser += std::make_pair(lo, hi) != truth;

      // The paper's symbolic share, on the points it rounds inwards to.
      std::vector<SymbolicInterval> symbolic{
          SymbolicInterval::share(2, 0, w, k),
          SymbolicInterval::variable(2, 1)};
      auto sv = evaluateIndex(e, space, symbolic, 1, error);
      ASSERT_TRUE(sv) << error;
      auto share = symbolic[0].evaluate(space.extents);
      if (share.second >= share.first) {
        auto [slo, shi] = sv->evaluate(space.extents);
        auto sharedTruth = pointRange(e, share, whole);
        EXPECT_LE(slo, sharedTruth.first) << tdl::printIndexExpr(e);
        EXPECT_GE(shi, sharedTruth.second) << tdl::printIndexExpr(e);
      }
      ++cases;
    }
  }
  std::cout << "[ INFO     ] intervals checked on " << cases
            << " worker ranges; " << exactCases
            << " expressions exact by construction; " << looser
            << " intervals looser than the enumerated range\n";
  EXPECT_GE(cases, 4000u);
  EXPECT_GT(looser, 0u);
}

TEST(IntervalTest, CorrelatedAccessesGetTheirExactRegions) {
  // (3*i + 2*j) floordiv 2 - j + i mod 4 is floor(3i/2) + i mod 4: j cancels.
  // With i in [0, 7] cut in two, worker 0 reads [0, 7] and worker 1 [6, 13]
  // of 14 elements, a halo of 1. Interval arithmetic alone would give worker
  // 0 [0, 13] (the whole tensor).
  tdl::ParseError perr;
  auto desc =
      tdl::parse("(i, j) = A[(3 * i + 2 * j) floordiv 2 - j + i mod 4]", perr);
  ASSERT_TRUE(desc) << perr.message;
  OpShapes shapes;
  shapes.inputs = {{14}};
  shapes.outputs = {{8, 8}};
  std::string error;
  auto set = discoverStrategies(*desc, shapes, 2, error);
  ASSERT_TRUE(set) << error;
  const Strategy *cutI = nullptr;
  for (const Strategy &s : set->strategies)
    if (set->space.vars[s.var] == "i")
      cutI = &s;
  ASSERT_TRUE(cutI);
  const InputRequirement &req = cutI->inputs[0];
  ASSERT_EQ(req.regions.size(), 2u);
  EXPECT_EQ(req.regions[0].lo, (std::vector<int64_t>{0}));
  EXPECT_EQ(req.regions[0].hi, (std::vector<int64_t>{7}));
  EXPECT_EQ(req.regions[1].lo, (std::vector<int64_t>{6}));
  EXPECT_EQ(req.regions[1].hi, (std::vector<int64_t>{13}));
  EXPECT_EQ(req.halo, (std::vector<int64_t>{1}));
}

} // namespace
