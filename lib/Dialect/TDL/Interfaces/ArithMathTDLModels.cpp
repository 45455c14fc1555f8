//===- ArithMathTDLModels.cpp - TDL descriptions of arith/math ops --------===//
//
// Element-wise arith and math operations applied to ranked tensors:
// `(in0, in1) -> (d0, d1) = (in0[d0, d1] + in1[d0, d1])`.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace tofu::tdl;

namespace {

FailureOr<OpDesc> describeElementwise(Operation *op, std::string &reason) {
  if (!op->hasTrait<OpTrait::Elementwise>()) {
    reason = "the operation is not element-wise";
    return failure();
  }
  if (op->getNumResults() != 1) {
    reason = "element-wise operations with several results are not supported";
    return failure();
  }
  auto type = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape()) {
    reason = "the result is not a statically shaped tensor";
    return failure();
  }
  std::string dims = printDimList(type.getRank());
  std::string index = type.getRank() ? "[" + dims + "]" : "";
  std::vector<std::string> args;
  for (unsigned i = 0; i < op->getNumOperands(); ++i) {
    std::string name = "in" + std::to_string(i);
    bool tensor = isa<RankedTensorType>(op->getOperand(i).getType());
    args.push_back(name + (tensor ? index : ""));
  }
  std::string text = "(" + printOperandNames(op) + ") -> (" + dims +
                     ") = " + printScalarOp(op->getName().stripDialect(), args);
  return parseGeneratedDescription(text, reason);
}

template <typename OpTy>
struct ElementwiseTDLModel
    : public TDLOpInterface::ExternalModel<ElementwiseTDLModel<OpTy>, OpTy> {
  FailureOr<OpDesc> getTDLDescription(Operation *op,
                                      std::string &reason) const {
    return describeElementwise(op, reason);
  }
};

/// Attaches the model to the element-wise operations among OpTys.
template <typename... OpTys>
static void attachElementwiseModels(MLIRContext *ctx) {
  auto attach = [&](auto tag) {
    using OpTy = typename decltype(tag)::type;
    if constexpr (OpTy::template hasTrait<OpTrait::Elementwise>())
      OpTy::template attachInterface<ElementwiseTDLModel<OpTy>>(*ctx);
  };
  (attach(llvm::type_identity<OpTys>()), ...);
}

} // namespace

void tofu::tdl::registerArithMathTDLExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, arith::ArithDialect *) {
    attachElementwiseModels<
#define GET_OP_LIST
#include "mlir/Dialect/Arith/IR/ArithOps.cpp.inc"
        >(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, math::MathDialect *) {
    attachElementwiseModels<
#define GET_OP_LIST
#include "mlir/Dialect/Math/IR/MathOps.cpp.inc"
        >(ctx);
  });
}
