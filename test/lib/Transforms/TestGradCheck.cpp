//===- TestGradCheck.cpp - Finite-difference check of gradients -----------===//
//
// -test-tofu-gradcheck adds a `main` that compares the gradients returned by
// `@F_train` (tofu-autodiff with keep-forward) with central finite
// differences of `@F`, on deterministic pseudo-random signed inputs (weights
// in +-1/sqrt(fan-in), other arguments in [-1, 1), or [0, 1) for those listed
// in `nonnegative`, integers in [0, int-bound)). Every element of every
// weight with at most `max-elements` elements is checked; larger weights are
// checked at `max-elements` evenly spaced elements, the first and the last
// included. It prints
//
//   GRADCHECK checked=N
//   GRADCHECK worst_error_over_bound=R
//   GRADCHECK failures=M
//
// where an element fails if |fd - ad| > bound = rtol * max(|fd|, |ad|) + atol,
// and R is the largest |fd - ad| / bound (at most 1 when nothing fails).
//
//===----------------------------------------------------------------------===//

#include "TestInputs.h"

#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

struct TestGradCheckPass
    : public PassWrapper<TestGradCheckPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestGradCheckPass)

  TestGradCheckPass() = default;
  TestGradCheckPass(const TestGradCheckPass &pass) : PassWrapper(pass) {}

  StringRef getArgument() const final { return "test-tofu-gradcheck"; }
  StringRef getDescription() const final {
    return "Add a main that checks @F_train's gradients against finite "
           "differences of @F";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry.insert<arith::ArithDialect, math::MathDialect, scf::SCFDialect,
                    tensor::TensorDialect, vector::VectorDialect>();
  }

  Option<std::string> funcName{*this, "func",
                               llvm::cl::desc("Forward function"),
                               llvm::cl::init("forward")};
  Option<unsigned> maxElements{
      *this, "max-elements",
      llvm::cl::desc("Check every element of weights up to this size, and "
                     "this many evenly spaced elements of larger ones"),
      llvm::cl::init(64)};
  ListOption<unsigned> nonNegativeArgs{
      *this, "nonnegative",
      llvm::cl::desc("Arguments drawn from [0, 1) instead of [-1, 1) (for "
                     "example a running variance)")};
  Option<uint64_t> intBound{
      *this, "int-bound",
      llvm::cl::desc("Integer arguments (class ids, token ids) take values "
                     "in [0, int-bound); 0 rejects them"),
      llvm::cl::init(0)};
  Option<double> eps{*this, "eps", llvm::cl::desc("Finite-difference step"),
                     llvm::cl::init(1e-6)};
  Option<double> rtol{*this, "rtol", llvm::cl::desc("Relative tolerance"),
                      llvm::cl::init(1e-4)};
  Option<double> atol{*this, "atol", llvm::cl::desc("Absolute tolerance"),
                      llvm::cl::init(1e-8)};
  Option<bool> verbose{*this, "verbose", llvm::cl::desc("Print every sample"),
                       llvm::cl::init(false)};
  Option<double> corrupt{*this, "corrupt",
                         llvm::cl::desc("Scale the gradients by this factor "
                                        "(to see the check fail)"),
                         llvm::cl::init(1.0)};

  void runOnOperation() override;
};

} // namespace

void TestGradCheckPass::runOnOperation() {
  ModuleOp module = getOperation();
  auto forward = module.lookupSymbol<func::FuncOp>(funcName);
  auto train = module.lookupSymbol<func::FuncOp>(funcName + "_train");
  if (!forward || !train) {
    module.emitError("test-tofu-gradcheck: expected @")
        << funcName << " and @" << funcName << "_train";
    return signalPassFailure();
  }
  Location loc = module.getLoc();
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto main = func::FuncOp::create(b, loc, "main", b.getFunctionType({}, {}));
  b.setInsertionPointToStart(main.addEntryBlock());

  SmallVector<Value> args;
  for (auto [i, type] : llvm::enumerate(forward.getArgumentTypes())) {
    auto tensorType = dyn_cast<RankedTensorType>(type);
    bool isInt = tensorType && intBound > 0 &&
                 isa<IntegerType>(tensorType.getElementType());
    if (!tensorType || !tensorType.hasStaticShape() ||
        !(isInt || isa<FloatType>(tensorType.getElementType()))) {
      forward.emitError("test-tofu-gradcheck: argument ")
          << i << " has type " << type
          << "; expected a statically shaped tensor of floats (or of "
             "integers with int-bound)";
      return signalPassFailure();
    }
    if (isInt) {
      args.push_back(
          tofu::test::randomIntTensor(b, loc, tensorType, i + 1, intBound));
      continue;
    }
    bool isWeight = train.getArgAttr(i, tofu::attrs::kWeight) != nullptr;
    args.push_back(tofu::test::randomTensor(
        b, loc, tensorType, i + 1,
        isWeight ? tofu::test::weightScale(tensorType) : 1.0,
        /*nonNegative=*/llvm::is_contained(nonNegativeArgs, i)));
  }
  auto step = func::CallOp::create(b, loc, train, args);

  Type f = cast<RankedTensorType>(step.getResult(0).getType()).getElementType();
  auto cst = [&](double v) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(f, v)).getResult();
  };
  auto loss = [&](ArrayRef<Value> callArgs) -> Value {
    auto call = func::CallOp::create(b, loc, forward, callArgs);
    return tensor::ExtractOp::create(b, loc, call.getResult(0), ValueRange{});
  };
  Value failures = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  Value one = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(1));
  Value zero = arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
  int64_t checked = 0;
  Value maxError = cst(0.0);

  for (unsigned r = 1; r < train.getNumResults(); ++r) {
    auto w =
        train.getResultAttrOfType<IntegerAttr>(r, tofu::attrs::kGradientOfArg);
    if (!w)
      continue;
    if (w.getValue().getSignificantBits() > 64 || w.getInt() < 0 ||
        w.getInt() >= (int64_t)args.size()) {
      train.emitError("test-tofu-gradcheck: result ")
          << r << " is the gradient of argument " << w
          << ", which does not exist";
      return signalPassFailure();
    }
    unsigned a = w.getInt();
    auto type = cast<RankedTensorType>(args[a].getType());
    int64_t n = type.getNumElements();
    int64_t count = maxElements == 0 ? n : std::min<int64_t>(maxElements, n);
    if (count == 0)
      continue;
    auto index = [&](int64_t v) {
      return arith::ConstantIndexOp::create(b, loc, v).getResult();
    };
    auto loop = scf::ForOp::create(b, loc, index(0), index(count), index(1),
                                   ValueRange{failures, maxError});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value s = loop.getInductionVar();
    Value fails = loop.getRegionIterArgs()[0];
    Value worst = loop.getRegionIterArgs()[1];
    // The checked element: s itself, or s spread over the tensor so that
    // the first and the last elements are included.
    Value flat = s;
    if (count < n)
      flat = arith::DivUIOp::create(
          b, loc, arith::MulIOp::create(b, loc, s, index(n - 1)),
          index(count - 1));
    SmallVector<Value> position(type.getRank());
    Value rest = flat;
    for (int64_t d = type.getRank() - 1; d >= 0; --d) {
      Value size = index(type.getDimSize(d));
      position[d] = arith::RemUIOp::create(b, loc, rest, size);
      rest = arith::DivUIOp::create(b, loc, rest, size);
    }
    Value x = tensor::ExtractOp::create(b, loc, args[a], position);
    auto shifted = [&](double delta) {
      SmallVector<Value> callArgs(args);
      Value v = arith::AddFOp::create(b, loc, x, cst(delta));
      callArgs[a] = tensor::InsertOp::create(b, loc, v, args[a], position);
      return loss(callArgs);
    };
    Value diff = arith::SubFOp::create(b, loc, shifted(eps), shifted(-eps));
    Value fd = arith::DivFOp::create(b, loc, diff, cst(2 * eps));
    Value ad = tensor::ExtractOp::create(b, loc, step.getResult(r), position);
    ad = arith::MulFOp::create(b, loc, ad, cst(corrupt));
    Value err =
        math::AbsFOp::create(b, loc, arith::SubFOp::create(b, loc, fd, ad));
    Value scale =
        arith::MaximumFOp::create(b, loc, math::AbsFOp::create(b, loc, fd),
                                  math::AbsFOp::create(b, loc, ad));
    Value bound = arith::AddFOp::create(
        b, loc, arith::MulFOp::create(b, loc, scale, cst(rtol)), cst(atol));
    // UGT: a NaN on either side fails too.
    Value bad =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::UGT, err, bound);
    fails = arith::AddIOp::create(
        b, loc, fails, arith::SelectOp::create(b, loc, bad, one, zero));
    Value ratio = arith::DivFOp::create(b, loc, err, bound);
    worst = arith::MaximumFOp::create(b, loc, worst, ratio);
    if (verbose) {
      vector::PrintOp::create(b, loc,
                              "GRADCHECK arg " + std::to_string(a) + " element ");
      vector::PrintOp::create(
          b, loc, arith::IndexCastOp::create(b, loc, b.getI64Type(), flat),
          vector::PrintPunctuation::Comma);
      vector::PrintOp::create(b, loc, " fd/ad: ");
      vector::PrintOp::create(b, loc, fd, vector::PrintPunctuation::Comma);
      vector::PrintOp::create(b, loc, ad, vector::PrintPunctuation::NewLine);
    }
    scf::YieldOp::create(b, loc, ValueRange{fails, worst});
    failures = loop.getResult(0);
    maxError = loop.getResult(1);
    checked += count;
  }
  tofu::test::printValue(
      b, loc, "GRADCHECK checked=",
      arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(checked)));
  tofu::test::printValue(b, loc, "GRADCHECK worst_error_over_bound=", maxError);
  tofu::test::printValue(b, loc, "GRADCHECK failures=", failures);
  func::ReturnOp::create(b, loc);
}

namespace tofu {
namespace test {
void registerTestGradCheckPass() { PassRegistration<TestGradCheckPass>(); }
} // namespace test
} // namespace tofu
