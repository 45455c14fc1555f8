//===- LiftConstants.cpp - Weights baked in as constants to arguments -----===//
//
// The tofu-lift-constants pass: a forward export whose parameters are
// constants (torch-mlir's FX importer writes `dense_resource` constants)
// has nothing for tofu-autodiff to train. Every floating-point tensor
// constant that holds a parameter (not a splat, or a splat that a linalg op
// reads as an input) becomes a trailing argument of its function, named
// after its resource key so that weights can be selected by name.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "tofu/Transforms/ArgumentSelection.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

namespace tofu {
#define GEN_PASS_DEF_TOFULIFTCONSTANTS
#include "tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// True if `value` is read as a data input (not an init) of a linalg op, or
/// gathered inside one's body (an embedding table read with tensor.extract).
static bool isLinalgInput(Value value) {
  return llvm::any_of(value.getUses(), [](OpOperand &use) {
    Operation *owner = use.getOwner();
    if (auto linalgOp = dyn_cast<linalg::LinalgOp>(owner))
      return linalgOp.isDpsInput(&use);
    return isa<tensor::ExtractOp>(owner) &&
           owner->getParentOfType<linalg::LinalgOp>();
  });
}

/// True for a constant that holds a model's parameter: a floating-point
/// tensor of rank >= 1 whose elements are not all the same, or a splat that
/// a linalg op reads as an input or gathers from (exporters that drop the
/// weights' values write them as splats of 1; splats used as inits or
/// element-wise operands are fill values).
static bool isParameter(arith::ConstantOp cst) {
  auto type = dyn_cast<RankedTensorType>(cst.getType());
  if (!type || type.getRank() == 0 || !type.hasStaticShape() ||
      !isa<FloatType>(type.getElementType()))
    return false;
  if (auto dense = dyn_cast<DenseElementsAttr>(cst.getValue()))
    return !dense.isSplat() || isLinalgInput(cst.getResult());
  return isa<DenseResourceElementsAttr>(cst.getValue());
}

/// The name of the argument that replaces `cst`: its resource key, else
/// `const<index>`.
static std::string getParameterName(arith::ConstantOp cst, unsigned index) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(cst.getValue()))
    return resource.getRawHandle().getKey().str();
  return "const" + std::to_string(index);
}

struct TofuLiftConstantsPass
    : public tofu::impl::TofuLiftConstantsBase<TofuLiftConstantsPass> {
  using TofuLiftConstantsBase::TofuLiftConstantsBase;

  LogicalResult lift(func::FuncOp func);

  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() ||
          !(funcName.empty() ? func.isPublic() : func.getName() == funcName))
        continue;
      if (failed(lift(func)))
        return signalPassFailure();
    }
  }
};

} // namespace

LogicalResult TofuLiftConstantsPass::lift(func::FuncOp func) {
  SmallVector<arith::ConstantOp> constants;
  func.walk([&](arith::ConstantOp cst) {
    if (isParameter(cst))
      constants.push_back(cst);
  });
  OpBuilder b(func.getContext());
  for (auto [i, cst] : llvm::enumerate(constants)) {
    std::string name = getParameterName(cst, i);
    unsigned index = func.getNumArguments();
    Location loc = NameLoc::get(b.getStringAttr(name), cst.getLoc());
    if (failed(func.insertArgument(index, cst.getType(), {}, loc)))
      return emitFunctionError(func, "tofu-lift-constants: cannot add an "
                                     "argument to '@")
             << func.getName() << "'";
    func.setArgAttr(index, attrs::kName, b.getStringAttr(name));
    cst.getResult().replaceAllUsesWith(func.getArgument(index));
    cst.erase();
  }
  return success();
}
