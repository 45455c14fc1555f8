//===- TestShardingCrossCheck.cpp - TDL strategies vs ShardingInterface ---===//
//
// -test-tdl-sharding-crosscheck checks, for every linalg operation with an
// attached TDL description, that TDL's strategies cut every loop dimension
// that upstream's ShardingInterface exposes (with an extent of at least
// `workers`), and that parallel and reduction loops agree with Case 1 and
// Case 2. It prints one line per operation and an error on a mismatch.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Transforms/OpDescription.h"
#include "tofu/Partition/Strategy.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/Interfaces/ShardingInterface.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace tofu;
using namespace tofu::tdl;

namespace {

struct TestShardingCrossCheckPass
    : public PassWrapper<TestShardingCrossCheckPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestShardingCrossCheckPass)

  StringRef getArgument() const final { return "test-tdl-sharding-crosscheck"; }
  StringRef getDescription() const final {
    return "Check TDL strategies against upstream's ShardingInterface";
  }

  void runOnOperation() override {
    const unsigned k = 2;
    bool mismatch = false;
    getOperation().walk([&](linalg::LinalgOp op) {
      DescAttr attr = getAttachedDesc(op);
      auto sharding = dyn_cast<shard::ShardingInterface>(op.getOperation());
      if (!attr || !sharding)
        return;
      std::string reason;
      FailureOr<OpShapes> shapes = getOpShapes(op, reason);
      std::optional<StrategySet> set;
      if (succeeded(shapes))
        set = discoverStrategies(attr.getDesc(), *shapes, k, reason);
      if (!set) {
        op->emitOpError(reason);
        mismatch = true;
        return;
      }
      SmallVector<utils::IteratorType> iterators =
          sharding.getLoopIteratorTypes();
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      std::string missing;
      unsigned checked = 0;
      for (auto [d, iterator] : llvm::enumerate(iterators)) {
        if (ranges[d] < (int64_t)k)
          continue;
        ++checked;
        std::string name = "d" + std::to_string(d);
        const Strategy *found = nullptr;
        for (const Strategy &s : set->strategies)
          if (set->space.vars[s.var] == name)
            found = &s;
        bool reduction = iterator == utils::IteratorType::reduction;
        if (!found || found->reducesOutput != reduction)
          missing += " " + name + (reduction ? "(reduction)" : "(parallel)");
      }
      if (!missing.empty()) {
        op->emitOpError("TDL misses loops that ShardingInterface exposes:")
            << missing;
        mismatch = true;
        return;
      }
      llvm::outs() << "crosscheck " << op->getName() << ": " << checked
                   << " loops agree\n";
    });
    if (mismatch)
      signalPassFailure();
  }
};

} // namespace

namespace tofu {
namespace test {
void registerTestShardingCrossCheckPass() {
  PassRegistration<TestShardingCrossCheckPass>();
}
} // namespace test
} // namespace tofu
