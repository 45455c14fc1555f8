//===- OpenBLASCore.h - OpenBLAS's kernels for CPUs it does not know ------===//

#ifndef TOFU_TOOLS_TOFU_RUN_OPENBLASCORE_H
#define TOFU_TOOLS_TOFU_RUN_OPENBLASCORE_H

#include <string>

namespace tofu {

/// Before OpenBLAS loads: if it would fall back to its SSE3 kernels on a CPU
/// with AVX-512 or AVX2 (a CPU newer than the library), sets
/// OPENBLAS_CORETYPE to the kernels the CPU runs and returns a note saying
/// so; otherwise (or when OPENBLAS_CORETYPE is set) returns "".
std::string selectOpenBLASCore();

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_OPENBLASCORE_H
