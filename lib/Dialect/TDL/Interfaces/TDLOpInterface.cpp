//===- TDLOpInterface.cpp - Operations that TDL can describe --------------===//
//
// The interface definitions and the registration of all external models.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Transforms/RegionUtils.h"

using namespace mlir;
using namespace tofu::tdl;

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.cpp.inc"

FailureOr<OpDesc> tofu::tdl::parseGeneratedDescription(const std::string &text,
                                                       std::string &reason) {
  ParseError error;
  std::optional<OpDesc> desc = parse(text, error);
  if (!desc) {
    reason =
        "the generated description '" + text + "' is invalid: " + error.message;
    return failure();
  }
  return *desc;
}

SmallVector<Value> tofu::tdl::getCapturedTensors(Operation *op) {
  SmallVector<Value> tensors;
  if (op->getNumRegions() == 0)
    return tensors;
  llvm::SetVector<Value> captured;
  getUsedValuesDefinedAbove(op->getRegions(), captured);
  for (Value v : captured)
    if (isa<RankedTensorType>(v.getType()))
      tensors.push_back(v);
  return tensors;
}

SmallVector<Value> tofu::tdl::getDescribedInputs(Operation *op) {
  SmallVector<Value> inputs(op->getOperands());
  llvm::append_range(inputs, getCapturedTensors(op));
  return inputs;
}

std::string tofu::tdl::printScalarOp(StringRef opName,
                                     ArrayRef<std::string> args) {
  auto binary = [&](const char *sym) {
    return "(" + args[0] + " " + sym + " " + args[1] + ")";
  };
  if (args.size() == 2) {
    if (opName == "addf" || opName == "addi")
      return binary("+");
    if (opName == "subf" || opName == "subi")
      return binary("-");
    if (opName == "mulf" || opName == "muli")
      return binary("*");
    if (opName == "divf" || opName == "divsi" || opName == "divui")
      return binary("/");
  }
  if (opName == "negf" && args.size() == 1)
    return "(-" + args[0] + ")";
  std::string call = opName.str() + "(";
  for (size_t i = 0; i < args.size(); ++i)
    call += (i ? ", " : "") + args[i];
  return call + ")";
}

std::string tofu::tdl::printDimList(unsigned rank) {
  std::string s;
  for (unsigned d = 0; d < rank; ++d)
    s += (d ? ", d" : "d") + std::to_string(d);
  return s;
}

std::string tofu::tdl::printDim(int64_t d) { return "d" + std::to_string(d); }

std::string tofu::tdl::printOperandNames(Operation *op) {
  std::string s;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    s += (i ? ", in" : "in") + std::to_string(i);
  return s;
}

void tofu::tdl::registerTDLExternalModels(DialectRegistry &registry) {
  registerLinalgTDLExternalModels(registry);
  registerArithMathTDLExternalModels(registry);
  registerTensorTDLExternalModels(registry);
  registerTosaTDLExternalModels(registry);
}
