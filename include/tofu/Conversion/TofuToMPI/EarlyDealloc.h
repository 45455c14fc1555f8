//===- EarlyDealloc.h - Free buffers after their last use -------*- C++ -*-===//

#ifndef TOFU_CONVERSION_TOFUTOMPI_EARLYDEALLOC_H
#define TOFU_CONVERSION_TOFUTOMPI_EARLYDEALLOC_H

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Pass/Pass.h"

namespace tofu {

#define GEN_PASS_DECL_TOFUEARLYDEALLOC
#define GEN_PASS_DECL_TOFUSPLITCALLDEALLOCS
#define GEN_PASS_DECL_TOFUSIMPLIFYDEALLOCS
#define GEN_PASS_DECL_TOFUINLINEEXECUTEREGIONS
#include "tofu/Conversion/Passes.h.inc"

} // namespace tofu

#endif // TOFU_CONVERSION_TOFUTOMPI_EARLYDEALLOC_H
