//===- TofuToCPU.h - Lowering training steps to the CPU ---------*- C++ -*-===//
//
// The passes of the CPU path (OpenBLAS calls, report) and the
// registration of tofu-cpu-pipeline, the lowering that tofu-run uses and
// that mlir-runner users can name. See docs/cpu.md.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CONVERSION_TOFUTOCPU_TOFUTOCPU_H
#define TOFU_CONVERSION_TOFUTOCPU_TOFUTOCPU_H

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"

#include "mlir/Pass/Pass.h"

namespace tofu {

#define GEN_PASS_DECL_CONVERTTOFUTOCPU
#define GEN_PASS_DECL_TOFUCPUREPORT
#define GEN_PASS_DECL_TOFUOUTLINELOOPS
#define GEN_PASS_DECL_TOFUCPUCOLLAPSELOOPS
#define GEN_PASS_DECL_TOFUCPUROWREDUCTIONS
#define GEN_PASS_DECL_TOFUCPUSCALARPOWERS
#define GEN_PASS_DECL_TOFUCPUSTRIDEDCOPIES
#define GEN_PASS_DECL_TOFUCPUUNITWINDOWS
#define GEN_PASS_DECL_TOFUAPPROXIMATEMATH
#define GEN_PASS_DECL_TOFULLVMRESULTSINMEMORY
#include "tofu/Conversion/Passes.h.inc"

/// Registers `tofu-cpu-pipeline` (docs/cpu.md).
void registerTofuCPUPipeline();

} // namespace tofu

#endif // TOFU_CONVERSION_TOFUTOCPU_TOFUTOCPU_H
