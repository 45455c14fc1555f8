//===- PlanOnIR.h - The plan that tofu-search left on the IR ----*- C++ -*-===//
//
// Reads the plan attributes of tofu-search (`tofu.plan`, `tofu.tiling`,
// `tofu.tilings`, `tofu.strategy`) back from a function and re-evaluates
// them under the cost model, so that tofu-partition can reject plans
// outside the search space and compare what it generates with what the
// plan predicts, tensor by tensor.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_DIALECT_TOFU_TRANSFORMS_PLANONIR_H
#define TOFU_DIALECT_TOFU_TRANSFORMS_PLANONIR_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>
#include <vector>

namespace tofu {

struct PlanOnIR {
  /// Workers per recursion step: the shape of the process grid.
  std::vector<int64_t> steps;
  /// The plan's bytes per training step, and per tensor name.
  double totalBytes = 0;
  std::map<std::string, double> bytesPerTensor;
  /// What the generated program moves under the plan (ProgramCost.h), in
  /// total and per tensor name.
  double programBytes = 0;
  std::map<std::string, double> programBytesPerTensor;
  /// The plan's name (`%argN`, `%tN`) of every tensor value.
  llvm::DenseMap<mlir::Value, std::string> names;
};

/// Fails with an error on the function or operation when an attribute is
/// missing or malformed, or when the plan is not feasible. Without
/// `evaluate`, only the steps are read and checked against the devices and
/// the algorithm (the bytes and names stay empty), which avoids rebuilding
/// the search's graph.
mlir::FailureOr<PlanOnIR> readPlanOnIR(mlir::func::FuncOp func,
                                       bool evaluate = true);

} // namespace tofu

#endif // TOFU_DIALECT_TOFU_TRANSFORMS_PLANONIR_H
