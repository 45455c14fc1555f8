//===- Loss.cpp - Append a loss to a forward model ------------------------===//
//
// The tofu-loss pass: turns a function that returns logits or predictions
// into one that returns a 0-d loss, as linalg.generic operations that
// tdl-attach describes and tofu-autodiff differentiates. Labels or targets
// become a new trailing argument, marked as data so that weights=all leaves
// it out; cross-entropy takes class probabilities or integer class ids.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "tofu/Transforms/ArgumentSelection.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace tofu {
#define GEN_PASS_DEF_TOFULOSS
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// Emits the operations of one loss before the function's return.
class LossBuilder {
public:
  LossBuilder(OpBuilder &b, Location loc, RankedTensorType type)
      : b(b), loc(loc), type(type), elementType(type.getElementType()),
        rank(type.getRank()) {}

  Value constant(OpBuilder &nb, double v) {
    return arith::ConstantOp::create(nb, loc, nb.getFloatAttr(elementType, v));
  }

  /// A tensor of `shape` filled with `value`.
  Value filled(ArrayRef<int64_t> shape, double value) {
    Value empty = tensor::EmptyOp::create(b, loc, shape, elementType);
    return linalg::FillOp::create(b, loc, ValueRange{constant(b, value)},
                                  ValueRange{empty})
        .getResult(0);
  }

  /// A generic over the loops of `outMap` (those of `type` unless said
  /// otherwise) reading `inputs` through `maps` into an output indexed by
  /// `outMap` and initialised to `init`; loops that `outMap` does not use
  /// are reductions.
  Value reduce(ValueRange inputs, ArrayRef<AffineMap> maps, AffineMap outMap,
               Value init,
               function_ref<Value(OpBuilder &, ValueRange, Value)> body) {
    SmallVector<utils::IteratorType> iters(outMap.getNumDims(),
                                           utils::IteratorType::reduction);
    for (AffineExpr e : outMap.getResults())
      iters[cast<AffineDimExpr>(e).getPosition()] =
          utils::IteratorType::parallel;
    SmallVector<AffineMap> all(maps);
    all.push_back(outMap);
    return linalg::GenericOp::create(
               b, loc, TypeRange{init.getType()}, inputs, ValueRange{init}, all,
               iters,
               [&](OpBuilder &nb, Location l, ValueRange args) {
                 linalg::YieldOp::create(
                     nb, l, body(nb, args.drop_back(), args.back()));
               })
        .getResult(0);
  }

  AffineMap identity() { return b.getMultiDimIdentityMap(rank); }
  AffineMap scalar() { return AffineMap::get(rank, 0, b.getContext()); }
  /// sum(x)
  Value sum(Value x) {
    return reduce({x}, {identity()}, scalar(), filled({}, 0.0),
                  [&](OpBuilder &nb, ValueRange in, Value acc) -> Value {
                    return arith::AddFOp::create(nb, loc, acc, in[0]);
                  });
  }

  /// mean((p - t)^2) over every element.
  Value meanSquaredError(Value p, Value t) {
    double scale = 1.0 / double(type.getNumElements());
    return reduce({p, t}, {identity(), identity()}, scalar(), filled({}, 0.0),
                  [&](OpBuilder &nb, ValueRange in, Value acc) -> Value {
                    Value d = arith::SubFOp::create(nb, loc, in[0], in[1]);
                    Value sq = arith::MulFOp::create(nb, loc, d, d);
                    Value term =
                        arith::MulFOp::create(nb, loc, sq, constant(nb, scale));
                    return arith::AddFOp::create(nb, loc, acc, term);
                  });
  }

  /// -mean over rows of sum_c t[.., c] log_softmax(x)[.., c], with the row
  /// maximum subtracted before exp for stability. `t` holds class
  /// probabilities of x's type, or, if `classIds`, one integer class per row
  /// (the rows' shape): t[.., c] is then 1 where c is the row's class and 0
  /// elsewhere, so an id outside [0, classes) selects no class.
  Value softmaxCrossEntropy(Value x, Value t, bool classIds) {
    ArrayRef<int64_t> shape = type.getShape();
    SmallVector<int64_t> rowShape(shape.drop_back());
    int64_t numRows = 1;
    for (int64_t d : rowShape)
      numRows *= d;
    AffineMap rowMap = AffineMap::getMultiDimIdentityMap(rank, b.getContext())
                           .dropResult(rank - 1);
    auto lowest = APFloat::getInf(
        cast<FloatType>(elementType).getFloatSemantics(), /*Negative=*/true);
    Value empty = tensor::EmptyOp::create(b, loc, rowShape, elementType);
    Value lowestValue =
        arith::ConstantOp::create(b, loc, b.getFloatAttr(elementType, lowest));
    Value maxInit =
        linalg::FillOp::create(b, loc, ValueRange{lowestValue},
                               ValueRange{empty})
            .getResult(0);
    Value rowMax =
        reduce({x}, {identity()}, rowMap, maxInit,
               [&](OpBuilder &nb, ValueRange in, Value acc) -> Value {
                 return arith::MaximumFOp::create(nb, loc, in[0], acc);
               });
    Value sumExp =
        reduce({x, rowMax}, {identity(), rowMap}, rowMap,
               filled(rowShape, 0.0),
               [&](OpBuilder &nb, ValueRange in, Value acc) -> Value {
                 Value shifted = arith::SubFOp::create(nb, loc, in[0], in[1]);
                 Value e = math::ExpOp::create(nb, loc, shifted);
                 return arith::AddFOp::create(nb, loc, e, acc);
               });
    double scale = -1.0 / double(numRows);
    if (!classIds)
      return reduce(
          {x, rowMax, sumExp, t}, {identity(), rowMap, rowMap, identity()},
          scalar(), filled({}, 0.0),
          [&](OpBuilder &nb, ValueRange in, Value acc) -> Value {
            Value logSum = math::LogOp::create(nb, loc, in[2]);
            Value lse = arith::AddFOp::create(nb, loc, in[1], logSum);
            Value logProb = arith::SubFOp::create(nb, loc, in[0], lse);
            Value term = arith::MulFOp::create(nb, loc, in[3], logProb);
            Value scaled =
                arith::MulFOp::create(nb, loc, term, constant(nb, scale));
            return arith::AddFOp::create(nb, loc, acc, scaled);
          });
    // Class ids: -mean_rows (x[.., id] - lse), one-hot on the fly: the class
    // loop's index against the row's id picks one term per row, and an id
    // outside [0, classes) picks none.
    return reduce(
        {x, rowMax, sumExp, t}, {identity(), rowMap, rowMap, rowMap},
        scalar(), filled({}, 0.0),
        [&](OpBuilder &nb, ValueRange in, Value acc) -> Value {
          Value logSum = math::LogOp::create(nb, loc, in[2]);
          Value lse = arith::AddFOp::create(nb, loc, in[1], logSum);
          Value logProb = arith::SubFOp::create(nb, loc, in[0], lse);
          Value id =
              arith::IndexCastOp::create(nb, loc, nb.getIndexType(), in[3]);
          Value c = linalg::IndexOp::create(nb, loc, rank - 1);
          Value hit =
              arith::CmpIOp::create(nb, loc, arith::CmpIPredicate::eq, id, c);
          Value term = arith::SelectOp::create(nb, loc, hit, logProb,
                                               constant(nb, 0.0));
          Value scaled =
              arith::MulFOp::create(nb, loc, term, constant(nb, scale));
          return arith::AddFOp::create(nb, loc, acc, scaled);
        });
  }

  OpBuilder &b;
  Location loc;
  RankedTensorType type;
  Type elementType;
  int64_t rank;
};

struct TofuLossPass : public tofu::impl::TofuLossBase<TofuLossPass> {
  using TofuLossBase::TofuLossBase;

  LogicalResult rewrite(func::FuncOp func);

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (kind != "softmax-cross-entropy" && kind != "mse" && kind != "sum") {
      mlir::emitError(module.getLoc(), "tofu-loss: unknown kind '")
          << kind << "' (expected softmax-cross-entropy, mse or sum)";
      return signalPassFailure();
    }
    if (labels != "probabilities" && labels != "i64" && labels != "i32") {
      mlir::emitError(module.getLoc(), "tofu-loss: unknown labels '")
          << labels << "' (expected probabilities, i64 or i32)";
      return signalPassFailure();
    }
    if (labels != "probabilities" && kind != "softmax-cross-entropy") {
      mlir::emitError(module.getLoc(), "tofu-loss: labels=")
          << labels << " needs kind=softmax-cross-entropy, not kind=" << kind;
      return signalPassFailure();
    }
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && (funcName.empty() ? func.isPublic()
                                                  : func.getName() == funcName))
        funcs.push_back(func);
    if (funcs.empty()) {
      if (funcName.empty())
        mlir::emitError(module.getLoc(),
                        "tofu-loss: no public function with a body");
      else
        mlir::emitError(module.getLoc(), "tofu-loss: no function named '")
            << funcName << "'";
      return signalPassFailure();
    }
    for (func::FuncOp func : funcs)
      if (failed(rewrite(func)))
        return signalPassFailure();
  }
};

} // namespace

LogicalResult TofuLossPass::rewrite(func::FuncOp func) {
  if (!func.getBody().hasOneBlock())
    return emitFunctionError(func, "tofu-loss: '@")
           << func.getName()
           << "' has more than one block (control flow is not supported)";
  auto ret = dyn_cast<func::ReturnOp>(func.getBody().front().getTerminator());
  if (!ret)
    return emitFunctionError(func, "tofu-loss: '@")
           << func.getName() << "' does not end with 'func.return'";
  unsigned numResults = ret.getNumOperands();
  if (resultIndex >= 0 && resultIndex >= (int64_t)numResults)
    return mlir::emitError(ret.getLoc(), "tofu-loss: result=")
           << static_cast<int64_t>(resultIndex) << " is out of range: '@"
           << func.getName()
           << "' returns " << numResults << " results";
  if (resultIndex < 0 && numResults != 1) {
    InFlightDiagnostic diag = mlir::emitError(ret.getLoc(), "tofu-loss: "
                                                            "expected '@")
                              << func.getName() << "' to return one tensor of "
                              << (kind == "mse" ? "predictions" : "logits")
                              << ", found " << numResults << " results";
    if (numResults > 1)
      diag << "; pass result=<index> to put the loss on one of them";
    return diag;
  }
  unsigned chosen = resultIndex < 0 ? 0 : resultIndex;
  Value out = ret.getOperand(chosen);
  // The chosen result's attributes, which stay on the loss.
  DictionaryAttr outAttrs = func.getResultAttrDict(chosen);
  auto type = dyn_cast<RankedTensorType>(out.getType());
  if (!type || !isa<FloatType>(type.getElementType()))
    return mlir::emitError(ret.getLoc(), "tofu-loss: expected a tensor of "
                                         "floats, found ")
           << out.getType();
  if (!type.hasStaticShape())
    return mlir::emitError(ret.getLoc(), "tofu-loss: dynamic shapes are not "
                                         "supported, found ")
           << out.getType()
           << "; export the model with static shapes (a fixed batch)";
  if (type.getRank() == 0)
    return mlir::emitError(ret.getLoc(), "tofu-loss: '@")
           << func.getName()
           << "' already returns a 0-d tensor; leave out tofu-loss if it is "
              "the loss";
  if (type.getNumElements() == 0)
    return mlir::emitError(ret.getLoc(), "tofu-loss: the result ")
           << out.getType() << " has no elements";

  OpBuilder b(ret);
  Location loc = ret.getLoc();
  LossBuilder loss(b, loc, type);
  Value value;
  if (kind == "sum") {
    value = loss.sum(out);
  } else {
    // Labels (class probabilities, e.g. one-hot) or targets: a new data
    // argument of the same type, after the others. Class ids: one integer
    // per row.
    StringRef name = kind == "mse" ? "targets" : "labels";
    bool classIds = labels != "probabilities";
    Type argType = type;
    if (classIds)
      argType = RankedTensorType::get(
          type.getShape().drop_back(),
          b.getIntegerType(labels == "i64" ? 64 : 32));
    unsigned index = func.getNumArguments();
    Location argLoc = NameLoc::get(b.getStringAttr(name), func.getLoc());
    if (failed(func.insertArgument(index, argType, {}, argLoc)))
      return emitFunctionError(func, "tofu-loss: cannot add an argument to '@")
             << func.getName() << "'";
    func.setArgAttr(index, attrs::kInput, b.getUnitAttr());
    func.setArgAttr(index, attrs::kName, b.getStringAttr(name));
    Value target = func.getArgument(index);
    value = kind == "mse" ? loss.meanSquaredError(out, target)
                          : loss.softmaxCrossEntropy(out, target, classIds);
  }
  ret->setOperands(value);
  func.setFunctionType(FunctionType::get(
      func.getContext(), func.getArgumentTypes(), {value.getType()}));
  func.setAllResultAttrs(
      ArrayRef<DictionaryAttr>{outAttrs ? outAttrs
                                        : b.getDictionaryAttr({})});
  return success();
}
