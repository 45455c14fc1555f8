//===- Tofu.h - The tofu dialect --------------------------------*- C++ -*-===//
//
// The dialect of partitioned programs: `#tofu.layout` and `tofu.fetch`.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TOFU_IR_TOFU_H
#define TOFU_DIALECT_TOFU_IR_TOFU_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "tofu/Dialect/Tofu/IR/TofuDialect.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tofu/Dialect/Tofu/IR/TofuAttributes.h.inc"

#define GET_OP_CLASSES
#include "tofu/Dialect/Tofu/IR/TofuOps.h.inc"

#endif // TOFU_DIALECT_TOFU_IR_TOFU_H
