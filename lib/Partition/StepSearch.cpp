//===- StepSearch.cpp - The min-sum DP of one search step -----------------===//

#include "tofu/Partition/StepSearch.h"
#include "tofu/Partition/MinSum.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

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

/// The reads that tied operators charge once: by operator slot, tensor,
/// operand, description and local shapes (equal keys read equal regions
/// under every choice of the slot).
using ReadKey = std::tuple<unsigned, int, unsigned, const tdl::OpDesc *,
                           std::vector<Shape>, std::vector<Shape>>;

static ReadKey getReadKey(const StepModel &model, const CoarseGraph &coarse,
                          int o, unsigned j) {
  const OpNode &op = model.graph.ops[o];
  const OpShapes &shapes = model.state.opShapes[o];
  return {coarse.opSlot[o], op.inputs[j],  j,
          op.desc.get(),    shapes.inputs, shapes.outputs};
}

/// Whether the tensors of slot `s` may be made whole once for all their
/// readers that read them whole: some member that the program moves (not
/// rebuilt) has two readers that some choice of theirs makes read it whole.
static bool mayShareReplica(const StepModel &model, const CoarseGraph &coarse,
                            unsigned s) {
  const Graph &graph = model.graph;
  const CoarseSlot &slot = coarse.slots[s];
  if (slot.isOp)
    return false;
  for (int t : slot.members) {
    if (graph.isRebuilt(t))
      continue;
    unsigned whole = 0;
    for (auto [o, j] : graph.users[t])
      whole += std::any_of(
          model.opOptions[o].begin(), model.opOptions[o].end(),
          [&, o = o, j = j](OpChoice c) { return model.readsWhole(o, j, c); });
    if (whole >= 2)
      return true;
  }
  return false;
}

double tofu::getSharedReadBytes(const StepModel &model,
                                const CoarseGraph &coarse,
                                const std::vector<Tiling> &tilings,
                                const std::vector<OpChoice> &choices) {
  const Graph &graph = model.graph;
  std::set<ReadKey> charged;
  // Per tensor slot: its reads, and its reads with a shared replica.
  std::vector<double> plain(coarse.slots.size(), 0.0),
      replica(coarse.slots.size(), 0.0);
  double bytes = 0;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &op = graph.ops[o];
    for (unsigned j = 0; j < op.inputs.size(); ++j) {
      int t = op.inputs[j];
      if (t < 0 || graph.isRebuilt(t) ||
          !charged.insert(getReadKey(model, coarse, o, j)).second)
        continue;
      double cost = model.inputCost(o, j, choices[o], tilings[t]);
      plain[coarse.tensorSlot[t]] += cost;
      if (!model.readsWhole(o, j, choices[o]))
        replica[coarse.tensorSlot[t]] += cost;
    }
    for (unsigned j = 0; j < op.outputs.size(); ++j)
      if (int t = op.outputs[j]; t >= 0)
        bytes += model.outputCost(o, j, choices[o], tilings[t]);
  }
  for (unsigned s = 0; s < coarse.slots.size(); ++s) {
    if (!mayShareReplica(model, coarse, s)) {
      bytes += plain[s];
      continue;
    }
    for (int t : coarse.slots[s].members)
      replica[s] += model.replicateCost(t, tilings[t]);
    bytes += std::min(plain[s], replica[s]);
  }
  return bytes;
}

PlanStep tofu::searchStep(const StepModel &model, const CoarseGraph &coarse,
                          const SearchOptions &options, bool bruteForce,
                          bool &tooLarge, bool giveUp, bool sharedReads) {
  tooLarge = false;
  const Graph &graph = model.graph;
  size_t numSlots = coarse.slots.size();

  // Each slot's values: the choices every member can take.
  std::vector<std::vector<OpChoice>> opValues(numSlots);
  std::vector<std::vector<Tiling>> tensorValues(numSlots);
  // With sharedReads, a tensor slot that may share a replica
  // (mayShareReplica) takes each tiling twice: the second time with a
  // replica that every reader of the whole tensor shares (value = tiling *
  // replicas + shared).
  std::vector<unsigned> slotSize(numSlots), replicas(numSlots, 1);
  for (size_t s = 0; s < numSlots; ++s) {
    const CoarseSlot &slot = coarse.slots[s];
    if (slot.isOp) {
      opValues[s] =
          intersectOptions(model.opOptions, slot.members, OpChoice{-1});
      slotSize[s] = opValues[s].size();
    } else {
      tensorValues[s] = intersectOptions(model.tensorOptions, slot.members,
                                         Tiling::replicate());
      if (sharedReads && mayShareReplica(model, coarse, s))
        replicas[s] = 2;
      slotSize[s] = tensorValues[s].size() * replicas[s];
    }
  }
  auto tilingOf = [&](unsigned s, unsigned b) {
    return tensorValues[s][b / replicas[s]];
  };
  auto isShared = [&](unsigned s, unsigned b) { return b % replicas[s] == 1; };

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
  // With sharedReads: the reads already charged (ReadKey).
  std::set<ReadKey> charged;
  auto addEdge = [&](int o, unsigned j, bool isInput) {
    int t = isInput ? graph.ops[o].inputs[j] : graph.ops[o].outputs[j];
    if (t < 0)
      return;
    unsigned so = coarse.opSlot[o], st = coarse.tensorSlot[t];
    if (sharedReads && isInput &&
        (graph.isRebuilt(t) ||
         !charged.insert(getReadKey(model, coarse, o, j)).second))
      return;
    std::vector<double> &table = slotPairs[{so, st}];
    table.resize((size_t)slotSize[so] * slotSize[st], 0.0);
    for (unsigned a = 0; a < slotSize[so]; ++a) {
      OpChoice choice = opValues[so][a];
      bool whole =
          isInput && replicas[st] > 1 && model.readsWhole(o, j, choice);
      for (unsigned b = 0; b < slotSize[st]; ++b)
        table[a * slotSize[st] + b] +=
            !isInput ? model.outputCost(o, j, choice, tilingOf(st, b))
            : whole && isShared(st, b)
                ? 0.0
                : model.inputCost(o, j, choice, tilingOf(st, b));
    }
  };
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    for (unsigned j = 0; j < graph.ops[o].inputs.size(); ++j)
      addEdge(o, j, true);
    for (unsigned j = 0; j < graph.ops[o].outputs.size(); ++j)
      addEdge(o, j, false);
  }
  // A shared replica costs its conversion once per member.
  for (unsigned s = 0; s < numSlots; ++s) {
    if (replicas[s] == 1)
      continue;
    unsigned v = slotVar[s];
    std::vector<double> unary(problem.domains[v], 0.0);
    for (unsigned x = 0; x < problem.domains[v]; ++x) {
      unsigned b = (x / slotStride[s]) % slotSize[s];
      if (isShared(s, b))
        for (int t : coarse.slots[s].members)
          unary[x] += model.replicateCost(t, tilingOf(s, b));
    }
    problem.addUnary(v, unary);
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
        tilings[m] = tilingOf(s, c);
    }
  }
  PlanStep step = model.evaluate(std::move(tilings), std::move(choices));
  step.searched = true;
  step.exact = solution.exact;
  step.objective = solution.cost;
  assert((sharedReads || std::abs(step.bytes - solution.cost) <=
                             1e-6 * std::max(1.0, std::abs(step.bytes))) &&
         "the DP's objective differs from the plan's cost");
  return step;
}

/// The DP for one step: exact on the uncoarsened graph when its tables fit;
/// otherwise (with coarsening on) the DP over the coarsened graph, whose
/// ties keep the tables small, and the step is not exact.
PlanStep tofu::solveStep(const StepModel &model, const Graph &graph,
                         const SearchOptions &options, const CoarseGraph &fine,
                         std::optional<CoarseGraph> &coarse, bool useCoarse,
                         bool sharedReads) {
  bool tooLarge = false;
  PlanStep step = searchStep(model, fine, options, false, tooLarge,
                             /*giveUp=*/useCoarse, sharedReads);
  if (!tooLarge)
    return step;
  if (!coarse)
    coarse = coarsen(graph, options.coarsen);
  step =
      searchStep(model, *coarse, options, false, tooLarge, false, sharedReads);
  step.coarsened = true;
  step.coarsenedExact = step.exact;
  step.exact = false;
  return step;
}
