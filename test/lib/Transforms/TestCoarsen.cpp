//===- TestCoarsen.cpp - Print the coarsened graph ------------------------===//
//
// -test-tofu-coarsen prints, for every function with TDL descriptions, the
// coarse graph that tofu-search runs its DP on: one line per node with its
// slots (tied operators or tensors, "xN" when N are tied).
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Coarsening.h"
#include "tofu/Transforms/GraphImport.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

struct TestCoarsenPass
    : public PassWrapper<TestCoarsenPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestCoarsenPass)

  TestCoarsenPass() = default;
  TestCoarsenPass(const TestCoarsenPass &pass) : PassWrapper(pass) {}

  StringRef getArgument() const final { return "test-tofu-coarsen"; }
  StringRef getDescription() const final {
    return "Print the coarsened graph of every described function";
  }

  Option<bool> groupBackward{*this, "group-backward",
                             llvm::cl::desc("Group backward with forward"),
                             llvm::cl::init(true)};
  Option<bool> mergeElementwise{*this, "merge-elementwise",
                                llvm::cl::desc("Merge element-wise chains"),
                                llvm::cl::init(true)};
  Option<bool> mergeTimeSteps{*this, "merge-time-steps",
                              llvm::cl::desc("Merge unrolled time steps"),
                              llvm::cl::init(true)};
  Option<bool> summary{*this, "summary",
                       llvm::cl::desc("Print only the summary line"),
                       llvm::cl::init(false)};

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (!tofu::hasDescribedOps(func))
        continue;
      FailureOr<tofu::ImportedGraph> imported = tofu::importGraph(func);
      if (failed(imported))
        return signalPassFailure();
      tofu::CoarsenOptions options{groupBackward, mergeElementwise,
                                   mergeTimeSteps};
      tofu::CoarseGraph coarse = tofu::coarsen(imported->graph, options);
      std::string text = coarse.str(imported->graph);
      if (summary)
        text = text.substr(0, text.find('\n') + 1);
      llvm::outs() << "function @" << func.getSymName() << ": " << text;
    }
  }
};

} // namespace

namespace tofu {
namespace test {
void registerTestCoarsenPass() { PassRegistration<TestCoarsenPass>(); }
} // namespace test
} // namespace tofu
