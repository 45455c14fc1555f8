//===- InitAllPasses.h - Register every Tofu pass ---------------*- C++ -*-===//
//
// The entry point that a compiler embedding Tofu-MLIR calls to make every
// Tofu pass and pass pipeline available to its pass-pipeline parser and
// command line (for example an MlirOptMain driver).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_INITALLPASSES_H
#define TOFU_INITALLPASSES_H

namespace tofu {

/// Registers the TDL passes (tdl-attach), the training-program passes
/// (tofu-autodiff, tofu-optimizer, tofu-search), the partition passes
/// (tofu-partition, tofu-train-driver) and the conversions
/// (convert-tofu-to-mpi). Calling it more than once is harmless.
void registerAllPasses();

} // namespace tofu

#endif // TOFU_INITALLPASSES_H
