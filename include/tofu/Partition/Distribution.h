//===- Distribution.h - Per-rank boxes of a partitioned program -*- C++ -*-===//
//
// The concrete geometry of an SPMD program generated from a plan. The ranks
// form a grid with one axis per recursion step (Tofu §5.2): rank r has the
// row-major coordinates (c_0, ..., c_{n-1}) and axis i has the step's k_i
// workers. A tiling cut(d) at step i splits the current local extent of
// dimension d into k_i balanced chunks and gives chunk c_i to the ranks with
// coordinate c_i; `rep` keeps the extent. The same recursion over an
// operator's loop variables gives every rank its iteration box.
//
// Everything here is plain arithmetic on boxes, so that tofu-partition,
// the runtime and the tests agree on one definition.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_DISTRIBUTION_H
#define TOFU_PARTITION_DISTRIBUTION_H

#include "tofu/Partition/Tiling.h"

#include <optional>
#include <string>
#include <vector>

namespace tofu {

/// The process grid of an SPMD program: one axis per recursion step.
struct ProcessGrid {
  std::vector<int64_t> shape;

  /// Number of ranks.
  int64_t size() const;
  /// Row-major coordinates of `rank` (axis 0 varies slowest).
  std::vector<int64_t> getCoords(int64_t rank) const;
};

/// One rank's region per rank of the grid, in rank order.
using RankBoxes = std::vector<Box>;

/// The boxes of a tensor of `shape` laid out with `perStep[i]` at grid axis
/// i (cut or replicate). Fails with a message when a cut dimension does not
/// divide evenly or is out of range.
std::optional<RankBoxes> getLayoutBoxes(const Shape &shape,
                                        const std::vector<Tiling> &perStep,
                                        const ProcessGrid &grid,
                                        std::string &error);

/// The iteration boxes of an operator with loop `extents` that cuts loop
/// `cutVars[i]` at grid axis i (-1: the step runs the operator replicated).
std::optional<RankBoxes> getIterationBoxes(const std::vector<int64_t> &extents,
                                           const std::vector<int> &cutVars,
                                           const ProcessGrid &grid,
                                           std::string &error);

/// The shape of a box (hi - lo + 1 per dimension).
Shape getBoxShape(const Box &box);

/// True if every rank's box has the same shape, which SPMD code needs.
bool haveUniformShape(const RankBoxes &boxes);

/// Elements rank w must receive to hold `required[w]` when every rank v
/// holds `held[v]` (Lemma 1 of the Tofu report, summed over ranks): what a
/// rank already holds is never sent.
int64_t getReceivedElements(const RankBoxes &held, const RankBoxes &required);

/// Checks that the distinct boxes of `held` are pairwise disjoint and cover
/// every `required` box, so that each required element has one source
/// region. Returns an error message or "".
std::string checkFetchable(const RankBoxes &held, const RankBoxes &required);

/// The row-major linear indices of the elements of `box` in a tensor of
/// `shape`, as the inclusive range [lo, hi], when they are contiguous (the
/// box takes one index in the leading dimensions, any range in one
/// dimension, and whole trailing dimensions); std::nullopt otherwise. This
/// is the source range of an expand_shape group.
std::optional<std::pair<int64_t, int64_t>>
getContiguousRange(const Box &box, const Shape &shape);

/// The box of a tensor of `shape` whose row-major linear indices are
/// exactly [lo, hi], when there is one (the inverse of getContiguousRange);
/// std::nullopt otherwise. This is the source box of a collapse_shape group.
std::optional<Box> getBoxOfRange(int64_t lo, int64_t hi, const Shape &shape);

/// The smallest box that contains `box` and whose elements are contiguous
/// in a tensor of `shape`: the dimensions after the first one where `box`
/// takes more than one index become whole.
Box getContiguousHull(const Box &box, const Shape &shape);

/// The smallest box of a tensor of `shape` that contains the row-major
/// linear indices [lo, hi] and whose elements are contiguous.
Box getRangeHull(int64_t lo, int64_t hi, const Shape &shape);

/// Windows of one shape, inside a tensor of `shape`, that contain each
/// rank's region. The regions may differ in shape or be empty (some
/// hi < lo); each window has, per dimension, the largest extent over the
/// ranks and starts as close to its region as the bounds allow. SPMD code
/// fetches the windows and slices each region out locally.
RankBoxes getUniformWindows(const RankBoxes &regions, const Shape &shape);

/// Widens each rank's region to the tile it holds along the dimensions
/// marked in `free` (those an operation reads through a compound index such
/// as `2 * x + dx`, which bound none of its loops): only when every region
/// is non-empty and lies in its rank's tile (nothing is communicated), and
/// per dimension only when every region starts where its tile starts and
/// the tiles have one extent there. The regions keep their origins, so the
/// operation's rebased indexing is unchanged.
void widenToHeldTiles(RankBoxes &regions, const RankBoxes &tiles,
                      const std::vector<bool> &free);

/// A collective of the upstream `shard` dialect that turns the boxes every
/// rank holds into the boxes every rank wants, within the groups of ranks
/// that differ only in their coordinates on `axes` (increasing). A group is
/// ordered by the row-major index of its ranks over `axes`, which is the
/// order of the chunks of a dimension cut at those grid axes.
struct Collective {
  enum class Kind {
    /// Concatenates the group's boxes along `dim`.
    AllGather,
    /// Splits the box along `dim` into one chunk per group member, sends
    /// chunk j to member j, and concatenates what arrives along `concatDim`.
    AllToAll,
    /// Keeps chunk i (the rank's index in its group) of the box along `dim`;
    /// no communication.
    AllSlice,
  };
  Kind kind = Kind::AllGather;
  std::vector<int64_t> axes;
  size_t dim = 0;
  size_t concatDim = 0;
};

/// The boxes each rank holds after `c` when every rank holds `held[r]`, or
/// std::nullopt when `c` does not apply: the group's boxes of an all-gather
/// or all-to-all must be equal but along the concatenated dimension, where
/// they follow each other in group order; a split dimension must divide.
std::optional<RankBoxes> applyCollective(const Collective &c,
                                         const RankBoxes &held,
                                         const ProcessGrid &grid);

/// The one collective (all-slice, all-gather or all-to-all) that turns
/// `held` into exactly `wanted`, or std::nullopt: regions with halos or
/// offsets, strided regions and moves that need several collectives are
/// left to a general fetch. Both must have a uniform shape.
std::optional<Collective> matchCollective(const RankBoxes &held,
                                          const RankBoxes &wanted,
                                          const ProcessGrid &grid);

/// All-gathers, one per dimension from the last to the first, that turn
/// `held` into exactly `wanted` when every dimension that grows is a
/// gather (a layout read without the cuts of several dimensions), or
/// std::nullopt. Each rank receives what it does not hold, as in one fetch.
std::optional<std::vector<Collective>> matchAllGathers(const RankBoxes &held,
                                                       const RankBoxes &wanted,
                                                       const ProcessGrid &grid);

} // namespace tofu

#endif // TOFU_PARTITION_DISTRIBUTION_H
