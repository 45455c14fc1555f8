//===- MultiFetch.cu - The copy kernel of the GPU collectives -------------===//
//
// One launch copies a list of boxes between strided views (CopyParts.h):
// packing a tile's chunks for NCCL, unpacking what NCCL received, and the
// MultiFetch of a worker that reads its peers' tiles through unified
// addressing. Every thread copies elements of the launch in a grid-stride
// loop, with the host-tested arithmetic of CopyParts.h. Built by nvcc into
// a fatbin that the CUDA runtime loads (runtime/cuda/CMakeLists.txt).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/CopyParts.h"

extern "C" __global__ void tofu_copy_parts(const tofu::copy::Part *parts,
                                           int count, long long total,
                                           int elementBytes) {
  long long stride = (long long)gridDim.x * blockDim.x;
  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
       i < total; i += stride)
    tofu::copy::copyElement(parts, count, i, elementBytes);
}
