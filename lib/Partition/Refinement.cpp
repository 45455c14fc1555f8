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

#include <unordered_map>

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
                                std::string &error, bool shareFetches) {
  plan.programBytes = -1;
  plan.programTensorBytes.clear();
  ProgramCostModel model(graph, getProcessGrid(plan));
  std::optional<ProgramBytes> bytes =
      model.evaluate(getGridPlan(graph, plan), error, shareFetches);
  if (!bytes)
    return false;
  plan.programBytes = bytes->total;
  plan.programTensorBytes = std::move(bytes->tensorBytes);
  return true;
}

namespace {
/// Edge tables already computed in one step's refinement, by what they
/// depend on: operators that repeat (the layers of a deep network, the time
/// steps of an RNN) with the same choices at the other steps share them.
class EdgeTableCache {
public:
  /// The key of an edge of operator `o`'s operand `j` (an output when
  /// `output`) to tensor `t`.
  std::string getKey(const ProgramCostModel &program, const StepModel &model,
                     const GridPlan &grid, size_t axis, int o, unsigned j,
                     int t, bool output) {
    std::string key = program.getEdgeKey(o, j, output);
    auto add = [&](int64_t value) { ProgramCostModel::appendKey(key, value); };
    for (size_t i = 0; i < grid.cutVars[o].size(); ++i)
      add(i == axis ? -2 : grid.cutVars[o][i]);
    for (size_t i = 0; i < grid.tilings[t].size(); ++i) {
      const Tiling &tiling = i == axis ? Tiling::partial() : grid.tilings[t][i];
      add(int(tiling.kind) * 1024 + tiling.dim);
    }
    add(-3);
    for (OpChoice c : model.opOptions[o])
      add(c.var);
    add(-3);
    for (Tiling option : model.tensorOptions[t])
      add(int(option.kind) * 1024 + option.dim);
    return key;
  }

  std::unordered_map<std::string, std::vector<double>> tables;
};
} // namespace

/// The program's cost of every edge for every option of step `axis`, the
/// other steps fixed as in `grid`.
static StepModel::EdgeCosts getEdgeCosts(const Graph &graph,
                                         const ProgramCostModel &program,
                                         const StepModel &model,
                                         const GridPlan &grid, size_t axis) {
  StepModel::EdgeCosts costs;
  costs.inputs.resize(graph.ops.size());
  costs.outputs.resize(graph.ops.size());
  EdgeTableCache cache;
  std::string message;
  // Every tensor's layout under each of its options at this step.
  std::vector<std::vector<std::optional<GridRegion>>> layouts(
      graph.tensors.size());
  auto layoutsOf =
      [&](int t) -> const std::vector<std::optional<GridRegion>> & {
    std::vector<std::optional<GridRegion>> &mine = layouts[t];
    if (mine.empty()) {
      std::vector<Tiling> tilings = grid.tilings[t];
      for (Tiling option : model.tensorOptions[t]) {
        tilings[axis] = option;
        mine.push_back(program.getLayout(t, tilings, message));
      }
    }
    return mine;
  };
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &node = graph.ops[o];
    const std::vector<OpChoice> &choices = model.opOptions[o];
    // The iteration boxes of every choice, built on the first table that
    // is not in the cache.
    std::vector<std::optional<GridRegion>> iterations;
    std::vector<std::vector<int>> cuts;
    auto iterationsOf = [&]() {
      if (!cuts.empty())
        return;
      for (OpChoice c : choices) {
        std::vector<int> cutVars = grid.cutVars[o];
        cutVars[axis] = c.var;
        iterations.push_back(program.getIteration(o, cutVars, message));
        cuts.push_back(std::move(cutVars));
      }
    };
    // The table of operand `j`, an output when `output`, of tensor `t`:
    // one cost per choice of the operator and option of the tensor.
    auto fill = [&](std::vector<double> &table, unsigned j, int t,
                    bool output) {
      std::string key =
          cache.getKey(program, model, grid, axis, o, j, t, output);
      if (auto it = cache.tables.find(key); it != cache.tables.end()) {
        table = it->second;
        return;
      }
      iterationsOf();
      const std::vector<std::optional<GridRegion>> &held = layoutsOf(t);
      for (size_t c = 0; c < choices.size(); ++c) {
        std::optional<GridRegion> regions;
        if (!output && iterations[c])
          regions = program.getInputRegions(o, j, *iterations[c]);
        for (size_t x = 0; x < held.size(); ++x) {
          if (!iterations[c] || !held[x]) {
            table.push_back(kInfeasible);
          } else if (output) {
            std::vector<Tiling> tilings = grid.tilings[t];
            tilings[axis] = model.tensorOptions[t][x];
            table.push_back(program.getOutputBytes(o, j, *iterations[c],
                                                   cuts[c], tilings, *held[x]));
          } else {
            table.push_back(program.getFetchBytes(t, regions, *held[x]));
          }
        }
      }
      cache.tables.emplace(std::move(key), table);
    };
    costs.inputs[o].resize(node.inputs.size());
    for (unsigned j = 0; j < node.inputs.size(); ++j)
      if (int t = node.inputs[j]; t >= 0)
        fill(costs.inputs[o][j], j, t, /*output=*/false);
    costs.outputs[o].resize(node.outputs.size());
    for (unsigned j = 0; j < node.outputs.size(); ++j)
      if (int t = node.outputs[j]; t >= 0)
        fill(costs.outputs[o][j], j, t, /*output=*/true);
  }
  return costs;
}

void tofu::refinePlan(const Graph &graph, Plan &plan,
                      const SearchOptions &options) {
  std::string error;
  // Candidates are compared by the sum of their edges' costs, which counts
  // every fetch: so is the plan they must beat. searchPlan evaluates the
  // refined plan again with shared fetches.
  if (plan.steps.size() < 2 ||
      !evaluateProgramBytes(graph, plan, error, /*shareFetches=*/false))
    return;
  ProgramCostModel program(graph, getProcessGrid(plan));
  StrategyCache cache;
  CoarseGraph fine = coarsen(graph, CoarsenOptions::none());
  std::optional<CoarseGraph> coarse;
  bool useCoarse = !options.coarsen.isNone();
  // A step needs solving again only when another step changed since it was
  // last solved: the DP is deterministic.
  std::vector<bool> stale(plan.steps.size(), true);
  for (unsigned sweep = 0; sweep < options.refineSweeps; ++sweep) {
    bool improved = false;
    for (size_t axis = 0; axis < plan.steps.size(); ++axis) {
      if (!stale[axis])
        continue;
      stale[axis] = false;
      const PlanStep &current = plan.steps[axis];
      StepModel model(graph, current.before, current.k, options, cache);
      GridPlan grid = getGridPlan(graph, plan);
      StepModel::EdgeCosts costs =
          getEdgeCosts(graph, program, model, grid, axis);
      model.edgeCosts = &costs;
      PlanStep step = solveStep(model, graph, options, fine, coarse, useCoarse);
      bool unchanged = step.tilings == current.tilings;
      for (size_t o = 0; unchanged && o < graph.ops.size(); ++o)
        unchanged = step.ops[o].choice.var == current.ops[o].choice.var;
      if (unchanged)
        continue;
      // The whole program's bytes with the new step: the step's bytes are
      // the sum of its edges' program costs, to which the fed-back results
      // that no edge covers add.
      if (step.bytes >= kInfeasible)
        continue;
      std::vector<std::vector<Tiling>> nextTilings = grid.tilings;
      for (size_t t = 0; t < graph.tensors.size(); ++t)
        nextTilings[t][axis] = step.tilings[t];
      std::optional<double> feeds = program.getFeedBytes(nextTilings, error);
      if (!feeds || step.bytes + *feeds >= plan.programBytes - 0.5)
        continue;
      double moved = step.bytes + *feeds;
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
          graph, plan.topology, plain, tilings, strategies, error, &cache,
          &plan);
      if (!candidate)
        continue;
      candidate->programBytes = moved;
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
      for (size_t other = 0; other < stale.size(); ++other)
        stale[other] = other != axis;
    }
    if (!improved)
      break;
  }
}
