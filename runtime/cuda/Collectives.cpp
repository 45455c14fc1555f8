//===- Collectives.cpp - The GPU collectives ------------------------------===//
//
// Implements the collectives of include/tofu/Runtime/TofuCudaRuntime.h: the
// calls of convert-tofu-to-mpi{runtime=gpu}, with the arguments of the MPI
// runtime's (runtime/cpu/TofuRuntime.cpp) on device buffers.
//
// - In-process workers (`tofu-run --gpu --workers K`, runtime/cpu/Workers.h,
//   each on its device of WorkerDevices.h) use no NCCL: each collective is
//   the workers' plan of copy parts (the CPU workers' tables) run by the
//   copy or the reduction kernel (MultiFetch.cu) on the worker's stream,
//   reading the peers' tiles in place. Events order it after the peers'
//   streams have produced their inputs, and the worker's later work after
//   the peers' reads of its own input; nothing waits for the whole device.
// - One process per GPU under mpiexec goes through NCCL
//   (NcclCollectives.cpp), in a build that has it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/TofuCudaRuntime.h"
#include "tofu/Runtime/TofuRuntime.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef TOFU_HAVE_GPU_WORKERS

// Without the copy kernel (nvcc) or MPI the entry points exist, so that
// every lowered step links, and stop the process with the reason.
#define TOFU_NO_COLLECTIVES(name, ...)                                         \
  extern "C" void _mlir_ciface_##name(__VA_ARGS__) {                           \
    std::fprintf(stderr,                                                       \
                 "tofu gpu collectives: " #name " failed: this build has "     \
                 "no GPU collectives (see docs/gpu.md: the CUDA runtime is "   \
                 "built with them where CMake finds nvcc and MPI)\n");         \
    std::abort();                                                              \
  }
#define TOFU_NO_COLLECTIVES_MOVES(suffix)                                      \
  TOFU_NO_COLLECTIVES(tofu_gpu_fetch##suffix, TofuUnrankedMemRef *,            \
                      TofuUnrankedMemRef *, TofuUnrankedMemRef *,              \
                      TofuUnrankedMemRef *, int64_t)                           \
  TOFU_NO_COLLECTIVES(tofu_gpu_all_gather##suffix, TofuUnrankedMemRef *,       \
                      TofuUnrankedMemRef *, TofuUnrankedMemRef *, int64_t,     \
                      int64_t, int64_t)                                        \
  TOFU_NO_COLLECTIVES(tofu_gpu_all_to_all##suffix, TofuUnrankedMemRef *,       \
                      TofuUnrankedMemRef *, TofuUnrankedMemRef *, int64_t,     \
                      int64_t, int64_t, int64_t)
TOFU_NO_COLLECTIVES_MOVES()
TOFU_NO_COLLECTIVES_MOVES(_f64)
TOFU_NO_COLLECTIVES_MOVES(_i32)
TOFU_NO_COLLECTIVES_MOVES(_i64)
TOFU_NO_COLLECTIVES(tofu_gpu_all_reduce, TofuUnrankedMemRef *,
                    TofuUnrankedMemRef *, TofuUnrankedMemRef *, int64_t,
                    int64_t, int64_t)
TOFU_NO_COLLECTIVES(tofu_gpu_reduce_scatter, TofuUnrankedMemRef *,
                    TofuUnrankedMemRef *, TofuUnrankedMemRef *, int64_t,
                    int64_t, int64_t, int64_t)
#undef TOFU_NO_COLLECTIVES_MOVES
#undef TOFU_NO_COLLECTIVES

extern "C" int32_t tofu_gpu_has_collectives(void) { return 0; }

#else // TOFU_HAVE_GPU_WORKERS

#include "CollectivesSupport.h"

#include "../cpu/Workers.h"
#include "tofu/Runtime/CopyParts.h"

#include <mpi.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <utility>

/// The copy kernel's fatbin (MultiFetch.cu through nvcc, embedded by
/// cmake/EmbedBinary.cmake).
extern "C" const unsigned char tofu_copy_parts_fatbin[];

using namespace tofu::runtime::collectives;
using tofu::runtime::checkShapes;
using tofu::runtime::getAllReduceBytes;
using tofu::runtime::getDenseView;
using tofu::runtime::getGatherBytes;
using tofu::runtime::getInts;
using tofu::runtime::getReduceScatterBytes;
using tofu::runtime::getView;
using tofu::runtime::View;
namespace copy = tofu::copy;

CUfunction tofu::runtime::collectives::getFatbinKernel(const char *name) {
  static std::mutex mutex;
  static std::map<std::pair<CUdevice, std::string>, CUfunction> loaded;
  static std::map<CUdevice, CUmodule> modules;
  CUdevice device = 0;
  TOFU_CU_CHECK(cuCtxGetDevice(&device));
  std::lock_guard<std::mutex> lock(mutex);
  CUfunction &kernel = loaded[{device, name}];
  if (!kernel) {
    CUmodule &module = modules[device];
    if (!module)
      TOFU_CU_CHECK(cuModuleLoadData(&module, tofu_copy_parts_fatbin));
    TOFU_CU_CHECK(cuModuleGetFunction(&kernel, module, name));
  }
  return kernel;
}

void tofu::runtime::collectives::stop(const char *call, const char *why) {
  std::fprintf(stderr, "tofu gpu collectives: %s failed: %s\n", call, why);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Abort(MPI_COMM_WORLD, 1);
  std::abort();
}

namespace {

/// Uploads a part table to a staging buffer, in stream order.
void uploadParts(const std::vector<copy::Part> &parts, Staging &table) {
  // From pageable memory: the driver has read `parts` when this returns.
  TOFU_CU_CHECK(
      cuMemcpyHtoDAsync(reinterpret_cast<CUdeviceptr>(table.data), parts.data(),
                        parts.size() * sizeof(copy::Part), getStream()));
}

/// The grid of a grid-stride launch over `total` elements.
unsigned getBlocks(long long total) {
  return unsigned(std::min<long long>((total + 255) / 256, 4096));
}

} // namespace

void tofu::runtime::collectives::Copies::launch() {
  long long total = copy::numberParts(parts);
  if (total == 0)
    return;
  Staging table(int64_t(parts.size() * sizeof(copy::Part)));
  uploadParts(parts, table);
  void *tableArg = table.data;
  int count = int(parts.size());
  int bytes = int(elementBytes);
  void *args[] = {&tableArg, &count, &total, &bytes};
  CUstream stream = getStream();
  TOFU_CU_CHECK(cuLaunchKernel(getFatbinKernel("tofu_copy_parts"),
                               getBlocks(total), 1, 1, 256, 1, 1, 0, stream,
                               args, nullptr));
}

void tofu::runtime::collectives::launchReduction(
    const std::vector<copy::Part> &parts, int64_t kind, int64_t type) {
  long long total = copy::getVolume(parts[0]);
  if (total == 0)
    return;
  if (kind < TOFU_SUM || kind > TOFU_PROD)
    stop("the reduction kernel", "unsupported reduction");
  Staging table(int64_t(parts.size() * sizeof(copy::Part)));
  uploadParts(parts, table);
  void *tableArg = table.data;
  int count = int(parts.size());
  int typeArg = int(type), kindArg = int(kind);
  void *args[] = {&tableArg, &count, &total, &typeArg, &kindArg};
  CUstream stream = getStream();
  TOFU_CU_CHECK(cuLaunchKernel(getFatbinKernel("tofu_reduce_parts"),
                               getBlocks(total), 1, 1, 256, 1, 1, 0, stream,
                               args, nullptr));
}

namespace {

//===----------------------------------------------------------------------===//
// In-process workers
//===----------------------------------------------------------------------===//

namespace workers = tofu::runtime::workers;

/// What a worker publishes for a collective: its input and its events.
struct Published {
  View in;
  CUevent ready = nullptr, done = nullptr;
};

/// A worker's events: its input is ready; its slab of an all-reduce is
/// reduced; its reads are done.
struct WorkerEvents {
  CUevent ready = nullptr, reduced = nullptr, done = nullptr;
};

WorkerEvents &getWorkerEvents() {
  thread_local WorkerEvents events;
  if (!events.ready) {
    getStream();
    for (CUevent *event : {&events.ready, &events.reduced, &events.done})
      TOFU_CU_CHECK(cuEventCreate(event, CU_EVENT_DISABLE_TIMING));
  }
  return events;
}

/// Where a worker's collective writes its result: `out`, or a staging
/// buffer when `out` overlaps the worker's own input, which the peers read;
/// finish() then queues the copy to `out` (after the waits for the readers).
struct StagedResult {
  StagedResult(const View &in, const View &out)
      : out(out),
        staging(workers::overlaps(in, out) ? out.volume() * out.elementBytes
                                           : 0),
        view(staging.data
                 ? getDenseView(staging.data, out.sizes, out.elementBytes)
                 : out) {}
  void finish() {
    if (!staging.data)
      return;
    std::vector<int64_t> zero(out.sizes.size(), 0);
    Copies copies(out.elementBytes);
    copies.add(view, zero, out, zero, out.sizes);
    copies.launch();
  }
  const View &out;
  Staging staging;
  View view;
};

/// Makes `stream` wait for each of `events`.
void waitForAll(CUstream stream, const std::vector<CUevent> &events) {
  for (CUevent event : events)
    TOFU_CU_CHECK(cuStreamWaitEvent(stream, event, 0));
}

/// One collective of this worker, reading the inputs of the workers in
/// `from`: its stream waits for theirs to have produced them, runs the
/// kernel that `launch` queues on the parts that `plan` makes of them (into
/// `out`, or into a staging buffer when `out` overlaps this worker's own
/// input, which the peers read), and keeps its later work behind their
/// reads of its input. The host only meets the team at two barriers.
template <typename Plan, typename Launch>
void runOnWorkers(const View &in, const View &out, const std::vector<int> &from,
                  Plan plan, Launch launch) {
  CUstream stream = getStream();
  WorkerEvents &events = getWorkerEvents();
  TOFU_CU_CHECK(cuEventRecord(events.ready, stream));
  StagedResult result(in, out);
  Published mine{in, events.ready, events.done};
  workers::publish(&mine);
  int me = workers::rank();
  std::vector<View> inputs;
  std::vector<CUevent> readersDone;
  for (int r : from) {
    const auto &peer = *static_cast<const Published *>(workers::peer(r));
    inputs.push_back(peer.in);
    if (r == me)
      continue;
    TOFU_CU_CHECK(cuStreamWaitEvent(stream, peer.ready, 0));
    readersDone.push_back(peer.done);
  }
  launch(plan(inputs, result.view));
  TOFU_CU_CHECK(cuEventRecord(events.done, stream));
  workers::barrier();
  waitForAll(stream, readersDone);
  result.finish();
}

/// Queues a launch of the copy kernel on `parts`.
void launchCopies(const std::vector<copy::Part> &parts, int64_t elementBytes) {
  Copies copies(elementBytes);
  copies.addAll(parts);
  copies.launch();
}

void workersAllGather(const View &in, const View &out,
                      const std::vector<int64_t> &grid, int64_t axes,
                      int64_t dim) {
  const workers::Group &g = workers::getGroup(grid, axes);
  checkShapes(in, out, dim, -1, g.size(), "tofu_gpu_all_gather");
  runOnWorkers(
      in, out, g.members,
      [&](const std::vector<View> &inputs, const View &target) {
        return workers::planAllGather(g, inputs, target, dim);
      },
      [&](const std::vector<copy::Part> &parts) {
        launchCopies(parts, in.elementBytes);
      });
  tofu_count_received_bytes(
      TOFU_COUNT_ALL_GATHER,
      getGatherBytes(g.size(), in.volume(), in.elementBytes));
}

void workersAllToAll(const View &in, const View &out,
                     const std::vector<int64_t> &grid, int64_t axes,
                     int64_t splitDim, int64_t concatDim) {
  const workers::Group &g = workers::getGroup(grid, axes);
  checkShapes(in, out, concatDim, splitDim, g.size(), "tofu_gpu_all_to_all");
  runOnWorkers(
      in, out, g.members,
      [&](const std::vector<View> &inputs, const View &target) {
        return workers::planAllToAll(g, inputs, target, splitDim, concatDim);
      },
      [&](const std::vector<copy::Part> &parts) {
        launchCopies(parts, in.elementBytes);
      });
  tofu_count_received_bytes(
      TOFU_COUNT_ALL_TO_ALL,
      getGatherBytes(g.size(), out.volume() / g.size(), in.elementBytes));
}

/// The reduction over the group of the box of out's shape at `lo` in each
/// member's input.
void workersReduce(const workers::Group &g, const View &in, const View &out,
                   const std::vector<int64_t> &lo, int64_t kind, int64_t type) {
  runOnWorkers(
      in, out, g.members,
      [&](const std::vector<View> &inputs, const View &target) {
        return workers::planReduction(inputs, lo, target);
      },
      [&](const std::vector<copy::Part> &parts) {
        launchReduction(parts, kind, type);
      });
}

/// An all-reduce whose reduction is spread over the group (Workers.h,
/// Slab): each member's stream reduces its slab into its result, then,
/// after the peers' `reduced` events, copies their slabs from their
/// results; the peers' `done` events keep its later work behind their
/// reads of its input and its result.
void workersAllReduce(const workers::Group &g, const View &in, const View &out,
                      int64_t kind, int64_t type) {
  workers::Slab slab = workers::getSlab(in.sizes, g.size(), g.me);
  if (slab.dim < 0)
    return workersReduce(g, in, out, std::vector<int64_t>(in.sizes.size(), 0),
                         kind, type);
  CUstream stream = getStream();
  WorkerEvents &events = getWorkerEvents();
  TOFU_CU_CHECK(cuEventRecord(events.ready, stream));
  StagedResult result(in, out);
  struct Operands {
    View in, result;
    CUevent ready, reduced, done;
  } mine{in, result.view, events.ready, events.reduced, events.done};
  workers::publish(&mine);
  std::vector<View> inputs, results;
  std::vector<CUevent> reduced, done;
  for (int r : g.members) {
    const auto &peer = *static_cast<const Operands *>(workers::peer(r));
    inputs.push_back(peer.in);
    results.push_back(peer.result);
    if (r == workers::rank())
      continue;
    TOFU_CU_CHECK(cuStreamWaitEvent(stream, peer.ready, 0));
    reduced.push_back(peer.reduced);
    done.push_back(peer.done);
  }
  std::vector<int64_t> lo = slab.getLo(in.sizes.size());
  launchReduction(
      workers::planReduction(
          inputs, lo,
          workers::getSubview(result.view, lo, slab.getSizes(in.sizes))),
      kind, type);
  TOFU_CU_CHECK(cuEventRecord(events.reduced, stream));
  workers::barrier();
  waitForAll(stream, reduced);
  launchCopies(workers::planSlabGather(g, results, result.view),
               in.elementBytes);
  TOFU_CU_CHECK(cuEventRecord(events.done, stream));
  workers::barrier();
  waitForAll(stream, done);
  result.finish();
}

void workersFetch(const View &in, const View &out,
                  const std::vector<int64_t> &heldOffsets,
                  const std::vector<int64_t> &wantedOffsets) {
  int k = workers::size();
  if (heldOffsets.size() != in.sizes.size() * k ||
      wantedOffsets.size() != out.sizes.size() * k)
    stop("tofu_gpu_fetch", "the offsets do not match the number of ranks");
  int64_t received = 0;
  runOnWorkers(
      in, out, workers::getAllRanks(),
      [&](const std::vector<View> &inputs, const View &target) {
        return workers::planFetch(inputs, target, heldOffsets, wantedOffsets,
                                  received);
      },
      [&](const std::vector<copy::Part> &parts) {
        launchCopies(parts, in.elementBytes);
      });
  tofu_count_received_bytes(TOFU_COUNT_FETCH,
                            double(received) * double(in.elementBytes));
}

} // namespace

#ifndef TOFU_HAVE_NCCL
// One process per GPU needs NCCL; the workers do not.
namespace tofu {
namespace runtime {
namespace collectives {
namespace {
[[noreturn]] void withoutNccl(const char *call) {
  stop(call, "this build has no NCCL, which one process per GPU needs "
             "(see docs/gpu.md: the CUDA runtime is built with it where "
             "CMake finds nccl.h and libnccl; in-process workers, "
             "--workers K, need none)");
}
} // namespace
void ncclAllGatherTiles(const View &, const View &,
                        const std::vector<int64_t> &, int64_t, int64_t) {
  withoutNccl("tofu_gpu_all_gather");
}
void ncclReduceScatterTiles(const View &, const View &,
                            const std::vector<int64_t> &, int64_t, int64_t,
                            int64_t, int64_t) {
  withoutNccl("tofu_gpu_reduce_scatter");
}
void ncclAllReduceTiles(const View &, const View &,
                        const std::vector<int64_t> &, int64_t, int64_t,
                        int64_t) {
  withoutNccl("tofu_gpu_all_reduce");
}
void ncclAllToAllTiles(const View &, const View &, const std::vector<int64_t> &,
                       int64_t, int64_t, int64_t) {
  withoutNccl("tofu_gpu_all_to_all");
}
void ncclFetchTiles(const View &, const View &, const std::vector<int64_t> &,
                    const std::vector<int64_t> &) {
  withoutNccl("tofu_gpu_fetch");
}
} // namespace collectives
} // namespace runtime
} // namespace tofu
#endif // TOFU_HAVE_NCCL

extern "C" {

int32_t tofu_gpu_has_collectives(void) {
#ifdef TOFU_HAVE_NCCL
  return TOFU_GPU_COLLECTIVES_WORKERS | TOFU_GPU_COLLECTIVES_NCCL;
#else
  return TOFU_GPU_COLLECTIVES_WORKERS;
#endif
}

void _mlir_ciface_tofu_gpu_all_gather(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t dim, int64_t elementBytes) {
  View in = getView(src, elementBytes), out = getView(dst, elementBytes);
  if (workers::active())
    return workersAllGather(in, out, getInts(grid), axes, dim);
  ncclAllGatherTiles(in, out, getInts(grid), axes, dim);
}

void _mlir_ciface_tofu_gpu_reduce_scatter(TofuUnrankedMemRef *src,
                                          TofuUnrankedMemRef *dst,
                                          TofuUnrankedMemRef *grid,
                                          int64_t axis, int64_t dim,
                                          int64_t kind, int64_t type) {
  int64_t eb = tofu::runtime::bytesOf(type);
  View in = getView(src, eb), out = getView(dst, eb);
  if (!workers::active())
    return ncclReduceScatterTiles(in, out, getInts(grid), axis, dim, kind,
                                  type);
  const workers::Group &g =
      workers::getGroup(getInts(grid), int64_t(1) << axis);
  checkShapes(out, in, dim, -1, g.size(), "tofu_gpu_reduce_scatter");
  std::vector<int64_t> lo(in.sizes.size(), 0);
  lo[dim] = g.me * out.sizes[dim];
  workersReduce(g, in, out, lo, kind, type);
  tofu_count_received_bytes(TOFU_COUNT_REDUCE_SCATTER,
                            getReduceScatterBytes(g.size(), in.volume(), eb));
}

void _mlir_ciface_tofu_gpu_all_reduce(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t kind, int64_t type) {
  int64_t eb = tofu::runtime::bytesOf(type);
  View in = getView(src, eb), out = getView(dst, eb);
  if (in.sizes != out.sizes)
    stop("tofu_gpu_all_reduce", "the result does not have the input's shape");
  if (!workers::active())
    return ncclAllReduceTiles(in, out, getInts(grid), axes, kind, type);
  const workers::Group &g = workers::getGroup(getInts(grid), axes);
  workersAllReduce(g, in, out, kind, type);
  tofu_count_received_bytes(TOFU_COUNT_ALL_REDUCE,
                            getAllReduceBytes(g.size(), in.volume(), eb));
}

void _mlir_ciface_tofu_gpu_all_to_all(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t splitDim, int64_t concatDim,
                                      int64_t elementBytes) {
  View in = getView(src, elementBytes), out = getView(dst, elementBytes);
  if (workers::active())
    return workersAllToAll(in, out, getInts(grid), axes, splitDim, concatDim);
  ncclAllToAllTiles(in, out, getInts(grid), axes, splitDim, concatDim);
}

void _mlir_ciface_tofu_gpu_fetch(TofuUnrankedMemRef *src,
                                 TofuUnrankedMemRef *dst,
                                 TofuUnrankedMemRef *srcOffsets,
                                 TofuUnrankedMemRef *dstOffsets,
                                 int64_t elementBytes) {
  View in = getView(src, elementBytes), out = getView(dst, elementBytes);
  std::vector<int64_t> heldOffsets = getInts(srcOffsets),
                       wantedOffsets = getInts(dstOffsets);
  if (workers::active())
    return workersFetch(in, out, heldOffsets, wantedOffsets);
  ncclFetchTiles(in, out, heldOffsets, wantedOffsets);
}

// The other element types: a call's unranked buffers name the element
// type, so each has its own declaration; the move is in bytes.
#define TOFU_GPU_MOVES_ALIAS(suffix)                                           \
  void _mlir_ciface_tofu_gpu_fetch_##suffix(                                   \
      TofuUnrankedMemRef *src, TofuUnrankedMemRef *dst,                        \
      TofuUnrankedMemRef *srcOffsets, TofuUnrankedMemRef *dstOffsets,          \
      int64_t elementBytes) {                                                  \
    _mlir_ciface_tofu_gpu_fetch(src, dst, srcOffsets, dstOffsets,              \
                                elementBytes);                                 \
  }                                                                            \
  void _mlir_ciface_tofu_gpu_all_gather_##suffix(                              \
      TofuUnrankedMemRef *src, TofuUnrankedMemRef *dst,                        \
      TofuUnrankedMemRef *grid, int64_t axes, int64_t dim,                     \
      int64_t elementBytes) {                                                  \
    _mlir_ciface_tofu_gpu_all_gather(src, dst, grid, axes, dim, elementBytes); \
  }                                                                            \
  void _mlir_ciface_tofu_gpu_all_to_all_##suffix(                              \
      TofuUnrankedMemRef *src, TofuUnrankedMemRef *dst,                        \
      TofuUnrankedMemRef *grid, int64_t axes, int64_t splitDim,                \
      int64_t concatDim, int64_t elementBytes) {                               \
    _mlir_ciface_tofu_gpu_all_to_all(src, dst, grid, axes, splitDim,           \
                                     concatDim, elementBytes);                 \
  }
TOFU_GPU_MOVES_ALIAS(f64)
TOFU_GPU_MOVES_ALIAS(i32)
TOFU_GPU_MOVES_ALIAS(i64)
#undef TOFU_GPU_MOVES_ALIAS

} // extern "C"

#endif // TOFU_HAVE_GPU_WORKERS
