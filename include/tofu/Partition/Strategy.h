//===- Strategy.h - Partition-n-reduce strategy discovery -------*- C++ -*-===//
//
// Discovers every partition-n-reduce strategy of one operator instance for a
// step of k workers (Tofu, EuroSys'19, section 4.2):
//
//   Case 1: cut an output index variable; each worker computes a chunk of the
//           output.
//   Case 2: cut a reduction variable; each worker computes a partial output
//           that is then reduced with the operator's reducer.
//
// For each strategy the symbolic interval analysis gives the region of every
// input that each worker reads, evaluated with the concrete shapes. From the
// regions follow the cut input dimension, the halo, and, for every tiling an
// input may currently have, the elements that must be fetched (Lemma 1).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_STRATEGY_H
#define TOFU_PARTITION_STRATEGY_H

#include "tofu/Partition/Interval.h"
#include "tofu/Partition/Tiling.h"
#include "tofu/TDL/TDL.h"

#include <optional>
#include <string>
#include <vector>

namespace tofu {

/// Concrete shapes of one operator instance, in description order.
struct OpShapes {
  std::vector<Shape> inputs;
  std::vector<Shape> outputs;
};

/// The iteration space of an operator instance.
struct LoopSpace {
  std::vector<std::string> vars;
  std::vector<int64_t> extents;
  /// True for variables that no input access mentions inside an opaque
  /// function: the opaque function produces these dimensions as a whole.
  std::vector<bool> opaque;

  /// Index of `name`, or -1.
  int lookup(const std::string &name) const;
};

/// Infers every index variable's extent from the shapes: output variables
/// from the output shapes, reduction variables from bare-variable accesses or
/// by solving an affine access for its one unknown variable. Fails with a
/// message on a rank or extent mismatch.
std::optional<LoopSpace> inferLoopSpace(const tdl::OpDesc &desc,
                                        const OpShapes &shapes,
                                        std::string &error);

/// Checks every access of `desc` over the whole loop space `space` of
/// `shapes` (the operation's own shapes): its indices must stay within
/// int64_t and, in every dimension, reach the input at least once. An
/// access entirely outside its input reads nothing, so it would make every
/// fetch look free. The search's per-worker shapes are not checked: there a
/// chunk may legitimately miss an access. Fails with a message.
bool checkAccessBounds(const tdl::OpDesc &desc, const OpShapes &shapes,
                       const LoopSpace &space, std::string &error);

/// What one strategy requires of one input.
struct InputRequirement {
  /// The symbolic region that worker 0 reads, per access to this input and
  /// per dimension, over the variable extents N_v.
  std::vector<std::vector<SymbolicInterval>> symbolic;
  /// False when the description never accesses this input (for example the
  /// init operand of a reduction); then nothing is fetched.
  bool read = false;
  /// Concrete region per worker, clamped to the tensor.
  std::vector<Box> regions;
  /// The one dimension along which the workers' regions differ, if exactly
  /// one does; -1 when every worker reads the same region; -2 when several
  /// dimensions differ.
  int cutDim = -1;
  /// Per dimension: the largest number of elements a worker reads beyond
  /// its balanced chunk of that dimension (non-zero only for cutDim).
  std::vector<int64_t> halo;
  /// Elements fetched when the input is currently tiled as cut(d), for each
  /// dimension d, then replicated (index rank), then partial (rank + 1).
  std::vector<int64_t> fetch;

  bool hasHalo() const;
};

/// One partition-n-reduce strategy for a step of k workers.
struct Strategy {
  /// The loop variable that is cut.
  unsigned var = 0;
  /// Case 2: the variable is a reduction variable of at least one output.
  bool reducesOutput = false;
  /// The extent does not divide by k; chunks differ by one element.
  bool uneven = false;
  std::vector<InputRequirement> inputs;
  /// How each output is produced: cut(d), partial, or rep when the variable
  /// does not occur in that output (it is computed redundantly).
  std::vector<Tiling> outputs;
};

/// A loop variable that admits no strategy, with the reason.
struct Rejection {
  unsigned var;
  std::string reason;
};

struct StrategySet {
  LoopSpace space;
  std::vector<Strategy> strategies;
  std::vector<Rejection> rejected;
};

/// Finds all strategies of `desc` on `shapes` for k >= 2 workers. Fails with
/// a message when the shapes do not fit the description or an access is not
/// affine.
std::optional<StrategySet> discoverStrategies(const tdl::OpDesc &desc,
                                              const OpShapes &shapes,
                                              unsigned k, std::string &error);

/// Every access of `desc` to input `input`, gathers' index arguments
/// included, in the order of the description.
std::vector<const tdl::Expr *> getInputAccesses(const tdl::OpDesc &desc,
                                                unsigned input);

/// The inclusive range of index `idx` into a dimension of `extent` when each
/// loop variable `v` ranges over the inclusive `ranges[v]`, clamped to the
/// dimension (hi < lo when it falls outside). Slices and opaque indices
/// cover the whole dimension. Fails with a message when the index is not
/// affine.
std::optional<std::pair<int64_t, int64_t>>
getIndexRange(const tdl::IndexExpr &idx, const LoopSpace &space,
              int64_t extent,
              const std::vector<std::pair<int64_t, int64_t>> &ranges,
              std::string &error);

/// The hull of every element of input `input` that `desc` reads when each
/// loop variable `v` ranges over the inclusive `ranges[v]`, clamped to the
/// input's `shape`. This is the region one rank reads over its iteration
/// box. `read` is false (and the box empty or rank 0) when the description
/// reads nothing of the input there. Fails with a message when an access is
/// not affine.
std::optional<Box>
getReadRegion(const tdl::OpDesc &desc, const LoopSpace &space, unsigned input,
              const Shape &shape,
              const std::vector<std::pair<int64_t, int64_t>> &ranges,
              bool &read, std::string &error);

/// Evaluates an index expression to a symbolic interval, with each variable
/// bound to `env[var]`. Slices cover [0, sliceExtent - 1]. Fails with a
/// message naming the expression when it is not affine.
std::optional<SymbolicInterval>
evaluateIndex(const tdl::IndexExpr &e, const LoopSpace &space,
              const std::vector<SymbolicInterval> &env, int64_t sliceExtent,
              std::string &error);

/// True when interval arithmetic gives the exact hull of `e`'s values: every
/// variable occurs once and no remainder is taken.
bool isIntervalExact(const tdl::IndexExpr &e);

/// The exact [min, max] of `e` with every loop variable `v` ranging over the
/// inclusive `ranges[v]`, by enumerating the points of the variables `e`
/// mentions. std::nullopt when `e` holds a slice, has more than 64 nodes,
/// would take more than `maxPoints` points, or overflows.
std::optional<std::pair<int64_t, int64_t>>
enumerateIndexRange(const tdl::IndexExpr &e, const LoopSpace &space,
                    const std::vector<std::pair<int64_t, int64_t>> &ranges,
                    uint64_t maxPoints);

} // namespace tofu

#endif // TOFU_PARTITION_STRATEGY_H
