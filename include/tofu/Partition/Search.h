//===- Search.h - The recursive partition search (Tofu §5) ------*- C++ -*-===//
//
// The search runs one step per level of the topology's recursion (Tofu
// §5.2): each step is searched by the min-sum DP (StepSearch.h) or by a
// baseline heuristic (Baselines.h) under the cost model of CostModel.h, and
// the local shapes after it are the next step's. A Tofu plan is then refined
// on what the generated program moves (ProgramCost.h).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_SEARCH_H
#define TOFU_PARTITION_SEARCH_H

#include "tofu/Partition/CostModel.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tofu {

/// Searches a plan for `topology` with `options.algorithm`. Returns
/// std::nullopt with a message when the algorithm cannot run (brute force on
/// a large graph).
std::optional<Plan> searchPlan(const Graph &graph, const Topology &topology,
                               const SearchOptions &options,
                               std::string &error);

/// Fills `plan.programBytes` and `plan.programTensorBytes`; returns false
/// (leaving -1) with a message when the plan's layouts do not divide.
/// `shareFetches` as for ProgramCostModel::evaluate.
bool evaluateProgramBytes(const Graph &graph, Plan &plan, std::string &error,
                          bool shareFetches = true);

/// The refinement of a Tofu plan: each step in turn is re-solved by the DP
/// with every other step fixed and the program's edge costs
/// (ProgramCost.h), and kept when the whole plan stays feasible and moves
/// fewer bytes. Sweeps until nothing improves or `options.refineSweeps`.
void refinePlan(const Graph &graph, Plan &plan, const SearchOptions &options);

/// Calls `visit` with every assignment of a tiling to each tensor and a
/// choice to each operator of `model`'s step, until it returns false.
/// Returns false when it did.
bool forEachAssignment(
    const StepModel &model,
    const std::function<bool(const std::vector<Tiling> &,
                             const std::vector<OpChoice> &)> &visit);

/// Exhaustive search over every sequence of per-step assignments for the
/// given steps, with no coarsening; std::nullopt past `maxAssignments`.
std::optional<double> exhaustivePlanCost(const Graph &graph,
                                         const std::vector<unsigned> &ks,
                                         const SearchOptions &options,
                                         uint64_t maxAssignments);

/// The recursion steps of a search: the topology's, or one step of all the
/// devices for EqualChop.
std::vector<RecursionStep> getRecursionSteps(const Topology &topology,
                                             const SearchOptions &options);

} // namespace tofu

#endif // TOFU_PARTITION_SEARCH_H
