//===- Optimizer.cpp - Weight updates of training steps -------------------===//
//
// The tofu-optimizer pass: replaces the gradients returned by a training
// step with the SGD, momentum or Adam update of the weights, as element-wise
// linalg.generic operations, so that the step is a complete iteration.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "tofu/Transforms/TrainingAttributes.h"
#include "tofu/Transforms/TrainingSignature.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Format.h"

#include <cmath>

namespace tofu {
#define GEN_PASS_DEF_TOFUOPTIMIZER
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// The scalar update rule: given the element values of its operands, yields
/// the element of the result.
using ScalarRule = function_ref<Value(OpBuilder &, Location, ValueRange)>;

/// Emits the element-wise update ops of one training step.
class UpdateBuilder {
public:
  UpdateBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  /// An element-wise generic over `type`; 0-d operands broadcast.
  Value map(RankedTensorType type, ValueRange inputs, ScalarRule rule,
            int64_t weightArg) {
    unsigned rank = type.getRank();
    SmallVector<AffineMap> maps;
    for (Value in : inputs)
      maps.push_back(cast<RankedTensorType>(in.getType()).getRank() == 0
                         ? AffineMap::get(rank, 0, b.getContext())
                         : b.getMultiDimIdentityMap(rank));
    maps.push_back(b.getMultiDimIdentityMap(rank));
    SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
    Value init =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    auto op = linalg::GenericOp::create(
        b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iters,
        [&](OpBuilder &nb, Location l, ValueRange args) {
          linalg::YieldOp::create(nb, l, rule(nb, l, args));
        });
    op->setAttr(attrs::kUpdateOf, b.getI64IntegerAttr(weightArg));
    return op.getResult(0);
  }

  OpBuilder &b;
  Location loc;
};

/// `v` as printf's %g writes it (-0.1, nan, 1).
std::string formatNumber(double v) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%g", v);
  return text;
}

Value constant(OpBuilder &b, Location loc, Type type, double v) {
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, v));
}

struct TofuOptimizerPass
    : public tofu::impl::TofuOptimizerBase<TofuOptimizerPass> {
  using TofuOptimizerBase::TofuOptimizerBase;

  LogicalResult rewrite(func::FuncOp func);

  void runOnOperation() override {
    if (kind != "sgd" && kind != "momentum" && kind != "adam") {
      mlir::emitError(getOperation().getLoc(), "tofu-optimizer: unknown kind '")
          << kind << "' (expected sgd, momentum or adam)";
      return signalPassFailure();
    }
    for (auto [name, value] : {std::pair{"lr", double(learningRate)},
                               std::pair{"eps", double(epsilon)}})
      if (!(value > 0) || !std::isfinite(value)) {
        mlir::emitError(getOperation().getLoc(), "tofu-optimizer: ")
            << name << " must be positive and finite, not "
            << formatNumber(value);
        return signalPassFailure();
      }
    for (auto [name, value] : {std::pair{"momentum", double(momentum)},
                               std::pair{"beta1", double(beta1)},
                               std::pair{"beta2", double(beta2)}})
      if (!(value >= 0 && value < 1)) {
        mlir::emitError(getOperation().getLoc(), "tofu-optimizer: ")
            << name << " must be in [0, 1), not " << formatNumber(value);
        return signalPassFailure();
      }
    bool found = false, updated = false;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      bool isStep = false;
      for (unsigned i = 0; i < func.getNumResults(); ++i) {
        isStep |= bool(func.getResultAttr(i, attrs::kGradientOfArg));
        updated |= bool(func.getResultAttr(i, attrs::kUpdatedArg));
      }
      if (!isStep)
        continue;
      found = true;
      if (failed(rewrite(func)))
        return signalPassFailure();
    }
    if (!found && updated) {
      mlir::emitError(getOperation().getLoc(),
                      "tofu-optimizer: the step already has an optimizer (its "
                      "results update its weights); run tofu-optimizer once");
      signalPassFailure();
    } else if (!found) {
      mlir::emitError(getOperation().getLoc(),
                      "tofu-optimizer: no training step found (run "
                      "tofu-autodiff first)");
      signalPassFailure();
    }
  }
};

} // namespace

/// Checks what the rewrite reads back from the IR: one block ending in
/// func.return, and `tofu.grad_of_arg` results that name distinct tensor
/// arguments of the gradient's type.
static LogicalResult verifyStep(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return mlir::emitError(func.getLoc(), "tofu-optimizer: functions with more than one block "
                          "(control flow) are not supported");
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (!ret)
    return mlir::emitError(func.getLoc(), "tofu-optimizer: expected the function to end with "
                          "'func.return'");
  llvm::SmallDenseSet<int64_t> seen;
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    Attribute attr = func.getResultAttr(i, attrs::kGradientOfArg);
    if (!attr)
      continue;
    auto fail = [&]() {
      return mlir::emitError(func.getLoc(), "tofu-optimizer: result ")
             << i << " has an invalid '" << attrs::kGradientOfArg << "': ";
    };
    std::optional<int64_t> w = attrs::getInt64(attr);
    if (!w)
      return fail() << "expected an integer, found " << attr;
    if (*w < 0 || *w >= (int64_t)func.getNumArguments())
      return fail() << "argument " << *w << " is out of range (the function "
                    << "has " << func.getNumArguments() << " arguments)";
    if (!seen.insert(*w).second)
      return fail() << "argument " << *w << " already has a gradient";
    Type weightType = func.getArgument(*w).getType();
    auto tensor = dyn_cast<RankedTensorType>(weightType);
    if (!tensor || !tensor.hasStaticShape() ||
        !isa<FloatType>(tensor.getElementType()))
      return fail() << "argument " << *w << " has type " << weightType
                    << ", not a statically shaped tensor of floats";
    if (ret.getOperand(i).getType() != weightType)
      return fail() << "the gradient has type " << ret.getOperand(i).getType()
                    << " but argument " << *w << " has type " << weightType;
  }
  return success();
}

LogicalResult TofuOptimizerPass::rewrite(func::FuncOp func) {
  if (failed(verifyStep(func)))
    return failure();
  Block &body = func.getBody().front();
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  double lr = learningRate, mu = momentum, b1 = beta1, b2 = beta2,
         eps = epsilon;

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  SmallVector<Value> stateResults;
  SmallVector<int64_t> stateResultOf;
  // The Adam step count, a 0-d tensor shared by all weights, and its bias
  // corrections 1 - beta1^t and 1 - beta2^t, 0-d too, so that a step
  // computes them once and not in every weight's update loop.
  Value step, nextStep, correction1, correction2;
  // Each state is named after its weight and PyTorch's name of the slot
  // (torch.optim's state_dict keys), so that checkpoints name it.
  auto addState = [&](Type type, int64_t weight, StringRef slot) {
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, type, {}, loc);
    func.setArgAttr(index, attrs::kStateOf, b.getI64IntegerAttr(weight));
    std::string name = weight < 0 ? "optimizer" : tofu::getFileTensorName(func, weight);
    func.setArgAttr(index, attrs::kName, b.getStringAttr(name + "." + slot));
    return func.getArgument(index);
  };

  // With lr-arg, the learning rate: a 0-d argument of the weights' element
  // type, appended first, that every update reads.
  Value lrArgument;
  auto getLearningRate = [&](Type element) -> Value {
    if (!lrArg || lrArgument)
      return lrArgument;
    unsigned index = func.getNumArguments();
    (void)func.insertArgument(index, RankedTensorType::get({}, element), {},
                              loc);
    func.setArgAttr(index, attrs::kName, b.getStringAttr("optimizer.lr"));
    func.setArgAttr(index, attrs::kHyperparameter, b.getF64FloatAttr(lr));
    lrArgument = func.getArgument(index);
    return lrArgument;
  };

  for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
    Value value = ret.getOperand(i);
    std::optional<int64_t> gradOf =
        attrs::getInt64(func.getResultAttr(i, attrs::kGradientOfArg));
    if (!gradOf) {
      results.push_back(value);
      resultAttrs.push_back(func.getResultAttrDict(i));
      continue;
    }
    int64_t w = *gradOf;
    Value weight = func.getArgument(w);
    auto type = cast<RankedTensorType>(weight.getType());
    Type et = type.getElementType();
    UpdateBuilder u(b, loc);
    Value lrValue = getLearningRate(et);
    if (lrValue && lrValue.getType() != RankedTensorType::get({}, et))
      return mlir::emitError(func.getLoc(), "tofu-optimizer: lr-arg needs "
                                            "weights of one element type");
    // The learning rate in a body: the operand `at`, or the constant.
    auto rate = [&, lr](OpBuilder &nb, Location l, ValueRange a,
                        unsigned at) -> Value {
      return lrValue ? a[at] : constant(nb, l, et, lr);
    };
    auto withRate = [&](SmallVector<Value> inputs) {
      if (lrValue)
        inputs.push_back(lrValue);
      return inputs;
    };
    // w - lr * d, for the gradient or the velocity d.
    auto descend = [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
      Value step = arith::MulFOp::create(nb, l, rate(nb, l, a, 2), a[1]);
      return arith::SubFOp::create(nb, l, a[0], step);
    };
    Value updated;
    if (kind == "sgd") {
      updated = u.map(type, withRate({weight, value}), descend, w);
    } else if (kind == "momentum") {
      Value velocity = addState(type, w, "momentum_buffer");
      Value next = u.map(
          type, {velocity, value},
          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
            Value m =
                arith::MulFOp::create(nb, l, constant(nb, l, et, mu), a[0]);
            return arith::AddFOp::create(nb, l, m, a[1]);
          },
          w);
      updated = u.map(type, withRate({weight, next}), descend, w);
      stateResults.push_back(next);
      stateResultOf.push_back(w);
    } else {
      if (!step) {
        auto scalar = RankedTensorType::get({}, et);
        step = addState(scalar, -1, "step");
        nextStep = u.map(
            scalar, {step},
            [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
              return arith::AddFOp::create(nb, l, a[0],
                                           constant(nb, l, et, 1.0));
            },
            -1);
        auto correction = [&](double beta) {
          return u.map(
              scalar, {nextStep},
              [&, beta](OpBuilder &nb, Location l, ValueRange a) -> Value {
                Value p = math::PowFOp::create(nb, l, constant(nb, l, et, beta),
                                               a[0]);
                return arith::SubFOp::create(nb, l, constant(nb, l, et, 1.0),
                                             p);
              },
              -1);
        };
        correction1 = correction(b1);
        correction2 = correction(b2);
      }
      Value m = addState(type, w, "exp_avg"),
            v = addState(type, w, "exp_avg_sq");
      auto ema = [&](double beta, bool square) {
        return [=](OpBuilder &nb, Location l, ValueRange a) -> Value {
          Value g = square ? arith::MulFOp::create(nb, l, a[1], a[1]) : a[1];
          Value old =
              arith::MulFOp::create(nb, l, constant(nb, l, et, beta), a[0]);
          Value add =
              arith::MulFOp::create(nb, l, constant(nb, l, et, 1.0 - beta), g);
          return arith::AddFOp::create(nb, l, old, add);
        };
      };
      Value mNext = u.map(type, {m, value}, ema(b1, false), w);
      Value vNext = u.map(type, {v, value}, ema(b2, true), w);
      updated = u.map(
          type, withRate({weight, mNext, vNext, correction1, correction2}),
          [&](OpBuilder &nb, Location l, ValueRange a) -> Value {
            Value mHat = arith::DivFOp::create(nb, l, a[1], a[3]);
            Value vHat = arith::DivFOp::create(nb, l, a[2], a[4]);
            Value denom =
                arith::AddFOp::create(nb, l, math::SqrtOp::create(nb, l, vHat),
                                      constant(nb, l, et, eps));
            Value delta = arith::MulFOp::create(
                nb, l, rate(nb, l, a, 5),
                arith::DivFOp::create(nb, l, mHat, denom));
            return arith::SubFOp::create(nb, l, a[0], delta);
          },
          w);
      stateResults.append({mNext, vNext});
      stateResultOf.append({w, w});
    }
    results.push_back(updated);
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(attrs::kUpdatedArg, b.getI64IntegerAttr(w))));
  }
  if (nextStep) {
    stateResults.push_back(nextStep);
    stateResultOf.push_back(-1);
  }
  for (auto [value, w] : llvm::zip(stateResults, stateResultOf)) {
    results.push_back(value);
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(attrs::kStateOf, b.getI64IntegerAttr(w))));
  }
  func::ReturnOp::create(b, loc, results);
  ret.erase();
  SmallVector<Type> types;
  for (Value v : results)
    types.push_back(v.getType());
  func.setFunctionType(
      FunctionType::get(func.getContext(), func.getArgumentTypes(), types));
  func.setAllResultAttrs(resultAttrs);
  return success();
}
