//===- PlanReport.cpp - The human-readable plan report --------------------===//

#include "tofu/PlanIO/PlanIO.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <map>
#include <numeric>

using namespace tofu;

/// "12.3 MB".
static std::string formatBytes(double bytes) {
  const char *units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (bytes >= 1000 && u < 4) {
    bytes /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), u ? "%.2f %s" : "%.0f %s", bytes, units[u]);
  return buf;
}

MemoryEstimate tofu::estimateMemory(const Graph &graph, const Plan &plan) {
  MemoryEstimate m;
  std::vector<Shape> local = plan.getFinalTensorShapes(graph);
  for (size_t t = 0; t < graph.tensors.size(); ++t) {
    double bytes =
        (double)getNumElements(local[t]) * graph.tensors[t].elementBytes;
    (graph.isModelState(t) ? m.modelState : m.activations) += bytes;
  }
  m.buffers = plan.totalBytes / std::max(1u, plan.topology.getNumDevices());
  return m;
}

std::optional<double> tofu::parseByteSize(const std::string &text,
                                          std::string &error) {
  const char *begin = text.c_str();
  char *end = nullptr;
  double value = std::strtod(begin, &end);
  std::string unit(end);
  unit.erase(0, unit.find_first_not_of(' '));
  static const std::pair<const char *, double> units[] = {
      {"", 1},      {"B", 1},         {"KB", 1e3},      {"MB", 1e6},
      {"GB", 1e9},  {"TB", 1e12},     {"KiB", 0x1p10},  {"MiB", 0x1p20},
      {"GiB", 0x1p30}, {"TiB", 0x1p40}};
  if (end != begin && std::isfinite(value) && value >= 0)
    for (const auto &[name, scale] : units)
      if (unit == name)
        return value * scale;
  error = "'" + text +
          "' is not a size in bytes (a number with B, KB, MB, GB, TB, KiB, "
          "MiB, GiB or TiB, e.g. 80GB)";
  return std::nullopt;
}

std::string tofu::checkDeviceMemory(const Graph &graph, const Plan &plan,
                                    double deviceBytes) {
  MemoryEstimate m = estimateMemory(graph, plan);
  if (m.total() <= deviceBytes)
    return "";
  return "the plan needs an estimated " + formatBytes(m.total()) +
         " per device (weights+gradients+optimizer state " +
         formatBytes(m.modelState) + ", activations " +
         formatBytes(m.activations) + ", communication buffers " +
         formatBytes(m.buffers) + "), more than the device memory of " +
         formatBytes(deviceBytes) +
         ": use more devices or a smaller batch";
}

std::string tofu::formatPlanReport(const Graph &graph, const Plan &plan) {
  std::string out;
  char buf[256];
  unsigned devices = plan.topology.getNumDevices();
  std::snprintf(buf, sizeof(buf),
                "tofu plan: algorithm %s, devices %s (%u), %zu step(s), "
                "replication %s\n",
                stringifyAlgorithm(plan.algorithm), plan.topology.str().c_str(),
                devices, plan.steps.size(), plan.replication ? "on" : "off");
  out += buf;
  out += "  step      k  level   groups            bytes  exact\n";
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep &s = plan.steps[i];
    // "yes" only for a step the DP proved optimal; "-" for a step no exact
    // search chose (a baseline's, or an imported plan's).
    // "coarsened" for a step the DP solved exactly over the coarsened
    // graph's ties only; "shared" for a step it solved counting shared
    // conversions once.
    const char *exact = s.degenerate                      ? "degenerate"
                        : !s.searched                     ? "-"
                        : s.exact                         ? "yes"
                        : s.sharedReads                   ? "shared"
                        : s.coarsened && s.coarsenedExact ? "coarsened"
                                                          : "no";
    std::snprintf(buf, sizeof(buf), "  %4zu %6u %6u %8lld %16.0f  %s\n", i, s.k,
                  s.level, (long long)s.groups, s.bytes, exact);
    out += buf;
  }
  // Two byte counts, each with one name everywhere (docs/plan-format.md):
  // the cost model's (the JSON's total_bytes) and the program's
  // (program_bytes).
  std::snprintf(buf, sizeof(buf),
                "  cost-model bytes: %.0f (%s) per step, Tofu's model that "
                "the search minimises\n",
                plan.totalBytes, formatBytes(plan.totalBytes).c_str());
  out += buf;
  bool knowsProgram = plan.programBytes >= 0;
  if (knowsProgram) {
    std::snprintf(buf, sizeof(buf),
                  "  program bytes: %.0f (%s) per step, what the generated "
                  "program moves, summed over ranks\n",
                  plan.programBytes, formatBytes(plan.programBytes).c_str());
    out += buf;
  }

  // Per level: the cost-model bytes, and the time of the program's bytes
  // (split over the levels as the cost model's are), each device sending
  // its share in parallel.
  for (size_t l = 0; l < plan.topology.levels.size(); ++l) {
    double bytes = 0;
    for (const PlanStep &s : plan.steps)
      bytes += s.level == l ? s.bytes : 0;
    double moved = bytes;
    if (knowsProgram)
      moved = plan.totalBytes > 0 ? plan.programBytes * bytes / plan.totalBytes
                                  : 0;
    double seconds =
        moved / std::max(1u, devices) / (plan.topology.bandwidth[l] * 1e9);
    std::snprintf(buf, sizeof(buf),
                  "  level %zu (%u-way, %.1f GB/s): %s of cost-model bytes, "
                  "estimated %.3f ms per device for the %s bytes\n",
                  l, plan.topology.levels[l], plan.topology.bandwidth[l],
                  formatBytes(bytes).c_str(), seconds * 1e3,
                  knowsProgram ? "program's" : "cost model's");
    out += buf;
  }

  MemoryEstimate m = estimateMemory(graph, plan);
  out += "memory per device (estimate): weights+gradients+optimizer state " +
         formatBytes(m.modelState) + ", activations " +
         formatBytes(m.activations) + ", communication buffers " +
         formatBytes(m.buffers) + ", total " + formatBytes(m.total()) + "\n";

  // Communication by tensor: the edges that read or write it.
  std::vector<double> byTensor(graph.tensors.size(), 0.0);
  for (const PlanStep &s : plan.steps)
    for (size_t o = 0; o < graph.ops.size(); ++o) {
      const OpNode &op = graph.ops[o];
      for (size_t j = 0; j < op.inputs.size(); ++j)
        if (op.inputs[j] >= 0)
          byTensor[op.inputs[j]] += s.ops[o].inputBytes[j];
      for (size_t j = 0; j < op.outputs.size(); ++j)
        if (op.outputs[j] >= 0)
          byTensor[op.outputs[j]] += s.ops[o].outputBytes[j];
    }
  std::vector<int> order(graph.tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int a, int b) {
    return byTensor[a] != byTensor[b] ? byTensor[a] > byTensor[b] : a < b;
  });
  out += "top tensors by communication:\n";
  for (size_t i = 0; i < order.size() && i < 10; ++i) {
    int t = order[i];
    if (byTensor[t] <= 0)
      break;
    const TensorNode &tn = graph.tensors[t];
    std::string shape;
    for (size_t d = 0; d < tn.shape.size(); ++d)
      shape += (d ? "x" : "") + std::to_string(tn.shape[d]);
    std::string tilings;
    for (const PlanStep &s : plan.steps)
      tilings += " " + s.tilings[t].str();
    std::snprintf(buf, sizeof(buf), "  %2zu. %-12s %-15s %-12s %14.0f bytes ",
                  i + 1, tn.name.c_str(), stringifyTensorRole(tn.role),
                  shape.empty() ? "scalar" : shape.c_str(), byTensor[t]);
    out += buf;
    out += "tilings" + tilings + "\n";
  }
  for (const std::string &w : plan.warnings)
    out += "warning: " + w + "\n";
  for (const std::string &r : plan.remarks)
    out += "remark: " + r + "\n";
  return out;
}
