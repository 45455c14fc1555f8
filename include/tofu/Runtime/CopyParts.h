//===- CopyParts.h - The element mapping of the copy kernel -----*- C++ -*-===//
//
// One launch of the GPU collectives' copy kernel (runtime/cuda/MultiFetch.cu)
// moves a list of parts: each part is a box of elements, read from a
// strided view (on this worker or, through unified addressing, on a peer)
// and written to a strided view. The launch numbers the elements of all
// parts one after the other, in row-major order within each part; element
// i belongs to the last part whose `begin` is at most i.
//
// The arithmetic is here, compiled for the host and, under nvcc, for the
// device, so that the kernel and the host tests
// (unittests/Runtime/FetchPlanTest.cpp, CollectivesOnHost/) compute the
// same mapping. Free of
// CUDA and MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_COPYPARTS_H
#define TOFU_RUNTIME_COPYPARTS_H

#include <stddef.h>
#include <stdint.h>

#include <vector>

#if defined(__CUDACC__)
#define TOFU_HOST_DEVICE __host__ __device__
#else
#define TOFU_HOST_DEVICE
#endif

namespace tofu {
namespace copy {

/// The largest rank of a box.
constexpr int kMaxRank = 8;

/// A box of `sizes`, read from `source` (the address of its first element)
/// with `sourceStrides` and written to `target` with `targetStrides`
/// (strides in elements, as in a memref descriptor).
struct Part {
  const char *source = nullptr;
  char *target = nullptr;
  int64_t sizes[kMaxRank] = {};
  int64_t sourceStrides[kMaxRank] = {};
  int64_t targetStrides[kMaxRank] = {};
  int32_t rank = 0;
  /// The launch's index of the part's first element (the sum of the
  /// volumes of the parts before it).
  int64_t begin = 0;
};

// The host compiler and nvcc must lay a Part out alike: the host uploads
// the table that the kernel reads.
static_assert(sizeof(Part) == 224, "Part's layout is shared with the kernel");

/// The index of the part that holds element `index` of a launch of
/// `count` parts (`begin` increasing, the first one 0): a binary search.
TOFU_HOST_DEVICE inline int findPart(const Part *parts, int count,
                                     int64_t index) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) / 2;
    if (parts[mid].begin <= index)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

/// The element offsets, in the source and in the target, of element
/// `index` of `part` (row-major over its box, the last dimension fastest).
TOFU_HOST_DEVICE inline void locate(const Part &part, int64_t index,
                                    int64_t &sourceOffset,
                                    int64_t &targetOffset) {
  int64_t rest = index - part.begin;
  sourceOffset = 0;
  targetOffset = 0;
  for (int d = part.rank - 1; d >= 0; --d) {
    int64_t coordinate = rest % part.sizes[d];
    rest /= part.sizes[d];
    sourceOffset += coordinate * part.sourceStrides[d];
    targetOffset += coordinate * part.targetStrides[d];
  }
}

/// Copies element `index` of a launch of `count` parts of `elementBytes`
/// (1, 2, 4 or 8) bytes each: what one thread of the kernel does.
TOFU_HOST_DEVICE inline void copyElement(const Part *parts, int count,
                                         int64_t index, int elementBytes) {
  const Part &part = parts[findPart(parts, count, index)];
  int64_t from = 0, to = 0;
  locate(part, index, from, to);
  const char *source = part.source + from * elementBytes;
  char *target = part.target + to * elementBytes;
  switch (elementBytes) {
  case 8:
    *reinterpret_cast<uint64_t *>(target) =
        *reinterpret_cast<const uint64_t *>(source);
    break;
  case 4:
    *reinterpret_cast<uint32_t *>(target) =
        *reinterpret_cast<const uint32_t *>(source);
    break;
  case 2:
    *reinterpret_cast<uint16_t *>(target) =
        *reinterpret_cast<const uint16_t *>(source);
    break;
  default:
    *target = *source;
    break;
  }
}

/// The reductions of reduceElement (TofuRuntime.h's TOFU_SUM .. TOFU_PROD).
enum class Reduction { Sum = 1, Max = 2, Min = 3, Prod = 4 };

template <typename T>
TOFU_HOST_DEVICE inline T combine(T a, T b, Reduction kind) {
  switch (kind) {
  case Reduction::Max:
    return a < b ? b : a;
  case Reduction::Min:
    return b < a ? b : a;
  case Reduction::Prod:
    return a * b;
  default:
    return a + b;
  }
}

/// Element `index` of a reduction over `count` parts of one box (one part
/// per group member, all with part 0's target, each `begin` 0): the
/// members' elements combined in member order into the target. What one
/// thread of the reduction kernel does.
template <typename T>
TOFU_HOST_DEVICE inline void reduceElement(const Part *parts, int count,
                                           int64_t index, Reduction kind) {
  int64_t from = 0, to = 0;
  locate(parts[0], index, from, to);
  T value = reinterpret_cast<const T *>(parts[0].source)[from];
  for (int m = 1; m < count; ++m) {
    int64_t other = 0, unused = 0;
    locate(parts[m], index, other, unused);
    value = combine(value, reinterpret_cast<const T *>(parts[m].source)[other],
                    kind);
  }
  reinterpret_cast<T *>(parts[0].target)[to] = value;
}

/// The row-major strides of a dense box of `sizes`.
inline std::vector<int64_t> getDenseStrides(const std::vector<int64_t> &sizes) {
  std::vector<int64_t> strides(sizes.size(), 1);
  for (size_t d = sizes.size(); d-- > 1;)
    strides[d - 1] = strides[d] * sizes[d];
  return strides;
}

/// A part that copies the box of `sizes` whose first element is at
/// `source` in a view with `sourceStrides` to `target` in a view with
/// `targetStrides`; false when the box has more than kMaxRank dimensions.
inline bool makePart(const char *source,
                     const std::vector<int64_t> &sourceStrides, char *target,
                     const std::vector<int64_t> &targetStrides,
                     const std::vector<int64_t> &sizes, Part &part) {
  if (sizes.size() > size_t(kMaxRank))
    return false;
  part = Part();
  part.source = source;
  part.target = target;
  part.rank = int32_t(sizes.size());
  for (size_t d = 0; d < sizes.size(); ++d) {
    part.sizes[d] = sizes[d];
    part.sourceStrides[d] = sourceStrides[d];
    part.targetStrides[d] = targetStrides[d];
  }
  return true;
}

/// The number of elements of `part`'s box.
inline int64_t getVolume(const Part &part) {
  int64_t n = 1;
  for (int d = 0; d < part.rank; ++d)
    n *= part.sizes[d];
  return n;
}

/// Drops the empty parts of a launch, numbers the others' elements one
/// after the other (`begin`) and returns the launch's element count.
inline int64_t numberParts(std::vector<Part> &parts) {
  std::vector<Part> kept;
  int64_t total = 0;
  for (Part &part : parts) {
    int64_t n = getVolume(part);
    if (n <= 0)
      continue;
    part.begin = total;
    total += n;
    kept.push_back(part);
  }
  parts.swap(kept);
  return total;
}

/// Runs a launch on the host, element by element, as the kernel's threads
/// do (the unit tests).
inline void copyOnHost(const std::vector<Part> &parts, int64_t total,
                       int elementBytes) {
  for (int64_t i = 0; i < total; ++i)
    copyElement(parts.data(), int(parts.size()), i, elementBytes);
}

} // namespace copy
} // namespace tofu

#endif // TOFU_RUNTIME_COPYPARTS_H
