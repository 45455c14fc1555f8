//===- Workers.h - In-process workers of the CPU runtime ------*- C++ -*-===//
//
// `tofu-run --workers K` runs the K ranks of a partitioned step as K threads
// of one process instead of K MPI processes. Each thread is a worker: it
// runs the whole driver with its own rank and its own runtime state (the
// thread-local State, allocator and library caches), and its collectives
// read the peers' tiles directly, through the copy parts that the GPU's
// MultiFetch kernel executes (CopyParts.h, FetchPlan.h). No byte goes
// through a staging buffer unless a result overlaps the worker's own
// input, which the peers read.
//
// Every worker makes the same sequence of runtime calls (the program is
// SPMD), so each collective is a rendezvous of the whole team: publish the
// operands, wait for every worker, read the peers', wait again before the
// operands may change or be freed.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CPU_WORKERS_H
#define TOFU_RUNTIME_CPU_WORKERS_H

#include "RuntimeSupport.h"

#include "tofu/Runtime/CopyParts.h"

#include <cstdint>
#include <functional>
#include <vector>

namespace tofu {
namespace runtime {
namespace workers {

namespace copy = tofu::copy;

/// Whether the calling thread is a worker of a team.
bool active();
/// The calling worker's rank and its team's size (active() only).
int rank();
int size();
/// Waits until every worker of the team has called it.
void barrier();
/// Publishes `mine` for the collective in progress and waits for the
/// team: then peer(r) is what worker r published, until the next barrier.
void publish(const void *mine);
const void *peer(int r);
/// Every worker's rank, in order (the group of a fetch).
std::vector<int> getAllRanks();
/// Reduces `n` doubles over the team in rank order (TOFU_SUM or TOFU_MAX):
/// every worker gets the result in `values`.
void reduceDoubles(double *values, int n, int64_t kind);
/// Leaves the process with `code` after `explain` printed why: at once from
/// worker 0; from another worker after 10 seconds, in which worker 0, when
/// every worker leaves at the same point, ends the process with its one
/// explanation (an error only one worker meets still ends the run).
[[noreturn]] void leave(int code, const std::function<void()> &explain);

/// The workers that differ from the caller only along the grid axes in
/// `axes` (a bit per axis), in the order of their index over those axes:
/// the MPI runtime's communicator of the same grid and axes.
struct Group {
  std::vector<int> members;
  /// The caller's position in `members`.
  int me = 0;
  int size() const { return int(members.size()); }
};
const Group &getGroup(const std::vector<int64_t> &grid, int64_t axes);

// The plans of the collectives, as copy parts (CopyParts.h) that assemble
// the caller's result `out` from `inputs`, the group members' inputs in
// member order (the peers' published views), whatever memory they live
// in. The CPU executes them here; the GPU's copy and reduction kernels
// execute the same tables (runtime/cuda/Collectives.cpp).
std::vector<copy::Part> planAllGather(const Group &g,
                                      const std::vector<View> &inputs,
                                      const View &out, int64_t dim);
std::vector<copy::Part> planAllToAll(const Group &g,
                                     const std::vector<View> &inputs,
                                     const View &out, int64_t splitDim,
                                     int64_t concatDim);
/// Executes copy parts on the host, and a reduction's parts
/// (planReduction): part 0 copied to the target, the others combined into
/// it in order (TOFU_SUM … TOFU_PROD over TOFU_F32 … TOFU_I64).
void runParts(const std::vector<copy::Part> &parts, int64_t elementBytes);
void runReduction(const std::vector<copy::Part> &parts, int64_t kind,
                  int64_t type);
/// One part per member: the box of out's shape at `lo` in its input, all
/// to `out`; a reduction combines them in member order (reduceElement).
std::vector<copy::Part> planReduction(const std::vector<View> &inputs,
                                      const std::vector<int64_t> &lo,
                                      const View &out);
/// An all-reduce spreads its reduction over the group: member m reduces
/// its slab of the tile, rows [lo, lo + count) of dimension `dim` (the
/// first dimension at least as long as the group), into its result, then
/// copies the other members' slabs from theirs (planSlabGather). `dim` is
/// -1 when no dimension is that long: each member reduces the whole tile.
struct Slab {
  int64_t dim = -1, lo = 0, count = 0;
  /// The slab's low corner and sizes in a tile of `sizes`.
  std::vector<int64_t> getLo(size_t rank) const;
  std::vector<int64_t> getSizes(std::vector<int64_t> sizes) const;
};
Slab getSlab(const std::vector<int64_t> &sizes, int groupSize, int member);
/// A view of the box of `sizes` at `lo` in `v`.
View getSubview(const View &v, const std::vector<int64_t> &lo,
                const std::vector<int64_t> &sizes);
/// The copies of every other member's slab from its result (`results` in
/// member order) into `out`.
std::vector<copy::Part> planSlabGather(const Group &g,
                                       const std::vector<View> &results,
                                       const View &out);
/// The parts of a fetch that the caller receives and copies itself
/// (FetchPlan.h's getMultiFetchParts), from every worker's input
/// (`inputs` in rank order); `received` counts the elements from peers.
std::vector<copy::Part> planFetch(const std::vector<View> &inputs,
                                  const View &out,
                                  const std::vector<int64_t> &heldOffsets,
                                  const std::vector<int64_t> &wantedOffsets,
                                  int64_t &received);

/// Whether two views share a byte.
bool overlaps(const View &a, const View &b);

// The collectives of TofuRuntime.h on the team, executed on the host. Each
// returns the size of the group, for the byte counts, which the caller
// keeps.
int allGather(const View &in, const View &out, const std::vector<int64_t> &grid,
              int64_t axes, int64_t dim);
int allToAll(const View &in, const View &out, const std::vector<int64_t> &grid,
             int64_t axes, int64_t splitDim, int64_t concatDim);
int allReduce(const View &in, const View &out, const std::vector<int64_t> &grid,
              int64_t axes, int64_t kind, int64_t type);
int reduceScatter(const View &in, const View &out,
                  const std::vector<int64_t> &grid, int64_t axis, int64_t dim,
                  int64_t kind, int64_t type);
/// A region fetch (FetchPlan.h); returns the elements this worker received
/// from its peers.
int64_t fetch(const View &in, const View &out,
              const std::vector<int64_t> &heldOffsets,
              const std::vector<int64_t> &wantedOffsets);

} // namespace workers
} // namespace runtime
} // namespace tofu

extern "C" {
/// Runs `body(argument)` on `count` worker threads (ranks 0 .. count - 1)
/// and returns when all have returned. tofu-run's --workers.
void tofu_workers_run(int64_t count, void (*body)(void *), void *argument);
/// The calling worker's rank, -1 outside a team (for the CUDA runtime,
/// which keeps each worker's stream, handles and memory apart).
int64_t tofu_worker_rank(void);
/// The size of the calling worker's team, 0 outside a team (for the CUDA
/// runtime, which spreads the workers over the GPUs).
int64_t tofu_worker_count(void);
}

#endif // TOFU_RUNTIME_CPU_WORKERS_H
