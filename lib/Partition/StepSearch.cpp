//===- StepSearch.cpp - The min-sum DP of one search step -----------------===//

#include "tofu/Partition/StepSearch.h"
#include "tofu/Partition/MinSum.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

using namespace tofu;

/// The options every member of a slot has, in the first member's order, or
/// `fallback` when they share none.
template <typename T>
static std::vector<T> intersectOptions(const std::vector<std::vector<T>> &all,
                                       const std::vector<int> &members,
                                       T fallback) {
  std::vector<T> common = all[members.front()];
  for (int m : members) {
    const std::vector<T> &mine = all[m];
    common.erase(std::remove_if(common.begin(), common.end(),
                                [&](const T &c) {
                                  return std::find(mine.begin(), mine.end(),
                                                   c) == mine.end();
                                }),
                 common.end());
  }
  if (common.empty())
    common.push_back(fallback);
  return common;
}

PlanStep tofu::searchStep(const StepModel &model, const CoarseGraph &coarse,
                          const SearchOptions &options, bool bruteForce,
                          bool &tooLarge, bool giveUp) {
  tooLarge = false;
  const Graph &graph = model.graph;
  size_t numSlots = coarse.slots.size();

  // Each slot's values: the choices every member can take.
  std::vector<std::vector<OpChoice>> opValues(numSlots);
  std::vector<std::vector<Tiling>> tensorValues(numSlots);
  std::vector<unsigned> slotSize(numSlots);
  for (size_t s = 0; s < numSlots; ++s) {
    const CoarseSlot &slot = coarse.slots[s];
    if (slot.isOp) {
      opValues[s] =
          intersectOptions(model.opOptions, slot.members, OpChoice{-1});
      slotSize[s] = opValues[s].size();
    } else {
      tensorValues[s] = intersectOptions(model.tensorOptions, slot.members,
                                         Tiling::replicate());
      slotSize[s] = tensorValues[s].size();
    }
  }

  // Slots become DP variables, a node's slots together while the node has
  // at most maxNodeValues values.
  MinSumProblem problem;
  std::vector<unsigned> slotVar(numSlots), slotStride(numSlots);
  for (const CoarseNode &node : coarse.nodes) {
    std::vector<unsigned> current;
    uint64_t size = 1;
    auto flush = [&]() {
      if (current.empty())
        return;
      unsigned v = problem.addVariable(size);
      uint64_t stride = 1;
      for (size_t i = current.size(); i-- > 0;) {
        slotVar[current[i]] = v;
        slotStride[current[i]] = stride;
        stride *= slotSize[current[i]];
      }
      current.clear();
      size = 1;
    };
    for (unsigned s : node.slots) {
      if (!current.empty() && size * slotSize[s] > options.maxNodeValues)
        flush();
      current.push_back(s);
      size *= slotSize[s];
    }
    flush();
  }

  // Edge costs, first per pair of slots.
  std::map<std::pair<unsigned, unsigned>, std::vector<double>> slotPairs;
  auto addEdge = [&](int o, unsigned j, bool isInput) {
    int t = isInput ? graph.ops[o].inputs[j] : graph.ops[o].outputs[j];
    if (t < 0)
      return;
    unsigned so = coarse.opSlot[o], st = coarse.tensorSlot[t];
    std::vector<double> &table = slotPairs[{so, st}];
    table.resize((size_t)slotSize[so] * slotSize[st], 0.0);
    for (unsigned a = 0; a < slotSize[so]; ++a)
      for (unsigned b = 0; b < slotSize[st]; ++b)
        table[a * slotSize[st] + b] +=
            isInput
                ? model.inputCost(o, j, opValues[so][a], tensorValues[st][b])
                : model.outputCost(o, j, opValues[so][a], tensorValues[st][b]);
  };
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    for (unsigned j = 0; j < graph.ops[o].inputs.size(); ++j)
      addEdge(o, j, true);
    for (unsigned j = 0; j < graph.ops[o].outputs.size(); ++j)
      addEdge(o, j, false);
  }
  // Then per pair of variables.
  std::map<std::pair<unsigned, unsigned>, std::vector<double>> varPairs;
  for (auto &[key, small] : slotPairs) {
    auto [so, st] = key;
    unsigned vo = slotVar[so], vt = slotVar[st];
    unsigned dt = slotSize[st];
    auto valueOf = [&](unsigned slot, unsigned x) {
      return (x / slotStride[slot]) % slotSize[slot];
    };
    if (vo == vt) {
      std::vector<double> unary(problem.domains[vo], 0.0);
      for (unsigned x = 0; x < problem.domains[vo]; ++x)
        unary[x] = small[valueOf(so, x) * dt + valueOf(st, x)];
      problem.addUnary(vo, unary);
      continue;
    }
    unsigned a = std::min(vo, vt), b = std::max(vo, vt);
    unsigned sa = vo < vt ? so : st, sb = vo < vt ? st : so;
    std::vector<double> &table = varPairs[{a, b}];
    unsigned da = problem.domains[a], db = problem.domains[b];
    table.resize((size_t)da * db, 0.0);
    for (unsigned x = 0; x < da; ++x)
      for (unsigned y = 0; y < db; ++y) {
        unsigned ca = valueOf(sa, x), cb = valueOf(sb, y);
        table[(size_t)x * db + y] +=
            vo < vt ? small[ca * dt + cb] : small[cb * dt + ca];
      }
  }
  for (auto &[key, table] : varPairs)
    problem.addPairwise(key.first, key.second, std::move(table));

  MinSumSolution solution;
  if (bruteForce) {
    auto found = bruteForceMinSum(problem, options.maxBruteForce);
    if (!found) {
      tooLarge = true;
      return {};
    }
    solution = std::move(*found);
  } else {
    if (giveUp && !fitsMinSum(problem, options.maxTableSize)) {
      tooLarge = true;
      return {};
    }
    solution = solveMinSum(problem, options.maxTableSize, giveUp);
    if (solution.assignment.size() != problem.domains.size()) {
      tooLarge = true;
      return {};
    }
  }

  std::vector<Tiling> tilings(graph.tensors.size());
  std::vector<OpChoice> choices(graph.ops.size());
  for (size_t s = 0; s < numSlots; ++s) {
    unsigned x = solution.assignment[slotVar[s]];
    unsigned c = (x / slotStride[s]) % slotSize[s];
    for (int m : coarse.slots[s].members) {
      if (coarse.slots[s].isOp)
        choices[m] = opValues[s][c];
      else
        tilings[m] = tensorValues[s][c];
    }
  }
  PlanStep step = model.evaluate(std::move(tilings), std::move(choices));
  step.searched = true;
  step.exact = solution.exact;
  step.objective = solution.cost;
  assert(std::abs(step.bytes - solution.cost) <=
             1e-6 * std::max(1.0, std::abs(step.bytes)) &&
         "the DP's objective differs from the plan's cost");
  return step;
}

/// The DP for one step: exact on the uncoarsened graph when its tables fit;
/// otherwise (with coarsening on) the DP over the coarsened graph, whose
/// ties keep the tables small, and the step is not exact.
PlanStep tofu::solveStep(const StepModel &model, const Graph &graph,
                         const SearchOptions &options, const CoarseGraph &fine,
                         std::optional<CoarseGraph> &coarse, bool useCoarse) {
  bool tooLarge = false;
  PlanStep step =
      searchStep(model, fine, options, false, tooLarge, /*giveUp=*/useCoarse);
  if (!tooLarge)
    return step;
  if (!coarse)
    coarse = coarsen(graph, options.coarsen);
  step = searchStep(model, *coarse, options, false, tooLarge);
  step.coarsened = true;
  step.coarsenedExact = step.exact;
  step.exact = false;
  return step;
}
