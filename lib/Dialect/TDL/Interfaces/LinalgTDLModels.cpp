//===- LinalgTDLModels.cpp - TDL descriptions of linalg ops ---------------===//
//
// Derives the TDL description of any linalg structured operation (named ops
// and linalg.generic) from its indexing maps, iterator types and body:
//
//   * loop dimension i becomes the index variable `d<i>`;
//   * operand n is the input `in<n>` (or `init<n>` for a DPS init), accessed
//     through its indexing map;
//   * each result is an output whose variables are the dimensions of its
//     (projected permutation) map;
//   * an output map with compound results, such as the `d2 + d5` of a
//     convolution's data gradient, is a scatter that TDL cannot write as a
//     lambda over the output: those output dimensions get variables of their
//     own that an opaque function produces whole (so they are never cut),
//     and every input dimension that mentions the scattered loops becomes a
//     slice;
//   * a reduction's combiner `out = f(out, x)` becomes the reducer of f
//     (addf/addi: sum, mulf/muli: prod, max*: max, min*: min) over x; a
//     body that does not read the accumulator over unit reduction loops (a
//     reduction over a broadcast dimension of size 1) is the sum of its one
//     term;
//   * a tensor that the body reads with tensor.extract from above is an
//     input `cap<i>` after the operands; each index of the read is affine
//     where it is a function of linalg.index values (a position or rotary
//     table), and otherwise `opaque(...)` of the values it is computed from
//     (an embedding lookup, `cap0[opaque(in0[d0, d1]), d2]`), which reads
//     that dimension whole;
//   * the body becomes an expression over the accesses; a body that is too
//     large to print is summarised as one element-wise function of the
//     values it reads.
//   * a reduction loop that no access indexes a dimension with by itself (it
//     appears only in the map of an operand the body does not read, through
//     linalg.index, or in a compound index such as a pooling window's
//     `2 * d2 + d4`) gets its extent declared from the op's static loop
//     ranges, `sum(d1 : 10)`.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <map>
#include <set>

using namespace mlir;
using namespace tofu::tdl;

namespace {

/// Prints an affine expression over loop dimensions as a TDL index.
static FailureOr<std::string> printAffine(AffineExpr e, std::string &reason) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return "d" + std::to_string(d.getPosition());
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return c.getValue() < 0 ? "(" + std::to_string(c.getValue()) + ")"
                            : std::to_string(c.getValue());
  if (isa<AffineSymbolExpr>(e)) {
    reason = "an indexing map uses a symbol";
    return failure();
  }
  auto bin = cast<AffineBinaryOpExpr>(e);
  auto lhs = printAffine(bin.getLHS(), reason);
  auto rhs = printAffine(bin.getRHS(), reason);
  if (failed(lhs) || failed(rhs))
    return failure();
  const char *op = "";
  switch (e.getKind()) {
  case AffineExprKind::Add:
    op = " + ";
    break;
  case AffineExprKind::Mul:
    op = " * ";
    break;
  case AffineExprKind::FloorDiv:
    op = " floordiv ";
    break;
  case AffineExprKind::CeilDiv:
    op = " ceildiv ";
    break;
  case AffineExprKind::Mod:
    op = " mod ";
    break;
  default:
    reason = "unsupported affine expression";
    return failure();
  }
  return "(" + *lhs + op + *rhs + ")";
}

static FailureOr<std::string> printAccess(const std::string &name,
                                          AffineMap map, std::string &reason) {
  std::string s = name;
  if (map.getNumResults() == 0)
    return s;
  s += "[";
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    auto idx = printAffine(e, reason);
    if (failed(idx))
      return failure();
    s += (i ? ", " : "") + *idx;
  }
  return s + "]";
}

/// Prints an access in which every dimension that mentions a loop in
/// `hidden` is a whole slice, or, where `outputVars` names one, the output
/// variable of that position.
static std::string printScatterAccess(const std::string &name, AffineMap map,
                                      const llvm::SmallBitVector &hidden,
                                      const std::vector<std::string> *outputVars,
                                      std::string &reason) {
  std::string s = name;
  if (map.getNumResults() == 0)
    return s;
  s += "[";
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    bool mentionsHidden = false;
    e.walk([&](AffineExpr sub) {
      if (auto d = dyn_cast<AffineDimExpr>(sub))
        mentionsHidden |= hidden.test(d.getPosition());
    });
    std::string idx;
    if (outputVars && (mentionsHidden || !isa<AffineDimExpr>(e)))
      idx = (*outputVars)[i];
    else if (mentionsHidden)
      idx = ":";
    else
      idx = succeeded(printAffine(e, reason)) ? *printAffine(e, reason) : ":";
    s += (i ? ", " : "") + idx;
  }
  return s + "]";
}

/// The description of a linalg op whose output map has compound results
/// (see the file comment).
static FailureOr<std::string>
describeScatter(linalg::LinalgOp op, const std::vector<std::string> &names,
                std::string &reason) {
  if (op->getNumResults() != 1) {
    reason = "a scatter (compound output map) with several results";
    return failure();
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap map = op.getMatchingIndexingMap(init);
  llvm::SmallBitVector hidden(op.getNumLoops());
  std::vector<std::string> outputVars;
  for (auto [i, e] : llvm::enumerate(map.getResults())) {
    if (auto d = dyn_cast<AffineDimExpr>(e)) {
      outputVars.push_back("d" + std::to_string(d.getPosition()));
      continue;
    }
    outputVars.push_back("o" + std::to_string(i));
    e.walk([&](AffineExpr sub) {
      if (auto d = dyn_cast<AffineDimExpr>(sub))
        hidden.set(d.getPosition());
    });
  }
  // Reductions over loops the scatter does not hide stay reductions.
  auto iterators = op.getIteratorTypesArray();
  std::vector<unsigned> reductionDims;
  for (unsigned d = 0; d < iterators.size(); ++d)
    if (iterators[d] == utils::IteratorType::reduction && !hidden.test(d))
      reductionDims.push_back(d);
  std::string args;
  for (OpOperand &operand : op->getOpOperands()) {
    if (&operand == init)
      continue;
    args += (args.empty() ? "" : ", ") +
            printScatterAccess(names[operand.getOperandNumber()],
                               op.getMatchingIndexingMap(&operand), hidden,
                               nullptr, reason);
  }
  std::string initAccess = printScatterAccess(
      names[init->getOperandNumber()], map, hidden, &outputVars, reason);
  std::string text = "(";
  for (size_t i = 0; i < names.size(); ++i)
    text += (i ? ", " : "") + names[i];
  text += ") -> (";
  for (size_t i = 0; i < outputVars.size(); ++i)
    text += (i ? ", " : "") + outputVars[i];
  text += ") = " + initAccess + " + ";
  if (reductionDims.empty())
    return text + "opaque(" + args + ")";
  text += "(sum(";
  for (size_t i = 0; i < reductionDims.size(); ++i)
    text += (i ? ", " : "") + std::string("d") +
            std::to_string(reductionDims[i]);
  return text + ") opaque(" + args + "))";
}

/// An index value of a body as an affine TDL index, and whether it is known
/// to be non-negative (which makes signed and unsigned division floordiv).
struct AffineIndex {
  std::string text;
  bool nonNegative = false;
};

/// The affine form of an index computed in the body of `op` from
/// `linalg.index` values and constants with add, sub, mul by a constant,
/// and division or remainder of a non-negative value by a positive constant
/// (through index casts). std::nullopt for anything else, such as an index
/// read from a tensor.
static std::optional<AffineIndex> getAffineIndex(Value v, Operation *op,
                                                 unsigned depth = 0) {
  if (depth > 32)
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (!def)
    return std::nullopt;
  if (auto index = dyn_cast<linalg::IndexOp>(def)) {
    if (!op->isProperAncestor(def))
      return std::nullopt;
    return AffineIndex{"d" + std::to_string(index.getDim()), true};
  }
  if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
    auto i = dyn_cast<IntegerAttr>(cst.getValue());
    if (!i || i.getValue().getSignificantBits() > 63)
      return std::nullopt;
    int64_t val = i.getValue().getSExtValue();
    return AffineIndex{val < 0 ? "(" + std::to_string(val) + ")"
                               : std::to_string(val),
                       val >= 0};
  }
  if (!op->isProperAncestor(def))
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(def))
    return getAffineIndex(def->getOperand(0), op, depth + 1);
  if (def->getNumOperands() != 2)
    return std::nullopt;
  auto lhs = getAffineIndex(def->getOperand(0), op, depth + 1);
  auto rhs = getAffineIndex(def->getOperand(1), op, depth + 1);
  if (!lhs || !rhs)
    return std::nullopt;
  auto positiveConstant = [](const AffineIndex &x) {
    return x.nonNegative && x.text != "0" &&
           x.text.find_first_not_of("0123456789") == std::string::npos;
  };
  auto binary = [&](const char *opText, bool nonNegative) {
    return AffineIndex{"(" + lhs->text + opText + rhs->text + ")",
                       nonNegative};
  };
  if (isa<arith::AddIOp>(def))
    return binary(" + ", lhs->nonNegative && rhs->nonNegative);
  if (isa<arith::SubIOp>(def))
    return binary(" - ", false);
  if (isa<arith::MulIOp>(def)) {
    bool lhsConst = lhs->text.find('d') == std::string::npos;
    bool rhsConst = rhs->text.find('d') == std::string::npos;
    if (!lhsConst && !rhsConst)
      return std::nullopt;
    return binary(" * ", lhs->nonNegative && rhs->nonNegative);
  }
  if (!positiveConstant(*rhs))
    return std::nullopt;
  if (isa<arith::FloorDivSIOp>(def) ||
      (lhs->nonNegative && isa<arith::DivSIOp, arith::DivUIOp>(def)))
    return binary(" floordiv ", lhs->nonNegative);
  if (isa<arith::CeilDivSIOp>(def) ||
      (lhs->nonNegative && isa<arith::CeilDivUIOp>(def)))
    return binary(" ceildiv ", lhs->nonNegative);
  if (lhs->nonNegative && isa<arith::RemSIOp, arith::RemUIOp>(def))
    return binary(" mod ", true);
  return std::nullopt;
}

/// Builds TDL expressions from the scalar body of a linalg op.
class BodyPrinter {
public:
  BodyPrinter(linalg::LinalgOp op, std::vector<std::string> operandNames,
              ArrayRef<Value> captured)
      : op(op), names(std::move(operandNames)), captured(captured) {}

  /// The expression for `v`, or failure with `reason`.
  FailureOr<std::string> print(Value v, std::string &reason) {
    if (++nodes > kMaxNodes) {
      tooLarge = true;
      return std::string("0");
    }
    if (llvm::is_contained(captured, v)) {
      reason = "the body uses a captured tensor other than through "
               "tensor.extract";
      return failure();
    }
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      if (arg.getOwner() != op.getBlock())
        return std::string("captured()");
      OpOperand *operand = op.getMatchingOpOperand(arg);
      unsigned n = operand->getOperandNumber();
      if (!leaves.count(n)) {
        auto access =
            printAccess(names[n], op.getMatchingIndexingMap(operand), reason);
        if (failed(access))
          return failure();
        leaves[n] = *access;
      }
      return leaves[n];
    }
    Operation *def = v.getDefiningOp();
    if (!def)
      return std::string("captured()");
    if (auto cst = dyn_cast<arith::ConstantOp>(def)) {
      if (auto f = dyn_cast<FloatAttr>(cst.getValue())) {
        double d = f.getValueAsDouble();
        if (std::isinf(d) || std::isnan(d))
          return std::string("captured()");
        return d < 0 ? "(-" + formatNumber(-d) + ")" : formatNumber(d);
      }
      if (auto i = dyn_cast<IntegerAttr>(cst.getValue())) {
        int64_t val = i.getType().isInteger(1)
                          ? (int64_t)i.getValue().getZExtValue()
                          : i.getValue().getSExtValue();
        return val < 0 ? "(" + std::to_string(val) + ")" : std::to_string(val);
      }
      return std::string("captured()");
    }
    // Other values defined outside the body are opaque scalars.
    if (!op->isProperAncestor(def))
      return std::string("captured()");
    if (auto index = dyn_cast<linalg::IndexOp>(def))
      return "d" + std::to_string(index.getDim());
    if (auto extract = dyn_cast<tensor::ExtractOp>(def))
      return printExtract(extract, reason);
    if (def->getNumRegions() != 0) {
      reason = "the body contains a region-holding op '" +
               def->getName().getStringRef().str() + "'";
      return failure();
    }
    std::vector<std::string> args;
    for (Value operand : def->getOperands()) {
      auto a = print(operand, reason);
      if (failed(a))
        return failure();
      args.push_back(*a);
    }
    return printScalarOp(def->getName().stripDialect(), args);
  }

  bool isTooLarge() const { return tooLarge; }

  /// An element-wise function of every value the body reads: each used
  /// operand through its indexing map and each captured tensor whole (the
  /// printer may have stopped before reaching them).
  std::string summary() {
    std::string s = "body(";
    bool first = true;
    std::string reason;
    for (BlockArgument arg : op.getBlock()->getArguments()) {
      if (arg.use_empty())
        continue;
      OpOperand *operand = op.getMatchingOpOperand(arg);
      unsigned n = operand->getOperandNumber();
      auto access =
          printAccess(names[n], op.getMatchingIndexingMap(operand), reason);
      if (succeeded(access))
        leaves[n] = *access;
    }
    for (auto &[n, access] : leaves) {
      s += (first ? "" : ", ") + access;
      first = false;
    }
    for (auto [i, v] : llvm::enumerate(captured)) {
      s += (first ? "" : ", ") + captureName(i);
      first = false;
      auto type = cast<RankedTensorType>(v.getType());
      if (type.getRank() == 0)
        continue;
      s += "[";
      for (int64_t d = 0; d < type.getRank(); ++d)
        s += d ? ", :" : ":";
      s += "]";
    }
    return s + ")";
  }

private:
  std::string captureName(size_t i) const {
    return names[names.size() - captured.size() + i];
  }

  /// `cap<i>[...]` for a read of a captured tensor: each index affine where
  /// it is a function of the loops, and `opaque(...)` of the values it is
  /// computed from otherwise (a gather: that dimension is read whole).
  FailureOr<std::string> printExtract(tensor::ExtractOp extract,
                                      std::string &reason) {
    const Value *it = llvm::find(captured, extract.getTensor());
    if (it == captured.end()) {
      reason = "the body reads a tensor that it computes itself "
               "(tensor.extract)";
      return failure();
    }
    std::string s = captureName(it - captured.begin());
    if (extract.getIndices().empty())
      return s;
    s += "[";
    for (auto [i, index] : llvm::enumerate(extract.getIndices())) {
      s += i ? ", " : "";
      if (std::optional<AffineIndex> affine = getAffineIndex(index, op)) {
        s += affine->text;
        continue;
      }
      auto value = print(index, reason);
      if (failed(value))
        return failure();
      s += "opaque(" + *value + ")";
    }
    return s + "]";
  }

  static std::string formatNumber(double d) {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << llvm::format("%g", d);
    os.flush();
    if (s.find_first_of(".e") == std::string::npos)
      s += ".0";
    return s;
  }

  static constexpr unsigned kMaxNodes = 256;
  linalg::LinalgOp op;
  /// Operand names, then the names of the captured tensors.
  std::vector<std::string> names;
  ArrayRef<Value> captured;
  std::map<unsigned, std::string> leaves;
  unsigned nodes = 0;
  bool tooLarge = false;
};

/// Adds to `bare` every variable that an access of `e` (or of an expression
/// nested in it) indexes a dimension with by itself, and to `reduced` the
/// variables of the reductions nested in it.
static void collectVars(const Expr &e, std::set<std::string> &bare,
                        std::vector<std::string> &reduced) {
  SmallVector<const Expr *> worklist{&e};
  while (!worklist.empty()) {
    const Expr *x = worklist.pop_back_val();
    if (x->kind == Expr::Kind::Access)
      for (const IndexExpr &i : x->indices)
        if (i.isVar())
          bare.insert(i.var);
    if (x->kind == Expr::Kind::Reduce)
      llvm::append_range(reduced, x->reductionVars);
    for (const Expr &operand : x->operands)
      worklist.push_back(&operand);
  }
}

/// Declares the extent of every reduction loop of `op` that no access of
/// `desc` indexes a dimension with by itself. The shapes of the accessed
/// tensors cannot give it when the body does not read the operands whose
/// maps mention it (a class loop seen only through `linalg.index`), and
/// give it only approximately through a compound index (`x * 7 + kx` into a
/// padded tensor, solved for its last element). Its extent is the op's
/// static loop range, which the shapes of all its operands determine.
static void declareReductionExtents(linalg::LinalgOp op, OpDesc &desc) {
  std::set<std::string> bare;
  std::vector<std::string> reduced;
  for (const OutputDesc &out : desc.outputs) {
    llvm::append_range(reduced, out.reductionVars);
    collectVars(out.body, bare, reduced);
  }
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (const std::string &var : reduced) {
    unsigned dim;
    if (bare.count(var) || var.size() < 2 || var[0] != 'd' ||
        StringRef(var).drop_front().getAsInteger(10, dim) ||
        dim >= ranges.size() || ShapedType::isDynamic(ranges[dim]))
      continue;
    desc.declaredExtents.emplace(var, ranges[dim]);
  }
}

/// The reducer of a combiner op name, if it is one.
static std::optional<std::string> getReducer(StringRef name) {
  if (name == "addf" || name == "addi")
    return "sum";
  if (name == "mulf" || name == "muli")
    return "prod";
  if (name == "maximumf" || name == "maxnumf" || name == "maxsi" ||
      name == "maxui")
    return "max";
  if (name == "minimumf" || name == "minnumf" || name == "minsi" ||
      name == "minui")
    return "min";
  return std::nullopt;
}

FailureOr<OpDesc> describeLinalgOp(linalg::LinalgOp op, std::string &reason) {
  if (!op.hasPureTensorSemantics()) {
    reason = "the operation works on buffers, not tensors";
    return failure();
  }
  if (op.hasDynamicShape()) {
    reason = "the operation has dynamic shapes";
    return failure();
  }
  std::vector<std::string> names;
  for (OpOperand &operand : op->getOpOperands()) {
    bool init = op.isDpsInit(&operand);
    unsigned n = init ? operand.getOperandNumber() - op.getNumDpsInputs()
                      : operand.getOperandNumber();
    names.push_back((init ? "init" : "in") + std::to_string(n));
  }
  // Tensors the body reads from above (an embedding table) are inputs too.
  SmallVector<Value> captured = getCapturedTensors(op);
  for (auto [i, v] : llvm::enumerate(captured)) {
    auto type = cast<RankedTensorType>(v.getType());
    if (!type.hasStaticShape()) {
      reason = "the body reads a captured tensor of dynamic shape";
      return failure();
    }
    names.push_back("cap" + std::to_string(i));
  }
  auto iterators = op.getIteratorTypesArray();
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  std::string text = "(";
  for (size_t i = 0; i < names.size(); ++i)
    text += (i ? ", " : "") + names[i];
  text += ") -> ";

  unsigned numResults = op->getNumResults();
  for (unsigned r = 0; r < numResults; ++r) {
    OpOperand *init = op.getDpsInitOperand(r);
    AffineMap map = op.getMatchingIndexingMap(init);
    if (!map.isProjectedPermutation(/*allowZeroInResults=*/true)) {
      if (!captured.empty()) {
        reason = "a scatter (compound output map) whose body reads captured "
                 "tensors";
        return failure();
      }
      auto scatter = describeScatter(op, names, reason);
      if (failed(scatter))
        return failure();
      return parseGeneratedDescription(*scatter, reason);
    }
    if (r)
      text += "; ";
    if (numResults > 1)
      text += "out" + std::to_string(r);
    text += "(";
    // A constant 0 in the output map is a kept unit dimension (keepdim
    // reductions): it gets a variable of its own, of extent 1.
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      std::string var =
          isa<AffineDimExpr>(e)
              ? "d" + std::to_string(cast<AffineDimExpr>(e).getPosition())
              : "u" + std::to_string(r) + "_" + std::to_string(i);
      text += (i ? ", " : "") + var;
    }
    text += ") = ";

    // Reduction dimensions: those not in the output map.
    std::vector<unsigned> reductionDims;
    for (unsigned d = 0; d < iterators.size(); ++d)
      if (iterators[d] == utils::IteratorType::reduction)
        reductionDims.push_back(d);

    BodyPrinter printer(op, names, captured);
    Value yielded = yield.getOperand(r);
    BlockArgument outArg = op.getMatchingBlockArgument(init);
    std::string expr;
    if (!reductionDims.empty()) {
      Operation *combiner = yielded.getDefiningOp();
      std::optional<std::string> reducer;
      Value x;
      if (combiner && combiner->getNumOperands() == 2 &&
          combiner->getBlock() == body) {
        reducer = getReducer(combiner->getName().stripDialect());
        if (combiner->getOperand(0) == outArg)
          x = combiner->getOperand(1);
        else if (combiner->getOperand(1) == outArg)
          x = combiner->getOperand(0);
      }
      // A body that ignores the accumulator yields its value at the last
      // reduction iteration. With unit reduction loops (a reduction over a
      // broadcast dimension of size 1) that is the one term of a sum.
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (outArg.use_empty() && llvm::all_of(reductionDims, [&](unsigned d) {
            return ranges[d] == 1;
          })) {
        reducer = "sum";
        x = yielded;
      }
      if (!reducer || !x) {
        reason = "result " + std::to_string(r) +
                 " has reduction loops but its combiner is not an "
                 "add, mul, max or min of the accumulator";
        return failure();
      }
      auto body = printer.print(x, reason);
      if (failed(body))
        return failure();
      std::string reduction = *reducer + "(";
      for (size_t i = 0; i < reductionDims.size(); ++i)
        reduction += (i ? ", " : "") + std::string("d") +
                     std::to_string(reductionDims[i]);
      reduction +=
          ") " + (printer.isTooLarge() ? printer.summary() : "(" + *body + ")");
      // The reduction starts from the init operand's value.
      auto initAccess =
          printAccess(names[init->getOperandNumber()], map, reason);
      if (failed(initAccess))
        return failure();
      if (x == yielded)
        expr = reduction;
      else if (*reducer == "sum")
        expr = *initAccess + " + (" + reduction + ")";
      else if (*reducer == "prod")
        expr = *initAccess + " * (" + reduction + ")";
      else
        expr = *reducer + "(" + *initAccess + ", " + reduction + ")";
    } else {
      auto body = printer.print(yielded, reason);
      if (failed(body))
        return failure();
      expr = printer.isTooLarge() ? printer.summary() : *body;
    }
    text += expr;
  }
  FailureOr<OpDesc> desc = parseGeneratedDescription(text, reason);
  if (succeeded(desc))
    declareReductionExtents(op, *desc);
  return desc;
}

template <typename OpTy>
struct LinalgTDLModel
    : public TDLOpInterface::ExternalModel<LinalgTDLModel<OpTy>, OpTy> {
  FailureOr<OpDesc> getTDLDescription(Operation *op,
                                      std::string &reason) const {
    return describeLinalgOp(cast<linalg::LinalgOp>(op), reason);
  }
};

template <typename... OpTys> static void attachLinalgModels(MLIRContext *ctx) {
  (OpTys::template attachInterface<LinalgTDLModel<OpTys>>(*ctx), ...);
}

} // namespace

void tofu::tdl::registerLinalgTDLExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, linalg::LinalgDialect *) {
    attachLinalgModels<linalg::GenericOp,
#define GET_OP_LIST
#include "mlir/Dialect/Linalg/IR/LinalgStructuredOps.cpp.inc"
                       >(ctx);
  });
}
