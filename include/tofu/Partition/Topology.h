//===- Topology.h - Device hierarchy and recursion steps --------*- C++ -*-===//
//
// The devices form a hierarchy, written outermost level first:
// `devices=8` is one level of 8, `devices=2x4` is 2 nodes of 4 devices.
// Each level has a bandwidth. The recursion cuts the graph into k1, then k2,
// ... parts, where each level's size is factored into primes in
// non-increasing order (Tofu §5.2: k = k1·k2·…·km with k_i >= k_{i+1}).
// Because the per-step cost never decreases over the steps (Tofu, Theorem
// 2), the first steps go to the slowest level (SOYBEAN §5.1).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_TOPOLOGY_H
#define TOFU_PARTITION_TOPOLOGY_H

#include <optional>
#include <string>
#include <vector>

namespace tofu {

struct RecursionStep {
  unsigned k;
  unsigned level;
};

struct Topology {
  /// Level sizes, outermost first.
  std::vector<unsigned> levels;
  /// Bandwidth of each level, in GB/s.
  std::vector<double> bandwidth;

  /// Parses `devices` ("8", "2x4") and `bandwidths` ("12.5,300"; empty for
  /// the default of 10 GB/s per level). Fails with a message.
  static std::optional<Topology> parse(const std::string &devices,
                                       const std::string &bandwidths,
                                       std::string &error);
  unsigned getNumDevices() const;
  /// The recursion steps: slowest level first, each level's primes in
  /// non-increasing order.
  std::vector<RecursionStep> getSteps() const;
  /// "2x4".
  std::string str() const;
};

/// The prime factors of n in non-increasing order.
std::vector<unsigned> factorize(unsigned n);

} // namespace tofu

#endif // TOFU_PARTITION_TOPOLOGY_H
