//===- PartitionSearch.cpp - The tofu-search pass -------------------------===//
//
// A thin adapter: imports each function into the MLIR-free graph, runs the
// search of lib/Partition (or reads a plan), and writes the plan back as
// attributes, a report, JSON and SVG.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Search.h"
#include "tofu/PlanIO/PlanIO.h"
#include "tofu/Transforms/GraphImport.h"
#include "tofu/Transforms/Passes.h"
#include "tofu/Transforms/ReportOutput.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUSEARCH
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

struct TofuSearchPass : public tofu::impl::TofuSearchBase<TofuSearchPass> {
  using TofuSearchBase::TofuSearchBase;

  void runOnOperation() override;

private:
  LogicalResult searchFunction(func::FuncOp func, const Topology &topology,
                               const SearchOptions &options,
                               const std::string &suffix);
  LogicalResult annotate(const ImportedGraph &imported, const Plan &plan,
                         func::FuncOp func);
  /// device-memory, parsed.
  std::optional<double> deviceBytes;
  LogicalResult writeFile(func::FuncOp func, const std::string &path,
                          const std::string &suffix,
                          llvm::function_ref<std::string()> text);
};

/// "plan.json" + ".f" -> "plan.f.json".
std::string withSuffix(const std::string &path, const std::string &suffix) {
  if (suffix.empty())
    return path;
  size_t dot = path.rfind('.');
  size_t slash = path.rfind('/');
  if (dot == std::string::npos || (slash != std::string::npos && dot < slash))
    return path + suffix;
  return path.substr(0, dot) + suffix + path.substr(dot);
}

} // namespace

void TofuSearchPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (devices.empty()) {
    mlir::emitError(module.getLoc(), "tofu-search needs the devices, e.g. "
                     "--tofu-search=\"devices=8\" or \"devices=2x4\"");
    return signalPassFailure();
  }
  std::string error;
  std::optional<Topology> topology = Topology::parse(devices, bandwidth, error);
  if (!topology) {
    mlir::emitError(module.getLoc(), "tofu-search: ") << error;
    return signalPassFailure();
  }
  SearchOptions options;
  std::optional<Algorithm> parsed = parseAlgorithm(algorithm);
  if (!parsed) {
    mlir::emitError(module.getLoc(), "tofu-search: unknown algorithm '")
        << algorithm
        << "' (expected tofu, brute-force, data-parallel, batch-parallel, "
           "allrow-greedy, spartan, equalchop or icml18)";
    return signalPassFailure();
  }
  options.algorithm = *parsed;
  options.replication = replication;
  options.batchDim = batchDim;
  options.maxTableSize = maxTable;
  if (!coarsen)
    options.coarsen = CoarsenOptions::none();
  options.refineSweeps = refine;
  options.sharedReads = sharedReads;
  if (!deviceMemory.empty()) {
    std::optional<double> bytes = parseByteSize(deviceMemory, error);
    if (!bytes) {
      mlir::emitError(module.getLoc(), "tofu-search: device-memory: ")
          << error;
      return signalPassFailure();
    }
    deviceBytes = *bytes;
  }

  SmallVector<func::FuncOp> funcs;
  for (auto func : module.getOps<func::FuncOp>())
    if (hasDescribedOps(func))
      funcs.push_back(func);
  if (funcs.empty()) {
    mlir::emitWarning(module.getLoc(), "tofu-search: no function has TDL descriptions; run "
                       "tdl-attach first");
    return;
  }
  for (func::FuncOp func : funcs) {
    std::string suffix =
        funcs.size() > 1 ? "." + func.getSymName().str() : std::string();
    if (failed(searchFunction(func, *topology, options, suffix)))
      return signalPassFailure();
  }
}

LogicalResult
TofuSearchPass::writeFile(func::FuncOp func, const std::string &path,
                          const std::string &suffix,
                          llvm::function_ref<std::string()> text) {
  if (path.empty() || path == "none")
    return success();
  return writeReport(func, "tofu-search",
                     path == "-" ? path : withSuffix(path, suffix), text());
}

LogicalResult TofuSearchPass::searchFunction(func::FuncOp func,
                                             const Topology &topology,
                                             const SearchOptions &options,
                                             const std::string &suffix) {
  FailureOr<ImportedGraph> imported = importGraph(func);
  if (failed(imported))
    return failure();
  const Graph &graph = imported->graph;
  std::string error;
  std::optional<Plan> plan;
  if (!planIn.empty()) {
    std::string path = withSuffix(planIn, suffix);
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return mlir::emitError(func.getLoc(), "tofu-search: cannot read plan '")
             << path << "': " << buffer.getError().message();
    plan = readPlanJSON(graph, (*buffer)->getBuffer().str(), error);
    if (!plan)
      return mlir::emitError(func.getLoc(), "tofu-search: invalid plan '")
             << path << "': " << error;
    if (plan->topology.levels != topology.levels)
      return mlir::emitError(func.getLoc(), "tofu-search: the plan '")
             << path << "' is for devices '" << plan->topology.str()
             << "', not '" << topology.str() << "'";
  } else {
    plan = searchPlan(graph, topology, options, error);
    if (!plan)
      return mlir::emitError(func.getLoc(), "tofu-search: ") << error;
  }
  for (const std::string &w : plan->warnings)
    mlir::emitWarning(func.getLoc(), "tofu-search: ") << w;
  if (deviceBytes)
    if (std::string w = checkDeviceMemory(graph, *plan, *deviceBytes);
        !w.empty())
      mlir::emitWarning(func.getLoc(), "tofu-search: ") << w;
  // The remarks (per recursion step: what could not be cut evenly) are
  // details of the report, which prints them once; report=none drops them.
  if (failed(annotate(*imported, *plan, func)))
    return failure();
  if (failed(writeFile(func, report, suffix,
                       [&] { return formatPlanReport(graph, *plan); })) ||
      failed(writeFile(func, planOut, suffix,
                       [&] { return writePlanJSON(graph, *plan); })) ||
      failed(writeFile(func, svg, suffix,
                       [&] { return drawPlanSVG(graph, *plan); })))
    return failure();
  return success();
}

LogicalResult TofuSearchPass::annotate(const ImportedGraph &imported,
                                       const Plan &plan, func::FuncOp func) {
  const Graph &graph = imported.graph;
  // The plan's byte count as an i64 attribute: checked, since a double out
  // of range does not convert.
  if (!(plan.totalBytes >= 0.0 && plan.totalBytes < 0x1p63))
    return mlir::emitError(func.getLoc(), "tofu-search: the plan's communication of ")
           << plan.totalBytes << " bytes is not representable as a 64-bit "
           << "integer";
  auto totalBytes = static_cast<int64_t>(plan.totalBytes);
  // -1 when the program's bytes are unknown or not representable.
  int64_t programBytes =
      plan.programBytes >= 0.0 && plan.programBytes < 0x1p63
          ? static_cast<int64_t>(plan.programBytes)
          : -1;
  Builder b(func.getContext());
  auto tilingsOf = [&](int t) {
    SmallVector<Attribute> steps;
    for (const PlanStep &s : plan.steps)
      steps.push_back(b.getStringAttr(s.tilings[t].str()));
    return b.getArrayAttr(steps);
  };
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    Value v = imported.values[t];
    if (auto arg = dyn_cast<BlockArgument>(v))
      func.setArgAttr(arg.getArgNumber(), "tofu.tiling", tilingsOf(t));
  }
  // Results of every operation, described or a source.
  llvm::DenseMap<Operation *, SmallVector<Attribute>> results;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    auto r = dyn_cast<OpResult>(imported.values[t]);
    if (!r)
      continue;
    auto &list = results[r.getOwner()];
    list.resize(r.getOwner()->getNumResults(), b.getArrayAttr({}));
    list[r.getResultNumber()] = tilingsOf(t);
  }
  for (auto &[op, list] : results)
    op->setAttr("tofu.tilings", b.getArrayAttr(list));
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    SmallVector<Attribute> steps;
    for (const PlanStep &s : plan.steps)
      steps.push_back(b.getStringAttr(s.ops[o].strategy));
    imported.ops[o]->setAttr("tofu.strategy", b.getArrayAttr(steps));
  }
  SmallVector<Attribute> ks;
  for (const PlanStep &s : plan.steps)
    ks.push_back(b.getI64IntegerAttr(s.k));
  func->setAttr(
      "tofu.plan",
      b.getDictionaryAttr(
          {b.getNamedAttr("algorithm",
                          b.getStringAttr(stringifyAlgorithm(plan.algorithm))),
           b.getNamedAttr("devices", b.getStringAttr(plan.topology.str())),
           b.getNamedAttr("steps", b.getArrayAttr(ks)),
           b.getNamedAttr("bytes", b.getI64IntegerAttr(totalBytes)),
           b.getNamedAttr("program_bytes",
                          b.getI64IntegerAttr(programBytes))}));
  return success();
}
