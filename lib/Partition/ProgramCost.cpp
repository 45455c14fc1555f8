//===- ProgramCost.cpp - Bytes the generated SPMD program moves -----------===//
//
// Mirrors the conversions of tofu-partition (lib/Dialect/Tofu/Transforms/
// Partition.cpp) on the MLIR-free graph. The two are kept equal by the
// differential tests, which compare the plan's bytes with the runtime's
// count tensor by tensor.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/ProgramCost.h"

#include <algorithm>
#include <iterator>
#include <unordered_map>
#include <unordered_set>

using namespace tofu;

ProgramCostModel::ProgramCostModel(const Graph &graph, ProcessGrid grid)
    : graph(graph), grid(std::move(grid)) {
  held.assign(graph.tensors.size(), true);
  for (size_t t = 0; t < graph.tensors.size(); ++t)
    held[t] = !graph.isRebuilt(t);
  for (const OpNode &node : graph.ops) {
    std::string reason;
    std::optional<LoopSpace> space =
        inferLoopSpace(*node.desc, node.shapes, reason);
    if (!space) {
      if (error.empty())
        error = node.name + ": " + reason;
      space = LoopSpace();
    }
    std::vector<std::vector<int>> vars;
    for (const tdl::OutputDesc &out : node.desc->outputs) {
      std::vector<int> dims;
      for (const std::string &v : out.vars)
        dims.push_back(space->lookup(v));
      vars.push_back(std::move(dims));
    }
    outputVars.push_back(std::move(vars));
    // Accesses whose every index is a variable or a whole dimension.
    std::vector<std::vector<std::vector<int>>> simple;
    for (unsigned j = 0; j < node.desc->inputs.size(); ++j) {
      std::vector<std::vector<int>> accesses;
      for (const tdl::Expr *access : getInputAccesses(*node.desc, j)) {
        std::vector<int> dims;
        for (const tdl::IndexExpr &idx : access->indices)
          dims.push_back(idx.isWhole() ? kWhole
                         : idx.isVar() ? space->lookup(idx.var)
                                       : kOther);
        if (std::find(dims.begin(), dims.end(), kOther) != dims.end()) {
          accesses.clear();
          break;
        }
        accesses.push_back(std::move(dims));
      }
      simple.push_back(std::move(accesses));
    }
    simpleAccesses.push_back(std::move(simple));
    // The loop variables every dimension of every input is read with.
    std::vector<std::vector<std::vector<int>>> read;
    for (unsigned j = 0; j < node.desc->inputs.size(); ++j) {
      std::vector<std::vector<int>> dims;
      for (const tdl::Expr *access : getInputAccesses(*node.desc, j)) {
        dims.resize(access->indices.size());
        for (size_t d = 0; d < access->indices.size(); ++d) {
          std::vector<std::string> names;
          access->indices[d].collectVars(names);
          for (const std::string &name : names)
            if (int v = space->lookup(name);
                v >= 0 && std::find(dims[d].begin(), dims[d].end(), v) ==
                              dims[d].end())
              dims[d].push_back(v);
        }
      }
      read.push_back(std::move(dims));
    }
    readVars.push_back(std::move(read));
    spaces.push_back(std::move(*space));
  }
}


//===----------------------------------------------------------------------===//
// Regions factored by dimension
//===----------------------------------------------------------------------===//

/// Calls `visit(coords)` for every combination of coordinates of the grid
/// `axes`, row-major.
template <typename Visit>
static void forEachCoords(const std::vector<unsigned> &axes,
                          const ProcessGrid &grid, Visit visit) {
  std::vector<int64_t> coords(axes.size(), 0);
  for (;;) {
    visit(coords);
    size_t i = axes.size();
    while (i > 0 && ++coords[i - 1] == grid.shape[axes[i - 1]])
      coords[--i] = 0;
    if (i == 0)
      return;
  }
}

/// The interval of `dim` at `coords`, the coordinates of `axes`, a superset
/// of the axes `dim` depends on.
static std::pair<int64_t, int64_t> getAt(const DimRanges &dim,
                                         const std::vector<unsigned> &axes,
                                         const std::vector<int64_t> &coords,
                                         const ProcessGrid &grid) {
  size_t index = 0;
  for (unsigned a : dim.axes) {
    size_t pos = std::find(axes.begin(), axes.end(), a) - axes.begin();
    index = index * grid.shape[a] + coords[pos];
  }
  return dim.at[index];
}

static int64_t getLength(std::pair<int64_t, int64_t> range) {
  return std::max<int64_t>(range.second - range.first + 1, 0);
}

/// The sorted union of two sets of axes.
static std::vector<unsigned> unite(const std::vector<unsigned> &a,
                                   const std::vector<unsigned> &b) {
  std::vector<unsigned> out;
  std::set_union(a.begin(), a.end(), b.begin(), b.end(),
                 std::back_inserter(out));
  return out;
}

/// A region whose every dimension is whole on every rank.
static GridRegion getWhole(const Shape &shape) {
  GridRegion region(shape.size());
  for (size_t d = 0; d < shape.size(); ++d)
    region[d].at = {{0, shape[d] - 1}};
  return region;
}

/// The recursion of Distribution.h: `extents` split at each grid axis i
/// along dimension `dims[i]` (-1 where the axis does not split).
static std::optional<GridRegion> split(const std::vector<int64_t> &extents,
                                       const std::vector<int> &dims,
                                       const ProcessGrid &grid,
                                       std::string &message) {
  std::vector<int64_t> local = extents;
  std::vector<std::vector<int64_t>> chunks(extents.size());
  GridRegion region(extents.size());
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] < 0)
      continue;
    size_t d = dims[i];
    int64_t k = grid.shape[i];
    if (local[d] % k != 0) {
      message = "dimension " + std::to_string(d) + " of local extent " +
                std::to_string(local[d]) + " does not divide by " +
                std::to_string(k) + " at step " + std::to_string(i);
      return std::nullopt;
    }
    local[d] /= k;
    region[d].axes.push_back(i);
    chunks[d].push_back(local[d]);
  }
  for (size_t d = 0; d < extents.size(); ++d)
    forEachCoords(region[d].axes, grid, [&](const std::vector<int64_t> &c) {
      int64_t lo = 0;
      for (size_t x = 0; x < c.size(); ++x)
        lo += c[x] * chunks[d][x];
      region[d].at.push_back({lo, lo + local[d] - 1});
    });
  return region;
}

/// The position among `axes` of each axis in `own` (the axes a dimension
/// depends on, whose row-major table it indexes) and its stride in that
/// table, so that an interval is found without searching.
static std::vector<std::pair<size_t, size_t>>
getStrides(const std::vector<unsigned> &own, const std::vector<unsigned> &axes,
           const ProcessGrid &grid) {
  std::vector<std::pair<size_t, size_t>> strides(own.size());
  size_t stride = 1;
  for (size_t x = own.size(); x-- > 0;) {
    size_t pos = std::find(axes.begin(), axes.end(), own[x]) - axes.begin();
    strides[x] = {pos, stride};
    stride *= grid.shape[own[x]];
  }
  return strides;
}

/// Elements the ranks must receive to hold `want` when each holds `have`
/// (getReceivedElements of Distribution.h). Dimensions that share no axis
/// vary independently, so the sum over the ranks of the volumes is a
/// product of sums over groups of dimensions.
static int64_t getReceived(const GridRegion &have, const GridRegion &want,
                           const ProcessGrid &grid) {
  size_t rank = want.size();
  bool same = true;
  for (size_t d = 0; d < rank && same; ++d)
    same = have[d].axes == want[d].axes && have[d].at == want[d].at;
  if (same)
    return 0;
  // Group the dimensions that depend on a common axis.
  std::vector<size_t> parent(rank);
  for (size_t d = 0; d < rank; ++d)
    parent[d] = d;
  auto find = [&](size_t d) {
    while (parent[d] != d)
      d = parent[d] = parent[parent[d]];
    return d;
  };
  std::vector<int> owner(grid.shape.size(), -1);
  std::vector<std::vector<unsigned>> axes(rank);
  for (size_t d = 0; d < rank; ++d) {
    axes[d] = unite(have[d].axes, want[d].axes);
    for (unsigned a : axes[d]) {
      if (owner[a] < 0)
        owner[a] = d;
      else
        parent[find(d)] = find(owner[a]);
    }
  }
  // The axes no dimension depends on repeat every sum.
  int64_t wanted = 1, held = 1;
  for (unsigned a = 0; a < grid.shape.size(); ++a)
    if (owner[a] < 0) {
      wanted *= grid.shape[a];
      held *= grid.shape[a];
    }
  for (size_t root = 0; root < rank; ++root) {
    if (find(root) != root)
      continue;
    std::vector<size_t> dims;
    std::vector<unsigned> all;
    for (size_t d = 0; d < rank; ++d)
      if (find(d) == root) {
        dims.push_back(d);
        all = unite(all, axes[d]);
      }
    std::vector<std::vector<std::pair<size_t, size_t>>> wantStrides,
        haveStrides;
    for (size_t d : dims) {
      wantStrides.push_back(getStrides(want[d].axes, all, grid));
      haveStrides.push_back(getStrides(have[d].axes, all, grid));
    }
    auto at = [](const DimRanges &dim,
                 const std::vector<std::pair<size_t, size_t>> &strides,
                 const std::vector<int64_t> &coords) {
      size_t index = 0;
      for (auto [pos, stride] : strides)
        index += coords[pos] * stride;
      return dim.at[index];
    };
    int64_t sumWanted = 0, sumHeld = 0;
    forEachCoords(all, grid, [&](const std::vector<int64_t> &c) {
      int64_t w = 1, h = 1;
      for (size_t x = 0; x < dims.size(); ++x) {
        auto mine = at(want[dims[x]], wantStrides[x], c);
        auto there = at(have[dims[x]], haveStrides[x], c);
        w *= getLength(mine);
        h *= getLength({std::max(mine.first, there.first),
                        std::min(mine.second, there.second)});
      }
      sumWanted += w;
      sumHeld += h;
    });
    wanted *= sumWanted;
    held *= sumHeld;
  }
  return wanted - held;
}

//===----------------------------------------------------------------------===//
// The model
//===----------------------------------------------------------------------===//

std::optional<GridRegion>
ProgramCostModel::getLayout(int t, const std::vector<Tiling> &tilings,
                            std::string &message) const {
  const Shape &shape = graph.tensors[t].shape;
  if (tilings.size() != grid.shape.size()) {
    message = "the layout has " + std::to_string(tilings.size()) +
              " steps but the grid has " + std::to_string(grid.shape.size()) +
              " axes";
    return std::nullopt;
  }
  std::vector<int> dims;
  for (size_t i = 0; i < tilings.size(); ++i) {
    const Tiling &tiling = tilings[i];
    if (tiling.kind == Tiling::Kind::Replicate) {
      dims.push_back(-1);
      continue;
    }
    if (tiling.kind != Tiling::Kind::Cut || tiling.dim >= shape.size()) {
      message = "step " + std::to_string(i) + " has tiling '" + tiling.str() +
                "', not a cut of one of the " + std::to_string(shape.size()) +
                " dimensions or a replica";
      return std::nullopt;
    }
    dims.push_back(tiling.dim);
  }
  return split(shape, dims, grid, message);
}

std::optional<GridRegion>
ProgramCostModel::getIteration(int o, const std::vector<int> &cutVars,
                               std::string &message) const {
  const std::vector<int64_t> &extents = spaces[o].extents;
  if (cutVars.size() != grid.shape.size()) {
    message = "the operator has " + std::to_string(cutVars.size()) +
              " strategies but the grid has " +
              std::to_string(grid.shape.size()) + " axes";
    return std::nullopt;
  }
  for (int v : cutVars)
    if (v >= 0 && (size_t)v >= extents.size()) {
      message = "loop " + std::to_string(v) + " is out of range";
      return std::nullopt;
    }
  return split(extents, cutVars, grid, message);
}

std::optional<GridRegion>
ProgramCostModel::getInputRegions(int o, unsigned j,
                                  const GridRegion &iteration,
                                  bool *everyRankReads) const {
  const OpNode &node = graph.ops[o];
  int t = node.inputs[j];
  if (t < 0 || !held[t])
    return std::nullopt;
  const Shape &shape = graph.tensors[t].shape;
  // A captured tensor is read whole by every rank.
  if (j >= node.firstCaptured)
    return getWhole(shape);
  std::vector<const tdl::Expr *> accesses = getInputAccesses(*node.desc, j);
  if (accesses.empty())
    return std::nullopt;
  const std::vector<std::vector<int>> &simple = simpleAccesses[o][j];
  const LoopSpace &space = spaces[o];
  size_t rank = shape.size();
  // Each access's range in each dimension depends only on the loops that
  // index the dimension, so on the axes that cut them: ranges[a][d] holds
  // it at each combination of the coordinates of axes[d].
  std::vector<std::vector<unsigned>> axes(rank);
  std::vector<std::vector<std::vector<std::pair<int64_t, int64_t>>>> ranges(
      accesses.size(), std::vector<std::vector<std::pair<int64_t, int64_t>>>(
                           rank));
  std::vector<std::pair<int64_t, int64_t>> env;
  for (const DimRanges &v : iteration)
    env.push_back(v.at.front());
  bool failed = false, anyEmpty = false;
  std::string message;
  for (size_t d = 0; d < rank && !failed; ++d) {
    for (int v : readVars[o][j][d])
      axes[d] = unite(axes[d], iteration[v].axes);
    forEachCoords(axes[d], grid, [&](const std::vector<int64_t> &c) {
      for (int v : readVars[o][j][d])
        env[v] = getAt(iteration[v], axes[d], c, grid);
      for (size_t a = 0; a < accesses.size() && !failed; ++a) {
        std::optional<std::pair<int64_t, int64_t>> range;
        if (!simple.empty()) {
          // Bare variables and whole dimensions, as tofu-partition reads
          // them.
          int v = simple[a][d];
          range = v == kWhole
                      ? std::pair<int64_t, int64_t>{0, shape[d] - 1}
                      : std::pair{std::max<int64_t>(env[v].first, 0),
                                  std::min<int64_t>(env[v].second,
                                                    shape[d] - 1)};
        } else {
          range = getIndexRange(accesses[a]->indices[d], space, shape[d], env,
                                message);
          failed = !range;
          anyEmpty |= range && range->second < range->first;
        }
        if (range)
          ranges[a][d].push_back(*range);
      }
    });
  }
  if (failed)
    return std::nullopt;
  auto hull = [](std::pair<int64_t, int64_t> x, std::pair<int64_t, int64_t> y) {
    return std::pair{std::min(x.first, y.first), std::max(x.second, y.second)};
  };
  GridRegion regions(rank);
  if (!anyEmpty) {
    // Every access reads on every rank: each dimension is the hull of the
    // accesses' ranges in it.
    for (size_t d = 0; d < rank; ++d) {
      regions[d].axes = axes[d];
      regions[d].at = ranges[0][d];
      for (size_t a = 1; a < accesses.size(); ++a)
        for (size_t x = 0; x < regions[d].at.size(); ++x)
          regions[d].at[x] = hull(regions[d].at[x], ranges[a][d][x]);
    }
  } else {
    // An access that reads nothing on a rank (empty in some dimension)
    // drops out of that rank's hull in every dimension (getReadRegion), so
    // the regions are combined rank by rank.
    std::vector<unsigned> all;
    for (unsigned a = 0; a < grid.shape.size(); ++a)
      all.push_back(a);
    std::vector<std::vector<std::pair<size_t, size_t>>> strides;
    for (size_t d = 0; d < rank; ++d) {
      regions[d].axes = all;
      strides.push_back(getStrides(axes[d], all, grid));
    }
    bool read = false;
    forEachCoords(all, grid, [&](const std::vector<int64_t> &c) {
      std::vector<size_t> index(rank, 0);
      for (size_t d = 0; d < rank; ++d)
        for (auto [pos, stride] : strides[d])
          index[d] += c[pos] * stride;
      bool mine = false;
      std::vector<std::pair<int64_t, int64_t>> region(rank, {0, -1});
      for (size_t a = 0; a < accesses.size(); ++a) {
        bool reads = true;
        for (size_t d = 0; d < rank && reads; ++d)
          reads = getLength(ranges[a][d][index[d]]) > 0;
        if (!reads)
          continue;
        for (size_t d = 0; d < rank; ++d)
          region[d] = mine ? hull(region[d], ranges[a][d][index[d]])
                           : ranges[a][d][index[d]];
        mine = true;
      }
      read |= mine;
      for (size_t d = 0; d < rank; ++d)
        regions[d].at.push_back(region[d]);
    });
    if (!read)
      return std::nullopt;
  }
  if (everyRankReads) {
    *everyRankReads = true;
    for (const DimRanges &dim : regions)
      for (auto range : dim.at)
        *everyRankReads &= range.second >= range.first;
  }
  // Ranks that read regions of different shapes fetch same-shaped windows
  // (getUniformWindows of Distribution.h).
  bool uniform = true;
  for (const DimRanges &dim : regions)
    for (auto range : dim.at)
      uniform &= range.second - range.first ==
                 dim.at.front().second - dim.at.front().first;
  if (!uniform)
    for (size_t d = 0; d < rank; ++d) {
      int64_t extent = 0;
      for (auto range : regions[d].at)
        extent = std::max(extent, range.second - range.first + 1);
      for (auto &range : regions[d].at) {
        range.first = std::clamp<int64_t>(range.first, 0, shape[d] - extent);
        range.second = range.first + extent - 1;
      }
    }
  return regions;
}

double
ProgramCostModel::getFetchBytes(int t, const std::optional<GridRegion> &regions,
                                const GridRegion &layout) const {
  if (!regions)
    return 0;
  return double(getReceived(layout, *regions, grid)) *
         graph.tensors[t].elementBytes;
}

double ProgramCostModel::getOutputBytes(int o, unsigned j,
                                        const GridRegion &iteration,
                                        const std::vector<int> &cutVars,
                                        const std::vector<Tiling> &tilings,
                                        const GridRegion &layout) const {
  int t = graph.ops[o].outputs[j];
  if (t < 0)
    return 0;
  const std::vector<int> &vars = outputVars[o][j];
  int64_t elementBytes = graph.tensors[t].elementBytes;
  // The region each rank computes: its box's range of every output variable.
  GridRegion boxes;
  Shape local;
  for (int v : vars) {
    boxes.push_back(v >= 0 ? iteration[v] : DimRanges{{}, {{0, -1}}});
    local.push_back(getLength(boxes.back().at.front()));
  }
  double bytes = 0;
  int64_t ranks = grid.size();
  for (size_t axis = 0; axis < cutVars.size(); ++axis) {
    int v = cutVars[axis];
    if (v < 0 || std::find(vars.begin(), vars.end(), v) != vars.end())
      continue;
    // A partial result over this axis.
    int64_t k = grid.shape[axis];
    const Tiling &target = tilings[axis];
    double elements = double(getNumElements(local));
    if (target.kind == Tiling::Kind::Cut && target.dim < local.size() &&
        local[target.dim] % k == 0) {
      bytes += double(ranks) * (k - 1) / k * elements * elementBytes;
      // The reduce-scatter splits the dimension at this axis.
      int64_t chunk = local[target.dim] /= k;
      const DimRanges &dim = boxes[target.dim];
      DimRanges next;
      next.axes = unite(dim.axes, {unsigned(axis)});
      size_t pos = std::find(next.axes.begin(), next.axes.end(), axis) -
                   next.axes.begin();
      forEachCoords(next.axes, grid, [&](const std::vector<int64_t> &c) {
        int64_t lo = getAt(dim, next.axes, c, grid).first + c[pos] * chunk;
        next.at.push_back({lo, lo + chunk - 1});
      });
      boxes[target.dim] = std::move(next);
    } else {
      bytes += double(ranks) * 2 * (k - 1) / k * elements * elementBytes;
    }
  }
  return bytes + double(getReceived(boxes, layout, grid)) * elementBytes;
}

void ProgramCostModel::appendKey(std::string &key, int64_t value) {
  key.append(reinterpret_cast<const char *>(&value), sizeof(value));
}

std::string ProgramCostModel::getEdgeKey(int o, unsigned j,
                                         bool output) const {
  const OpNode &node = graph.ops[o];
  int t = output ? node.outputs[j] : node.inputs[j];
  std::string key;
  appendKey(key, reinterpret_cast<intptr_t>(node.desc.get()));
  appendKey(key, output);
  appendKey(key, j);
  appendKey(key, j >= node.firstCaptured);
  appendKey(key, held[t]);
  appendKey(key, graph.tensors[t].elementBytes);
  for (const std::vector<Shape> *shapes :
       {&node.shapes.inputs, &node.shapes.outputs}) {
    appendKey(key, shapes->size());
    for (const Shape &shape : *shapes) {
      appendKey(key, shape.size());
      for (int64_t n : shape)
        appendKey(key, n);
    }
  }
  return key;
}

std::optional<double> ProgramCostModel::getFeedBytes(
    const std::vector<std::vector<Tiling>> &tilings,
    std::string &message) const {
  double bytes = 0;
  for (auto [result, arg] : graph.feeds) {
    std::optional<GridRegion> held = getLayout(result, tilings[result], message);
    std::optional<GridRegion> want = getLayout(arg, tilings[arg], message);
    if (!held || !want)
      return std::nullopt;
    bytes += getFetchBytes(result, want, *held);
  }
  return bytes;
}

/// `d` without the axes its interval does not vary along: two regions
/// that give every rank the same box then have the same ranges.
static DimRanges getCanonical(const DimRanges &d, const ProcessGrid &grid) {
  DimRanges out = d;
  for (size_t i = out.axes.size(); i-- > 0;) {
    size_t size = grid.shape[out.axes[i]], inner = 1;
    for (size_t j = i + 1; j < out.axes.size(); ++j)
      inner *= grid.shape[out.axes[j]];
    size_t outer = out.at.size() / (size * inner);
    bool varies = false;
    for (size_t o = 0; o < outer && !varies; ++o)
      for (size_t c = 1; c < size && !varies; ++c)
        for (size_t n = 0; n < inner && !varies; ++n)
          varies = out.at[(o * size + c) * inner + n] !=
                   out.at[o * size * inner + n];
    if (varies)
      continue;
    std::vector<std::pair<int64_t, int64_t>> at;
    for (size_t o = 0; o < outer; ++o)
      for (size_t n = 0; n < inner; ++n)
        at.push_back(out.at[o * size * inner + n]);
    out.at = std::move(at);
    out.axes.erase(out.axes.begin() + i);
  }
  return out;
}

std::string ProgramCostModel::getRegionKey(int t,
                                           const GridRegion &regions) const {
  std::string key;
  appendKey(key, t);
  for (const DimRanges &dim : regions) {
    DimRanges d = getCanonical(dim, grid);
    appendKey(key, d.axes.size());
    for (unsigned axis : d.axes)
      appendKey(key, axis);
    for (auto [lo, hi] : d.at) {
      appendKey(key, lo);
      appendKey(key, hi);
    }
  }
  return key;
}

std::optional<ProgramBytes>
ProgramCostModel::evaluate(const GridPlan &plan, std::string &message,
                           bool shareFetches) const {
  if (!error.empty()) {
    message = error;
    return std::nullopt;
  }
  std::vector<GridRegion> layouts;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    std::optional<GridRegion> layout = getLayout(t, plan.tilings[t], message);
    if (!layout) {
      message = graph.tensors[t].name + ": " + message;
      return std::nullopt;
    }
    layouts.push_back(std::move(*layout));
  }
  ProgramBytes out;
  out.tensorBytes.assign(graph.tensors.size(), 0);
  // Edges that repeat with the same choices cost the same.
  std::unordered_map<std::string, double> known;
  // Regions of a tensor already fetched for another operator's input come
  // for free where every rank reads some of it: tofu-partition reuses that
  // conversion (FunctionPartitioner::getLocal).
  std::unordered_set<std::string> fetched;
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &node = graph.ops[o];
    std::optional<GridRegion> iteration =
        getIteration(o, plan.cutVars[o], message);
    if (!iteration) {
      message = node.name + " (operator " + std::to_string(o) + "): " + message;
      return std::nullopt;
    }
    auto edge = [&](unsigned j, int t, bool output) {
      if (!output && shareFetches) {
        bool everyRankReads = false;
        std::optional<GridRegion> regions =
            getInputRegions(o, j, *iteration, &everyRankReads);
        if (!regions)
          return;
        // tofu-partition shares only conversions whose every rank reads a
        // non-empty region (the windows of ranks that read nothing are
        // placed differently by the two).
        if (everyRankReads && !fetched.insert(getRegionKey(t, *regions)).second)
          return;
      }
      std::string key = getEdgeKey(o, j, output);
      for (int v : plan.cutVars[o])
        appendKey(key, v);
      for (const Tiling &tiling : plan.tilings[t])
        appendKey(key, int(tiling.kind) * 1024 + tiling.dim);
      auto [it, added] = known.try_emplace(std::move(key), 0);
      if (added)
        it->second =
            output ? getOutputBytes(o, j, *iteration, plan.cutVars[o],
                                    plan.tilings[t], layouts[t])
                   : getFetchBytes(t, getInputRegions(o, j, *iteration),
                                   layouts[t]);
      out.tensorBytes[t] += it->second;
    };
    for (unsigned j = 0; j < node.inputs.size(); ++j)
      if (int t = node.inputs[j]; t >= 0)
        edge(j, t, /*output=*/false);
    for (unsigned j = 0; j < node.outputs.size(); ++j)
      if (int t = node.outputs[j]; t >= 0)
        edge(j, t, /*output=*/true);
  }
  // Fed-back results return in their argument's layout.
  for (auto [result, arg] : graph.feeds)
    out.tensorBytes[result] +=
        getFetchBytes(result, layouts[arg], layouts[result]);
  for (double b : out.tensorBytes)
    out.total += b;
  return out;
}
