//===- FetchPlanTest.cpp - The runtimes' fetch plan against Distribution.h ===//
//
// The parts and the per-element mapping that the MPI runtime and a
// MultiFetch kernel execute must move exactly what Distribution.h (the
// search's and tofu-partition's region arithmetic) says: every wanted
// element from a rank that holds it, read at the right place of that rank's
// tile, nothing a rank already holds, and Lemma 1's count in all; and the
// copy kernel's arithmetic (CopyParts.h), run on the host, must deliver
// every element to its place in any layout.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/FetchPlan.h"
#include "tofu/Partition/Distribution.h"
#include "tofu/Runtime/CopyParts.h"

#include <gtest/gtest.h>

#include <map>

using namespace tofu;

namespace {

std::vector<fetch::Box> toFetchBoxes(const RankBoxes &boxes) {
  std::vector<fetch::Box> out;
  for (const Box &b : boxes)
    out.push_back({b.lo, b.hi});
  return out;
}

bool contains(const Box &b, const std::vector<int64_t> &x) {
  for (size_t d = 0; d < x.size(); ++d)
    if (x[d] < b.lo[d] || x[d] > b.hi[d])
      return false;
  return true;
}

/// The coordinates of the element at row-major `offset` of `box`'s tile.
std::vector<int64_t> coordinatesOf(const Box &box, int64_t offset) {
  Shape shape = getBoxShape(box);
  std::vector<int64_t> x(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    x[d] = box.lo[d] + offset % shape[d];
    offset /= shape[d];
  }
  return x;
}

/// Column-major strides with one element of padding per dimension (the
/// source tiles), or row-major strides with two (the received tiles): the
/// copy parts must follow any layout.
std::vector<int64_t> getPaddedStrides(const Shape &shape, bool columnMajor) {
  size_t n = shape.size();
  std::vector<int64_t> strides(n, 1);
  if (columnMajor)
    for (size_t d = 1; d < n; ++d)
      strides[d] = strides[d - 1] * (shape[d - 1] + 1);
  else
    for (size_t d = n; d-- > 1;)
      strides[d - 1] = strides[d] * (shape[d] + 2);
  return strides;
}

int64_t getSpan(const Shape &shape, const std::vector<int64_t> &strides) {
  int64_t span = 1;
  for (size_t d = 0; d < shape.size(); ++d)
    span += (shape[d] - 1) * strides[d];
  return span;
}

/// Runs every receiver's MultiFetch on the host with the kernel's
/// arithmetic (getMultiFetchParts, CopyParts.h): the held tiles, in padded
/// column-major layouts, hold each element's row-major index in the
/// tensor; every element of every received tile, in a padded row-major
/// layout, must hold its own index afterwards.
void checkMultiFetch(const RankBoxes &held, const RankBoxes &wanted,
                     const std::vector<fetch::Part> &parts) {
  size_t n = held[0].lo.size();
  Shape extent(n, 0);
  for (const RankBoxes *boxes : {&held, &wanted})
    for (const Box &b : *boxes)
      for (size_t d = 0; d < n; ++d)
        extent[d] = std::max(extent[d], b.hi[d] + 1);
  auto indexOf = [&](const std::vector<int64_t> &x) {
    double index = 0;
    for (size_t d = 0; d < n; ++d)
      index = index * extent[d] + x[d];
    return index;
  };
  std::vector<std::vector<double>> sources(held.size());
  std::vector<fetch::Tile> tiles(held.size());
  for (size_t r = 0; r < held.size(); ++r) {
    Shape shape = getBoxShape(held[r]);
    tiles[r].strides = getPaddedStrides(shape, /*columnMajor=*/true);
    sources[r].assign(getSpan(shape, tiles[r].strides), -1.0);
    for (int64_t i = 0; i < held[r].volume(); ++i) {
      std::vector<int64_t> x = coordinatesOf(held[r], i);
      sources[r][fetch::getTileOffset(tiles[r], toFetchBoxes({held[r]})[0],
                                      x)] = indexOf(x);
    }
    tiles[r].data = reinterpret_cast<const char *>(sources[r].data());
  }
  std::vector<fetch::Box> h = toFetchBoxes(held), w = toFetchBoxes(wanted);
  for (size_t r = 0; r < wanted.size(); ++r) {
    Shape shape = getBoxShape(wanted[r]);
    fetch::Tile target;
    target.strides = getPaddedStrides(shape, /*columnMajor=*/false);
    std::vector<double> received(getSpan(shape, target.strides), -2.0);
    target.data = reinterpret_cast<const char *>(received.data());
    std::vector<copy::Part> launch;
    ASSERT_TRUE(fetch::getMultiFetchParts(parts, h, w, int(r), tiles, target,
                                          sizeof(double), launch));
    int64_t total = launch.empty()
                        ? 0
                        : launch.back().begin + copy::getVolume(launch.back());
    EXPECT_EQ(total, wanted[r].volume()) << "rank " << r;
    copy::copyOnHost(launch, total, sizeof(double));
    for (int64_t i = 0; i < wanted[r].volume(); ++i) {
      std::vector<int64_t> x = coordinatesOf(wanted[r], i);
      EXPECT_EQ(received[fetch::getTileOffset(target, w[r], x)], indexOf(x))
          << "rank " << r << " element " << i;
    }
  }
}

/// Checks the plan of `held` -> `wanted` element by element against
/// Distribution.h, and returns the number of elements each source sends.
std::map<int, int64_t> checkPlan(const RankBoxes &held,
                                 const RankBoxes &wanted) {
  EXPECT_EQ(checkFetchable(held, wanted), "");
  std::vector<fetch::Box> h = toFetchBoxes(held), w = toFetchBoxes(wanted);
  std::vector<fetch::Part> parts = fetch::planFetch(h, w);
  int64_t moved = 0;
  std::map<int, int64_t> sent;
  for (int r = 0; r < (int)wanted.size(); ++r) {
    std::vector<fetch::ElementSource> map =
        fetch::mapElements(parts, h, w, r);
    EXPECT_EQ((int64_t)map.size(), wanted[r].volume());
    for (int64_t i = 0; i < (int64_t)map.size(); ++i) {
      std::vector<int64_t> x = coordinatesOf(wanted[r], i);
      const fetch::ElementSource &e = map[i];
      EXPECT_GE(e.source, 0) << "rank " << r << " element " << i
                             << " has no source";
      if (e.source < 0)
        continue;
      EXPECT_TRUE(contains(held[e.source], x))
          << "rank " << r << " reads element " << i << " from rank "
          << e.source << ", which does not hold it";
      EXPECT_EQ(coordinatesOf(held[e.source], e.offset), x)
          << "rank " << r << " element " << i << " offset " << e.offset;
      if (contains(held[r], x))
        EXPECT_EQ(e.source, r) << "rank " << r << " is sent what it holds";
      if (e.source != r) {
        ++moved;
        ++sent[e.source];
      }
    }
  }
  EXPECT_EQ(moved, getReceivedElements(held, wanted));
  checkMultiFetch(held, wanted, parts);
  return sent;
}

RankBoxes layout(const Shape &shape, const std::vector<Tiling> &perStep,
                 const ProcessGrid &grid) {
  std::string error;
  auto boxes = getLayoutBoxes(shape, perStep, grid, error);
  EXPECT_TRUE(boxes) << error;
  return boxes ? *boxes : RankBoxes{};
}

// Chunks of 7 rows over 3 ranks (3, 2, 2), each rank wanting its chunk
// with a halo of one row on either side, clipped to the tensor: tiles of
// different shapes, and regions that straddle two sources.
TEST(FetchPlanTest, UnevenChunksWithHalos) {
  RankBoxes held, wanted;
  for (unsigned r = 0; r < 3; ++r) {
    auto [lo, hi] = getChunk(7, 3, r);
    held.push_back(Box{{lo, 0}, {hi, 4}});
    wanted.push_back(Box{{std::max<int64_t>(lo - 1, 0), 0},
                         {std::min<int64_t>(hi + 1, 6), 4}});
  }
  checkPlan(held, wanted);
  // And the whole tensor on every rank (an all-gather of uneven chunks).
  checkPlan(held, RankBoxes(3, Box{{0, 0}, {6, 4}}));
}

// [[0],[1]] -> [[1],[0]] on a 2x2 grid, and rows -> columns on 4 ranks
// (an all-to-all): each rank reads parts of its tile from every other.
TEST(FetchPlanTest, TransposedLayouts) {
  ProcessGrid grid{{2, 2}};
  checkPlan(layout({4, 6}, {Tiling::cut(0), Tiling::cut(1)}, grid),
            layout({4, 6}, {Tiling::cut(1), Tiling::cut(0)}, grid));
  ProcessGrid line{{4}};
  std::map<int, int64_t> sent =
      checkPlan(layout({8, 8}, {Tiling::cut(0)}, line),
                layout({8, 8}, {Tiling::cut(1)}, line));
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(sent[r], 12) << "rank " << r;
}

// A tensor cut along axis 0 and replicated along axis 1 of a 2x2 grid,
// gathered whole: every region has two owners, and the receivers spread
// their reads over both (receiver mod owners), so that no rank sends
// everything.
TEST(FetchPlanTest, ReplicatedSourcesShareTheWork) {
  ProcessGrid grid{{2, 2}};
  RankBoxes held = layout({4, 2}, {Tiling::cut(0), Tiling::replicate()}, grid);
  std::map<int, int64_t> sent =
      checkPlan(held, RankBoxes(4, Box{{0, 0}, {3, 1}}));
  for (int r = 0; r < 4; ++r)
    EXPECT_EQ(sent[r], 4) << "rank " << r;
}

// Three grid axes over a 3-d tensor, to a layout cut along other
// dimensions at other axes.
TEST(FetchPlanTest, MultiAxisThreeDimensions) {
  ProcessGrid grid{{2, 2, 2}};
  checkPlan(
      layout({4, 6, 8}, {Tiling::cut(0), Tiling::cut(1), Tiling::cut(2)}, grid),
      layout({4, 6, 8}, {Tiling::cut(2), Tiling::cut(2), Tiling::cut(0)},
             grid));
  checkPlan(layout({4, 6, 8},
                   {Tiling::replicate(), Tiling::cut(2), Tiling::cut(2)}, grid),
            layout({4, 6, 8},
                   {Tiling::cut(1), Tiling::replicate(), Tiling::cut(0)}, grid));
}

// Parts are listed receiver by receiver, and the offsets of a fetch's
// operands give the boxes rank by rank.
TEST(FetchPlanTest, PartsAndBoxesFromOffsets) {
  std::vector<fetch::Box> held = fetch::getBoxes({0, 4}, {4}, 2);
  EXPECT_EQ(held[1].lo, (std::vector<int64_t>{4}));
  EXPECT_EQ(held[1].hi, (std::vector<int64_t>{7}));
  std::vector<fetch::Box> wanted = fetch::getBoxes({2, 2}, {4}, 2);
  std::vector<fetch::Part> parts = fetch::planFetch(held, wanted);
  ASSERT_EQ(parts.size(), 4u);
  EXPECT_EQ(parts[0].receiver, 0);
  EXPECT_EQ(parts[0].source, 0);
  EXPECT_EQ(parts[1].receiver, 0);
  EXPECT_EQ(parts[1].source, 1);
  EXPECT_EQ(parts[1].box.lo, (std::vector<int64_t>{4}));
  EXPECT_EQ(parts[2].receiver, 1);
  EXPECT_EQ(parts[2].source, 0);
  EXPECT_EQ(parts[3].source, 1);
}

} // namespace
