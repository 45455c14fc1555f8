//===- Workers.cpp - In-process workers of the CPU runtime ----------------===//
//
// Implements Workers.h: a team of threads, its barrier, and the
// collectives that read the peers' tiles in place. Gathers, all-to-alls
// and fetches are lists of copy parts (CopyParts.h), the same table that
// the GPU's MultiFetch kernel executes; a fetch's parts come from
// FetchPlan.h's getMultiFetchParts, the plan of the MPI and NCCL runtimes.
// Reductions combine the group's tiles in group order, so a run gives the
// same bits every time.
//
//===----------------------------------------------------------------------===//

#include "Workers.h"

#include "tofu/Runtime/CopyParts.h"
#include "tofu/Runtime/FetchPlan.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace {

using namespace tofu::runtime;
namespace copy = tofu::copy;
namespace fetch = tofu::fetch;

void pause() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// A reusable barrier. While the team fits the cores a waiting worker
/// spins for a while (a step of a small model meets its peers every few
/// microseconds); then, or always when the team oversubscribes the cores,
/// it sleeps until the last one arrives.
class Barrier {
public:
  explicit Barrier(int size)
      : size(size),
        spins(unsigned(size) <= std::thread::hardware_concurrency() ? 20000
                                                                     : 0) {}

  void wait() {
    unsigned gen = generation.load(std::memory_order_acquire);
    if (arrived.fetch_add(1, std::memory_order_acq_rel) + 1 == size) {
      arrived.store(0, std::memory_order_relaxed);
      {
        std::lock_guard<std::mutex> lock(mutex);
        generation.store(gen + 1, std::memory_order_release);
      }
      wake.notify_all();
      return;
    }
    for (int i = 0; i < spins; ++i) {
      if (generation.load(std::memory_order_acquire) != gen)
        return;
      pause();
    }
    std::unique_lock<std::mutex> lock(mutex);
    wake.wait(lock, [&] {
      return generation.load(std::memory_order_acquire) != gen;
    });
  }

private:
  const int size, spins;
  std::atomic<int> arrived{0};
  std::atomic<unsigned> generation{0};
  std::mutex mutex;
  std::condition_variable wake;
};

struct Team {
  explicit Team(int size) : size(size), barrier(size), slots(size) {}
  const int size;
  Barrier barrier;
  /// What each worker published for the collective in progress.
  std::vector<const void *> slots;
};

Team *team = nullptr;
thread_local int workerRank = -1;

/// Publishes this worker's operand and waits for the team's: then
/// peer<T>(r) is worker r's until the next barrier.
void publish(const void *mine) {
  team->slots[workerRank] = mine;
  team->barrier.wait();
}
template <typename T> const T &peer(int r) {
  return *static_cast<const T *>(team->slots[r]);
}

/// The workers that differ from this one only along the grid axes in
/// `axes`, in the order of their index over those axes (the MPI runtime's
/// communicator of the same grid and axes), and this worker's position.
struct Group {
  std::vector<int> members;
  int me = 0;
  int size() const { return int(members.size()); }
};

const Group &getGroup(const std::vector<int64_t> &grid, int64_t axes) {
  thread_local std::map<std::vector<int64_t>, Group> groups;
  std::vector<int64_t> key = grid;
  key.push_back(axes);
  auto it = groups.find(key);
  if (it != groups.end())
    return it->second;
  int64_t total = 1;
  for (int64_t k : grid)
    total *= k;
  if (total != team->size)
    fatal("the grid does not have as many ranks as the job");
  GroupPosition mine = getGroupPosition(grid, axes, workerRank);
  std::vector<std::pair<int, int>> byKey;
  for (int r = 0; r < team->size; ++r) {
    GroupPosition p = getGroupPosition(grid, axes, r);
    if (p.color == mine.color)
      byKey.push_back({p.key, r});
  }
  std::sort(byKey.begin(), byKey.end());
  Group g;
  for (auto [k, r] : byKey) {
    if (r == workerRank)
      g.me = g.size();
    g.members.push_back(r);
  }
  return groups[key] = g;
}

/// Adds the copy of the box of `sizes` at `fromLo` in `from` to `toLo` in
/// `to`.
void addPart(std::vector<copy::Part> &parts, const View &from,
             const std::vector<int64_t> &fromLo, const View &to,
             const std::vector<int64_t> &toLo,
             const std::vector<int64_t> &sizes) {
  copy::Part part;
  if (!copy::makePart(getAddress(from, fromLo), from.strides,
                      getAddress(to, toLo), to.strides, sizes, part))
    fatal("a collective's tensors have more dimensions than a copy takes");
  parts.push_back(part);
}

/// Executes copy parts a row at a time (the kernel's mapping, CopyParts.h,
/// with the innermost dimension copied as one run).
void runParts(std::vector<copy::Part> &parts, int64_t eb) {
  copy::numberParts(parts);
  for (const copy::Part &p : parts) {
    if (p.rank == 0) {
      std::memcpy(p.target, p.source, eb);
      continue;
    }
    int last = p.rank - 1;
    int64_t n = p.sizes[last];
    int64_t rows = copy::getVolume(p) / n;
    int64_t idx[copy::kMaxRank] = {};
    for (int64_t row = 0; row < rows; ++row) {
      int64_t from = 0, to = 0;
      for (int d = 0; d < last; ++d) {
        from += idx[d] * p.sourceStrides[d];
        to += idx[d] * p.targetStrides[d];
      }
      copyRow(p.source + from * eb, p.sourceStrides[last], p.target + to * eb,
              p.targetStrides[last], n, eb);
      for (int d = last - 1; d >= 0 && ++idx[d] == p.sizes[d]; --d)
        idx[d] = 0;
    }
  }
}

/// The bytes a view spans, [first, last).
std::pair<const char *, const char *> getExtent(const View &v) {
  const char *first = v.data, *last = v.data + v.elementBytes;
  for (size_t d = 0; d < v.sizes.size(); ++d) {
    if (v.sizes[d] <= 0)
      return {v.data, v.data};
    int64_t span = (v.sizes[d] - 1) * v.strides[d] * v.elementBytes;
    (span < 0 ? first : last) += span;
  }
  return {first, last};
}

bool overlaps(const View &a, const View &b) {
  auto [a0, a1] = getExtent(a);
  auto [b0, b1] = getExtent(b);
  return a0 < b1 && b0 < a1;
}

/// Where a collective writes: `out`, or a staging buffer when `out`
/// overlaps this worker's input, which the peers read until the second
/// barrier; finish() then copies it to `out`.
struct Target {
  Target(const View &in, const View &out) : out(out), view(out) {
    if (!overlaps(in, out))
      return;
    staging.resize(out.volume() * out.elementBytes);
    view = getDenseView(staging.data(), out.sizes, out.elementBytes);
  }
  void finish() {
    if (!staging.empty())
      copyBox(view, std::vector<int64_t>(out.sizes.size(), 0), out,
              std::vector<int64_t>(out.sizes.size(), 0), out.sizes);
  }
  const View &out;
  View view;
  std::vector<char> staging;
};

template <typename T>
void combineRow(T *acc, const T *from, int64_t stride, int64_t n,
                int64_t kind) {
  switch (kind) {
  case TOFU_SUM:
    for (int64_t j = 0; j < n; ++j)
      acc[j] += from[j * stride];
    return;
  case TOFU_MAX:
    for (int64_t j = 0; j < n; ++j)
      acc[j] = std::max(acc[j], from[j * stride]);
    return;
  case TOFU_MIN:
    for (int64_t j = 0; j < n; ++j)
      acc[j] = std::min(acc[j], from[j * stride]);
    return;
  case TOFU_PROD:
    for (int64_t j = 0; j < n; ++j)
      acc[j] *= from[j * stride];
    return;
  default:
    fatal("unsupported reduction");
  }
}

/// acc[0 .. n) op= the row of `n` elements at `from`, `stride` apart.
void combineRow(char *acc, const char *from, int64_t stride, int64_t n,
                int64_t kind, int64_t type) {
  switch (type) {
  case TOFU_F32:
    return combineRow(reinterpret_cast<float *>(acc),
                      reinterpret_cast<const float *>(from), stride, n, kind);
  case TOFU_F64:
    return combineRow(reinterpret_cast<double *>(acc),
                      reinterpret_cast<const double *>(from), stride, n, kind);
  case TOFU_I32:
    return combineRow(reinterpret_cast<int32_t *>(acc),
                      reinterpret_cast<const int32_t *>(from), stride, n,
                      kind);
  case TOFU_I64:
    return combineRow(reinterpret_cast<int64_t *>(acc),
                      reinterpret_cast<const int64_t *>(from), stride, n,
                      kind);
  default:
    fatal("unsupported element type");
  }
}

/// Writes to `out` the reduction over the group of the box of out's shape
/// at `lo` in each member's input (published by the caller's publish()),
/// in group order; then waits for the team.
void reduceGroup(const Group &g, const std::vector<int64_t> &lo,
                 const View &out, int64_t kind, int64_t type) {
  int64_t eb = out.elementBytes;
  thread_local std::vector<char> buffer;
  buffer.resize(out.volume() * eb);
  View acc = getDenseView(buffer.data(), out.sizes, eb);
  std::vector<int64_t> zero(out.sizes.size(), 0);
  copyBox(peer<View>(g.members[0]), lo, acc, zero, out.sizes);
  for (int m = 1; m < g.size(); ++m) {
    const View &from = peer<View>(g.members[m]);
    int64_t stride = getInnerStride(from);
    forEachRow(from, lo, out.sizes, [&](int64_t off, int64_t i, int64_t n) {
      combineRow(buffer.data() + i * eb, from.data + off * eb, stride, n, kind,
                 type);
    });
  }
  // The result goes out only when no peer reads this worker's input any
  // more: the two may be one buffer.
  team->barrier.wait();
  copyBox(acc, zero, out, zero, out.sizes);
}

} // namespace

namespace tofu {
namespace runtime {
namespace workers {

bool active() { return workerRank >= 0; }
int rank() { return workerRank; }
int size() { return team->size; }
void barrier() { team->barrier.wait(); }

void reduceDoubles(double *values, int n, int64_t kind) {
  publish(values);
  std::vector<double> result(&peer<double>(0), &peer<double>(0) + n);
  for (int r = 1; r < team->size; ++r)
    combineRow(result.data(), &peer<double>(r), 1, n, kind);
  team->barrier.wait();
  std::copy(result.begin(), result.end(), values);
}

void leave(int code) {
  if (workerRank == 0) {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  for (;;)
    std::this_thread::sleep_for(std::chrono::seconds(1));
}

int allGather(const View &in, const View &out,
              const std::vector<int64_t> &grid, int64_t axes, int64_t dim) {
  const Group &g = getGroup(grid, axes);
  checkShapes(in, out, dim, -1, g.size(), "all_gather");
  Target target(in, out);
  publish(&in);
  std::vector<copy::Part> parts;
  std::vector<int64_t> zero(in.sizes.size(), 0);
  for (int c = 0; c < g.size(); ++c) {
    std::vector<int64_t> lo = zero;
    lo[dim] = c * in.sizes[dim];
    addPart(parts, peer<View>(g.members[c]), zero, target.view, lo, in.sizes);
  }
  runParts(parts, in.elementBytes);
  team->barrier.wait();
  target.finish();
  return g.size();
}

int allToAll(const View &in, const View &out, const std::vector<int64_t> &grid,
             int64_t axes, int64_t splitDim, int64_t concatDim) {
  const Group &g = getGroup(grid, axes);
  checkShapes(in, out, concatDim, splitDim, g.size(), "all_to_all");
  // Member m's chunk `me` along splitDim lands at position m along
  // concatDim.
  std::vector<int64_t> shape = in.sizes;
  shape[splitDim] = out.sizes[splitDim];
  Target target(in, out);
  publish(&in);
  std::vector<copy::Part> parts;
  std::vector<int64_t> zero(in.sizes.size(), 0);
  for (int m = 0; m < g.size(); ++m) {
    std::vector<int64_t> fromLo = zero, toLo = zero;
    fromLo[splitDim] = g.me * shape[splitDim];
    toLo[concatDim] = m * shape[concatDim];
    addPart(parts, peer<View>(g.members[m]), fromLo, target.view, toLo, shape);
  }
  runParts(parts, in.elementBytes);
  team->barrier.wait();
  target.finish();
  return g.size();
}

int allReduce(const View &in, const View &out, const std::vector<int64_t> &grid,
              int64_t axes, int64_t kind, int64_t type) {
  const Group &g = getGroup(grid, axes);
  if (in.sizes != out.sizes)
    fatal("all_reduce: the result does not have the input's shape");
  publish(&in);
  reduceGroup(g, std::vector<int64_t>(in.sizes.size(), 0), out, kind, type);
  return g.size();
}

int reduceScatter(const View &in, const View &out,
                  const std::vector<int64_t> &grid, int64_t axis, int64_t dim,
                  int64_t kind, int64_t type) {
  const Group &g = getGroup(grid, int64_t(1) << axis);
  checkShapes(out, in, dim, -1, g.size(), "reduce_scatter");
  std::vector<int64_t> lo(in.sizes.size(), 0);
  lo[dim] = g.me * out.sizes[dim];
  publish(&in);
  reduceGroup(g, lo, out, kind, type);
  return g.size();
}

int64_t fetch(const View &in, const View &out,
              const std::vector<int64_t> &heldOffsets,
              const std::vector<int64_t> &wantedOffsets) {
  int k = team->size, me = workerRank;
  if (heldOffsets.size() != in.sizes.size() * k ||
      wantedOffsets.size() != out.sizes.size() * k)
    fatal("a fetch's offsets do not match the number of ranks");
  std::vector<fetch::Box> held = fetch::getBoxes(heldOffsets, in.sizes, k);
  std::vector<fetch::Box> wanted = fetch::getBoxes(wantedOffsets, out.sizes, k);
  std::vector<fetch::Part> plan = fetch::planFetch(held, wanted);
  Target target(in, out);
  publish(&in);
  std::vector<fetch::Tile> tiles(k);
  for (int r = 0; r < k; ++r)
    tiles[r] = {peer<View>(r).data, peer<View>(r).strides};
  fetch::Tile to{target.view.data, target.view.strides};
  std::vector<copy::Part> parts;
  if (!fetch::getMultiFetchParts(plan, held, wanted, me, tiles, to,
                                 in.elementBytes, parts))
    fatal("a fetch's tensors have more dimensions than a copy takes");
  runParts(parts, in.elementBytes);
  team->barrier.wait();
  target.finish();
  int64_t received = 0;
  for (const fetch::Part &p : plan)
    if (p.receiver == me && p.source != me)
      received += p.box.volume();
  return received;
}

} // namespace workers
} // namespace runtime
} // namespace tofu

extern "C" void tofu_workers_run(int64_t count, void (*body)(void *),
                                 void *argument) {
  if (count < 1 || count > 4096)
    fatal("the number of workers must be in [1, 4096]");
  if (team)
    fatal("workers cannot start workers");
  Team t{int(count)};
  team = &t;
  std::vector<std::thread> threads;
  for (int r = 1; r < int(count); ++r)
    threads.emplace_back([r, body, argument] {
      workerRank = r;
      body(argument);
    });
  workerRank = 0;
  body(argument);
  workerRank = -1;
  for (std::thread &thread : threads)
    thread.join();
  team = nullptr;
}
