//===- InitAllPasses.h - Register every Tofu pass ---------------*- C++ -*-===//
//
// The entry point that a compiler embedding Tofu-MLIR calls to make every
// Tofu pass and pass pipeline available to its pass-pipeline parser and
// command line (for example an MlirOptMain driver).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_INITALLPASSES_H
#define TOFU_INITALLPASSES_H

#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace tofu {

/// Registers the TDL passes (tdl-attach), the training-program passes
/// (tofu-autodiff, tofu-optimizer, tofu-search), the partition passes
/// (tofu-partition, tofu-train-driver) and the conversions
/// (convert-tofu-to-mpi). Calling it more than once is harmless.
void registerAllPasses();

/// The option names of the registered pass or pass pipeline `argument`
/// (as its command-line flag spells it, without dashes), or std::nullopt
/// when no pass has that argument or its options cannot be listed.
std::optional<std::vector<std::string>>
getPassOptionNames(llvm::StringRef argument);

/// Checks the options of every `--<pass>=<options>` flag in `argv` against
/// the pass's (or pipeline's) option names; for an unknown one, prints to
/// stderr which pass has no such option, the nearest name and the valid
/// ones, and returns false.
bool checkPassOptionSpelling(int argc, char **argv, llvm::StringRef tool);

/// Whether `name` is the argument of a Tofu pass or pipeline (`tofu-`,
/// `tdl-`, `convert-tofu-`).
bool isTofuPassArgument(llvm::StringRef name);

/// Prints the Tofu passes and pipelines with their options to stdout, each
/// pass with its default options as a pipeline element
/// (`name{option=default ...}`): the first section of `tofu-opt --help`.
void printTofuPassHelp();

} // namespace tofu

#endif // TOFU_INITALLPASSES_H
