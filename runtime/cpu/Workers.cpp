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

/// Calls f(source offset, target offset, length) for every row of a part
/// (the innermost dimension), in row-major order: the kernel's mapping
/// (CopyParts.h) a row at a time.
template <typename F> void forEachPartRow(const copy::Part &p, F f) {
  if (p.rank == 0) {
    f(int64_t(0), int64_t(0), int64_t(1));
    return;
  }
  int last = p.rank - 1;
  int64_t n = p.sizes[last];
  if (n <= 0)
    return;
  int64_t rows = copy::getVolume(p) / n;
  int64_t idx[copy::kMaxRank] = {};
  for (int64_t row = 0; row < rows; ++row) {
    int64_t from = 0, to = 0;
    for (int d = 0; d < last; ++d) {
      from += idx[d] * p.sourceStrides[d];
      to += idx[d] * p.targetStrides[d];
    }
    f(from, to, n);
    for (int d = last - 1; d >= 0 && ++idx[d] == p.sizes[d]; --d)
      idx[d] = 0;
  }
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

/// Where a collective writes: `out`, or a staging buffer when `out`
/// overlaps this worker's input, which the peers read until the second
/// barrier; finish() then copies it to `out`.
struct Target {
  Target(const View &in, const View &out) : out(out), view(out) {
    if (!workers::overlaps(in, out))
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
void combineRow(T *acc, int64_t accStride, const T *from, int64_t stride,
                int64_t n, copy::Reduction kind) {
  for (int64_t j = 0; j < n; ++j)
    acc[j * accStride] =
        copy::combine(acc[j * accStride], from[j * stride], kind);
}

/// Executes a reduction's parts (planReduction) on the host: part 0 copied
/// to the target, the others combined into it in order, a row at a time.
template <typename T>
void combineParts(const std::vector<copy::Part> &parts, copy::Reduction kind) {
  workers::runParts({parts[0]}, sizeof(T));
  for (size_t m = 1; m < parts.size(); ++m) {
    const copy::Part &p = parts[m];
    int64_t ss = p.rank ? p.sourceStrides[p.rank - 1] : 1;
    int64_t ts = p.rank ? p.targetStrides[p.rank - 1] : 1;
    forEachPartRow(p, [&](int64_t from, int64_t to, int64_t n) {
      combineRow(reinterpret_cast<T *>(p.target) + to, ts,
                 reinterpret_cast<const T *>(p.source) + from, ss, n, kind);
    });
  }
}

/// The inputs the peers published (views), in the order of `ranks`.
std::vector<View> getInputs(const std::vector<int> &ranks) {
  std::vector<View> inputs;
  for (int r : ranks)
    inputs.push_back(*static_cast<const View *>(workers::peer(r)));
  return inputs;
}

/// A collective on the host: publish the input, run the parts that `plan`
/// makes from the inputs into the target, wait for the team, finish.
template <typename Plan, typename Run>
void runCollective(const View &in, const View &out,
                   const std::vector<int> &from, Plan plan, Run run) {
  Target target(in, out);
  workers::publish(&in);
  std::vector<copy::Part> parts = plan(getInputs(from), target.view);
  run(parts);
  team->barrier.wait();
  target.finish();
}

} // namespace

namespace tofu {
namespace runtime {
namespace workers {

/// Executes copy parts on the host.
void runParts(const std::vector<copy::Part> &parts, int64_t eb) {
  for (const copy::Part &p : parts) {
    int64_t ss = p.rank ? p.sourceStrides[p.rank - 1] : 1;
    int64_t ts = p.rank ? p.targetStrides[p.rank - 1] : 1;
    forEachPartRow(p, [&](int64_t from, int64_t to, int64_t n) {
      copyRow(p.source + from * eb, ss, p.target + to * eb, ts, n, eb);
    });
  }
}

void runReduction(const std::vector<copy::Part> &parts, int64_t kind,
                  int64_t type) {
  if (kind < TOFU_SUM || kind > TOFU_PROD)
    fatal("unsupported reduction");
  auto k = copy::Reduction(kind);
  switch (type) {
  case TOFU_F32:
    return combineParts<float>(parts, k);
  case TOFU_F64:
    return combineParts<double>(parts, k);
  case TOFU_I32:
    return combineParts<int32_t>(parts, k);
  case TOFU_I64:
    return combineParts<int64_t>(parts, k);
  default:
    fatal("unsupported element type");
  }
}

bool active() { return workerRank >= 0; }
int rank() { return workerRank; }
int size() { return team->size; }
void barrier() { team->barrier.wait(); }

void publish(const void *mine) {
  team->slots[workerRank] = mine;
  team->barrier.wait();
}

const void *peer(int r) { return team->slots[r]; }

std::vector<int> getAllRanks() {
  std::vector<int> ranks(team->size);
  for (int r = 0; r < team->size; ++r)
    ranks[r] = r;
  return ranks;
}

void reduceDoubles(double *values, int n, int64_t kind) {
  publish(values);
  auto at = [](int r) { return static_cast<const double *>(peer(r)); };
  std::vector<double> result(at(0), at(0) + n);
  for (int r = 1; r < team->size; ++r)
    combineRow(result.data(), 1, at(r), 1, n, copy::Reduction(kind));
  team->barrier.wait();
  std::copy(result.begin(), result.end(), values);
}

void leave(int code, const std::function<void()> &explain) {
  if (workerRank != 0)
    std::this_thread::sleep_for(std::chrono::seconds(10));
  explain();
  std::fflush(nullptr);
  std::_Exit(code);
}

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

bool overlaps(const View &a, const View &b) {
  auto [a0, a1] = getExtent(a);
  auto [b0, b1] = getExtent(b);
  return a0 < b1 && b0 < a1;
}

std::vector<copy::Part> planAllGather(const Group &g,
                                      const std::vector<View> &inputs,
                                      const View &out, int64_t dim) {
  std::vector<copy::Part> parts;
  const std::vector<int64_t> &sizes = inputs[g.me].sizes;
  std::vector<int64_t> zero(sizes.size(), 0);
  for (int c = 0; c < g.size(); ++c) {
    std::vector<int64_t> lo = zero;
    lo[dim] = c * sizes[dim];
    addPart(parts, inputs[c], zero, out, lo, sizes);
  }
  return parts;
}

std::vector<copy::Part> planAllToAll(const Group &g,
                                     const std::vector<View> &inputs,
                                     const View &out, int64_t splitDim,
                                     int64_t concatDim) {
  // Member m's chunk `me` along splitDim lands at position m along
  // concatDim.
  std::vector<int64_t> shape = inputs[g.me].sizes;
  shape[splitDim] = out.sizes[splitDim];
  std::vector<copy::Part> parts;
  std::vector<int64_t> zero(shape.size(), 0);
  for (int m = 0; m < g.size(); ++m) {
    std::vector<int64_t> fromLo = zero, toLo = zero;
    fromLo[splitDim] = g.me * shape[splitDim];
    toLo[concatDim] = m * shape[concatDim];
    addPart(parts, inputs[m], fromLo, out, toLo, shape);
  }
  return parts;
}

std::vector<copy::Part> planReduction(const std::vector<View> &inputs,
                                      const std::vector<int64_t> &lo,
                                      const View &out) {
  std::vector<copy::Part> parts;
  for (const View &in : inputs)
    addPart(parts, in, lo, out, std::vector<int64_t>(lo.size(), 0), out.sizes);
  return parts;
}

std::vector<copy::Part> planFetch(const std::vector<View> &inputs,
                                  const View &out,
                                  const std::vector<int64_t> &heldOffsets,
                                  const std::vector<int64_t> &wantedOffsets,
                                  int64_t &received) {
  int k = int(inputs.size()), me = workerRank;
  const View &in = inputs[me];
  std::vector<fetch::Box> held = fetch::getBoxes(heldOffsets, in.sizes, k);
  std::vector<fetch::Box> wanted = fetch::getBoxes(wantedOffsets, out.sizes, k);
  std::vector<fetch::Part> plan = fetch::planFetch(held, wanted);
  std::vector<fetch::Tile> tiles(k);
  for (int r = 0; r < k; ++r)
    tiles[r] = {inputs[r].data, inputs[r].strides};
  std::vector<copy::Part> parts;
  if (!fetch::getMultiFetchParts(plan, held, wanted, me, tiles,
                                 {out.data, out.strides}, in.elementBytes,
                                 parts))
    fatal("a fetch's tensors have more dimensions than a copy takes");
  received = 0;
  for (const fetch::Part &p : plan)
    if (p.receiver == me && p.source != me)
      received += p.box.volume();
  return parts;
}

int allGather(const View &in, const View &out, const std::vector<int64_t> &grid,
              int64_t axes, int64_t dim) {
  const Group &g = getGroup(grid, axes);
  checkShapes(in, out, dim, -1, g.size(), "all_gather");
  runCollective(
      in, out, g.members,
      [&](const std::vector<View> &inputs, const View &target) {
        return planAllGather(g, inputs, target, dim);
      },
      [&](const std::vector<copy::Part> &parts) {
        runParts(parts, in.elementBytes);
      });
  return g.size();
}

int allToAll(const View &in, const View &out, const std::vector<int64_t> &grid,
             int64_t axes, int64_t splitDim, int64_t concatDim) {
  const Group &g = getGroup(grid, axes);
  checkShapes(in, out, concatDim, splitDim, g.size(), "all_to_all");
  runCollective(
      in, out, g.members,
      [&](const std::vector<View> &inputs, const View &target) {
        return planAllToAll(g, inputs, target, splitDim, concatDim);
      },
      [&](const std::vector<copy::Part> &parts) {
        runParts(parts, in.elementBytes);
      });
  return g.size();
}

/// A reduction over the group of the box of out's shape at `lo` in each
/// member's input.
void reduce(const Group &g, const View &in, const View &out,
            const std::vector<int64_t> &lo, int64_t kind, int64_t type) {
  runCollective(
      in, out, g.members,
      [&](const std::vector<View> &inputs, const View &target) {
        return planReduction(inputs, lo, target);
      },
      [&](const std::vector<copy::Part> &parts) {
        runReduction(parts, kind, type);
      });
}

std::vector<int64_t> Slab::getLo(size_t rank) const {
  std::vector<int64_t> lo(rank, 0);
  if (dim >= 0)
    lo[dim] = this->lo;
  return lo;
}

std::vector<int64_t> Slab::getSizes(std::vector<int64_t> sizes) const {
  if (dim >= 0)
    sizes[dim] = count;
  return sizes;
}

Slab getSlab(const std::vector<int64_t> &sizes, int groupSize, int member) {
  Slab slab;
  for (size_t d = 0; d < sizes.size() && slab.dim < 0; ++d)
    if (groupSize > 1 && sizes[d] >= groupSize) {
      slab.dim = int64_t(d);
      slab.lo = sizes[d] * member / groupSize;
      slab.count = sizes[d] * (member + 1) / groupSize - slab.lo;
    }
  return slab;
}

View getSubview(const View &v, const std::vector<int64_t> &lo,
                const std::vector<int64_t> &sizes) {
  View sub = v;
  sub.data = getAddress(v, lo);
  sub.sizes = sizes;
  return sub;
}

std::vector<copy::Part> planSlabGather(const Group &g,
                                       const std::vector<View> &results,
                                       const View &out) {
  std::vector<copy::Part> parts;
  for (int m = 0; m < g.size(); ++m) {
    if (m == g.me)
      continue;
    Slab slab = getSlab(out.sizes, g.size(), m);
    std::vector<int64_t> lo = slab.getLo(out.sizes.size());
    addPart(parts, results[m], lo, out, lo, slab.getSizes(out.sizes));
  }
  return parts;
}

int allReduce(const View &in, const View &out, const std::vector<int64_t> &grid,
              int64_t axes, int64_t kind, int64_t type) {
  const Group &g = getGroup(grid, axes);
  if (in.sizes != out.sizes)
    fatal("all_reduce: the result does not have the input's shape");
  std::vector<int64_t> zero(in.sizes.size(), 0);
  Slab slab = getSlab(in.sizes, g.size(), g.me);
  if (slab.dim < 0) {
    reduce(g, in, out, zero, kind, type);
    return g.size();
  }
  // Each member reduces its slab into its result, then copies the others'
  // slabs from theirs.
  Target target(in, out);
  View operands[2] = {in, target.view};
  publish(operands);
  std::vector<View> inputs, results;
  for (int r : g.members) {
    inputs.push_back(static_cast<const View *>(peer(r))[0]);
    results.push_back(static_cast<const View *>(peer(r))[1]);
  }
  std::vector<int64_t> lo = slab.getLo(in.sizes.size());
  runReduction(
      planReduction(inputs, lo,
                    getSubview(target.view, lo, slab.getSizes(in.sizes))),
      kind, type);
  team->barrier.wait();
  runParts(planSlabGather(g, results, target.view), in.elementBytes);
  team->barrier.wait();
  target.finish();
  return g.size();
}

int reduceScatter(const View &in, const View &out,
                  const std::vector<int64_t> &grid, int64_t axis, int64_t dim,
                  int64_t kind, int64_t type) {
  const Group &g = getGroup(grid, int64_t(1) << axis);
  checkShapes(out, in, dim, -1, g.size(), "reduce_scatter");
  std::vector<int64_t> lo(in.sizes.size(), 0);
  lo[dim] = g.me * out.sizes[dim];
  reduce(g, in, out, lo, kind, type);
  return g.size();
}

int64_t fetch(const View &in, const View &out,
              const std::vector<int64_t> &heldOffsets,
              const std::vector<int64_t> &wantedOffsets) {
  int k = team->size;
  if (heldOffsets.size() != in.sizes.size() * k ||
      wantedOffsets.size() != out.sizes.size() * k)
    fatal("a fetch's offsets do not match the number of ranks");
  int64_t received = 0;
  runCollective(
      in, out, getAllRanks(),
      [&](const std::vector<View> &inputs, const View &target) {
        return planFetch(inputs, target, heldOffsets, wantedOffsets, received);
      },
      [&](const std::vector<copy::Part> &parts) {
        runParts(parts, in.elementBytes);
      });
  return received;
}

} // namespace workers
} // namespace runtime
} // namespace tofu

extern "C" int64_t tofu_worker_rank(void) { return workerRank; }

extern "C" int64_t tofu_worker_count(void) { return team ? team->size : 0; }

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
