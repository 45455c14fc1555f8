//===- Collectives.cpp - The GPU collectives over NCCL --------------------===//
//
// Implements the collectives of include/tofu/Runtime/TofuCudaRuntime.h for
// one process per GPU under mpiexec: the calls of
// convert-tofu-to-mpi{runtime=gpu}, with the arguments of the MPI runtime's
// (runtime/cpu/TofuRuntime.cpp) on device buffers.
//
// - NCCL moves contiguous buffers. A tile that is not one (a strided view,
//   or chunks that do not follow each other) is packed into a staging
//   buffer, or unpacked from one, by the copy kernel (MultiFetch.cu), whose
//   element mapping CopyParts.h defines and the unit tests check.
// - A fetch executes FetchPlan.h's parts: this rank's parts for each
//   receiver packed one after the other, one grouped ncclSend/ncclRecv per
//   peer, and the received parts unpacked in the same order; the parts it
//   sends itself are copied directly.
// - Everything is queued on the CUDA runtime's one stream; staging buffers
//   come from its caching allocator and go back to it in stream order, so
//   that the host does not wait for the GPU here (an upload of a part
//   table from pageable memory may wait for the driver's staging copy).
// - The bytes each rank receives are counted as the MPI runtime counts
//   them, into its statistics (tofu_count_received_bytes).
// - In-process workers (`tofu-run --gpu --workers K`, runtime/cpu/Workers.h,
//   all on the process's device) use no NCCL: each collective is the
//   workers' plan of copy parts (the CPU workers' tables) run by the copy
//   or the reduction kernel on the worker's stream, reading the peers'
//   tiles in place. Events order it after the peers' streams have produced
//   their inputs, and the worker's later work after the peers' reads of its
//   own input; nothing waits for the whole device.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/CopyParts.h"
#include "tofu/Runtime/FetchPlan.h"
#include "tofu/Runtime/TofuCudaRuntime.h"
#include "tofu/Runtime/TofuRuntime.h"

#include <cstdio>
#include <cstdlib>
#include <vector>

#ifdef TOFU_HAVE_NCCL
#include "../cpu/RuntimeSupport.h"
#include "../cpu/Workers.h"

#include <cuda.h>
#include <mpi.h>
#include <nccl.h>

#include <algorithm>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <type_traits>

/// The copy kernel's fatbin (MultiFetch.cu through nvcc, embedded by
/// cmake/EmbedBinary.cmake).
extern "C" const unsigned char tofu_copy_parts_fatbin[];
#endif

namespace {

[[noreturn]] void stop(const char *call, const char *why) {
  std::fprintf(stderr, "tofu gpu collectives: %s failed: %s\n", call, why);
#ifdef TOFU_HAVE_NCCL
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Abort(MPI_COMM_WORLD, 1);
#endif
  std::abort();
}

} // namespace

#ifndef TOFU_HAVE_NCCL

// Without NCCL the entry points exist, so that every lowered step links,
// and stop the process with the reason.
#define TOFU_NO_NCCL(name, ...)                                                \
  extern "C" void _mlir_ciface_##name(__VA_ARGS__) {                           \
    stop(#name, "this build has no NCCL (see docs/gpu.md: the CUDA runtime "   \
                "is built with the collectives where CMake finds nccl.h and "  \
                "libnccl)");                                                   \
  }
#define TOFU_NO_NCCL_MOVES(suffix)                                             \
  TOFU_NO_NCCL(tofu_gpu_fetch##suffix, TofuUnrankedMemRef *,                   \
               TofuUnrankedMemRef *, TofuUnrankedMemRef *,                     \
               TofuUnrankedMemRef *, int64_t)                                  \
  TOFU_NO_NCCL(tofu_gpu_all_gather##suffix, TofuUnrankedMemRef *,              \
               TofuUnrankedMemRef *, TofuUnrankedMemRef *, int64_t, int64_t,   \
               int64_t)                                                        \
  TOFU_NO_NCCL(tofu_gpu_all_to_all##suffix, TofuUnrankedMemRef *,              \
               TofuUnrankedMemRef *, TofuUnrankedMemRef *, int64_t, int64_t,   \
               int64_t, int64_t)
TOFU_NO_NCCL_MOVES()
TOFU_NO_NCCL_MOVES(_f64)
TOFU_NO_NCCL_MOVES(_i32)
TOFU_NO_NCCL_MOVES(_i64)
TOFU_NO_NCCL(tofu_gpu_all_reduce, TofuUnrankedMemRef *, TofuUnrankedMemRef *,
             TofuUnrankedMemRef *, int64_t, int64_t, int64_t)
TOFU_NO_NCCL(tofu_gpu_reduce_scatter, TofuUnrankedMemRef *,
             TofuUnrankedMemRef *, TofuUnrankedMemRef *, int64_t, int64_t,
             int64_t, int64_t)
#undef TOFU_NO_NCCL_MOVES
#undef TOFU_NO_NCCL

extern "C" int32_t tofu_gpu_has_collectives(void) { return 0; }

#else // TOFU_HAVE_NCCL

namespace {

using tofu::runtime::checkShapes;
using tofu::runtime::getAddress;
using tofu::runtime::getAllReduceBytes;
using tofu::runtime::getDenseView;
using tofu::runtime::getGatherBytes;
using tofu::runtime::getGroupPosition;
using tofu::runtime::getInts;
using tofu::runtime::getOuterVolume;
using tofu::runtime::getReduceScatterBytes;
using tofu::runtime::getView;
using tofu::runtime::GroupPosition;
using tofu::runtime::isContiguous;
using tofu::runtime::relative;
using tofu::runtime::View;
namespace copy = tofu::copy;
namespace fetch = tofu::fetch;

#define TOFU_NCCL_CHECK(call)                                                  \
  do {                                                                         \
    ncclResult_t result_ = (call);                                             \
    if (result_ != ncclSuccess)                                                \
      stop(#call, nccl().getErrorString(result_));                             \
  } while (0)

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

/// NCCL, loaded on first use rather than linked: the CUDA runtime then
/// loads where NCCL is not installed (a GPU machine whose NCCL comes with
/// PyTorch, found through LD_LIBRARY_PATH), and only a partitioned step
/// needs it.
struct NcclLibrary {
  decltype(&ncclGetErrorString) getErrorString = nullptr;
  decltype(&ncclGetUniqueId) getUniqueId = nullptr;
  decltype(&ncclCommInitRank) commInitRank = nullptr;
  decltype(&ncclCommSplit) commSplit = nullptr;
  decltype(&ncclCommCount) commCount = nullptr;
  decltype(&ncclCommUserRank) commUserRank = nullptr;
  decltype(&ncclAllGather) allGather = nullptr;
  decltype(&ncclReduceScatter) reduceScatter = nullptr;
  decltype(&ncclAllReduce) allReduce = nullptr;
  decltype(&ncclSend) send = nullptr;
  decltype(&ncclRecv) recv = nullptr;
  decltype(&ncclGroupStart) groupStart = nullptr;
  decltype(&ncclGroupEnd) groupEnd = nullptr;
};

const NcclLibrary &nccl() {
  static NcclLibrary *library = [] {
    void *handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_GLOBAL);
    if (!handle)
      stop("loading NCCL", dlerror());
    auto *l = new NcclLibrary();
    auto find = [&](auto &function, const char *name) {
      function = reinterpret_cast<std::remove_reference_t<decltype(function)>>(
          dlsym(handle, name));
      if (!function)
        stop("loading NCCL", name);
    };
    find(l->getErrorString, "ncclGetErrorString");
    find(l->getUniqueId, "ncclGetUniqueId");
    find(l->commInitRank, "ncclCommInitRank");
    find(l->commSplit, "ncclCommSplit");
    find(l->commCount, "ncclCommCount");
    find(l->commUserRank, "ncclCommUserRank");
    find(l->allGather, "ncclAllGather");
    find(l->reduceScatter, "ncclReduceScatter");
    find(l->allReduce, "ncclAllReduce");
    find(l->send, "ncclSend");
    find(l->recv, "ncclRecv");
    find(l->groupStart, "ncclGroupStart");
    find(l->groupEnd, "ncclGroupEnd");
    return l;
  }();
  return *library;
}

/// The CUDA runtime's stream; the call also makes its context current.
CUstream getStream() { return static_cast<CUstream>(mgpuStreamCreate()); }

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

CUmodule getKernelModule() {
  static CUmodule module = [] {
    CUmodule m = nullptr;
    TOFU_CU_CHECK(cuModuleLoadData(&m, tofu_copy_parts_fatbin));
    return m;
  }();
  return module;
}

CUfunction loadKernel(const char *name) {
  CUfunction f = nullptr;
  TOFU_CU_CHECK(cuModuleGetFunction(&f, getKernelModule(), name));
  return f;
}

CUfunction getCopyKernel() {
  static CUfunction kernel = loadKernel("tofu_copy_parts");
  return kernel;
}

CUfunction getReduceKernel() {
  static CUfunction kernel = loadKernel("tofu_reduce_parts");
  return kernel;
}

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

void Copies::launch() {
  long long total = copy::numberParts(parts);
  if (total == 0)
    return;
  Staging table(int64_t(parts.size() * sizeof(copy::Part)));
  uploadParts(parts, table);
  void *tableArg = table.data;
  int count = int(parts.size());
  int bytes = int(elementBytes);
  void *args[] = {&tableArg, &count, &total, &bytes};
  TOFU_CU_CHECK(cuLaunchKernel(getCopyKernel(), getBlocks(total), 1, 1, 256, 1,
                               1, 0, getStream(), args, nullptr));
}

/// Queues the reduction kernel on a reduction's parts (one per group
/// member, all to one target: workers::planReduction).
void launchReduction(const std::vector<copy::Part> &parts, int64_t kind,
                     int64_t type) {
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
  TOFU_CU_CHECK(cuLaunchKernel(getReduceKernel(), getBlocks(total), 1, 1, 256,
                               1, 1, 0, getStream(), args, nullptr));
}

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

/// The world communicator and the groups split from it.
struct Communicators {
  std::mutex mutex;
  ncclComm_t world = nullptr;
  int rank = 0, size = 1;
  std::map<std::vector<int64_t>, ncclComm_t> groups;
};

Communicators &getCommunicators() {
  static Communicators *c = [] {
    auto *c = new Communicators();
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized)
      tofu_init(0);
    TOFU_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &c->rank));
    TOFU_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &c->size));
    ncclUniqueId id;
    if (c->rank == 0)
      TOFU_NCCL_CHECK(nccl().getUniqueId(&id));
    TOFU_MPI_CHECK(MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD));
    getStream();
    TOFU_NCCL_CHECK(nccl().commInitRank(&c->world, c->size, id, c->rank));
    return c;
  }();
  return *c;
}

/// The group of ranks that differ only along the grid axes in `axes` (a
/// bit mask), ordered by their row-major index over those axes, as the MPI
/// runtime's groups; split from the world the first time it is used.
struct Group {
  ncclComm_t comm = nullptr;
  int size = 1, me = 0;
};

Group getGroup(const std::vector<int64_t> &grid, int64_t axes) {
  Communicators &c = getCommunicators();
  std::lock_guard<std::mutex> lock(c.mutex);
  std::vector<int64_t> key = grid;
  key.push_back(axes);
  auto it = c.groups.find(key);
  // A group over every axis longer than 1 is the world, in the world's
  // order: no split (the same decision on every rank).
  bool world = true;
  for (size_t i = 0; i < grid.size(); ++i)
    world &= grid[i] == 1 || (axes & (int64_t(1) << i)) != 0;
  if (it == c.groups.end() && world)
    it = c.groups.emplace(key, c.world).first;
  if (it == c.groups.end()) {
    int64_t total = 1;
    for (int64_t k : grid)
      total *= k;
    if (total != c.size)
      stop("the GPU collectives", "the grid does not have as many ranks as "
                                  "the job");
    GroupPosition position = getGroupPosition(grid, axes, c.rank);
    ncclComm_t comm = nullptr;
    TOFU_NCCL_CHECK(nccl().commSplit(c.world, position.color, position.key,
                                     &comm, nullptr));
    it = c.groups.emplace(key, comm).first;
  }
  Group g;
  g.comm = it->second;
  TOFU_NCCL_CHECK(nccl().commCount(g.comm, &g.size));
  TOFU_NCCL_CHECK(nccl().commUserRank(g.comm, &g.me));
  return g;
}

ncclDataType_t getNcclType(int64_t type) {
  switch (type) {
  case TOFU_F32:
    return ncclFloat32;
  case TOFU_F64:
    return ncclFloat64;
  case TOFU_I32:
    return ncclInt32;
  case TOFU_I64:
    return ncclInt64;
  default:
    stop("the GPU collectives", "unsupported element type");
  }
}

ncclRedOp_t getNcclOp(int64_t kind) {
  switch (kind) {
  case TOFU_SUM:
    return ncclSum;
  case TOFU_MAX:
    return ncclMax;
  case TOFU_MIN:
    return ncclMin;
  case TOFU_PROD:
    return ncclProd;
  default:
    stop("the GPU collectives", "unsupported reduction");
  }
}

} // namespace

extern "C" {

int32_t tofu_gpu_has_collectives(void) { return 1; }

void _mlir_ciface_tofu_gpu_all_gather(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t dim, int64_t elementBytes) {
  View in = getView(src, elementBytes), out = getView(dst, elementBytes);
  if (workers::active())
    return workersAllGather(in, out, getInts(grid), axes, dim);
  Group g = getGroup(getInts(grid), axes);
  checkShapes(in, out, dim, -1, g.size, "tofu_gpu_all_gather");
  CUstream stream = getStream();
  // The group's tiles one after the other, straight into the result when
  // they follow each other there.
  int64_t chunk = in.volume() * elementBytes;
  bool direct = getOuterVolume(out, dim) == 1 && isContiguous(out);
  Staging staging(direct ? 0 : out.volume() * elementBytes);
  char *buffer = direct ? out.data : staging.data;
  const char *send = in.data;
  std::vector<int64_t> zero(in.sizes.size(), 0);
  if (!isContiguous(in)) {
    Copies pack(elementBytes);
    pack.add(in, zero,
             getDenseView(buffer + g.me * chunk, in.sizes, elementBytes), zero,
             in.sizes);
    pack.launch();
    send = buffer + g.me * chunk;
  }
  TOFU_NCCL_CHECK(
      nccl().allGather(send, buffer, size_t(chunk), ncclInt8, g.comm, stream));
  if (!direct) {
    Copies unpack(elementBytes);
    for (int c = 0; c < g.size; ++c) {
      std::vector<int64_t> lo = zero;
      lo[dim] = c * in.sizes[dim];
      unpack.add(getDenseView(buffer + c * chunk, in.sizes, elementBytes), zero,
                 out, lo, in.sizes);
    }
    unpack.launch();
  }
  tofu_count_received_bytes(TOFU_COUNT_ALL_GATHER,
                            getGatherBytes(g.size, in.volume(), elementBytes));
}

void _mlir_ciface_tofu_gpu_reduce_scatter(TofuUnrankedMemRef *src,
                                          TofuUnrankedMemRef *dst,
                                          TofuUnrankedMemRef *grid,
                                          int64_t axis, int64_t dim,
                                          int64_t kind, int64_t type) {
  int64_t eb = tofu::runtime::bytesOf(type);
  View in = getView(src, eb), out = getView(dst, eb);
  if (workers::active()) {
    const workers::Group &g =
        workers::getGroup(getInts(grid), int64_t(1) << axis);
    checkShapes(out, in, dim, -1, g.size(), "tofu_gpu_reduce_scatter");
    std::vector<int64_t> lo(in.sizes.size(), 0);
    lo[dim] = g.me * out.sizes[dim];
    workersReduce(g, in, out, lo, kind, type);
    tofu_count_received_bytes(TOFU_COUNT_REDUCE_SCATTER,
                              getReduceScatterBytes(g.size(), in.volume(), eb));
    return;
  }
  Group g = getGroup(getInts(grid), int64_t(1) << axis);
  if (dim < 0 || dim >= (int64_t)in.sizes.size() ||
      in.sizes[dim] != out.sizes[dim] * g.size)
    stop("tofu_gpu_reduce_scatter", "the result is not one chunk of the input");
  CUstream stream = getStream();
  // The chunks along `dim` one after the other, as NCCL expects them.
  int64_t chunk = out.volume();
  bool sendDirect = getOuterVolume(in, dim) == 1 && isContiguous(in);
  bool recvDirect = isContiguous(out);
  Staging send(sendDirect ? 0 : in.volume() * eb);
  Staging recv(recvDirect ? 0 : chunk * eb);
  std::vector<int64_t> zero(in.sizes.size(), 0);
  if (!sendDirect) {
    Copies pack(eb);
    for (int c = 0; c < g.size; ++c) {
      std::vector<int64_t> lo = zero;
      lo[dim] = c * out.sizes[dim];
      pack.add(in, lo, getDenseView(send.data + c * chunk * eb, out.sizes, eb),
               zero, out.sizes);
    }
    pack.launch();
  }
  TOFU_NCCL_CHECK(nccl().reduceScatter(
      sendDirect ? in.data : send.data, recvDirect ? out.data : recv.data,
      size_t(chunk), getNcclType(type), getNcclOp(kind), g.comm, stream));
  if (!recvDirect) {
    Copies unpack(eb);
    unpack.add(getDenseView(recv.data, out.sizes, eb), zero, out, zero,
               out.sizes);
    unpack.launch();
  }
  tofu_count_received_bytes(TOFU_COUNT_REDUCE_SCATTER,
                            getReduceScatterBytes(g.size, in.volume(), eb));
}

void _mlir_ciface_tofu_gpu_all_reduce(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t kind, int64_t type) {
  int64_t eb = tofu::runtime::bytesOf(type);
  View in = getView(src, eb), out = getView(dst, eb);
  if (in.sizes != out.sizes)
    stop("tofu_gpu_all_reduce", "the result does not have the input's shape");
  if (workers::active()) {
    const workers::Group &g = workers::getGroup(getInts(grid), axes);
    workersAllReduce(g, in, out, kind, type);
    tofu_count_received_bytes(TOFU_COUNT_ALL_REDUCE,
                              getAllReduceBytes(g.size(), in.volume(), eb));
    return;
  }
  Group g = getGroup(getInts(grid), axes);
  CUstream stream = getStream();
  // Reduce from the input (packed first if strided) into the result (or a
  // staging buffer, unpacked after, if the result is strided).
  bool inDirect = isContiguous(in), outDirect = isContiguous(out);
  Staging staging(inDirect && outDirect ? 0 : in.volume() * eb);
  std::vector<int64_t> zero(in.sizes.size(), 0);
  char *result = outDirect ? out.data : staging.data;
  const char *send = in.data;
  if (!inDirect) {
    Copies pack(eb);
    pack.add(in, zero, getDenseView(result, in.sizes, eb), zero, in.sizes);
    pack.launch();
    send = result;
  }
  TOFU_NCCL_CHECK(nccl().allReduce(send, result, size_t(in.volume()),
                                   getNcclType(type), getNcclOp(kind), g.comm,
                                   stream));
  if (!outDirect) {
    Copies unpack(eb);
    unpack.add(getDenseView(result, in.sizes, eb), zero, out, zero, out.sizes);
    unpack.launch();
  }
  tofu_count_received_bytes(TOFU_COUNT_ALL_REDUCE,
                            getAllReduceBytes(g.size, in.volume(), eb));
}

void _mlir_ciface_tofu_gpu_all_to_all(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t splitDim, int64_t concatDim,
                                      int64_t elementBytes) {
  View in = getView(src, elementBytes), out = getView(dst, elementBytes);
  if (workers::active())
    return workersAllToAll(in, out, getInts(grid), axes, splitDim, concatDim);
  Group g = getGroup(getInts(grid), axes);
  checkShapes(in, out, concatDim, splitDim, g.size, "tofu_gpu_all_to_all");
  CUstream stream = getStream();
  // Chunk j of the input along splitDim goes to member j; the chunk from
  // member j lands at position j along concatDim. Both have this shape.
  std::vector<int64_t> shape = in.sizes;
  shape[splitDim] = out.sizes[splitDim];
  int64_t chunk = out.volume() / g.size * elementBytes;
  // The chunks follow each other in a contiguous tile without dimensions
  // before the split (concatenated) one: NCCL reads (writes) them there.
  bool sendDirect = getOuterVolume(in, splitDim) == 1 && isContiguous(in);
  bool recvDirect = getOuterVolume(out, concatDim) == 1 && isContiguous(out);
  Staging send(sendDirect ? 0 : in.volume() * elementBytes);
  Staging recv(recvDirect ? 0 : out.volume() * elementBytes);
  char *sendBase = sendDirect ? in.data : send.data;
  char *recvBase = recvDirect ? out.data : recv.data;
  std::vector<int64_t> zero(in.sizes.size(), 0);
  Copies pack(elementBytes), unpack(elementBytes);
  for (int j = 0; j < g.size; ++j) {
    std::vector<int64_t> from = zero, to = zero;
    from[splitDim] = j * shape[splitDim];
    to[concatDim] = j * shape[concatDim];
    if (j == g.me) {
      // This rank's own chunk, straight into its place.
      pack.add(in, from, out, to, shape);
      continue;
    }
    if (!sendDirect)
      pack.add(in, from,
               getDenseView(send.data + j * chunk, shape, elementBytes), zero,
               shape);
    if (!recvDirect)
      unpack.add(getDenseView(recv.data + j * chunk, shape, elementBytes), zero,
                 out, to, shape);
  }
  pack.launch();
  TOFU_NCCL_CHECK(nccl().groupStart());
  for (int j = 0; j < g.size; ++j) {
    if (j == g.me)
      continue;
    TOFU_NCCL_CHECK(nccl().send(sendBase + j * chunk, size_t(chunk), ncclInt8,
                                j, g.comm, stream));
    TOFU_NCCL_CHECK(nccl().recv(recvBase + j * chunk, size_t(chunk), ncclInt8,
                                j, g.comm, stream));
  }
  TOFU_NCCL_CHECK(nccl().groupEnd());
  unpack.launch();
  tofu_count_received_bytes(
      TOFU_COUNT_ALL_TO_ALL,
      getGatherBytes(g.size, out.volume() / g.size, elementBytes));
}

void _mlir_ciface_tofu_gpu_fetch(TofuUnrankedMemRef *src,
                                 TofuUnrankedMemRef *dst,
                                 TofuUnrankedMemRef *srcOffsets,
                                 TofuUnrankedMemRef *dstOffsets,
                                 int64_t elementBytes) {
  int64_t eb = elementBytes;
  View in = getView(src, eb), out = getView(dst, eb);
  std::vector<int64_t> heldOffsets = getInts(srcOffsets),
                       wantedOffsets = getInts(dstOffsets);
  if (workers::active())
    return workersFetch(in, out, heldOffsets, wantedOffsets);
  Communicators &c = getCommunicators();
  CUstream stream = getStream();
  if (heldOffsets.size() != in.sizes.size() * c.size ||
      wantedOffsets.size() != out.sizes.size() * c.size)
    stop("tofu_gpu_fetch", "the offsets do not match the number of ranks");
  std::vector<fetch::Box> held = fetch::getBoxes(heldOffsets, in.sizes, c.size);
  std::vector<fetch::Box> wanted =
      fetch::getBoxes(wantedOffsets, out.sizes, c.size);
  // The plan every runtime executes (FetchPlan.h): this rank packs its
  // parts for each receiver in plan order and unpacks what it receives in
  // the same order.
  std::vector<fetch::Part> parts = fetch::planFetch(held, wanted);
  int me = c.rank;
  std::vector<int64_t> sendBytes(c.size, 0), recvBytes(c.size, 0);
  for (const fetch::Part &p : parts) {
    if (p.source == p.receiver)
      continue;
    if (p.source == me)
      sendBytes[p.receiver] += p.box.volume() * eb;
    else if (p.receiver == me)
      recvBytes[p.source] += p.box.volume() * eb;
  }
  std::vector<int64_t> sendAt(c.size + 1, 0), recvAt(c.size + 1, 0);
  for (int r = 0; r < c.size; ++r) {
    sendAt[r + 1] = sendAt[r] + sendBytes[r];
    recvAt[r + 1] = recvAt[r] + recvBytes[r];
  }
  Staging send(sendAt[c.size]), recv(recvAt[c.size]);
  std::vector<int64_t> sendCursor(sendAt.begin(), sendAt.end() - 1),
      recvCursor(recvAt.begin(), recvAt.end() - 1);
  std::vector<int64_t> none(in.sizes.size(), 0);
  Copies pack(eb), unpack(eb);
  for (const fetch::Part &p : parts) {
    std::vector<int64_t> sizes = p.box.sizes();
    if (p.source == me && p.receiver == me) {
      pack.add(in, relative(p.box, held[me]), out, relative(p.box, wanted[me]),
               sizes);
    } else if (p.source == me) {
      pack.add(in, relative(p.box, held[me]),
               getDenseView(send.data + sendCursor[p.receiver], sizes, eb),
               none, sizes);
      sendCursor[p.receiver] += p.box.volume() * eb;
    } else if (p.receiver == me) {
      unpack.add(getDenseView(recv.data + recvCursor[p.source], sizes, eb),
                 none, out, relative(p.box, wanted[me]), sizes);
      recvCursor[p.source] += p.box.volume() * eb;
    }
  }
  pack.launch();
  TOFU_NCCL_CHECK(nccl().groupStart());
  for (int r = 0; r < c.size; ++r) {
    if (sendBytes[r])
      TOFU_NCCL_CHECK(nccl().send(send.data + sendAt[r], size_t(sendBytes[r]),
                                  ncclInt8, r, c.world, stream));
    if (recvBytes[r])
      TOFU_NCCL_CHECK(nccl().recv(recv.data + recvAt[r], size_t(recvBytes[r]),
                                  ncclInt8, r, c.world, stream));
  }
  TOFU_NCCL_CHECK(nccl().groupEnd());
  unpack.launch();
  tofu_count_received_bytes(TOFU_COUNT_FETCH, double(recvAt[c.size]));
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

#endif // TOFU_HAVE_NCCL
