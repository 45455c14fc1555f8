//===- DistributionTest.cpp - Per-rank boxes of partitioned programs ------===//

#include "tofu/Partition/Distribution.h"

#include <gtest/gtest.h>

using namespace tofu;

namespace {

TEST(DistributionTest, CoordinatesAreRowMajor) {
  ProcessGrid grid{{3, 2, 2}};
  EXPECT_EQ(grid.size(), 12);
  EXPECT_EQ(grid.getCoords(0), (std::vector<int64_t>{0, 0, 0}));
  EXPECT_EQ(grid.getCoords(5), (std::vector<int64_t>{1, 0, 1}));
  EXPECT_EQ(grid.getCoords(11), (std::vector<int64_t>{2, 1, 1}));
}

// Two cuts of the same dimension halve it recursively: chunk c0 * 2 + c1.
TEST(DistributionTest, RecursiveCutsOfOneDimension) {
  ProcessGrid grid{{2, 2}};
  std::string error;
  auto boxes =
      getLayoutBoxes({8, 3}, {Tiling::cut(0), Tiling::cut(0)}, grid, error);
  ASSERT_TRUE(boxes) << error;
  for (int64_t r = 0; r < 4; ++r) {
    EXPECT_EQ((*boxes)[r].lo, (std::vector<int64_t>{2 * r, 0}));
    EXPECT_EQ((*boxes)[r].hi, (std::vector<int64_t>{2 * r + 1, 2}));
  }
}

TEST(DistributionTest, ReplicatedAxesKeepTheExtent) {
  ProcessGrid grid{{2, 3}};
  std::string error;
  auto boxes = getLayoutBoxes({4, 6}, {Tiling::replicate(), Tiling::cut(1)},
                              grid, error);
  ASSERT_TRUE(boxes) << error;
  // Ranks 1 and 4 differ only along the replicated axis.
  EXPECT_EQ((*boxes)[1], (*boxes)[4]);
  EXPECT_EQ((*boxes)[1].lo, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ((*boxes)[1].hi, (std::vector<int64_t>{3, 3}));
  EXPECT_TRUE(haveUniformShape(*boxes));
}

TEST(DistributionTest, UnevenCutsAreRejected) {
  ProcessGrid grid{{3}};
  std::string error;
  EXPECT_FALSE(getLayoutBoxes({4}, {Tiling::cut(0)}, grid, error));
  EXPECT_NE(error.find("does not divide by 3"), std::string::npos) << error;
  EXPECT_FALSE(getLayoutBoxes({4}, {Tiling::cut(1)}, grid, error));
  EXPECT_FALSE(getIterationBoxes({6, 4}, {-1, 3}, ProcessGrid{{2, 2}}, error));
}

// [[0],[1]] -> [[1],[0]] on a 2x2 grid: the diagonal ranks keep their
// quarter and the two others swap theirs, half of the tensor in all.
TEST(DistributionTest, ReceivedElementsOfATransposedLayout) {
  ProcessGrid grid{{2, 2}};
  std::string error;
  auto from =
      getLayoutBoxes({4, 4}, {Tiling::cut(0), Tiling::cut(1)}, grid, error);
  auto to =
      getLayoutBoxes({4, 4}, {Tiling::cut(1), Tiling::cut(0)}, grid, error);
  ASSERT_TRUE(from && to) << error;
  EXPECT_EQ(getReceivedElements(*from, *to), 8);
  EXPECT_EQ(checkFetchable(*from, *to), "");
}

TEST(DistributionTest, FetchNeedsDisjointCoveringSources) {
  RankBoxes overlapping{Box{{0}, {2}}, Box{{1}, {3}}};
  EXPECT_NE(checkFetchable(overlapping, overlapping), "");
  RankBoxes partial{Box{{0}, {1}}, Box{{0}, {1}}};
  RankBoxes whole{Box{{0}, {3}}, Box{{0}, {3}}};
  EXPECT_NE(checkFetchable(partial, whole).find("only 2 of its 4"),
            std::string::npos);
}

TEST(DistributionTest, IterationBoxesFollowTheStrategies) {
  std::string error;
  // Loops (i, j, k) of a matmul: k cut at step 0, i at step 1.
  auto boxes = getIterationBoxes({4, 6, 8}, {2, 0}, ProcessGrid{{2, 2}}, error);
  ASSERT_TRUE(boxes) << error;
  EXPECT_EQ((*boxes)[3].lo, (std::vector<int64_t>{2, 0, 4}));
  EXPECT_EQ((*boxes)[3].hi, (std::vector<int64_t>{3, 5, 7}));
}

// Row-major ranges: contiguous boxes and their inverse.
TEST(DistributionTest, ContiguousRangesOfBoxes) {
  Shape shape{4, 8};
  auto rows = getContiguousRange({{1, 0}, {2, 7}}, shape);
  ASSERT_TRUE(rows);
  EXPECT_EQ(*rows, (std::pair<int64_t, int64_t>{8, 23}));
  auto inRow = getContiguousRange({{3, 2}, {3, 5}}, shape);
  ASSERT_TRUE(inRow);
  EXPECT_EQ(*inRow, (std::pair<int64_t, int64_t>{26, 29}));
  // A column cut is strided, not contiguous.
  EXPECT_FALSE(getContiguousRange({{0, 0}, {3, 3}}, shape));
  for (int64_t lo = 0; lo < 32; ++lo)
    for (int64_t hi = lo; hi < 32; ++hi) {
      std::optional<Box> box = getBoxOfRange(lo, hi, shape);
      // A range is a box exactly when it is whole rows or within one row.
      bool expected = (lo / 8 == hi / 8) || (lo % 8 == 0 && hi % 8 == 7);
      ASSERT_EQ(box.has_value(), expected) << lo << ".." << hi;
      if (box) {
        EXPECT_EQ(box->volume(), hi - lo + 1);
        EXPECT_EQ(getContiguousRange(*box, shape),
                  (std::pair<int64_t, int64_t>{lo, hi}));
      }
    }
}

// Regions of different shapes, and an empty one, get same-shaped windows
// inside the tensor that contain them.
TEST(DistributionTest, UniformWindowsContainTheRegions) {
  Shape shape{10, 4};
  RankBoxes regions{{{0, 0}, {3, 3}}, {{4, 0}, {8, 3}}, {{9, 0}, {8, 3}}};
  RankBoxes windows = getUniformWindows(regions, shape);
  ASSERT_EQ(windows.size(), 3u);
  for (size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(getBoxShape(windows[r]), (Shape{5, 4}));
    EXPECT_EQ(windows[r].intersect(regions[r]).volume(), regions[r].volume());
    EXPECT_GE(windows[r].lo[0], 0);
    EXPECT_LE(windows[r].hi[0], 9);
  }
  EXPECT_EQ(windows[0].lo[0], 0);
  EXPECT_EQ(windows[1].lo[0], 4);
  EXPECT_EQ(windows[2].lo[0], 5);
}

// Hulls are contiguous and contain what they were made from.
TEST(DistributionTest, ContiguousHulls) {
  Shape shape{3, 4, 5};
  // Columns 1..2 of every row of plane 1: rows and columns become whole.
  Box hull = getContiguousHull({{1, 0, 1}, {1, 3, 2}}, shape);
  EXPECT_EQ(hull.lo, (std::vector<int64_t>{1, 0, 0}));
  EXPECT_EQ(hull.hi, (std::vector<int64_t>{1, 3, 4}));
  EXPECT_TRUE(getContiguousRange(hull, shape));
  for (int64_t lo = 0; lo < 60; ++lo)
    for (int64_t hi = lo; hi < 60; ++hi) {
      Box box = getRangeHull(lo, hi, shape);
      auto range = getContiguousRange(box, shape);
      ASSERT_TRUE(range) << lo << ".." << hi;
      EXPECT_LE(range->first, lo);
      EXPECT_GE(range->second, hi);
      // Exact whenever the range is a box itself.
      if (getBoxOfRange(lo, hi, shape))
        EXPECT_EQ(box.volume(), hi - lo + 1);
    }
}

/// The boxes of a layout, which the tests know to be valid.
RankBoxes layout(const Shape &shape, const std::vector<Tiling> &perStep,
                 const ProcessGrid &grid) {
  std::string error;
  auto boxes = getLayoutBoxes(shape, perStep, grid, error);
  EXPECT_TRUE(boxes) << error;
  return boxes ? *boxes : RankBoxes();
}

// Removing the cuts of a dimension over two axes is one all-gather over
// both, in the order of the recursive halving.
TEST(DistributionTest, AllGatherOverTwoAxes) {
  ProcessGrid grid{{2, 2}};
  RankBoxes from = layout({8, 3}, {Tiling::cut(0), Tiling::cut(0)}, grid);
  RankBoxes to =
      layout({8, 3}, {Tiling::replicate(), Tiling::replicate()}, grid);
  auto c = matchCollective(from, to, grid);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Collective::Kind::AllGather);
  EXPECT_EQ(c->axes, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(c->dim, 0u);
  EXPECT_EQ(*applyCollective(*c, from, grid), to);
  // Each rank receives the three quarters it does not hold.
  EXPECT_EQ(getReceivedElements(from, to), 4 * 3 * 6);
}

// A stride-2 read of a batch-cut 4x8 tensor on 2 ranks: each rank's region
// is its 2 rows by columns 0..6 (what the windows reach), inside the 2x8
// tile it holds. The free column dimension widens to the tile; the row
// dimension, not free, keeps its extent even where it could grow.
TEST(DistributionTest, WidensRegionsToTheHeldTilesAlongFreeDimensions) {
  ProcessGrid grid{{2}};
  RankBoxes tiles = layout({4, 8}, {Tiling::cut(0)}, grid);
  RankBoxes regions = {{{0, 0}, {1, 6}}, {{2, 0}, {3, 6}}};
  widenToHeldTiles(regions, tiles, {false, true});
  EXPECT_EQ(regions, tiles);
  RankBoxes rows = {{{0, 0}, {0, 7}}, {{2, 0}, {2, 7}}};
  RankBoxes same = rows;
  widenToHeldTiles(rows, tiles, {false, true});
  EXPECT_EQ(rows, same);

  // Nothing widens where a region starts past its tile's start, where a
  // region needs a fetch (it leaves its tile), or where a region is empty.
  RankBoxes offset = {{{0, 1}, {1, 6}}, {{2, 1}, {3, 6}}};
  RankBoxes fetched = {{{0, 0}, {2, 6}}, {{2, 0}, {3, 6}}};
  RankBoxes empty = {{{0, 0}, {1, 6}}, {{2, 0}, {1, 6}}};
  for (RankBoxes r : {offset, fetched, empty}) {
    RankBoxes before = r;
    widenToHeldTiles(r, tiles, {false, true});
    EXPECT_EQ(r, before);
  }
}

// Removing the cut of one axis of a 2-D layout gathers along that axis
// only; the other cut stays.
TEST(DistributionTest, AllGatherKeepsTheOtherCuts) {
  ProcessGrid grid{{2, 2, 2}};
  RankBoxes from =
      layout({4, 8}, {Tiling::cut(1), Tiling::cut(0), Tiling::cut(1)}, grid);
  RankBoxes to = layout(
      {4, 8}, {Tiling::cut(1), Tiling::cut(0), Tiling::replicate()}, grid);
  auto c = matchCollective(from, to, grid);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Collective::Kind::AllGather);
  EXPECT_EQ(c->axes, (std::vector<int64_t>{2}));
  EXPECT_EQ(c->dim, 1u);
}

// A cut that moves to another dimension over the same axes is one
// all-to-all; a move across axes is not.
TEST(DistributionTest, AllToAllMovesACut) {
  ProcessGrid grid{{3}};
  RankBoxes from = layout({6, 9}, {Tiling::cut(0)}, grid);
  RankBoxes to = layout({6, 9}, {Tiling::cut(1)}, grid);
  auto c = matchCollective(from, to, grid);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Collective::Kind::AllToAll);
  EXPECT_EQ(c->axes, (std::vector<int64_t>{0}));
  EXPECT_EQ(c->dim, 1u);
  EXPECT_EQ(c->concatDim, 0u);
  EXPECT_EQ(getReceivedElements(from, to), 3 * (18 - 6));

  ProcessGrid square{{2, 2}};
  RankBoxes a = layout({4, 4}, {Tiling::cut(0), Tiling::cut(1)}, square);
  RankBoxes b = layout({4, 4}, {Tiling::cut(1), Tiling::cut(0)}, square);
  EXPECT_FALSE(matchCollective(a, b, square));
}

// A replicated tensor cut over two axes keeps its chunk, in group order.
TEST(DistributionTest, AllSliceTakesTheRanksChunk) {
  ProcessGrid grid{{2, 3}};
  RankBoxes from =
      layout({12}, {Tiling::replicate(), Tiling::replicate()}, grid);
  RankBoxes to = layout({12}, {Tiling::cut(0), Tiling::cut(0)}, grid);
  auto c = matchCollective(from, to, grid);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->kind, Collective::Kind::AllSlice);
  EXPECT_EQ(c->axes, (std::vector<int64_t>{0, 1}));
}

// Regions that are not whole tiles (a halo) or not in group order need a
// general fetch.
TEST(DistributionTest, HalosAndReorderedTilesAreNoCollective) {
  ProcessGrid grid{{2}};
  RankBoxes from = layout({8}, {Tiling::cut(0)}, grid);
  RankBoxes halo = from;
  halo[0].hi[0] += 1;
  halo[1].lo[0] -= 1;
  EXPECT_FALSE(matchCollective(from, halo, grid));
  RankBoxes swapped = {from[1], from[0]};
  RankBoxes whole = layout({8}, {Tiling::replicate()}, grid);
  EXPECT_FALSE(matchCollective(swapped, whole, grid));
  Collective gather;
  gather.axes = {0};
  EXPECT_FALSE(applyCollective(gather, swapped, grid));
  gather.axes = {1};
  EXPECT_FALSE(applyCollective(gather, from, grid));
}

// A layout read without the cuts of two dimensions is two all-gathers,
// the last dimension first; a region that is not whole tiles is none.
TEST(DistributionTest, AllGathersOfSeveralDimensions) {
  ProcessGrid grid{{2, 2, 2}};
  RankBoxes from =
      layout({8, 16}, {Tiling::cut(0), Tiling::cut(1), Tiling::cut(0)}, grid);
  RankBoxes to = layout(
      {8, 16}, {Tiling::replicate(), Tiling::replicate(), Tiling::replicate()},
      grid);
  EXPECT_FALSE(matchCollective(from, to, grid));
  auto gathers = matchAllGathers(from, to, grid);
  ASSERT_TRUE(gathers);
  ASSERT_EQ(gathers->size(), 2u);
  EXPECT_EQ((*gathers)[0].dim, 1u);
  EXPECT_EQ((*gathers)[0].axes, (std::vector<int64_t>{1}));
  EXPECT_EQ((*gathers)[1].dim, 0u);
  EXPECT_EQ((*gathers)[1].axes, (std::vector<int64_t>{0, 2}));
  RankBoxes boxes = from;
  for (const Collective &c : *gathers)
    boxes = *applyCollective(c, boxes, grid);
  EXPECT_EQ(boxes, to);

  RankBoxes part = to;
  for (Box &b : part)
    b.hi[0] = 3;
  EXPECT_FALSE(matchAllGathers(from, part, grid));
}

} // namespace
