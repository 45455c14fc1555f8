//===- GemmPattern.cpp - Matrix products from loop structure --------------===//
//
// Implements the MLIR-free rule of GemmPattern.h: every loop is classified
// by the operands it indexes and its iterator type; a group of several
// loops must be adjacent, in one order, in both operands that hold it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/GemmPattern.h"

#include <algorithm>

using namespace tofu::gemm;

namespace {

/// The loops of `group` as operand `loops` holds them: the group's loops
/// must be adjacent there. Returns an empty vector when they are not (or
/// when the operand holds none of them).
std::vector<unsigned> heldInOrder(const std::vector<unsigned> &loops,
                                  const std::vector<unsigned> &group) {
  std::vector<unsigned> held;
  size_t first = loops.size();
  for (size_t d = 0; d < loops.size(); ++d)
    if (std::find(group.begin(), group.end(), loops[d]) != group.end()) {
      if (held.empty())
        first = d;
      else if (d != first + held.size())
        return {};
      held.push_back(loops[d]);
    }
  if (held.size() != group.size())
    return {};
  return held;
}

} // namespace

/// The rule of matchGemmPattern on checked operands: `broadcast` marks the
/// loops taken as batch loops that one input does not hold, `accumulate`
/// the reductions taken as accumulation loops.
static std::optional<GemmPattern>
classify(unsigned numLoops, const std::vector<bool> &parallel,
         const std::vector<std::vector<unsigned>> &loops,
         const std::vector<std::vector<bool>> &indexes,
         const std::vector<bool> &broadcast,
         const std::vector<bool> &accumulate) {
  GemmPattern match;
  // The operands' loops without the accumulation loops, which are no
  // dimension of the call.
  std::vector<std::vector<unsigned>> held(3);
  for (unsigned i = 0; i < 3; ++i)
    for (unsigned l : loops[i])
      if (!accumulate[l])
        held[i].push_back(l);
  for (unsigned l = 0; l < numLoops; ++l) {
    bool a = indexes[0][l], b = indexes[1][l], c = indexes[2][l];
    if (accumulate[l])
      match.accumulateLoops.push_back(l);
    else if (((a && b) || broadcast[l]) && c && parallel[l])
      match.batchLoops.push_back(l);
    else if (a && !b && c && parallel[l])
      match.mLoops.push_back(l);
    else if (!a && b && c && parallel[l])
      match.nLoops.push_back(l);
    else if (a && b && !c && !parallel[l])
      match.kLoops.push_back(l);
    else
      return std::nullopt;
  }
  // Each group in the order of its two operands, which must agree.
  struct Group {
    std::vector<unsigned> *loops;
    unsigned first, second;
  };
  for (Group g : {Group{&match.mLoops, 0, 2}, Group{&match.nLoops, 1, 2},
                  Group{&match.kLoops, 0, 1}}) {
    if (g.loops->empty())
      return std::nullopt;
    std::vector<unsigned> order = heldInOrder(held[g.first], *g.loops);
    if (order.empty() || order != heldInOrder(held[g.second], *g.loops))
      return std::nullopt;
    *g.loops = std::move(order);
  }
  return match;
}

std::optional<GemmPattern>
tofu::gemm::matchGemmPattern(unsigned numLoops,
                             const std::vector<bool> &parallel,
                             const std::vector<std::vector<unsigned>> &loops) {
  if (loops.size() != 3 || parallel.size() != numLoops)
    return std::nullopt;
  // indexes[i][l]: operand i is indexed by loop l.
  std::vector<std::vector<bool>> indexes(3, std::vector<bool>(numLoops));
  for (unsigned i = 0; i < 3; ++i)
    for (unsigned l : loops[i]) {
      if (l >= numLoops || indexes[i][l])
        return std::nullopt;
      indexes[i][l] = true;
    }
  std::vector<bool> broadcast(numLoops, false), accumulate(numLoops, false);
  if (auto match =
          classify(numLoops, parallel, loops, indexes, broadcast, accumulate))
    return match;
  // The outermost dimension of C, held by one input as its outermost too
  // and not by the other: a batch loop with stride 0 in the other.
  if (!loops[2].empty()) {
    unsigned outer = loops[2].front();
    bool a = indexes[0][outer], b = indexes[1][outer];
    if (a != b && loops[a ? 0 : 1].front() == outer) {
      broadcast[outer] = true;
      if (auto match = classify(numLoops, parallel, loops, indexes, broadcast,
                                accumulate))
        return match;
      broadcast[outer] = false;
    }
  }
  // The outermost dimension of both inputs, a reduction that C does not
  // hold: products summed into C, one per iteration.
  if (loops[0].empty() || loops[1].empty() ||
      loops[0].front() != loops[1].front())
    return std::nullopt;
  unsigned outer = loops[0].front();
  if (parallel[outer] || indexes[2][outer])
    return std::nullopt;
  accumulate[outer] = true;
  return classify(numLoops, parallel, loops, indexes, broadcast, accumulate);
}
