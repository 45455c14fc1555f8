//===- NodeCollectives.cpp - Collectives through shared memory ------------===//

#include "NodeCollectives.h"

#include "Workers.h"

#include "tofu/Runtime/SharedBuffers.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sched.h>
#include <sys/statvfs.h>
#include <thread>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace tofu {
namespace runtime {
namespace node {

namespace {

/// A member's announcements, each on a cache line of its own: the last
/// collective whose input it has written, and the last it has finished
/// reading the others' inputs for.
struct alignas(64) Control {
  std::atomic<uint64_t> published{0};
  char pad[64 - sizeof(std::atomic<uint64_t>)];
  std::atomic<uint64_t> finished{0};
};
static_assert(std::atomic<uint64_t>::is_always_lock_free,
              "shared-memory counters must be lock-free across processes");

/// 1 MiB: the zoo LSTM's batched input product at 2 ranks (reduce-scatters
/// and gathers of 80 and 160 KB) and the MLPs' gathers fit; through MPI
/// they took 5% of the LSTM's step (docs/partition.md).
constexpr int64_t kDefaultBytes = 1 << 20;

/// The size of a buffer of a segment of `members` members:
/// TOFU_CPU_SHM_BYTES, else the default, made smaller where /dev/shm has
/// little free (SharedBuffers.h).
int64_t getBufferBytes(int members) {
  const char *text = std::getenv("TOFU_CPU_SHM_BYTES");
  if (!text || !*text) {
    struct statvfs fs;
    int64_t available = statvfs("/dev/shm", &fs) == 0
                            ? int64_t(fs.f_bavail) * int64_t(fs.f_frsize)
                            : -1;
    return getSharedBufferBytes(kDefaultBytes, available, members);
  }
  char *end = nullptr;
  long long value = std::strtoll(text, &end, 10);
  if (*end || value < 0)
    fatal("TOFU_CPU_SHM_BYTES must be a number of bytes (0: no shared "
          "memory)");
  // Buffers start on cache lines.
  return (value + 63) / 64 * 64;
}

/// Whether the job's ranks on this node outnumber the cores this process
/// may run on. Collective over MPI_COMM_WORLD the first time (every rank
/// makes its first segment at the same point: getGroup splits
/// MPI_COMM_WORLD), then remembered.
bool isOversubscribed() {
  static int known = -1;
  if (known >= 0)
    return known;
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL,
                      &node);
  int ranks = 0;
  MPI_Comm_size(node, &ranks);
  MPI_Comm_free(&node);
  cpu_set_t set;
  int cores = sched_getaffinity(0, sizeof(set), &set) == 0
                  ? CPU_COUNT(&set)
                  : int(std::thread::hardware_concurrency());
  known = cores <= 0 || ranks > cores;
  return known;
}

} // namespace

class Segment {
public:
  MPI_Win window = MPI_WIN_NULL;
  int size = 0, me = 0;
  int64_t bufferBytes = 0;
  /// Spins before yielding the core while waiting: none when the job's
  /// ranks on this node outnumber the cores this process may use (a
  /// spinning rank would take a core from the one it waits for).
  int spins = 0;
  std::vector<Control *> controls;
  /// Each member's two buffers, one after the other.
  std::vector<char *> buffers;
  uint64_t count = 0;

  template <typename Ready> void waitUntil(Ready ready) const {
    for (int i = 0; !ready();) {
      if (i < spins) {
        ++i;
#if defined(__x86_64__) || defined(__i386__)
        _mm_pause();
#endif
      } else {
        sched_yield();
      }
    }
  }

  /// Publishes `in` as this member's input of the next collective, waits
  /// for every member's, calls assemble(offset), which reads the members'
  /// inputs at `offset` in their buffers (getInputs), and announces that
  /// it has finished reading them.
  template <typename Assemble>
  void exchange(const View &in, Assemble assemble) {
    uint64_t n = ++count;
    int64_t offset = int64_t(n & 1) * bufferBytes;
    // This member's buffer held collective n - 2's input.
    if (n > 2)
      for (int j = 0; j < size; ++j)
        waitUntil([&] {
          return controls[j]->finished.load(std::memory_order_acquire) >= n - 2;
        });
    if (isContiguous(in))
      std::memcpy(buffers[me] + offset, in.data, in.volume() * in.elementBytes);
    else
      pack(in, std::vector<int64_t>(in.sizes.size(), 0), in.sizes,
           buffers[me] + offset);
    controls[me]->published.store(n, std::memory_order_release);
    for (int j = 0; j < size; ++j)
      waitUntil([&] {
        return controls[j]->published.load(std::memory_order_acquire) >= n;
      });
    assemble(offset);
    controls[me]->finished.store(n, std::memory_order_release);
  }

  /// The members' inputs of the collective whose buffers start at
  /// `offset`: dense views of `in`'s shape, in member order.
  std::vector<View> getInputs(const View &in, int64_t offset) const {
    std::vector<View> inputs;
    inputs.reserve(size);
    for (int j = 0; j < size; ++j)
      inputs.push_back(
          getDenseView(buffers[j] + offset, in.sizes, in.elementBytes));
    return inputs;
  }

  bool fits(const View &in) const {
    return in.volume() * in.elementBytes <= bufferBytes;
  }

  workers::Group getGroup() const {
    workers::Group g;
    for (int j = 0; j < size; ++j)
      g.members.push_back(j);
    g.me = me;
    return g;
  }
};

Segment *createSegment(MPI_Comm comm) {
  bool oversubscribed = isOversubscribed();
  int size = 1, me = 0;
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &me);
  // The members agree on the buffers' size, the smallest any of them asks
  // for: a member whose buffers differ would read the others' at the
  // wrong offsets, or take MPI where they take shared memory.
  long long bufferBytes = getBufferBytes(size);
  MPI_Allreduce(MPI_IN_PLACE, &bufferBytes, 1, MPI_LONG_LONG, MPI_MIN, comm);
  if (size < 2 || bufferBytes == 0)
    return nullptr;
  // Every member sees the same sizes, so all take the same branch.
  MPI_Comm local;
  MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, me, MPI_INFO_NULL, &local);
  int localSize = 0;
  MPI_Comm_size(local, &localSize);
  MPI_Comm_free(&local);
  if (localSize != size)
    return nullptr;

  auto *s = new Segment;
  s->size = size;
  s->me = me;
  s->bufferBytes = bufferBytes;
  s->spins = oversubscribed ? 0 : 20000;
  MPI_Aint bytes = MPI_Aint(sizeof(Control)) + 2 * bufferBytes;
  void *base = nullptr;
  MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, comm, &base, &s->window);
  new (base) Control;
  for (int j = 0; j < size; ++j) {
    MPI_Aint jBytes = 0;
    int unit = 0;
    void *jBase = nullptr;
    MPI_Win_shared_query(s->window, j, &jBytes, &unit, &jBase);
    if (jBytes != bytes)
      fatal("a shared-memory segment's slots differ in size");
    s->controls.push_back(static_cast<Control *>(jBase));
    s->buffers.push_back(static_cast<char *>(jBase) + sizeof(Control));
  }
  // Every member's counters are set before any member reads them.
  MPI_Barrier(comm);
  return s;
}

void freeSegment(Segment *segment) {
  if (!segment)
    return;
  MPI_Win_free(&segment->window);
  delete segment;
}

bool allGather(Segment *s, const View &in, const View &out, int64_t dim) {
  if (!s || !s->fits(in))
    return false;
  // In a dense result, each row of the dimensions before `dim` holds the
  // members' rows one after the other: one copy per member and row, with no
  // plan (the small tiles of an LSTM's cells, 40 gathers a step).
  bool direct = isContiguous(out);
  int64_t rows = getOuterVolume(in, dim);
  int64_t rowBytes = rows ? in.volume() * in.elementBytes / rows : 0;
  s->exchange(in, [&](int64_t offset) {
    if (direct) {
      for (int64_t r = 0; r < rows; ++r)
        for (int j = 0; j < s->size; ++j)
          std::memcpy(out.data + (r * s->size + j) * rowBytes,
                      s->buffers[j] + offset + r * rowBytes, rowBytes);
      return;
    }
    workers::runParts(workers::planAllGather(
                          s->getGroup(), s->getInputs(in, offset), out, dim),
                      in.elementBytes);
  });
  return true;
}

bool allToAll(Segment *s, const View &in, const View &out, int64_t splitDim,
              int64_t concatDim) {
  if (!s || !s->fits(in))
    return false;
  s->exchange(in, [&](int64_t offset) {
    workers::runParts(workers::planAllToAll(s->getGroup(),
                                            s->getInputs(in, offset), out,
                                            splitDim, concatDim),
                      in.elementBytes);
  });
  return true;
}

bool reduce(Segment *s, const View &in, const View &out,
            const std::vector<int64_t> &lo, int64_t kind, int64_t type) {
  if (!s || !s->fits(in))
    return false;
  s->exchange(in, [&](int64_t offset) {
    workers::runReduction(
        workers::planReduction(s->getInputs(in, offset), lo, out), kind, type);
  });
  return true;
}

} // namespace node
} // namespace runtime
} // namespace tofu
