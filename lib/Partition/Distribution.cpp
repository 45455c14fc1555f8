//===- Distribution.cpp - Per-rank boxes of a partitioned program ---------===//

#include "tofu/Partition/Distribution.h"

#include <algorithm>

using namespace tofu;

int64_t ProcessGrid::size() const {
  int64_t n = 1;
  for (int64_t k : shape)
    n *= k;
  return n;
}

std::vector<int64_t> ProcessGrid::getCoords(int64_t rank) const {
  std::vector<int64_t> coords(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    coords[i] = rank % shape[i];
    rank /= shape[i];
  }
  return coords;
}

/// Splits dimension `dim` of every box with the coordinate of grid axis
/// `axis`, the recursion of one step.
static bool splitBoxes(RankBoxes &boxes, size_t dim, size_t axis,
                       const ProcessGrid &grid, std::string &error) {
  int64_t k = grid.shape[axis];
  for (size_t r = 0; r < boxes.size(); ++r) {
    Box &b = boxes[r];
    int64_t extent = b.hi[dim] - b.lo[dim] + 1;
    if (extent % k != 0) {
      error = "dimension " + std::to_string(dim) + " of local extent " +
              std::to_string(extent) + " does not divide by " +
              std::to_string(k) + " at step " + std::to_string(axis);
      return false;
    }
    int64_t chunk = extent / k;
    b.lo[dim] += grid.getCoords(r)[axis] * chunk;
    b.hi[dim] = b.lo[dim] + chunk - 1;
  }
  return true;
}

std::optional<RankBoxes>
tofu::getLayoutBoxes(const Shape &shape, const std::vector<Tiling> &perStep,
                     const ProcessGrid &grid, std::string &error) {
  if (perStep.size() != grid.shape.size()) {
    error = "the layout has " + std::to_string(perStep.size()) +
            " steps but the grid has " + std::to_string(grid.shape.size()) +
            " axes";
    return std::nullopt;
  }
  RankBoxes boxes(grid.size(), Box::whole(shape));
  for (size_t i = 0; i < perStep.size(); ++i) {
    const Tiling &t = perStep[i];
    if (t.kind == Tiling::Kind::Replicate)
      continue;
    if (t.kind != Tiling::Kind::Cut || t.dim >= shape.size()) {
      error = "step " + std::to_string(i) + " has tiling '" + t.str() +
              "', not a cut of one of the " + std::to_string(shape.size()) +
              " dimensions or a replica";
      return std::nullopt;
    }
    if (!splitBoxes(boxes, t.dim, i, grid, error))
      return std::nullopt;
  }
  return boxes;
}

std::optional<RankBoxes>
tofu::getIterationBoxes(const std::vector<int64_t> &extents,
                        const std::vector<int> &cutVars,
                        const ProcessGrid &grid, std::string &error) {
  if (cutVars.size() != grid.shape.size()) {
    error = "the operator has " + std::to_string(cutVars.size()) +
            " strategies but the grid has " +
            std::to_string(grid.shape.size()) + " axes";
    return std::nullopt;
  }
  RankBoxes boxes(grid.size(), Box::whole(extents));
  for (size_t i = 0; i < cutVars.size(); ++i) {
    if (cutVars[i] < 0)
      continue;
    if ((size_t)cutVars[i] >= extents.size()) {
      error = "loop " + std::to_string(cutVars[i]) + " is out of range";
      return std::nullopt;
    }
    if (!splitBoxes(boxes, cutVars[i], i, grid, error))
      return std::nullopt;
  }
  return boxes;
}

Shape tofu::getBoxShape(const Box &box) {
  Shape shape(box.lo.size());
  for (size_t d = 0; d < shape.size(); ++d)
    shape[d] = box.hi[d] - box.lo[d] + 1;
  return shape;
}

bool tofu::haveUniformShape(const RankBoxes &boxes) {
  for (const Box &b : boxes)
    if (getBoxShape(b) != getBoxShape(boxes.front()))
      return false;
  return true;
}

int64_t tofu::getReceivedElements(const RankBoxes &held,
                                  const RankBoxes &required) {
  return getFetchVolume(held, required);
}

std::string tofu::checkFetchable(const RankBoxes &held,
                                 const RankBoxes &required) {
  std::vector<Box> distinct;
  for (const Box &b : held)
    if (std::find(distinct.begin(), distinct.end(), b) == distinct.end())
      distinct.push_back(b);
  for (size_t i = 0; i < distinct.size(); ++i)
    for (size_t j = i + 1; j < distinct.size(); ++j)
      if (distinct[i].intersect(distinct[j]).volume() > 0)
        return "held regions " + distinct[i].str() + " and " +
               distinct[j].str() + " overlap";
  for (size_t r = 0; r < required.size(); ++r) {
    int64_t covered = 0;
    for (const Box &b : distinct)
      covered += required[r].intersect(b).volume();
    if (covered != required[r].volume())
      return "rank " + std::to_string(r) + " requires " + required[r].str() +
             " but only " + std::to_string(covered) + " of its " +
             std::to_string(required[r].volume()) + " elements are held";
  }
  return "";
}

std::optional<std::pair<int64_t, int64_t>>
tofu::getContiguousRange(const Box &box, const Shape &shape) {
  // Trailing dimensions must be whole, then at most one dimension may take
  // a range, and the leading ones a single index.
  size_t d = shape.size();
  while (d > 0 && box.lo[d - 1] == 0 && box.hi[d - 1] == shape[d - 1] - 1)
    --d;
  for (size_t i = 0; i + 1 < d; ++i)
    if (box.lo[i] != box.hi[i])
      return std::nullopt;
  int64_t lo = 0, hi = 0;
  for (size_t i = 0; i < shape.size(); ++i) {
    lo = lo * shape[i] + box.lo[i];
    hi = hi * shape[i] + box.hi[i];
  }
  return std::pair{lo, hi};
}

/// The coordinates of the row-major linear indices `lo` and `hi` in a
/// tensor of `shape`, as the corners of a box.
static Box getCorners(int64_t lo, int64_t hi, const Shape &shape) {
  Box box;
  box.lo.resize(shape.size());
  box.hi.resize(shape.size());
  for (size_t i = shape.size(); i-- > 0;) {
    box.lo[i] = lo % shape[i];
    box.hi[i] = hi % shape[i];
    lo /= shape[i];
    hi /= shape[i];
  }
  return box;
}

std::optional<Box> tofu::getBoxOfRange(int64_t lo, int64_t hi,
                                       const Shape &shape) {
  Box box = getCorners(lo, hi, shape);
  std::optional<std::pair<int64_t, int64_t>> range =
      getContiguousRange(box, shape);
  if (!range || box.volume() != range->second - range->first + 1)
    return std::nullopt;
  return box;
}

Box tofu::getContiguousHull(const Box &box, const Shape &shape) {
  Box hull = box;
  size_t d = 0;
  while (d < shape.size() && box.lo[d] == box.hi[d])
    ++d;
  for (++d; d < shape.size(); ++d) {
    hull.lo[d] = 0;
    hull.hi[d] = shape[d] - 1;
  }
  return hull;
}

Box tofu::getRangeHull(int64_t lo, int64_t hi, const Shape &shape) {
  Box box = getCorners(lo, hi, shape);
  // Leading dimensions where the ends agree stay single; from the first
  // where they differ, the box spans [lo, hi] there and all after it.
  size_t d = 0;
  while (d < shape.size() && box.lo[d] == box.hi[d])
    ++d;
  if (d < shape.size() && box.lo[d] > box.hi[d])
    std::swap(box.lo[d], box.hi[d]);
  for (++d; d < shape.size(); ++d) {
    box.lo[d] = 0;
    box.hi[d] = shape[d] - 1;
  }
  return box;
}

RankBoxes tofu::getUniformWindows(const RankBoxes &regions,
                                  const Shape &shape) {
  Shape extent(shape.size(), 0);
  for (const Box &r : regions)
    for (size_t d = 0; d < shape.size(); ++d)
      extent[d] = std::max(extent[d], r.hi[d] - r.lo[d] + 1);
  RankBoxes windows;
  for (const Box &r : regions) {
    Box w = r;
    for (size_t d = 0; d < shape.size(); ++d) {
      w.lo[d] = std::clamp<int64_t>(r.lo[d], 0, shape[d] - extent[d]);
      w.hi[d] = w.lo[d] + extent[d] - 1;
    }
    windows.push_back(w);
  }
  return windows;
}
