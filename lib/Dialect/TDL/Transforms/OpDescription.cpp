//===- OpDescription.cpp - Operations as TDL sees them --------------------===//
//
// Shapes and attached descriptions of operations.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Transforms/OpDescription.h"

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

using namespace mlir;
using namespace tofu;
using namespace tofu::tdl;

bool tofu::tdl::needsDescription(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() ||
      op->hasTrait<OpTrait::ConstantLike>() || isa<tensor::EmptyOp>(op))
    return false;
  return llvm::any_of(op->getResultTypes(),
                      [](Type t) { return isa<RankedTensorType>(t); });
}

static FailureOr<Shape> getShape(Type type, std::string &reason) {
  if (auto tensor = dyn_cast<RankedTensorType>(type)) {
    if (!tensor.hasStaticShape()) {
      reason = "dynamic shape " + std::to_string(tensor.getRank()) +
               "-d tensor is not supported";
      return failure();
    }
    return Shape(tensor.getShape().begin(), tensor.getShape().end());
  }
  if (type.isIntOrIndexOrFloat())
    return Shape();
  std::string s;
  llvm::raw_string_ostream os(s);
  os << "type " << type << " is neither a ranked tensor nor a scalar";
  reason = os.str();
  return failure();
}

FailureOr<OpShapes> tofu::tdl::getOpShapes(Operation *op, std::string &reason) {
  OpShapes shapes;
  // Captured tensors (a gather's table) are inputs after the operands.
  for (Value v : getDescribedInputs(op)) {
    auto s = getShape(v.getType(), reason);
    if (failed(s))
      return failure();
    shapes.inputs.push_back(*s);
  }
  for (Type t : op->getResultTypes()) {
    auto s = getShape(t, reason);
    if (failed(s))
      return failure();
    shapes.outputs.push_back(*s);
  }
  return shapes;
}

DescAttr tofu::tdl::getAttachedDesc(Operation *op) {
  return op->getAttrOfType<DescAttr>(TDLDialect::getDescAttrName());
}
