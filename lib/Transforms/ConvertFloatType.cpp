//===- ConvertFloatType.cpp - Convert a program between float types -------===//
//
// The tofu-convert-float-type pass: every use of one float type in a module
// (types of values, block arguments and signatures, float attributes and
// dense constants) becomes another, so that a training step in f32 runs in
// f64 or back. Ops that cannot follow the change are diagnosed before
// anything is rewritten, so that a failure leaves the module unchanged.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AttrTypeSubElements.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tofu-convert-float-type"

namespace tofu {
#define GEN_PASS_DEF_TOFUCONVERTFLOATTYPE
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// Whether `type` is or contains `from`.
bool containsType(Type type, Type from) {
  bool found = false;
  type.walk([&](Type t) {
    if (t == from)
      found = true;
  });
  return found;
}

/// Whether `attr` is or contains `from`.
bool containsType(Attribute attr, Type from) {
  bool found = false;
  attr.walk([&](Type t) {
    if (t == from)
      found = true;
  });
  return found;
}

/// The first attribute of `op` that holds elements of a type containing
/// `from` and that the pass cannot convert (anything but a DenseFPElements
/// literal of `from` itself), or null.
Attribute findUnconvertibleElements(Operation *op, Type from) {
  Attribute bad;
  op->getAttrDictionary().walk([&](Attribute attr) {
    auto elements = dyn_cast<ElementsAttr>(attr);
    if (!elements || bad || !containsType(elements.getType(), from))
      return;
    auto dense = dyn_cast<DenseFPElementsAttr>(attr);
    if (!dense || dense.getElementType() != from)
      bad = attr;
  });
  return bad;
}

/// The dialects whose ops follow a change of element type without anything
/// but their types and attributes changing.
const llvm::StringSet<> &getConvertibleDialects() {
  static const llvm::StringSet<> dialects = {
      "builtin", "func", "arith",  "math",          "linalg", "tensor",
      "scf",     "cf",   "memref", "bufferization", "affine", "complex",
      "ub",      "tofu", "tdl",    "shard"};
  return dialects;
}

/// Checks that every op of `module` that uses `from` can be converted;
/// reports each that cannot.
LogicalResult checkConvertible(ModuleOp module, Type from) {
  bool ok = true;
  const llvm::StringSet<> &dialects = getConvertibleDialects();
  module.walk([&](Operation *op) {
    bool usesFrom =
        llvm::any_of(op->getOperandTypes(),
                     [&](Type t) { return containsType(t, from); }) ||
        llvm::any_of(op->getResultTypes(),
                     [&](Type t) { return containsType(t, from); }) ||
        containsType(op->getAttrDictionary(), from) ||
        llvm::any_of(op->getRegions(), [&](Region &region) {
          return llvm::any_of(region.getArguments(), [&](BlockArgument arg) {
            return containsType(arg.getType(), from);
          });
        });
    if (!usesFrom)
      return;
    StringRef dialect = op->getName().getDialectNamespace();
    if (!dialects.contains(dialect)) {
      op->emitOpError() << "uses " << from << " but ops of dialect '" << dialect
                        << "' are not supported by tofu-convert-float-type";
      ok = false;
      return;
    }
    if (op->getName().getStringRef().contains("bitcast")) {
      op->emitOpError() << "reinterprets the bits of " << from
                        << " values, which has no meaning after the "
                           "conversion";
      ok = false;
      return;
    }
    if (auto func = dyn_cast<func::FuncOp>(op); func && func.isExternal()) {
      func.emitOpError() << "is a declaration whose signature uses " << from
                         << "; its callee would still expect it";
      ok = false;
      return;
    }
    if (Attribute bad = findUnconvertibleElements(op, from)) {
      op->emitOpError() << "holds a constant of " << from
                        << " elements that is not a dense literal (" << bad
                        << "); lift it to an argument first "
                        << "(tofu-lift-constants)";
      ok = false;
    }
  });
  return success(ok);
}

/// `value` converted to the semantics of `to` (round to nearest even).
APFloat convertValue(APFloat value, FloatType to) {
  bool losesInfo = false;
  value.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
  return value;
}

/// Replaces the arith.extf and arith.truncf ops whose types became equal by
/// their operand, and flips those whose direction changed.
void fixCasts(ModuleOp module) {
  SmallVector<Operation *> casts;
  module.walk([&](Operation *op) {
    if (isa<arith::ExtFOp, arith::TruncFOp>(op))
      casts.push_back(op);
  });
  for (Operation *op : casts) {
    Value in = op->getOperand(0);
    Type inType = getElementTypeOrSelf(in.getType());
    Type outType = getElementTypeOrSelf(op->getResult(0).getType());
    auto inFloat = dyn_cast<FloatType>(inType);
    auto outFloat = dyn_cast<FloatType>(outType);
    if (!inFloat || !outFloat)
      continue;
    if (in.getType() == op->getResult(0).getType()) {
      LLVM_DEBUG(llvm::dbgs() << "removing " << *op << "\n");
      op->getResult(0).replaceAllUsesWith(in);
      op->erase();
      continue;
    }
    bool widens = inFloat.getWidth() < outFloat.getWidth();
    OpBuilder b(op);
    Value cast;
    if (isa<arith::TruncFOp>(op) && widens)
      cast = arith::ExtFOp::create(b, op->getLoc(), op->getResult(0).getType(),
                                   in);
    else if (isa<arith::ExtFOp>(op) && !widens)
      cast = arith::TruncFOp::create(b, op->getLoc(),
                                     op->getResult(0).getType(), in);
    if (!cast)
      continue;
    cast.getDefiningOp()->setDiscardableAttrs(
        op->getDiscardableAttrDictionary());
    op->getResult(0).replaceAllUsesWith(cast);
    op->erase();
  }
}

struct ConvertFloatTypePass
    : public tofu::impl::TofuConvertFloatTypeBase<ConvertFloatTypePass> {
  using Base::Base;

  /// The float type named `name`, or null after reporting why not.
  FloatType parseFloatType(StringRef option, StringRef name) {
    MLIRContext *ctx = &getContext();
    Type type = mlir::parseType(name, ctx, /*numRead=*/nullptr,
                                /*isKnownNullTerminated=*/false);
    auto floatType = dyn_cast_or_null<FloatType>(type);
    if (!floatType)
      getOperation().emitError()
          << "tofu-convert-float-type: '" << option
          << "' must be a float type such as f32 or f64, not '" << name << "'";
    return floatType;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    FloatType from = parseFloatType("from", fromType);
    FloatType to = parseFloatType("to", toType);
    if (!from || !to)
      return signalPassFailure();
    if (from == to)
      return;
    if (failed(checkConvertible(module, from)))
      return signalPassFailure();

    AttrTypeReplacer replacer;
    replacer.addReplacement([&](FloatType type) -> std::optional<Type> {
      if (type == from)
        return Type(to);
      return std::nullopt;
    });
    replacer.addReplacement(
        [&](FloatAttr attr) -> std::pair<Attribute, WalkResult> {
          if (attr.getType() != from)
            return {attr, WalkResult::advance()};
          return {FloatAttr::get(to, convertValue(attr.getValue(), to)),
                  WalkResult::skip()};
        });
    replacer.addReplacement(
        [&](DenseFPElementsAttr attr) -> std::pair<Attribute, WalkResult> {
          if (attr.getElementType() != from)
            return {attr, WalkResult::advance()};
          Attribute converted = attr.mapValues(to, [&](const APFloat &value) {
            return convertValue(value, to).bitcastToAPInt();
          });
          return {converted, WalkResult::skip()};
        });
    replacer.recursivelyReplaceElementsIn(module, /*replaceAttrs=*/true,
                                          /*replaceLocs=*/false,
                                          /*replaceTypes=*/true);
    fixCasts(module);
  }
};

} // namespace
