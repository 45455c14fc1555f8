//===- GraphImport.h - From a function to the search's graph ----*- C++ -*-===//
//
// Builds the MLIR-free Graph of lib/Partition from a function whose tensor
// operations carry TDL descriptions (tdl-attach), keeping the training
// metadata of tofu-autodiff and tofu-optimizer.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_GRAPHIMPORT_H
#define TOFU_TRANSFORMS_GRAPHIMPORT_H

#include "tofu/Partition/Graph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace tofu {

struct ImportedGraph {
  Graph graph;
  /// The value of every tensor and the operation of every operator.
  std::vector<mlir::Value> values;
  std::vector<mlir::Operation *> ops;
};

/// Fails with an error on the offending operation when an operation that
/// computes a tensor has no description or a dynamic shape.
mlir::FailureOr<ImportedGraph> importGraph(mlir::func::FuncOp func);

/// True if the function has an operation with a TDL description.
bool hasDescribedOps(mlir::func::FuncOp func);

} // namespace tofu

#endif // TOFU_TRANSFORMS_GRAPHIMPORT_H
