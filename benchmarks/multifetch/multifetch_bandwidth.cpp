//===- multifetch_bandwidth.cpp - The copy kernel against cuMemcpy --------===//
//
// On a GPU: the bandwidth of the MultiFetch copy kernel (MultiFetch.cu, the
// kernel that in-process workers run to read their peers' tiles) against
// the driver's copy of the same bytes (cuMemcpyPeerAsync between two
// buffers of the one device, which is what a peer copy is on one GPU):
//
//   build/benchmarks/multifetch/tofu-multifetch-bandwidth [MiB]
//
// Three shapes of the same bytes: one dense box (what an all-gather of
// contiguous tiles reads), the 512 x 512 boxes of a 4-way row and column
// split of a square tile (strided rows), and a transposed read (every
// element from another row). Each is timed with CUDA events over 20
// launches after 3 warm-up ones, and printed as GB/s of bytes copied. A
// benchmark: it asserts nothing about time.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/CopyParts.h"

#include <cuda.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

extern "C" const unsigned char tofu_copy_parts_fatbin[];

namespace {

void check(CUresult result, const char *what) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = nullptr;
  cuGetErrorName(result, &name);
  std::fprintf(stderr, "multifetch-bandwidth: %s failed: %s\n", what,
               name ? name : "unknown CUresult");
  std::exit(result == CUDA_ERROR_NO_DEVICE ? 2 : 1);
}

/// The milliseconds of one of `run`'s launches, the mean of 20 after 3.
template <typename Run> float time(CUstream stream, Run run) {
  for (int i = 0; i < 3; ++i)
    run();
  CUevent start, stop;
  check(cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
  check(cuEventRecord(start, stream), "cuEventRecord");
  for (int i = 0; i < 20; ++i)
    run();
  check(cuEventRecord(stop, stream), "cuEventRecord");
  check(cuEventSynchronize(stop), "cuEventSynchronize");
  float ms = 0;
  check(cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
  return ms / 20;
}

} // namespace

int main(int argc, char **argv) {
  long mib = argc > 1 ? std::atol(argv[1]) : 256;
  check(cuInit(0), "cuInit");
  CUdevice device;
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  char name[128] = "";
  cuDeviceGetName(name, sizeof(name), device);
  CUcontext context;
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  CUmodule module;
  check(cuModuleLoadData(&module, tofu_copy_parts_fatbin), "cuModuleLoadData");
  CUfunction kernel;
  check(cuModuleGetFunction(&kernel, module, "tofu_copy_parts"),
        "cuModuleGetFunction");

  // A square f32 tile of about `mib` MiB, its side a multiple of 2048.
  int64_t side = 2048;
  while ((side + 2048) * (side + 2048) * 4 <= mib * 1048576)
    side += 2048;
  size_t bytes = size_t(side) * side * 4;
  CUdeviceptr from, to, table;
  check(cuMemAlloc(&from, bytes), "cuMemAlloc");
  check(cuMemAlloc(&to, bytes), "cuMemAlloc");
  check(cuMemsetD32(from, 0x3f800000, bytes / 4), "cuMemsetD32");
  check(cuMemAlloc(&table, 64 * sizeof(tofu::copy::Part)), "cuMemAlloc");
  std::printf("device: %s; a %lld x %lld f32 tile, %.1f MiB\n", name,
              (long long)side, (long long)side, bytes / 1048576.0);

  float copyMs = time(stream, [&] {
    check(cuMemcpyPeerAsync(to, context, from, context, bytes, stream),
          "cuMemcpyPeerAsync");
  });
  std::printf("cuMemcpyPeerAsync          %8.3f ms  %7.1f GB/s\n", copyMs,
              bytes / copyMs / 1e6);

  auto launch = [&](std::vector<tofu::copy::Part> parts, const char *what) {
    long long total = tofu::copy::numberParts(parts);
    check(cuMemcpyHtoD(table, parts.data(), parts.size() * sizeof(parts[0])),
          "cuMemcpyHtoD");
    void *tableArg = reinterpret_cast<void *>(table);
    int count = int(parts.size()), elementBytes = 4;
    void *args[] = {&tableArg, &count, &total, &elementBytes};
    unsigned blocks = unsigned(std::min<long long>((total + 255) / 256, 4096));
    float ms = time(stream, [&] {
      check(cuLaunchKernel(kernel, blocks, 1, 1, 256, 1, 1, 0, stream, args,
                           nullptr),
            "cuLaunchKernel");
    });
    std::printf("copy kernel, %-14s %8.3f ms  %7.1f GB/s  (%.2fx the "
                "driver's time)\n",
                what, ms, bytes / ms / 1e6, ms / copyMs);
  };
  auto *source = reinterpret_cast<const char *>(from);
  auto *target = reinterpret_cast<char *>(to);
  tofu::copy::Part part;
  tofu::copy::makePart(source, {1}, target, {1}, {side * side}, part);
  launch({part}, "dense");
  std::vector<tofu::copy::Part> boxes;
  int64_t quarter = side / 4;
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      int64_t at = (i * quarter * side + j * quarter) * 4;
      tofu::copy::makePart(source + at, {side, 1}, target + at, {side, 1},
                           {quarter, quarter}, part);
      boxes.push_back(part);
    }
  launch(boxes, "4x4 boxes");
  tofu::copy::makePart(source, {1, side}, target, {side, 1}, {side, side},
                       part);
  launch({part}, "transposed");
  return 0;
}
