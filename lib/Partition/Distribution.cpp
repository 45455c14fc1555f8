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

void tofu::widenToHeldTiles(RankBoxes &regions, const RankBoxes &tiles,
                            const std::vector<bool> &free) {
  if (tiles.size() != regions.size())
    return;
  for (size_t r = 0; r < regions.size(); ++r) {
    if (regions[r].volume() <= 0)
      return;
    for (size_t d = 0; d < regions[r].lo.size(); ++d)
      if (regions[r].lo[d] < tiles[r].lo[d] ||
          regions[r].hi[d] > tiles[r].hi[d])
        return;
  }
  for (size_t d = 0; d < free.size(); ++d) {
    if (!free[d])
      continue;
    int64_t extent = tiles.front().hi[d] - tiles.front().lo[d];
    bool widen = true;
    for (size_t r = 0; r < regions.size(); ++r)
      widen &= regions[r].lo[d] == tiles[r].lo[d] &&
               tiles[r].hi[d] - tiles[r].lo[d] == extent;
    if (widen)
      for (size_t r = 0; r < regions.size(); ++r)
        regions[r].hi[d] = tiles[r].hi[d];
  }
}

/// The ranks of the group of `rank` over `axes`, in group order, and the
/// index of `rank` among them.
static std::vector<int64_t> getGroup(const ProcessGrid &grid, int64_t rank,
                                     const std::vector<int64_t> &axes,
                                     int64_t &index) {
  std::vector<int64_t> coords = grid.getCoords(rank);
  int64_t size = 1;
  index = 0;
  for (int64_t a : axes) {
    index = index * grid.shape[a] + coords[a];
    size *= grid.shape[a];
  }
  std::vector<int64_t> members;
  for (int64_t j = 0; j < size; ++j) {
    std::vector<int64_t> c = coords;
    int64_t rest = j;
    for (size_t i = axes.size(); i-- > 0;) {
      c[axes[i]] = rest % grid.shape[axes[i]];
      rest /= grid.shape[axes[i]];
    }
    int64_t member = 0;
    for (size_t d = 0; d < c.size(); ++d)
      member = member * grid.shape[d] + c[d];
    members.push_back(member);
  }
  return members;
}

std::optional<RankBoxes> tofu::applyCollective(const Collective &c,
                                               const RankBoxes &held,
                                               const ProcessGrid &grid) {
  if (c.axes.empty() || held.empty() || (int64_t)held.size() != grid.size())
    return std::nullopt;
  for (size_t i = 0; i < c.axes.size(); ++i)
    if (c.axes[i] < 0 || c.axes[i] >= (int64_t)grid.shape.size() ||
        (i > 0 && c.axes[i] <= c.axes[i - 1]))
      return std::nullopt;
  size_t rank = held.front().lo.size();
  bool concatenates = c.kind != Collective::Kind::AllSlice;
  bool splits = c.kind != Collective::Kind::AllGather;
  size_t concatDim = c.kind == Collective::Kind::AllToAll ? c.concatDim : c.dim;
  if (c.dim >= rank || concatDim >= rank ||
      (c.kind == Collective::Kind::AllToAll && c.dim == c.concatDim))
    return std::nullopt;
  RankBoxes out = held;
  for (size_t r = 0; r < held.size(); ++r) {
    int64_t index = 0;
    std::vector<int64_t> members = getGroup(grid, r, c.axes, index);
    int64_t size = members.size();
    if (splits) {
      int64_t extent = held[r].hi[c.dim] - held[r].lo[c.dim] + 1;
      if (extent % size != 0)
        return std::nullopt;
      int64_t chunk = extent / size;
      out[r].lo[c.dim] = held[r].lo[c.dim] + index * chunk;
      out[r].hi[c.dim] = out[r].lo[c.dim] + chunk - 1;
    }
    if (!concatenates)
      continue;
    // The group's boxes follow each other along the concatenated dimension
    // and agree on every other one.
    for (int64_t j = 1; j < size; ++j) {
      const Box &prev = held[members[j - 1]], &cur = held[members[j]];
      for (size_t d = 0; d < rank; ++d)
        if (d == concatDim ? cur.lo[d] != prev.hi[d] + 1
                           : cur.lo[d] != prev.lo[d] || cur.hi[d] != prev.hi[d])
          return std::nullopt;
    }
    out[r].lo[concatDim] = held[members.front()].lo[concatDim];
    out[r].hi[concatDim] = held[members.back()].hi[concatDim];
  }
  return out;
}

/// Every set of grid axes whose ranks number `size`, in a fixed order (by
/// the bit mask of the axes).
static std::vector<std::vector<int64_t>> getAxisSets(const ProcessGrid &grid,
                                                     int64_t size) {
  std::vector<std::vector<int64_t>> sets;
  size_t n = grid.shape.size();
  for (uint64_t mask = 1; n < 64 && mask < (uint64_t(1) << n); ++mask) {
    std::vector<int64_t> axes;
    int64_t product = 1;
    for (size_t a = 0; a < n; ++a)
      if (mask & (uint64_t(1) << a)) {
        axes.push_back(a);
        product *= grid.shape[a];
      }
    if (product == size)
      sets.push_back(std::move(axes));
  }
  return sets;
}

std::optional<Collective> tofu::matchCollective(const RankBoxes &held,
                                                const RankBoxes &wanted,
                                                const ProcessGrid &grid) {
  if (held.empty() || held.size() != wanted.size() || !haveUniformShape(held) ||
      !haveUniformShape(wanted))
    return std::nullopt;
  Shape from = getBoxShape(held.front()), to = getBoxShape(wanted.front());
  if (from.size() != to.size())
    return std::nullopt;
  // The local shapes name the collective and its group size.
  std::vector<size_t> grows, shrinks;
  for (size_t d = 0; d < from.size(); ++d) {
    if (to[d] > from[d])
      grows.push_back(d);
    else if (to[d] < from[d])
      shrinks.push_back(d);
  }
  auto ratio = [](int64_t big, int64_t small) -> int64_t {
    return small > 0 && big % small == 0 ? big / small : 0;
  };
  Collective c;
  int64_t size = 0;
  if (grows.size() == 1 && shrinks.empty()) {
    c.kind = Collective::Kind::AllGather;
    c.dim = grows[0];
    size = ratio(to[c.dim], from[c.dim]);
  } else if (grows.empty() && shrinks.size() == 1) {
    c.kind = Collective::Kind::AllSlice;
    c.dim = shrinks[0];
    size = ratio(from[c.dim], to[c.dim]);
  } else if (grows.size() == 1 && shrinks.size() == 1) {
    c.kind = Collective::Kind::AllToAll;
    c.dim = shrinks[0];
    c.concatDim = grows[0];
    size = ratio(to[c.concatDim], from[c.concatDim]);
    if (size != ratio(from[c.dim], to[c.dim]))
      size = 0;
  }
  if (size < 2)
    return std::nullopt;
  for (std::vector<int64_t> &axes : getAxisSets(grid, size)) {
    c.axes = std::move(axes);
    std::optional<RankBoxes> result = applyCollective(c, held, grid);
    if (result && *result == wanted)
      return c;
  }
  return std::nullopt;
}

std::optional<std::vector<Collective>>
tofu::matchAllGathers(const RankBoxes &held, const RankBoxes &wanted,
                      const ProcessGrid &grid) {
  if (held.empty() || held.size() != wanted.size() || !haveUniformShape(held) ||
      !haveUniformShape(wanted))
    return std::nullopt;
  Shape to = getBoxShape(wanted.front());
  RankBoxes boxes = held;
  std::vector<Collective> gathers;
  for (size_t d = to.size(); d-- > 0;) {
    Shape from = getBoxShape(boxes.front());
    if (from.size() != to.size() || to[d] < from[d])
      return std::nullopt;
    if (to[d] == from[d])
      continue;
    if (to[d] % from[d] != 0)
      return std::nullopt;
    int64_t size = to[d] / from[d];
    // The first set of axes of that many ranks whose gather applies.
    std::optional<RankBoxes> next;
    Collective c;
    c.dim = d;
    for (std::vector<int64_t> &axes : getAxisSets(grid, size)) {
      c.axes = std::move(axes);
      if ((next = applyCollective(c, boxes, grid)))
        break;
    }
    if (!next)
      return std::nullopt;
    boxes = std::move(*next);
    gathers.push_back(c);
  }
  if (gathers.empty() || boxes != wanted)
    return std::nullopt;
  return gathers;
}
