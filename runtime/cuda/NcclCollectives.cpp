//===- NcclCollectives.cpp - The GPU collectives over NCCL ----------------===//
//
// The collectives of one process per GPU under mpiexec: the calls of
// convert-tofu-to-mpi{runtime=gpu}, with the arguments of the MPI runtime's
// (runtime/cpu/TofuRuntime.cpp) on device buffers, that Collectives.cpp's
// entry points make outside a team of in-process workers.
//
// - NCCL moves contiguous buffers. A tile that is not one (a strided view,
//   or chunks that do not follow each other) is packed into a staging
//   buffer, or unpacked from one, by the copy kernel (MultiFetch.cu), whose
//   element mapping CopyParts.h defines and the unit tests check.
// - A fetch executes FetchPlan.h's parts: this rank's parts for each
//   receiver packed one after the other, one grouped ncclSend/ncclRecv per
//   peer, and the received parts unpacked in the same order; the parts it
//   sends itself are copied directly.
// - Everything is queued on the rank's one stream; staging buffers come
//   from the CUDA runtime's caching allocator and go back to it in stream
//   order, so that the host does not wait for the GPU here (an upload of a
//   part table from pageable memory may wait for the driver's staging
//   copy).
// - The bytes each rank receives are counted as the MPI runtime counts
//   them, into its statistics (tofu_count_received_bytes).
//
//===----------------------------------------------------------------------===//

#include "CollectivesSupport.h"

#include "tofu/Runtime/FetchPlan.h"
#include "tofu/Runtime/TofuRuntime.h"

#include <mpi.h>
#include <nccl.h>

#include <dlfcn.h>
#include <map>
#include <mutex>
#include <type_traits>

using namespace tofu::runtime::collectives;
using tofu::runtime::checkShapes;
using tofu::runtime::getAllReduceBytes;
using tofu::runtime::getDenseView;
using tofu::runtime::getGatherBytes;
using tofu::runtime::getGroupPosition;
using tofu::runtime::getOuterVolume;
using tofu::runtime::getReduceScatterBytes;
using tofu::runtime::GroupPosition;
using tofu::runtime::isContiguous;
using tofu::runtime::relative;
using tofu::runtime::View;
namespace fetch = tofu::fetch;

namespace {

#define TOFU_NCCL_CHECK(call)                                                  \
  do {                                                                         \
    ncclResult_t result_ = (call);                                             \
    if (result_ != ncclSuccess)                                                \
      stop(#call, nccl().getErrorString(result_));                             \
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

namespace tofu {
namespace runtime {
namespace collectives {

void ncclAllGatherTiles(const View &in, const View &out,
                        const std::vector<int64_t> &grid, int64_t axes,
                        int64_t dim) {
  int64_t elementBytes = in.elementBytes;
  Group g = getGroup(grid, axes);
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

void ncclReduceScatterTiles(const View &in, const View &out,
                            const std::vector<int64_t> &grid, int64_t axis,
                            int64_t dim, int64_t kind, int64_t type) {
  int64_t eb = in.elementBytes;
  Group g = getGroup(grid, int64_t(1) << axis);
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

void ncclAllReduceTiles(const View &in, const View &out,
                        const std::vector<int64_t> &grid, int64_t axes,
                        int64_t kind, int64_t type) {
  int64_t eb = in.elementBytes;
  Group g = getGroup(grid, axes);
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

void ncclAllToAllTiles(const View &in, const View &out,
                       const std::vector<int64_t> &grid, int64_t axes,
                       int64_t splitDim, int64_t concatDim) {
  int64_t elementBytes = in.elementBytes;
  Group g = getGroup(grid, axes);
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

void ncclFetchTiles(const View &in, const View &out,
                    const std::vector<int64_t> &heldOffsets,
                    const std::vector<int64_t> &wantedOffsets) {
  int64_t eb = in.elementBytes;
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

} // namespace collectives
} // namespace runtime
} // namespace tofu
