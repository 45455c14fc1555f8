//===- TDL.h - The TDL dialect ----------------------------------*- C++ -*-===//
//
// The TDL dialect and its `#tdl.desc` attribute.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TDL_IR_TDL_H
#define TOFU_DIALECT_TDL_IR_TDL_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Dialect.h"
#include "tofu/TDL/TDL.h"

#include "llvm/ADT/Hashing.h"

namespace tofu {
namespace tdl {
/// Descriptions are uniqued by their canonical text.
inline llvm::hash_code hash_value(const OpDesc &desc) {
  return llvm::hash_value(desc.str());
}
} // namespace tdl
} // namespace tofu

#include "tofu/Dialect/TDL/IR/TDLDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tofu/Dialect/TDL/IR/TDLAttributes.h.inc"

#endif // TOFU_DIALECT_TDL_IR_TDL_H
