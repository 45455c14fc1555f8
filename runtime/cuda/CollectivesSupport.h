//===- CollectivesSupport.h - What the GPU collectives share ----*- C++ -*-===//
//
// The pieces that the in-process workers' collectives (Collectives.cpp) and
// the NCCL collectives (NcclCollectives.cpp) share: stopping with a
// message, the calling rank's stream, staging buffers from the CUDA
// runtime's cache and launches of the copy and reduction kernels
// (MultiFetch.cu). Internal to the CUDA runtime.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CUDA_COLLECTIVESSUPPORT_H
#define TOFU_RUNTIME_CUDA_COLLECTIVESSUPPORT_H

#include "../cpu/RuntimeSupport.h"
#include "tofu/Runtime/CopyParts.h"
#include "tofu/Runtime/TofuCudaRuntime.h"

#include <cuda.h>

#include <cstdint>
#include <vector>

namespace tofu {
namespace runtime {
namespace collectives {

/// Reports a failed call and stops the job (every rank under mpiexec).
[[noreturn]] void stop(const char *call, const char *why);

#define TOFU_CU_CHECK(call)                                                    \
  do {                                                                         \
    CUresult result_ = (call);                                                 \
    if (result_ != CUDA_SUCCESS) {                                             \
      const char *name_ = nullptr;                                             \
      if (cuGetErrorName(result_, &name_) != CUDA_SUCCESS)                     \
        name_ = "unknown CUresult";                                            \
      stop(#call, name_);                                                      \
    }                                                                          \
  } while (0)

/// The kernel `name` of the fatbin built from MultiFetch.cu (the copy and
/// reduction kernels, the call trace's checksum) in the context that is
/// current (the calling rank's device: in-process workers may run on
/// several), loaded there on first use.
CUfunction getFatbinKernel(const char *name);

/// The calling rank's stream; the call also makes its context current.
inline CUstream getStream() {
  return static_cast<CUstream>(mgpuStreamCreate());
}

/// A device buffer from the CUDA runtime's cache, back in stream order.
struct Staging {
  char *data = nullptr;
  explicit Staging(int64_t bytes)
      : data(static_cast<char *>(
            mgpuMemAlloc(uint64_t(bytes), getStream(), /*isHostShared=*/0))) {}
  ~Staging() { mgpuMemFree(data, getStream()); }
  Staging(const Staging &) = delete;
  Staging &operator=(const Staging &) = delete;
};

/// A launch of the copy kernel, built part by part.
class Copies {
public:
  explicit Copies(int64_t elementBytes) : elementBytes(elementBytes) {
    if (elementBytes != 1 && elementBytes != 2 && elementBytes != 4 &&
        elementBytes != 8)
      stop("the copy kernel", "elements must have 1, 2, 4 or 8 bytes");
  }

  /// Copies the box of `sizes` at `fromLo` in `from` to `toLo` in `to`.
  void add(const View &from, const std::vector<int64_t> &fromLo, const View &to,
           const std::vector<int64_t> &toLo,
           const std::vector<int64_t> &sizes) {
    copy::Part part;
    if (!copy::makePart(getAddress(from, fromLo), from.strides,
                        getAddress(to, toLo), to.strides, sizes, part))
      stop("the copy kernel", "a tile has more than 8 dimensions");
    parts.push_back(part);
  }

  /// Adds parts made elsewhere (the workers' plans).
  void addAll(const std::vector<copy::Part> &more) {
    parts.insert(parts.end(), more.begin(), more.end());
  }

  /// Queues the kernel on the stream (nothing when there is nothing to
  /// copy).
  void launch();

private:
  int64_t elementBytes;
  std::vector<copy::Part> parts;
};

/// Queues the reduction kernel on a reduction's parts (one per group
/// member, all to one target: workers::planReduction).
void launchReduction(const std::vector<copy::Part> &parts, int64_t kind,
                     int64_t type);

// One process per GPU (NcclCollectives.cpp; in a build without NCCL they
// stop with the reason): the collectives of Collectives.cpp's entry points
// outside a team of in-process workers, on the shapes those checked.
void ncclAllGatherTiles(const View &in, const View &out,
                        const std::vector<int64_t> &grid, int64_t axes,
                        int64_t dim);
void ncclReduceScatterTiles(const View &in, const View &out,
                            const std::vector<int64_t> &grid, int64_t axis,
                            int64_t dim, int64_t kind, int64_t type);
void ncclAllReduceTiles(const View &in, const View &out,
                        const std::vector<int64_t> &grid, int64_t axes,
                        int64_t kind, int64_t type);
void ncclAllToAllTiles(const View &in, const View &out,
                       const std::vector<int64_t> &grid, int64_t axes,
                       int64_t splitDim, int64_t concatDim);
void ncclFetchTiles(const View &in, const View &out,
                    const std::vector<int64_t> &heldOffsets,
                    const std::vector<int64_t> &wantedOffsets);

} // namespace collectives
} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CUDA_COLLECTIVESSUPPORT_H
