//===- Passes.h - Tofu conversion passes ------------------------*- C++ -*-===//

#ifndef TOFU_CONVERSION_PASSES_H
#define TOFU_CONVERSION_PASSES_H

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"
#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"
#include "tofu/Conversion/TofuToMPI/EarlyDealloc.h"
#include "tofu/Conversion/TofuToMPI/TofuToMPI.h"

namespace tofu {

#define GEN_PASS_REGISTRATION
#include "tofu/Conversion/Passes.h.inc"

} // namespace tofu

#endif // TOFU_CONVERSION_PASSES_H
