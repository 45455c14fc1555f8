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

using namespace tofu;

/// True when operator `node` fills its output with a scalar input (its
/// other input, the init, unread), which tofu-partition rebuilds on every
/// rank instead of moving.
static bool isScalarFill(const OpNode &node) {
  const tdl::OpDesc &desc = *node.desc;
  if (desc.outputs.size() != 1 ||
      desc.outputs[0].reducer != tdl::Reducer::None)
    return false;
  const tdl::Expr &body = desc.outputs[0].body;
  if (body.kind != tdl::Expr::Kind::Access)
    return false;
  for (size_t j = 0; j < desc.inputs.size() && j < node.inputs.size(); ++j)
    if (desc.inputs[j] == body.name)
      return node.inputs[j] < 0 && body.indices.empty();
  return false;
}

ProgramCostModel::ProgramCostModel(const Graph &graph, ProcessGrid grid)
    : graph(graph), grid(std::move(grid)) {
  held.assign(graph.tensors.size(), true);
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    const TensorNode &node = graph.tensors[t];
    if (node.producer < 0 && node.role == TensorRole::Activation)
      held[t] = false;
  }
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
    spaces.push_back(std::move(*space));
    if (isScalarFill(node))
      for (int t : node.outputs)
        if (t >= 0)
          held[t] = false;
  }
}

std::optional<RankBoxes>
ProgramCostModel::getLayout(int t, const std::vector<Tiling> &tilings) const {
  std::string message;
  return getLayoutBoxes(graph.tensors[t].shape, tilings, grid, message);
}

std::optional<RankBoxes>
ProgramCostModel::getIteration(int o, const std::vector<int> &cutVars) const {
  std::string message;
  return getIterationBoxes(spaces[o].extents, cutVars, grid, message);
}

/// True when every rank's `have` box contains its `want` box.
static bool holdsAll(const RankBoxes &have, const RankBoxes &want) {
  for (size_t r = 0; r < want.size(); ++r)
    if (!(have[r].intersect(want[r]) == want[r]))
      return false;
  return true;
}

/// Bytes of fetching `want` from `have` (tofu-partition's `convert`).
static double fetchBytes(const RankBoxes &have, const RankBoxes &want,
                         int64_t elementBytes) {
  if (have == want || holdsAll(have, want))
    return 0;
  return double(getReceivedElements(have, want)) * elementBytes;
}

RankBoxes ProgramCostModel::getInputRegions(int o, unsigned j,
                                            const RankBoxes &iteration) const {
  const OpNode &node = graph.ops[o];
  int t = node.inputs[j];
  if (t < 0 || !held[t])
    return {};
  const Shape &shape = graph.tensors[t].shape;
  // A captured tensor is read whole by every rank.
  if (j >= node.firstCaptured)
    return RankBoxes(iteration.size(), Box::whole(shape));
  RankBoxes regions;
  bool read = false;
  if (const auto &accesses = simpleAccesses[o][j]; !accesses.empty()) {
    for (const Box &box : iteration) {
      Box region;
      for (const std::vector<int> &dims : accesses)
        for (size_t d = 0; d < dims.size(); ++d) {
          int v = dims[d];
          int64_t lo = v == kWhole ? 0 : std::max<int64_t>(box.lo[v], 0);
          int64_t hi = v == kWhole ? shape[d] - 1
                                   : std::min<int64_t>(box.hi[v], shape[d] - 1);
          if (region.lo.size() <= d) {
            region.lo.push_back(lo);
            region.hi.push_back(hi);
          } else {
            region.lo[d] = std::min(region.lo[d], lo);
            region.hi[d] = std::max(region.hi[d], hi);
          }
        }
      regions.push_back(std::move(region));
    }
    read = true;
  }
  for (const Box &box : read ? RankBoxes() : iteration) {
    std::vector<std::pair<int64_t, int64_t>> ranges;
    for (size_t v = 0; v < box.lo.size(); ++v)
      ranges.push_back({box.lo[v], box.hi[v]});
    std::string message;
    bool mine = false;
    std::optional<Box> region = getReadRegion(*node.desc, spaces[o], j, shape,
                                              ranges, mine, message);
    if (!region)
      return {};
    read |= mine;
    regions.push_back(std::move(*region));
  }
  if (!read)
    return {};
  // Ranks that read regions of different shapes fetch same-shaped windows.
  if (!haveUniformShape(regions))
    regions = getUniformWindows(regions, shape);
  return regions;
}

double ProgramCostModel::getFetchBytes(int t, const RankBoxes &regions,
                                       const RankBoxes &layout) const {
  if (regions.empty())
    return 0;
  return fetchBytes(layout, regions, graph.tensors[t].elementBytes);
}

double ProgramCostModel::getOutputBytes(int o, unsigned j,
                                        const RankBoxes &iteration,
                                        const std::vector<int> &cutVars,
                                        const std::vector<Tiling> &tilings,
                                        const RankBoxes &layout) const {
  int t = graph.ops[o].outputs[j];
  if (t < 0)
    return 0;
  const std::vector<int> &vars = outputVars[o][j];
  int64_t elementBytes = graph.tensors[t].elementBytes;
  // The region each rank computes: its box's range of every output variable.
  RankBoxes boxes;
  for (const Box &it : iteration) {
    Box box;
    for (int v : vars) {
      box.lo.push_back(v >= 0 ? it.lo[v] : 0);
      box.hi.push_back(v >= 0 ? it.hi[v] : -1);
    }
    boxes.push_back(std::move(box));
  }
  double bytes = 0;
  Shape local = getBoxShape(boxes.front());
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
      local[target.dim] /= k;
      for (size_t r = 0; r < boxes.size(); ++r) {
        Box &box = boxes[r];
        box.lo[target.dim] += grid.getCoords(r)[axis] * local[target.dim];
        box.hi[target.dim] = box.lo[target.dim] + local[target.dim] - 1;
      }
    } else {
      bytes += double(ranks) * 2 * (k - 1) / k * elements * elementBytes;
    }
  }
  return bytes + fetchBytes(boxes, layout, elementBytes);
}

std::optional<ProgramBytes>
ProgramCostModel::evaluate(const GridPlan &plan, std::string &message) const {
  if (!error.empty()) {
    message = error;
    return std::nullopt;
  }
  std::vector<RankBoxes> layouts;
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    std::optional<RankBoxes> layout = getLayoutBoxes(
        graph.tensors[t].shape, plan.tilings[t], grid, message);
    if (!layout) {
      message = graph.tensors[t].name + ": " + message;
      return std::nullopt;
    }
    layouts.push_back(std::move(*layout));
  }
  ProgramBytes out;
  out.tensorBytes.assign(graph.tensors.size(), 0);
  for (size_t o = 0; o < graph.ops.size(); ++o) {
    const OpNode &node = graph.ops[o];
    std::optional<RankBoxes> iteration = getIterationBoxes(
        spaces[o].extents, plan.cutVars[o], grid, message);
    if (!iteration) {
      message = node.name + " (operator " + std::to_string(o) + "): " + message;
      return std::nullopt;
    }
    for (unsigned j = 0; j < node.inputs.size(); ++j)
      if (int t = node.inputs[j]; t >= 0)
        out.tensorBytes[t] +=
            getFetchBytes(t, getInputRegions(o, j, *iteration), layouts[t]);
    for (unsigned j = 0; j < node.outputs.size(); ++j)
      if (int t = node.outputs[j]; t >= 0)
        out.tensorBytes[t] +=
            getOutputBytes(o, j, *iteration, plan.cutVars[o], plan.tilings[t],
                           layouts[t]);
  }
  // Fed-back results return in their argument's layout.
  for (auto [result, arg] : graph.feeds)
    out.tensorBytes[result] +=
        getFetchBytes(result, layouts[arg], layouts[result]);
  for (double b : out.tensorBytes)
    out.total += b;
  return out;
}
