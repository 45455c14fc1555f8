//===- SearchTest.cpp - Tests of coarsening, the DP and the recursion -----===//
//
// Property tests on random small graphs with fixed seeds:
//  - each step's DP equals brute force over the same (coarsened or not)
//    search space;
//  - per-step costs commute (Tofu, Theorem 1): applying the two steps of a
//    plan in the other order costs the same;
//  - the recursive plan costs as much as the best of every sequence of cuts.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Search.h"
#include "tofu/Partition/Coarsening.h"
#include "tofu/Partition/MinSum.h"
#include "tofu/Partition/Topology.h"

#include "gtest/gtest.h"

#include <cmath>
#include <iostream>
#include <random>

using namespace tofu;

namespace {

std::shared_ptr<const tdl::OpDesc> desc(const std::string &text) {
  tdl::ParseError perr;
  auto d = tdl::parse(text, perr);
  EXPECT_TRUE(d.has_value()) << perr.message << " in " << text;
  return std::make_shared<const tdl::OpDesc>(*d);
}

/// Builds graphs one operator at a time.
struct Builder {
  Graph g;
  int tensor(const std::string &name, Shape shape,
             TensorRole role = TensorRole::Activation) {
    g.tensors.push_back({name, std::move(shape), 4, role});
    return g.tensors.size() - 1;
  }
  int op(const std::string &name, std::shared_ptr<const tdl::OpDesc> d,
         std::vector<int> inputs, Shape out) {
    int o = g.ops.size();
    int t = tensor("%" + std::to_string(g.tensors.size()), out);
    g.tensors[t].producer = o;
    OpNode node;
    node.name = name;
    node.desc = std::move(d);
    node.inputs = inputs;
    node.outputs = {t};
    for (int i : inputs)
      node.shapes.inputs.push_back(g.tensors[i].shape);
    node.shapes.outputs.push_back(out);
    g.ops.push_back(std::move(node));
    return t;
  }
  Graph finish() {
    EXPECT_EQ(g.finalize(), "");
    return g;
  }
};

struct Descs {
  std::shared_ptr<const tdl::OpDesc> matmul =
      desc("(i, j) = sum(k) A[i, k] * B[k, j]");
  std::shared_ptr<const tdl::OpDesc> add = desc("(i, j) = A[i, j] + B[i, j]");
  std::shared_ptr<const tdl::OpDesc> relu = desc("(i, j) = max(A[i, j], 0.0)");
  std::shared_ptr<const tdl::OpDesc> transpose = desc("(i, j) = A[j, i]");
  std::shared_ptr<const tdl::OpDesc> rowsum = desc("(i) = sum(j) A[i, j]");
  std::shared_ptr<const tdl::OpDesc> bias = desc("(i, j) = A[i, j] + b[j]");
  std::shared_ptr<const tdl::OpDesc> conv =
      desc("(i, j) = sum(c, d) A[c, j + d] * F[c, i, d]");
};

/// A random graph of `numOps` operators on 2-D tensors whose dimensions are
/// multiples of 4. With `halo`, 1-D convolutions may appear.
Graph randomGraph(std::mt19937 &rng, unsigned numOps, bool halo) {
  static Descs d;
  Builder b;
  auto dim = [&]() {
    return std::uniform_int_distribution<int>(1, 2)(rng) * 4;
  };
  std::vector<int> pool{b.tensor("%x", {dim(), dim()}, TensorRole::Input)};
  auto pick = [&]() {
    return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
  };
  for (unsigned i = 0; i < numOps; ++i) {
    int a = pick();
    Shape s = b.g.tensors[a].shape;
    int out = -1;
    switch (std::uniform_int_distribution<int>(0, halo ? 6 : 5)(rng)) {
    case 0: {
      int w =
          b.tensor("%w" + std::to_string(i), {s[1], dim()}, TensorRole::Weight);
      out = b.op("matmul", d.matmul, {a, w}, {s[0], b.g.tensors[w].shape[1]});
      break;
    }
    case 1: {
      int other = -1;
      for (int t : pool)
        if (t != a && b.g.tensors[t].shape == s)
          other = t;
      if (other < 0)
        other = b.tensor("%y" + std::to_string(i), s, TensorRole::Input);
      out = b.op("add", d.add, {a, other}, s);
      break;
    }
    case 2:
      out = b.op("relu", d.relu, {a}, s);
      break;
    case 3:
      out = b.op("transpose", d.transpose, {a}, {s[1], s[0]});
      break;
    case 4: {
      int r = b.op("rowsum", d.rowsum, {a}, {s[0]});
      pool.push_back(r);
      int m =
          b.tensor("%m" + std::to_string(i), {s[1], s[0]}, TensorRole::Weight);
      out = b.op("matmul", d.matmul, {a, m}, {s[0], s[0]});
      break;
    }
    case 5: {
      int bias = b.tensor("%b" + std::to_string(i), {s[1]}, TensorRole::Weight);
      out = b.op("bias", d.bias, {a, bias}, s);
      break;
    }
    default: {
      int f =
          b.tensor("%f" + std::to_string(i), {s[0], 4, 3}, TensorRole::Weight);
      out = b.op("conv", d.conv, {a, f}, {4, s[1] - 2});
      break;
    }
    }
    pool.push_back(out);
  }
  return b.finish();
}

bool near(double a, double b) {
  return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(a) + std::abs(b));
}

TEST(TilingTest, ConversionCostMatchesBoxes) {
  // The closed forms of getConversionCost against fetching boxes.
  std::mt19937 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    Shape shape{std::uniform_int_distribution<int64_t>(1, 9)(rng),
                std::uniform_int_distribution<int64_t>(1, 9)(rng),
                std::uniform_int_distribution<int64_t>(1, 3)(rng)};
    unsigned k = std::uniform_int_distribution<unsigned>(2, 5)(rng);
    std::vector<Tiling> tilings{Tiling::cut(0), Tiling::cut(1), Tiling::cut(2),
                                Tiling::replicate()};
    for (Tiling from : tilings)
      for (Tiling to : tilings)
        EXPECT_EQ(getConversionCost(shape, from, to, k),
                  getGatherCost(shape, from, getTileBoxes(shape, to, k), k))
            << from.str() << " -> " << to.str() << " k " << k;
  }
}

TEST(TopologyTest, Factorize) {
  EXPECT_EQ(factorize(8), (std::vector<unsigned>{2, 2, 2}));
  EXPECT_EQ(factorize(12), (std::vector<unsigned>{3, 2, 2}));
  EXPECT_EQ(factorize(7), (std::vector<unsigned>{7}));
  EXPECT_TRUE(factorize(1).empty());
}

TEST(TopologyTest, SlowestLevelFirst) {
  std::string error;
  auto topo = Topology::parse("2x4", "300,25", error);
  ASSERT_TRUE(topo) << error;
  EXPECT_EQ(topo->getNumDevices(), 8u);
  std::vector<RecursionStep> steps = topo->getSteps();
  ASSERT_EQ(steps.size(), 3u);
  // Level 1 (25 GB/s) is slower: its two cuts come first.
  EXPECT_EQ(steps[0].level, 1u);
  EXPECT_EQ(steps[1].level, 1u);
  EXPECT_EQ(steps[2].level, 0u);
}

TEST(TopologyTest, Errors) {
  std::string error;
  EXPECT_FALSE(Topology::parse("2xx4", "", error));
  EXPECT_NE(error.find("positive integers"), std::string::npos);
  EXPECT_FALSE(Topology::parse("0", "", error));
  EXPECT_FALSE(Topology::parse("8", "1,2", error));
  EXPECT_NE(error.find("1 level(s) but 2 bandwidth(s)"), std::string::npos);
  EXPECT_FALSE(Topology::parse("8", "-3", error));
  EXPECT_NE(error.find("positive numbers"), std::string::npos);
}

TEST(MinSumTest, RandomProblemsMatchBruteForce) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    MinSumProblem p;
    unsigned n = std::uniform_int_distribution<unsigned>(1, 7)(rng);
    for (unsigned v = 0; v < n; ++v) {
      unsigned d = std::uniform_int_distribution<unsigned>(1, 4)(rng);
      p.addVariable(d);
      std::vector<double> u(d);
      for (double &x : u)
        x = std::uniform_int_distribution<int>(0, 9)(rng);
      p.addUnary(v, u);
    }
    unsigned edges = std::uniform_int_distribution<unsigned>(0, 2 * n)(rng);
    for (unsigned e = 0; e < edges && n > 1; ++e) {
      unsigned a = std::uniform_int_distribution<unsigned>(0, n - 1)(rng);
      unsigned b = std::uniform_int_distribution<unsigned>(0, n - 1)(rng);
      if (a == b)
        continue;
      std::vector<double> t(p.domains[a] * p.domains[b]);
      for (double &x : t)
        x = std::uniform_int_distribution<int>(0, 9)(rng);
      p.addPairwise(a, b, t);
    }
    MinSumSolution dp = solveMinSum(p);
    auto brute = bruteForceMinSum(p, 1u << 20);
    ASSERT_TRUE(brute);
    EXPECT_TRUE(dp.exact);
    EXPECT_DOUBLE_EQ(dp.cost, brute->cost) << "trial " << trial;
    // A tiny bound forces greedy fixing: still a valid assignment.
    MinSumSolution bounded = solveMinSum(p, 2);
    EXPECT_EQ(bounded.assignment.size(), n);
    EXPECT_GE(bounded.cost, brute->cost - 1e-9);
  }
}

/// The DP of one step against brute force over the same space.
bool checkStepAgainstBruteForce(const Graph &g, unsigned k, bool replication,
                                const CoarsenOptions &coarsening, int seed) {
  SearchOptions options;
  options.replication = replication;
  StrategyCache cache;
  StepState state = StepState::initial(g);
  StepModel model(g, state, k, options, cache);
  CoarseGraph coarse = coarsen(g, coarsening);
  bool tooLarge = false;
  PlanStep dp = searchStep(model, coarse, options, false, tooLarge);
  EXPECT_TRUE(dp.exact);
  PlanStep brute = searchStep(model, coarse, options, true, tooLarge);
  if (tooLarge)
    return false;
  EXPECT_TRUE(near(dp.bytes, brute.bytes))
      << "seed " << seed << ": dp " << dp.bytes << " brute " << brute.bytes;
  return true;
}

TEST(SearchTest, StepDPEqualsBruteForceOnRandomGraphs) {
  unsigned compared = 0;
  for (int seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    Graph g = randomGraph(rng, 2 + seed % 3, /*halo=*/seed % 2);
    for (unsigned k : {2u, 4u}) {
      compared +=
          checkStepAgainstBruteForce(g, k, false, CoarsenOptions::none(), seed);
      compared +=
          checkStepAgainstBruteForce(g, k, true, CoarsenOptions::none(), seed);
      compared +=
          checkStepAgainstBruteForce(g, k, false, CoarsenOptions(), seed);
    }
  }
  // Brute force refuses only a few of the largest graphs.
  std::cout << "[ INFO     ] step DP compared with brute force " << compared
            << " times\n";
  EXPECT_GE(compared, 1150u);
}

/// Tilings and strategy names of a plan, step by step.
void planChoices(const Plan &plan, std::vector<std::vector<Tiling>> &tilings,
                 std::vector<std::vector<std::string>> &strategies) {
  for (const PlanStep &s : plan.steps) {
    tilings.push_back(s.tilings);
    std::vector<std::string> names;
    for (const OpStep &o : s.ops)
      names.push_back(o.strategy);
    strategies.push_back(names);
  }
}

TEST(SearchTest, RecursionIsOptimalAndStepsCommute) {
  std::string error;
  Topology four = *Topology::parse("4", "", error);
  unsigned compared = 0;
  for (int seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(1000 + seed);
    Graph g = randomGraph(rng, 2 + seed % 2, /*halo=*/false);
    SearchOptions options;
    options.coarsen = CoarsenOptions::none();
    auto plan = searchPlan(g, four, options, error);
    ASSERT_TRUE(plan) << error;
    ASSERT_EQ(plan->steps.size(), 2u);

    // Theorem 1: the two steps in the other order cost the same.
    std::vector<std::vector<Tiling>> tilings;
    std::vector<std::vector<std::string>> strategies;
    planChoices(*plan, tilings, strategies);
    std::swap(tilings[0], tilings[1]);
    std::swap(strategies[0], strategies[1]);
    auto swapped = evaluatePlan(g, four, options, tilings, strategies, error);
    ASSERT_TRUE(swapped) << "seed " << seed << ": " << error;
    EXPECT_TRUE(near(plan->totalBytes, swapped->totalBytes))
        << "seed " << seed << ": " << plan->totalBytes << " vs "
        << swapped->totalBytes;
    // Theorem 2: the per-step cost does not decrease.
    EXPECT_LE(plan->steps[0].bytes, plan->steps[1].bytes + 1e-9);

    // Theorem 3: no sequence of cuts is better.
    auto best = exhaustivePlanCost(g, {2, 2}, options, 200000);
    if (!best)
      continue;
    ++compared;
    EXPECT_TRUE(near(plan->totalBytes, *best))
        << "seed " << seed << ": recursive " << plan->totalBytes
        << " exhaustive " << *best;
  }
  std::cout << "[ INFO     ] recursive plan compared with exhaustive search on "
            << compared << " of 200 graphs\n";
  EXPECT_GE(compared, 120u);
}

/// x (an input) times w (a weight).
Graph singleMatmul(Shape x, Shape w) {
  static Descs d;
  Builder b;
  int xt = b.tensor("%x", x, TensorRole::Input);
  int wt = b.tensor("%w", w, TensorRole::Weight);
  b.op("matmul", d.matmul, {xt, wt}, {x[0], w[1]});
  return b.finish();
}

TEST(SearchTest, IndivisibleDimensionsAreExcluded) {
  Graph g = singleMatmul({6, 5}, {5, 3});
  StrategyCache cache;
  SearchOptions options;
  StepState state = StepState::initial(g);
  StepModel model(g, state, 2, options, cache);
  // %x can only be cut on its first dimension; %w on none: it is
  // replicated, with a remark.
  EXPECT_EQ(model.tensorOptions[0], (std::vector<Tiling>{Tiling::cut(0)}));
  EXPECT_EQ(model.tensorOptions[1], (std::vector<Tiling>{Tiling::replicate()}));
  // Only the loop of extent 6 divides.
  EXPECT_EQ(model.opOptions[0].size(), 1u);
  EXPECT_FALSE(model.remarks.empty());
  // Three steps of 2 exhaust the 6 rows after one cut: later steps fall back.
  std::string error;
  auto plan = searchPlan(g, *Topology::parse("4", "", error), options, error);
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->steps[1].ops[0].strategy, "replicated");
}

TEST(SearchTest, ReplicationEnablesDataParallelism) {
  Graph g = singleMatmul({64, 4}, {4, 4});
  int w = 1;
  std::string error;
  Topology two = *Topology::parse("2", "", error);
  SearchOptions options;
  auto cutOnly = searchPlan(g, two, options, error);
  options.replication = true;
  auto withRep = searchPlan(g, two, options, error);
  ASSERT_TRUE(cutOnly && withRep);
  // Replicating the small weight costs nothing at all.
  EXPECT_EQ(withRep->totalBytes, 0);
  EXPECT_GT(cutOnly->totalBytes, 0);
  EXPECT_EQ(withRep->steps[0].tilings[w].kind, Tiling::Kind::Replicate);
}

TEST(SearchTest, BaselinesAreNeverBetterThanTheDP) {
  std::string error;
  Topology four = *Topology::parse("4", "", error);
  for (int seed = 0; seed < 50; ++seed) {
    std::mt19937 rng(5000 + seed);
    Graph g = randomGraph(rng, 3, false);
    SearchOptions options;
    options.coarsen = CoarsenOptions::none();
    auto tofuPlan = searchPlan(g, four, options, error);
    ASSERT_TRUE(tofuPlan);
    for (Algorithm a : {Algorithm::AllRowGreedy, Algorithm::Spartan,
                        Algorithm::ICML18, Algorithm::BruteForce}) {
      options.algorithm = a;
      auto other = searchPlan(g, four, options, error);
      ASSERT_TRUE(other) << error;
      EXPECT_LE(tofuPlan->totalBytes, other->totalBytes + 1e-9)
          << stringifyAlgorithm(a) << " seed " << seed;
    }
  }
}

TEST(SearchTest, BruteForceRefusesLargeGraphs) {
  std::mt19937 rng(3);
  Graph g = randomGraph(rng, 4, false);
  std::string error;
  SearchOptions options;
  options.algorithm = Algorithm::BruteForce;
  options.maxBruteForce = 10;
  EXPECT_FALSE(searchPlan(g, *Topology::parse("2", "", error), options, error));
  EXPECT_NE(error.find("brute force"), std::string::npos);
}

} // namespace
