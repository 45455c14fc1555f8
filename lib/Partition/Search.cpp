//===- Search.cpp - The recursive partition search (Tofu §5) --------------===//

#include "tofu/Partition/Search.h"
#include "tofu/Partition/Baselines.h"
#include "tofu/Partition/StepSearch.h"

#include <algorithm>
#include <functional>
#include <limits>

using namespace tofu;

std::vector<RecursionStep>
tofu::getRecursionSteps(const Topology &topology,
                        const SearchOptions &options) {
  std::vector<RecursionStep> steps = topology.getSteps();
  if (options.algorithm == Algorithm::EqualChop && !steps.empty())
    steps = {{topology.getNumDevices(), steps.front().level}};
  return steps;
}

/// The recursion: one step per level, each solved by `options.algorithm`.
/// With `sharedReads`, Tofu's steps count shared conversions once
/// (searchStep).
static std::optional<Plan> recurse(const Graph &graph, const Topology &topology,
                                   const SearchOptions &options,
                                   const CoarseGraph &fine,
                                   std::optional<CoarseGraph> &coarse,
                                   StrategyCache &cache, bool sharedReads,
                                   std::string &error) {
  Plan plan(topology, options);
  std::vector<RecursionStep> steps = getRecursionSteps(topology, options);
  bool useCoarse =
      options.algorithm != Algorithm::BruteForce && !options.coarsen.isNone();
  StepState state = StepState::initial(graph);
  for (const RecursionStep &rs : steps) {
    StepModel model(graph, state, rs.k, options, cache);
    for (const std::string &r : model.remarks)
      plan.remarks.push_back(r);
    PlanStep step;
    switch (options.algorithm) {
    case Algorithm::DataParallel:
      step = dataParallelStep(model);
      break;
    case Algorithm::BatchParallel: {
      step = batchParallelStep(model, options.batchDim);
      bool cutsInput = false;
      for (size_t t = 0; t < graph.tensors.size(); ++t)
        cutsInput |= graph.tensors[t].role == TensorRole::Input &&
                     step.tilings[t] == Tiling::cut(options.batchDim);
      if (!cutsInput)
        plan.remarks.push_back(
            "step of " + std::to_string(rs.k) +
            ": batch-parallel cuts no "
            "input: none has a dimension " +
            std::to_string(options.batchDim) + " (batch-dim) that divides by " +
            std::to_string(rs.k) + "; the step runs replicated");
      break;
    }
    case Algorithm::AllRowGreedy:
      step = allRowStep(model);
      break;
    case Algorithm::Spartan:
      step = spartanStep(model);
      break;
    case Algorithm::BruteForce: {
      bool tooLarge = false;
      step = searchStep(model, fine, options, true, tooLarge);
      if (tooLarge) {
        error = "brute force would enumerate more than " +
                std::to_string(options.maxBruteForce) +
                " assignments at a step of " + std::to_string(rs.k) +
                "; use it on small graphs only";
        return std::nullopt;
      }
      break;
    }
    default:
      step = solveStep(model, graph, options, fine, coarse, useCoarse,
                       sharedReads);
      if (step.coarsened)
        plan.remarks.push_back(
            "step of " + std::to_string(rs.k) +
            ": the uncoarsened DP table would exceed " +
            std::to_string(options.maxTableSize) +
            " entries; the step was searched on the coarsened graph, whose "
            "ties may exclude the optimum" +
            (step.coarsenedExact ? std::string()
                                 : std::string(", and some groups were fixed "
                                               "greedily")));
      else if (!step.exact)
        plan.remarks.push_back(
            "step of " + std::to_string(rs.k) + ": the DP table would exceed " +
            std::to_string(options.maxTableSize) +
            " entries; some groups were fixed greedily and the step is not "
            "proven optimal");
      if (sharedReads) {
        step.sharedReads = true;
        step.exact = false;
      }
      break;
    }
    step.level = rs.level;
    state = plan.addStep(model, std::move(step));
  }
  if (options.algorithm == Algorithm::Tofu && options.refineSweeps)
    refinePlan(graph, plan, options);
  std::string ignored;
  evaluateProgramBytes(graph, plan, ignored);
  return plan;
}

std::optional<Plan> tofu::searchPlan(const Graph &graph,
                                     const Topology &topology,
                                     const SearchOptions &options,
                                     std::string &error) {
  CoarseGraph fine = coarsen(graph, CoarsenOptions::none());
  std::optional<CoarseGraph> coarse;
  // The strategy sets of every step, shared by both recursions.
  StrategyCache cache;
  std::optional<Plan> plan =
      recurse(graph, topology, options, fine, coarse, cache, false, error);
  if (!plan || options.algorithm != Algorithm::Tofu || !options.sharedReads ||
      plan->programBytes < 0)
    return plan;
  // The step model charges every reader of a tensor its conversion; the
  // program converts a tensor once for the readers of equal regions. A
  // search that counts those conversions once competes on the program's
  // bytes, unrefined: the refinement counts every fetch on its own, which
  // undoes what the shared count found.
  SearchOptions unrefined = options;
  unrefined.refineSweeps = 0;
  std::string ignored;
  std::optional<Plan> shared =
      recurse(graph, topology, unrefined, fine, coarse, cache, true, ignored);
  if (!shared || shared->programBytes < 0 ||
      shared->programBytes >= plan->programBytes - 0.5)
    return plan;
  auto bytes = [](double b) { return std::to_string(int64_t(b)); };
  shared->remarks.push_back(
      "the steps were searched counting once the conversions that the "
      "program shares between readers: the program moves " +
      bytes(shared->programBytes) + " bytes, against " +
      bytes(plan->programBytes) + " with the refined plan of the step model");
  return shared;
}

bool tofu::forEachAssignment(
    const StepModel &model,
    const std::function<bool(const std::vector<Tiling> &,
                             const std::vector<OpChoice> &)> &visit) {
  size_t nt = model.tensorOptions.size(), no = model.opOptions.size();
  std::vector<unsigned> digit(nt + no, 0);
  std::vector<Tiling> tilings(nt);
  std::vector<OpChoice> choices(no);
  while (true) {
    for (size_t t = 0; t < nt; ++t)
      tilings[t] = model.tensorOptions[t][digit[t]];
    for (size_t o = 0; o < no; ++o)
      choices[o] = model.opOptions[o][digit[nt + o]];
    if (!visit(tilings, choices))
      return false;
    size_t p = digit.size();
    while (p-- > 0) {
      size_t radix = p < nt ? model.tensorOptions[p].size()
                            : model.opOptions[p - nt].size();
      if (++digit[p] < radix)
        break;
      digit[p] = 0;
    }
    if (p == (size_t)-1)
      return true;
  }
}

std::optional<double> tofu::exhaustivePlanCost(const Graph &graph,
                                               const std::vector<unsigned> &ks,
                                               const SearchOptions &options,
                                               uint64_t maxAssignments) {
  StrategyCache cache;
  uint64_t visited = 0;
  std::function<std::optional<double>(const StepState &, size_t)> rec =
      [&](const StepState &state, size_t i) -> std::optional<double> {
    if (i == ks.size())
      return 0.0;
    StepModel model(graph, state, ks[i], options, cache);
    double best = std::numeric_limits<double>::infinity();
    bool complete =
        forEachAssignment(model, [&](const std::vector<Tiling> &tilings,
                                     const std::vector<OpChoice> &choices) {
          if (++visited > maxAssignments)
            return false;
          double here = model.cost(tilings, choices);
          auto rest = i + 1 == ks.size()
                          ? std::optional<double>(0.0)
                          : rec(model.advance(tilings, choices), i + 1);
          if (!rest)
            return false;
          best = std::min(best, here + *rest);
          return true;
        });
    if (!complete)
      return std::nullopt;
    return best;
  };
  return rec(StepState::initial(graph), 0);
}
