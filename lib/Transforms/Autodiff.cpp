//===- Autodiff.cpp - Reverse-mode automatic differentiation --------------===//
//
// The tofu-autodiff pass: turns a function returning a scalar loss into a
// training step returning the loss and the gradients of its weights, and
// records which forward operation every backward operation belongs to.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "tofu/Transforms/ArgumentSelection.h"
#include "tofu/Transforms/ScalarDerivative.h"
#include "tofu/Transforms/ShiftInvariance.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallBitVector.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUAUTODIFF
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// The error for an operation on the weight -> loss path without a rule.
static InFlightDiagnostic cannotDifferentiate(Operation *op) {
  return op->emitError("tofu-autodiff: cannot differentiate '")
         << op->getName() << "'";
}

/// Tags every operation inserted at the top level of the function with the
/// forward operation being differentiated.
class BackwardTagger : public OpBuilder::Listener {
public:
  explicit BackwardTagger(Block *body) : body(body) {}
  void notifyOperationInserted(Operation *op, OpBuilder::InsertPoint) override {
    if (op->getBlock() == body && forwardId >= 0)
      op->setAttr(
          attrs::kBackwardOf,
          IntegerAttr::get(IntegerType::get(op->getContext(), 64), forwardId));
  }
  Block *body;
  int64_t forwardId = -1;
};

/// Differentiates one function in place.
class Differentiator {
public:
  Differentiator(func::FuncOp func, ArrayRef<unsigned> weights,
                 bool cancelShifts)
      : func(func), weights(weights.begin(), weights.end()),
        cancelShifts(cancelShifts), tagger(&func.getBody().front()),
        b(func.getContext(), &tagger) {}

  LogicalResult run();

private:
  // Bookkeeping.
  int64_t idOf(Operation *op) const {
    auto attr = op->getAttrOfType<IntegerAttr>(attrs::kOpId);
    return attr ? attr.getInt() : -1;
  }
  bool isActive(Value v) const { return active.contains(v); }
  /// The active values that `op` reads: its operands and the values its
  /// regions capture from above.
  SetVector<Value> activeReads(Operation *op) const;
  void addAdjoint(Value v, Value contribution);
  /// Records that the derivative with respect to `v` of the operation being
  /// differentiated is zero by construction (the value is overwritten or not
  /// read by what reaches the loss).
  void markZero(Value v) { covered.insert(v); }
  Value zeros(Location loc, RankedTensorType type);
  Value
  elementwise(Location loc, RankedTensorType type, ValueRange inputs,
              function_ref<Value(OpBuilder &, Location, ValueRange)> body);

  // Rules.
  LogicalResult differentiate(Operation *op);
  LogicalResult differentiateLinalg(linalg::LinalgOp op);
  LogicalResult differentiateGeneric(linalg::GenericOp g, Operation *fwd);
  Value buildInputGradient(linalg::GenericOp g, Operation *fwd,
                           Combiner combiner, Value root, unsigned operand,
                           bool initAsInput, bool &failed);
  Value pruneInputs(linalg::GenericOp g, unsigned numForwardInputs);
  LogicalResult differentiateGathers(linalg::GenericOp g, Operation *fwd,
                                     Combiner combiner, Value root,
                                     bool initAsInput);
  Value buildGatherGradient(linalg::GenericOp g, Operation *fwd, Value root,
                            tensor::ExtractOp extract, bool initAsInput,
                            bool &failed);
  FailureOr<linalg::GenericOp> explicitCaptures(linalg::GenericOp g,
                                                Operation *fwd);

  func::FuncOp func;
  llvm::SmallDenseSet<unsigned> weights;
  /// Hold constant the row maxima that a normalisation cancels
  /// (findCancelledShifts): their gradient is zero.
  bool cancelShifts;
  BackwardTagger tagger;
  OpBuilder b;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> adjoint;
  /// The active values read by the operation being differentiated that have
  /// received a contribution or are known to have a zero one.
  llvm::DenseSet<Value> covered;
};

} // namespace

Value Differentiator::elementwise(
    Location loc, RankedTensorType type, ValueRange inputs,
    function_ref<Value(OpBuilder &, Location, ValueRange)> body) {
  unsigned rank = type.getRank();
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<utils::IteratorType> iters(rank, utils::IteratorType::parallel);
  Value init =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  return linalg::GenericOp::create(
             b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iters,
             [&](OpBuilder &nb, Location l, ValueRange args) {
               linalg::YieldOp::create(nb, l, body(nb, l, args));
             })
      .getResult(0);
}

Value Differentiator::zeros(Location loc, RankedTensorType type) {
  Value empty =
      tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
  Value zero = arith::ConstantOp::create(
      b, loc, b.getFloatAttr(type.getElementType(), 0.0));
  return linalg::FillOp::create(b, loc, ValueRange{zero}, ValueRange{empty})
      .getResult(0);
}

/// The `array<i64: opId, resultNumber>` naming a forward tensor.
static DenseI64ArrayAttr forwardTensorAttr(MLIRContext *ctx, Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return DenseI64ArrayAttr::get(ctx, {-1, arg.getArgNumber()});
  auto result = cast<OpResult>(v);
  auto id = result.getOwner()->getAttrOfType<IntegerAttr>(attrs::kOpId);
  return DenseI64ArrayAttr::get(
      ctx, {id ? id.getInt() : -1, result.getResultNumber()});
}

void Differentiator::addAdjoint(Value v, Value contribution) {
  MLIRContext *ctx = func.getContext();
  if (Operation *def = contribution.getDefiningOp();
      def && def->getBlock() == &func.getBody().front() &&
      !def->hasAttr(attrs::kOpId) && !def->hasAttr(attrs::kGradientOf))
    def->setAttr(attrs::kGradientOf, forwardTensorAttr(ctx, v));
  covered.insert(v);
  auto [it, inserted] = adjoint.try_emplace(v, contribution);
  if (inserted)
    return;
  if (!isa<RankedTensorType>(v.getType())) {
    // A scalar used more than once.
    auto sum = arith::AddFOp::create(b, v.getLoc(), it->second, contribution);
    sum->setAttr(attrs::kGradientAccumulation, UnitAttr::get(ctx));
    it->second = sum;
    return;
  }
  // A value used more than once: sum the contributions element-wise.
  Value total =
      elementwise(v.getLoc(), cast<RankedTensorType>(v.getType()),
                  {it->second, contribution},
                  [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                    return arith::AddFOp::create(nb, l, args[0], args[1]);
                  });
  Operation *sum = total.getDefiningOp();
  sum->setAttr(attrs::kGradientAccumulation, UnitAttr::get(ctx));
  sum->setAttr(attrs::kGradientOf, forwardTensorAttr(ctx, v));
  // The accumulation belongs to the producer of the tensor.
  if (Operation *producer = v.getDefiningOp())
    sum->setAttr(attrs::kBackwardOf, producer->getAttr(attrs::kOpId));
  else
    sum->removeAttr(attrs::kBackwardOf);
  it->second = total;
}

//===----------------------------------------------------------------------===//
// linalg
//===----------------------------------------------------------------------===//

/// True if the concatenation of `maps` gives every loop a size.
static bool isInvertible(ArrayRef<AffineMap> maps, MLIRContext *ctx) {
  return bool(inversePermutation(concatAffineMaps(maps, ctx)));
}

/// Erases the operations of `block` whose results are unused and that have
/// no side effects: the forward values a derivative did not need.
static void eraseDeadOps(Block *block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block->without_terminator())
    ops.push_back(&op);
  for (Operation *op : llvm::reverse(ops))
    if (op->use_empty() && isMemoryEffectFree(op))
      op->erase();
}

Value Differentiator::pruneInputs(linalg::GenericOp g,
                                  unsigned numForwardInputs) {
  eraseDeadOps(g.getBody());
  // Drop forward inputs the derivative does not read, as long as every loop
  // keeps a size.
  SmallVector<AffineMap> maps = g.getIndexingMapsArray();
  SmallVector<bool> keep(g.getNumDpsInputs(), true);
  for (unsigned i = 0; i < numForwardInputs; ++i) {
    if (!g.getBody()->getArgument(i).use_empty())
      continue;
    keep[i] = false;
    SmallVector<AffineMap> kept;
    for (unsigned j = 0; j < maps.size(); ++j)
      if (j >= keep.size() || keep[j])
        kept.push_back(maps[j]);
    if (!isInvertible(kept, g.getContext()))
      keep[i] = true;
  }
  if (llvm::all_of(keep, [](bool k) { return k; }))
    return g.getResult(0);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> newMaps;
  for (unsigned i = 0; i < keep.size(); ++i)
    if (keep[i]) {
      inputs.push_back(g.getDpsInputOperand(i)->get());
      newMaps.push_back(maps[i]);
    }
  newMaps.push_back(maps.back());
  auto pruned = linalg::GenericOp::create(b, g.getLoc(), g.getResultTypes(),
                                          inputs, g.getDpsInits(), newMaps,
                                          g.getIteratorTypesArray());
  pruned->setDiscardableAttrs(g->getDiscardableAttrDictionary());
  pruned.getRegion().takeBody(g.getRegion());
  for (int i = keep.size() - 1; i >= 0; --i)
    if (!keep[i])
      pruned.getBody()->eraseArgument(i);
  g.erase();
  return pruned.getResult(0);
}

Value Differentiator::buildInputGradient(linalg::GenericOp g, Operation *fwd,
                                         Combiner combiner, Value root,
                                         unsigned operand, bool initAsInput,
                                         bool &failed) {
  Location loc = fwd->getLoc();
  OpOperand *initOperand = g.getDpsInitOperand(0);
  OpOperand &wrtOperand = g->getOpOperand(operand);
  AffineMap wrtMap = g.getMatchingIndexingMap(&wrtOperand);
  AffineMap outMap = g.getMatchingIndexingMap(initOperand);
  Block *body = g.getBody();
  Value wrtArg = body->getArgument(operand);
  unsigned numInputs = g.getNumDpsInputs();

  SmallVector<Value> inputs(g.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *in : g.getDpsInputOperands())
    maps.push_back(g.getMatchingIndexingMap(in));
  inputs.push_back(adjoint.lookup(fwd->getResult(0)));
  maps.push_back(outMap);
  if (combiner == Combiner::Max || combiner == Combiner::Min) {
    inputs.push_back(fwd->getResult(0));
    maps.push_back(outMap);
  }
  if (initAsInput) {
    inputs.push_back(initOperand->get());
    maps.push_back(outMap);
  }
  maps.push_back(wrtMap);

  // A loop is parallel if the gradient's map uses it, a reduction otherwise.
  SmallVector<utils::IteratorType> iters(g.getNumLoops(),
                                         utils::IteratorType::reduction);
  for (AffineExpr expr : wrtMap.getResults())
    expr.walk([&](AffineExpr e) {
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        iters[dim.getPosition()] = utils::IteratorType::parallel;
    });

  // A scalar operand's gradient is reduced over every loop into a 0-d tensor.
  Type wrtType = wrtOperand.get().getType();
  auto type = dyn_cast<RankedTensorType>(wrtType);
  if (!type)
    type = RankedTensorType::get({}, wrtType);
  Value init = zeros(loc, type);
  auto grad = linalg::GenericOp::create(
      b, loc, TypeRange{type}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        IRMapping mapping;
        for (unsigned i = 0; i < numInputs; ++i)
          mapping.map(body->getArgument(i), args[i]);
        unsigned next = numInputs;
        Value dy = args[next++];
        Value y = (combiner == Combiner::Max || combiner == Combiner::Min)
                      ? args[next++]
                      : Value();
        if (initAsInput)
          mapping.map(body->getArgument(numInputs), args[next++]);
        Value acc = args.back();
        FailureOr<Value> d =
            emitScalarDerivative(nb, l, root, wrtArg, mapping, fwd);
        Value contribution;
        if (mlir::failed(d)) {
          failed = true;
        } else if (*d) {
          contribution = arith::MulFOp::create(nb, l, *d, dy);
        }
        if (contribution && y) {
          Value e = mapping.lookupOrDefault(root);
          Value hit =
              arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, e, y);
          Value zero = arith::ConstantOp::create(
              nb, l, nb.getFloatAttr(acc.getType(), 0.0));
          contribution =
              arith::SelectOp::create(nb, l, hit, contribution, zero);
        }
        Value result = contribution
                           ? arith::AddFOp::create(nb, l, acc, contribution)
                           : acc;
        linalg::YieldOp::create(nb, l, result);
      });
  return pruneInputs(grad, numInputs);
}

LogicalResult Differentiator::differentiateGeneric(linalg::GenericOp g,
                                                   Operation *fwd) {
  // differentiateLinalg admits one tensor result, hence one init.
  bool hasReduction = g.getNumReductionLoops() > 0;
  Value acc = g.getMatchingBlockArgument(g.getDpsInitOperand(0));
  Value yielded = g.getBody()->getTerminator()->getOperand(0);
  Value root = yielded;
  Combiner combiner = Combiner::None;
  if (hasReduction) {
    combiner = matchCombiner(g, root);
    if (combiner == Combiner::None)
      return cannotDifferentiate(fwd)
             << ": its reduction is not 'acc + f', 'max(acc, f)' or "
                "'min(acc, f)'";
  }
  bool initUsed = !hasReduction && dependsOn(root, acc);

  bool failed = false;
  for (OpOperand *in : g.getDpsInputOperands()) {
    Value v = in->get();
    if (!isActive(v))
      continue;
    BlockArgument arg = g.getMatchingBlockArgument(in);
    if (!dependsOn(root, arg)) {
      markZero(v);
      continue;
    }
    Value grad = buildInputGradient(g, fwd, combiner, root,
                                    in->getOperandNumber(), initUsed, failed);
    if (failed)
      return failure();
    if (!isa<RankedTensorType>(v.getType()))
      grad = tensor::ExtractOp::create(b, fwd->getLoc(), grad, ValueRange{});
    addAdjoint(v, grad);
  }

  if (mlir::failed(differentiateGathers(g, fwd, combiner, root, initUsed)))
    return failure();

  // The gradient of the initial value of the output.
  Value init = g.getDpsInitOperand(0)->get();
  if (!isActive(init))
    return success();
  if (combiner == Combiner::None && !initUsed) {
    markZero(init); // Overwritten.
    return success();
  }
  Value dy = adjoint.lookup(fwd->getResult(0));
  if (combiner == Combiner::Add) {
    addAdjoint(init, dy);
  } else if (combiner != Combiner::None) {
    // max/min: the initial value wins where it equals the result.
    auto type = cast<RankedTensorType>(init.getType());
    Value y = fwd->getResult(0);
    addAdjoint(
        init,
        elementwise(fwd->getLoc(), type, {init, y, dy},
                    [](OpBuilder &nb, Location l, ValueRange args) -> Value {
                      Value hit = arith::CmpFOp::create(
                          nb, l, arith::CmpFPredicate::OEQ, args[0], args[1]);
                      Value zero = arith::ConstantOp::create(
                          nb, l, nb.getFloatAttr(args[2].getType(), 0.0));
                      return arith::SelectOp::create(nb, l, hit, args[2], zero);
                    }));
  } else if (initUsed) {
    Value grad = buildInputGradient(g, fwd, combiner, root, g.getNumDpsInputs(),
                                    initUsed, failed);
    if (failed)
      return failure();
    addAdjoint(init, grad);
  }
  return success();
}

/// Clones into `b` the operations of `block` that `v` depends on and that
/// `mapping` does not map yet, in block order, and returns v's image.
static Value cloneDependencies(OpBuilder &b, Block *block, Value v,
                               IRMapping &mapping) {
  llvm::DenseSet<Value> needed{v};
  SmallVector<Operation *> slice;
  for (Operation &op : llvm::reverse(block->without_terminator())) {
    if (llvm::none_of(op.getResults(), [&](Value r) {
          return needed.contains(r) && !mapping.contains(r);
        }))
      continue;
    slice.push_back(&op);
    for (Value operand : op.getOperands())
      needed.insert(operand);
  }
  for (Operation *op : llvm::reverse(slice))
    b.clone(*op, mapping);
  return mapping.lookupOrDefault(v);
}

/// The loop `d` if `index` is `linalg.index d` of `g`, possibly through index
/// casts.
static std::optional<unsigned> getLoopOfIndex(Value index,
                                              linalg::GenericOp g) {
  for (;;) {
    Operation *def = index.getDefiningOp();
    if (!def || !g->isProperAncestor(def))
      return std::nullopt;
    if (auto loop = dyn_cast<linalg::IndexOp>(def))
      return loop.getDim();
    if (!isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
      return std::nullopt;
    index = def->getOperand(0);
  }
}

Value Differentiator::buildGatherGradient(linalg::GenericOp g, Operation *fwd,
                                          Value root,
                                          tensor::ExtractOp extract,
                                          bool initAsInput, bool &failed) {
  // d table[t] = sum over the forward loops of [index(p) == t] * droot/dx * dy
  // over the forward loops plus one loop per table dimension whose index is
  // not simply a forward loop (the rows of an embedding): a reduction into
  // the whole table gradient, which TDL describes affinely.
  Location loc = fwd->getLoc();
  Block *body = g.getBody();
  unsigned numLoops = g.getNumLoops(), numInputs = g.getNumDpsInputs();
  MLIRContext *ctx = g.getContext();
  auto tableType = cast<RankedTensorType>(extract.getTensor().getType());
  SmallVector<AffineExpr> tableExprs;
  SmallVector<std::pair<unsigned, Value>> matched; // (new loop, index)
  SmallVector<utils::IteratorType> iters(numLoops,
                                         utils::IteratorType::reduction);
  llvm::SmallBitVector used(numLoops);
  unsigned next = numLoops;
  for (Value index : extract.getIndices()) {
    std::optional<unsigned> loop = getLoopOfIndex(index, g);
    if (loop && !used.test(*loop)) {
      used.set(*loop);
      iters[*loop] = utils::IteratorType::parallel;
      tableExprs.push_back(getAffineDimExpr(*loop, ctx));
      continue;
    }
    matched.push_back({next, index});
    tableExprs.push_back(getAffineDimExpr(next++, ctx));
    iters.push_back(utils::IteratorType::parallel);
  }
  auto widen = [&](AffineMap m) {
    return AffineMap::get(next, 0, m.getResults(), ctx);
  };
  OpOperand *initOperand = g.getDpsInitOperand(0);
  AffineMap outMap = g.getMatchingIndexingMap(initOperand);
  SmallVector<Value> inputs(g.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *in : g.getDpsInputOperands())
    maps.push_back(widen(g.getMatchingIndexingMap(in)));
  inputs.push_back(adjoint.lookup(fwd->getResult(0)));
  maps.push_back(widen(outMap));
  if (initAsInput) {
    inputs.push_back(initOperand->get());
    maps.push_back(widen(outMap));
  }
  maps.push_back(AffineMap::get(next, 0, tableExprs, ctx));

  Value init = zeros(loc, tableType);
  auto grad = linalg::GenericOp::create(
      b, loc, TypeRange{tableType}, inputs, ValueRange{init}, maps, iters,
      [&](OpBuilder &nb, Location l, ValueRange args) {
        IRMapping mapping;
        for (unsigned i = 0; i < numInputs; ++i)
          mapping.map(body->getArgument(i), args[i]);
        Value dy = args[numInputs];
        if (initAsInput)
          mapping.map(body->getArgument(numInputs), args[numInputs + 1]);
        Value acc = args.back();
        FailureOr<Value> d = emitScalarDerivative(
            nb, l, root, extract.getResult(), mapping, fwd);
        if (mlir::failed(d) || !*d) {
          failed = mlir::failed(d);
          linalg::YieldOp::create(nb, l, acc);
          return;
        }
        Value contribution = arith::MulFOp::create(nb, l, *d, dy);
        Value hit;
        for (auto [loop, index] : matched) {
          Value position = linalg::IndexOp::create(nb, l, loop);
          Value value = cloneDependencies(nb, body, index, mapping);
          Value eq = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::eq,
                                           value, position);
          hit = hit ? arith::AndIOp::create(nb, l, hit, eq).getResult() : eq;
        }
        if (hit) {
          Value zero = arith::ConstantOp::create(
              nb, l, nb.getFloatAttr(acc.getType(), 0.0));
          contribution =
              arith::SelectOp::create(nb, l, hit, contribution, zero);
        }
        linalg::YieldOp::create(nb, l,
                                arith::AddFOp::create(nb, l, acc, contribution)
                                    .getResult());
      });
  return pruneInputs(grad, numInputs);
}

LogicalResult Differentiator::differentiateGathers(linalg::GenericOp g,
                                                   Operation *fwd,
                                                   Combiner combiner,
                                                   Value root,
                                                   bool initAsInput) {
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(g.getRegion(), captured);
  for (Value table : captured) {
    if (!isActive(table) || !isa<RankedTensorType>(table.getType()))
      continue;
    SmallVector<tensor::ExtractOp> reads;
    bool other = false;
    for (OpOperand &use : table.getUses()) {
      if (!g->isProperAncestor(use.getOwner()))
        continue;
      auto extract = dyn_cast<tensor::ExtractOp>(use.getOwner());
      if (!extract || extract->getBlock() != g.getBody())
        other = true;
      else if (dependsOn(root, extract.getResult()))
        reads.push_back(extract);
    }
    if (other)
      return cannotDifferentiate(fwd)
             << ": its body reads the active tensor " << table.getType()
             << " other than with tensor.extract in its body";
    if (reads.empty()) {
      markZero(table);
      continue;
    }
    if (combiner == Combiner::Max || combiner == Combiner::Min)
      return cannotDifferentiate(fwd)
             << ": a gather under a max or min reduction";
    for (tensor::ExtractOp extract : reads) {
      bool failed = false;
      Value grad =
          buildGatherGradient(g, fwd, root, extract, initAsInput, failed);
      if (failed)
        return failure();
      addAdjoint(table, grad);
    }
  }
  return success();
}

FailureOr<linalg::GenericOp>
Differentiator::explicitCaptures(linalg::GenericOp g, Operation *fwd) {
  SetVector<Value> captured;
  getUsedValuesDefinedAbove(g.getRegion(), captured);
  SmallVector<Value> scalars;
  for (Value v : captured) {
    // Active tensors read with tensor.extract are gathers (see
    // differentiateGathers).
    if (!isActive(v) || isa<RankedTensorType>(v.getType()))
      continue;
    if (!isa<FloatType>(v.getType()))
      return cannotDifferentiate(fwd)
             << ": its body reads the active value of type " << v.getType()
             << " that it does not take as an input";
    scalars.push_back(v);
  }
  if (scalars.empty())
    return g;
  // The same operation with every active captured scalar as an input that
  // no loop indexes.
  SmallVector<Value> inputs(g.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *in : g.getDpsInputOperands())
    maps.push_back(g.getMatchingIndexingMap(in));
  for (Value v : scalars) {
    inputs.push_back(v);
    maps.push_back(AffineMap::get(g.getNumLoops(), 0, g.getContext()));
  }
  for (OpOperand &out : g.getDpsInitsMutable())
    maps.push_back(g.getMatchingIndexingMap(&out));
  auto explicitOp = linalg::GenericOp::create(
      b, g.getLoc(), g.getResultTypes(), inputs, g.getDpsInits(), maps,
      g.getIteratorTypesArray());
  IRMapping mapping;
  g.getRegion().cloneInto(&explicitOp.getRegion(), mapping);
  Region &region = explicitOp.getRegion();
  unsigned position = g.getNumDpsInputs();
  for (auto [i, v] : llvm::enumerate(scalars)) {
    BlockArgument arg =
        explicitOp.getBody()->insertArgument(position + i, v.getType(), v.getLoc());
    v.replaceUsesWithIf(arg, [&](OpOperand &use) {
      return region.isAncestor(use.getOwner()->getParentRegion());
    });
  }
  return explicitOp;
}

LogicalResult Differentiator::differentiateLinalg(linalg::LinalgOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1)
    return cannotDifferentiate(op)
           << ": expected one tensor result, found " << op->getNumResults();
  // Derive the adjoint from the generic form of a clone, in which captured
  // scalars are inputs.
  IRRewriter rewriter(b);
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic) {
    Operation *clone = rewriter.clone(*op.getOperation());
    FailureOr<linalg::GenericOp> generalized =
        linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(clone));
    if (failed(generalized)) {
      clone->erase();
      return cannotDifferentiate(op) << ": it has no generic form";
    }
    generic = *generalized;
  }
  FailureOr<linalg::GenericOp> explicitOp = explicitCaptures(generic, op);
  if (generic != op.getOperation() &&
      (failed(explicitOp) || *explicitOp != generic))
    rewriter.eraseOp(generic);
  if (failed(explicitOp))
    return failure();
  LogicalResult result = differentiateGeneric(*explicitOp, op);
  if (*explicitOp != op.getOperation())
    rewriter.eraseOp(*explicitOp);
  return result;
}

//===----------------------------------------------------------------------===//
// Tensor data movement and the driver
//===----------------------------------------------------------------------===//

LogicalResult Differentiator::differentiate(Operation *op) {
  Location loc = op->getLoc();
  Value dy =
      op->getNumResults() == 1 ? adjoint.lookup(op->getResult(0)) : Value();
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op))
    return differentiateLinalg(linalgOp);
  if (auto extract = dyn_cast<tensor::ExtractOp>(op)) {
    Value init = zeros(loc, extract.getTensor().getType());
    addAdjoint(extract.getTensor(),
               tensor::InsertOp::create(b, loc, dy, init, extract.getIndices()));
    return success();
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    auto srcType = pad.getSourceType();
    SmallVector<OpFoldResult> sizes,
        strides(srcType.getRank(), b.getIndexAttr(1));
    for (int64_t d : srcType.getShape())
      sizes.push_back(b.getIndexAttr(d));
    addAdjoint(pad.getSource(),
               tensor::ExtractSliceOp::create(
                   b, loc, srcType, dy, pad.getMixedLowPad(), sizes, strides));
    return success();
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    Value init = zeros(loc, slice.getSourceType());
    addAdjoint(slice.getSource(),
               tensor::InsertSliceOp::create(
                   b, loc, dy, init, slice.getMixedOffsets(),
                   slice.getMixedSizes(), slice.getMixedStrides()));
    return success();
  }
  if (auto insert = dyn_cast<tensor::InsertSliceOp>(op)) {
    if (isActive(insert.getSource()))
      addAdjoint(insert.getSource(),
                 tensor::ExtractSliceOp::create(b, loc, insert.getSourceType(),
                                                dy, insert.getMixedOffsets(),
                                                insert.getMixedSizes(),
                                                insert.getMixedStrides()));
    if (isActive(insert.getDest())) {
      Value hole = zeros(loc, insert.getSourceType());
      addAdjoint(insert.getDest(),
                 tensor::InsertSliceOp::create(
                     b, loc, hole, dy, insert.getMixedOffsets(),
                     insert.getMixedSizes(), insert.getMixedStrides()));
    }
    return success();
  }
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op)) {
    addAdjoint(expand.getSrc(), tensor::CollapseShapeOp::create(
                                    b, loc, expand.getSrcType(), dy,
                                    expand.getReassociationIndices()));
    return success();
  }
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    if (!collapse.getSrcType().hasStaticShape())
      return cannotDifferentiate(op) << " with a dynamic shape";
    addAdjoint(collapse.getSrc(), tensor::ExpandShapeOp::create(
                                      b, loc, collapse.getSrcType(), dy,
                                      collapse.getReassociationIndices()));
    return success();
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    int64_t dim = concat.getDim(), offset = 0;
    for (Value input : concat.getInputs()) {
      auto type = cast<RankedTensorType>(input.getType());
      if (isActive(input)) {
        SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0)),
            sizes, strides(type.getRank(), b.getIndexAttr(1));
        offsets[dim] = b.getIndexAttr(offset);
        for (int64_t d : type.getShape())
          sizes.push_back(b.getIndexAttr(d));
        addAdjoint(input, tensor::ExtractSliceOp::create(
                              b, loc, type, dy, offsets, sizes, strides));
      }
      offset += type.getDimSize(dim);
    }
    return success();
  }
  return cannotDifferentiate(op);
}

SetVector<Value> Differentiator::activeReads(Operation *op) const {
  SetVector<Value> reads;
  for (Value v : op->getOperands())
    if (isActive(v))
      reads.insert(v);
  for (Region &region : op->getRegions()) {
    SetVector<Value> captured;
    getUsedValuesDefinedAbove(region, captured);
    for (Value v : captured)
      if (isActive(v))
        reads.insert(v);
  }
  return reads;
}

/// Fails unless an active value has a type the pass differentiates: a float
/// or a statically shaped tensor of floats.
static LogicalResult checkActiveType(Value v, Operation *where) {
  Type type = v.getType();
  if (isa<FloatType>(type))
    return success();
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (!tensor.hasStaticShape())
      return where->emitError("tofu-autodiff: dynamic shapes are not "
                              "supported, found ")
             << type << "; export the model with static shapes (a fixed "
                        "batch)";
    if (isa<FloatType>(tensor.getElementType()))
      return success();
  }
  return where->emitError("tofu-autodiff: cannot differentiate a value of "
                          "type ")
         << type << " (expected a float or a statically shaped tensor of "
         << "floats)";
}

LogicalResult Differentiator::run() {
  if (!func.getBody().hasOneBlock())
    return emitFunctionError(func, "tofu-autodiff: functions with more than "
                                   "one block "
                          "(control flow) are not supported");
  if (func.getNumResults() && func.getResultAttr(0, attrs::kLoss))
    return emitFunctionError(func, "tofu-autodiff: the function is already a "
                                   "training step (its first result is a "
                                   "tofu.loss); run tofu-autodiff once");
  Block &body = func.getBody().front();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return emitFunctionError(func, "tofu-autodiff: expected the function to "
                                   "end with "
                          "'func.return'");
  for (unsigned w : weights) {
    Type type = func.getArgument(w).getType();
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor || !tensor.hasStaticShape() ||
        !isa<FloatType>(tensor.getElementType()))
      return mlir::emitError(func.getArgument(w).getLoc(),
                             "tofu-autodiff: weight argument ")
             << w << " must be a statically shaped tensor of floats, found "
             << type << (isa<FloatType>(type) ? " (use a 0-d tensor)" : "");
  }
  if (ret.getNumOperands() != 1)
    return emitFunctionError(func, "tofu-autodiff: expected a function "
                                   "returning one "
                          "scalar loss, found ")
           << ret.getNumOperands() << " results";
  Value loss = ret.getOperand(0);
  auto lossType = dyn_cast<RankedTensorType>(loss.getType());
  if (!lossType || lossType.getRank() != 0 ||
      !isa<FloatType>(lossType.getElementType()))
    return emitFunctionError(func, "tofu-autodiff: the loss must be a 0-d "
                                   "float "
                          "tensor, found ")
           << loss.getType();

  // Identify forward operations; find the values that depend on weights.
  int64_t nextId = 0;
  Type i64 = IntegerType::get(func.getContext(), 64);
  SmallVector<Operation *> forward;
  for (unsigned w : weights)
    active.insert(func.getArgument(w));
  llvm::DenseSet<Value> constant;
  if (cancelShifts)
    constant = findCancelledShifts(body);
  for (Operation &op : body.without_terminator()) {
    op.setAttr(attrs::kOpId, IntegerAttr::get(i64, nextId++));
    forward.push_back(&op);
    // Values captured by regions count as operands.
    if (activeReads(&op).empty())
      continue;
    if (op.getNumRegions() && !isa<linalg::LinalgOp, tensor::PadOp>(op))
      return cannotDifferentiate(&op) << " with regions";
    for (Value r : op.getResults())
      if (isa<FloatType>(getElementTypeOrSelf(r.getType())) &&
          !constant.contains(r)) {
        if (failed(checkActiveType(r, &op)))
          return failure();
        active.insert(r);
      }
  }

  // Seed the loss with 1 and walk the forward operations backwards.
  b.setInsertionPoint(ret);
  Location loc = ret.getLoc();
  {
    Value empty = tensor::EmptyOp::create(b, loc, ArrayRef<int64_t>{},
                                          lossType.getElementType());
    Value one = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(lossType.getElementType(), 1.0));
    auto seed =
        linalg::FillOp::create(b, loc, ValueRange{one}, ValueRange{empty});
    seed->setAttr(attrs::kGradientOf,
                  forwardTensorAttr(func.getContext(), loss));
    adjoint[loss] = seed.getResult(0);
  }
  for (Operation *op : llvm::reverse(forward)) {
    if (llvm::none_of(op->getResults(),
                      [&](Value r) { return adjoint.count(r); }))
      continue;
    SetVector<Value> reads = activeReads(op);
    if (reads.empty())
      continue;
    tagger.forwardId = idOf(op);
    covered.clear();
    if (failed(differentiate(op)))
      return failure();
    // Every active value the operation reads must have received its
    // gradient, or a rule must have shown that it is zero.
    for (Value v : reads) {
      if (covered.contains(v))
        continue;
      auto operands = op->getOperands();
      auto it = llvm::find(operands, v);
      if (it != operands.end())
        return cannotDifferentiate(op)
               << ": no rule propagates the gradient of operand #"
               << (it - operands.begin());
      return cannotDifferentiate(op)
             << ": no rule propagates the gradient of a value that its "
                "region captures";
    }
  }
  tagger.forwardId = -1;

  // Return the loss and the gradient of every weight.
  SmallVector<Value> results{loss};
  SmallVector<Type> resultTypes{loss.getType()};
  SmallVector<unsigned> order(weights.begin(), weights.end());
  llvm::sort(order);
  for (unsigned w : order) {
    Value arg = func.getArgument(w);
    Value grad = adjoint.lookup(arg);
    if (!grad)
      grad = zeros(loc, cast<RankedTensorType>(arg.getType()));
    results.push_back(grad);
    resultTypes.push_back(arg.getType());
  }
  func::ReturnOp::create(b, loc, results);
  ret.erase();
  // The loss keeps the attributes of the result it was (an exporter's
  // result names); the gradients are new results.
  NamedAttrList lossAttrs(func.getResultAttrDict(0));
  lossAttrs.set(attrs::kLoss, b.getUnitAttr());
  SmallVector<DictionaryAttr> resultAttrs{
      lossAttrs.getDictionary(func.getContext())};
  for (unsigned w : order)
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr(attrs::kGradientOfArg, b.getI64IntegerAttr(w))));
  func.setFunctionType(FunctionType::get(func.getContext(),
                                         func.getArgumentTypes(), resultTypes));
  func.setAllResultAttrs(resultAttrs);
  for (unsigned w : order)
    func.setArgAttr(w, attrs::kWeight, b.getUnitAttr());
  return success();
}

/// True if `func` returns one 0-d float tensor: a loss.
static bool returnsLoss(func::FuncOp func) {
  ArrayRef<Type> results = func.getResultTypes();
  if (results.size() != 1)
    return false;
  auto type = dyn_cast<RankedTensorType>(results[0]);
  return type && type.getRank() == 0 && isa<FloatType>(type.getElementType());
}

namespace {
struct TofuAutodiffPass
    : public tofu::impl::TofuAutodiffBase<TofuAutodiffPass> {
  using TofuAutodiffBase::TofuAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<func::FuncOp> funcs;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          (funcName.empty() || func.getName() == funcName))
        funcs.push_back(func);
    if (!funcName.empty() && funcs.empty()) {
      mlir::emitError(module.getLoc(), "tofu-autodiff: no function named '")
          << funcName << "'";
      return signalPassFailure();
    }
    if (module.getBody()->empty()) {
      mlir::emitError(module.getLoc(),
                      "tofu-autodiff: empty input: the module holds no "
                      "function (give a forward model in linalg on tensors)");
      return signalPassFailure();
    }
    // Element types the step cannot compute in fail here, at the first
    // stage, rather than after the search and the partition.
    for (func::FuncOp func : funcs)
      for (auto [i, type] : llvm::enumerate(func.getArgumentTypes())) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        if (!tensor) {
          if (isa<TensorType>(type)) {
            mlir::emitError(func.getArgument(i).getLoc(), "tofu-autodiff: ")
                << "argument " << i << " of '@" << func.getName()
                << "' has an unranked type " << type
                << ": export the model with static shapes";
            return signalPassFailure();
          }
          continue;
        }
        if (!tensor.hasStaticShape()) {
          mlir::emitError(func.getArgument(i).getLoc(), "tofu-autodiff: ")
              << "argument " << i << " of '@" << func.getName()
              << "' has a dynamic shape " << type
              << ": export the model with a static batch and static shapes";
          return signalPassFailure();
        }
        Type element = tensor.getElementType();
        if (isa<FloatType>(element) && !element.isF32() && !element.isF64()) {
          std::string name;
          llvm::raw_string_ostream(name) << element;
          mlir::emitError(func.getArgument(i).getLoc(), "tofu-autodiff: ")
              << "argument " << i << " of '@" << func.getName() << "' is "
              << name << ": training steps run in f32 or f64 (convert "
              << "the model, e.g. with --tofu-convert-float-type=\"from="
              << name << " to=f32\")";
          return signalPassFailure();
        }
      }
    // Weights chosen by name or as 'all' select among the functions that
    // return a loss; indices and markers keep naming any function a model.
    bool bySelection = llvm::any_of(weightArgs, [](const std::string &w) {
      unsigned index;
      return StringRef(w).getAsInteger(10, index);
    });
    unsigned differentiated = 0, losses = 0;
    for (func::FuncOp func : funcs) {
      bool isLoss = returnsLoss(func);
      losses += isLoss;
      if (bySelection && funcName.empty() && !isLoss)
        continue;
      FailureOr<SmallVector<unsigned>> weights =
          selectWeights(func, weightArgs, inputArgs, "tofu-autodiff");
      if (failed(weights))
        return signalPassFailure();
      if (weights->empty()) {
        if (funcName.empty())
          continue; // Not a model: nothing to differentiate.
        emitFunctionError(func, "tofu-autodiff: '@")
            << func.getName() << "' has no weight arguments; " << howToMark();
        return signalPassFailure();
      }
      recordArgumentNames(func);
      func::FuncOp train = func;
      if (keepForward) {
        OpBuilder builder(func);
        builder.setInsertionPointAfter(func);
        train = cast<func::FuncOp>(builder.clone(*func));
      }
      train.setName((func.getName() + "_train").str());
      if (failed(Differentiator(train, *weights, cancelShifts).run()))
        return signalPassFailure();
      ++differentiated;
    }
    if (differentiated)
      return;
    // Nothing to differentiate is an error: a training step without
    // gradients is never what was meant.
    Location loc = funcs.size() == 1 ? funcs.front().getLoc() : module.getLoc();
    if (!losses)
      mlir::emitError(loc, "tofu-autodiff: nothing to differentiate: no "
                           "function returns a 0-d loss (add one with "
                           "tofu-loss{kind=softmax-cross-entropy|mse|sum})");
    else
      mlir::emitError(loc, "tofu-autodiff: nothing to differentiate: no "
                           "function with a 0-d loss has weight arguments; ")
          << howToMark();
    signalPassFailure();
  }

  static StringRef howToMark() {
    return "mark them {tofu.weight}, or pass weights=all (with inputs=... "
           "for the data arguments), weights=<indices> or weights=<names>";
  }
};
} // namespace
