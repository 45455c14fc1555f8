//===- Passes.h - TDL passes ------------------------------------*- C++ -*-===//
//
// Declarations of the TDL passes.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TDL_TRANSFORMS_PASSES_H
#define TOFU_DIALECT_TDL_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "tofu/Dialect/TDL/IR/TDL.h"

namespace tofu {
namespace tdl {

#define GEN_PASS_DECL
#include "tofu/Dialect/TDL/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tofu/Dialect/TDL/Transforms/Passes.h.inc"

} // namespace tdl
} // namespace tofu

#endif // TOFU_DIALECT_TDL_TRANSFORMS_PASSES_H
