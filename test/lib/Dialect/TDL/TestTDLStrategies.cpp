//===- TestTDLStrategies.cpp - Print partition-n-reduce strategies --------===//
//
// -test-tdl-strategies prints, for every operation with an attached TDL
// description, a table of its partition-n-reduce strategies for a step of
// `workers` workers and, with `details`, the region every worker reads and
// the elements fetched from each tiling an input may have.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Transforms/OpDescription.h"
#include "tofu/Partition/Strategy.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tofu;
using namespace tofu::tdl;

namespace {

std::string shapeStr(const Shape &s) {
  std::string r;
  for (size_t i = 0; i < s.size(); ++i)
    r += (i ? "x" : "") + std::to_string(s[i]);
  return r.empty() ? "scalar" : r;
}

/// A short summary of what one strategy needs of one input.
std::string summarize(const InputRequirement &req) {
  if (!req.read)
    return "unread";
  if (req.cutDim == -2)
    return "irregular";
  if (req.cutDim == -1)
    return "whole";
  std::string s = "cut(" + std::to_string(req.cutDim) + ")";
  if (req.hasHalo())
    s += "+halo " + std::to_string(req.halo[req.cutDim]);
  return s;
}

struct TestTDLStrategiesPass
    : public PassWrapper<TestTDLStrategiesPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestTDLStrategiesPass)

  TestTDLStrategiesPass() = default;
  TestTDLStrategiesPass(const TestTDLStrategiesPass &pass)
      : PassWrapper(pass) {}

  StringRef getArgument() const final { return "test-tdl-strategies"; }
  StringRef getDescription() const final {
    return "Print the partition-n-reduce strategies of every described op";
  }

  Option<unsigned> workers{*this, "workers",
                           llvm::cl::desc("Workers of the split step"),
                           llvm::cl::init(2)};
  Option<bool> details{*this, "details",
                       llvm::cl::desc("Print regions and fetch counts"),
                       llvm::cl::init(true)};

  void runOnOperation() override {
    raw_ostream &os = llvm::outs();
    bool failedAny = false;
    getOperation().walk([&](Operation *op) {
      DescAttr attr = getAttachedDesc(op);
      if (!attr)
        return;
      const OpDesc &desc = attr.getDesc();
      std::string reason;
      FailureOr<OpShapes> shapes = getOpShapes(op, reason);
      if (failed(shapes)) {
        op->emitOpError() << reason;
        failedAny = true;
        return;
      }
      std::optional<StrategySet> set =
          discoverStrategies(desc, *shapes, workers, reason);
      if (!set) {
        op->emitOpError("strategy discovery failed: ") << reason;
        failedAny = true;
        return;
      }
      print(os, op, desc, *shapes, *set);
    });
    if (failedAny)
      signalPassFailure();
  }

  void print(raw_ostream &os, Operation *op, const OpDesc &desc,
             const OpShapes &shapes, const StrategySet &set) {
    const LoopSpace &space = set.space;
    os << "op " << op->getName() << " (workers = " << workers.getValue()
       << ")\n  desc: " << desc.str() << "\n  loops:";
    for (size_t v = 0; v < space.vars.size(); ++v)
      os << " " << space.vars[v] << "=" << space.extents[v];
    os << "\n";

    // The table: one row per strategy.
    os << llvm::format("  %-8s %-7s", "cut", "case");
    for (size_t i = 0; i < desc.inputs.size(); ++i)
      os << llvm::format(" %-14s", desc.inputs[i].c_str());
    for (size_t o = 0; o < desc.outputs.size(); ++o)
      os << llvm::format(" %-10s", ("out" + std::to_string(o)).c_str());
    os << "\n";
    for (const Strategy &s : set.strategies) {
      std::string kase = s.reducesOutput ? "reduce" : "output";
      os << llvm::format("  %-8s %-7s", space.vars[s.var].c_str(),
                         kase.c_str());
      for (const InputRequirement &req : s.inputs)
        os << llvm::format(" %-14s", summarize(req).c_str());
      for (const Tiling &t : s.outputs)
        os << llvm::format(" %-10s", t.str().c_str());
      if (s.uneven)
        os << " (uneven)";
      os << "\n";
    }
    for (const Rejection &r : set.rejected)
      os << "  no strategy for " << space.vars[r.var] << ": " << r.reason
         << "\n";
    if (!details)
      return;

    // Details: regions, symbolic intervals and fetch counts.
    std::vector<std::string> symbols;
    for (const std::string &v : space.vars)
      symbols.push_back("N_" + v);
    for (const Strategy &s : set.strategies) {
      os << "  strategy " << space.vars[s.var] << ":\n";
      for (size_t i = 0; i < s.inputs.size(); ++i) {
        const InputRequirement &req = s.inputs[i];
        const Shape &shape = shapes.inputs[i];
        os << "    " << desc.inputs[i] << " " << shapeStr(shape) << ":";
        for (size_t w = 0; w < req.regions.size(); ++w) {
          os << " w" << w << " ";
          if (!req.read)
            os << "-";
          else if (shape.empty())
            os << "scalar";
          else
            os << req.regions[w].str();
        }
        if (!req.read || shape.empty()) {
          os << "\n";
          continue;
        }
        for (const auto &access : req.symbolic) {
          os << "\n      symbolic w0:";
          for (const SymbolicInterval &iv : access)
            os << " " << iv.str(symbols);
        }
        os << "\n      fetch:";
        for (size_t d = 0; d < shape.size(); ++d)
          os << " cut(" << d << ")=" << req.fetch[d];
        os << " rep=" << req.fetch[shape.size()]
           << " partial=" << req.fetch[shape.size() + 1] << "\n";
      }
    }
  }
};

} // namespace

namespace tofu {
namespace test {
void registerTestTDLStrategiesPass() {
  PassRegistration<TestTDLStrategiesPass>();
}
} // namespace test
} // namespace tofu
