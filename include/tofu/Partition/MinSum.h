//===- MinSum.h - Exact minimisation of sums of small tables ----*- C++ -*-===//
//
// One step of the search chooses a tiling for every tensor and a strategy
// for every operator so that the summed communication is minimal. The costs
// are unary (within one coarse group) and pairwise (between two groups), so
// a step is a min-sum problem over discrete variables.
//
// solveMinSum is the exact dynamic programme: variable elimination (bucket
// elimination). Eliminating a variable minimises it out of the sum of the
// tables that mention it, for every assignment of its neighbours; the
// neighbours that remain form the DP's frontier. The next variable is the one
// whose table is smallest, so chains, fork-joins and trees of groups keep a
// frontier of one or two groups. When even the smallest table would exceed
// a bound, the search does not blow up: it fixes the variable with the most
// neighbours to its best value given optimistic neighbours, says so in the
// result, and continues. It therefore always terminates, and is exact
// whenever `exact` is set.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_MINSUM_H
#define TOFU_PARTITION_MINSUM_H

#include <cstdint>
#include <optional>
#include <vector>

namespace tofu {

struct MinSumProblem {
  struct Pairwise {
    unsigned a, b;
    /// table[ia * domains[b] + ib].
    std::vector<double> table;
  };
  std::vector<unsigned> domains;
  std::vector<std::vector<double>> unary;
  std::vector<Pairwise> pairwise;

  unsigned addVariable(unsigned domain);
  /// Adds `table` (one entry per value) to the unary cost of `v`.
  void addUnary(unsigned v, const std::vector<double> &table);
  /// Adds a table over (a, b), a != b.
  void addPairwise(unsigned a, unsigned b, std::vector<double> table);
  /// The cost of a complete assignment.
  double evaluate(const std::vector<unsigned> &assignment) const;
};

struct MinSumSolution {
  std::vector<unsigned> assignment;
  double cost = 0;
  /// False when some variables were fixed greedily to respect the bound.
  bool exact = true;
};

/// Exact variable elimination; `maxTableSize` bounds every table built.
/// With `giveUp`, the solver stops as soon as it would have to fix a
/// variable greedily and returns an empty assignment with `exact` false.
MinSumSolution solveMinSum(const MinSumProblem &problem,
                           uint64_t maxTableSize = 1u << 22,
                           bool giveUp = false);

/// Whether solveMinSum would eliminate every variable within `maxTableSize`
/// (no greedy fixing), found on the structure alone, without building any
/// table: the same elimination order over the variables' neighbourhoods.
bool fitsMinSum(const MinSumProblem &problem, uint64_t maxTableSize);

/// Enumerates every assignment. Returns std::nullopt when there are more
/// than `maxAssignments`.
std::optional<MinSumSolution> bruteForceMinSum(const MinSumProblem &problem,
                                               uint64_t maxAssignments);

} // namespace tofu

#endif // TOFU_PARTITION_MINSUM_H
