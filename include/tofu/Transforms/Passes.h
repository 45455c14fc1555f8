//===- Passes.h - Tofu training-program passes ------------------*- C++ -*-===//
//
// Declarations of the passes that turn a forward model into a training step:
// reverse-mode automatic differentiation and the optimizer update.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_PASSES_H
#define TOFU_TRANSFORMS_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace tofu {

#define GEN_PASS_DECL
#include "tofu/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tofu/Transforms/Passes.h.inc"

} // namespace tofu

#endif // TOFU_TRANSFORMS_PASSES_H
