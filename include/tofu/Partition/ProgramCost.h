//===- ProgramCost.h - Bytes the generated SPMD program moves ---*- C++ -*-===//
//
// The step model of Search.h costs every recursion step on the local shapes
// of that step, times the number of groups that run it (Eq. 3). The SPMD
// program that tofu-partition generates moves data on the flat grid
// instead, with the geometry of Distribution.h:
//
//  - an operator runs on each rank's iteration box; a rank fetches, in one
//    tofu.fetch, every element of the region it reads that its own tile of
//    the input lacks (the regions follow from the TDL accesses);
//  - a result whose reduction loop is cut at some grid axes is partial; it
//    is reduced over those axes one after the other, with a reduce-scatter
//    along the dimension the target layout cuts at that axis when its local
//    extent divides, otherwise with an all-reduce; what is still missing is
//    then fetched into the tensor's layout;
//  - a fill of a scalar is rebuilt on each rank, never moved.
//
// The two agree on one step. On several they differ: a reduction cut at
// two steps reduces whole local tiles on every rank of a group at the first
// axis, which the step model counts once per group, and a conversion between
// two layouts that both cut at every step moves less than the sum of its
// per-step costs. This model evaluates a complete plan edge by edge the way
// the program runs it, so that the search can minimise what really moves
// and the plan states what the runtime will count.
//
// Regions are not kept per rank. A dimension's interval depends only on the
// coordinates of the grid axes that cut it (or cut the loops that index
// it), so a region is kept per dimension over those axes (GridRegion), and
// a sum over the ranks factors into sums over groups of dimensions that
// share axes. On a grid of 2^10 ranks a tensor cut along three dimensions
// is then summed over at most a few dozen coordinates, not 1024 boxes.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_PROGRAMCOST_H
#define TOFU_PARTITION_PROGRAMCOST_H

#include "tofu/Partition/Distribution.h"
#include "tofu/Partition/Graph.h"
#include "tofu/Partition/Strategy.h"

#include <optional>
#include <string>
#include <vector>

namespace tofu {

/// A complete plan on the grid: every tensor's tiling at each grid axis and
/// the loop variable (an index into the description's loop variables) that
/// every operator cuts at each axis, -1 where it runs replicated.
struct GridPlan {
  std::vector<std::vector<Tiling>> tilings;
  std::vector<std::vector<int>> cutVars;
};

/// One dimension of a region that every rank of the grid holds or reads:
/// its interval at each combination of the coordinates of the few grid axes
/// it depends on.
struct DimRanges {
  /// The grid axes the interval depends on, ascending.
  std::vector<unsigned> axes;
  /// The inclusive interval [lo, hi] at each combination of coordinates of
  /// `axes`, row-major (the first axis varies slowest); hi < lo is empty.
  std::vector<std::pair<int64_t, int64_t>> at;
};

/// A region per rank of the grid, factored by dimension.
using GridRegion = std::vector<DimRanges>;

/// Bytes received per training step, summed over ranks.
struct ProgramBytes {
  /// Per tensor: the fetches of its regions and the reductions and fetches
  /// that put it into its layout.
  std::vector<double> tensorBytes;
  double total = 0;
};

class ProgramCostModel {
public:
  /// Fails (see `getError`) when an operator's loop space cannot be inferred.
  ProgramCostModel(const Graph &graph, ProcessGrid grid);

  const std::string &getError() const { return error; }
  const ProcessGrid &getGrid() const { return grid; }
  /// False for tensors the ranks never hold in a layout (sources, and fills
  /// of a scalar), which are built where they are read.
  bool isHeld(int t) const { return held[t]; }

  /// The boxes of tensor `t` laid out with `tilings` (one per axis), or
  /// std::nullopt when a cut does not divide.
  std::optional<GridRegion> getLayout(int t, const std::vector<Tiling> &tilings,
                                      std::string &message) const;
  /// The iteration boxes of operator `o`, or std::nullopt when a cut loop
  /// does not divide.
  std::optional<GridRegion> getIteration(int o,
                                         const std::vector<int> &cutVars,
                                         std::string &message) const;

  /// The regions of input `j` of operator `o` that the ranks fetch over
  /// their iteration boxes (same-shaped windows where the regions differ in
  /// shape); std::nullopt when nothing is fetched (an unread input, a
  /// source or a rebuilt fill).
  /// With `everyRankReads`, sets it to whether each rank's region is
  /// non-empty before the windows are taken.
  std::optional<GridRegion>
  getInputRegions(int o, unsigned j, const GridRegion &iteration,
                  bool *everyRankReads = nullptr) const;
  /// Bytes to give every rank its `regions` of tensor `t` held in `layout`.
  double getFetchBytes(int t, const std::optional<GridRegion> &regions,
                       const GridRegion &layout) const;
  /// Bytes to bring output `j` of operator `o`, computed over `iteration`
  /// with loops `cutVars`, into its tensor's `layout` laid out with
  /// `tilings`.
  double getOutputBytes(int o, unsigned j, const GridRegion &iteration,
                        const std::vector<int> &cutVars,
                        const std::vector<Tiling> &tilings,
                        const GridRegion &layout) const;

  /// Bytes to return the fed-back results of the graph (Graph::feeds) into
  /// their arguments' layouts, each tensor `t` laid out with `tilings[t]`;
  /// std::nullopt when a layout does not divide.
  std::optional<double>
  getFeedBytes(const std::vector<std::vector<Tiling>> &tilings,
               std::string &message) const;

  /// A key of what the cost of operand `j` of operator `o` (an output when
  /// `output`) depends on besides the plan: the operator's description and
  /// shapes, and how its tensor is held. Operators that repeat (the blocks
  /// of a deep network, the time steps of an RNN) share it; callers append
  /// the choices with `appendKey`.
  std::string getEdgeKey(int o, unsigned j, bool output) const;
  static void appendKey(std::string &key, int64_t value);
  /// A key of tensor `t`'s `regions` that is the same for two regions
  /// giving every rank the same box.
  std::string getRegionKey(int t, const GridRegion &regions) const;

  /// Evaluates a complete plan. Fails with a message when a layout or an
  /// iteration space does not divide. With `shareFetches`, the regions of
  /// a tensor that several operators read count once, as tofu-partition
  /// makes that conversion once; without, every edge counts (the sum the
  /// step DP's edge costs add up to).
  std::optional<ProgramBytes> evaluate(const GridPlan &plan,
                                       std::string &message,
                                       bool shareFetches = true) const;

private:
  const Graph &graph;
  ProcessGrid grid;
  std::string error;
  /// Per operator: its loop space.
  std::vector<LoopSpace> spaces;
  /// Per operator and input: the loop variable each access reads along
  /// each dimension, kWhole for a slice or gather, kOther for any other
  /// index; empty when an access needs interval arithmetic.
  static constexpr int kWhole = -1, kOther = -2;
  std::vector<std::vector<std::vector<std::vector<int>>>> simpleAccesses;
  /// Per operator, input and dimension: the loop variables that the
  /// input's accesses read that dimension with.
  std::vector<std::vector<std::vector<std::vector<int>>>> readVars;
  /// Per operator and output: the loop variable of each output dimension.
  std::vector<std::vector<std::vector<int>>> outputVars;
  /// Per tensor: whether the ranks hold it in its layout (false for sources
  /// such as tensor.empty and constants, and for fills of a scalar, which
  /// are rebuilt where they are read).
  std::vector<bool> held;
};

} // namespace tofu

#endif // TOFU_PARTITION_PROGRAMCOST_H
