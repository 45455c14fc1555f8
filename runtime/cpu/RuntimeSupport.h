//===- RuntimeSupport.h - Shared helpers of the CPU runtime --*- C++ -*-===//
//
// The memref views, element types and error exits that every file of the
// CPU runtime uses, and the GPU collectives (runtime/cuda/Collectives.cpp)
// too.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CPU_RUNTIMESUPPORT_H
#define TOFU_RUNTIME_CPU_RUNTIMESUPPORT_H

#include "tofu/Runtime/FetchPlan.h"
#include "tofu/Runtime/TofuRuntime.h"

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

namespace tofu {
namespace runtime {

/// Aborts the job when an MPI call fails, naming the call.
#define TOFU_MPI_CHECK(call)                                                   \
  do {                                                                         \
    int status_ = (call);                                                      \
    if (status_ != MPI_SUCCESS) {                                              \
      char text_[MPI_MAX_ERROR_STRING];                                        \
      int length_ = 0;                                                         \
      MPI_Error_string(status_, text_, &length_);                              \
      std::fprintf(stderr, "tofu runtime: %s failed: %s\n", #call, text_);     \
      MPI_Abort(MPI_COMM_WORLD, 1);                                            \
    }                                                                          \
  } while (0)

[[noreturn]] inline void fatal(const char *message) {
  std::fprintf(stderr, "tofu runtime: %s\n", message);
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) {
    // MPI_Abort tears the job down at once, and the process manager may
    // drop what it has not yet forwarded from this rank's stderr: give it
    // a moment to pass the message on.
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // Without the static destructors, which other threads (in-process
  // workers) may still be using.
  std::fflush(nullptr);
  std::_Exit(1);
}

/// A strided view of a memref descriptor.
struct View {
  char *data = nullptr;
  std::vector<int64_t> sizes, strides;
  int64_t elementBytes = 0;

  int64_t volume() const {
    int64_t n = 1;
    for (int64_t s : sizes)
      n *= s;
    return n;
  }
};

inline View getView(const TofuUnrankedMemRef *m, int64_t elementBytes) {
  auto *d = static_cast<int64_t *>(m->descriptor);
  View v;
  char *aligned = reinterpret_cast<char *>(d[1]);
  v.data = aligned + d[2] * elementBytes;
  v.sizes.assign(d + 3, d + 3 + m->rank);
  v.strides.assign(d + 3 + m->rank, d + 3 + 2 * m->rank);
  v.elementBytes = elementBytes;
  return v;
}

/// The elements of a one-dimensional i64 memref (a grid, offsets), read
/// straight from its descriptor: every collective reads one.
inline std::vector<int64_t> getInts(const TofuUnrankedMemRef *m) {
  if (m->rank > 1)
    fatal("integer arrays must be one-dimensional");
  auto *d = static_cast<int64_t *>(m->descriptor);
  const int64_t *data = reinterpret_cast<const int64_t *>(d[1]) + d[2];
  int64_t n = m->rank == 0 ? 1 : d[3];
  int64_t stride = m->rank == 0 ? 1 : d[4];
  std::vector<int64_t> out(size_t(n > 0 ? n : 0));
  for (int64_t i = 0; i < n; ++i)
    out[size_t(i)] = data[i * stride];
  return out;
}

inline int64_t bytesOf(int64_t type) {
  if (type == TOFU_F32 || type == TOFU_I32)
    return 4;
  if (type == TOFU_F64 || type == TOFU_I64)
    return 8;
  fatal("unsupported element type");
}

/// Calls `f(offset in elements of the view, index, length)` for every row
/// of the sub-box [lo, lo + sizes) of a view, in row-major order: a row is
/// `length` elements along the innermost dimension (one element for a 0-d
/// view), starting at that offset and at that row-major index in the box.
template <typename F>
void forEachRow(const View &v, const std::vector<int64_t> &lo,
                const std::vector<int64_t> &sizes, F f) {
  size_t rank = sizes.size();
  for (int64_t s : sizes)
    if (s <= 0)
      return;
  if (rank == 0) {
    f(int64_t(0), int64_t(0), int64_t(1));
    return;
  }
  int64_t length = sizes[rank - 1];
  std::vector<int64_t> idx(rank, 0);
  int64_t linear = 0;
  while (true) {
    int64_t offset = 0;
    for (size_t d = 0; d < rank; ++d)
      offset += (lo[d] + idx[d]) * v.strides[d];
    f(offset, linear, length);
    linear += length;
    size_t d = rank - 1;
    while (d > 0) {
      --d;
      if (++idx[d] < sizes[d])
        break;
      idx[d] = 0;
      if (d == 0)
        return;
    }
    if (rank == 1)
      return;
  }
}

/// Calls `f(offset in elements of the view, index)` for every element of
/// the sub-box [lo, lo + sizes) of a view, in row-major order.
template <typename F>
void forEach(const View &v, const std::vector<int64_t> &lo,
             const std::vector<int64_t> &sizes, F f) {
  int64_t step = v.strides.empty() ? 0 : v.strides.back();
  forEachRow(v, lo, sizes, [&](int64_t offset, int64_t index, int64_t n) {
    for (int64_t j = 0; j < n; ++j)
      f(offset + j * step, index + j);
  });
}

/// The address of element `lo` of a view.
inline char *getAddress(const View &v, const std::vector<int64_t> &lo) {
  int64_t offset = 0;
  for (size_t d = 0; d < lo.size(); ++d)
    offset += lo[d] * v.strides[d];
  return v.data + offset * v.elementBytes;
}

/// A dense row-major view of `sizes` over `data`.
inline View getDenseView(char *data, const std::vector<int64_t> &sizes,
                         int64_t elementBytes) {
  View v;
  v.data = data;
  v.sizes = sizes;
  v.strides = tofu::copy::getDenseStrides(sizes);
  v.elementBytes = elementBytes;
  return v;
}

/// Whether a view is its elements in row-major order without gaps.
inline bool isContiguous(const View &v) {
  int64_t expected = 1;
  for (size_t d = v.sizes.size(); d-- > 0;) {
    if (v.sizes[d] != 1 && v.strides[d] != expected)
      return false;
    expected *= v.sizes[d];
  }
  return true;
}

/// The low corner of box `b` relative to that of `origin`.
inline std::vector<int64_t> relative(const tofu::fetch::Box &b,
                                     const tofu::fetch::Box &origin) {
  std::vector<int64_t> lo(b.lo.size());
  for (size_t d = 0; d < lo.size(); ++d)
    lo[d] = b.lo[d] - origin.lo[d];
  return lo;
}

/// Copies `n` elements of `eb` bytes, `fromStride` and `toStride` elements
/// apart: one memcpy when both are dense.
inline void copyRow(const char *from, int64_t fromStride, char *to,
                    int64_t toStride, int64_t n, int64_t eb) {
  if ((fromStride == 1 || n == 1) && (toStride == 1 || n == 1)) {
    std::memcpy(to, from, n * eb);
    return;
  }
  for (int64_t j = 0; j < n; ++j)
    std::memcpy(to + j * toStride * eb, from + j * fromStride * eb, eb);
}

/// The stride of a view's innermost dimension (0 for a 0-d view).
inline int64_t getInnerStride(const View &v) {
  return v.strides.empty() ? 0 : v.strides.back();
}

/// Copies the sub-box [lo, lo + sizes) of a view to or from a packed buffer,
/// a row at a time (a whole contiguous view at once).
inline void pack(const View &v, const std::vector<int64_t> &lo,
                 const std::vector<int64_t> &sizes, char *out) {
  int64_t eb = v.elementBytes, stride = getInnerStride(v);
  if (sizes == v.sizes && isContiguous(v) &&
      std::all_of(lo.begin(), lo.end(), [](int64_t x) { return x == 0; })) {
    std::memcpy(out, v.data, v.volume() * eb);
    return;
  }
  forEachRow(v, lo, sizes, [&](int64_t off, int64_t i, int64_t n) {
    copyRow(v.data + off * eb, stride, out + i * eb, 1, n, eb);
  });
}
inline void unpack(const View &v, const std::vector<int64_t> &lo,
                   const std::vector<int64_t> &sizes, const char *in) {
  int64_t eb = v.elementBytes, stride = getInnerStride(v);
  forEachRow(v, lo, sizes, [&](int64_t off, int64_t i, int64_t n) {
    copyRow(in + i * eb, 1, v.data + off * eb, stride, n, eb);
  });
}

/// Copies the box of `sizes` at `fromLo` in `from` to `toLo` in `to`, a row
/// at a time (both views have the same element size).
inline void copyBox(const View &from, const std::vector<int64_t> &fromLo,
                    const View &to, const std::vector<int64_t> &toLo,
                    const std::vector<int64_t> &sizes) {
  int64_t eb = from.elementBytes;
  int64_t toBase = 0;
  for (size_t d = 0; d < sizes.size(); ++d)
    toBase += toLo[d] * to.strides[d];
  int64_t fromStride = getInnerStride(from), toStride = getInnerStride(to);
  forEachRow(from, fromLo, sizes, [&](int64_t off, int64_t i, int64_t n) {
    // The row-major index i of the row's first element, as an offset into
    // `to`.
    int64_t rem = i, at = toBase;
    for (size_t d = sizes.size(); d-- > 0;) {
      at += (rem % sizes[d]) * to.strides[d];
      rem /= sizes[d];
    }
    copyRow(from.data + off * eb, fromStride, to.data + at * eb, toStride, n,
            eb);
  });
}

/// Where a rank sits among the ranks of a grid that differ from it only
/// along the axes in `axes` (a bit per axis): the group's color (the
/// row-major index of the other axes' coordinates) and the rank's key in it
/// (its row-major index over `axes`).
struct GroupPosition {
  int color = 0, key = 0;
};
inline GroupPosition getGroupPosition(const std::vector<int64_t> &grid,
                                      int64_t axes, int64_t rank) {
  std::vector<int64_t> coords(grid.size());
  for (size_t i = grid.size(); i-- > 0;) {
    coords[i] = rank % grid[i];
    rank /= grid[i];
  }
  GroupPosition p;
  for (size_t i = 0; i < grid.size(); ++i) {
    if (axes & (int64_t(1) << i))
      p.key = p.key * int(grid[i]) + int(coords[i]);
    else
      p.color = p.color * int(grid[i]) + int(coords[i]);
  }
  return p;
}

/// The product of the sizes of the dimensions before `dim`: 1 when the
/// chunks along `dim` of a contiguous view follow each other in memory.
inline int64_t getOuterVolume(const View &v, int64_t dim) {
  int64_t n = 1;
  for (int64_t d = 0; d < dim; ++d)
    n *= v.sizes[d];
  return n;
}

/// Checks that `out` has the shape of `in` but along `grow`, which is
/// `groupSize` times larger, and `shrink`, which is `groupSize` times
/// smaller (-1: none).
inline void checkShapes(const View &in, const View &out, int64_t grow,
                        int64_t shrink, int groupSize, const char *what) {
  size_t rank = in.sizes.size();
  bool ok = out.sizes.size() == rank && grow >= 0 && grow < (int64_t)rank &&
            shrink < (int64_t)rank && grow != shrink;
  for (size_t d = 0; ok && d < rank; ++d) {
    if ((int64_t)d == grow)
      ok = out.sizes[d] == in.sizes[d] * groupSize;
    else if ((int64_t)d == shrink)
      ok = in.sizes[d] == out.sizes[d] * groupSize;
    else
      ok = out.sizes[d] == in.sizes[d];
  }
  if (!ok) {
    std::fprintf(stderr,
                 "tofu runtime: %s: the buffers do not match a "
                 "group of %d ranks\n",
                 what, groupSize);
    fatal("invalid collective");
  }
}

// The logical bytes a rank receives in a collective of a group of `g`
// ranks, counted alike by every runtime (MPI, NCCL, in-process workers) and
// by the plan's cost model: the g - 1 other chunks of `elements` elements of
// an all-gather or an all-to-all, (g - 1) / g of a reduce-scatter's input
// and 2 (g - 1) / g of an all-reduce's buffer (reduce-scatter, then
// all-gather).
inline double getGatherBytes(int64_t g, int64_t elements, int64_t eb) {
  return double(g - 1) * double(elements) * double(eb);
}
inline double getReduceScatterBytes(int64_t g, int64_t elements, int64_t eb) {
  return double(g - 1) / double(g) * double(elements) * double(eb);
}
inline double getAllReduceBytes(int64_t g, int64_t elements, int64_t eb) {
  return 2.0 * double(g - 1) / double(g) * double(elements) * double(eb);
}

/// A per-thread object of type T that lives as long as the process: made on
/// first use by each thread (each in-process worker, Workers.h, has its
/// own) and kept reachable, so that no destructor at exit frees one that
/// another still refers to, and LeakSanitizer does not report it.
template <typename T> T &getThreadObject() {
  thread_local T *object = nullptr;
  if (!object) {
    static std::mutex mutex;
    static auto *all = new std::vector<T *>;
    object = new T();
    std::lock_guard<std::mutex> lock(mutex);
    all->push_back(object);
  }
  return *object;
}

/// The threads of each library call (OpenBLAS, oneDNN): TOFU_NUM_THREADS,
/// an integer in [1, 1024] (default 1); stops with a message otherwise.
inline int getLibraryThreads() {
  static const int threads = [] {
    const char *v = std::getenv("TOFU_NUM_THREADS");
    if (!v)
      return 1;
    char *end = nullptr;
    long n = std::strtol(v, &end, 10);
    if (!*v || *end || n < 1 || n > 1024) {
      std::fprintf(stderr,
                   "tofu runtime: TOFU_NUM_THREADS must be an integer in "
                   "[1, 1024], not '%s'\n",
                   v);
      std::exit(1);
    }
    return int(n);
  }();
  return threads;
}

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_CPU_RUNTIMESUPPORT_H
