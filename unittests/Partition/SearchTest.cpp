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

#include "tofu/Partition/Distribution.h"
#include "tofu/Partition/ProgramCost.h"
#include "tofu/Partition/Search.h"
#include "tofu/Partition/Coarsening.h"
#include "tofu/Partition/MinSum.h"
#include "tofu/Partition/PlanImport.h"
#include "tofu/Partition/StepSearch.h"
#include "tofu/Partition/Topology.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
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

/// A random graph of `numOps` forward operators on 2-D tensors whose
/// dimensions are 4 or 8. Every operator reads 2-D tensors only, so every
/// shape it builds is valid by construction; row sums (1-D) are leaves. With
/// `halo`, 1-D convolutions may appear (their outputs have 2 or 6 columns).
/// With `training`, matrix products may share a weight (unrolled time steps
/// for coarsening to merge), and operators get backward operators: two
/// element-wise ones of the output's shape (the fills of two gradient
/// accumulators, which coarsening must not tie) writing gradients of the
/// output.
Graph randomGraph(std::mt19937 &rng, unsigned numOps, bool halo,
                  bool training = false) {
  static Descs d;
  Builder b;
  auto dim = [&]() {
    return std::uniform_int_distribution<int>(1, 2)(rng) * 4;
  };
  auto coin = [&]() { return std::uniform_int_distribution<int>(0, 1)(rng); };
  // Only 2-D tensors are picked as operands.
  std::vector<int> pool{b.tensor("%x", {dim(), dim()}, TensorRole::Input)};
  std::vector<int> weights;
  auto pick = [&]() {
    return pool[std::uniform_int_distribution<size_t>(0, pool.size() - 1)(rng)];
  };
  auto backward = [&](int out) {
    int fwd = b.g.tensors[out].producer;
    Shape s = b.g.tensors[out].shape;
    for (int n = 0; n < 2; ++n) {
      int g = b.op("grad", d.relu, {out}, s);
      b.g.ops.back().backward = true;
      b.g.ops.back().forwardOf = fwd;
      b.g.tensors[g].role = TensorRole::Gradient;
      b.g.tensors[g].gradientOf = out;
    }
  };
  for (unsigned i = 0; i < numOps; ++i) {
    int a = pick();
    Shape s = b.g.tensors[a].shape;
    EXPECT_EQ(s.size(), 2u);
    int out = -1;
    switch (std::uniform_int_distribution<int>(0, halo ? 6 : 5)(rng)) {
    case 0: {
      int w = -1;
      if (training && coin())
        for (int cand : weights)
          if (b.g.tensors[cand].shape[0] == s[1])
            w = cand;
      if (w < 0) {
        w = b.tensor("%w" + std::to_string(i), {s[1], dim()},
                     TensorRole::Weight);
        weights.push_back(w);
      }
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
      b.op("rowsum", d.rowsum, {a}, {s[0]});
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
    if (training && coin())
      backward(out);
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

/// The operator choices of a step.
std::vector<OpChoice> choicesOf(const PlanStep &step) {
  std::vector<OpChoice> out;
  for (const OpStep &o : step.ops)
    out.push_back(o.choice);
  return out;
}

/// What the step tests saw: cases compared, cases whose step model fell
/// back (a tensor with no divisible dimension, an operator with no even
/// strategy) and so did not search every tensor and operator freely.
struct Counts {
  unsigned compared = 0, fallbacks = 0, refused = 0;
};

/// The DP of one step against brute force over the same space.
void checkStepAgainstBruteForce(const Graph &g, unsigned k, bool replication,
                                const CoarsenOptions &coarsening, int seed,
                                Counts &counts) {
  SearchOptions options;
  options.replication = replication;
  options.maxBruteForce = 1u << 20;
  StrategyCache cache;
  StepState state = StepState::initial(g);
  StepModel model(g, state, k, options, cache);
  counts.fallbacks += !model.remarks.empty();
  CoarseGraph coarse = coarsen(g, coarsening);
  bool tooLarge = false;
  PlanStep dp = searchStep(model, coarse, options, false, tooLarge);
  EXPECT_TRUE(dp.exact);
  // The solver's objective is the cost of the plan it decodes to.
  EXPECT_TRUE(near(dp.objective, dp.bytes)) << "seed " << seed;
  EXPECT_TRUE(near(model.cost(dp.tilings, choicesOf(dp)), dp.bytes));
  PlanStep brute = searchStep(model, coarse, options, true, tooLarge);
  if (tooLarge) {
    ++counts.refused;
    return;
  }
  EXPECT_TRUE(near(brute.objective, brute.bytes)) << "seed " << seed;
  EXPECT_TRUE(near(dp.bytes, brute.bytes))
      << "seed " << seed << ": dp " << dp.bytes << " brute " << brute.bytes;
  ++counts.compared;
}

TEST(SearchTest, StepDPEqualsBruteForceOnRandomGraphs) {
  Counts counts;
  for (int seed = 0; seed < 200; ++seed) {
    std::mt19937 rng(seed);
    Graph g = randomGraph(rng, 2 + seed % 3, /*halo=*/seed % 2,
                          /*training=*/seed % 4 == 3);
    for (unsigned k : {2u, 4u}) {
      checkStepAgainstBruteForce(g, k, false, CoarsenOptions::none(), seed,
                                 counts);
      checkStepAgainstBruteForce(g, k, true, CoarsenOptions::none(), seed,
                                 counts);
      checkStepAgainstBruteForce(g, k, false, CoarsenOptions(), seed, counts);
    }
  }
  std::cout << "[ INFO     ] step DP compared with brute force "
            << counts.compared << " times (" << counts.refused
            << " refused as too large); " << counts.fallbacks
            << " cases had a replicated fallback\n";
  EXPECT_GE(counts.compared, 1100u);
}

/// Every tiling a tensor could be given at any step: a cut along each
/// dimension, or replicated.
std::vector<Tiling> allTilings(const Shape &shape) {
  std::vector<Tiling> out;
  for (unsigned d = 0; d < shape.size(); ++d)
    out.push_back(Tiling::cut(d));
  out.push_back(Tiling::replicate());
  return out;
}

/// Every strategy name an operator could be given: each loop variable of its
/// description, or replicated.
std::vector<std::string> allStrategies(const OpNode &op) {
  std::vector<std::string> out = op.desc->getLoopVars();
  out.push_back("replicated");
  return out;
}

/// The cheapest last step of a plan for `topology` whose earlier steps are
/// fixed to `tilings` and `strategies`, found without the search's encoding
/// or option lists: every tiling of every tensor (`allTilings`) and every
/// strategy name of every operator (`allStrategies`) that evaluatePlan
/// accepts on its own (the others as in the given plan) is kept, and every
/// combination of the kept choices is costed by evaluatePlan. Returns
/// std::nullopt past `limit` combinations.
std::optional<double>
bruteForceLastStep(const Graph &g, const Topology &topology,
                   const SearchOptions &options,
                   std::vector<std::vector<Tiling>> tilings,
                   std::vector<std::vector<std::string>> strategies,
                   uint64_t limit, unsigned &evaluated) {
  size_t last = tilings.size() - 1;
  std::string error;
  auto accepts = [&]() {
    return evaluatePlan(g, topology, options, tilings, strategies, error)
        .has_value();
  };
  EXPECT_TRUE(accepts()) << error;
  std::vector<std::vector<Tiling>> tensorChoices;
  std::vector<std::vector<std::string>> opChoices;
  uint64_t total = 1;
  for (size_t t = 0; t < g.tensors.size(); ++t) {
    Tiling mine = tilings[last][t];
    std::vector<Tiling> kept;
    for (Tiling tl : allTilings(g.tensors[t].shape)) {
      tilings[last][t] = tl;
      if (accepts())
        kept.push_back(tl);
    }
    tilings[last][t] = mine;
    total *= kept.size();
    tensorChoices.push_back(kept);
  }
  for (size_t o = 0; o < g.ops.size(); ++o) {
    std::string mine = strategies[last][o];
    std::vector<std::string> kept;
    for (const std::string &name : allStrategies(g.ops[o])) {
      strategies[last][o] = name;
      if (accepts())
        kept.push_back(name);
    }
    strategies[last][o] = mine;
    total *= kept.size();
    opChoices.push_back(kept);
  }
  if (total > limit)
    return std::nullopt;
  size_t nt = g.tensors.size(), no = g.ops.size();
  std::vector<size_t> digit(nt + no, 0);
  double best = std::numeric_limits<double>::infinity();
  for (uint64_t e = 0; e < total; ++e) {
    for (size_t t = 0; t < nt; ++t)
      tilings[last][t] = tensorChoices[t][digit[t]];
    for (size_t o = 0; o < no; ++o)
      strategies[last][o] = opChoices[o][digit[nt + o]];
    auto plan = evaluatePlan(g, topology, options, tilings, strategies, error);
    EXPECT_TRUE(plan) << error;
    if (plan) {
      ++evaluated;
      best = std::min(best, plan->steps[last].bytes);
    }
    for (size_t p = digit.size(); p-- > 0;) {
      size_t radix = p < nt ? tensorChoices[p].size() : opChoices[p - nt].size();
      if (++digit[p] < radix)
        break;
      digit[p] = 0;
    }
  }
  return best;
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

/// The invariants of a searched plan that the library only asserts: each
/// step's objective is its cost, the total is the sum of the steps, and the
/// plan's own choices, imported back, cost the same step by step.
void checkPlanInvariants(const Graph &g, const Topology &topology,
                         const SearchOptions &options, const Plan &plan,
                         int seed) {
  double sum = 0;
  for (const PlanStep &step : plan.steps) {
    sum += step.bytes;
    EXPECT_TRUE(step.searched);
    EXPECT_TRUE(near(step.objective, step.bytes))
        << "seed " << seed << ": objective " << step.objective << " bytes "
        << step.bytes;
  }
  EXPECT_TRUE(near(sum, plan.totalBytes)) << "seed " << seed;
  std::vector<std::vector<Tiling>> tilings;
  std::vector<std::vector<std::string>> strategies;
  planChoices(plan, tilings, strategies);
  std::string error;
  auto again = evaluatePlan(g, topology, options, tilings, strategies, error);
  ASSERT_TRUE(again) << "seed " << seed << ": " << error;
  for (size_t i = 0; i < plan.steps.size(); ++i)
    EXPECT_TRUE(near(again->steps[i].bytes, plan.steps[i].bytes))
        << "seed " << seed << " step " << i;
}

TEST(SearchTest, DefaultSearchMatchesEvaluatedPlansExhaustively) {
  // The default options (coarsening on) on training-like graphs with halos,
  // tied time steps and backward operators: the last step of every searched
  // plan costs what the cheapest plan with the same earlier steps costs,
  // found by costing every combination with evaluatePlan.
  std::string error;
  unsigned compared = 0, exact = 0, accepted = 0, degenerate = 0;
  for (int seed = 0; seed < 80; ++seed) {
    std::mt19937 rng(7000 + seed);
    Graph g = randomGraph(rng, 2 + seed % 2, /*halo=*/seed % 3 == 0,
                          /*training=*/true);
    for (const char *devices : {"2", "3", "4", "6"})
      for (bool replication : {false, true}) {
        Topology topology = *Topology::parse(devices, "", error);
        SearchOptions options;
        options.replication = replication;
        // The step model's plan (SharedReadsSearch* test the other).
        options.sharedReads = false;
        auto plan = searchPlan(g, topology, options, error);
        ASSERT_TRUE(plan) << error;
        checkPlanInvariants(g, topology, options, *plan, seed);
        for (const PlanStep &step : plan->steps) {
          exact += step.exact;
          degenerate += step.degenerate;
        }
        std::vector<std::vector<Tiling>> tilings;
        std::vector<std::vector<std::string>> strategies;
        planChoices(*plan, tilings, strategies);
        auto best = bruteForceLastStep(g, topology, options, tilings,
                                       strategies, 1500, accepted);
        if (!best)
          continue;
        ++compared;
        EXPECT_TRUE(near(plan->steps.back().bytes, *best))
            << "seed " << seed << " devices " << devices << " replication "
            << replication << ": searched " << plan->steps.back().bytes
            << " cheapest " << *best;
      }
  }
  std::cout << "[ INFO     ] searched last steps compared with " << accepted
            << " evaluated plans in " << compared << " of 640 cases; "
            << exact << " exact steps, " << degenerate << " degenerate\n";
  EXPECT_GE(compared, 250u);
}

TEST(SearchTest, CoarsenedFallbackIsInexactAndNoCheaper) {
  // With a table bound too small for the fine DP, the search falls back to
  // the coarsened graph; it says the step is not exact and never beats the
  // exhaustive optimum.
  std::string error;
  Topology two = *Topology::parse("2", "", error);
  unsigned compared = 0;
  for (int seed = 0; seed < 40; ++seed) {
    std::mt19937 rng(9000 + seed);
    Graph g = randomGraph(rng, 2, /*halo=*/true, /*training=*/true);
    SearchOptions options;
    options.maxTableSize = 1;
    options.sharedReads = false;
    auto plan = searchPlan(g, two, options, error);
    ASSERT_TRUE(plan) << error;
    EXPECT_FALSE(plan->steps[0].exact);
    checkPlanInvariants(g, two, options, *plan, seed);
    std::vector<std::vector<Tiling>> tilings;
    std::vector<std::vector<std::string>> strategies;
    planChoices(*plan, tilings, strategies);
    unsigned accepted = 0;
    auto best = bruteForceLastStep(g, two, options, tilings, strategies, 3000,
                                   accepted);
    if (!best)
      continue;
    ++compared;
    EXPECT_GE(plan->totalBytes, *best - 1e-9) << "seed " << seed;
  }
  EXPECT_GE(compared, 20u);
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
    // The theorems are about the step model, which the refinement and the
    // search with shared reads leave.
    options.refineSweeps = 0;
    options.sharedReads = false;
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

TEST(SearchTest, ImportedReplicationStaysInsideTheSearchSpace) {
  // %x (6x5) can be cut along dimension 0 at 2 workers, %w (5x3) cannot be
  // cut at all: replicating %w is a fallback, replicating %x needs
  // replication, and the product (one even strategy) cannot run replicated.
  Graph g = singleMatmul({6, 5}, {5, 3});
  std::string error;
  Topology two = *Topology::parse("2", "", error);
  SearchOptions options;
  Tiling rep = Tiling::replicate(), cut0 = Tiling::cut(0);
  auto import = [&](Tiling x, const std::string &strategy) {
    return evaluatePlan(g, two, options, {{x, rep, cut0}}, {{strategy}},
                        error);
  };
  EXPECT_TRUE(import(cut0, "i")) << error;
  EXPECT_FALSE(import(rep, "i"));
  EXPECT_EQ(error, "step 0: tensor %x cannot be rep: replication is off and "
                   "it can be cut over 2 workers");
  EXPECT_FALSE(import(cut0, "replicated"));
  EXPECT_EQ(error, "step 0: operator 0 (matmul) cannot run replicated: it "
                   "has an even strategy");
  options.replication = true;
  EXPECT_TRUE(import(rep, "i")) << error;
  EXPECT_FALSE(import(cut0, "replicated"));
  // Data parallelism replicates whatever it likes.
  options.algorithm = Algorithm::DataParallel;
  EXPECT_TRUE(import(rep, "replicated")) << error;
}

TEST(SearchTest, DegenerateStepsWarnAboutMemory) {
  // At 6 devices the first step splits 3 ways, and nothing of 8x4 by 4x4
  // divides by 3: every tensor is replicated, the step costs 0 bytes and is
  // no optimum; the warning names the memory (32 + 16 + 32 floats, 320
  // bytes per device, 213.33 more than a 3-way split).
  Graph g = singleMatmul({8, 4}, {4, 4});
  std::string error;
  Topology six = *Topology::parse("6", "", error);
  for (Algorithm a : {Algorithm::Tofu, Algorithm::Spartan}) {
    SearchOptions options;
    options.algorithm = a;
    auto plan = searchPlan(g, six, options, error);
    ASSERT_TRUE(plan) << error;
    ASSERT_EQ(plan->steps.size(), 2u);
    EXPECT_TRUE(plan->steps[0].degenerate);
    EXPECT_FALSE(plan->steps[1].degenerate);
    EXPECT_EQ(plan->steps[0].bytes, 0);
    ASSERT_EQ(plan->warnings.size(), 1u);
    EXPECT_EQ(plan->warnings[0],
              "step 0 (k=3) is degenerate: no tensor has a dimension "
              "divisible by 3, so every tensor is replicated on the 3 "
              "workers of each group; it communicates 0 bytes but leaves "
              "320 bytes of tensors on each device, 213 bytes more than an "
              "even 3-way split");
  }
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
    // The step model's optimality: without the refinement and the search
    // with shared reads.
    options.refineSweeps = 0;
    options.sharedReads = false;
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

TEST(SearchTest, RefinementNeverMovesMoreThanTheRecursion) {
  std::string error;
  unsigned improved = 0;
  for (const char *devices : {"4", "8", "2x3"}) {
    Topology topology = *Topology::parse(devices, "", error);
    for (int seed = 0; seed < 40; ++seed) {
      std::mt19937 rng(7000 + seed);
      Graph g = randomGraph(rng, 3, seed % 2);
      SearchOptions options;
      options.refineSweeps = 0;
      auto recursive = searchPlan(g, topology, options, error);
      options.refineSweeps = 2;
      auto refined = searchPlan(g, topology, options, error);
      ASSERT_TRUE(recursive && refined) << error;
      ASSERT_GE(recursive->programBytes, 0);
      EXPECT_LE(refined->programBytes, recursive->programBytes + 1e-9)
          << devices << " seed " << seed;
      improved += refined->programBytes < recursive->programBytes - 0.5;
      // The refined plan is feasible and its bytes are its own.
      std::vector<std::vector<Tiling>> tilings;
      std::vector<std::vector<std::string>> strategies;
      planChoices(*refined, tilings, strategies);
      auto again =
          evaluatePlan(g, topology, options, tilings, strategies, error);
      ASSERT_TRUE(again) << devices << " seed " << seed << ": " << error;
      ASSERT_TRUE(evaluateProgramBytes(g, *again, error)) << error;
      EXPECT_EQ(again->programBytes, refined->programBytes);
      EXPECT_EQ(again->totalBytes, refined->totalBytes);
    }
  }
  std::cout << "[ INFO     ] the refinement lowered the program's bytes in "
            << improved << " of 120 plans\n";
}

TEST(SearchTest, ReadsWholeCostsAReplica) {
  // A read for which readsWhole holds costs what making the tensor whole
  // costs, from every tiling: the replica that such readers share replaces
  // exactly their reads.
  unsigned whole = 0;
  for (int seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(3000 + seed);
    Graph g = randomGraph(rng, 3, /*halo=*/seed % 2, /*training=*/true);
    for (unsigned k : {2u, 4u}) {
      SearchOptions options;
      options.replication = seed % 3 == 0;
      StrategyCache cache;
      StepState state = StepState::initial(g);
      StepModel model(g, state, k, options, cache);
      for (size_t o = 0; o < g.ops.size(); ++o)
        for (unsigned j = 0; j < g.ops[o].inputs.size(); ++j) {
          int t = g.ops[o].inputs[j];
          for (OpChoice c : model.opOptions[o]) {
            if (t < 0 || !model.readsWhole(o, j, c))
              continue;
            ++whole;
            for (Tiling tiling : model.tensorOptions[t])
              EXPECT_TRUE(near(model.inputCost(o, j, c, tiling),
                               model.replicateCost(t, tiling)))
                  << "seed " << seed << " op " << o << " input " << j;
          }
        }
    }
  }
  EXPECT_GE(whole, 100u);
}

TEST(SearchTest, SharedReadsStepEqualsBruteForce) {
  // The DP with shared reads against brute force over the same encoding:
  // the same optimum, which is getSharedReadBytes of the plan it decodes to
  // and no more than that count for the step model's plan.
  unsigned compared = 0, enumerated = 0, lower = 0;
  for (int seed = 0; seed < 120; ++seed) {
    std::mt19937 rng(4000 + seed);
    Graph g = randomGraph(rng, 2 + seed % 2, /*halo=*/seed % 2,
                          /*training=*/seed % 3 != 0);
    for (bool coarsened : {false, true}) {
      SearchOptions options;
      options.maxBruteForce = 1u << 20;
      StrategyCache cache;
      StepState state = StepState::initial(g);
      StepModel model(g, state, 2, options, cache);
      CoarseGraph coarse =
          coarsen(g, coarsened ? CoarsenOptions() : CoarsenOptions::none());
      bool tooLarge = false;
      PlanStep shared =
          searchStep(model, coarse, options, false, tooLarge, false, true);
      PlanStep plain = searchStep(model, coarse, options, false, tooLarge);
      EXPECT_TRUE(near(
          shared.objective,
          getSharedReadBytes(model, coarse, shared.tilings, choicesOf(shared))))
          << "seed " << seed;
      EXPECT_TRUE(
          near(shared.bytes, model.cost(shared.tilings, choicesOf(shared))));
      double plainShared =
          getSharedReadBytes(model, coarse, plain.tilings, choicesOf(plain));
      EXPECT_LE(shared.objective, plainShared + 1e-9) << "seed " << seed;
      EXPECT_LE(plainShared, plain.bytes + 1e-9) << "seed " << seed;
      lower += shared.objective < plainShared - 0.5;
      PlanStep brute =
          searchStep(model, coarse, options, true, tooLarge, false, true);
      if (!tooLarge) {
        ++compared;
        EXPECT_TRUE(near(shared.objective, brute.objective))
            << "seed " << seed << ": dp " << shared.objective << " brute "
            << brute.objective;
      }
      // Independently of the encoding: the least getSharedReadBytes over
      // every tiling and choice of the uncoarsened step.
      if (coarsened)
        continue;
      uint64_t assignments = 1;
      for (auto &o : model.tensorOptions)
        assignments = std::min<uint64_t>(assignments * o.size(), 1u << 20);
      for (auto &o : model.opOptions)
        assignments = std::min<uint64_t>(assignments * o.size(), 1u << 20);
      if (assignments > (1u << 14))
        continue;
      double least = std::numeric_limits<double>::infinity();
      forEachAssignment(model, [&](const std::vector<Tiling> &tilings,
                                   const std::vector<OpChoice> &choices) {
        least = std::min(least,
                         getSharedReadBytes(model, coarse, tilings, choices));
        return true;
      });
      ++enumerated;
      EXPECT_TRUE(near(shared.objective, least))
          << "seed " << seed << ": dp " << shared.objective << " least "
          << least;
    }
  }
  std::cout << "[ INFO     ] shared-read DP compared with brute force "
            << compared << " times and with every assignment " << enumerated
            << " times; lower than the step model's plan in " << lower << "\n";
  EXPECT_GE(compared, 150u);
  EXPECT_GE(enumerated, 40u);
  EXPECT_GE(lower, 10u);
}

TEST(SearchTest, SharedReadsSearchNeverMovesMore) {
  // The default search keeps the plan found with shared reads only when the
  // program moves fewer bytes with it, and says so in a remark.
  std::string error;
  unsigned improved = 0, plans = 0;
  for (const char *devices : {"2", "4", "2x2"}) {
    Topology topology = *Topology::parse(devices, "", error);
    for (int seed = 0; seed < 40; ++seed) {
      std::mt19937 rng(8000 + seed);
      Graph g = randomGraph(rng, 3, seed % 2, /*training=*/true);
      SearchOptions options;
      auto chosen = searchPlan(g, topology, options, error);
      options.sharedReads = false;
      auto stepModel = searchPlan(g, topology, options, error);
      ASSERT_TRUE(chosen && stepModel) << error;
      ++plans;
      EXPECT_LE(chosen->programBytes, stepModel->programBytes + 1e-9)
          << devices << " seed " << seed;
      bool shared = chosen->programBytes < stepModel->programBytes - 0.5;
      improved += shared;
      bool remark = false;
      for (const std::string &r : chosen->remarks)
        remark |= r.rfind("the steps were searched counting once", 0) == 0;
      EXPECT_EQ(remark, shared) << devices << " seed " << seed;
      for (const PlanStep &step : chosen->steps) {
        EXPECT_EQ(step.sharedReads, shared);
        EXPECT_TRUE(!step.sharedReads || !step.exact);
      }
      // The plan is its own: re-evaluated, it moves the same bytes.
      std::vector<std::vector<Tiling>> tilings;
      std::vector<std::vector<std::string>> strategies;
      planChoices(*chosen, tilings, strategies);
      auto again =
          evaluatePlan(g, topology, options, tilings, strategies, error);
      ASSERT_TRUE(again) << error;
      ASSERT_TRUE(evaluateProgramBytes(g, *again, error)) << error;
      EXPECT_EQ(again->programBytes, chosen->programBytes);
      EXPECT_EQ(again->totalBytes, chosen->totalBytes);
    }
  }
  std::cout << "[ INFO     ] the search with shared reads lowered the "
               "program's bytes in "
            << improved << " of " << plans << " plans\n";
  EXPECT_GE(improved, 10u);
}

TEST(SearchTest, ProgramModelCountsTheFlatGrid) {
  static Descs d;
  Builder b;
  int x = b.tensor("%x", {16, 8}, TensorRole::Input);
  int w = b.tensor("%w", {8, 32}, TensorRole::Weight);
  b.op("matmul", d.matmul, {x, w}, {16, 32});
  int y = b.tensor("%y", {16, 16}, TensorRole::Input);
  b.op("transpose", d.transpose, {y}, {16, 16});
  Graph g = b.finish();
  ProgramCostModel model(g, ProcessGrid{{2, 2}});
  ASSERT_EQ(model.getError(), "");
  GridPlan plan;
  Tiling c0 = Tiling::cut(0), c1 = Tiling::cut(1);
  // The product cuts its reduction loop k at both axes; its 16x32 output
  // (2048 B) is laid out cut(1), cut(1).
  plan.tilings = {{c1, c1}, {c0, c0}, {c1, c1}, {c0, c0}, {c0, c0}};
  // The transpose cuts i at both axes: each rank reads 16x4 of %y, whose
  // 4x16 tile holds 4x4 of it.
  plan.cutVars = {{2, 2}, {0, 0}};
  std::string error;
  std::optional<ProgramBytes> bytes = model.evaluate(plan, error);
  ASSERT_TRUE(bytes) << error;
  // Reduce-scatter over axis 0 of whole 16x32 tiles on 4 ranks (4 x 1024 B),
  // then over axis 1 of 16x16 tiles (4 x 512 B): the 4-way lower bound.
  EXPECT_EQ(bytes->tensorBytes[2], 6144);
  // The transpose's input: 4 ranks x (64 - 16) elements x 4 B.
  EXPECT_EQ(bytes->tensorBytes[3], 768);
  EXPECT_EQ(bytes->tensorBytes[0] + bytes->tensorBytes[1], 0);
  EXPECT_EQ(bytes->total, 6144 + 768);
  // A cut that does not divide is an error, not a count.
  plan.tilings[0] = {c0, Tiling::cut(7)};
  EXPECT_FALSE(model.evaluate(plan, error));
}

/// What the program model counts for input `j` of operator 0 and for its
/// output, computed rank by rank from the boxes of Distribution.h: the
/// definition that the model's factored sums must reproduce.
static std::pair<int64_t, double>
countRankByRank(const Graph &g, unsigned j, const ProcessGrid &grid,
                const std::vector<int> &cutVars, const std::vector<Tiling> &in,
                const std::vector<Tiling> &out) {
  const OpNode &node = g.ops[0];
  std::string error;
  LoopSpace space = *inferLoopSpace(*node.desc, node.shapes, error);
  RankBoxes iteration =
      *getIterationBoxes(space.extents, cutVars, grid, error);
  const Shape &shape = g.tensors[node.inputs[j]].shape;
  RankBoxes regions;
  for (const Box &box : iteration) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (size_t v = 0; v < box.lo.size(); ++v)
      ranges.push_back({box.lo[v], box.hi[v]});
    bool read = false;
    regions.push_back(*getReadRegion(*node.desc, space, j, shape, ranges,
                                     read, error));
  }
  if (!haveUniformShape(regions))
    regions = getUniformWindows(regions, shape);
  int64_t fetched = getReceivedElements(
      *getLayoutBoxes(shape, in, grid, error), regions);
  // The output: reduce-scatter (or all-reduce) per axis that cuts a
  // reduction loop, then a fetch into the layout.
  std::vector<int> vars;
  for (const std::string &v : node.desc->outputs[0].vars)
    vars.push_back(space.lookup(v));
  RankBoxes boxes;
  for (const Box &it : iteration) {
    Box box;
    for (int v : vars) {
      box.lo.push_back(it.lo[v]);
      box.hi.push_back(it.hi[v]);
    }
    boxes.push_back(box);
  }
  Shape local = getBoxShape(boxes.front());
  double reduced = 0;
  for (size_t axis = 0; axis < cutVars.size(); ++axis) {
    if (cutVars[axis] < 0 || std::count(vars.begin(), vars.end(), cutVars[axis]))
      continue;
    int64_t k = grid.shape[axis];
    double elements = double(getNumElements(local)) * grid.size() * 4;
    if (out[axis].kind == Tiling::Kind::Cut && local[out[axis].dim] % k == 0) {
      reduced += elements * (k - 1) / k;
      local[out[axis].dim] /= k;
      for (size_t r = 0; r < boxes.size(); ++r) {
        Box &box = boxes[r];
        box.lo[out[axis].dim] += grid.getCoords(r)[axis] * local[out[axis].dim];
        box.hi[out[axis].dim] = box.lo[out[axis].dim] + local[out[axis].dim] - 1;
      }
    } else {
      reduced += elements * 2 * (k - 1) / k;
    }
  }
  Shape outShape = g.tensors[node.outputs[0]].shape;
  reduced += 4.0 * getReceivedElements(
                       boxes, *getLayoutBoxes(outShape, out, grid, error));
  return {fetched, reduced};
}

TEST(SearchTest, ProgramModelFactorsTheSumOverRanks) {
  struct Case {
    const char *desc;
    std::vector<Shape> inputs;
    Shape output;
  };
  // Bare variables, a transpose, halos clamped at the edges (ranks read
  // regions of different shapes), a stride, a tensor read twice with its
  // dimensions swapped, accesses that miss on some ranks, and reductions.
  std::vector<Case> cases = {
      {"(i, j) = sum(k) A[i, k] * B[k, j]", {{12, 8}, {8, 6}}, {12, 6}},
      {"(i, j) = A[j, i]", {{6, 12}}, {12, 6}},
      {"(i, j) = sum(c, d) A[c, j + d - 1] * F[c, i, d]",
       {{4, 12}, {4, 6, 3}}, {6, 12}},
      {"(i, j) = sum(d) A[i, 2 * j + d]", {{6, 25}}, {6, 12}},
      {"(i, j) = A[i, j] + A[j, i]", {{12, 12}}, {12, 12}},
      // Ranks whose j < 6 read nothing through the first access, so it
      // drops out of their hull in both dimensions.
      {"(i, j) = A[i, j - 6] + A[j, i]", {{12, 12}}, {12, 12}},
      {"(i, j) = A[i, j - 6] + B[i, j]", {{12, 6}, {12, 12}}, {12, 12}},
      {"(i) = sum(j) A[i, j]", {{12, 8}}, {12}},
  };
  std::vector<ProcessGrid> grids = {
      {{3}}, {{2, 2}}, {{2, 3}}, {{2, 2, 2}}, {{4, 2}}, {{3, 2, 2}}};
  std::mt19937 rng(11);
  unsigned compared = 0;
  for (const Case &c : cases) {
    Builder b;
    std::vector<int> inputs;
    for (const Shape &shape : c.inputs)
      inputs.push_back(b.tensor("%in" + std::to_string(inputs.size()), shape,
                                TensorRole::Input));
    b.op("op", desc(c.desc), inputs, c.output);
    Graph g = b.finish();
    std::string error;
    LoopSpace space =
        *inferLoopSpace(*g.ops[0].desc, g.ops[0].shapes, error);
    for (const ProcessGrid &grid : grids) {
      ProgramCostModel model(g, grid);
      ASSERT_EQ(model.getError(), "");
      auto pick = [&](int n) {
        return std::uniform_int_distribution<int>(-1, n - 1)(rng);
      };
      auto tilings = [&](size_t rank) {
        std::vector<Tiling> t;
        for (size_t a = 0; a < grid.shape.size(); ++a) {
          int d = pick(rank);
          t.push_back(d < 0 ? Tiling::replicate() : Tiling::cut(d));
        }
        return t;
      };
      for (int trial = 0; trial < 60; ++trial) {
        std::vector<int> cutVars;
        for (size_t a = 0; a < grid.shape.size(); ++a)
          cutVars.push_back(pick(space.extents.size()));
        auto iteration = model.getIteration(0, cutVars, error);
        unsigned j = std::uniform_int_distribution<unsigned>(
            0, inputs.size() - 1)(rng);
        std::vector<Tiling> in = tilings(c.inputs[j].size());
        std::vector<Tiling> out = tilings(c.output.size());
        auto inLayout = model.getLayout(inputs[j], in, error);
        auto outLayout = model.getLayout(g.ops[0].outputs[0], out, error);
        if (!iteration || !inLayout || !outLayout)
          continue;
        auto [fetched, reduced] =
            countRankByRank(g, j, grid, cutVars, in, out);
        EXPECT_EQ(model.getFetchBytes(
                      inputs[j], model.getInputRegions(0, j, *iteration),
                      *inLayout),
                  4.0 * fetched)
            << c.desc << " input " << j << " trial " << trial;
        EXPECT_DOUBLE_EQ(model.getOutputBytes(0, 0, *iteration, cutVars, out,
                                              *outLayout),
                         reduced)
            << c.desc << " trial " << trial;
        ++compared;
      }
    }
  }
  EXPECT_GT(compared, 500u);
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
