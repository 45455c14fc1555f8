//===- WorkerDevicesTest.cpp - Placement of in-process GPU workers --------===//

#include "tofu/Runtime/WorkerDevices.h"

#include <gtest/gtest.h>

#include <vector>

using namespace tofu::gpu;

namespace {

std::vector<int> place(int workers, int deviceCount, int limit) {
  int n = getTeamDeviceCount(workers, deviceCount, limit);
  std::vector<int> devices;
  for (int r = 0; r < workers; ++r)
    devices.push_back(getWorkerDevice(r, n));
  return devices;
}

} // namespace

TEST(WorkerDevices, RoundRobinOverEveryDevice) {
  EXPECT_EQ(place(8, 4, 0), (std::vector<int>{0, 1, 2, 3, 0, 1, 2, 3}));
  EXPECT_EQ(place(5, 2, 0), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(place(3, 3, 0), (std::vector<int>{0, 1, 2}));
}

TEST(WorkerDevices, OneGpuHoldsTheWholeTeam) {
  EXPECT_EQ(place(8, 1, 0), std::vector<int>(8, 0));
  // TOFU_GPU_WORKER_DEVICES=1 on a machine with several.
  EXPECT_EQ(place(4, 8, 1), std::vector<int>(4, 0));
}

TEST(WorkerDevices, NoMoreDevicesThanWorkersOrTheLimit) {
  EXPECT_EQ(getTeamDeviceCount(2, 8, 0), 2);
  EXPECT_EQ(getTeamDeviceCount(8, 8, 3), 3);
  EXPECT_EQ(getTeamDeviceCount(8, 2, 5), 2);
  EXPECT_EQ(place(6, 8, 3), (std::vector<int>{0, 1, 2, 0, 1, 2}));
  // A driver that lists nothing still gets device 0 (its error comes
  // from the driver).
  EXPECT_EQ(getTeamDeviceCount(4, 0, 0), 1);
}

TEST(WorkerDevices, OutsideATeamDeviceZero) {
  EXPECT_EQ(getWorkerDevice(-1, 4), 0);
}

TEST(WorkerDevices, ParsesTheLimit) {
  std::string error;
  EXPECT_EQ(parseWorkerDeviceLimit(nullptr, error), 0);
  EXPECT_EQ(parseWorkerDeviceLimit("2", error), 2);
  EXPECT_TRUE(error.empty());
  for (const char *bad : {"", "0", "-1", "two", "3x", "5000"}) {
    error.clear();
    EXPECT_EQ(parseWorkerDeviceLimit(bad, error), -1) << bad;
    EXPECT_NE(error.find("TOFU_GPU_WORKER_DEVICES"), std::string::npos);
  }
}
