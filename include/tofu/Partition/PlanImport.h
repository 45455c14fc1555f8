//===- PlanImport.h - Evaluating a given plan -------------------*- C++ -*-===//
//
// A plan read from a file, or left on the IR, names each step's tilings and
// strategies. It is re-evaluated under the cost model, so the costs it
// reports are always the model's; a choice the step cannot take is an error.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_PLANIMPORT_H
#define TOFU_PARTITION_PLANIMPORT_H

#include "tofu/Partition/CostModel.h"

#include <optional>
#include <string>
#include <vector>

namespace tofu {

/// Evaluates fixed tilings and choices for every step (an imported plan).
/// Fails with a message when a choice is not feasible. The leading steps
/// whose choices equal those of `start`, a plan already evaluated, are
/// taken from it, with its remarks.
std::optional<Plan>
evaluatePlan(const Graph &graph, const Topology &topology,
             const SearchOptions &options,
             const std::vector<std::vector<Tiling>> &tilings,
             const std::vector<std::vector<std::string>> &strategies,
             std::string &error, StrategyCache *cache = nullptr,
             const Plan *start = nullptr);

} // namespace tofu

#endif // TOFU_PARTITION_PLANIMPORT_H
