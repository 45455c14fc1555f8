//===- Topology.cpp - Device hierarchy and recursion steps ----------------===//

#include "tofu/Partition/Topology.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>

using namespace tofu;

std::vector<unsigned> tofu::factorize(unsigned n) {
  std::vector<unsigned> primes;
  for (unsigned p = 2; (uint64_t)p * p <= n; ++p)
    while (n % p == 0) {
      primes.push_back(p);
      n /= p;
    }
  if (n > 1)
    primes.push_back(n);
  std::sort(primes.rbegin(), primes.rend());
  return primes;
}

/// Splits `s` at `sep`, keeping empty pieces.
static std::vector<std::string> split(const std::string &s, char sep) {
  std::vector<std::string> out(1);
  for (char c : s) {
    if (c == sep)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

std::optional<Topology> Topology::parse(const std::string &devices,
                                        const std::string &bandwidths,
                                        std::string &error) {
  Topology topo;
  for (const std::string &piece : split(devices, 'x')) {
    char *end = nullptr;
    long v = piece.empty() ? 0 : std::strtol(piece.c_str(), &end, 10);
    if (piece.empty() || *end || v < 1 || v > (1 << 20)) {
      error = "devices must be positive integers separated by 'x' (such as "
              "'8' or '2x4'), got '" +
              devices + "'";
      return std::nullopt;
    }
    topo.levels.push_back(v);
  }
  // Checked level by level: each level is at most 2^20, so the product
  // cannot wrap before it exceeds the limit.
  uint64_t total = 1;
  for (unsigned l : topo.levels) {
    total *= l;
    if (total > (1u << 20)) {
      error = "at most 1048576 devices are supported, got '" + devices + "'";
      return std::nullopt;
    }
  }
  if (bandwidths.empty()) {
    topo.bandwidth.assign(topo.levels.size(), 10.0);
    return topo;
  }
  for (const std::string &piece : split(bandwidths, ',')) {
    char *end = nullptr;
    double v = piece.empty() ? 0 : std::strtod(piece.c_str(), &end);
    if (piece.empty() || *end || !(v > 0)) {
      error = "bandwidths must be positive numbers (GB/s) separated by ',', "
              "got '" +
              bandwidths + "'";
      return std::nullopt;
    }
    topo.bandwidth.push_back(v);
  }
  if (topo.bandwidth.size() != topo.levels.size()) {
    error = "devices '" + devices + "' has " +
            std::to_string(topo.levels.size()) + " level(s) but " +
            std::to_string(topo.bandwidth.size()) + " bandwidth(s) were given";
    return std::nullopt;
  }
  return topo;
}

unsigned Topology::getNumDevices() const {
  return std::accumulate(levels.begin(), levels.end(), 1u,
                         [](unsigned a, unsigned b) { return a * b; });
}

std::vector<RecursionStep> Topology::getSteps() const {
  std::vector<unsigned> order(levels.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](unsigned a, unsigned b) {
    return bandwidth[a] != bandwidth[b] ? bandwidth[a] < bandwidth[b] : a < b;
  });
  std::vector<RecursionStep> steps;
  for (unsigned l : order)
    for (unsigned p : factorize(levels[l]))
      steps.push_back({p, l});
  return steps;
}

std::string Topology::str() const {
  std::string s;
  for (size_t i = 0; i < levels.size(); ++i)
    s += (i ? "x" : "") + std::to_string(levels[i]);
  return s;
}
