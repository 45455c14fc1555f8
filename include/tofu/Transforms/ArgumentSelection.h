//===- ArgumentSelection.h - Naming and selecting arguments -----*- C++ -*-===//
//
// How training passes name function arguments and select weights: by
// index, by name (the argument's `tofu.name` attribute, a name location
// such as `loc("fc.weight")` as exporters write them, or the SSA name the
// argument had in the source file), or `all` floating-point tensors except
// the data inputs. Diagnostics point at the argument or at the function's
// name, never at the whole function.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_ARGUMENTSELECTION_H
#define TOFU_TRANSFORMS_ARGUMENTSELECTION_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace tofu {

/// The name of argument `index` of `func`, or "" if it has none: its
/// `tofu.name` attribute, else the first name location in its location,
/// else the SSA name (without `%`) found in the source text at its file
/// location.
std::string getArgumentName(mlir::func::FuncOp func, unsigned index);

/// Gives every argument of `func` without a `tofu.name` the name that
/// getArgumentName finds (an exporter's name location, or the SSA name in
/// the source file), so that the name outlives the source's locations: the
/// training driver names the tensors of weight, data and checkpoint files
/// after it. A name that two arguments share is left out, and so are the
/// names the files give something else: `arg<N>` (an argument without a
/// name), `optimizer.*` and `__metadata__`.
void recordArgumentNames(mlir::func::FuncOp func);

/// The index of the argument of `func` that `entry` names: a decimal index
/// or a name. std::nullopt, with an error that says what is available, if
/// there is none. `what` names the option in the message ("weight").
std::optional<unsigned> resolveArgument(mlir::func::FuncOp func,
                                        llvm::StringRef entry,
                                        llvm::StringRef pass,
                                        llvm::StringRef what);

/// True if `type` is a ranked tensor of floating-point elements.
bool isFloatTensor(mlir::Type type);

/// The data input of `func` when none is named: argument 0, unless it does
/// not lead with the batch (the leading dimension of the arguments marked
/// `tofu.input`, else of the one result) and a later argument does, as in
/// exports that pass the weights first (a packed parameter vector) and the
/// data last. Choosing another argument than 0 emits a remark on it.
unsigned guessDataInput(mlir::func::FuncOp func, llvm::StringRef pass);

/// The weights of `func` that `weights` selects, in argument order:
/// indices, names, `all` (every floating-point tensor argument except
/// those listed in `inputs`, where `auto` is guessDataInput, those
/// marked `tofu.input`, and data that only the loss reads: an argument
/// that leads with the batch and reaches the 0-d result only through
/// element-wise ops and reductions, such as the target of a model that
/// computes its own loss) or `auto` (the arguments marked `tofu.weight` if
/// there are any, else `all`). With no entry, the arguments marked
/// `tofu.weight`. With entries, a remark names the weights and the data.
/// Fails with an error on a bad entry.
mlir::FailureOr<llvm::SmallVector<unsigned>>
selectWeights(mlir::func::FuncOp func, llvm::ArrayRef<std::string> weights,
              llvm::ArrayRef<std::string> inputs, llvm::StringRef pass);

/// A location for diagnostics about `func` as a whole: its own location,
/// used without the operation so that the function is not printed.
mlir::InFlightDiagnostic emitFunctionError(mlir::func::FuncOp func,
                                           const llvm::Twine &message);

} // namespace tofu

#endif // TOFU_TRANSFORMS_ARGUMENTSELECTION_H
