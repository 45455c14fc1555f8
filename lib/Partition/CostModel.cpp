//===- CostModel.cpp - The cost model of one search step ------------------===//

#include "tofu/Partition/CostModel.h"

#include <algorithm>
#include <cstdio>
#include <limits>

using namespace tofu;

//===----------------------------------------------------------------------===//
// Names
//===----------------------------------------------------------------------===//

static const std::pair<Algorithm, const char *> kAlgorithmNames[] = {
    {Algorithm::Tofu, "tofu"},
    {Algorithm::BruteForce, "brute-force"},
    {Algorithm::DataParallel, "data-parallel"},
    {Algorithm::BatchParallel, "batch-parallel"},
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

const StrategySet *StrategyCache::get(const tdl::OpDesc &desc,
                                      const OpShapes &shapes, unsigned k,
                                      std::string &error) {
  // The raw bytes of the description's address, k and the shapes.
  std::string key;
  auto add = [&](int64_t value) {
    key.append(reinterpret_cast<const char *>(&value), sizeof(value));
  };
  add(reinterpret_cast<intptr_t>(&desc));
  add(k);
  for (const std::vector<Shape> *list : {&shapes.inputs, &shapes.outputs}) {
    add(list->size());
    for (const Shape &s : *list) {
      add(s.size());
      for (int64_t d : s)
        add(d);
    }
  }
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
  bool allowReplicated = options.algorithm == Algorithm::DataParallel ||
                         options.algorithm == Algorithm::BatchParallel;
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
      // Scalar work (a loss, an optimizer's step-size factors) has nothing
      // to split and is not worth a remark.
      const std::vector<Shape> &outputs = state.opShapes[o].outputs;
      replicatedOps += std::any_of(outputs.begin(), outputs.end(),
                                   [](const Shape &s) { return !s.empty(); });
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

bool StepModel::readsWhole(int op, unsigned j, OpChoice choice) const {
  int t = graph.ops[op].inputs[j];
  const Shape &operand = state.opShapes[op].inputs[j];
  if (t < 0 || operand != state.tensorShapes[t])
    return false;
  const Strategy *s = getStrategy(op, choice);
  if (!s)
    return reads[op][j];
  const InputRequirement &req = s->inputs[j];
  return req.read && req.cutDim == -1 &&
         req.regions == getTileBoxes(operand, Tiling::replicate(), k);
}

double StepModel::replicateCost(int t, Tiling tiling) const {
  const Shape &shape = state.tensorShapes[t];
  return toBytes(graph, state, t, shape,
                 getConversionCost(shape, tiling, Tiling::replicate(), k));
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
// Plans
//===----------------------------------------------------------------------===//

Plan::Plan(const Topology &topology, const SearchOptions &options)
    : algorithm(options.algorithm), replication(options.replication),
      topology(topology) {}

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

StepState Plan::addStep(const StepModel &model, PlanStep step) {
  noteDegenerate(model, steps.size(), step, *this);
  StepState next = model.advance(step);
  totalBytes += step.bytes;
  steps.push_back(std::move(step));
  return next;
}
