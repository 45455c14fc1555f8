//===- TofuRuntime.cpp - The CPU runtime over MPI -------------------------===//
//
// Implements include/tofu/Runtime/TofuRuntime.h with MPI: region fetches
// with point-to-point messages, gathers, all-to-alls and reductions on
// communicators cached per (grid, axes), deterministic initial values, and
// byte and memory counters.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/FetchPlan.h"
#include "tofu/Runtime/TofuRuntime.h"

#include "NodeCollectives.h"
#include "Profile.h"
#include "RuntimeSupport.h"
#include "Workers.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <unordered_map>
#include <vector>

namespace {

using namespace tofu::runtime;
namespace fetch = tofu::fetch;

MPI_Datatype mpiType(int64_t type) {
  switch (type) {
  case TOFU_F32:
    return MPI_FLOAT;
  case TOFU_I32:
    return MPI_INT32_T;
  case TOFU_I64:
    return MPI_INT64_T;
  default:
    return MPI_DOUBLE;
  }
}

MPI_Op mpiOp(int64_t kind) {
  switch (kind) {
  case TOFU_SUM:
    return MPI_SUM;
  case TOFU_MAX:
    return MPI_MAX;
  case TOFU_MIN:
    return MPI_MIN;
  case TOFU_PROD:
    return MPI_PROD;
  default:
    fatal("unsupported reduction");
  }
}

struct State {
  bool ownsMpi = false;
  int rank = 0, size = 1;
  /// The communicator of each (grid, axes) used so far: a few, searched
  /// in order without allocating (every collective looks one up).
  struct Group {
    std::vector<int64_t> grid;
    int64_t axes;
    MPI_Comm comm;
    /// Its shared-memory segment when every member runs on this node.
    node::Segment *segment;
  };
  std::vector<Group> comms;
  // Logical bytes received by this rank per collective.
  double fetchBytes = 0, allGatherBytes = 0, allToAllBytes = 0,
         allReduceBytes = 0, reduceScatterBytes = 0;
  // Collectives made over MPI communicators, and those of them that went
  // through a shared-memory segment (NodeCollectives.h).
  int64_t collectives = 0, sharedCollectives = 0;
  int64_t liveBytes = 0, peakBytes = 0;
  // With TOFU_PEAK_BUFFERS=N: the live blocks (address -> size and the
  // ordinal of the allocation) and their sizes and ordinals at the peak.
  int64_t profileTop = -1, allocations = 0;
  std::map<void *, std::pair<int64_t, int64_t>> live;
  std::vector<std::pair<int64_t, int64_t>> atPeak;
};

/// The calling rank's state: a process's, or an in-process worker's
/// (Workers.h).
State &state() {
  static thread_local State s;
  return s;
}

void ensureInitialized() {
  if (workers::active())
    return;
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    tofu_init(0);
}

/// The communicator of the ranks that differ from this one only along the
/// grid axes in `axes`, ordered by their row-major index over those axes,
/// with its shared-memory segment (NodeCollectives.h).
const State::Group &getGroup(const std::vector<int64_t> &grid, int64_t axes) {
  ensureInitialized();
  State &s = state();
  for (const State::Group &g : s.comms)
    if (g.axes == axes && g.grid == grid)
      return g;
  int64_t total = 1;
  for (int64_t k : grid)
    total *= k;
  if (total != s.size)
    fatal("the grid does not have as many ranks as the job");
  GroupPosition position = getGroupPosition(grid, axes, s.rank);
  MPI_Comm comm;
  TOFU_MPI_CHECK(
      MPI_Comm_split(MPI_COMM_WORLD, position.color, position.key, &comm));
  s.comms.push_back({grid, axes, comm, node::createSegment(comm)});
  return s.comms.back();
}

/// Counts a collective over MPI communicators, `shared` when it went
/// through shared memory; returns `shared`.
bool countCollective(bool shared) {
  State &s = state();
  ++s.collectives;
  s.sharedCollectives += shared;
  return shared;
}

/// The message size of `elements` elements of `elementBytes` bytes, as the
/// int that MPI counts take.
int getMessageBytes(int64_t elements, int64_t elementBytes, const char *what) {
  int64_t bytes = elements * elementBytes;
  if (bytes > INT_MAX) {
    std::fprintf(stderr,
                 "tofu runtime: %s of %lld bytes per rank is too "
                 "large for one message\n",
                 what, (long long)bytes);
    fatal("message too large");
  }
  return int(bytes);
}

/// The size of `comm` and the rank of this process in it.
std::pair<int, int> getGroupRank(MPI_Comm comm) {
  int size = 1, rank = 0;
  TOFU_MPI_CHECK(MPI_Comm_size(comm, &size));
  TOFU_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  return {size, rank};
}

/// Reduces `n` doubles over every rank of the job, MPI's or the in-process
/// workers': each gets the result.
void reduceOverJob(double *values, int n, int64_t kind) {
  if (workers::active())
    return workers::reduceDoubles(values, n, kind);
  ensureInitialized();
  TOFU_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, mpiOp(kind),
                               MPI_COMM_WORLD));
}

/// splitmix64: a counter-based generator, one value per index.
uint64_t hash(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

} // namespace

extern "C" {

void tofu_init(int64_t gridSize) {
  State &s = state();
  if (workers::active()) {
    s.rank = workers::rank();
    s.size = workers::size();
    if (gridSize > 0 && gridSize != s.size)
      workers::leave(1, [&] {
        std::fprintf(stderr,
                     "tofu runtime: the program is partitioned for %lld ranks "
                     "but runs on %d workers (use --workers %lld)\n",
                     (long long)gridSize, s.size, (long long)gridSize);
      });
    return;
  }
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    TOFU_MPI_CHECK(MPI_Init(nullptr, nullptr));
    s.ownsMpi = true;
  }
  TOFU_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &s.rank));
  TOFU_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &s.size));
  if (gridSize > 0 && gridSize != s.size) {
    // Every rank gets here, so the job ends cleanly with exit status 1: an
    // MPI_Abort could tear the job down before mpiexec forwards rank 0's
    // message.
    if (s.rank == 0 && gridSize == 1) {
      std::fprintf(stderr,
                   "tofu runtime: the step is not partitioned, but runs on %d "
                   "ranks: every rank would compute the same whole step. "
                   "Partition it first (tofu-opt --tofu-partition, or "
                   "--tofu-train-pipeline with devices=%d, then "
                   "--tofu-partition), or run it on one rank\n",
                   s.size, s.size);
      std::fflush(stderr);
    } else if (s.rank == 0) {
      std::fprintf(stderr,
                   "tofu runtime: the program is partitioned for %lld ranks "
                   "but runs on %d (use mpiexec -n %lld)\n",
                   (long long)gridSize, s.size, (long long)gridSize);
      std::fflush(stderr);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    std::exit(1);
  }
}

void tofu_finalize(void) {
  State &s = state();
  if (workers::active())
    return;
  for (State::Group &g : s.comms) {
    node::freeSegment(g.segment);
    TOFU_MPI_CHECK(MPI_Comm_free(&g.comm));
  }
  s.comms.clear();
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (s.ownsMpi && !finalized)
    TOFU_MPI_CHECK(MPI_Finalize());
  s.ownsMpi = false;
}

int64_t tofu_rank(void) {
  if (workers::active())
    return workers::rank();
  ensureInitialized();
  return state().rank;
}

void _mlir_ciface_tofu_fetch(TofuUnrankedMemRef *src, TofuUnrankedMemRef *dst,
                             TofuUnrankedMemRef *srcOffsets,
                             TofuUnrankedMemRef *dstOffsets,
                             int64_t elementBytes) {
  ensureInitialized();
  State &s = state();
  View in = getView(src, elementBytes), out = getView(dst, elementBytes);
  ProfiledCall call(tofu::gpu::OpClass::Collective, [&] {
    return describeCollective("fetch", in.sizes, out.sizes);
  });
  std::vector<int64_t> heldOffsets = getInts(srcOffsets),
                       wantedOffsets = getInts(dstOffsets);
  if (workers::active()) {
    s.fetchBytes +=
        double(workers::fetch(in, out, heldOffsets, wantedOffsets)) *
        elementBytes;
    return;
  }
  if (heldOffsets.size() != in.sizes.size() * s.size ||
      wantedOffsets.size() != out.sizes.size() * s.size)
    fatal("a fetch's offsets do not match the number of ranks");
  std::vector<fetch::Box> held = fetch::getBoxes(heldOffsets, in.sizes, s.size);
  std::vector<fetch::Box> wanted =
      fetch::getBoxes(wantedOffsets, out.sizes, s.size);
  // The plan every runtime executes (FetchPlan.h): this rank packs its
  // parts for each receiver in plan order, and unpacks what it receives in
  // the same order.
  std::vector<fetch::Part> parts = fetch::planFetch(held, wanted);
  int me = s.rank;
  int64_t eb = elementBytes;
  std::vector<std::vector<char>> sendBuffers(s.size), recvBuffers(s.size);
  int64_t received = 0;
  for (const fetch::Part &p : parts) {
    int64_t bytes = p.box.volume() * eb;
    if (p.source == me && p.receiver == me) {
      copyBox(in, relative(p.box, held[me]), out, relative(p.box, wanted[me]),
              p.box.sizes());
    } else if (p.source == me) {
      std::vector<char> &buf = sendBuffers[p.receiver];
      size_t at = buf.size();
      buf.resize(at + bytes);
      pack(in, relative(p.box, held[me]), p.box.sizes(), buf.data() + at);
    } else if (p.receiver == me) {
      recvBuffers[p.source].resize(recvBuffers[p.source].size() + bytes);
      received += p.box.volume();
    }
  }
  std::vector<MPI_Request> requests;
  for (int v = 0; v < s.size; ++v)
    if (!recvBuffers[v].empty()) {
      requests.emplace_back();
      TOFU_MPI_CHECK(MPI_Irecv(recvBuffers[v].data(), recvBuffers[v].size(),
                               MPI_BYTE, v, 7, MPI_COMM_WORLD,
                               &requests.back()));
    }
  for (int w = 0; w < s.size; ++w)
    if (!sendBuffers[w].empty()) {
      requests.emplace_back();
      TOFU_MPI_CHECK(MPI_Isend(sendBuffers[w].data(), sendBuffers[w].size(),
                               MPI_BYTE, w, 7, MPI_COMM_WORLD,
                               &requests.back()));
    }
  TOFU_MPI_CHECK(
      MPI_Waitall(requests.size(), requests.data(), MPI_STATUSES_IGNORE));
  std::vector<size_t> cursor(s.size, 0);
  for (const fetch::Part &p : parts) {
    if (p.receiver != me || p.source == me)
      continue;
    unpack(out, relative(p.box, wanted[me]), p.box.sizes(),
           recvBuffers[p.source].data() + cursor[p.source]);
    cursor[p.source] += p.box.volume() * eb;
  }
  s.fetchBytes += double(received) * eb;
}

void _mlir_ciface_tofu_all_reduce(TofuUnrankedMemRef *src,
                                  TofuUnrankedMemRef *dst,
                                  TofuUnrankedMemRef *grid, int64_t axes,
                                  int64_t kind, int64_t type) {
  int64_t eb = bytesOf(type);
  View in = getView(src, eb), out = getView(dst, eb);
  ProfiledCall call(tofu::gpu::OpClass::Collective, [&] {
    return describeCollective("all_reduce", in.sizes, out.sizes);
  });
  if (workers::active()) {
    int groupSize =
        workers::allReduce(in, out, getInts(grid), axes, kind, type);
    state().allReduceBytes += getAllReduceBytes(groupSize, in.volume(), eb);
    return;
  }
  const State::Group &group = getGroup(getInts(grid), axes);
  MPI_Comm comm = group.comm;
  int groupSize = getGroupRank(comm).first;
  if (in.sizes != out.sizes)
    fatal("all_reduce: the result does not have the input's shape");
  std::vector<int64_t> zero(in.sizes.size(), 0);
  if (countCollective(node::reduce(group.segment, in, out, zero, kind, type))) {
    state().allReduceBytes += getAllReduceBytes(groupSize, in.volume(), eb);
    return;
  }
  // Copy the input into the result and reduce there in place; a temporary
  // only when the result is not contiguous.
  bool direct = isContiguous(out);
  std::vector<char> packed(direct ? 0 : in.volume() * eb);
  char *buffer = direct ? out.data : packed.data();
  pack(in, zero, in.sizes, buffer);
  TOFU_MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, buffer, in.volume(), mpiType(type),
                               mpiOp(kind), comm));
  if (!direct)
    unpack(out, zero, out.sizes, packed.data());
  state().allReduceBytes += getAllReduceBytes(groupSize, in.volume(), eb);
}

void _mlir_ciface_tofu_reduce_scatter(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axis,
                                      int64_t dim, int64_t kind, int64_t type) {
  int64_t eb = bytesOf(type);
  View in = getView(src, eb), out = getView(dst, eb);
  ProfiledCall call(tofu::gpu::OpClass::Collective, [&] {
    return describeCollective("reduce_scatter", in.sizes, out.sizes);
  });
  if (workers::active()) {
    int groupSize =
        workers::reduceScatter(in, out, getInts(grid), axis, dim, kind, type);
    state().reduceScatterBytes +=
        getReduceScatterBytes(groupSize, in.volume(), eb);
    return;
  }
  const State::Group &group = getGroup(getInts(grid), int64_t(1) << axis);
  MPI_Comm comm = group.comm;
  auto [groupSize, me] = getGroupRank(comm);
  checkShapes(out, in, dim, -1, groupSize, "reduce_scatter");
  std::vector<int64_t> lo(in.sizes.size(), 0);
  lo[dim] = me * out.sizes[dim];
  if (countCollective(node::reduce(group.segment, in, out, lo, kind, type))) {
    state().reduceScatterBytes +=
        getReduceScatterBytes(groupSize, in.volume(), eb);
    return;
  }
  // Chunks along `dim`, one after the other, as MPI expects them. A
  // contiguous input whose outer dimensions are all 1 already holds them
  // in that order, and a contiguous result receives directly.
  int64_t chunk = out.volume();
  int64_t outer = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= in.sizes[d];
  bool sendDirect = outer == 1 && isContiguous(in);
  bool recvDirect = isContiguous(out);
  std::vector<char> send(sendDirect ? 0 : in.volume() * eb);
  std::vector<char> recv(recvDirect ? 0 : chunk * eb);
  if (!sendDirect)
    for (int c = 0; c < groupSize; ++c) {
      std::vector<int64_t> lo(in.sizes.size(), 0);
      lo[dim] = c * out.sizes[dim];
      pack(in, lo, out.sizes, send.data() + c * chunk * eb);
    }
  TOFU_MPI_CHECK(MPI_Reduce_scatter_block(
      sendDirect ? in.data : send.data(), recvDirect ? out.data : recv.data(),
      chunk, mpiType(type), mpiOp(kind), comm));
  if (!recvDirect)
    unpack(out, std::vector<int64_t>(out.sizes.size(), 0), out.sizes,
           recv.data());
  state().reduceScatterBytes +=
      getReduceScatterBytes(groupSize, in.volume(), eb);
}

void _mlir_ciface_tofu_all_gather(TofuUnrankedMemRef *src,
                                  TofuUnrankedMemRef *dst,
                                  TofuUnrankedMemRef *grid, int64_t axes,
                                  int64_t dim, int64_t elementBytes) {
  View in = getView(src, elementBytes), out = getView(dst, elementBytes);
  ProfiledCall call(tofu::gpu::OpClass::Collective, [&] {
    return describeCollective("all_gather", in.sizes, out.sizes);
  });
  if (workers::active()) {
    int groupSize = workers::allGather(in, out, getInts(grid), axes, dim);
    state().allGatherBytes +=
        getGatherBytes(groupSize, in.volume(), elementBytes);
    return;
  }
  const State::Group &group = getGroup(getInts(grid), axes);
  MPI_Comm comm = group.comm;
  auto [groupSize, me] = getGroupRank(comm);
  checkShapes(in, out, dim, -1, groupSize, "all_gather");
  if (countCollective(node::allGather(group.segment, in, out, dim))) {
    state().allGatherBytes +=
        getGatherBytes(groupSize, in.volume(), elementBytes);
    return;
  }
  // The group's tiles, one after the other in group order, gathered in
  // place: straight into the result when they follow each other there.
  int64_t chunk = in.volume();
  int count = getMessageBytes(chunk, elementBytes, "all_gather");
  bool direct = getOuterVolume(out, dim) == 1 && isContiguous(out);
  std::vector<char> staging(direct ? 0 : out.volume() * elementBytes);
  char *buffer = direct ? out.data : staging.data();
  std::vector<int64_t> zero(in.sizes.size(), 0);
  pack(in, zero, in.sizes, buffer + me * chunk * elementBytes);
  TOFU_MPI_CHECK(MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buffer,
                               count, MPI_BYTE, comm));
  if (!direct)
    for (int c = 0; c < groupSize; ++c) {
      std::vector<int64_t> lo = zero;
      lo[dim] = c * in.sizes[dim];
      unpack(out, lo, in.sizes, buffer + c * chunk * elementBytes);
    }
  state().allGatherBytes += getGatherBytes(groupSize, chunk, elementBytes);
}

void _mlir_ciface_tofu_all_to_all(TofuUnrankedMemRef *src,
                                  TofuUnrankedMemRef *dst,
                                  TofuUnrankedMemRef *grid, int64_t axes,
                                  int64_t splitDim, int64_t concatDim,
                                  int64_t elementBytes) {
  View in = getView(src, elementBytes), out = getView(dst, elementBytes);
  ProfiledCall call(tofu::gpu::OpClass::Collective, [&] {
    return describeCollective("all_to_all", in.sizes, out.sizes);
  });
  if (workers::active()) {
    int groupSize =
        workers::allToAll(in, out, getInts(grid), axes, splitDim, concatDim);
    state().allToAllBytes +=
        getGatherBytes(groupSize, out.volume() / groupSize, elementBytes);
    return;
  }
  const State::Group &group = getGroup(getInts(grid), axes);
  MPI_Comm comm = group.comm;
  int groupSize = getGroupRank(comm).first;
  checkShapes(in, out, concatDim, splitDim, groupSize, "all_to_all");
  if (countCollective(
          node::allToAll(group.segment, in, out, splitDim, concatDim))) {
    state().allToAllBytes +=
        getGatherBytes(groupSize, out.volume() / groupSize, elementBytes);
    return;
  }
  // Chunk j of the input along splitDim goes to member j; the chunk from
  // member j lands at position j along concatDim. Both have this shape.
  std::vector<int64_t> shape = in.sizes;
  shape[splitDim] = out.sizes[splitDim];
  int64_t chunk = out.volume() / groupSize;
  int count = getMessageBytes(chunk, elementBytes, "all_to_all");
  bool sendDirect = getOuterVolume(in, splitDim) == 1 && isContiguous(in);
  bool recvDirect = getOuterVolume(out, concatDim) == 1 && isContiguous(out);
  std::vector<char> send(sendDirect ? 0 : in.volume() * elementBytes);
  std::vector<char> recv(recvDirect ? 0 : out.volume() * elementBytes);
  std::vector<int64_t> zero(in.sizes.size(), 0);
  if (!sendDirect)
    for (int j = 0; j < groupSize; ++j) {
      std::vector<int64_t> lo = zero;
      lo[splitDim] = j * shape[splitDim];
      pack(in, lo, shape, send.data() + j * chunk * elementBytes);
    }
  TOFU_MPI_CHECK(MPI_Alltoall(sendDirect ? in.data : send.data(), count,
                              MPI_BYTE, recvDirect ? out.data : recv.data(),
                              count, MPI_BYTE, comm));
  if (!recvDirect)
    for (int j = 0; j < groupSize; ++j) {
      std::vector<int64_t> lo = zero;
      lo[concatDim] = j * shape[concatDim];
      unpack(out, lo, shape, recv.data() + j * chunk * elementBytes);
    }
  state().allToAllBytes += getGatherBytes(groupSize, chunk, elementBytes);
}

void _mlir_ciface_tofu_fill_hash(TofuUnrankedMemRef *tile,
                                 TofuUnrankedMemRef *offsets,
                                 TofuUnrankedMemRef *globalShape, uint64_t seed,
                                 uint64_t stream, double scale,
                                 int64_t nonNegative, int64_t type) {
  int64_t eb = bytesOf(type);
  View v = getView(tile, eb);
  std::vector<int64_t> lo = getInts(offsets), shape = getInts(globalShape);
  size_t rank = v.sizes.size();
  if (lo.size() != rank || shape.size() != rank)
    fatal("fill_hash: offsets and shape do not match the tile's rank");
  uint64_t base = hash(seed * 0x100000001b3ull + stream);
  std::vector<int64_t> idx(rank, 0);
  forEach(v, std::vector<int64_t>(rank, 0), v.sizes,
          [&](int64_t off, int64_t linear) {
            // The element's global row-major index.
            int64_t rem = linear, global = 0, inner = 1;
            for (size_t d = rank; d-- > 0;) {
              int64_t i = rem % v.sizes[d];
              rem /= v.sizes[d];
              global += (lo[d] + i) * inner;
              inner *= shape[d];
            }
            double u = double(hash(base ^ uint64_t(global)) >> 11) /
                       double(uint64_t(1) << 53);
            double x = nonNegative ? u * scale : (2 * u - 1) * scale;
            if (type == TOFU_I32 || type == TOFU_I64) {
              // An integer in [0, scale): an index such as a token id.
              int64_t n =
                  std::min<int64_t>(int64_t(u * scale), int64_t(scale) - 1);
              if (type == TOFU_I32) {
                int32_t m = int32_t(n);
                std::memcpy(v.data + off * eb, &m, 4);
              } else {
                std::memcpy(v.data + off * eb, &n, 8);
              }
            } else if (type == TOFU_F32) {
              float f = float(x);
              std::memcpy(v.data + off * eb, &f, 4);
            } else {
              std::memcpy(v.data + off * eb, &x, 8);
            }
          });
}

// tofu_fetch for other element types: a call's unranked buffers name the
// element type, so each has its own declaration; the move is in bytes.
#define TOFU_FETCH_ALIAS(suffix)                                               \
  void _mlir_ciface_tofu_fetch_##suffix(                                       \
      TofuUnrankedMemRef *src, TofuUnrankedMemRef *dst,                        \
      TofuUnrankedMemRef *srcOffsets, TofuUnrankedMemRef *dstOffsets,          \
      int64_t elementBytes) {                                                  \
    _mlir_ciface_tofu_fetch(src, dst, srcOffsets, dstOffsets, elementBytes);   \
  }
TOFU_FETCH_ALIAS(f64)
TOFU_FETCH_ALIAS(i32)
TOFU_FETCH_ALIAS(i64)
#undef TOFU_FETCH_ALIAS

#define TOFU_GATHER_ALIAS(suffix)                                              \
  void _mlir_ciface_tofu_all_gather_##suffix(                                  \
      TofuUnrankedMemRef *src, TofuUnrankedMemRef *dst,                        \
      TofuUnrankedMemRef *grid, int64_t axes, int64_t dim,                     \
      int64_t elementBytes) {                                                  \
    _mlir_ciface_tofu_all_gather(src, dst, grid, axes, dim, elementBytes);     \
  }                                                                            \
  void _mlir_ciface_tofu_all_to_all_##suffix(                                  \
      TofuUnrankedMemRef *src, TofuUnrankedMemRef *dst,                        \
      TofuUnrankedMemRef *grid, int64_t axes, int64_t splitDim,                \
      int64_t concatDim, int64_t elementBytes) {                               \
    _mlir_ciface_tofu_all_to_all(src, dst, grid, axes, splitDim, concatDim,    \
                                 elementBytes);                                \
  }
TOFU_GATHER_ALIAS(f64)
TOFU_GATHER_ALIAS(i32)
TOFU_GATHER_ALIAS(i64)
#undef TOFU_GATHER_ALIAS

// The same for integer tiles, declared separately since a call's unranked
// buffer type names its element type.
#define TOFU_FILL_HASH_ALIAS(suffix)                                           \
  void _mlir_ciface_tofu_fill_hash_##suffix(                                   \
      TofuUnrankedMemRef *tile, TofuUnrankedMemRef *offsets,                   \
      TofuUnrankedMemRef *globalShape, uint64_t seed, uint64_t stream,         \
      double scale, int64_t nonNegative, int64_t type) {                       \
    _mlir_ciface_tofu_fill_hash(tile, offsets, globalShape, seed, stream,      \
                                scale, nonNegative, type);                     \
  }
TOFU_FILL_HASH_ALIAS(i32)
TOFU_FILL_HASH_ALIAS(i64)
#undef TOFU_FILL_HASH_ALIAS

} // extern "C"

namespace {
/// The elements of a tile (`x`) and of the same region of a whole
/// reference tensor at `offsets` (`y`), in row-major order, and the largest
/// magnitude of the whole reference.
double readTileAndReference(TofuUnrankedMemRef *tile,
                            TofuUnrankedMemRef *reference,
                            TofuUnrankedMemRef *offsets, int64_t type,
                            std::vector<double> &x, std::vector<double> &y) {
  int64_t eb = bytesOf(type);
  View a = getView(tile, eb), b = getView(reference, eb);
  std::vector<int64_t> lo = getInts(offsets);
  if (lo.size() != a.sizes.size() || b.sizes.size() != a.sizes.size())
    fatal("difference: the tile and the reference differ in rank");
  auto read = [&](const View &v, int64_t off) {
    if (type == TOFU_F32) {
      float f;
      std::memcpy(&f, v.data + off * eb, 4);
      return double(f);
    }
    double d;
    std::memcpy(&d, v.data + off * eb, 8);
    return d;
  };
  double scale = 0;
  forEach(b, std::vector<int64_t>(b.sizes.size(), 0), b.sizes,
          [&](int64_t off, int64_t) {
            scale = std::max(scale, std::fabs(read(b, off)));
          });
  forEach(a, std::vector<int64_t>(a.sizes.size(), 0), a.sizes,
          [&](int64_t off, int64_t) { x.push_back(read(a, off)); });
  forEach(b, lo, a.sizes,
          [&](int64_t off, int64_t) { y.push_back(read(b, off)); });
  return scale;
}
} // namespace

extern "C" {

double _mlir_ciface_tofu_max_difference(TofuUnrankedMemRef *tile,
                                        TofuUnrankedMemRef *reference,
                                        TofuUnrankedMemRef *offsets,
                                        int64_t type) {
  std::vector<double> x, y;
  // The scale of the whole reference tensor, at least 1e-3, so that
  // tensors that are zero up to rounding compare absolutely.
  double scale = readTileAndReference(tile, reference, offsets, type, x, y);
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    double d = std::fabs(x[i] - y[i]);
    if (std::isnan(d))
      d = INFINITY;
    worst = std::max(worst, d);
  }
  return worst / std::max(scale, 1e-3);
}

double _mlir_ciface_tofu_norm_difference(TofuUnrankedMemRef *tile,
                                         TofuUnrankedMemRef *reference,
                                         TofuUnrankedMemRef *offsets,
                                         int64_t type) {
  ensureInitialized();
  std::vector<double> x, y;
  readTileAndReference(tile, reference, offsets, type, x, y);
  // Every element of a tensor is held by as many ranks as any other (a
  // layout replicates along whole grid axes), so the sums over all tiles
  // are the tensor's sums times one factor, which the ratio cancels.
  double sums[2] = {0, 0}, total[2] = {0, 0};
  for (size_t i = 0; i < x.size(); ++i) {
    sums[0] += (x[i] - y[i]) * (x[i] - y[i]);
    sums[1] += y[i] * y[i];
  }
  total[0] = sums[0];
  total[1] = sums[1];
  reduceOverJob(total, 2, TOFU_SUM);
  if (std::isnan(total[0]))
    return INFINITY;
  return total[1] > 0 ? std::sqrt(total[0] / total[1]) : std::sqrt(total[0]);
}

void tofu_print_difference(double difference, double normDifference) {
  ensureInitialized();
  double worst = difference;
  reduceOverJob(&worst, 1, TOFU_MAX);
  if (tofu_rank() == 0) {
    std::printf("relative norm difference: %.3g\n", normDifference);
    std::printf("max relative difference: %.3g\n", worst);
    std::fflush(stdout);
  }
}

/// The counter of received bytes of `kind` (TOFU_COUNT_*).
static double &getReceivedBytes(int64_t kind) {
  State &s = state();
  double *counts[5] = {&s.fetchBytes, &s.allGatherBytes, &s.allToAllBytes,
                       &s.reduceScatterBytes, &s.allReduceBytes};
  if (kind < 0 || kind > 4)
    fatal("the received bytes of an unknown collective");
  return *counts[kind];
}

void tofu_count_received_bytes(int64_t kind, double bytes) {
  getReceivedBytes(kind) += bytes;
}

double tofu_received_bytes(int64_t kind) { return getReceivedBytes(kind); }

void tofu_print_statistics(int64_t steps) {
  ensureInitialized();
  State &s = state();
  double mine[5] = {s.fetchBytes, s.allGatherBytes, s.allToAllBytes,
                    s.reduceScatterBytes, s.allReduceBytes};
  double sum[5] = {mine[0], mine[1], mine[2], mine[3], mine[4]};
  reduceOverJob(sum, 5, TOFU_SUM);
  double maxPeak = double(s.peakBytes);
  reduceOverJob(&maxPeak, 1, TOFU_MAX);
  double calls[2] = {double(s.collectives), double(s.sharedCollectives)};
  reduceOverJob(calls, 2, TOFU_SUM);
  if (tofu_rank() != 0)
    return;
  if (s.profileTop > 0) {
    std::vector<std::pair<int64_t, int64_t>> top = s.atPeak;
    std::sort(top.begin(), top.end(), std::greater<>());
    std::printf("rank 0: %lld buffers live at its peak of %lld bytes, the "
                "largest (bytes, allocation number):\n",
                (long long)top.size(), (long long)s.peakBytes);
    for (size_t i = 0; i < top.size() && (int64_t)i < s.profileTop; ++i)
      std::printf("  %lld #%lld\n", (long long)top[i].first,
                  (long long)top[i].second);
  }
  double n = steps > 0 ? double(steps) : 1.0;
  std::printf("measured bytes per step: %.0f (fetch %.0f, all_gather %.0f, "
              "all_to_all %.0f, reduce_scatter %.0f, all_reduce %.0f)\n",
              (sum[0] + sum[1] + sum[2] + sum[3] + sum[4]) / n, sum[0] / n,
              sum[1] / n, sum[2] / n, sum[3] / n, sum[4] / n);
  if (calls[0] > 0)
    std::printf("collective calls per step: %.0f over all ranks, %.0f of "
                "them through shared memory\n",
                calls[0] / n, calls[1] / n);
  // No host buffer went through the allocation hooks when the step runs
  // on a GPU, whose runtime reports the device's peak itself.
  if (maxPeak > 0)
    std::printf("peak live bytes per rank: %.0f\n", maxPeak);
  std::fflush(stdout);
}

// Allocation hooks. Each block starts with a header of `alignment` bytes
// (at least 16) whose last 16 bytes hold the size and the header length.
} // extern "C"

namespace {

/// Freed blocks by their malloc size and alignment, handed out again to the
/// next request of that size. A step allocates and frees the same sizes in
/// the same order every time, so after the first step no buffer comes from
/// the system: fresh pages from mmap fault on first touch, which on some
/// hosts costs more than the convolution that writes them, and glibc's bins
/// for the small tiles of a partitioned step (a few KB, hundreds per step)
/// took 5% of an LSTM rank's time. The free lists keep their capacity, so
/// in the steady state neither allocating nor freeing calls malloc. The
/// live-byte counts stay those of the program's buffers. Under
/// AddressSanitizer blocks are freed at once, so that a use after free is
/// still caught.
struct BlockKey {
  uint64_t total, alignment;
  bool operator==(const BlockKey &o) const {
    return total == o.total && alignment == o.alignment;
  }
};
struct BlockKeyHash {
  size_t operator()(const BlockKey &k) const {
    return std::hash<uint64_t>()(k.total * 64 + k.alignment);
  }
};

/// Each rank's own: an in-process worker (Workers.h) frees what it
/// allocated.
std::unordered_map<BlockKey, std::vector<char *>, BlockKeyHash> &freeBlocks() {
  static thread_local std::unordered_map<BlockKey, std::vector<char *>,
                                         BlockKeyHash>
      blocks;
  return blocks;
}

bool cachesBlocks() {
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
  return false;
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
  return false;
#endif
  return true;
}

} // namespace

extern "C" {

static void *allocate(uint64_t alignment, uint64_t size) {
  uint64_t header = std::max<uint64_t>(24, alignment);
  uint64_t total = size + header + alignment;
  char *base = nullptr;
  auto &blocks = freeBlocks();
  if (auto it = blocks.find({total, alignment});
      it != blocks.end() && !it->second.empty()) {
    base = it->second.back();
    it->second.pop_back();
  } else {
    base = static_cast<char *>(std::malloc(total));
  }
  if (!base)
    fatal("out of memory");
  uintptr_t start = reinterpret_cast<uintptr_t>(base) + header;
  if (alignment > 1)
    start = (start + alignment - 1) / alignment * alignment;
  char *ptr = reinterpret_cast<char *>(start);
  uint64_t meta[3] = {alignment, size, uint64_t(ptr - base)};
  std::memcpy(ptr - 24, meta, 24);
  State &s = state();
  s.liveBytes += size;
  if (s.profileTop < 0) {
    const char *top = std::getenv("TOFU_PEAK_BUFFERS");
    s.profileTop = top ? std::max(0ll, std::atoll(top)) : 0;
  }
  if (s.profileTop > 0)
    s.live[ptr] = {int64_t(size), s.allocations};
  ++s.allocations;
  if (s.liveBytes > s.peakBytes) {
    s.peakBytes = s.liveBytes;
    if (s.profileTop > 0) {
      s.atPeak.clear();
      for (auto &[p, block] : s.live)
        s.atPeak.push_back(block);
    }
  }
  return ptr;
}

void *_mlir_memref_to_llvm_alloc(uint64_t size) { return allocate(16, size); }

void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size) {
  return allocate(alignment, size);
}

void _mlir_memref_to_llvm_free(void *ptr) {
  if (!ptr)
    return;
  uint64_t meta[3];
  std::memcpy(meta, static_cast<char *>(ptr) - 24, 24);
  uint64_t alignment = meta[0], size = meta[1];
  State &s = state();
  s.liveBytes -= size;
  if (s.profileTop > 0)
    s.live.erase(ptr);
  char *base = static_cast<char *>(ptr) - meta[2];
  uint64_t total = size + std::max<uint64_t>(24, alignment) + alignment;
  if (cachesBlocks())
    freeBlocks()[{total, alignment}].push_back(base);
  else
    std::free(base);
}

} // extern "C"
