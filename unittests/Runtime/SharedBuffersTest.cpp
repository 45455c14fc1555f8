//===- SharedBuffersTest.cpp - The size of the shared buffers -------------===//

#include "tofu/Runtime/SharedBuffers.h"

#include <gtest/gtest.h>

using tofu::runtime::getSharedBufferBytes;

namespace {

constexpr int64_t kMiB = 1 << 20;

TEST(SharedBuffersTest, PlentyOfSharedMemoryKeepsTheWantedSize) {
  // This host's /dev/shm: 12 GiB free.
  EXPECT_EQ(getSharedBufferBytes(kMiB, int64_t(12) << 30, 8), kMiB);
  // Unknown free space.
  EXPECT_EQ(getSharedBufferBytes(kMiB, -1, 8), kMiB);
}

TEST(SharedBuffersTest, AContainersSharedMemoryShrinksTheBuffers) {
  // Docker's default 64 MiB, 8 members: 16 segments of 8 x 2 buffers
  // fit in 64 MiB with buffers of 256 KiB.
  int64_t bytes = getSharedBufferBytes(kMiB, 64 * kMiB, 8);
  EXPECT_EQ(bytes, 256 * 1024);
  EXPECT_LE(16 * 2 * 8 * bytes, 64 * kMiB);
  // 2 members: 1 MiB buffers take 64 MiB in 16 segments, all of it.
  EXPECT_EQ(getSharedBufferBytes(kMiB, 64 * kMiB, 2), kMiB);
  EXPECT_EQ(getSharedBufferBytes(kMiB, 63 * kMiB, 2), 63 * kMiB / 64 / 64 * 64);
}

TEST(SharedBuffersTest, BuffersStartOnCacheLines) {
  EXPECT_EQ(getSharedBufferBytes(1000, -1, 2), 960);
  EXPECT_EQ(getSharedBufferBytes(kMiB, 100000, 3) % 64, 0);
}

TEST(SharedBuffersTest, NoRoomMeansNoBuffers) {
  EXPECT_EQ(getSharedBufferBytes(kMiB, 0, 2), 0);
  EXPECT_EQ(getSharedBufferBytes(kMiB, 16 * 2 * 2 * 63, 2), 0);
  EXPECT_EQ(getSharedBufferBytes(-5, -1, 2), 0);
}

} // namespace
