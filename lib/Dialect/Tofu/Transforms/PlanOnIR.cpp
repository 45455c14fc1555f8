//===- PlanOnIR.cpp - The plan that tofu-search left on the IR ------------===//

#include "tofu/Dialect/Tofu/Transforms/PlanOnIR.h"
#include "tofu/Partition/PlanImport.h"
#include "tofu/Partition/Search.h"
#include "tofu/PlanIO/PlanIO.h"
#include "tofu/Transforms/GraphImport.h"

using namespace mlir;
using namespace tofu;

static constexpr char kTiling[] = "tofu.tiling";
static constexpr char kTilings[] = "tofu.tilings";
static constexpr char kStrategy[] = "tofu.strategy";
static constexpr char kPlan[] = "tofu.plan";

FailureOr<PlanOnIR> tofu::readPlanOnIR(func::FuncOp func, bool evaluate) {
  auto plan = func->getAttrOfType<DictionaryAttr>(kPlan);
  auto devices = plan ? plan.getAs<StringAttr>("devices") : StringAttr();
  auto steps = plan ? plan.getAs<ArrayAttr>("steps") : ArrayAttr();
  if (devices && steps && steps.empty())
    return mlir::emitError(func.getLoc(), "tofu-partition: the plan is for ")
           << "devices=" << devices.getValue()
           << ": one device has nothing to partition; run the step as it is, "
              "or search with more devices";
  if (!devices || !steps)
    return mlir::emitError(func.getLoc(), "tofu-partition: the plan attribute '")
           << kPlan << "' needs 'devices' and 'steps'; run tofu-search first";
  std::string error;
  std::optional<Topology> topology = Topology::parse(devices.str(), "", error);
  if (!topology)
    return mlir::emitError(func.getLoc(), "tofu-partition: ") << error;
  SearchOptions options;
  options.replication = true;
  // The algorithm decides the recursion (EqualChop takes one step of k).
  if (auto name = plan.getAs<StringAttr>("algorithm")) {
    std::optional<Algorithm> algorithm = parseAlgorithm(name.str());
    if (!algorithm)
      return mlir::emitError(func.getLoc(), "tofu-partition: unknown algorithm '")
             << name.getValue() << "' in the plan";
    options.algorithm = *algorithm;
  }
  if (!evaluate) {
    // The steps must be the recursion of the devices under the algorithm.
    PlanOnIR out;
    for (Attribute a : steps) {
      auto k = dyn_cast<IntegerAttr>(a);
      if (!k || k.getValue().getSignificantBits() > 32 || k.getInt() < 1)
        return mlir::emitError(func.getLoc(), "tofu-partition: invalid step ")
               << a << " in the plan";
      out.steps.push_back(k.getInt());
    }
    std::vector<int64_t> expected;
    for (const RecursionStep &s : getRecursionSteps(*topology, options))
      expected.push_back(s.k);
    if (out.steps != expected)
      return mlir::emitError(func.getLoc(), "tofu-partition: the plan's steps do not match "
                            "devices '")
             << devices.getValue() << "'";
    return out;
  }
  FailureOr<ImportedGraph> imported = importGraph(func);
  if (failed(imported))
    return failure();
  const Graph &graph = imported->graph;
  size_t n = steps.size();
  std::vector<std::vector<Tiling>> tilings(
      n, std::vector<Tiling>(graph.tensors.size(), Tiling::replicate()));
  std::vector<std::vector<std::string>> strategies(
      n, std::vector<std::string>(graph.ops.size(), "replicated"));
  auto readTilings = [&](ArrayAttr list, size_t t) -> LogicalResult {
    if (!list || list.size() != n)
      return mlir::emitError(func.getLoc(), "tofu-partition: tensor ")
             << graph.tensors[t].name << " has no tiling for each of the " << n
             << " steps";
    for (size_t i = 0; i < n; ++i) {
      auto s = dyn_cast<StringAttr>(list[i]);
      std::optional<Tiling> tl = s ? parseTiling(s.str()) : std::nullopt;
      if (!tl)
        return mlir::emitError(func.getLoc(), "tofu-partition: invalid tiling ") << list[i];
      tilings[i][t] = *tl;
    }
    return success();
  };
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    Value v = imported->values[t];
    ArrayAttr list;
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      list = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), kTiling);
    } else {
      auto r = cast<OpResult>(v);
      auto all = r.getOwner()->getAttrOfType<ArrayAttr>(kTilings);
      if (all && r.getResultNumber() < all.size())
        list = dyn_cast<ArrayAttr>(all[r.getResultNumber()]);
    }
    if (failed(readTilings(list, t)))
      return failure();
  }
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    auto list = imported->ops[o]->getAttrOfType<ArrayAttr>(kStrategy);
    if (!list || list.size() != n)
      return imported->ops[o]->emitError(
          "tofu-partition: the operation has no strategy for each step");
    for (size_t i = 0; i < n; ++i) {
      auto s = dyn_cast<StringAttr>(list[i]);
      if (!s)
        return imported->ops[o]->emitError("tofu-partition: invalid "
                                           "strategy ")
               << list[i];
      strategies[i][o] = s.str();
    }
  }
  std::optional<Plan> evaluated =
      evaluatePlan(graph, *topology, options, tilings, strategies, error);
  if (!evaluated)
    return mlir::emitError(func.getLoc(), "tofu-partition: the plan is not feasible: ")
           << error;
  PlanOnIR out;
  out.totalBytes = evaluated->totalBytes;
  for (const PlanStep &s : evaluated->steps) {
    out.steps.push_back(s.k);
    for (size_t o = 0; o < graph.ops.size(); ++o) {
      const OpNode &node = graph.ops[o];
      for (size_t j = 0; j < node.inputs.size(); ++j)
        if (node.inputs[j] >= 0)
          out.bytesPerTensor[graph.tensors[node.inputs[j]].name] +=
              s.ops[o].inputBytes[j];
      for (size_t j = 0; j < node.outputs.size(); ++j)
        if (node.outputs[j] >= 0)
          out.bytesPerTensor[graph.tensors[node.outputs[j]].name] +=
              s.ops[o].outputBytes[j];
    }
  }
  if (!evaluateProgramBytes(graph, *evaluated, error))
    return mlir::emitError(func.getLoc(), "tofu-partition: ") << error;
  out.programBytes = evaluated->programBytes;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    out.names[imported->values[t]] = graph.tensors[t].name;
    if (evaluated->programTensorBytes[t] != 0)
      out.programBytesPerTensor[graph.tensors[t].name] =
          evaluated->programTensorBytes[t];
  }
  return out;
}
