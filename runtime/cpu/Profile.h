//===- Profile.h - Per-op time of the CPU runtime's steps ------*- C++ -*-===//
//
// TOFU_CPU_PROFILE=1 (docs/cpu.md, *Profile*): every OpenBLAS and oneDNN
// call and every collective of a timed step (between tofu_timer_begin and
// _end, tofu-run --timing) is timed with the wall clock into the rank's
// OpProfile, and tofu_timer_report prints rank 0's per step after the
// warm-up. Each rank (process or in-process worker) profiles its own ops.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CPU_PROFILE_H
#define TOFU_RUNTIME_CPU_PROFILE_H

#include "tofu/Runtime/OpProfile.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// Whether this rank is profiling the step it is in.
bool isProfilingStep();
/// The id of the op `name` of class `c` in this rank's profile.
int getProfileOpId(const std::string &name, gpu::OpClass c);
/// One execution of op `id` that took `ms` milliseconds.
void addProfiledOp(int id, double ms);

/// Times its own lifetime as one execution of the op that `name()` names,
/// when this rank profiles the step it is in; costs a thread-local check
/// otherwise.
class ProfiledCall {
public:
  template <typename NameFn> ProfiledCall(gpu::OpClass c, NameFn name) {
    if (!isProfilingStep())
      return;
    id = getProfileOpId(name(), c);
    start = std::chrono::steady_clock::now();
  }
  ~ProfiledCall() {
    if (id < 0)
      return;
    std::chrono::duration<double, std::milli> ms =
        std::chrono::steady_clock::now() - start;
    addProfiledOp(id, ms.count());
  }
  ProfiledCall(const ProfiledCall &) = delete;
  ProfiledCall &operator=(const ProfiledCall &) = delete;

private:
  int id = -1;
  std::chrono::steady_clock::time_point start;
};

/// A collective's profile name: its kind and the shapes of its input and
/// result, e.g. "all_gather 4x64 -> 8x64".
std::string describeCollective(const char *kind, const std::vector<int64_t> &in,
                               const std::vector<int64_t> &out);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CPU_PROFILE_H
