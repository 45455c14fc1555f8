//===- GpuCollectivesTest.cpp - The GPU collectives on one rank -----------===//
//
// Runs each GPU collective of the CUDA runtime (Collectives.cpp) on a job of
// one rank, on device buffers with strided layouts, and checks the result
// on the host: NCCL's setup (the id, the world communicator, the split
// groups), the copy kernel's packing and unpacking (its element mapping is
// CopyParts.h's, tested on the host by FetchPlanTest), the part tables and
// the stream order. One rank is what a one-GPU machine runs; the data
// move between NCCL ranks needs several GPUs (scripts/gpu-check.sh
// --multi). Two in-process workers on the one GPU (runtime/cpu/Workers.h)
// move data between their streams without NCCL: the last test.
//
// The CUDA runtime is loaded at run time (TOFU_CUDA_RUNTIME, default the
// build's), with the CPU runtime and MPI that it loads, so that the test
// builds and is listed without a GPU (and without starting MPI's
// transports, which an instrumented build cannot); without a GPU, a driver
// or the collectives every test is skipped with the reason.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/TofuCudaRuntime.h"
#include "tofu/Runtime/TofuRuntime.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

namespace {

/// A ranked memref descriptor of rank 2, as MLIR passes it.
struct Descriptor2 {
  void *allocated = nullptr;
  void *aligned = nullptr;
  int64_t offset = 0;
  int64_t sizes[2] = {0, 0};
  int64_t strides[2] = {0, 0};
};

/// A ranked memref descriptor of rank 1.
struct Descriptor1 {
  void *allocated = nullptr;
  void *aligned = nullptr;
  int64_t offset = 0;
  int64_t sizes[1] = {0};
  int64_t strides[1] = {0};
};

using Moves = void (*)(TofuUnrankedMemRef *, TofuUnrankedMemRef *,
                       TofuUnrankedMemRef *, int64_t, int64_t, int64_t);
using ToAll = void (*)(TofuUnrankedMemRef *, TofuUnrankedMemRef *,
                       TofuUnrankedMemRef *, int64_t, int64_t, int64_t,
                       int64_t);
using Fetch = void (*)(TofuUnrankedMemRef *, TofuUnrankedMemRef *,
                       TofuUnrankedMemRef *, TofuUnrankedMemRef *, int64_t);
using Scatter = void (*)(TofuUnrankedMemRef *, TofuUnrankedMemRef *,
                         TofuUnrankedMemRef *, int64_t, int64_t, int64_t,
                         int64_t);

/// The CUDA runtime's entry points that the tests call.
struct Runtime {
  std::string skip;
  int32_t (*probe)(char *, int64_t) = nullptr;
  void (*init)(int64_t) = nullptr;
  void *(*alloc)(uint64_t, void *, int8_t) = nullptr;
  void (*free)(void *, void *) = nullptr;
  void (*memcpy)(void *, void *, size_t, void *) = nullptr;
  void *(*stream)() = nullptr;
  void (*synchronize)(void *) = nullptr;
  Moves allGather = nullptr;
  ToAll allToAll = nullptr;
  Fetch fetch = nullptr;
  Scatter reduceScatter = nullptr;
  Moves allReduce = nullptr;
  void (*workers)(int64_t, void (*)(void *), void *) = nullptr;
  int64_t (*rank)() = nullptr;
};

const Runtime &getRuntime() {
  static Runtime *runtime = [] {
    auto *r = new Runtime();
    const char *path = std::getenv("TOFU_CUDA_RUNTIME");
    void *handle = dlopen(path ? path : TOFU_CUDA_RUNTIME_PATH, RTLD_NOW);
    if (!handle) {
      r->skip = std::string("cannot load the CUDA runtime: ") + dlerror();
      return r;
    }
    auto find = [&](auto &function, const char *name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
          dlsym(handle, name));
      if (!function && r->skip.empty())
        r->skip = std::string("the CUDA runtime has no ") + name;
    };
    int32_t (*has)() = nullptr;
    find(has, "tofu_gpu_has_collectives");
    find(r->probe, "tofu_gpu_probe");
    // The CPU runtime's, loaded with the CUDA runtime: it starts MPI, a
    // job of one rank.
    find(r->init, "tofu_init");
    find(r->alloc, "mgpuMemAlloc");
    find(r->free, "mgpuMemFree");
    find(r->memcpy, "mgpuMemcpy");
    find(r->stream, "mgpuStreamCreate");
    find(r->synchronize, "mgpuStreamSynchronize");
    find(r->allGather, "_mlir_ciface_tofu_gpu_all_gather");
    find(r->allToAll, "_mlir_ciface_tofu_gpu_all_to_all");
    find(r->fetch, "_mlir_ciface_tofu_gpu_fetch");
    find(r->reduceScatter, "_mlir_ciface_tofu_gpu_reduce_scatter");
    find(r->allReduce, "_mlir_ciface_tofu_gpu_all_reduce");
    find(r->workers, "tofu_workers_run");
    find(r->rank, "tofu_rank");
    if (!r->skip.empty())
      return r;
    if (!(has() & TOFU_GPU_COLLECTIVES_NCCL)) {
      r->skip = "this build has no NCCL collectives";
      return r;
    }
    char why[256] = "";
    if (r->probe(why, sizeof(why)) < 1)
      r->skip = std::string("no usable GPU: ") + why;
    return r;
  }();
  return *runtime;
}

class GpuCollectivesTest : public ::testing::Test {
protected:
  void SetUp() override {
    const Runtime &r = getRuntime();
    if (!r.skip.empty())
      GTEST_SKIP() << r.skip;
    r.init(1);
  }

  /// A device copy of `values`, freed at the end of the test.
  float *upload(const std::vector<float> &values) {
    const Runtime &r = getRuntime();
    void *stream = r.stream();
    auto *device = static_cast<float *>(
        r.alloc(values.size() * sizeof(float), stream, /*isHostShared=*/0));
    r.memcpy(device, const_cast<float *>(values.data()),
             values.size() * sizeof(float), stream);
    r.synchronize(stream);
    buffers.push_back(device);
    return device;
  }

  /// `count` floats of a device buffer, after the queued work.
  std::vector<float> download(const float *device, size_t count) {
    const Runtime &r = getRuntime();
    void *stream = r.stream();
    std::vector<float> values(count);
    r.memcpy(values.data(), const_cast<float *>(device),
             count * sizeof(float), stream);
    r.synchronize(stream);
    return values;
  }

  void TearDown() override {
    const Runtime &r = getRuntime();
    if (!r.skip.empty())
      return;
    for (float *b : buffers)
      r.free(b, r.stream());
  }

  std::vector<float *> buffers;
};

/// A rank-2 view of `data` with `sizes` and `strides`.
Descriptor2 view2(float *data, int64_t rows, int64_t columns,
                  int64_t rowStride, int64_t columnStride,
                  int64_t offset = 0) {
  Descriptor2 d;
  d.allocated = d.aligned = data;
  d.offset = offset;
  d.sizes[0] = rows;
  d.sizes[1] = columns;
  d.strides[0] = rowStride;
  d.strides[1] = columnStride;
  return d;
}

/// A host i64 vector as a rank-1 descriptor.
Descriptor1 ints(std::vector<int64_t> &values) {
  Descriptor1 d;
  d.allocated = d.aligned = values.data();
  d.sizes[0] = int64_t(values.size());
  d.strides[0] = 1;
  return d;
}

std::vector<float> iota(size_t n) {
  std::vector<float> v(n);
  std::iota(v.begin(), v.end(), 1.0f);
  return v;
}

// A 4x6 tile stored column-major (a transposed view) gathered by a group
// of one: the result is the tile in row-major order, packed by the copy
// kernel.
TEST_F(GpuCollectivesTest, AllGatherPacksAStridedTile) {
  std::vector<float> host = iota(24);
  float *in = upload(host);
  float *out = upload(std::vector<float>(24, -1.0f));
  Descriptor2 inView = view2(in, 4, 6, 1, 4), outView = view2(out, 4, 6, 6, 1);
  std::vector<int64_t> grid{1};
  Descriptor1 gridView = ints(grid);
  TofuUnrankedMemRef a{2, &inView}, b{2, &outView}, g{1, &gridView};
  getRuntime().allGather(&a, &b, &g, /*axes=*/1, /*dim=*/0, 4);
  std::vector<float> result = download(out, 24);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j)
      EXPECT_EQ(result[i * 6 + j], host[j * 4 + i]) << i << "," << j;
}

// A fetch on one rank of the middle 2x3 box of a 4x6 tile with a row
// padding of two: the copy kernel reads it straight into the result.
TEST_F(GpuCollectivesTest, FetchCopiesTheWantedBox) {
  std::vector<float> host = iota(32);
  float *in = upload(host);
  float *out = upload(std::vector<float>(6, -1.0f));
  Descriptor2 inView = view2(in, 4, 6, 8, 1), outView = view2(out, 2, 3, 3, 1);
  std::vector<int64_t> held{0, 0}, wanted{1, 2};
  Descriptor1 heldView = ints(held), wantedView = ints(wanted);
  TofuUnrankedMemRef a{2, &inView}, b{2, &outView}, h{1, &heldView},
      w{1, &wantedView};
  getRuntime().fetch(&a, &b, &h, &w, 4);
  std::vector<float> result = download(out, 6);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(result[i * 3 + j], host[(i + 1) * 8 + (j + 2)])
          << i << "," << j;
}

// An all-to-all of a group of one moves the tile to its place in the
// result, a sum reduce-scatter and an all-reduce of a group of one copy
// it: through NCCL and the kernel, from a view at an offset.
TEST_F(GpuCollectivesTest, GroupsOfOneCopy) {
  std::vector<float> host = iota(24);
  float *in = upload(host);
  std::vector<int64_t> grid{1};
  Descriptor1 gridView = ints(grid);
  TofuUnrankedMemRef g{1, &gridView};
  // The 3x4 view at offset 2 with row stride 5: elements 2 + 5i + j.
  Descriptor2 inView = view2(in, 3, 4, 5, 1, /*offset=*/2);
  TofuUnrankedMemRef a{2, &inView};
  auto expect = [&](const std::vector<float> &result) {
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 4; ++j)
        EXPECT_EQ(result[i * 4 + j], host[2 + 5 * i + j]) << i << "," << j;
  };
  float *toAll = upload(std::vector<float>(12, -1.0f));
  Descriptor2 toAllView = view2(toAll, 3, 4, 4, 1);
  TofuUnrankedMemRef b{2, &toAllView};
  getRuntime().allToAll(&a, &b, &g, 1, /*split=*/1, /*concat=*/0, 4);
  expect(download(toAll, 12));
  float *scattered = upload(std::vector<float>(12, -1.0f));
  Descriptor2 scatteredView = view2(scattered, 3, 4, 4, 1);
  TofuUnrankedMemRef c{2, &scatteredView};
  getRuntime().reduceScatter(&a, &c, &g, /*axis=*/0, /*dim=*/0, TOFU_SUM,
                             TOFU_F32);
  expect(download(scattered, 12));
  float *reduced = upload(std::vector<float>(12, -1.0f));
  Descriptor2 reducedView = view2(reduced, 3, 4, 4, 1);
  TofuUnrankedMemRef d{2, &reducedView};
  getRuntime().allReduce(&a, &d, &g, 1, TOFU_SUM, TOFU_F32);
  expect(download(reduced, 12));
}

// Two in-process workers on the one GPU, each on its own stream, run an
// all-gather of column-major tiles, a sum reduce-scatter, a max all-reduce
// into its own input and a fetch across the two tiles: the copy and
// reduction kernels read the peer's tile in place, after the events that
// order the two streams. Each worker checks its results on the host.
TEST_F(GpuCollectivesTest, TwoWorkersOnOneGpu) {
  static std::atomic<int> wrong{0}, done{0};
  wrong = 0;
  done = 0;
  getRuntime().workers(
      2,
      [](void *) {
        const Runtime &r = getRuntime();
        r.init(2);
        int me = int(r.rank());
        void *stream = r.stream();
        auto upload = [&](const std::vector<float> &values) {
          auto *device = static_cast<float *>(
              r.alloc(values.size() * sizeof(float), stream, 0));
          r.memcpy(device, const_cast<float *>(values.data()),
                   values.size() * sizeof(float), stream);
          return device;
        };
        auto download = [&](float *device, size_t count) {
          std::vector<float> values(count);
          r.memcpy(values.data(), device, count * sizeof(float), stream);
          r.synchronize(stream);
          r.free(device, stream);
          return values;
        };
        auto check = [&](bool ok) { wrong += !ok; };
        std::vector<int64_t> grid{2};
        Descriptor1 gridView = ints(grid);
        TofuUnrankedMemRef g{1, &gridView};
        // Tile (i, j) = 100 me + 4 j + i, stored column-major (3x4).
        std::vector<float> tile(12);
        for (int i = 0; i < 3; ++i)
          for (int j = 0; j < 4; ++j)
            tile[j * 3 + i] = float(100 * me + 4 * j + i);
        float *in = upload(tile);
        Descriptor2 inView = view2(in, 3, 4, 1, 3);
        TofuUnrankedMemRef a{2, &inView};
        float *gathered = upload(std::vector<float>(24, -1.0f));
        Descriptor2 gatheredView = view2(gathered, 6, 4, 4, 1);
        TofuUnrankedMemRef b{2, &gatheredView};
        r.allGather(&a, &b, &g, 1, /*dim=*/0, 4);
        std::vector<float> result = download(gathered, 24);
        for (int i = 0; i < 6; ++i)
          for (int j = 0; j < 4; ++j)
            check(result[i * 4 + j] == float(100 * (i / 3) + 4 * j + i % 3));
        // Sum reduce-scatter of the 6x4 row-major ramp times (me + 1):
        // rows 3 me .. 3 me + 2, times 3.
        std::vector<float> ramp(24);
        for (int k = 0; k < 24; ++k)
          ramp[k] = float((me + 1) * k);
        float *full = upload(ramp);
        Descriptor2 fullView = view2(full, 6, 4, 4, 1);
        TofuUnrankedMemRef c{2, &fullView};
        float *part = upload(std::vector<float>(12, -1.0f));
        Descriptor2 partView = view2(part, 3, 4, 4, 1);
        TofuUnrankedMemRef d{2, &partView};
        r.reduceScatter(&c, &d, &g, /*axis=*/0, /*dim=*/0, TOFU_SUM, TOFU_F32);
        result = download(part, 12);
        for (int k = 0; k < 12; ++k)
          check(result[k] == float(3 * (12 * me + k)));
        // Max all-reduce in place: the result is the input buffer.
        r.allReduce(&c, &c, &g, 1, TOFU_MAX, TOFU_F32);
        result = download(full, 24);
        for (int k = 0; k < 24; ++k)
          check(result[k] == float(2 * k));
        // Fetch: worker w holds rows 2w, 2w + 1 of a 4x3 tensor (element
        // (i, j) = 10 i + j); both want rows 1 and 2.
        std::vector<float> held(6);
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 3; ++j)
            held[i * 3 + j] = float(10 * (2 * me + i) + j);
        float *heldTile = upload(held);
        float *wanted = upload(std::vector<float>(6, -1.0f));
        Descriptor2 heldView = view2(heldTile, 2, 3, 3, 1),
                    wantedView = view2(wanted, 2, 3, 3, 1);
        std::vector<int64_t> heldOffsets{0, 0, 2, 0}, wantedOffsets{1, 0, 1, 0};
        Descriptor1 ho = ints(heldOffsets), wo = ints(wantedOffsets);
        TofuUnrankedMemRef e{2, &heldView}, f{2, &wantedView}, h{1, &ho},
            w{1, &wo};
        r.fetch(&e, &f, &h, &w, 4);
        result = download(wanted, 6);
        for (int i = 0; i < 2; ++i)
          for (int j = 0; j < 3; ++j)
            check(result[i * 3 + j] == float(10 * (i + 1) + j));
        r.synchronize(stream);
        r.free(in, stream);
        r.free(heldTile, stream);
        ++done;
      },
      nullptr);
  EXPECT_EQ(done.load(), 2);
  EXPECT_EQ(wrong.load(), 0);
}

} // namespace
