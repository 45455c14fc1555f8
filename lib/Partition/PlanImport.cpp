//===- PlanImport.cpp - Evaluating a given plan ---------------------------===//

#include "tofu/Partition/PlanImport.h"
#include "tofu/Partition/Search.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>

using namespace tofu;

std::optional<Plan>
tofu::evaluatePlan(const Graph &graph, const Topology &topology,
                   const SearchOptions &options,
                   const std::vector<std::vector<Tiling>> &tilings,
                   const std::vector<std::vector<std::string>> &strategies,
                   std::string &error, StrategyCache *sharedCache,
                   const Plan *start) {
  Plan plan(topology, options);
  std::vector<RecursionStep> steps = getRecursionSteps(topology, options);
  if (tilings.size() != steps.size() || strategies.size() != steps.size()) {
    error = "the plan has " + std::to_string(tilings.size()) +
            " step(s) but devices '" + topology.str() + "' need " +
            std::to_string(steps.size());
    return std::nullopt;
  }
  StrategyCache ownCache;
  StrategyCache &cache = sharedCache ? *sharedCache : ownCache;
  StepState state = StepState::initial(graph);
  // The leading steps that `start` already evaluated with the same choices.
  size_t reused = 0;
  size_t warnings = 0;
  while (start && reused + 1 < steps.size() &&
         reused + 1 < start->steps.size()) {
    const PlanStep &s = start->steps[reused];
    bool same = s.tilings == tilings[reused] &&
                s.ops.size() == strategies[reused].size();
    for (size_t o = 0; same && o < s.ops.size(); ++o)
      same = s.ops[o].strategy == strategies[reused][o];
    if (!same)
      break;
    plan.steps.push_back(s);
    plan.totalBytes += s.bytes;
    if (s.degenerate && warnings < start->warnings.size())
      plan.warnings.push_back(start->warnings[warnings++]);
    state = start->steps[++reused].before;
  }
  if (start)
    plan.remarks = start->remarks;
  for (size_t i = reused; i < steps.size(); ++i) {
    StepModel model(graph, state, steps[i].k, options, cache);
    if (!start)
      for (const std::string &r : model.remarks)
        plan.remarks.push_back(r);
    std::string at = "step " + std::to_string(i) + ": ";
    for (size_t t = 0; t < graph.tensors.size(); ++t) {
      Tiling tl = tilings[i][t];
      if (tl.kind == Tiling::Kind::Partial ||
          (tl.kind == Tiling::Kind::Cut &&
           !llvm::is_contained(model.tensorOptions[t], tl))) {
        error = at + "tensor " + graph.tensors[t].name + " cannot be " +
                tl.str() + " over " + std::to_string(steps[i].k) + " workers";
        return std::nullopt;
      }
      // Replicated only with replication, or when nothing divides.
      if (!llvm::is_contained(model.tensorOptions[t], tl)) {
        error = at + "tensor " + graph.tensors[t].name +
                " cannot be rep: replication is off and it can be cut over " +
                std::to_string(steps[i].k) + " workers";
        return std::nullopt;
      }
    }
    std::vector<OpChoice> choices;
    for (size_t o = 0; o < graph.ops.size(); ++o) {
      const std::string &name = strategies[i][o];
      OpChoice c{-1};
      if (name == "replicated" &&
          std::find(model.opOptions[o].begin(), model.opOptions[o].end(), c) ==
              model.opOptions[o].end()) {
        error = at + "operator " + std::to_string(o) + " (" +
                graph.ops[o].name +
                ") cannot run replicated: it has an even strategy";
        return std::nullopt;
      }
      if (name != "replicated") {
        bool found = false;
        std::string err;
        const StrategySet *set =
            cache.get(*graph.ops[o].desc, state.opShapes[o], steps[i].k, err);
        for (OpChoice option : model.opOptions[o]) {
          const Strategy *s = model.getStrategy(o, option);
          if (!s)
            continue;
          if (set && set->space.vars[s->var] == name) {
            c = option;
            found = true;
          }
        }
        if (!found) {
          error = at + "operator " + std::to_string(o) + " (" +
                  graph.ops[o].name + ") has no even strategy '" + name + "'";
          return std::nullopt;
        }
      }
      choices.push_back(c);
    }
    PlanStep step = model.evaluate(tilings[i], std::move(choices));
    step.level = steps[i].level;
    state = plan.addStep(model, std::move(step));
  }
  return plan;
}
