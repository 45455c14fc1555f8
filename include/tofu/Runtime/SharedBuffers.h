//===- SharedBuffers.h - Sizes of the runtime's shared buffers -*- C++ -*-===//
//
// The CPU runtime's collectives through shared memory (runtime/cpu/
// NodeCollectives.h) give each member of a communicator two buffers in
// a window that MPI places in /dev/shm. A rank is a member of a segment
// per communicator it uses (up to 7 on a 2x2x2 grid), and a write past
// the end of a full /dev/shm is a SIGBUS, not an error: a container's
// /dev/shm is often 64 MiB. Header-only and free of MPI, so that the unit
// tests check the arithmetic.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_SHAREDBUFFERS_H
#define TOFU_RUNTIME_SHAREDBUFFERS_H

#include <algorithm>
#include <cstdint>

namespace tofu {
namespace runtime {

/// Segments of every communicator a rank may use, with room to spare.
constexpr int64_t kSharedSegmentsPerNode = 16;

/// The size of each buffer of a segment of `members` members: `wanted`,
/// made smaller where `availableBytes` of shared memory (negative:
/// unknown) hold fewer than kSharedSegmentsPerNode such segments of two
/// buffers per member; a multiple of 64 bytes (buffers start on cache
/// lines), 0 where nothing fits.
inline int64_t getSharedBufferBytes(int64_t wanted, int64_t availableBytes,
                                    int members) {
  int64_t bytes = std::max<int64_t>(wanted, 0);
  if (availableBytes >= 0)
    bytes = std::min(bytes, availableBytes / (kSharedSegmentsPerNode * 2 *
                                              std::max(members, 1)));
  return bytes / 64 * 64;
}

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_SHAREDBUFFERS_H
