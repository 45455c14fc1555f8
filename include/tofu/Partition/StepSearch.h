//===- StepSearch.h - The min-sum DP of one search step ---------*- C++ -*-===//
//
// One step of the search encoded as a min-sum problem (MinSum.h): every slot
// of the coarse graph (Coarsening.h) takes one of the choices its members
// share, slots are grouped into DP variables node by node, and the edges of
// the graph become unary and pairwise tables of the cost model's bytes.
// Brute force solves the same encoding by enumeration.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_STEPSEARCH_H
#define TOFU_PARTITION_STEPSEARCH_H

#include "tofu/Partition/Coarsening.h"
#include "tofu/Partition/CostModel.h"

#include <optional>

namespace tofu {

/// One step of the exact DP over the coarsened graph (exposed for tests):
/// the tilings and choices minimising the step's cost. `tooLarge` is set
/// (and an empty step returned) when brute force would exceed
/// `maxBruteForce`, or, with `giveUp`, when the DP would have to fix
/// variables greedily. With `sharedReads`, the objective follows what the
/// program moves more closely: reads of tensors that the program rebuilds
/// are free (Graph::isRebuilt), the reads that the operators of one slot
/// make of one tensor through the same access count once, and a tensor that
/// two of its readers can read whole may be made whole once for all those
/// that read it whole (getSharedReadBytes). The step's `bytes` still charge every read
/// (the step model); its `objective` is the DP's.
PlanStep searchStep(const StepModel &model, const CoarseGraph &coarse,
                    const SearchOptions &options, bool bruteForce,
                    bool &tooLarge, bool giveUp = false,
                    bool sharedReads = false);

/// The objective of searchStep with `sharedReads` for given tilings and
/// choices: the step's bytes without the reads of rebuilt tensors, with the
/// reads that the operators of one slot of `coarse` make of one tensor
/// through the same access charged once, and each slot's reads of whole
/// tensors replaced by one conversion of each member where that costs less.
double getSharedReadBytes(const StepModel &model, const CoarseGraph &coarse,
                          const std::vector<Tiling> &tilings,
                          const std::vector<OpChoice> &choices);

/// One step of the Tofu DP: exact on the uncoarsened graph when its tables
/// fit, otherwise (with `useCoarse`) over the coarsened graph, which is
/// built into `coarse` on first use. `sharedReads` as for searchStep.
PlanStep solveStep(const StepModel &model, const Graph &graph,
                   const SearchOptions &options, const CoarseGraph &fine,
                   std::optional<CoarseGraph> &coarse, bool useCoarse,
                   bool sharedReads = false);

} // namespace tofu

#endif // TOFU_PARTITION_STEPSEARCH_H
