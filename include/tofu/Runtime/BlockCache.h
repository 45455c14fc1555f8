//===- BlockCache.h - The CUDA runtime's caching allocator ------*- C++ -*-===//
//
// The bookkeeping of the CUDA runtime's caching allocator, free of CUDA so
// that it is tested on the host (unittests/Runtime/BlockCacheTest.cpp). The
// runtime (runtime/cuda/TofuCudaRuntime.cpp) gives it a BlockDriver over
// the CUDA driver API and guards it with a mutex.
//
// A freed block goes back to a free list of its kind and rounded size at
// once, and the next request of that kind and size gets it again without a
// driver call. Handing it out again without waiting is safe because all
// GPU work of the process is queued on one stream in program order (work
// queued after the reuse runs after the work queued before the free) and
// the lowered host code touches memory only after waiting for that stream.
// Since every training step allocates and frees the same sizes in the same
// order, only the first step allocates from the driver. Idle blocks go back
// to the driver only when an allocation would not fit in the free device
// memory, after the stream is idle.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_BLOCKCACHE_H
#define TOFU_RUNTIME_BLOCKCACHE_H

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>

namespace tofu {
namespace gpu {

/// Where a block of memory lives.
enum class MemoryKind : int {
  /// Device memory (cuMemAlloc): kernels and libraries only.
  Device = 0,
  /// Managed memory (cuMemAllocManaged): also read and written by the host.
  Managed = 1,
};

/// What the cache asks of the driver.
class BlockDriver {
public:
  virtual ~BlockDriver() = default;
  /// The free and total device memory.
  virtual void getMemoryInfo(uint64_t &freeBytes, uint64_t &totalBytes) = 0;
  /// A new block of `bytes` of `kind` (never fails: the cache checks the
  /// free memory first).
  virtual void *allocate(uint64_t bytes, MemoryKind kind) = 0;
  /// Returns a block to the driver.
  virtual void release(void *ptr, uint64_t bytes, MemoryKind kind) = 0;
  /// Waits until the queued work, which may still use idle blocks, is done.
  virtual void synchronize() = 0;
};

/// Why an allocation failed: the rounded size needed and the device memory
/// free after the idle blocks went back to the driver.
struct OutOfMemory {
  uint64_t neededBytes = 0;
  uint64_t freeBytes = 0;
  uint64_t totalBytes = 0;
  /// Bytes that the cache holds (all handed out by then).
  uint64_t heldBytes = 0;

  /// "out of device memory: N bytes needed, F of T bytes free (this
  /// process holds H bytes of buffers and W bytes of workspaces)".
  std::string describe(uint64_t workspaceBytes) const {
    char text[320];
    std::snprintf(text, sizeof(text),
                  "out of device memory: %llu bytes needed, %llu of %llu "
                  "bytes free (this process holds %llu bytes of buffers and "
                  "%llu bytes of workspaces)",
                  static_cast<unsigned long long>(neededBytes),
                  static_cast<unsigned long long>(freeBytes),
                  static_cast<unsigned long long>(totalBytes),
                  static_cast<unsigned long long>(heldBytes),
                  static_cast<unsigned long long>(workspaceBytes));
    return text;
  }
};

/// A caching allocator over a BlockDriver; not thread-safe by itself.
class BlockCache {
public:
  /// Blocks are handed out in multiples of this many bytes.
  static constexpr uint64_t kGranularity = 512;

  explicit BlockCache(BlockDriver &driver) : driver(driver) {}

  static uint64_t roundUp(uint64_t bytes) {
    return (bytes + kGranularity - 1) / kGranularity * kGranularity;
  }

  /// A block of at least `sizeBytes` of `kind`: an idle one of the same
  /// kind and rounded size, else a new one from the driver if it fits in
  /// the free device memory (after the idle blocks went back to the driver
  /// if it did not). Returns null for 0 bytes, and null with `*error` set
  /// when the memory is exhausted.
  void *allocate(uint64_t sizeBytes, MemoryKind kind,
                 OutOfMemory *error = nullptr) {
    if (sizeBytes == 0)
      return nullptr;
    uint64_t bytes = roundUp(sizeBytes);
    void *ptr = nullptr;
    auto it = idle.find({static_cast<int>(kind), bytes});
    if (it != idle.end()) {
      ptr = it->second;
      idle.erase(it);
    } else {
      ptr = allocateFromDriver(bytes, kind, error);
      if (!ptr)
        return nullptr;
    }
    live.emplace(ptr, Block{bytes, kind});
    liveBytes += bytes;
    peakLiveBytes = std::max(peakLiveBytes, liveBytes);
    return ptr;
  }

  /// Puts a block back on its free list at once, for the next request of
  /// its kind and size; false when `ptr` is not a block of the cache.
  bool free(void *ptr) {
    auto it = live.find(ptr);
    if (it == live.end())
      return false;
    Block block = it->second;
    live.erase(it);
    liveBytes -= block.bytes;
    idle.emplace(std::make_pair(static_cast<int>(block.kind), block.bytes),
                 ptr);
    return true;
  }

  /// Returns every idle block to the driver, after the queued work.
  void releaseIdle() {
    if (idle.empty())
      return;
    driver.synchronize();
    for (auto &[key, ptr] : idle) {
      driver.release(ptr, key.second, static_cast<MemoryKind>(key.first));
      heldBytes -= key.second;
      ++driverFrees;
    }
    idle.clear();
  }

  /// Marks the end of a training step: driver allocations from now on
  /// count as after the first step.
  void finishStep() { ++stepsDone; }

  uint64_t getLiveBytes() const { return liveBytes; }
  uint64_t getPeakLiveBytes() const { return peakLiveBytes; }
  uint64_t getHeldBytes() const { return heldBytes; }
  uint64_t getPeakHeldBytes() const { return peakHeldBytes; }
  int64_t getDriverAllocations() const { return driverAllocations; }
  int64_t getDriverAllocationsAfterFirstStep() const {
    return driverAllocationsAfterFirstStep;
  }
  int64_t getDriverFrees() const { return driverFrees; }
  int64_t getStepsDone() const { return stepsDone; }
  size_t getIdleBlocks() const { return idle.size(); }

private:
  struct Block {
    uint64_t bytes;
    MemoryKind kind;
  };

  void *allocateFromDriver(uint64_t bytes, MemoryKind kind,
                           OutOfMemory *error) {
    uint64_t freeBytes = 0, totalBytes = 0;
    driver.getMemoryInfo(freeBytes, totalBytes);
    if (bytes > freeBytes) {
      releaseIdle();
      driver.getMemoryInfo(freeBytes, totalBytes);
    }
    if (bytes > freeBytes) {
      if (error)
        *error = OutOfMemory{bytes, freeBytes, totalBytes, heldBytes};
      return nullptr;
    }
    void *ptr = driver.allocate(bytes, kind);
    ++driverAllocations;
    if (stepsDone > 0)
      ++driverAllocationsAfterFirstStep;
    heldBytes += bytes;
    peakHeldBytes = std::max(peakHeldBytes, heldBytes);
    return ptr;
  }

  BlockDriver &driver;
  /// Blocks handed out, with their rounded sizes.
  std::unordered_map<void *, Block> live;
  /// Idle blocks by kind and rounded size.
  std::multimap<std::pair<int, uint64_t>, void *> idle;
  uint64_t liveBytes = 0, peakLiveBytes = 0;
  /// Bytes obtained from the driver and not returned (live and idle).
  uint64_t heldBytes = 0, peakHeldBytes = 0;
  int64_t driverAllocations = 0, driverAllocationsAfterFirstStep = 0;
  int64_t driverFrees = 0;
  int64_t stepsDone = 0;
};

} // namespace gpu
} // namespace tofu

#endif // TOFU_RUNTIME_BLOCKCACHE_H
