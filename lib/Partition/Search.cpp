//===- Search.cpp - The recursive partition search (Tofu §5) --------------===//

#include "tofu/Partition/Search.h"
#include "tofu/Partition/MinSum.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>

using namespace tofu;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static const std::pair<Algorithm, const char *> kAlgorithmNames[] = {
    {Algorithm::Tofu, "tofu"},
    {Algorithm::BruteForce, "brute-force"},
    {Algorithm::DataParallel, "data-parallel"},
    {Algorithm::AllRowGreedy, "allrow-greedy"},
    {Algorithm::Spartan, "spartan"},
    {Algorithm::EqualChop, "equalchop"},
    {Algorithm::ICML18, "icml18"},
};

std::optional<Algorithm> tofu::parseAlgorithm(const std::string &name) {
  for (auto &[a, n] : kAlgorithmNames)
    if (name == n)
      return a;
  return std::nullopt;
}

const char *tofu::stringifyAlgorithm(Algorithm algorithm) {
  for (auto &[a, n] : kAlgorithmNames)
    if (a == algorithm)
      return n;
  return "?";
}

//===----------------------------------------------------------------------===//
// State and strategies
//===----------------------------------------------------------------------===//

StepState StepState::initial(const Graph &graph) {
  StepState s;
  for (const TensorNode &t : graph.tensors)
    s.tensorShapes.push_back(t.shape);
  for (const OpNode &op : graph.ops)
    s.opShapes.push_back(op.shapes);
  s.opBroken.assign(graph.ops.size(), false);
  return s;
}

static std::string shapeKey(const Shape &s) {
  std::string r;
  for (int64_t d : s)
    r += std::to_string(d) + "x";
  return r;
}

const StrategySet *StrategyCache::get(const tdl::OpDesc &desc,
                                      const OpShapes &shapes, unsigned k,
                                      std::string &error) {
  std::string key =
      std::to_string((uintptr_t)&desc) + "/" + std::to_string(k) + ":";
  for (const Shape &s : shapes.inputs)
    key += shapeKey(s) + ",";
  key += ";";
  for (const Shape &s : shapes.outputs)
    key += shapeKey(s) + ",";
  auto it = sets.find(key);
  if (it != sets.end())
    return it->second.get();
  auto failed = failures.find(key);
  if (failed != failures.end()) {
    error = failed->second;
    return nullptr;
  }
  std::optional<StrategySet> set = discoverStrategies(desc, shapes, k, error);
  if (!set) {
    failures[key] = error;
    return nullptr;
  }
  auto ptr = std::make_shared<StrategySet>(std::move(*set));
  sets[key] = ptr;
  return ptr.get();
}

std::vector<Shape> Plan::getFinalTensorShapes(const Graph &graph) const {
  if (steps.empty()) {
    std::vector<Shape> out;
    for (const TensorNode &t : graph.tensors)
      out.push_back(t.shape);
    return out;
  }
  const PlanStep &last = steps.back();
  std::vector<Shape> out = last.before.tensorShapes;
  for (size_t t = 0; t < out.size(); ++t)
    if (last.tilings[t].kind == Tiling::Kind::Cut)
      out[t][last.tilings[t].dim] /= last.k;
  return out;
}

//===----------------------------------------------------------------------===//
// StepModel
//===----------------------------------------------------------------------===//

/// Marks the inputs that `e` accesses.
static void markReads(const tdl::Expr &e, const tdl::OpDesc &desc,
                      std::vector<bool> &reads) {
  if (e.kind == tdl::Expr::Kind::Access)
    for (size_t i = 0; i < desc.inputs.size(); ++i)
      if (desc.inputs[i] == e.name)
        reads[i] = true;
  for (const tdl::Expr &o : e.operands)
    markReads(o, desc, reads);
}

StepModel::StepModel(const Graph &graph, const StepState &state, unsigned k,
                     const SearchOptions &options, StrategyCache &cache)
    : graph(graph), state(state), k(k) {
  for (const OpNode &op : graph.ops) {
    std::vector<bool> r(op.desc->inputs.size(), false);
    for (const tdl::OutputDesc &out : op.desc->outputs)
      markReads(out.body, *op.desc, r);
    reads.push_back(std::move(r));
  }
  unsigned replicatedTensors = 0, replicatedOps = 0, brokenOps = 0;
  // Data parallelism runs what it does not split (the optimizer on the
  // replicated weights) on every device. Elsewhere replicated execution is
  // only a fallback: with replicated tensors it would make "no parallelism
  // at all" the plan with the least communication.
  bool allowReplicated = options.algorithm == Algorithm::DataParallel;
  bool hasCut = false, hasShape = false;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    const Shape &shape = state.tensorShapes[t];
    std::vector<Tiling> opts;
    for (unsigned d = 0; d < shape.size(); ++d)
      if (shape[d] >= (int64_t)k && shape[d] % k == 0)
        opts.push_back(Tiling::cut(d));
    hasCut |= !opts.empty();
    hasShape |= !shape.empty();
    // Data parallelism replicates model state whatever divides.
    if (options.replication || opts.empty() || allowReplicated)
      opts.push_back(Tiling::replicate());
    replicatedTensors += opts.size() == 1 && !shape.empty() &&
                         opts[0].kind == Tiling::Kind::Replicate;
    tensorOptions.push_back(std::move(opts));
  }
  degenerate = hasShape && !hasCut;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &op = graph.ops[o];
    const StrategySet *set = nullptr;
    std::string error;
    if (!state.opBroken[o])
      set = cache.get(*op.desc, state.opShapes[o], k, error);
    brokenOps += !set;
    sets.push_back(set);
    std::vector<OpChoice> opts;
    if (set)
      for (const Strategy &s : set->strategies)
        if (!s.uneven &&
            !(s.reducesOutput && options.algorithm == Algorithm::ICML18))
          opts.push_back({(int)s.var});
    if (opts.empty()) {
      opts.push_back({-1});
      ++replicatedOps;
    } else if (allowReplicated) {
      opts.push_back({-1});
    }
    opOptions.push_back(std::move(opts));
  }
  std::string step = "step of " + std::to_string(k) + ": ";
  if (replicatedTensors)
    remarks.push_back(step + std::to_string(replicatedTensors) +
                      " tensor(s) have no dimension divisible by " +
                      std::to_string(k) + " and are replicated");
  if (replicatedOps)
    remarks.push_back(step + std::to_string(replicatedOps) +
                      " operator(s) have no even strategy and run replicated");
  if (brokenOps)
    remarks.push_back(step + std::to_string(brokenOps) +
                      " operator(s) no longer fit their description after "
                      "earlier cuts and run replicated");
}

const Strategy *StepModel::getStrategy(int op, OpChoice choice) const {
  if (choice.var < 0 || !sets[op])
    return nullptr;
  for (const Strategy &s : sets[op]->strategies)
    if ((int)s.var == choice.var)
      return &s;
  return nullptr;
}

/// |L| / |Q|: scales a count on the operator's operand to the tensor's tile.
static double scaleTo(const Shape &tensor, const Shape &operand) {
  if (tensor == operand)
    return 1.0;
  int64_t q = getNumElements(operand);
  return q ? (double)getNumElements(tensor) / q : 0.0;
}

/// Bytes of a step for `elements` counted on an operand of tensor `t`.
static double toBytes(const Graph &graph, const StepState &state, int t,
                      const Shape &operand, double elements) {
  return elements * scaleTo(state.tensorShapes[t], operand) *
         graph.tensors[t].elementBytes * state.groups;
}

/// The position of `x` in `options` (which holds it).
template <typename T>
static size_t indexOf(const std::vector<T> &options, const T &x) {
  return std::find(options.begin(), options.end(), x) - options.begin();
}

double StepModel::inputCost(int op, unsigned j, OpChoice choice,
                            Tiling tiling) const {
  const OpNode &node = graph.ops[op];
  int t = node.inputs[j];
  if (t < 0)
    return 0;
  if (edgeCosts)
    return edgeCosts->inputs[op][j][indexOf(opOptions[op], choice) *
                                        tensorOptions[t].size() +
                                    indexOf(tensorOptions[t], tiling)];
  const Shape &operand = state.opShapes[op].inputs[j];
  double elements;
  if (const Strategy *s = getStrategy(op, choice)) {
    const InputRequirement &req = s->inputs[j];
    if (!req.read)
      return 0;
    size_t index = tiling.kind == Tiling::Kind::Cut ? tiling.dim
                   : tiling.kind == Tiling::Kind::Replicate
                       ? operand.size()
                       : operand.size() + 1;
    elements = req.fetch[index];
  } else {
    if (!reads[op][j])
      return 0;
    elements = getConversionCost(operand, tiling, Tiling::replicate(), k);
  }
  return toBytes(graph, state, t, operand, elements);
}

double StepModel::outputCost(int op, unsigned j, OpChoice choice,
                             Tiling tiling) const {
  const OpNode &node = graph.ops[op];
  int t = node.outputs[j];
  if (t < 0)
    return 0;
  if (edgeCosts)
    return edgeCosts->outputs[op][j][indexOf(opOptions[op], choice) *
                                         tensorOptions[t].size() +
                                     indexOf(tensorOptions[t], tiling)];
  const Shape &operand = state.opShapes[op].outputs[j];
  const Strategy *s = getStrategy(op, choice);
  Tiling produced = s ? s->outputs[j] : Tiling::replicate();
  return toBytes(graph, state, t, operand,
                 getConversionCost(operand, produced, tiling, k));
}

OpChoice StepModel::bestChoice(int op,
                               const std::vector<Tiling> &tilings) const {
  const OpNode &node = graph.ops[op];
  OpChoice best = opOptions[op].front();
  double bestCost = std::numeric_limits<double>::infinity();
  for (OpChoice c : opOptions[op]) {
    double cost = 0;
    for (unsigned j = 0; j < node.inputs.size(); ++j)
      if (node.inputs[j] >= 0)
        cost += inputCost(op, j, c, tilings[node.inputs[j]]);
    for (unsigned j = 0; j < node.outputs.size(); ++j)
      if (node.outputs[j] >= 0)
        cost += outputCost(op, j, c, tilings[node.outputs[j]]);
    if (cost < bestCost) {
      bestCost = cost;
      best = c;
    }
  }
  return best;
}

/// What a strategy needs of one input on the operand shape: "whole" or
/// "cut(d)" when the regions are exactly those of a tiling, else "region"
/// with the boxes.
static std::string describeNeed(const InputRequirement &req,
                                const Shape &operand, unsigned k,
                                std::vector<Box> &regions) {
  if (!req.read)
    return "unread";
  if (req.cutDim == -1 &&
      req.regions == getTileBoxes(operand, Tiling::replicate(), k))
    return "whole";
  if (req.cutDim >= 0 &&
      req.regions == getTileBoxes(operand, Tiling::cut(req.cutDim), k))
    return "cut(" + std::to_string(req.cutDim) + ")";
  regions = req.regions;
  return "region";
}

PlanStep StepModel::evaluate(std::vector<Tiling> tilings,
                             std::vector<OpChoice> choices) const {
  PlanStep step;
  step.k = k;
  step.groups = state.groups;
  step.before = state;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &node = graph.ops[o];
    OpStep os;
    os.choice = choices[o];
    const Strategy *s = getStrategy(o, os.choice);
    os.strategy = s ? sets[o]->space.vars[s->var] : "replicated";
    os.regions.resize(node.inputs.size());
    for (unsigned j = 0; j < node.inputs.size(); ++j) {
      os.needs.push_back(s ? describeNeed(s->inputs[j],
                                          state.opShapes[o].inputs[j], k,
                                          os.regions[j])
                           : (reads[o][j] ? "whole" : "unread"));
      double c = node.inputs[j] >= 0
                     ? inputCost(o, j, os.choice, tilings[node.inputs[j]])
                     : 0.0;
      os.inputBytes.push_back(c);
      step.bytes += c;
    }
    for (unsigned j = 0; j < node.outputs.size(); ++j) {
      os.produces.push_back(s ? s->outputs[j] : Tiling::replicate());
      double c = node.outputs[j] >= 0
                     ? outputCost(o, j, os.choice, tilings[node.outputs[j]])
                     : 0.0;
      os.outputBytes.push_back(c);
      step.bytes += c;
    }
    step.ops.push_back(std::move(os));
  }
  step.tilings = std::move(tilings);
  return step;
}

double StepModel::cost(const std::vector<Tiling> &tilings,
                       const std::vector<OpChoice> &choices) const {
  double total = 0;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &node = graph.ops[o];
    for (unsigned j = 0; j < node.inputs.size(); ++j)
      if (node.inputs[j] >= 0)
        total += inputCost(o, j, choices[o], tilings[node.inputs[j]]);
    for (unsigned j = 0; j < node.outputs.size(); ++j)
      if (node.outputs[j] >= 0)
        total += outputCost(o, j, choices[o], tilings[node.outputs[j]]);
  }
  return total;
}

StepState StepModel::advance(const PlanStep &step) const {
  std::vector<OpChoice> choices;
  for (const OpStep &o : step.ops)
    choices.push_back(o.choice);
  return advance(step.tilings, choices);
}

StepState StepModel::advance(const std::vector<Tiling> &tilings,
                             const std::vector<OpChoice> &choices) const {
  StepState next = state;
  next.groups = state.groups * k;
  for (size_t t = 0; t < graph.tensors.size(); ++t)
    if (tilings[t].kind == Tiling::Kind::Cut)
      next.tensorShapes[t][tilings[t].dim] /= k;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const Strategy *s = getStrategy(o, choices[o]);
    if (!s)
      continue;
    OpShapes &shapes = next.opShapes[o];
    for (unsigned j = 0; j < shapes.inputs.size(); ++j) {
      const InputRequirement &req = s->inputs[j];
      if (!req.read || req.regions.empty())
        continue;
      const Box *largest = &req.regions.front();
      for (const Box &b : req.regions)
        if (b.volume() > largest->volume())
          largest = &b;
      for (unsigned d = 0; d < shapes.inputs[j].size(); ++d)
        shapes.inputs[j][d] = largest->hi[d] - largest->lo[d] + 1;
    }
    for (unsigned j = 0; j < shapes.outputs.size(); ++j)
      if (s->outputs[j].kind == Tiling::Kind::Cut)
        shapes.outputs[j][s->outputs[j].dim] /= k;
    std::string error;
    if (!inferLoopSpace(*graph.ops[o].desc, shapes, error))
      next.opBroken[o] = true;
  }
  return next;
}

//===----------------------------------------------------------------------===//
// The DP step
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Baselines
//===----------------------------------------------------------------------===//

static bool contains(const std::vector<Tiling> &v, Tiling t) {
  return std::find(v.begin(), v.end(), t) != v.end();
}

static PlanStep withBestChoices(const StepModel &model,
                                std::vector<Tiling> tilings) {
  std::vector<OpChoice> choices;
  for (size_t o = 0; o < model.graph.ops.size(); ++o)
    choices.push_back(model.bestChoice(o, tilings));
  return model.evaluate(std::move(tilings), std::move(choices));
}

static PlanStep dataParallelStep(const StepModel &model) {
  std::vector<Tiling> tilings;
  for (size_t t = 0; t < model.graph.tensors.size(); ++t) {
    bool cut0 = contains(model.tensorOptions[t], Tiling::cut(0));
    tilings.push_back(!model.graph.isModelState(t) && cut0
                          ? Tiling::cut(0)
                          : Tiling::replicate());
  }
  return withBestChoices(model, std::move(tilings));
}

static PlanStep allRowStep(const StepModel &model) {
  std::vector<Tiling> tilings;
  for (size_t t = 0; t < model.graph.tensors.size(); ++t)
    tilings.push_back(model.tensorOptions[t].front());
  return withBestChoices(model, std::move(tilings));
}

static PlanStep spartanStep(const StepModel &model) {
  const Graph &graph = model.graph;
  size_t n = graph.tensors.size();
  std::vector<int> order(n);
  std::iota(order.begin(), order.end(), 0);
  auto bytes = [&](int t) {
    return getNumElements(model.state.tensorShapes[t]) *
           graph.tensors[t].elementBytes;
  };
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return bytes(a) != bytes(b) ? bytes(a) > bytes(b) : a < b;
  });
  std::vector<Tiling> tilings(n);
  std::vector<bool> fixed(n, false);
  // The cheapest choice of `op` counting only edges to fixed tensors.
  auto opCost = [&](int op) {
    const OpNode &node = graph.ops[op];
    double best = std::numeric_limits<double>::infinity();
    for (OpChoice c : model.opOptions[op]) {
      double cost = 0;
      for (unsigned j = 0; j < node.inputs.size(); ++j)
        if (node.inputs[j] >= 0 && fixed[node.inputs[j]])
          cost += model.inputCost(op, j, c, tilings[node.inputs[j]]);
      for (unsigned j = 0; j < node.outputs.size(); ++j)
        if (node.outputs[j] >= 0 && fixed[node.outputs[j]])
          cost += model.outputCost(op, j, c, tilings[node.outputs[j]]);
      best = std::min(best, cost);
    }
    return best;
  };
  for (int t : order) {
    std::vector<int> ops;
    for (auto [o, j] : graph.users[t])
      ops.push_back(o);
    if (graph.tensors[t].producer >= 0)
      ops.push_back(graph.tensors[t].producer);
    std::sort(ops.begin(), ops.end());
    ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
    fixed[t] = true;
    Tiling best = model.tensorOptions[t].front();
    double bestCost = std::numeric_limits<double>::infinity();
    for (Tiling candidate : model.tensorOptions[t]) {
      tilings[t] = candidate;
      double cost = 0;
      for (int o : ops)
        cost += opCost(o);
      if (cost < bestCost) {
        bestCost = cost;
        best = candidate;
      }
    }
    tilings[t] = best;
  }
  return withBestChoices(model, std::move(tilings));
}

//===----------------------------------------------------------------------===//
// The recursion
//===----------------------------------------------------------------------===//

/// A plan with no steps yet.
static Plan emptyPlan(const Topology &topology, const SearchOptions &options) {
  Plan plan;
  plan.algorithm = options.algorithm;
  plan.replication = options.replication;
  plan.topology = topology;
  return plan;
}

std::vector<RecursionStep>
tofu::getRecursionSteps(const Topology &topology,
                        const SearchOptions &options) {
  std::vector<RecursionStep> steps = topology.getSteps();
  if (options.algorithm == Algorithm::EqualChop && !steps.empty())
    steps = {{topology.getNumDevices(), steps.front().level}};
  return steps;
}

/// Marks a step on which nothing could be cut, and warns about the memory
/// it costs: every worker of a group holds every tensor whole.
static void noteDegenerate(const StepModel &model, size_t index, PlanStep &step,
                           Plan &plan) {
  if (!model.degenerate)
    return;
  step.degenerate = true;
  double held = 0;
  for (size_t t = 0; t < model.graph.tensors.size(); ++t)
    held += (double)getNumElements(model.state.tensorShapes[t]) *
            model.graph.tensors[t].elementBytes;
  char buf[512];
  std::snprintf(
      buf, sizeof(buf),
      "step %zu (k=%u) is degenerate: no tensor has a dimension divisible by "
      "%u, so every tensor is replicated on the %u workers of each group; it "
      "communicates %.0f bytes but leaves %.0f bytes of tensors on each "
      "device, %.0f bytes more than an even %u-way split",
      index, model.k, model.k, model.k, step.bytes, held, held - held / model.k,
      model.k);
  plan.warnings.push_back(buf);
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

std::optional<Plan> tofu::searchPlan(const Graph &graph,
                                     const Topology &topology,
                                     const SearchOptions &options,
                                     std::string &error) {
  Plan plan = emptyPlan(topology, options);
  std::vector<RecursionStep> steps = getRecursionSteps(topology, options);
  bool brute = options.algorithm == Algorithm::BruteForce;
  CoarseGraph fine = coarsen(graph, CoarsenOptions::none());
  bool useCoarse = !brute && !options.coarsen.isNone();
  std::optional<CoarseGraph> coarse;
  StrategyCache cache;
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
      step = solveStep(model, graph, options, fine, coarse, useCoarse);
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
      break;
    }
    step.level = rs.level;
    noteDegenerate(model, plan.steps.size(), step, plan);
    state = model.advance(step);
    plan.totalBytes += step.bytes;
    plan.steps.push_back(std::move(step));
  }
  if (options.algorithm == Algorithm::Tofu && options.refineSweeps)
    refinePlan(graph, plan, options);
  std::string ignored;
  evaluateProgramBytes(graph, plan, ignored);
  return plan;
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
    size_t nt = graph.tensors.size(), no = graph.ops.size();
    std::vector<unsigned> digit(nt + no, 0), radix;
    for (auto &o : model.tensorOptions)
      radix.push_back(o.size());
    for (auto &o : model.opOptions)
      radix.push_back(o.size());
    double best = std::numeric_limits<double>::infinity();
    while (true) {
      if (++visited > maxAssignments)
        return std::nullopt;
      std::vector<Tiling> tilings;
      std::vector<OpChoice> choices;
      for (size_t t = 0; t < nt; ++t)
        tilings.push_back(model.tensorOptions[t][digit[t]]);
      for (size_t o = 0; o < no; ++o)
        choices.push_back(model.opOptions[o][digit[nt + o]]);
      double here = model.cost(tilings, choices);
      auto rest = i + 1 == ks.size()
                      ? std::optional<double>(0.0)
                      : rec(model.advance(tilings, choices), i + 1);
      if (!rest)
        return std::nullopt;
      best = std::min(best, here + *rest);
      size_t p = digit.size();
      while (p-- > 0) {
        if (++digit[p] < radix[p])
          break;
        digit[p] = 0;
      }
      if (p == (size_t)-1)
        break;
    }
    return best;
  };
  return rec(StepState::initial(graph), 0);
}

std::optional<Plan>
tofu::evaluatePlan(const Graph &graph, const Topology &topology,
                   const SearchOptions &options,
                   const std::vector<std::vector<Tiling>> &tilings,
                   const std::vector<std::vector<std::string>> &strategies,
                   std::string &error, StrategyCache *sharedCache) {
  Plan plan = emptyPlan(topology, options);
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
  for (size_t i = 0; i < steps.size(); ++i) {
    StepModel model(graph, state, steps[i].k, options, cache);
    for (const std::string &r : model.remarks)
      plan.remarks.push_back(r);
    std::string at = "step " + std::to_string(i) + ": ";
    for (size_t t = 0; t < graph.tensors.size(); ++t) {
      Tiling tl = tilings[i][t];
      if (tl.kind == Tiling::Kind::Partial ||
          (tl.kind == Tiling::Kind::Cut &&
           !contains(model.tensorOptions[t], tl))) {
        error = at + "tensor " + graph.tensors[t].name + " cannot be " +
                tl.str() + " over " + std::to_string(steps[i].k) + " workers";
        return std::nullopt;
      }
      // Replicated only with replication, or when nothing divides.
      if (!contains(model.tensorOptions[t], tl)) {
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
        for (OpChoice option : model.opOptions[o]) {
          const Strategy *s = model.getStrategy(o, option);
          if (!s)
            continue;
          std::string err;
          const StrategySet *set =
              cache.get(*graph.ops[o].desc, state.opShapes[o], steps[i].k, err);
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
    noteDegenerate(model, i, step, plan);
    state = model.advance(step);
    plan.totalBytes += step.bytes;
    plan.steps.push_back(std::move(step));
  }
  return plan;
}
