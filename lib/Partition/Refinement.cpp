//===- Refinement.cpp - Minimising what the program moves ----------------===//
//
// The recursion (Search.cpp) chooses each step on the step model, which
// cannot see the later steps. Once every step is chosen, the cost of the
// generated program (ProgramCost.h) is a sum of edge costs, and with all
// steps but one fixed each edge's cost depends only on the tiling and the
// choice at that step: the same min-sum problem as a step of the recursion,
// with other weights. Re-solving one step at a time is a coordinate descent
// that never increases what the program moves.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/PlanImport.h"
#include "tofu/Partition/ProgramCost.h"
#include "tofu/Partition/Search.h"
#include "tofu/Partition/StepSearch.h"

using namespace tofu;

/// The cost of a combination that cannot be laid out (a cut that no longer
/// divides once the other steps are fixed): never chosen when any other is
/// possible, and finite so that the DP's sums stay comparable.
static constexpr double kInfeasible = 1e30;

/// The grid form of a plan.
static GridPlan getGridPlan(const Graph &graph, const Plan &plan) {
  GridPlan grid;
  grid.tilings.assign(graph.tensors.size(), {});
  grid.cutVars.assign(graph.ops.size(), {});
  for (const PlanStep &s : plan.steps) {
    for (size_t t = 0; t < graph.tensors.size(); ++t)
      grid.tilings[t].push_back(s.tilings[t]);
    for (size_t o = 0; o < graph.ops.size(); ++o)
      grid.cutVars[o].push_back(s.ops[o].choice.var);
  }
  return grid;
}

static ProcessGrid getProcessGrid(const Plan &plan) {
  ProcessGrid grid;
  for (const PlanStep &s : plan.steps)
    grid.shape.push_back(s.k);
  return grid;
}

bool tofu::evaluateProgramBytes(const Graph &graph, Plan &plan,
                                std::string &error) {
  plan.programBytes = -1;
  plan.programTensorBytes.clear();
  ProgramCostModel model(graph, getProcessGrid(plan));
  std::optional<ProgramBytes> bytes =
      model.evaluate(getGridPlan(graph, plan), error);
  if (!bytes)
    return false;
  plan.programBytes = bytes->total;
  plan.programTensorBytes = std::move(bytes->tensorBytes);
  return true;
}

/// The program's cost of every edge for every option of step `axis`, the
/// other steps fixed as in `grid`.
static StepModel::EdgeCosts getEdgeCosts(const Graph &graph,
                                         const ProgramCostModel &program,
                                         const StepModel &model,
                                         const GridPlan &grid, size_t axis) {
  StepModel::EdgeCosts costs;
  costs.inputs.resize(graph.ops.size());
  costs.outputs.resize(graph.ops.size());
  // Every tensor's layout under each of its options at this step.
  std::vector<std::vector<std::optional<RankBoxes>>> layouts(
      graph.tensors.size());
  auto layoutsOf = [&](int t) -> const std::vector<std::optional<RankBoxes>> & {
    std::vector<std::optional<RankBoxes>> &mine = layouts[t];
    if (mine.empty()) {
      std::vector<Tiling> tilings = grid.tilings[t];
      for (Tiling option : model.tensorOptions[t]) {
        tilings[axis] = option;
        mine.push_back(program.getLayout(t, tilings));
      }
    }
    return mine;
  };
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &node = graph.ops[o];
    const std::vector<OpChoice> &choices = model.opOptions[o];
    std::vector<std::optional<RankBoxes>> iterations;
    std::vector<std::vector<int>> cuts;
    for (OpChoice c : choices) {
      std::vector<int> cutVars = grid.cutVars[o];
      cutVars[axis] = c.var;
      iterations.push_back(program.getIteration(o, cutVars));
      cuts.push_back(std::move(cutVars));
    }
    costs.inputs[o].resize(node.inputs.size());
    for (unsigned j = 0; j < node.inputs.size(); ++j) {
      int t = node.inputs[j];
      if (t < 0)
        continue;
      const std::vector<std::optional<RankBoxes>> &held = layoutsOf(t);
      std::vector<double> &table = costs.inputs[o][j];
      for (size_t c = 0; c < choices.size(); ++c) {
        RankBoxes regions;
        if (iterations[c])
          regions = program.getInputRegions(o, j, *iterations[c]);
        for (size_t x = 0; x < held.size(); ++x)
          table.push_back(iterations[c] && held[x]
                              ? program.getFetchBytes(t, regions, *held[x])
                              : kInfeasible);
      }
    }
    costs.outputs[o].resize(node.outputs.size());
    for (unsigned j = 0; j < node.outputs.size(); ++j) {
      int t = node.outputs[j];
      if (t < 0)
        continue;
      const std::vector<std::optional<RankBoxes>> &held = layoutsOf(t);
      std::vector<double> &table = costs.outputs[o][j];
      for (size_t c = 0; c < choices.size(); ++c)
        for (size_t x = 0; x < held.size(); ++x) {
          if (!iterations[c] || !held[x]) {
            table.push_back(kInfeasible);
            continue;
          }
          std::vector<Tiling> tilings = grid.tilings[t];
          tilings[axis] = model.tensorOptions[t][x];
          table.push_back(program.getOutputBytes(o, j, *iterations[c], cuts[c],
                                                 tilings, *held[x]));
        }
    }
  }
  return costs;
}

void tofu::refinePlan(const Graph &graph, Plan &plan,
                      const SearchOptions &options) {
  std::string error;
  if (plan.steps.size() < 2 || !evaluateProgramBytes(graph, plan, error))
    return;
  ProgramCostModel program(graph, getProcessGrid(plan));
  StrategyCache cache;
  CoarseGraph fine = coarsen(graph, CoarsenOptions::none());
  std::optional<CoarseGraph> coarse;
  bool useCoarse = !options.coarsen.isNone();
  for (unsigned sweep = 0; sweep < options.refineSweeps; ++sweep) {
    bool improved = false;
    for (size_t axis = 0; axis < plan.steps.size(); ++axis) {
      const PlanStep &current = plan.steps[axis];
      StepModel model(graph, current.before, current.k, options, cache);
      StepModel::EdgeCosts costs = getEdgeCosts(
          graph, program, model, getGridPlan(graph, plan), axis);
      model.edgeCosts = &costs;
      PlanStep step = solveStep(model, graph, options, fine, coarse, useCoarse);
      // The whole program's bytes with the new step (the edges, and the
      // fed-back results that no edge covers).
      GridPlan next = getGridPlan(graph, plan);
      for (size_t t = 0; t < graph.tensors.size(); ++t)
        next.tilings[t][axis] = step.tilings[t];
      for (size_t o = 0; o < graph.ops.size(); ++o)
        next.cutVars[o][axis] = step.ops[o].choice.var;
      std::optional<ProgramBytes> moved = program.evaluate(next, error);
      if (!moved || moved->total >= plan.programBytes - 0.5)
        continue;
      // Re-evaluate the whole plan: later steps must stay feasible.
      std::vector<std::vector<Tiling>> tilings;
      std::vector<std::vector<std::string>> strategies;
      for (size_t i = 0; i < plan.steps.size(); ++i) {
        const PlanStep &s = i == axis ? step : plan.steps[i];
        tilings.push_back(s.tilings);
        std::vector<std::string> names;
        for (const OpStep &os : s.ops)
          names.push_back(os.strategy);
        strategies.push_back(std::move(names));
      }
      SearchOptions plain = options;
      plain.refineSweeps = 0;
      std::optional<Plan> candidate = evaluatePlan(
          graph, plan.topology, plain, tilings, strategies, error, &cache);
      if (!candidate)
        continue;
      candidate->programBytes = moved->total;
      // Keep what the search recorded about how each step was found.
      for (size_t i = 0; i < plan.steps.size(); ++i) {
        const PlanStep &from = i == axis ? step : plan.steps[i];
        PlanStep &to = candidate->steps[i];
        to.searched = from.searched || i == axis;
        to.exact = from.exact;
        to.coarsened = from.coarsened;
        to.coarsenedExact = from.coarsenedExact;
        to.objective = to.bytes;
      }
      candidate->remarks = std::move(plan.remarks);
      plan = std::move(*candidate);
      improved = true;
    }
    if (!improved)
      break;
  }
}
