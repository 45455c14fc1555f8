//===- Coarsening.h - Grouping the graph for the DP (Tofu §5.1) -*- C++ -*-===//
//
// The DP searches over coarse nodes instead of single operators and tensors.
// A node is a set of slots; a slot is a set of operators (or of tensors)
// that are tied to one choice: one strategy (or one tiling) for all of them.
// A node's value is one choice per slot, so within a node the search is a
// brute force over its slots, as in Tofu.
//
//  - Group backward operators with their forward operator (one node; the
//    forward and the backward operators are separate slots).
//  - Group every forward tensor with its gradients and with the sums that
//    accumulate them.
//  - Merge consecutive element-wise forward operators (the TDL description
//    decides: every access is the identity) along chains, where each value
//    has a single reader: their strategies are tied.
//  - Merge unrolled time steps: starting from operators that read the same
//    weight with the same description and shapes, corresponding operators
//    are matched in lock step through the graph, and each matched class is
//    tied to one strategy, and its tensors to one tiling.
//  - Optimizer operators of one weight form one node with its state.
//
// Grouping alone does not change the search space: the DP stays exact over
// it. Ties restrict it, as Tofu does.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_COARSENING_H
#define TOFU_PARTITION_COARSENING_H

#include "tofu/Partition/Graph.h"

#include <string>
#include <vector>

namespace tofu {

struct CoarsenOptions {
  bool groupBackward = true;
  bool mergeElementwise = true;
  bool mergeTimeSteps = true;

  /// Every operator and tensor alone: the uncoarsened search space.
  static CoarsenOptions none() { return {false, false, false}; }
  /// True when no rule is on.
  bool isNone() const {
    return !groupBackward && !mergeElementwise && !mergeTimeSteps;
  }
};

struct CoarseSlot {
  bool isOp = false;
  std::vector<int> members;
};

struct CoarseNode {
  enum class Kind { Op, Tensor, Optimizer };
  Kind kind = Kind::Op;
  std::vector<unsigned> slots;
};

struct CoarseGraph {
  std::vector<CoarseSlot> slots;
  std::vector<CoarseNode> nodes;
  std::vector<unsigned> opSlot, tensorSlot, slotNode;
  /// Forward operators merged away by each rule.
  unsigned mergedElementwise = 0;
  unsigned mergedTimeSteps = 0;

  /// A human-readable listing, one line per node.
  std::string str(const Graph &graph) const;
};

CoarseGraph coarsen(const Graph &graph, const CoarsenOptions &options);

} // namespace tofu

#endif // TOFU_PARTITION_COARSENING_H
