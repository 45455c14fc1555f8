//===- Baselines.h - The baseline algorithms of one step --------*- C++ -*-===//
//
// The heuristics the search is compared against, under the same cost model
// and the same recursion: each fixes every tensor's tiling of one step, and
// every operator then takes its cheapest choice given those tilings.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_BASELINES_H
#define TOFU_PARTITION_BASELINES_H

#include "tofu/Partition/CostModel.h"

namespace tofu {

/// Data parallelism: model state replicated, every other tensor cut on
/// dimension 0 where it divides (replicated otherwise).
PlanStep dataParallelStep(const StepModel &model);

/// Data parallelism along the batch: model state replicated, the inputs
/// (data and labels) cut on `batchDim`, and every operator, in program
/// order, takes the choice that costs least given its inputs' tilings, its
/// outputs taking the cut that choice produces (model state, and partial
/// values, replicated). Tensors of time-major steps keep the batch where it
/// is, whatever their dimension 0 holds.
PlanStep batchParallelStep(const StepModel &model, unsigned batchDim);

/// AllRow-Greedy: every tensor takes its first feasible tiling, a cut on its
/// first divisible dimension.
PlanStep allRowStep(const StepModel &model);

/// Spartan: tensors from the largest down each take the tiling cheapest for
/// the operators next to them, counting only edges to tensors already fixed.
PlanStep spartanStep(const StepModel &model);

} // namespace tofu

#endif // TOFU_PARTITION_BASELINES_H
