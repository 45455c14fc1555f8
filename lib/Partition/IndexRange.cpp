//===- IndexRange.cpp - Exact ranges of index expressions -----------------===//
//
// Interval arithmetic is exact on an index expression in which every variable
// occurs once and no remainder is taken: each operation is then monotone in
// each of its independent operands. When a variable occurs twice
// (`(3*i + 2*j) floordiv 2 - j`) or a remainder is taken (`i mod 4`), the
// interval forgets the correlation and over-approximates. For those
// expressions the range a worker reads is found exactly by enumerating the
// points of the variables the expression mentions, when there are few.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Strategy.h"

#include <algorithm>
#include <map>

using namespace tofu;
using namespace tofu::tdl;

/// Expressions larger than this are never enumerated (and so never recursed
/// into deeply).
static constexpr unsigned kMaxEnumeratedNodes = 64;

/// Counts the nodes of `e`, stopping past `limit`, and notes whether a slice
/// or a remainder occurs and how often each variable does.
static unsigned scan(const IndexExpr &e, unsigned limit, bool &slice,
                     bool &mod, std::map<std::string, unsigned> &uses) {
  unsigned nodes = 0;
  std::vector<const IndexExpr *> work{&e};
  while (!work.empty() && nodes <= limit) {
    const IndexExpr *x = work.back();
    work.pop_back();
    ++nodes;
    slice |= x->isWhole();
    mod |= x->kind == IndexExpr::Kind::Mod;
    if (x->kind == IndexExpr::Kind::Var)
      ++uses[x->var];
    for (const IndexExpr &o : x->operands)
      work.push_back(&o);
  }
  return nodes;
}

bool tofu::isIntervalExact(const IndexExpr &e) {
  bool slice = false, mod = false;
  std::map<std::string, unsigned> uses;
  scan(e, UINT32_MAX, slice, mod, uses);
  return !mod && std::all_of(uses.begin(), uses.end(),
                             [](const auto &u) { return u.second == 1; });
}

/// floor(a / b) for b > 0.
static int64_t floorDiv(int64_t a, int64_t b) {
  return a / b - (a % b != 0 && a < 0);
}

/// The value of `e` at one point, or std::nullopt on overflow or a
/// non-positive divisor. `e` has at most kMaxEnumeratedNodes nodes.
static std::optional<int64_t> valueAt(const IndexExpr &e,
                                      const LoopSpace &space,
                                      const std::vector<int64_t> &point) {
  switch (e.kind) {
  case IndexExpr::Kind::Var: {
    int v = space.lookup(e.var);
    if (v < 0)
      return std::nullopt;
    return point[v];
  }
  case IndexExpr::Kind::Const:
    return e.value;
  case IndexExpr::Kind::Slice:
  case IndexExpr::Kind::Opaque:
    return std::nullopt;
  default:
    break;
  }
  if (e.operands.size() != 2)
    return std::nullopt;
  auto l = valueAt(e.operands[0], space, point);
  auto r = valueAt(e.operands[1], space, point);
  if (!l || !r)
    return std::nullopt;
  int64_t out;
  switch (e.kind) {
  case IndexExpr::Kind::Add:
    if (__builtin_add_overflow(*l, *r, &out))
      return std::nullopt;
    return out;
  case IndexExpr::Kind::Sub:
    if (__builtin_sub_overflow(*l, *r, &out))
      return std::nullopt;
    return out;
  case IndexExpr::Kind::Mul:
    if (__builtin_mul_overflow(*l, *r, &out))
      return std::nullopt;
    return out;
  case IndexExpr::Kind::FloorDiv:
    if (*r <= 0)
      return std::nullopt;
    return floorDiv(*l, *r);
  case IndexExpr::Kind::CeilDiv:
    if (*r <= 0)
      return std::nullopt;
    return -floorDiv(-*l, *r);
  case IndexExpr::Kind::Mod:
    if (*r <= 0)
      return std::nullopt;
    return *l - floorDiv(*l, *r) * *r;
  default:
    return std::nullopt;
  }
}

std::optional<std::pair<int64_t, int64_t>>
tofu::enumerateIndexRange(const IndexExpr &e, const LoopSpace &space,
                          const std::vector<std::pair<int64_t, int64_t>> &ranges,
                          uint64_t maxPoints) {
  bool slice = false, mod = false;
  std::map<std::string, unsigned> uses;
  if (scan(e, kMaxEnumeratedNodes, slice, mod, uses) > kMaxEnumeratedNodes ||
      slice)
    return std::nullopt;
  // The variables `e` mentions, with their ranges.
  std::vector<unsigned> vars;
  uint64_t points = 1;
  for (auto &[name, count] : uses) {
    int v = space.lookup(name);
    if (v < 0 || (size_t)v >= ranges.size())
      return std::nullopt;
    auto [lo, hi] = ranges[v];
    if (hi < lo)
      return std::nullopt;
    uint64_t n = (uint64_t)(hi - lo) + 1;
    if (n > maxPoints || points > maxPoints / n)
      return std::nullopt;
    points *= n;
    vars.push_back(v);
  }
  std::vector<int64_t> point(space.vars.size(), 0);
  for (unsigned v : vars)
    point[v] = ranges[v].first;
  std::optional<std::pair<int64_t, int64_t>> out;
  for (uint64_t p = 0; p < points; ++p) {
    auto value = valueAt(e, space, point);
    if (!value)
      return std::nullopt;
    out = out ? std::make_pair(std::min(out->first, *value),
                               std::max(out->second, *value))
              : std::make_pair(*value, *value);
    for (size_t i = vars.size(); i-- > 0;) {
      unsigned v = vars[i];
      if (++point[v] <= ranges[v].second)
        break;
      point[v] = ranges[v].first;
    }
  }
  return out;
}
