//===- PlanIO.h - Plans as JSON, as a report and as a picture ---*- C++ -*-===//
//
// The JSON schema is documented in docs/plan-format.md. An imported plan is
// re-evaluated under the cost model, so the costs it reports are always the
// model's, not the file's.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANIO_PLANIO_H
#define TOFU_PLANIO_PLANIO_H

#include "tofu/Partition/Search.h"

#include <optional>
#include <string>

namespace tofu {

/// Parses "cut(d)", "rep" or "partial".
std::optional<Tiling> parseTiling(const std::string &text);

std::string writePlanJSON(const Graph &graph, const Plan &plan);

/// Reads a plan written by writePlanJSON for the same graph. Fails with a
/// message on malformed JSON, a different graph, or an infeasible choice.
std::optional<Plan> readPlanJSON(const Graph &graph, const std::string &text,
                                 std::string &error);

/// Estimated bytes per device.
struct MemoryEstimate {
  /// Weights, their gradients and optimizer state, as tiled.
  double modelState = 0;
  /// Every other tensor (activations, inputs, backward intermediates).
  double activations = 0;
  /// Communication buffers: the plan's bytes divided by the devices.
  double buffers = 0;
  double total() const { return modelState + activations + buffers; }
};

MemoryEstimate estimateMemory(const Graph &graph, const Plan &plan);

/// A size in bytes: a non-negative number with an optional unit, B, KB, MB,
/// GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), as in
/// "80GB" or "16 GiB". Returns std::nullopt with `error` set otherwise.
std::optional<double> parseByteSize(const std::string &text,
                                    std::string &error);

/// When the memory estimate of `plan` exceeds `deviceBytes`, the warning
/// that says so and what to do; empty otherwise.
std::string checkDeviceMemory(const Graph &graph, const Plan &plan,
                              double deviceBytes);

/// The human-readable report: bytes per step and level with the estimated
/// time, the memory estimate, and the ten tensors that communicate most.
std::string formatPlanReport(const Graph &graph, const Plan &plan);

/// An SVG picture in the style of Tofu's Figure 11.
std::string drawPlanSVG(const Graph &graph, const Plan &plan);

} // namespace tofu

#endif // TOFU_PLANIO_PLANIO_H
