//===- Passes.h - Tofu training-program passes ------------------*- C++ -*-===//
//
// Declarations of the passes that turn a forward model into a training step:
// loop unrolling, the loss, reverse-mode automatic differentiation and the
// optimizer update, and of the pipeline that runs them up to the search.
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

/// Registers tofu-train-pipeline, from a forward model to a plan: inline,
/// symbol-dce, tofu-unroll-loops, tofu-loss, tofu-autodiff, tofu-optimizer,
/// tdl-attach and tofu-search (docs/training.md).
void registerTofuTrainPipeline();

} // namespace tofu

#endif // TOFU_TRANSFORMS_PASSES_H
