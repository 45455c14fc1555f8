//===- StackProductSums.cpp - A sum of like reductions as one reduction ---===//
//
// The tofu-stack-product-sums pass: a sum of reductions of the same form,
// each accumulating into a zero fill with `+` (a weight-gradient product
// per time step of an unrolled RNN, a bias gradient per time step), becomes
// one reduction whose new outermost loop runs over the terms: the operands
// that differ from term to term are stacked along a new first dimension,
// the operands they share are read as they are.
//
//   sum_t (sum_b h_t[b, k] * g_t[b, n])  ->  sum_{t, b} H[t, b, k] * G[t, b, n]
//
// A step that partitions the batch then reduces each weight's gradient once
// instead of once per time step, and a 1-rank step makes one library call
// with K = T times the batch instead of T. The terms are summed in another
// order, so results differ by rounding.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"
#include "tofu/Transforms/ScalarDerivative.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallPtrSet.h"

#include <map>
#include <vector>

namespace tofu {
#define GEN_PASS_DEF_TOFUSTACKPRODUCTSUMS
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// An element-wise sum of two tensors (tofu::isTensorSum).
bool isTensorSum(Operation *op) {
  auto g = dyn_cast<linalg::GenericOp>(op);
  return g && tofu::isTensorSum(g);
}

/// Whether `e`, in the body of `g`, is its input's element, or that times
/// one.
bool isInputElement(linalg::GenericOp g, Value e) {
  Value in = g.getBody()->getArgument(0);
  if (e == in)
    return true;
  auto mul = e.getDefiningOp<arith::MulFOp>();
  if (!mul)
    return false;
  Value other = mul.getLhs() == in   ? mul.getRhs()
                : mul.getRhs() == in ? mul.getLhs()
                                     : Value();
  return other && matchPattern(other, m_OneFloat());
}

/// The value that the element-wise identity generic `g` copies, or null: it
/// yields its input's element, or adds it (times one) to a zero fill, the
/// form in which tofu-autodiff passes a gradient through an addition.
Value getCopiedValue(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || !g.hasPureTensorSemantics() ||
      g.getDpsInputs()[0].getType() != g->getResult(0).getType() ||
      g.getNumReductionLoops() != 0 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return Value();
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  if (isInputElement(g, yield.getOperand(0)))
    return g.getDpsInputs()[0];
  Value e;
  auto fill = g.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  if (tofu::matchCombiner(g, e) == tofu::Combiner::Add && fill &&
      matchPattern(fill.value(), m_AnyZeroFloat()) && isInputElement(g, e))
    return g.getDpsInputs()[0];
  return Value();
}

/// `v`, or the value it copies through element-wise identity generics
/// (getCopiedValue): the weight's and the bias's gradient products of one
/// time step of an RNN read copies of one value.
Value lookThroughCopies(Value v) {
  while (auto g = v.getDefiningOp<linalg::GenericOp>()) {
    Value copied = getCopiedValue(g);
    if (!copied)
      return v;
    v = copied;
  }
  return v;
}

/// A reduction that may join a stack: a generic with static shapes and no
/// index ops whose body is `yield acc + e`, into a zero fill that nothing
/// else reads.
bool isStackableReduction(Operation *op) {
  auto g = dyn_cast<linalg::GenericOp>(op);
  if (!g || !g.hasPureTensorSemantics() || g.getNumDpsInits() != 1 ||
      g->getNumResults() != 1 || g.hasIndexSemantics() ||
      !cast<linalg::LinalgOp>(op).hasOnlyProjectedPermutations() ||
      !g->getResult(0).hasOneUse())
    return false;
  Value e;
  if (tofu::matchCombiner(g, e) != tofu::Combiner::Add)
    return false;
  Value init = g.getDpsInitOperand(0)->get();
  auto fill = init.getDefiningOp<linalg::FillOp>();
  if (!fill || !init.hasOneUse() ||
      !matchPattern(fill.value(), m_AnyZeroFloat()))
    return false;
  return llvm::all_of(g->getOperandTypes(), [](Type t) {
    auto ranked = dyn_cast<RankedTensorType>(t);
    return ranked && ranked.hasStaticShape();
  });
}

/// What the terms of one stack share: the op's maps, iterator types,
/// result type and fill value (operand types and bodies are compared on
/// their own).
using StackId =
    std::tuple<const void *, const void *, const void *, const void *>;

StackId stackId(linalg::GenericOp g) {
  Attribute zero;
  matchPattern(
      g.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>().value(),
      m_Constant(&zero));
  return {g.getIndexingMaps().getAsOpaquePointer(),
          g.getIteratorTypes().getAsOpaquePointer(),
          g->getResult(0).getType().getAsOpaquePointer(),
          zero.getAsOpaquePointer()};
}

/// The terms of the sum rooted at `root`, in the order the sums read them,
/// and the sums themselves. A sum whose result anything else reads is a
/// term.
void collectTerms(Operation *root, SmallVectorImpl<Value> &terms,
                  SmallVectorImpl<Operation *> &sums) {
  sums.push_back(root);
  for (Value operand : cast<linalg::GenericOp>(root).getDpsInputs()) {
    Operation *def = operand.getDefiningOp();
    if (def && def->getBlock() == root->getBlock() && isTensorSum(def) &&
        operand.hasOneUse())
      collectTerms(def, terms, sums);
    else
      terms.push_back(operand);
  }
}

/// Stacks made so far, by the values they stack (through copies): the
/// bias's and the weight's gradients of an RNN stack the same per-time-step
/// values.
using StackCache = std::map<std::vector<const void *>, Value>;

std::vector<const void *> getStackKey(ArrayRef<Value> values) {
  std::vector<const void *> key;
  for (Value v : values)
    key.push_back(lookThroughCopies(v).getAsOpaquePointer());
  return key;
}

/// The stack of `values` made for an earlier sum, if it is in `block`
/// before `before`.
Value findStack(ArrayRef<Value> values, const StackCache &cache,
                Operation *before) {
  auto it = cache.find(getStackKey(values));
  if (it == cache.end())
    return Value();
  Operation *made = it->second.getDefiningOp();
  if (!made || made->getBlock() != before->getBlock() ||
      !made->isBeforeInBlock(before))
    return Value();
  return it->second;
}

/// `values` (of one type) stacked along a new first dimension, right after
/// the last of them is defined in the block of `root`, so that later sums
/// over the same values (the bias's gradient after the weight's) reuse it.
Value stack(OpBuilder &b, Location loc, ArrayRef<Value> values,
            StackCache &cache, Operation *root) {
  if (Value made = findStack(values, cache, root))
    return made;
  SmallVector<Value> sources;
  Operation *last = nullptr;
  for (Value v : values) {
    sources.push_back(lookThroughCopies(v));
    Operation *def = sources.back().getDefiningOp();
    if (def && def->getBlock() == root->getBlock() &&
        (!last || last->isBeforeInBlock(def)))
      last = def;
  }
  OpBuilder::InsertionGuard guard(b);
  if (last)
    b.setInsertionPointAfter(last);
  else
    b.setInsertionPointToStart(root->getBlock());
  auto type = cast<RankedTensorType>(values.front().getType());
  SmallVector<int64_t> unitShape = {1};
  llvm::append_range(unitShape, type.getShape());
  auto unitType = RankedTensorType::get(unitShape, type.getElementType());
  // The unit dimension merges into the first (a scalar has none).
  SmallVector<ReassociationIndices> reassociation;
  for (int64_t d = 1; d <= type.getRank(); ++d)
    reassociation.push_back(d == 1 ? ReassociationIndices{0, 1}
                                   : ReassociationIndices{d});
  SmallVector<Value> pieces;
  for (Value v : sources)
    pieces.push_back(
        tensor::ExpandShapeOp::create(b, loc, unitType, v, reassociation));
  Value stacked = tensor::ConcatOp::create(b, loc, /*dim=*/0, pieces);
  cache[getStackKey(values)] = stacked;
  return stacked;
}

/// Erases `ops` (each without uses once those after it are gone), then the
/// side-effect-free producers that they leave unused, and forgets the
/// stacks of `cache` that they made.
void eraseWithDeadProducers(ArrayRef<Operation *> ops, StackCache &cache) {
  llvm::SmallPtrSet<Operation *, 16> erased(ops.begin(), ops.end());
  llvm::SetVector<Operation *> worklist;
  auto addProducers = [&](Operation *op) {
    for (Value operand : op->getOperands())
      if (Operation *def = operand.getDefiningOp(); def && !erased.count(def))
        worklist.insert(def);
  };
  auto erase = [&](Operation *op) {
    for (auto it = cache.begin(); it != cache.end();)
      it = it->second.getDefiningOp() == op ? cache.erase(it) : std::next(it);
    op->erase();
  };
  for (Operation *op : ops) {
    addProducers(op);
    erase(op);
  }
  while (!worklist.empty()) {
    Operation *op = worklist.pop_back_val();
    if (!isOpTriviallyDead(op))
      continue;
    erased.insert(op);
    addProducers(op);
    erase(op);
  }
}

/// Whether input `i` is the same value in every term of `stacked`.
bool isShared(ArrayRef<linalg::GenericOp> stacked, unsigned i) {
  Value value = linalg::GenericOp(stacked.front()).getDpsInputs()[i];
  return llvm::all_of(stacked, [&](linalg::GenericOp g) {
    return g.getDpsInputs()[i] == value;
  });
}

/// Bytes of a value of `type`.
int64_t getBytes(Type type) {
  auto ranked = cast<RankedTensorType>(type);
  return ranked.getNumElements() * int64_t(ranked.getElementTypeBitWidth() / 8);
}

/// The values that input `i` of the terms `stacked` stacks.
SmallVector<Value> getStackedValues(ArrayRef<linalg::GenericOp> stacked,
                                    unsigned i) {
  SmallVector<Value> values;
  for (linalg::GenericOp g : stacked)
    values.push_back(g.getDpsInputs()[i]);
  return values;
}

/// Whether stacking `terms`, summed under `root`, pays: an operand differs
/// between them, and the stacks it makes copy at most the bytes of the
/// additions they remove (a weight's gradient over T time steps copies T
/// small activations and removes T - 1 weight-sized sums; the sum of two
/// products by two weights would copy both weights to remove one
/// activation-sized sum). A stack made for an earlier sum copies nothing
/// more (the bias's gradient over the weight's stacked operand).
bool pays(ArrayRef<linalg::GenericOp> terms, const StackCache &cache,
          Operation *root) {
  if (terms.size() < 2)
    return false;
  linalg::GenericOp first = terms.front();
  int64_t copied = 0;
  bool differs = false;
  for (unsigned i = 0; i < first.getNumDpsInputs(); ++i) {
    if (isShared(terms, i))
      continue;
    differs = true;
    if (!findStack(getStackedValues(terms, i), cache, root))
      copied +=
          int64_t(terms.size()) * getBytes(first.getDpsInputs()[i].getType());
  }
  int64_t removed =
      int64_t(terms.size() - 1) * getBytes(first->getResult(0).getType());
  return differs && copied <= removed;
}

/// Replaces the terms `stacked` of the sum `sums` (whose first op is the
/// root) with one reduction over the stacked operands, summed with the
/// sum's other terms.
void stackTerms(ArrayRef<Operation *> sums, ArrayRef<Value> terms,
                ArrayRef<linalg::GenericOp> stacked, StackCache &cache) {
  Operation *root = sums.front();
  OpBuilder b(root);
  linalg::GenericOp first = stacked.front();
  Location loc = first.getLoc();
  MLIRContext *ctx = b.getContext();
  unsigned loops = first.getNumLoops();
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  for (auto [i, map] : llvm::enumerate(first.getIndexingMapsArray())) {
    AffineMap shifted = map.shiftDims(1);
    bool isInput = int64_t(i) < first.getNumDpsInputs();
    bool shared = !isInput || isShared(stacked, i);
    if (isInput && !shared) {
      inputs.push_back(
          stack(b, loc, getStackedValues(stacked, i), cache, root));
      shifted = shifted.insertResult(getAffineDimExpr(0, ctx), 0);
    } else if (isInput) {
      inputs.push_back(first.getDpsInputs()[i]);
    }
    maps.push_back(AffineMap::get(loops + 1, 0, shifted.getResults(), ctx));
  }
  SmallVector<utils::IteratorType> iterators = {utils::IteratorType::reduction};
  llvm::append_range(iterators, first.getIteratorTypesArray());
  auto fill = first.getDpsInitOperand(0)->get().getDefiningOp<linalg::FillOp>();
  Value empty = tensor::EmptyOp::create(
      b, loc, cast<RankedTensorType>(first->getResult(0).getType()).getShape(),
      getElementTypeOrSelf(first->getResult(0).getType()));
  Value init = linalg::FillOp::create(b, loc, fill.value(), empty).getResult(0);
  auto reduction =
      linalg::GenericOp::create(b, loc, TypeRange{init.getType()}, inputs,
                                ValueRange{init}, maps, iterators);
  reduction->setDiscardableAttrs(first->getDiscardableAttrDictionary());
  IRMapping mapping;
  first->getRegion(0).cloneInto(&reduction.getRegion(), mapping);

  // The sum again: the reduction, then the other terms in order.
  Value total = reduction->getResult(0);
  for (Value term : terms) {
    if (llvm::is_contained(stacked, term.getDefiningOp()))
      continue;
    Operation *sum = b.clone(*root);
    sum->setOperands(0, 2, {total, term});
    total = sum->getResult(0);
  }
  root->getResult(0).replaceAllUsesWith(total);
  SmallVector<Operation *> dead(sums.begin(), sums.end());
  for (linalg::GenericOp g : stacked)
    dead.push_back(g);
  eraseWithDeadProducers(dead, cache);
}

struct TofuStackProductSumsPass
    : public tofu::impl::TofuStackProductSumsBase<TofuStackProductSumsPass> {
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      StackCache cache;
      if (!func.isExternal())
        while (stackOnce(func, cache)) {
        }
    }
  }

  /// Stacks the terms of one sum of `func`; false if there was none.
  static bool stackOnce(func::FuncOp func, StackCache &cache) {
    {
      // The roots: sums that no other sum of the same tree reads.
      SmallVector<Operation *> roots;
      for (Operation &op : func.getBody().front()) {
        if (!isTensorSum(&op))
          continue;
        Value result = op.getResult(0);
        bool inner = result.hasOneUse() &&
                     isTensorSum(*result.getUsers().begin()) &&
                     result.getUsers().begin()->getBlock() == op.getBlock();
        if (!inner)
          roots.push_back(&op);
      }
      for (Operation *root : roots) {
        SmallVector<Value> terms;
        SmallVector<Operation *> sums;
        collectTerms(root, terms, sums);
        llvm::MapVector<StackId, SmallVector<linalg::GenericOp>> stacks;
        for (Value term : terms) {
          Operation *def = term.getDefiningOp();
          if (def && isStackableReduction(def))
            stacks[stackId(cast<linalg::GenericOp>(def))].push_back(
                cast<linalg::GenericOp>(def));
        }
        // The largest class of terms with equal operand types and bodies
        // whose stacks pay.
        SmallVector<linalg::GenericOp> best;
        for (auto &[id, candidates] : stacks) {
          SmallVector<SmallVector<linalg::GenericOp>> classes;
          for (linalg::GenericOp g : candidates) {
            auto alike = llvm::find_if(classes, [&](auto &members) {
              linalg::GenericOp front = members.front();
              return g->getOperandTypes() == front->getOperandTypes() &&
                     OperationEquivalence::isRegionEquivalentTo(
                         &g->getRegion(0), &front->getRegion(0),
                         OperationEquivalence::IgnoreLocations);
            });
            if (alike == classes.end())
              classes.push_back({g});
            else
              alike->push_back(g);
          }
          for (auto &members : classes)
            if (members.size() > best.size() && pays(members, cache, root))
              best = members;
        }
        if (best.size() < 2)
          continue;
        stackTerms(sums, terms, best, cache);
        return true;
      }
    }
    return false;
  }
};

} // namespace
