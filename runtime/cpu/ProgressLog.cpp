//===- ProgressLog.cpp - The losses and the speed of a training run ------===//
//
// tofu_print_loss prints the loss of a step on rank 0, every step or every
// `every` steps as tofu_log_open configured it, with the steps and samples
// per second since the previous printed line; with a log file, rank 0 also
// writes one JSON line per step.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/TofuRuntime.h"

#include "RuntimeSupport.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>

using namespace tofu::runtime;

namespace {

using Clock = std::chrono::steady_clock;

struct ProgressLog {
  int64_t every = 1, steps = 0, samplesPerStep = 0;
  FILE *jsonl = nullptr;
  bool started = false, warnedNonFinite = false;
  Clock::time_point start, lastPrint, lastStep;
  int64_t lastPrintedStep = -1;
};

ProgressLog &progress() {
  static ProgressLog log;
  return log;
}

double secondsBetween(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

} // namespace

extern "C" {

void _mlir_ciface_tofu_log_open(TofuUnrankedMemRef *path, int64_t every,
                                int64_t steps, int64_t samplesPerStep) {
  // Only rank 0 prints and writes the log (and in-process workers share
  // it).
  if (tofu_rank() != 0)
    return;
  ProgressLog &log = progress();
  log.every = every > 0 ? every : 1;
  log.steps = steps;
  log.samplesPerStep = samplesPerStep;
  log.start = log.lastPrint = log.lastStep = Clock::now();
  log.started = true;
  View v = getView(path, 1);
  std::string file(v.data, size_t(v.volume()));
  if (file.empty())
    return;
  log.jsonl = std::fopen(file.c_str(), "w");
  if (!log.jsonl)
    fatal(("cannot write the log " + file).c_str());
}

void tofu_print_loss(int64_t step, double loss, int64_t hasReference,
                     double reference) {
  if (tofu_rank() != 0)
    return;
  ProgressLog &log = progress();
  // Training on after the loss overflowed only prints nan: say once why.
  if (!std::isfinite(loss) && !log.warnedNonFinite) {
    log.warnedNonFinite = true;
    std::fprintf(stderr,
                 "tofu runtime: the loss of step %lld is %g: training "
                 "diverged; lower the learning rate (tofu-run --lr, or "
                 "tofu-optimizer's lr) or check the data\n",
                 (long long)step, loss);
    std::fflush(stderr);
  }
  Clock::time_point now = Clock::now();
  if (!log.started) {
    // A driver that does not open the log: every step, no speed.
    if (hasReference)
      std::printf("step %lld: loss %.9g reference %.9g\n", (long long)step,
                  loss, reference);
    else
      std::printf("step %lld: loss %.9g\n", (long long)step, loss);
    std::fflush(stdout);
    return;
  }
  if (log.jsonl) {
    double seconds = secondsBetween(log.lastStep, now);
    std::fprintf(log.jsonl, "{\"step\": %lld, \"loss\": %.17g", (long long)step,
                 loss);
    if (hasReference)
      std::fprintf(log.jsonl, ", \"reference\": %.17g", reference);
    std::fprintf(log.jsonl,
                 ", \"seconds\": %.6f, \"step_seconds\": %.6f, "
                 "\"samples\": %lld}\n",
                 secondsBetween(log.start, now), seconds,
                 (long long)log.samplesPerStep);
    std::fflush(log.jsonl);
    if (step + 1 >= log.steps) {
      std::fclose(log.jsonl);
      log.jsonl = nullptr;
    }
  }
  log.lastStep = now;
  if (step % log.every != 0 && step + 1 != log.steps)
    return;
  // The speed since the previous printed line (the first one includes the
  // first step's warm-up).
  int64_t done = log.lastPrintedStep < 0 ? 1 : step - log.lastPrintedStep;
  double seconds = secondsBetween(log.lastPrint, now);
  double perSecond = seconds > 0 ? double(done) / seconds : 0;
  std::printf("step %lld: loss %.9g", (long long)step, loss);
  if (hasReference)
    std::printf(" reference %.9g", reference);
  std::printf(" (%.3g steps/s", perSecond);
  if (log.samplesPerStep > 0)
    std::printf(", %.3g samples/s", perSecond * double(log.samplesPerStep));
  std::printf(")\n");
  std::fflush(stdout);
  log.lastPrint = now;
  log.lastPrintedStep = step;
}

} // extern "C"
