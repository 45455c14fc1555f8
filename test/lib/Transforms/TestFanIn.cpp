//===- TestFanIn.cpp - Print the fan-in of every weight -------------------===//
//
// -test-tofu-fan-in emits, for every `tofu.weight` argument of every
// function, a remark with the fan-in that tofu-train-driver's initial
// values use (getFanIn), or that there is none.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/TrainingAttributes.h"
#include "tofu/Transforms/TrainingSignature.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

struct TestFanInPass
    : public PassWrapper<TestFanInPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestFanInPass)

  StringRef getArgument() const final { return "test-tofu-fan-in"; }
  StringRef getDescription() const final {
    return "Emit the fan-in of every weight argument as a remark";
  }

  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      for (unsigned i = 0; i < func.getNumArguments(); ++i) {
        if (!func.getArgAttr(i, tofu::attrs::kWeight))
          continue;
        std::optional<int64_t> fanIn = tofu::getFanIn(func, i);
        InFlightDiagnostic remark = mlir::emitRemark(func.getArgument(i).getLoc());
        remark << "argument " << i << ": ";
        if (fanIn)
          remark << "fan-in " << *fanIn;
        else
          remark << "no fan-in";
      }
  }
};

} // namespace

namespace tofu {
namespace test {
void registerTestFanInPass() { PassRegistration<TestFanInPass>(); }
} // namespace test
} // namespace tofu
