//===- Baselines.cpp - The baseline algorithms of one step ----------------===//

#include "tofu/Partition/Baselines.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>

using namespace tofu;

static PlanStep withBestChoices(const StepModel &model,
                                std::vector<Tiling> tilings) {
  std::vector<OpChoice> choices;
  for (size_t o = 0; o < model.graph.ops.size(); ++o)
    choices.push_back(model.bestChoice(o, tilings));
  return model.evaluate(std::move(tilings), std::move(choices));
}

PlanStep tofu::dataParallelStep(const StepModel &model) {
  std::vector<Tiling> tilings;
  for (size_t t = 0; t < model.graph.tensors.size(); ++t) {
    bool cut0 = llvm::is_contained(model.tensorOptions[t], Tiling::cut(0));
    tilings.push_back(!model.graph.isModelState(t) && cut0
                          ? Tiling::cut(0)
                          : Tiling::replicate());
  }
  return withBestChoices(model, std::move(tilings));
}

PlanStep tofu::batchParallelStep(const StepModel &model, unsigned batchDim) {
  const Graph &graph = model.graph;
  size_t n = graph.tensors.size();
  std::vector<Tiling> tilings(n, Tiling::replicate());
  // Outputs of operators that read nothing cut (fills, empties): their
  // readers decide.
  std::vector<bool> open(n, false);
  // The choices of the operators that read a cut tensor.
  std::vector<std::optional<OpChoice>> decided(graph.ops.size());
  auto allowed = [&](int t, Tiling tiling) {
    return llvm::is_contained(model.tensorOptions[t], tiling);
  };
  for (size_t t = 0; t < n; ++t)
    if (graph.tensors[t].role == TensorRole::Input &&
        allowed(t, Tiling::cut(batchDim)))
      tilings[t] = Tiling::cut(batchDim);
  // The tiling of `t` that costs least for operand `j` of `op` under `c`.
  auto cheapestFor = [&](int op, unsigned j, OpChoice c, int t) {
    Tiling best = tilings[t];
    double bestCost = std::numeric_limits<double>::infinity();
    for (Tiling tiling : model.tensorOptions[t])
      if (double cost = model.inputCost(op, j, c, tiling); cost < bestCost) {
        bestCost = cost;
        best = tiling;
      }
    return best;
  };
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &node = graph.ops[o];
    bool readsCut = llvm::any_of(node.inputs, [&](int t) {
      return t >= 0 && !open[t] && tilings[t].kind == Tiling::Kind::Cut;
    });
    if (!readsCut) {
      for (int t : node.outputs)
        if (t >= 0 && !graph.isModelState(t) &&
            model.tensorOptions[t].size() > 1)
          open[t] = true;
      continue;
    }
    double bestCost = std::numeric_limits<double>::infinity();
    std::vector<Tiling> bestOutputs(node.outputs.size(), Tiling::replicate());
    OpChoice bestChoice = model.opOptions[o].front();
    // An operator that reads a cut tensor splits its work: replicated
    // work is free in the cost model but not on the devices.
    for (OpChoice c : model.opOptions[o]) {
      const Strategy *strategy = model.getStrategy(o, c);
      if (!strategy && model.opOptions[o].size() > 1)
        continue;
      double cost = 0;
      for (unsigned j = 0; j < node.inputs.size(); ++j)
        if (int t = node.inputs[j]; t >= 0 && !open[t])
          cost += model.inputCost(o, j, c, tilings[t]);
      std::vector<Tiling> outputs;
      for (unsigned j = 0; j < node.outputs.size(); ++j) {
        int t = node.outputs[j];
        Tiling produced = strategy ? strategy->outputs[j] : Tiling::replicate();
        bool keep = t >= 0 && produced.kind == Tiling::Kind::Cut &&
                    !graph.isModelState(t) && allowed(t, produced);
        outputs.push_back(keep ? produced : Tiling::replicate());
        if (t >= 0)
          cost += model.outputCost(o, j, c, outputs.back());
      }
      if (cost < bestCost) {
        bestCost = cost;
        bestOutputs = std::move(outputs);
        bestChoice = c;
      }
    }
    for (unsigned j = 0; j < node.inputs.size(); ++j)
      if (int t = node.inputs[j]; t >= 0 && open[t]) {
        tilings[t] = cheapestFor(o, j, bestChoice, t);
        open[t] = false;
      }
    for (unsigned j = 0; j < node.outputs.size(); ++j)
      if (node.outputs[j] >= 0)
        tilings[node.outputs[j]] = bestOutputs[j];
    decided[o] = bestChoice;
  }
  // Open tensors that only open operators read (an empty under its fill)
  // take, from the last back, the tiling their readers' outputs need.
  for (size_t t = n; t-- > 0;) {
    if (!open[t])
      continue;
    double bestCost = std::numeric_limits<double>::infinity();
    for (Tiling tiling : model.tensorOptions[t]) {
      double cost = 0;
      for (auto [user, input] : graph.users[t]) {
        const OpNode &node = graph.ops[user];
        double least = std::numeric_limits<double>::infinity();
        for (OpChoice c : model.opOptions[user]) {
          double total = model.inputCost(user, input, c, tiling);
          for (unsigned j = 0; j < node.outputs.size(); ++j)
            if (node.outputs[j] >= 0)
              total += model.outputCost(user, j, c, tilings[node.outputs[j]]);
          least = std::min(least, total);
        }
        cost += least;
      }
      if (cost < bestCost) {
        bestCost = cost;
        tilings[t] = tiling;
      }
    }
  }
  std::vector<OpChoice> choices;
  for (size_t o = 0; o < graph.ops.size(); ++o)
    choices.push_back(decided[o] ? *decided[o] : model.bestChoice(o, tilings));
  return model.evaluate(std::move(tilings), std::move(choices));
}

PlanStep tofu::allRowStep(const StepModel &model) {
  std::vector<Tiling> tilings;
  for (size_t t = 0; t < model.graph.tensors.size(); ++t)
    tilings.push_back(model.tensorOptions[t].front());
  return withBestChoices(model, std::move(tilings));
}

PlanStep tofu::spartanStep(const StepModel &model) {
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
