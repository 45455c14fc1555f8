//===- StepTimer.cpp - Wall-clock step times of the CPU runtime -----------===//
//
// tofu_timer_begin/end bracket each call of the training step in @main
// (tofu-run --timing); tofu_timer_report prints, from rank 0, the median
// step time after the warm-up steps. Every rank waits at a barrier before
// and after a step, so a partitioned step's time is that of its slowest
// rank.
//
// With TOFU_CPU_PROFILE=1 the timed steps are also profiled (Profile.h):
// the report adds the time of every library call and collective of rank
// 0, per step.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/TofuRuntime.h"

#include "Profile.h"
#include "Workers.h"

#include <cblas.h>
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <vector>

namespace {

struct StepTimer {
  std::chrono::steady_clock::time_point start;
  std::vector<double> milliseconds;
  /// TOFU_CPU_PROFILE=1: the ops of every timed step.
  bool profiling = [] {
    const char *value = std::getenv("TOFU_CPU_PROFILE");
    return value && std::strcmp(value, "1") == 0;
  }();
  bool inStep = false;
  tofu::gpu::OpProfile profile{tofu::gpu::OpProfileStyle::cpu()};
};

StepTimer &getTimer() {
  static thread_local StepTimer timer;
  return timer;
}

/// The number of ranks of the run: in-process workers, or MPI processes.
int getRankCount() {
  if (tofu::runtime::workers::active())
    return tofu::runtime::workers::size();
  int initialized = 0, size = 1;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

/// The rank that prints the step time and the profile: 0, or the one that
/// TOFU_CPU_PROFILE_RANK names (to compare ranks' profiles run by run).
int getReportingRank() {
  const char *value = std::getenv("TOFU_CPU_PROFILE_RANK");
  if (!value)
    return 0;
  char *end = nullptr;
  long rank = std::strtol(value, &end, 10);
  if (end == value || *end || rank < 0 || rank >= getRankCount()) {
    if (tofu_rank() == 0)
      std::fprintf(stderr,
                   "tofu-run: TOFU_CPU_PROFILE_RANK=%s is not a rank of this "
                   "run (0 to %d); rank 0 reports\n",
                   value, getRankCount() - 1);
    return 0;
  }
  return int(rank);
}

void barrier() {
  if (tofu::runtime::workers::active())
    return tofu::runtime::workers::barrier();
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Barrier(MPI_COMM_WORLD);
}

} // namespace

namespace tofu {
namespace runtime {

bool isProfilingStep() { return getTimer().inStep; }

int getProfileOpId(const std::string &name, gpu::OpClass c) {
  return getTimer().profile.getId(name, c);
}

void addProfiledOp(int id, double ms) { getTimer().profile.add(id, float(ms)); }

std::string describeCollective(const char *kind, const std::vector<int64_t> &in,
                               const std::vector<int64_t> &out) {
  auto shape = [](const std::vector<int64_t> &sizes) {
    std::string text;
    for (size_t d = 0; d < sizes.size(); ++d)
      text += (d ? "x" : "") + std::to_string(sizes[d]);
    return text.empty() ? std::string("scalar") : text;
  };
  return std::string(kind) + " " + shape(in) + " -> " + shape(out);
}

} // namespace runtime
} // namespace tofu

extern "C" {

void tofu_timer_begin(void) {
  barrier();
  StepTimer &t = getTimer();
  if (t.profiling) {
    t.inStep = true;
    t.profile.beginStep();
  }
  t.start = std::chrono::steady_clock::now();
}

void tofu_timer_end(void) {
  StepTimer &t = getTimer();
  {
    // With several ranks, the profile counts rank 0's wait for the slowest.
    std::optional<tofu::runtime::ProfiledCall> wait;
    if (t.inStep && getRankCount() > 1)
      wait.emplace(tofu::gpu::OpClass::Collective,
                   [] { return "barrier ending the step"; });
    barrier();
  }
  t.inStep = false;
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - t.start;
  t.milliseconds.push_back(elapsed.count());
}

void tofu_timer_report(int64_t warmup) {
  if (tofu_rank() != getReportingRank())
    return;
  std::vector<double> times = getTimer().milliseconds;
  size_t skip = std::min<size_t>(size_t(std::max<int64_t>(warmup, 0)),
                                 times.size());
  times.erase(times.begin(), times.begin() + skip);
  if (times.empty()) {
    std::printf("step time: no step timed\n");
  } else {
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    double median =
        n % 2 ? times[n / 2] : 0.5 * (times[n / 2 - 1] + times[n / 2]);
    // The fastest step too: on a shared host it is the least disturbed.
    std::printf("step time: median %.3f ms over %zu steps after %zu "
                "warm-up (fastest %.3f ms)\n",
                median, n, skip, times.front());
  }
  const StepTimer &t = getTimer();
  if (t.profiling) {
    std::vector<float> all(t.milliseconds.begin(), t.milliseconds.end());
    std::fputs(t.profile.report(skip, all, /*top=*/30).c_str(), stdout);
    // The kernels OpenBLAS chose for this CPU (OPENBLAS_CORETYPE, or its
    // own detection), which its speed depends on.
    std::printf("cpu profile: OpenBLAS core %s\n", openblas_get_corename());
  }
  std::fflush(stdout);
}

} // extern "C"
