//===- Tiling.h - Tilings of a tensor over one split step -------*- C++ -*-===//
//
// A tiling says how one tensor is laid out over the k workers (or worker
// groups) of one recursion step: cut along one dimension into k balanced
// chunks, replicated on every worker (SOYBEAN's `r`), or held as k partial
// values that still need a reduction (the output of a partition-n-reduce
// strategy that cuts a reduction dimension).
//
// The communication of converting between tilings, or of gathering the
// regions an operator strategy requires, is the number of elements that
// workers must fetch from other workers. Divided by the tensor size it is the
// weight of Lemma 1 (Tofu arXiv appendix A).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_TILING_H
#define TOFU_PARTITION_TILING_H

#include <cstdint>
#include <string>
#include <vector>

namespace tofu {

using Shape = std::vector<int64_t>;

/// Number of elements of a shape (1 for rank 0).
int64_t getNumElements(const Shape &shape);

/// An axis-aligned box with inclusive bounds; empty when any hi < lo.
struct Box {
  std::vector<int64_t> lo, hi;

  static Box whole(const Shape &shape);
  int64_t volume() const;
  Box intersect(const Box &o) const;
  /// The smallest box containing both.
  Box hull(const Box &o) const;
  bool operator==(const Box &o) const { return lo == o.lo && hi == o.hi; }
  std::string str() const;
};

/// The inclusive index range [lo, hi] of worker `w` when `n` elements are
/// split into `k` balanced chunks (sizes differ by at most one).
std::pair<int64_t, int64_t> getChunk(int64_t n, unsigned k, unsigned w);

/// How a tensor is distributed over the workers of one step.
struct Tiling {
  enum class Kind { Cut, Replicate, Partial };
  Kind kind = Kind::Replicate;
  unsigned dim = 0;

  static Tiling cut(unsigned dim) { return {Kind::Cut, dim}; }
  static Tiling replicate() { return {Kind::Replicate, 0}; }
  static Tiling partial() { return {Kind::Partial, 0}; }

  bool operator==(const Tiling &o) const {
    return kind == o.kind && (kind != Kind::Cut || dim == o.dim);
  }
  bool operator!=(const Tiling &o) const { return !(*this == o); }
  /// "cut(1)", "rep" or "partial".
  std::string str() const;
};

/// The region each of `k` workers holds under a cut or replicated tiling.
/// A partial tiling holds the whole tensor (as a partial value) everywhere.
std::vector<Box> getTileBoxes(const Shape &shape, Tiling tiling, unsigned k);

/// Elements that the workers must fetch so that worker w holds required[w]
/// when it holds owned[w]: sum_w |required[w]| - |required[w] ∩ owned[w]|.
int64_t getFetchVolume(const std::vector<Box> &owned,
                       const std::vector<Box> &required);

/// Elements moved to give every worker w the region required[w] of a tensor
/// held with `from`. For a partial tensor each worker must receive the k-1
/// other partial values of its region.
int64_t getGatherCost(const Shape &shape, Tiling from,
                      const std::vector<Box> &required, unsigned k);

/// Elements moved to convert a tensor from one tiling to another. Converting
/// to a partial tiling is free (one worker keeps the value, the others hold
/// zeros) and converting from partial to replicated is an all-reduce,
/// counted as reduce-scatter plus all-gather: 2 (k - 1) |T|.
int64_t getConversionCost(const Shape &shape, Tiling from, Tiling to,
                          unsigned k);

} // namespace tofu

#endif // TOFU_PARTITION_TILING_H
