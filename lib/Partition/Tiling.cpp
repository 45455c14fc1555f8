//===- Tiling.cpp - Tilings and their conversion cost ---------------------===//
//
// Box arithmetic and the element counts of Lemma 1.
//
//===----------------------------------------------------------------------===//

#include "tofu/Partition/Tiling.h"

#include <algorithm>

using namespace tofu;

int64_t tofu::getNumElements(const Shape &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

Box Box::whole(const Shape &shape) {
  Box b;
  for (int64_t d : shape) {
    b.lo.push_back(0);
    b.hi.push_back(d - 1);
  }
  return b;
}

int64_t Box::volume() const {
  int64_t v = 1;
  for (size_t i = 0; i < lo.size(); ++i) {
    if (hi[i] < lo[i])
      return 0;
    v *= hi[i] - lo[i] + 1;
  }
  return v;
}

Box Box::intersect(const Box &o) const {
  Box r = *this;
  for (size_t i = 0; i < lo.size(); ++i) {
    r.lo[i] = std::max(lo[i], o.lo[i]);
    r.hi[i] = std::min(hi[i], o.hi[i]);
  }
  return r;
}

Box Box::hull(const Box &o) const {
  Box r = *this;
  for (size_t i = 0; i < lo.size(); ++i) {
    r.lo[i] = std::min(lo[i], o.lo[i]);
    r.hi[i] = std::max(hi[i], o.hi[i]);
  }
  return r;
}

std::string Box::str() const {
  std::string s = "[";
  for (size_t i = 0; i < lo.size(); ++i) {
    s += i ? ", " : "";
    s += std::to_string(lo[i]) + ":" + std::to_string(hi[i]);
  }
  return s + "]";
}

std::pair<int64_t, int64_t> tofu::getChunk(int64_t n, unsigned k, unsigned w) {
  int64_t lo = n * w / k;
  int64_t hi = n * (w + 1) / k - 1;
  return {lo, hi};
}

std::string Tiling::str() const {
  switch (kind) {
  case Kind::Cut:
    return "cut(" + std::to_string(dim) + ")";
  case Kind::Replicate:
    return "rep";
  case Kind::Partial:
    return "partial";
  }
  return "?";
}

std::vector<Box> tofu::getTileBoxes(const Shape &shape, Tiling tiling,
                                    unsigned k) {
  std::vector<Box> boxes(k, Box::whole(shape));
  if (tiling.kind != Tiling::Kind::Cut)
    return boxes;
  for (unsigned w = 0; w < k; ++w) {
    auto [lo, hi] = getChunk(shape[tiling.dim], k, w);
    boxes[w].lo[tiling.dim] = lo;
    boxes[w].hi[tiling.dim] = hi;
  }
  return boxes;
}

int64_t tofu::getFetchVolume(const std::vector<Box> &owned,
                             const std::vector<Box> &required) {
  int64_t total = 0;
  for (size_t w = 0; w < required.size(); ++w)
    total += required[w].volume() - required[w].intersect(owned[w]).volume();
  return total;
}

int64_t tofu::getGatherCost(const Shape &shape, Tiling from,
                            const std::vector<Box> &required, unsigned k) {
  if (from.kind == Tiling::Kind::Partial) {
    int64_t total = 0;
    for (const Box &b : required)
      total += (k - 1) * b.volume();
    return total;
  }
  return getFetchVolume(getTileBoxes(shape, from, k), required);
}

int64_t tofu::getConversionCost(const Shape &shape, Tiling from, Tiling to,
                                unsigned k) {
  if (from == to || to.kind == Tiling::Kind::Partial ||
      from.kind == Tiling::Kind::Replicate)
    return 0;
  int64_t size = getNumElements(shape);
  if (from.kind == Tiling::Kind::Partial)
    return (to.kind == Tiling::Kind::Replicate ? 2 : 1) * (int64_t)(k - 1) *
           size;
  if (to.kind == Tiling::Kind::Replicate)
    return (int64_t)(k - 1) * size;
  // cut(a) to cut(b): worker w needs chunk w of b and holds chunk w of a;
  // the overlap is the product of the two chunk fractions.
  int64_t na = shape[from.dim], nb = shape[to.dim];
  if (na == 0 || nb == 0)
    return 0;
  int64_t rest = size / na / nb, total = 0;
  for (unsigned w = 0; w < k; ++w) {
    auto [alo, ahi] = getChunk(na, k, w);
    auto [blo, bhi] = getChunk(nb, k, w);
    total +=
        (bhi - blo + 1) * na * rest - (ahi - alo + 1) * (bhi - blo + 1) * rest;
  }
  return total;
}
