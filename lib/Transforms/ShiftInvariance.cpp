//===- ShiftInvariance.cpp - Shifts that a normalisation cancels ----------===//
//
// Follows what a function computes from a row maximum m and proves that
// none of it depends on m, so that m's gradient is zero.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/ShiftInvariance.h"
#include "tofu/Transforms/ScalarDerivative.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/SmallBitVector.h"

#include <cstdlib>

using namespace mlir;

namespace {

/// How a value depends on m: u + k*m (additive) or u * exp(k*m)
/// (multiplicative), with u independent of m; k = 0 means independent.
struct Dependence {
  enum Kind { Additive, Multiplicative };
  Kind kind = Additive;
  int64_t k = 0;

  bool isFree() const { return k == 0; }
  static Dependence of(Kind kind, int64_t k) {
    return k == 0 ? Dependence() : Dependence{kind, k};
  }
  /// True if the value is independent of m or depends on it as `kind`.
  bool fits(Kind other) const { return isFree() || kind == other; }
};

/// A tensor computed from m: how its elements depend on m, and the map from
/// its indices to the index of the element of m that each depends on.
struct Shifted {
  Dependence dependence;
  AffineMap toRow;
};

} // namespace

/// The dependence on m of the scalar `v` of a linalg body `body`, given
/// those of its block arguments in `known`; failure for an operation
/// without a rule that reads a value that depends on m.
static FailureOr<Dependence> evaluate(Value v, Block *body,
                                      DenseMap<Value, Dependence> &known) {
  if (auto it = known.find(v); it != known.end())
    return it->second;
  Operation *def = v.getDefiningOp();
  // Values from above the body: its tensors are operands, so these are
  // constants and scalars independent of m (the callers check that m and
  // what depends on it are read only as operands).
  if (!def || def->getBlock() != body)
    return Dependence();
  // An operation with regions may yield what they read from m without
  // having it as an operand.
  if (def->getNumRegions())
    return failure();
  SmallVector<Dependence, 2> in;
  for (Value operand : def->getOperands()) {
    FailureOr<Dependence> d = evaluate(operand, body, known);
    if (failed(d))
      return failure();
    in.push_back(*d);
  }
  Dependence result;
  using K = Dependence::Kind;
  if (llvm::all_of(in, [](const Dependence &d) { return d.isFree(); })) {
    result = Dependence();
  } else if (isa<arith::AddFOp, arith::SubFOp>(def) &&
             in[0].fits(K::Additive) && in[1].fits(K::Additive)) {
    int64_t sign = isa<arith::SubFOp>(def) ? -1 : 1;
    result = Dependence::of(K::Additive, in[0].k + sign * in[1].k);
  } else if (isa<arith::MulFOp, arith::DivFOp>(def) &&
             in[0].fits(K::Multiplicative) && in[1].fits(K::Multiplicative)) {
    int64_t sign = isa<arith::DivFOp>(def) ? -1 : 1;
    result = Dependence::of(K::Multiplicative, in[0].k + sign * in[1].k);
  } else if (isa<arith::NegFOp>(def)) {
    // -(u + k*m) = -u - k*m; -(u * exp(k*m)) = (-u) * exp(k*m).
    result = Dependence::of(in[0].kind,
                            in[0].kind == K::Additive ? -in[0].k : in[0].k);
  } else if (isa<math::ExpOp>(def) && in[0].kind == K::Additive) {
    result = Dependence::of(K::Multiplicative, in[0].k);
  } else if (isa<math::LogOp>(def) && in[0].kind == K::Multiplicative) {
    result = Dependence::of(K::Additive, in[0].k);
  } else {
    return failure();
  }
  // Beyond any real chain; keeps the arithmetic on k far from overflow.
  if (std::abs(result.k) > (int64_t(1) << 20))
    return failure();
  known[v] = result;
  return result;
}

/// True if every use of `v` is an input of a single-result linalg.generic
/// in `block`.
static bool isReadOnlyAsInput(Value v, Block &block) {
  for (OpOperand &use : v.getUses()) {
    auto g = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!g || g->getBlock() != &block || g->getNumResults() != 1 ||
        !g.isDpsInput(&use))
      return false;
  }
  return true;
}

/// True if `v` is a tensor of zeros.
static bool isZeros(Value v) {
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.value(), m_AnyZeroFloat());
  return matchPattern(v, m_AnyZeroFloat());
}

/// True if `g` is a single-result max reduction.
static bool isMaxReduction(linalg::GenericOp g) {
  Value e;
  return g->getNumResults() == 1 && g.getNumReductionLoops() &&
         isa<RankedTensorType>(g->getResult(0).getType()) &&
         tofu::matchCombiner(g, e) == tofu::Combiner::Max;
}

/// True if `g` writes every element of its result: each index of the
/// output is a distinct loop with the dimension's extent, or 0 where the
/// dimension has one element. Elements it does not write keep the initial
/// value, which does not depend on m as the written ones do.
static bool writesEveryElement(linalg::GenericOp g) {
  AffineMap out = g.getIndexingMapMatchingResult(g->getResult(0));
  auto type = dyn_cast<RankedTensorType>(g->getResult(0).getType());
  if (!type || !type.hasStaticShape())
    return false;
  SmallVector<int64_t> ranges = g.getStaticLoopRanges();
  llvm::SmallBitVector seen(ranges.size());
  for (auto [i, e] : llvm::enumerate(out.getResults())) {
    if (auto c = dyn_cast<AffineConstantExpr>(e)) {
      if (c.getValue() != 0 || type.getDimSize(i) != 1)
        return false;
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim || seen.test(dim.getPosition()) ||
        ranges[dim.getPosition()] != type.getDimSize(i))
      return false;
    seen.set(dim.getPosition());
  }
  return true;
}

/// The dependence on m of the result of `g`, given the tensors computed from
/// m so far, and the map from its indices to m's; failure when no rule
/// applies.
static FailureOr<Shifted> propagate(linalg::GenericOp g,
                                    const DenseMap<Value, Shifted> &shifted) {
  Block *body = g.getBody();
  DenseMap<Value, Dependence> known;
  // The index of m that every iteration reads through the operands that
  // depend on m: the same for all of them, or the body could mix rows.
  std::optional<AffineMap> rowOfLoops;
  for (OpOperand *in : g.getDpsInputOperands()) {
    auto it = shifted.find(in->get());
    if (it == shifted.end())
      continue;
    AffineMap row = it->second.toRow.compose(g.getMatchingIndexingMap(in));
    if (rowOfLoops && *rowOfLoops != row)
      return failure();
    rowOfLoops = row;
    known[g.getMatchingBlockArgument(in)] = it->second.dependence;
  }
  OpOperand *init = g.getDpsInitOperand(0);
  known[g.getMatchingBlockArgument(init)] = Dependence();
  Value yielded = body->getTerminator()->getOperand(0);

  Dependence result;
  FailureOr<Dependence> whole = evaluate(yielded, body, known);
  if (succeeded(whole) && (whole->isFree() || g.getNumReductionLoops() == 0)) {
    // Each iteration (and so the result, from an initial value independent
    // of m) depends on m as the yielded value does.
    result = *whole;
  } else {
    // sum_j u_j * exp(k*m) = exp(k*m) * sum_j u_j when m is the same for
    // every term: the reduced loops pick no row of m.
    Value summand;
    if (!g.getNumReductionLoops() ||
        tofu::matchCombiner(g, summand) != tofu::Combiner::Add ||
        !isZeros(init->get()))
      return failure();
    FailureOr<Dependence> term = evaluate(summand, body, known);
    if (failed(term) || term->kind != Dependence::Multiplicative)
      return failure();
    for (auto [loop, type] : llvm::enumerate(g.getIteratorTypesArray())) {
      unsigned l = loop;
      if (type == utils::IteratorType::reduction &&
          llvm::any_of(rowOfLoops->getResults(),
                       [l](AffineExpr e) { return e.isFunctionOfDim(l); }))
        return failure();
    }
    result = *term;
  }
  if (result.isFree())
    return Shifted{result, AffineMap()};
  if (!writesEveryElement(g))
    return failure();

  // The result's map to m: each index of m that the iterations read must
  // be a loop the result keeps, or a constant.
  AffineMap out = g.getIndexingMapMatchingResult(g->getResult(0));
  SmallVector<AffineExpr> toRow;
  for (AffineExpr e : rowOfLoops->getResults()) {
    if (isa<AffineConstantExpr>(e)) {
      toRow.push_back(e);
      continue;
    }
    auto dim = dyn_cast<AffineDimExpr>(e);
    auto pos = dim ? llvm::find(out.getResults(), e) : out.getResults().end();
    if (pos == out.getResults().end())
      return failure();
    toRow.push_back(
        getAffineDimExpr(pos - out.getResults().begin(), g.getContext()));
  }
  AffineMap map = AffineMap::get(out.getNumResults(), 0, toRow, g.getContext());
  if (map.compose(out) != *rowOfLoops)
    return failure();
  return Shifted{result, map};
}

/// True if nothing computed from the max reduction `m` depends on it.
static bool isCancelled(Value m, Block &block) {
  auto type = cast<RankedTensorType>(m.getType());
  DenseMap<Value, Shifted> shifted;
  shifted[m] = {
      Dependence::of(Dependence::Additive, 1),
      AffineMap::getMultiDimIdentityMap(type.getRank(), m.getContext())};
  if (!isReadOnlyAsInput(m, block))
    return false;
  for (Operation &op : llvm::make_range(
           std::next(m.getDefiningOp()->getIterator()), block.end())) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (!g || llvm::none_of(g.getDpsInputs(),
                            [&](Value v) { return shifted.count(v); }))
      continue;
    FailureOr<Shifted> result = propagate(g, shifted);
    if (failed(result))
      return false;
    if (result->dependence.isFree())
      continue;
    if (!isReadOnlyAsInput(g->getResult(0), block))
      return false;
    shifted[g->getResult(0)] = *result;
  }
  return true;
}

llvm::DenseSet<Value> tofu::findCancelledShifts(Block &body) {
  llvm::DenseSet<Value> cancelled;
  for (Operation &op : body) {
    auto g = dyn_cast<linalg::GenericOp>(op);
    if (g && isMaxReduction(g) && isCancelled(g->getResult(0), body))
      cancelled.insert(g->getResult(0));
  }
  return cancelled;
}
