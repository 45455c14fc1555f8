//===- ScalarDerivative.cpp - Derivatives of scalar bodies
//-----------------===//
//
// Tangent rules for the arith and math operations that appear in the bodies
// of linalg operations. Tangents are propagated forward through the cloned
// body; a null tangent stands for zero so that constant subexpressions cost
// nothing.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/ScalarDerivative.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include <cmath>

using namespace mlir;

namespace {

/// Emits scalar arithmetic on float values; null operands are zeros.
class TangentBuilder {
public:
  TangentBuilder(OpBuilder &b, Location loc) : b(b), loc(loc) {}

  Value constant(Type type, double value) {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(type, value));
  }
  Value add(Value x, Value y) {
    if (!x)
      return y;
    if (!y)
      return x;
    return arith::AddFOp::create(b, loc, x, y);
  }
  Value sub(Value x, Value y) {
    if (!y)
      return x;
    if (!x)
      return arith::NegFOp::create(b, loc, y);
    return arith::SubFOp::create(b, loc, x, y);
  }
  Value mul(Value x, Value y) {
    if (!x || !y)
      return nullptr;
    if (x == one)
      return y;
    if (y == one)
      return x;
    return arith::MulFOp::create(b, loc, x, y);
  }
  Value div(Value x, Value y) {
    if (!x)
      return nullptr;
    return arith::DivFOp::create(b, loc, x, y);
  }
  Value neg(Value x) { return x ? arith::NegFOp::create(b, loc, x) : x; }
  Value select(Value cond, Value x, Value y, Type type) {
    if (!x && !y)
      return nullptr;
    if (!x)
      x = constant(type, 0.0);
    if (!y)
      y = constant(type, 0.0);
    return arith::SelectOp::create(b, loc, cond, x, y);
  }
  Value cmp(arith::CmpFPredicate pred, Value x, Value y) {
    return arith::CmpFOp::create(b, loc, pred, x, y);
  }

  OpBuilder &b;
  Location loc;
  /// The seed tangent 1, which multiplications skip.
  Value one;
};

} // namespace

/// The values that the regions of `op` read from outside them.
static SetVector<Value> getCapturedValues(Operation *op) {
  SetVector<Value> captured;
  if (op->getNumRegions())
    getUsedValuesDefinedAbove(op->getRegions(), captured);
  return captured;
}

bool tofu::dependsOn(Value value, Value source) {
  if (value == source)
    return true;
  llvm::SmallVector<Value> worklist{value};
  llvm::DenseSet<Value> seen;
  Block *block = source.getParentBlock();
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    if (v == source)
      return true;
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || def->getBlock() != block)
      continue;
    for (Value operand : def->getOperands())
      worklist.push_back(operand);
    // What the operation's regions read from the block (an scf.if that
    // yields a block argument) counts too.
    llvm::append_range(worklist, getCapturedValues(def));
  }
  return false;
}

/// The tangent of `op`'s single result given its operands' tangents, built
/// on the cloned operation `clone`. Sets `failed` if there is no rule.
static Value tangentOf(TangentBuilder &t, Operation *clone, ArrayRef<Value> dx,
                       bool &failed) {
  Type type = clone->getNumResults() ? clone->getResult(0).getType() : Type();
  auto x = [&](unsigned i) { return clone->getOperand(i); };
  Value r = clone->getNumResults() ? clone->getResult(0) : Value();
  bool anyTangent = llvm::any_of(dx, [](Value v) { return bool(v); });

  if (isa<arith::AddFOp>(clone))
    return t.add(dx[0], dx[1]);
  if (isa<arith::SubFOp>(clone))
    return t.sub(dx[0], dx[1]);
  if (isa<arith::MulFOp>(clone))
    return t.add(t.mul(dx[0], x(1)), t.mul(x(0), dx[1]));
  if (isa<arith::DivFOp>(clone)) // (dx0 - r dx1) / x1
    return t.div(t.sub(dx[0], t.mul(r, dx[1])), x(1));
  if (isa<arith::NegFOp>(clone))
    return t.neg(dx[0]);
  if (isa<math::ExpOp>(clone))
    return t.mul(dx[0], r);
  if (isa<math::LogOp>(clone))
    return t.div(dx[0], x(0));
  if (isa<math::TanhOp>(clone)) // dx (1 - r^2)
    return t.mul(dx[0], t.sub(t.constant(type, 1.0), t.mul(r, r)));
  if (isa<math::SqrtOp>(clone)) // dx / (2 r)
    return t.div(dx[0], t.mul(t.constant(type, 2.0), r));
  if (isa<math::RsqrtOp>(clone)) // -0.5 dx r / x
    return t.mul(t.mul(dx[0], t.constant(type, -0.5)), t.div(r, x(0)));
  if (isa<math::ErfOp>(clone)) { // dx 2/sqrt(pi) exp(-x^2)
    Value sq = t.mul(x(0), x(0));
    Value e = math::ExpOp::create(t.b, t.loc, t.neg(sq));
    return t.mul(dx[0], t.mul(t.constant(type, 2.0 / std::sqrt(M_PI)), e));
  }
  if (isa<math::AbsFOp>(clone)) {
    if (!dx[0])
      return nullptr;
    Value neg = t.cmp(arith::CmpFPredicate::OLT, x(0), t.constant(type, 0.0));
    return t.select(neg, t.neg(dx[0]), dx[0], type);
  }
  if (isa<math::PowFOp>(clone)) {
    if (dx[1]) {
      failed = true; // Exponents that depend on the inputs: no rule.
      return nullptr;
    }
    // dx c x^(c-1)
    Value cm1 = t.sub(x(1), t.constant(type, 1.0));
    Value p = math::PowFOp::create(t.b, t.loc, x(0), cm1);
    return t.mul(dx[0], t.mul(x(1), p));
  }
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(clone))
    return t.select(t.cmp(arith::CmpFPredicate::OGE, x(0), x(1)), dx[0], dx[1],
                    type);
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(clone))
    return t.select(t.cmp(arith::CmpFPredicate::OLE, x(0), x(1)), dx[0], dx[1],
                    type);
  if (isa<arith::SelectOp>(clone))
    return t.select(x(0), dx[1], dx[2], type);
  // A conditional of an op and nullptr would build the op from nullptr and
  // convert that to a Value: keep both arms Values.
  if (isa<arith::ExtFOp>(clone))
    return dx[0] ? Value(arith::ExtFOp::create(t.b, t.loc, type, dx[0]))
                 : Value();
  if (isa<arith::TruncFOp>(clone))
    return dx[0] ? Value(arith::TruncFOp::create(t.b, t.loc, type, dx[0]))
                 : Value();
  // Comparisons, casts from integers, constants and index computations have
  // no tangent; any other operation with a tangent operand has no rule.
  if (!anyTangent || isa<arith::CmpFOp>(clone))
    return nullptr;
  failed = true;
  return nullptr;
}

FailureOr<Value> tofu::emitScalarDerivative(OpBuilder &b, Location loc,
                                            Value root, Value wrt,
                                            IRMapping &mapping,
                                            Operation *owner) {
  if (root == wrt)
    return TangentBuilder(b, loc).constant(wrt.getType(), 1.0);
  Block *block = wrt.getParentBlock();

  // The operations of the block that root depends on, in block order.
  llvm::DenseSet<Value> needed{root};
  SmallVector<Operation *> slice;
  for (Operation &op : llvm::reverse(block->without_terminator())) {
    if (llvm::none_of(op.getResults(),
                      [&](Value v) { return needed.contains(v); }))
      continue;
    slice.push_back(&op);
    for (Value operand : op.getOperands())
      needed.insert(operand);
    for (Value v : getCapturedValues(&op))
      needed.insert(v);
  }

  TangentBuilder t(b, loc);
  llvm::DenseMap<Value, Value> tangent;
  t.one = t.constant(wrt.getType(), 1.0);
  tangent[wrt] = t.one;
  for (Operation *op : llvm::reverse(slice)) {
    // No rule sees through regions: an operation whose regions read a
    // value with a tangent (an scf.if yielding one) is an error, not zero.
    if (llvm::any_of(getCapturedValues(op),
                     [&](Value v) { return tangent.contains(v); }))
      return owner->emitError("tofu-autodiff: cannot differentiate '")
             << op->getName() << "' in the body of '" << owner->getName()
             << "'";
    Operation *clone = b.clone(*op, mapping);
    SmallVector<Value> dx;
    for (Value operand : op->getOperands())
      dx.push_back(tangent.lookup(operand));
    if (op->getNumResults() != 1) {
      if (llvm::any_of(dx, [](Value v) { return bool(v); }))
        return owner->emitError("tofu-autodiff: cannot differentiate '")
               << op->getName() << "' in the body of '" << owner->getName()
               << "'";
      continue;
    }
    bool failed = false;
    Value d = tangentOf(t, clone, dx, failed);
    if (failed)
      return owner->emitError("tofu-autodiff: cannot differentiate '")
             << op->getName() << "' in the body of '" << owner->getName()
             << "'";
    if (d)
      tangent[op->getResult(0)] = d;
  }
  return tangent.lookup(root);
}

bool tofu::isTensorSum(linalg::GenericOp g) {
  if (!g.hasPureTensorSemantics() || g.getNumDpsInputs() != 2 ||
      g.getNumDpsInits() != 1 || g.getNumReductionLoops() != 0 ||
      !llvm::all_of(g.getIndexingMapsArray(),
                    [](AffineMap m) { return m.isIdentity(); }))
    return false;
  Type type = g->getResult(0).getType();
  if (g.getDpsInputs()[0].getType() != type ||
      g.getDpsInputs()[1].getType() != type)
    return false;
  Block *body = g.getBody();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add || add->getBlock() != body || body->getOperations().size() != 2)
    return false;
  Value a = body->getArgument(0), b = body->getArgument(1);
  return (add.getLhs() == a && add.getRhs() == b) ||
         (add.getLhs() == b && add.getRhs() == a);
}

tofu::Combiner tofu::matchCombiner(linalg::GenericOp g, Value &e) {
  Value acc = g.getMatchingBlockArgument(g.getDpsInitOperand(0));
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  Operation *def = yield.getOperand(0).getDefiningOp();
  if (!def || def->getBlock() != g.getBody() || def->getNumOperands() != 2)
    return Combiner::None;
  Combiner c = Combiner::None;
  if (isa<arith::AddFOp>(def))
    c = Combiner::Add;
  else if (isa<arith::MaximumFOp, arith::MaxNumFOp>(def))
    c = Combiner::Max;
  else if (isa<arith::MinimumFOp, arith::MinNumFOp>(def))
    c = Combiner::Min;
  if (c == Combiner::None)
    return c;
  Value lhs = def->getOperand(0), rhs = def->getOperand(1);
  if (lhs == acc && !dependsOn(rhs, acc))
    e = rhs;
  else if (rhs == acc && !dependsOn(lhs, acc))
    e = lhs;
  else
    return Combiner::None;
  return c;
}
