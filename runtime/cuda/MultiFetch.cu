//===- MultiFetch.cu - The copy kernel of the GPU collectives -------------===//
//
// One launch copies a list of boxes between strided views (CopyParts.h):
// packing a tile's chunks for NCCL, unpacking what NCCL received, and the
// MultiFetch of a worker that reads its peers' tiles through unified
// addressing. The reduction kernel combines the same box of every group
// member's tile into the worker's result (an in-process worker's
// reduce-scatter or all-reduce). Every thread handles elements of the
// launch in a grid-stride loop, with the host-tested arithmetic of
// CopyParts.h. Built by nvcc into a fatbin that the CUDA runtime loads
// (runtime/cuda/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/CallTrace.h"
#include "tofu/Runtime/CopyParts.h"

extern "C" __global__ void tofu_copy_parts(const tofu::copy::Part *parts,
                                           int count, long long total,
                                           int elementBytes) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < total; i += stride)
    tofu::copy::copyElement(parts, count, i, elementBytes);
}

template <typename T>
__device__ void reduceParts(const tofu::copy::Part *parts, int count,
                            long long total, int kind) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < total; i += stride)
    tofu::copy::reduceElement<T>(parts, count, i, tofu::copy::Reduction(kind));
}

// `type`: TofuRuntime.h's TOFU_F32, TOFU_F64, TOFU_I32, TOFU_I64 (0 .. 3).
extern "C" __global__ void tofu_reduce_parts(const tofu::copy::Part *parts,
                                             int count, long long total,
                                             int type, int kind) {
  switch (type) {
  case 0:
    return reduceParts<float>(parts, count, total, kind);
  case 1:
    return reduceParts<double>(parts, count, total, kind);
  case 2:
    return reduceParts<int>(parts, count, total, kind);
  default:
    return reduceParts<long long>(parts, count, total, kind);
  }
}

// TOFU_GPU_TRACE: the checksum of a strided f32 view (CallTrace.h), added
// into *sum. Integer sums do not depend on the order of the additions, so
// the result is the host's checksum of the same elements.
extern "C" __global__ void tofu_checksum(const float *first,
                                         tofu::trace::Shape shape,
                                         long long total,
                                         unsigned long long *sum) {
  unsigned long long local = 0;
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < total; i += stride)
    local += tofu::trace::mixElement(
        __float_as_uint(first[tofu::trace::getOffset(shape, i)]), i);
  // Integer sums: the warp's order does not change the result.
  for (int offset = 16; offset > 0; offset /= 2)
    local += __shfl_down_sync(0xffffffffu, local, offset);
  if ((threadIdx.x & 31) == 0)
    atomicAdd(sum, local);
}
