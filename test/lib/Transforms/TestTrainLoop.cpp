//===- TestTrainLoop.cpp - Run a training step several times --------------===//
//
// -test-tofu-train-loop adds a `main` that calls `@F_train` (after
// tofu-autodiff and tofu-optimizer) `steps` times on fixed pseudo-random
// data, feeding the updated weights and optimizer state back in. It prints
// the loss of every step and then
//
//   TRAIN loss_decreased=1
//
// when the last loss is below the first.
//
//===----------------------------------------------------------------------===//

#include "TestInputs.h"

#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

struct TestTrainLoopPass
    : public PassWrapper<TestTrainLoopPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestTrainLoopPass)

  TestTrainLoopPass() = default;
  TestTrainLoopPass(const TestTrainLoopPass &pass) : PassWrapper(pass) {}

  StringRef getArgument() const final { return "test-tofu-train-loop"; }
  StringRef getDescription() const final {
    return "Add a main that runs @F_train for several steps and reports "
           "whether the loss decreased";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, linalg::LinalgDialect,
                    tensor::TensorDialect, vector::VectorDialect>();
  }

  Option<std::string> funcName{*this, "func",
                               llvm::cl::desc("Training-step function"),
                               llvm::cl::init("forward_train")};
  Option<unsigned> steps{*this, "steps", llvm::cl::desc("Training steps"),
                         llvm::cl::init(5)};
  Option<double> scale{*this, "scale",
                       llvm::cl::desc("Factor on the initial weight range"),
                       llvm::cl::init(1.0)};

  void runOnOperation() override;
};

} // namespace

void TestTrainLoopPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto train = module.lookupSymbol<func::FuncOp>(funcName);
  if (!train) {
    module.emitError("test-tofu-train-loop: no function @") << funcName;
    return signalPassFailure();
  }
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto main = func::FuncOp::create(b, loc, "main", b.getFunctionType({}, {}));
  b.setInsertionPointToStart(main.addEntryBlock());

  // Weights are random, data and labels random and non-negative (so that
  // soft labels make cross-entropy bounded below); optimizer state starts
  // at zero.
  SmallVector<Value> args;
  for (auto [i, type] : llvm::enumerate(train.getArgumentTypes())) {
    auto tensorType = cast<RankedTensorType>(type);
    if (train.getArgAttr(i, tofu::attrs::kStateOf)) {
      Value empty = tensor::EmptyOp::create(b, loc, tensorType.getShape(),
                                            tensorType.getElementType());
      Value zero = arith::ConstantOp::create(
          b, loc, b.getFloatAttr(tensorType.getElementType(), 0.0));
      args.push_back(
          linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
              .getResult(0));
    } else {
      bool isWeight = train.getArgAttr(i, tofu::attrs::kWeight) != nullptr;
      args.push_back(tofu::test::randomTensor(
          b, loc, tensorType, i + 1,
          isWeight ? scale * tofu::test::weightScale(tensorType) : 1.0,
          /*nonNegative=*/!isWeight));
    }
  }

  // Which argument each result feeds in the next step.
  SmallVector<int> feeds(train.getNumResults(), -1);
  llvm::SmallDenseSet<unsigned> taken;
  for (unsigned r = 0; r < train.getNumResults(); ++r) {
    if (auto w = train.getResultAttrOfType<IntegerAttr>(
            r, tofu::attrs::kUpdatedArg)) {
      feeds[r] = w.getInt();
      continue;
    }
    auto of = train.getResultAttrOfType<IntegerAttr>(r, tofu::attrs::kStateOf);
    if (!of)
      continue;
    for (unsigned a = 0; a < train.getNumArguments(); ++a) {
      auto argOf =
          train.getArgAttrOfType<IntegerAttr>(a, tofu::attrs::kStateOf);
      if (argOf && argOf.getInt() == of.getInt() && !taken.contains(a)) {
        feeds[r] = a;
        taken.insert(a);
        break;
      }
    }
  }

  Value first, last;
  for (unsigned s = 0; s < steps; ++s) {
    auto call = func::CallOp::create(b, loc, train, args);
    Value loss =
        tensor::ExtractOp::create(b, loc, call.getResult(0), ValueRange{});
    tofu::test::printValue(b, loc, "TRAIN loss=", loss);
    if (!first)
      first = loss;
    last = loss;
    for (unsigned r = 0; r < feeds.size(); ++r)
      if (feeds[r] >= 0)
        args[feeds[r]] = call.getResult(r);
  }
  Value decreased =
      arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OLT, last, first);
  tofu::test::printValue(
      b, loc, "TRAIN loss_decreased=",
      arith::ExtUIOp::create(b, loc, b.getI64Type(), decreased));
  func::ReturnOp::create(b, loc);
}

namespace tofu {
namespace test {
void registerTestTrainLoopPass() { PassRegistration<TestTrainLoopPass>(); }
} // namespace test
} // namespace tofu
