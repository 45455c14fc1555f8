//===- WorkerDevices.h - Which GPU each in-process worker uses --*- C++ -*-===//
//
// The K in-process workers of `tofu-run --gpu --workers K` spread over the
// process's GPUs: worker r runs on device r mod n, where n is the number of
// devices the team uses: every device the driver lists, at most one per
// worker, or fewer when TOFU_GPU_WORKER_DEVICES asks (1 puts every worker on
// device 0, as on a machine with one GPU). Workers on different devices read
// each other's tiles through peer access, which every pair of the team's
// devices must support. Free of CUDA, so that the unit tests check it
// (unittests/Runtime/WorkerDevicesTest.cpp); runtime/cuda/TofuCudaRuntime.cpp
// applies it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_WORKERDEVICES_H
#define TOFU_RUNTIME_WORKERDEVICES_H

#include <algorithm>
#include <cstdlib>
#include <string>

namespace tofu {
namespace gpu {

/// The number of devices a team of `workers` uses when the driver lists
/// `deviceCount` and TOFU_GPU_WORKER_DEVICES asks for `limit` (0: no
/// limit). At least 1.
inline int getTeamDeviceCount(int workers, int deviceCount, int limit) {
  int n = std::min(workers, deviceCount);
  if (limit > 0)
    n = std::min(n, limit);
  return std::max(n, 1);
}

/// The device of worker `rank` of a team that uses `teamDevices` devices.
inline int getWorkerDevice(int rank, int teamDevices) {
  return teamDevices > 0 && rank >= 0 ? rank % teamDevices : 0;
}

/// Parses TOFU_GPU_WORKER_DEVICES (`text`, null when unset): a positive
/// number of devices, or 0 when unset. Returns -1 with the reason in
/// `error` for anything else.
inline int parseWorkerDeviceLimit(const char *text, std::string &error) {
  if (!text)
    return 0;
  char *end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > 1024) {
    error = std::string("TOFU_GPU_WORKER_DEVICES must be a number of devices "
                        "from 1 to 1024, not '") +
            text + "'";
    return -1;
  }
  return int(value);
}

} // namespace gpu
} // namespace tofu

#endif // TOFU_RUNTIME_WORKERDEVICES_H
