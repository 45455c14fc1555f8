//===- TDLDialect.cpp - The TDL dialect -----------------------------------===//
//
// Registers the TDL dialect and parses and prints `#tdl.desc<...>` with the
// TDL text syntax.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/IR/TDL.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tofu::tdl;

#include "tofu/Dialect/TDL/IR/TDLDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tofu/Dialect/TDL/IR/TDLAttributes.cpp.inc"

void TDLDialect::initialize() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tofu/Dialect/TDL/IR/TDLAttributes.cpp.inc"
      >();
}

DescAttr DescAttr::parse(MLIRContext *context, StringRef text,
                         std::string &error) {
  ParseError perr;
  std::optional<OpDesc> desc = tofu::tdl::parse(text.str(), perr);
  if (!desc) {
    error = perr.message;
    return {};
  }
  return DescAttr::get(context, *desc);
}

Attribute TDLDialect::parseAttribute(DialectAsmParser &parser,
                                     Type type) const {
  // The whole `desc<...>` body is handed to TDL's own parser.
  StringRef spec = parser.getFullSymbolSpec();
  SMLoc loc = parser.getCurrentLocation();
  if (!spec.consume_front("desc<") || !spec.consume_back(">")) {
    parser.emitError(loc, "unknown tdl attribute: ") << spec;
    return {};
  }
  std::string error;
  DescAttr attr = DescAttr::parse(getContext(), spec.trim(), error);
  if (!attr)
    parser.emitError(loc, "invalid TDL description: ") << error;
  return attr;
}

void TDLDialect::printAttribute(Attribute attr,
                                DialectAsmPrinter &printer) const {
  if (auto desc = dyn_cast<DescAttr>(attr)) {
    printer << "desc<" << desc.getDesc().str() << ">";
    return;
  }
  llvm_unreachable("unknown tdl attribute");
}
