//===- StepTimer.cpp - Wall-clock step times of the CPU runtime -----------===//
//
// tofu_timer_begin/end bracket each call of the training step in @main
// (tofu-run --timing); tofu_timer_report prints, from rank 0, the median
// step time after the warm-up steps. Every rank waits at a barrier before
// and after a step, so a partitioned step's time is that of its slowest
// rank.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/TofuRuntime.h"

#include "Workers.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

namespace {

struct StepTimer {
  std::chrono::steady_clock::time_point start;
  std::vector<double> milliseconds;
};

StepTimer &getTimer() {
  static thread_local StepTimer timer;
  return timer;
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

extern "C" {

void tofu_timer_begin(void) {
  barrier();
  getTimer().start = std::chrono::steady_clock::now();
}

void tofu_timer_end(void) {
  barrier();
  StepTimer &t = getTimer();
  std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - t.start;
  t.milliseconds.push_back(elapsed.count());
}

void tofu_timer_report(int64_t warmup) {
  if (tofu_rank() != 0)
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
    std::printf("step time: median %.3f ms over %zu steps after %zu "
                "warm-up\n",
                median, n, skip);
  }
  std::fflush(stdout);
}

} // extern "C"
