//===- BlockCacheTest.cpp - The CUDA runtime's caching allocator ----------===//
//
// Drives tofu::gpu::BlockCache with a fake driver (host memory addresses,
// a fixed amount of "device" memory), no GPU needed.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/BlockCache.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <vector>

using namespace tofu::gpu;

namespace {

/// Hands out made-up addresses from a device of `total` bytes.
class FakeDriver : public BlockDriver {
public:
  explicit FakeDriver(uint64_t total) : total(total) {}

  void getMemoryInfo(uint64_t &freeBytes, uint64_t &totalBytes) override {
    freeBytes = total - used;
    totalBytes = total;
  }
  void *allocate(uint64_t bytes, MemoryKind kind) override {
    EXPECT_LE(used + bytes, total) << "the cache allocated past the check";
    used += bytes;
    ++allocations;
    next += bytes + 4096;
    void *ptr = reinterpret_cast<void *>(next);
    blocks[ptr] = bytes;
    return ptr;
  }
  void release(void *ptr, uint64_t bytes, MemoryKind) override {
    EXPECT_TRUE(synchronized) << "idle blocks released before a wait";
    auto it = blocks.find(ptr);
    ASSERT_NE(it, blocks.end());
    EXPECT_EQ(it->second, bytes);
    used -= bytes;
    blocks.erase(it);
    ++releases;
  }
  void synchronize() override {
    synchronized = true;
    ++synchronizations;
  }

  uint64_t total, used = 0;
  uintptr_t next = 1 << 20;
  std::map<void *, uint64_t> blocks;
  int allocations = 0, releases = 0, synchronizations = 0;
  bool synchronized = false;
};

/// One training step as the lowered code runs it: the weights come in
/// (the previous step's results), temporaries are allocated and freed
/// after their last use, the new weights are allocated and returned, and
/// the caller frees the old weights after the call.
std::vector<void *> step(BlockCache &cache,
                         const std::vector<void *> &weights) {
  const std::vector<uint64_t> weightSizes = {8192 * 4, 1000, 64 * 64 * 4, 4};
  void *a = cache.allocate(512 * 8192 * 4, MemoryKind::Device);
  void *b = cache.allocate(512 * 8192 * 4, MemoryKind::Device);
  EXPECT_TRUE(cache.free(a));
  void *c = cache.allocate(100, MemoryKind::Device);
  void *loss = cache.allocate(4, MemoryKind::Managed);
  std::vector<void *> results{loss};
  for (uint64_t size : weightSizes)
    results.push_back(cache.allocate(size, MemoryKind::Managed));
  void *d = cache.allocate(512 * 8192 * 4, MemoryKind::Device);
  EXPECT_TRUE(cache.free(d));
  EXPECT_TRUE(cache.free(c));
  EXPECT_TRUE(cache.free(b));
  // After the call: the old weights and the loss (read by the host).
  for (void *w : weights)
    EXPECT_TRUE(cache.free(w));
  EXPECT_TRUE(cache.free(results[0]));
  results.erase(results.begin());
  cache.finishStep();
  return results;
}

TEST(BlockCache, SteadyStateAllocatesFromTheDriverInTheFirstStepOnly) {
  FakeDriver driver(uint64_t(1) << 30);
  BlockCache cache(driver);
  std::vector<void *> weights;
  for (uint64_t size : {8192 * 4, 1000, 64 * 64 * 4, 4})
    weights.push_back(cache.allocate(size, MemoryKind::Managed));
  weights = step(cache, weights);
  int64_t afterFirst = cache.getDriverAllocations();
  EXPECT_EQ(driver.allocations, afterFirst);
  uint64_t held = cache.getHeldBytes();
  for (int s = 0; s < 10; ++s)
    weights = step(cache, weights);
  EXPECT_EQ(cache.getDriverAllocations(), afterFirst);
  EXPECT_EQ(cache.getDriverAllocationsAfterFirstStep(), 0);
  EXPECT_EQ(driver.allocations, afterFirst);
  EXPECT_EQ(driver.releases, 0);
  EXPECT_EQ(cache.getHeldBytes(), held);
  EXPECT_EQ(cache.getPeakHeldBytes(), held);
  // The weights, plus (at the peak) the next weights and the temporaries.
  EXPECT_EQ(cache.getLiveBytes(), BlockCache::roundUp(8192 * 4) +
                                      BlockCache::roundUp(1000) +
                                      BlockCache::roundUp(64 * 64 * 4) +
                                      BlockCache::roundUp(4));
}

TEST(BlockCache, AFreedBlockIsReusedAtOnceForTheSameKindAndSize) {
  FakeDriver driver(uint64_t(1) << 30);
  BlockCache cache(driver);
  void *a = cache.allocate(1000, MemoryKind::Device);
  ASSERT_TRUE(cache.free(a));
  // Same rounded size (1024), same kind: the same block, no driver call.
  EXPECT_EQ(cache.allocate(1020, MemoryKind::Device), a);
  EXPECT_EQ(driver.allocations, 1);
  // Another kind never gets it.
  void *b = cache.allocate(1000, MemoryKind::Managed);
  EXPECT_NE(b, a);
  EXPECT_EQ(driver.allocations, 2);
  EXPECT_EQ(driver.synchronizations, 0);
  EXPECT_FALSE(cache.free(reinterpret_cast<void *>(uintptr_t(42))));
  EXPECT_EQ(cache.allocate(0, MemoryKind::Device), nullptr);
}

TEST(BlockCache, DriverAllocationsAfterTheFirstStepAreCounted) {
  FakeDriver driver(uint64_t(1) << 30);
  BlockCache cache(driver);
  cache.allocate(512, MemoryKind::Device);
  cache.finishStep();
  cache.allocate(512, MemoryKind::Device);
  cache.allocate(1024, MemoryKind::Device);
  EXPECT_EQ(cache.getDriverAllocations(), 3);
  EXPECT_EQ(cache.getDriverAllocationsAfterFirstStep(), 2);
}

TEST(BlockCache, IdleBlocksGoBackToTheDriverWhenMemoryRunsOut) {
  FakeDriver driver(1 << 20); // 1 MiB of device memory
  BlockCache cache(driver);
  void *a = cache.allocate(600 << 10, MemoryKind::Device);
  ASSERT_NE(a, nullptr);
  ASSERT_TRUE(cache.free(a));
  // 800 KiB do not fit next to the idle 600 KiB: the idle block goes back
  // (after a wait for the stream), then they fit.
  OutOfMemory error;
  void *b = cache.allocate(800 << 10, MemoryKind::Device, &error);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(driver.synchronizations, 1);
  EXPECT_EQ(driver.releases, 1);
  EXPECT_EQ(cache.getDriverFrees(), 1);
  EXPECT_EQ(cache.getHeldBytes(), uint64_t(800) << 10);
  EXPECT_EQ(cache.getIdleBlocks(), 0u);
}

TEST(BlockCache, AnotherCachesIdleBlocksCanMakeRoom) {
  // Two ranks' caches on one device (in-process workers): the first holds
  // an idle 600 KiB block that the second's 800 KiB need. The second's own
  // release frees nothing; the first's does (after its wait), and the
  // second's allocation then fits, as mgpuMemAlloc retries it.
  FakeDriver driver(1 << 20);
  BlockCache first(driver), second(driver);
  void *a = first.allocate(600 << 10, MemoryKind::Device);
  ASSERT_TRUE(first.free(a));
  OutOfMemory error;
  EXPECT_EQ(second.allocate(800 << 10, MemoryKind::Device, &error), nullptr);
  EXPECT_EQ(error.freeBytes, uint64_t(424) << 10);
  EXPECT_EQ(driver.releases, 0);
  first.releaseIdle();
  EXPECT_EQ(driver.releases, 1);
  EXPECT_EQ(first.getIdleBlocks(), 0u);
  EXPECT_NE(second.allocate(800 << 10, MemoryKind::Device, &error), nullptr);
}

TEST(BlockCache, ExhaustedMemoryFailsWithTheBytesNeededAndFree) {
  FakeDriver driver(1 << 20);
  BlockCache cache(driver);
  void *a = cache.allocate(700 << 10, MemoryKind::Device);
  ASSERT_NE(a, nullptr);
  OutOfMemory error;
  EXPECT_EQ(cache.allocate((400 << 10) + 1, MemoryKind::Managed, &error),
            nullptr);
  EXPECT_EQ(error.neededBytes, uint64_t(400 << 10) + 512);
  EXPECT_EQ(error.freeBytes, uint64_t(324) << 10);
  EXPECT_EQ(error.totalBytes, uint64_t(1) << 20);
  EXPECT_EQ(error.heldBytes, uint64_t(700) << 10);
  EXPECT_EQ(driver.allocations, 1);
  EXPECT_EQ(cache.getLiveBytes(), uint64_t(700) << 10);
  EXPECT_EQ(error.describe(33554432),
            "out of device memory: 410112 bytes needed, 331776 of 1048576 "
            "bytes free (this process holds 716800 bytes of buffers and "
            "33554432 bytes of workspaces)");
  // Nothing changed: a smaller request still fits.
  EXPECT_NE(cache.allocate(300 << 10, MemoryKind::Device), nullptr);
}

} // namespace
