//===- Baselines.cpp - The baseline algorithms of one step ----------------===//

#include "tofu/Partition/Baselines.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <limits>
#include <numeric>

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
