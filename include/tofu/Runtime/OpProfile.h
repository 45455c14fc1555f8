//===- OpProfile.h - Per-op time of the timed steps -------------*- C++ -*-===//
//
// The bookkeeping of the runtimes' profiles: the time of every op of each
// timed step, summed per op name and per class, and reported per step over
// the steps after the warm-up.
//
//  - The CUDA runtime (TOFU_GPU_PROFILE=1, docs/gpu.md, *Profile*) times
//    every kernel launch and library call with a pair of CUDA events:
//    generated kernels, cuBLAS, cuDNN, copies and fills.
//  - The CPU runtime (TOFU_CPU_PROFILE=1, docs/cpu.md, *Profile*) times
//    every library call and collective with the wall clock: OpenBLAS,
//    oneDNN, collectives; the generated loops run inline, so their time is
//    the step's time outside every op.
//
// Free of CUDA and MPI, so that it is unit-tested on the host
// (unittests/Runtime/OpProfileTest.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_OPPROFILE_H
#define TOFU_RUNTIME_OPPROFILE_H

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace tofu::gpu {

/// Who computes an op.
enum class OpClass { Generated, Cublas, Cudnn, Copy, Blas, Dnnl, Collective };

inline const char *getOpClassName(OpClass c) {
  switch (c) {
  case OpClass::Generated:
    return "generated kernels";
  case OpClass::Cublas:
    return "cuBLAS";
  case OpClass::Cudnn:
    return "cuDNN";
  case OpClass::Copy:
    return "copies and fills";
  case OpClass::Blas:
    return "OpenBLAS";
  case OpClass::Dnnl:
    return "oneDNN";
  case OpClass::Collective:
    return "collectives";
  }
  return "?";
}

/// printf into a string.
__attribute__((format(printf, 1, 2))) inline std::string
formatText(const char *format, ...) {
  char buffer[512];
  va_list args;
  va_start(args, format);
  std::vsnprintf(buffer, sizeof(buffer), format, args);
  va_end(args);
  return buffer;
}

/// How a report names itself and its parts.
struct OpProfileStyle {
  /// What starts every line.
  std::string prefix = "gpu profile: ";
  /// The classes reported, in order, a line each.
  std::vector<OpClass> classes = {OpClass::Generated, OpClass::Cublas,
                                  OpClass::Cudnn, OpClass::Copy};
  /// The step's time in ops, and outside them.
  std::string inOps = "in ops", outside = "between them";

  /// The CPU runtime's.
  static OpProfileStyle cpu() {
    return {"cpu profile: ",
            {OpClass::Blas, OpClass::Dnnl, OpClass::Collective},
            "in library calls and collectives",
            "in generated code, copies and allocation"};
  }
};

class OpProfile {
public:
  explicit OpProfile(OpProfileStyle style = {}) : style(std::move(style)) {}

  /// The id of the op `name` of class `c`, the same for every call with
  /// the same name and class.
  int getId(const std::string &name, OpClass c) {
    auto [it, inserted] = ids.try_emplace({name, c}, int(ops.size()));
    if (inserted)
      ops.push_back({name, c});
    return it->second;
  }

  /// Starts the next step: the ops added from now on belong to it.
  void beginStep() { steps.emplace_back(); }

  /// One execution of op `id` that took `ms` milliseconds on the GPU.
  void add(int id, float ms) {
    if (steps.empty())
      beginStep();
    steps.back().push_back({id, ms});
  }

  size_t getNumSteps() const { return steps.size(); }

  /// The report over the steps after the first `warmup`, times per step:
  /// a line per class, the time outside every op (the step time of
  /// `stepMs`, which holds one entry per step, minus the ops' time), and
  /// the `top` ops that took longest. Every line starts with the style's
  /// prefix.
  std::string report(size_t warmup, const std::vector<float> &stepMs,
                     size_t top) const {
    std::string out;
    auto line = [&](const std::string &text) {
      out += style.prefix + text + "\n";
    };
    size_t first = std::min(warmup, steps.size());
    size_t n = steps.size() - first;
    if (n == 0) {
      line("no step profiled");
      return out;
    }
    std::vector<double> opMs(ops.size(), 0.0);
    std::vector<size_t> opCalls(ops.size(), 0);
    for (size_t s = first; s < steps.size(); ++s)
      for (auto [id, ms] : steps[s]) {
        opMs[id] += ms;
        ++opCalls[id];
      }
    double stepTotal = 0.0;
    for (size_t s = first; s < steps.size() && s < stepMs.size(); ++s)
      stepTotal += stepMs[s];
    double perStep = stepTotal / double(n);

    double opsTotal = 0.0;
    for (double ms : opMs)
      opsTotal += ms;
    line(formatText("%zu steps after %zu warm-up; per step: %.3f ms, of "
                    "which %.3f ms %s and %.3f ms %s",
                    n, first, perStep, opsTotal / double(n),
                    style.inOps.c_str(), perStep - opsTotal / double(n),
                    style.outside.c_str()));
    for (OpClass c : style.classes) {
      double ms = 0.0;
      size_t calls = 0, distinct = 0;
      for (size_t i = 0; i < ops.size(); ++i)
        if (ops[i].second == c && opCalls[i]) {
          ms += opMs[i];
          calls += opCalls[i];
          ++distinct;
        }
      line(formatText(
          "  %-17s %9.3f ms %5.1f%% of the ops, %zu calls (%zu distinct)",
          getOpClassName(c), ms / double(n),
          opsTotal > 0 ? 100.0 * ms / opsTotal : 0.0, calls / n, distinct));
    }
    std::vector<size_t> order;
    for (size_t i = 0; i < ops.size(); ++i)
      if (opCalls[i])
        order.push_back(i);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return opMs[a] != opMs[b] ? opMs[a] > opMs[b] : a < b;
    });
    if (order.size() > top)
      order.resize(top);
    line(formatText("  %9s %6s %6s  %s", "ms/step", "share", "calls", "op"));
    for (size_t i : order)
      line(formatText("  %9.3f %5.1f%% %6zu  %s", opMs[i] / double(n),
                      opsTotal > 0 ? 100.0 * opMs[i] / opsTotal : 0.0,
                      opCalls[i] / n, ops[i].first.c_str()));
    return out;
  }

private:
  OpProfileStyle style;
  std::vector<std::pair<std::string, OpClass>> ops;
  std::map<std::pair<std::string, OpClass>, int> ids;
  /// Per step, the (op id, milliseconds) of each execution.
  std::vector<std::vector<std::pair<int, float>>> steps;
};

} // namespace tofu::gpu

#endif // TOFU_RUNTIME_OPPROFILE_H
