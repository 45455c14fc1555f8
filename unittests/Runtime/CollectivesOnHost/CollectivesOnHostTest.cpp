//===- CollectivesOnHostTest.cpp - GPU collectives against the MPI runtime ===//
//
// A differential test of runtime/cuda/Collectives.cpp without a GPU: every
// GPU collective, on MockDevice.cpp's host emulation of the driver, the
// stream and NCCL, against the MPI runtime's collective of the same
// arguments (runtime/cpu/TofuRuntime.cpp), byte for byte (padding around
// the views included) and in the received-byte counts. Run under mpiexec
// (2 ranks in ctest): every grid of that many ranks and every axes mask,
// tensors of rank 1 to 3, f32, f64, i32 and i64, every dimension and every
// split/concat pair, the four reductions, dense, padded and permuted-stride
// inputs and dense and padded outputs, and 300 random fetches with
// replicated regions; many calls are queued before each flush, so that
// staging buffers are reused in stream order. Prints the counts and exits 1
// on a difference.
//
// With `--workers K` (no mpiexec; ctest runs K = 4) the same cases run on K
// in-process workers (runtime/cpu/Workers.h): each GPU collective takes the
// workers' path (the copy and reduction kernels on the workers' plans of
// copy parts) and is compared with the CPU workers' collective, which runs
// the same plans on the host.
//
//===----------------------------------------------------------------------===//

#include "../../../runtime/cpu/RuntimeSupport.h"
#include "../../../runtime/cpu/Workers.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>

using tofu::runtime::bytesOf;

extern "C" {
void mock_flush();
long mock_queued();
long mock_live();
long mock_launches();
long mock_event_waits();
long mock_devices_loaded();
void _mlir_ciface_tofu_gpu_fetch(TofuUnrankedMemRef *, TofuUnrankedMemRef *,
                                 TofuUnrankedMemRef *, TofuUnrankedMemRef *,
                                 int64_t);
void _mlir_ciface_tofu_gpu_all_gather(TofuUnrankedMemRef *,
                                      TofuUnrankedMemRef *,
                                      TofuUnrankedMemRef *, int64_t, int64_t,
                                      int64_t);
void _mlir_ciface_tofu_gpu_all_to_all(TofuUnrankedMemRef *,
                                      TofuUnrankedMemRef *,
                                      TofuUnrankedMemRef *, int64_t, int64_t,
                                      int64_t, int64_t);
void _mlir_ciface_tofu_gpu_reduce_scatter(TofuUnrankedMemRef *,
                                          TofuUnrankedMemRef *,
                                          TofuUnrankedMemRef *, int64_t,
                                          int64_t, int64_t, int64_t);
void _mlir_ciface_tofu_gpu_all_reduce(TofuUnrankedMemRef *,
                                      TofuUnrankedMemRef *,
                                      TofuUnrankedMemRef *, int64_t, int64_t,
                                      int64_t);
}

namespace workers = tofu::runtime::workers;

// Each rank's: an MPI process's, or an in-process worker's.
static thread_local int R, N;
static thread_local long failures = 0, checks = 0;

struct Buf {
  std::vector<char> storage;
  std::vector<int64_t> desc;
  TofuUnrankedMemRef m;
  std::vector<int64_t> sizes, strides;
  int64_t offset = 0, eb = 0;
  char *elem(const std::vector<int64_t> &idx) {
    int64_t o = offset;
    for (size_t d = 0; d < idx.size(); ++d)
      o += idx[d] * strides[d];
    return storage.data() + 64 + o * eb;
  }
};
// mode 0: dense; 1: padded with an offset; 2: permuted (reversed dim order)
// padded.
static std::unique_ptr<Buf> makeBuf(const std::vector<int64_t> &sizes,
                                    int64_t eb, int mode, unsigned char fill) {
  auto b = std::make_unique<Buf>();
  size_t r = sizes.size();
  b->sizes = sizes;
  b->eb = eb;
  b->strides.assign(r, 1);
  std::vector<int64_t> ext = sizes;
  if (mode)
    for (auto &e : ext)
      e += 1;
  int64_t off = mode ? 3 : 0;
  if (mode == 2) {
    int64_t s = 1;
    for (size_t d = 0; d < r; ++d) {
      b->strides[d] = s;
      s *= ext[d];
    }
  } else {
    int64_t s = 1;
    for (size_t d = r; d-- > 0;) {
      b->strides[d] = s;
      s *= ext[d];
    }
  }
  int64_t total = 1;
  for (auto e : ext)
    total *= e;
  b->offset = off;
  b->storage.assign(64 + (total + off) * eb + 64, (char)fill);
  b->desc.resize(3 + 2 * r);
  b->desc[0] = (int64_t)(b->storage.data() + 64);
  b->desc[1] = (int64_t)(b->storage.data() + 64);
  b->desc[2] = off;
  for (size_t d = 0; d < r; ++d) {
    b->desc[3 + d] = sizes[d];
    b->desc[3 + r + d] = b->strides[d];
  }
  b->m.rank = r;
  b->m.descriptor = b->desc.data();
  return b;
}
static std::unique_ptr<Buf> ints(const std::vector<int64_t> &v) {
  auto b = makeBuf({(int64_t)v.size()}, 8, 0, 0);
  for (size_t i = 0; i < v.size(); ++i)
    std::memcpy(b->elem({(int64_t)i}), &v[i], 8);
  return b;
}
static void forAll(const std::vector<int64_t> &sizes,
                   const std::function<void(const std::vector<int64_t> &)> &f) {
  int64_t n = 1;
  for (auto s : sizes)
    n *= s;
  std::vector<int64_t> idx(sizes.size(), 0);
  for (int64_t k = 0; k < n; ++k) {
    int64_t rem = k;
    for (size_t d = sizes.size(); d-- > 0;) {
      idx[d] = rem % sizes[d];
      rem /= sizes[d];
    }
    f(idx);
  }
}
// Fill with small integers depending on rank, salt and index; typed.
static void fillVals(Buf &b, int64_t type, int salt) {
  int64_t lin = 0;
  forAll(b.sizes, [&](const std::vector<int64_t> &idx) {
    int64_t v = ((R * 7 + salt * 13 + lin * 5) % 7) - 3;
    if (v == 0)
      v = 1;
    ++lin;
    char *p = b.elem(idx);
    if (type == TOFU_F32) {
      float f = float(v);
      std::memcpy(p, &f, 4);
    } else if (type == TOFU_F64) {
      double f = double(v);
      std::memcpy(p, &f, 8);
    } else if (type == TOFU_I32) {
      int32_t f = int32_t(v * 1000 + R);
      std::memcpy(p, &f, 4);
    } else {
      int64_t f = v * 100000 + R;
      std::memcpy(p, &f, 8);
    }
  });
}
static std::unique_ptr<Buf> clone(const Buf &b) {
  auto c = std::make_unique<Buf>(b);
  c->desc[0] = c->desc[1] = (int64_t)(c->storage.data() + 64);
  c->m.descriptor = c->desc.data();
  return c;
}

struct Pending {
  std::string what;
  std::unique_ptr<Buf> cpu, gpu, srcKeep, gridKeep, aKeep, bKeep;
};
static thread_local std::vector<Pending> pendings;

// The received bytes of each kind since resetCounters().
static thread_local double baseline[5];
static void resetCounters() {
  for (int k = 0; k < 5; ++k)
    baseline[k] = tofu_received_bytes(k);
}
static double counters(int k) { return tofu_received_bytes(k) - baseline[k]; }
static void checkBytes(const std::string &what, int k, double cpu, double gpu) {
  ++checks;
  // The counts are differences of running sums: (g-1)/g of a size is not
  // a whole number of bytes for every g, and rounds.
  if (std::fabs(cpu - gpu) > 1e-9 * std::max(1.0, std::fabs(cpu))) {
    ++failures;
    std::fprintf(stderr, "[rank %d] BYTES differ %s: cpu %.1f gpu %.1f\n", R,
                 what.c_str(), cpu, gpu);
  }
}
static void flushAndCompare() {
  // Workers share the one queue: flushed once everyone has queued.
  if (workers::active()) {
    workers::barrier();
    if (R == 0)
      mock_flush();
    workers::barrier();
  } else {
    mock_flush();
  }
  for (auto &p : pendings) {
    ++checks;
    if (p.cpu->storage != p.gpu->storage) {
      ++failures;
      size_t i = 0;
      while (p.cpu->storage[i] == p.gpu->storage[i])
        ++i;
      std::fprintf(stderr, "[rank %d] DATA differ %s at byte %zu\n", R,
                   p.what.c_str(), i);
    }
  }
  pendings.clear();
}

static int64_t groupSize(const std::vector<int64_t> &grid, int64_t axes) {
  int64_t g = 1;
  for (size_t i = 0; i < grid.size(); ++i)
    if (axes & (1 << i))
      g *= grid[i];
  return g;
}
static std::string str(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (auto x : v)
    s += std::to_string(x) + ",";
  return s + "]";
}

static std::atomic<long> workerChecks{0}, workerFailures{0};

static void runChecks() {
  std::vector<std::vector<int64_t>> grids;
  if (N == 4)
    grids = {{4}, {2, 2}, {1, 4}, {2, 1, 2}};
  else if (N == 6)
    grids = {{6}, {2, 3}, {3, 2}};
  else if (N == 2)
    grids = {{2}, {1, 2}};
  else
    grids = {{N}};
  int salt = 0;
  int types[4] = {TOFU_F32, TOFU_F64, TOFU_I32, TOFU_I64};
  for (auto &grid : grids) {
    auto gridBuf = ints(grid);
    int64_t full = (1 << grid.size()) - 1;
    for (int64_t axes = 1; axes <= full; ++axes) {
      int64_t g = groupSize(grid, axes);
      for (int rank = 1; rank <= 3; ++rank)
        for (int ti = 0; ti < 4; ++ti)
          for (int inMode = 0; inMode < 3; ++inMode)
            for (int outMode = 0; outMode < 2; ++outMode) {
              int64_t type = types[ti], eb = bytesOf(type);
              // all_gather along each dim
              for (int dim = 0; dim < rank; ++dim) {
                std::vector<int64_t> in(rank), out;
                for (int d = 0; d < rank; ++d)
                  in[d] = 2 + d;
                out = in;
                out[dim] *= g;
                auto src = makeBuf(in, eb, inMode, 0x11);
                fillVals(*src, type, ++salt);
                auto dc = makeBuf(out, eb, outMode, 0x77), dg = clone(*dc);
                std::string what =
                    "all_gather grid" + str(grid) + " axes" +
                    std::to_string(axes) + " in" + str(in) + " dim" +
                    std::to_string(dim) + " modes" + std::to_string(inMode) +
                    std::to_string(outMode) + " eb" + std::to_string(eb);
                resetCounters();
                double c0 = 0;
                _mlir_ciface_tofu_all_gather(&src->m, &dc->m, &gridBuf->m, axes,
                                             dim, eb);
                double c1 = counters(1);
                resetCounters();
                _mlir_ciface_tofu_gpu_all_gather(&src->m, &dg->m, &gridBuf->m,
                                                 axes, dim, eb);
                checkBytes(what, 1, c1 - c0, counters(1));
                pendings.push_back({what, std::move(dc), std::move(dg),
                                    std::move(src), nullptr, nullptr, nullptr});
              }
              // all_to_all
              for (int sd = 0; sd < rank; ++sd)
                for (int cd = 0; cd < rank; ++cd) {
                  if (sd == cd)
                    continue;
                  std::vector<int64_t> in(rank);
                  for (int d = 0; d < rank; ++d)
                    in[d] = 2 + d;
                  in[sd] = g * (1 + (sd % 2));
                  std::vector<int64_t> out = in;
                  out[sd] /= g;
                  out[cd] *= g;
                  auto src = makeBuf(in, eb, inMode, 0x11);
                  fillVals(*src, type, ++salt);
                  auto dc = makeBuf(out, eb, outMode, 0x77), dg = clone(*dc);
                  std::string what = "all_to_all grid" + str(grid) + " axes" +
                                     std::to_string(axes) + " in" + str(in) +
                                     " split" + std::to_string(sd) + " concat" +
                                     std::to_string(cd) + " modes" +
                                     std::to_string(inMode) +
                                     std::to_string(outMode);
                  resetCounters();
                  double c0 = 0;
                  _mlir_ciface_tofu_all_to_all(&src->m, &dc->m, &gridBuf->m,
                                               axes, sd, cd, eb);
                  double c1 = counters(2);
                  resetCounters();
                  _mlir_ciface_tofu_gpu_all_to_all(&src->m, &dg->m, &gridBuf->m,
                                                   axes, sd, cd, eb);
                  checkBytes(what, 2, c1 - c0, counters(2));
                  pendings.push_back({what, std::move(dc), std::move(dg),
                                      std::move(src), nullptr, nullptr,
                                      nullptr});
                }
              if (type == TOFU_F32 || type == TOFU_F64) {
                for (int kind = 1; kind <= 4; ++kind) {
                  // all_reduce (rank 0 too)
                  for (int r0 = 0; r0 < 2; ++r0) {
                    std::vector<int64_t> in;
                    if (!r0)
                      for (int d = 0; d < rank; ++d)
                        in.push_back(2 + d);
                    if (r0 && (inMode || outMode || rank > 1))
                      continue;
                    auto src = makeBuf(in, eb, inMode, 0x11);
                    fillVals(*src, type, ++salt);
                    auto dc = makeBuf(in, eb, outMode, 0x77), dg = clone(*dc);
                    std::string what = "all_reduce grid" + str(grid) + " axes" +
                                       std::to_string(axes) + " in" + str(in) +
                                       " kind" + std::to_string(kind) +
                                       " modes" + std::to_string(inMode) +
                                       std::to_string(outMode);
                    resetCounters();
                    double c0 = 0;
                    _mlir_ciface_tofu_all_reduce(&src->m, &dc->m, &gridBuf->m,
                                                 axes, kind, type);
                    double c1 = counters(4);
                    resetCounters();
                    _mlir_ciface_tofu_gpu_all_reduce(
                        &src->m, &dg->m, &gridBuf->m, axes, kind, type);
                    checkBytes(what, 4, c1 - c0, counters(4));
                    pendings.push_back({what, std::move(dc), std::move(dg),
                                        std::move(src), nullptr, nullptr,
                                        nullptr});
                  }
                  // reduce_scatter: single axis
                  if (__builtin_popcountll(axes) == 1) {
                    int axis = __builtin_ctzll(axes);
                    for (int dim = 0; dim < rank; ++dim) {
                      std::vector<int64_t> out(rank);
                      for (int d = 0; d < rank; ++d)
                        out[d] = 2 + d;
                      std::vector<int64_t> in = out;
                      in[dim] *= g;
                      auto src = makeBuf(in, eb, inMode, 0x11);
                      fillVals(*src, type, ++salt);
                      auto dc = makeBuf(out, eb, outMode, 0x77),
                           dg = clone(*dc);
                      std::string what =
                          "reduce_scatter grid" + str(grid) + " axis" +
                          std::to_string(axis) + " in" + str(in) + " dim" +
                          std::to_string(dim) + " kind" + std::to_string(kind) +
                          " modes" + std::to_string(inMode) +
                          std::to_string(outMode);
                      resetCounters();
                      double c0 = 0;
                      _mlir_ciface_tofu_reduce_scatter(
                          &src->m, &dc->m, &gridBuf->m, axis, dim, kind, type);
                      double c1 = counters(3);
                      resetCounters();
                      _mlir_ciface_tofu_gpu_reduce_scatter(
                          &src->m, &dg->m, &gridBuf->m, axis, dim, kind, type);
                      checkBytes(what, 3, c1 - c0, counters(3));
                      pendings.push_back({what, std::move(dc), std::move(dg),
                                          std::move(src), nullptr, nullptr,
                                          nullptr});
                    }
                  }
                }
              }
            }
      // Flush once per (grid, axes): many calls queued, staging reused.
      flushAndCompare();
    }
  }
  // fetch: random tile boxes (same sizes on every rank), random offsets.
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    int rank = 1 + trial % 3;
    std::vector<int64_t> hs(rank), ws(rank);
    for (int d = 0; d < rank; ++d) {
      hs[d] = 1 + rng() % 4;
      ws[d] = 1 + rng() % 5;
    }
    // Held: a few distinct regions, replicated (owners), so that the plan picks
    // owners.
    int regions = 1 + rng() % N;
    std::vector<std::vector<int64_t>> regionLo(regions);
    for (auto &lo : regionLo)
      for (int d = 0; d < rank; ++d)
        lo.push_back((int64_t)(rng() % 6));
    std::vector<int64_t> heldOff, wantOff;
    for (int r = 0; r < N; ++r) {
      auto &lo = regionLo[(r * 3 + trial) % regions];
      heldOff.insert(heldOff.end(), lo.begin(), lo.end());
      for (int d = 0; d < rank; ++d)
        wantOff.push_back((int64_t)(rng() % 7) - 1);
    }
    int ti = trial % 4;
    int64_t type = types[ti], eb = bytesOf(type);
    int inMode = (trial / 4) % 3, outMode = (trial / 12) % 2;
    // The held tile's values: a function of the global coordinates, so that
    // replicas agree.
    auto src = makeBuf(hs, eb, inMode, 0x11);
    std::vector<int64_t> myLo(heldOff.begin() + R * rank,
                              heldOff.begin() + (R + 1) * rank);
    forAll(hs, [&](const std::vector<int64_t> &idx) {
      int64_t gl = 0;
      for (int d = 0; d < rank; ++d)
        gl = gl * 31 + (myLo[d] + idx[d]);
      char *p = src->elem(idx);
      if (eb == 4) {
        int32_t v = int32_t(gl * 3 + 1);
        std::memcpy(p, &v, 4);
      } else {
        int64_t v = gl * 3 + 1;
        std::memcpy(p, &v, 8);
      }
    });
    auto dc = makeBuf(ws, eb, outMode, 0x77), dg = clone(*dc);
    auto a = ints(heldOff), b = ints(wantOff);
    std::string what = "fetch trial " + std::to_string(trial);
    resetCounters();
    double c0 = 0;
    _mlir_ciface_tofu_fetch(&src->m, &dc->m, &a->m, &b->m, eb);
    double c1 = counters(0);
    resetCounters();
    _mlir_ciface_tofu_gpu_fetch(&src->m, &dg->m, &a->m, &b->m, eb);
    checkBytes(what, 0, c1 - c0, counters(0));
    pendings.push_back({what, std::move(dc), std::move(dg), std::move(src),
                        nullptr, std::move(a), std::move(b)});
    if (trial % 17 == 0)
      flushAndCompare();
  }
  flushAndCompare();
}

int main(int argc, char **argv) {
  if (argc == 3 && std::strcmp(argv[1], "--workers") == 0) {
    int k = std::atoi(argv[2]);
    tofu_workers_run(
        k,
        [](void *) {
          tofu_init(0);
          R = workers::rank();
          N = workers::size();
          runChecks();
          workerChecks += checks;
          workerFailures += failures;
        },
        nullptr);
    // With TOFU_MOCK_DEVICES=D the workers ran on min(K, D) devices, each
    // of which loaded the kernels once (the mock checks that every launch
    // used its own device's).
    const char *devices = std::getenv("TOFU_MOCK_DEVICES");
    long expected = devices ? std::min<long>(k, std::atol(devices)) : 1;
    std::printf("workers %d: %ld checks, %ld failures, live staging blocks "
                "%ld, launches %ld, event waits %ld, devices with the "
                "kernels %ld of %ld\n",
                k, workerChecks.load(), workerFailures.load(), mock_live(),
                mock_launches(), mock_event_waits(), mock_devices_loaded(),
                expected);
    return workerFailures || !workerChecks || mock_devices_loaded() != expected
               ? 1
               : 0;
  }
  tofu_init(0);
  MPI_Comm_rank(MPI_COMM_WORLD, &R);
  MPI_Comm_size(MPI_COMM_WORLD, &N);
  runChecks();
  long total = 0, fails = 0;
  MPI_Allreduce(&checks, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&failures, &fails, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (R == 0)
    std::printf("ranks %d: %ld checks, %ld failures, live staging blocks %ld, "
                "launches %ld\n",
                N, total, fails, mock_live(), mock_launches());
  tofu_finalize();
  return fails ? 1 : 0;
}
