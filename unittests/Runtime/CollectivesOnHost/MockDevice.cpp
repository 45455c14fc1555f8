//===- MockDevice.cpp - The GPU collectives' device, on the host ----------===//
//
// The CUDA driver calls, the CUDA runtime's allocator and stream (mgpu*) and
// the NCCL calls that runtime/cuda/Collectives.cpp makes, run on the host
// so that the collectives are tested without a GPU
// (CollectivesOnHostTest.cpp). GPU work is deferred until mock_flush(), as
// on the runtime's one stream; freed blocks are handed out again at once
// (newest first, same size), as by its caching allocator; the copy kernel
// runs its grid-stride loop over CopyParts.h's copyElement, checking that
// every element is copied exactly once; NCCL is emulated over MPI, checking
// in-place rules, group calls and matching send and receive sizes. Built as
// libnccl.so.2, which Collectives.cpp's dlopen then finds already loaded.
//
// In-process workers (threads of one process, runtime/cpu/Workers.h) share
// the one queue, which a mutex guards, in the order the host queued the
// work: the events that order their streams are checked (a wait must name
// a recorded event) but not needed here. The reduction kernel runs
// CopyParts.h's reduceElement the same way as the copy kernel. With
// TOFU_MOCK_DEVICES=N the workers' current device is their rank mod N (as
// WorkerDevices.h places them), and a launch must use a kernel loaded on
// the launching worker's device.
//
//===----------------------------------------------------------------------===//
#include "tofu/Runtime/CopyParts.h"
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <deque>
#include <functional>
#include <map>
#include <mpi.h>
#include <mutex>
#include <nccl.h>
#include <set>
#include <vector>

static std::recursive_mutex &lock() {
  static std::recursive_mutex m;
  return m;
}
#define MOCK_LOCKED std::lock_guard<std::recursive_mutex> guard_(lock())
static std::deque<std::function<void()>> &queue() {
  static std::deque<std::function<void()>> q;
  return q;
}
static void fail(const char *m) {
  int r = 0, initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized)
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
  std::fprintf(stderr, "[rank %d] MOCK FAILURE: %s\n", r, m);
  if (initialized)
    MPI_Abort(MPI_COMM_WORLD, 3);
  std::abort();
}
extern "C" void mock_flush() {
  MOCK_LOCKED;
  while (!queue().empty()) {
    auto f = std::move(queue().front());
    queue().pop_front();
    f();
  }
}
extern "C" long mock_queued() {
  MOCK_LOCKED;
  return (long)queue().size();
}
long launches = 0;
extern "C" long mock_launches() { return launches; }

// The copy kernel's image, which cuModuleLoadData below ignores.
extern "C" const unsigned char tofu_copy_parts_fatbin[1] = {0};

// ---- allocator (mgpuMemAlloc / mgpuMemFree / mgpuStreamCreate)
static std::map<uint64_t, std::vector<char *>> freeList;
static std::map<char *, uint64_t> live;
extern "C" void *mgpuStreamCreate() { return (void *)0x5157; }
extern "C" void *mgpuMemAlloc(uint64_t bytes, void *stream, int8_t) {
  MOCK_LOCKED;
  if (stream != (void *)0x5157)
    fail("mgpuMemAlloc: wrong stream");
  if (bytes == 0)
    return nullptr;
  char *p;
  auto &l = freeList[bytes];
  if (!l.empty()) {
    p = l.back();
    l.pop_back();
  } else {
    p = (char *)aligned_alloc(256, (bytes + 255) / 256 * 256);
    std::memset(p, 0xCD, bytes);
  }
  live[p] = bytes;
  return p;
}
extern "C" void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  MOCK_LOCKED;
  if (stream != (void *)0x5157)
    fail("mgpuMemFree: wrong stream");
  auto it = live.find((char *)ptr);
  if (it == live.end())
    fail("mgpuMemFree: unknown pointer");
  freeList[it->second].push_back((char *)ptr);
  live.erase(it);
}
extern "C" long mock_live() {
  MOCK_LOCKED;
  return (long)live.size();
}

// ---- CUDA driver
extern "C" CUresult cuGetErrorName(CUresult, const char **s) {
  *s = "mock";
  return 0;
}
// The current device of the calling thread: its worker rank mod
// TOFU_MOCK_DEVICES (the CPU runtime's tofu_worker_rank, weak so that the
// library loads alone).
extern "C" int64_t tofu_worker_rank(void) __attribute__((weak));
static int currentDevice() {
  static int devices = [] {
    const char *n = std::getenv("TOFU_MOCK_DEVICES");
    return n ? std::max(1, std::atoi(n)) : 1;
  }();
  long rank = tofu_worker_rank ? (long)tofu_worker_rank() : -1;
  return rank < 0 ? 0 : int(rank % devices);
}
extern "C" CUresult cuCtxGetDevice(CUdevice *d) {
  *d = currentDevice();
  return 0;
}
// Handles name their device: module (device << 8) | 1, kernels
// (device << 8) | 2 (copy) and | 3 (reduction).
static std::set<int> &devicesWithModule() {
  static std::set<int> loaded;
  return loaded;
}
extern "C" CUresult cuModuleLoadData(CUmodule *m, const void *) {
  MOCK_LOCKED;
  if (!devicesWithModule().insert(currentDevice()).second)
    fail("cuModuleLoadData: the module is already loaded on this device");
  *m = (CUmodule)(((uintptr_t)currentDevice() << 8) | 0x1);
  return 0;
}
extern "C" CUresult cuModuleGetFunction(CUfunction *f, CUmodule m,
                                        const char *n) {
  uintptr_t device = (uintptr_t)m >> 8;
  if (((uintptr_t)m & 0xff) != 0x1 || device != (uintptr_t)currentDevice())
    fail("cuModuleGetFunction: a module of another device");
  if (!std::strcmp(n, "tofu_copy_parts"))
    *f = (CUfunction)((device << 8) | 0x2);
  else if (!std::strcmp(n, "tofu_reduce_parts"))
    *f = (CUfunction)((device << 8) | 0x3);
  else
    fail("kernel name");
  return 0;
}
extern "C" long mock_devices_loaded() {
  MOCK_LOCKED;
  return (long)devicesWithModule().size();
}
static std::set<CUevent> &recorded() {
  static std::set<CUevent> events;
  return events;
}
long eventWaits = 0;
extern "C" long mock_event_waits() { return eventWaits; }
extern "C" CUresult cuEventCreate(CUevent *e, unsigned flags) {
  if (flags != CU_EVENT_DISABLE_TIMING)
    fail("event flags");
  // A handle that is never dereferenced (nothing to free).
  static long events = 0;
  MOCK_LOCKED;
  *e = (CUevent)(++events * 16);
  return 0;
}
extern "C" CUresult cuEventRecord(CUevent e, CUstream s) {
  MOCK_LOCKED;
  if (s != (CUstream)0x5157)
    fail("cuEventRecord: wrong stream");
  recorded().insert(e);
  return 0;
}
extern "C" CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned flags) {
  MOCK_LOCKED;
  if (s != (CUstream)0x5157 || flags)
    fail("cuStreamWaitEvent: wrong stream or flags");
  if (!recorded().count(e))
    fail("cuStreamWaitEvent: the event was never recorded");
  ++eventWaits;
  return 0;
}
extern "C" CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src,
                                      size_t n, CUstream) {
  MOCK_LOCKED;
  // Pageable memory: the driver reads the host buffer before returning.
  std::vector<char> copy((const char *)src, (const char *)src + n);
  queue().push_back(
      [dst, copy] { std::memcpy((void *)dst, copy.data(), copy.size()); });
  return 0;
}
// A kernel's grid-stride loop over `total` elements, one element per call
// of `element`, checking that each is handled exactly once.
template <typename F>
static void runGrid(unsigned gx, unsigned bx, long long total, F element) {
  long long stride = (long long)gx * bx;
  std::vector<char> hit(total, 0);
  for (unsigned b = 0; b < gx; ++b)
    for (unsigned t = 0; t < bx; ++t)
      for (long long i = (long long)b * bx + t; i < total; i += stride) {
        if (hit[i]++)
          fail("element handled twice");
        element(i);
      }
  for (long long i = 0; i < total; ++i)
    if (!hit[i])
      fail("element not handled");
}
extern "C" CUresult cuLaunchKernel(CUfunction f, unsigned gx, unsigned gy,
                                   unsigned gz, unsigned bx, unsigned by,
                                   unsigned bz, unsigned shm, CUstream,
                                   void **args, void **extra) {
  MOCK_LOCKED;
  if ((uintptr_t)f >> 8 != (uintptr_t)currentDevice())
    fail("cuLaunchKernel: a kernel of another device");
  f = (CUfunction)((uintptr_t)f & 0xff);
  if ((f != (CUfunction)0x2 && f != (CUfunction)0x3) || gy != 1 || gz != 1 ||
      by != 1 || bz != 1 || extra || shm)
    fail("launch config");
  // The kernels' parameters: const Part *, int, long long, then the copy's
  // int element bytes or the reduction's int type and int kind.
  const tofu::copy::Part *table = *(const tofu::copy::Part **)args[0];
  int count = *(int *)args[1];
  long long total = *(long long *)args[2];
  int eb = *(int *)args[3];
  if (gx == 0 || bx == 0)
    fail("empty grid");
  ++launches;
  if (f == (CUfunction)0x3) {
    int type = eb, kind = *(int *)args[4];
    if (type < 0 || type > 3 || kind < 1 || kind > 4)
      fail("reduction type or kind");
    auto k = tofu::copy::Reduction(kind);
    queue().push_back([=] {
      runGrid(gx, bx, total, [=](long long i) {
        if (type == 0)
          tofu::copy::reduceElement<float>(table, count, i, k);
        else if (type == 1)
          tofu::copy::reduceElement<double>(table, count, i, k);
        else if (type == 2)
          tofu::copy::reduceElement<int32_t>(table, count, i, k);
        else
          tofu::copy::reduceElement<int64_t>(table, count, i, k);
      });
    });
    return 0;
  }
  queue().push_back([=] {
    runGrid(gx, bx, total,
            [=](long long i) { tofu::copy::copyElement(table, count, i, eb); });
  });
  return 0;
}

// ---- NCCL over MPI
struct ncclComm {
  MPI_Comm comm;
  int rank, size;
};

// The communicators made, freed when MPI_Finalize deletes MPI_COMM_SELF's
// attributes (first thing it does): the collectives never destroy theirs,
// and MPICH would report the MPI communicators left as leaks.
static std::vector<ncclComm *> &comms() {
  static std::vector<ncclComm *> all;
  return all;
}
static int freeComms(MPI_Comm, int, void *, void *) {
  for (ncclComm *c : comms()) {
    MPI_Comm_free(&c->comm);
    delete c;
  }
  comms().clear();
  return MPI_SUCCESS;
}
static ncclComm *newComm() {
  if (comms().empty()) {
    int key = MPI_KEYVAL_INVALID;
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, freeComms, &key, nullptr);
    MPI_Comm_set_attr(MPI_COMM_SELF, key, nullptr);
  }
  comms().push_back(new ncclComm());
  return comms().back();
}
static MPI_Datatype mpiType(ncclDataType_t t) {
  switch (t) {
  case ncclInt8:
    return MPI_INT8_T;
  case ncclInt32:
    return MPI_INT32_T;
  case ncclInt64:
    return MPI_INT64_T;
  case ncclFloat32:
    return MPI_FLOAT;
  case ncclFloat64:
    return MPI_DOUBLE;
  }
  fail("type");
  return MPI_BYTE;
}
static int typeSize(ncclDataType_t t) {
  int s;
  MPI_Type_size(mpiType(t), &s);
  return s;
}
static MPI_Op mpiOp(ncclRedOp_t o) {
  switch (o) {
  case ncclSum:
    return MPI_SUM;
  case ncclProd:
    return MPI_PROD;
  case ncclMax:
    return MPI_MAX;
  case ncclMin:
    return MPI_MIN;
  }
  fail("op");
  return MPI_SUM;
}
extern "C" const char *ncclGetErrorString(ncclResult_t) {
  return "mock nccl error";
}
extern "C" ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  for (int i = 0; i < 128; ++i)
    id->internal[i] = char(i * 7 + 3);
  return ncclSuccess;
}
static int groupDepth = 0;
extern "C" ncclResult_t ncclCommInitRank(ncclComm_t *c, int n, ncclUniqueId id,
                                         int rank) {
  if (groupDepth)
    fail("init inside a group");
  int wr, ws;
  MPI_Comm_rank(MPI_COMM_WORLD, &wr);
  MPI_Comm_size(MPI_COMM_WORLD, &ws);
  if (n != ws || rank != wr)
    fail("init rank/size");
  for (int i = 0; i < 128; ++i)
    if (id.internal[i] != char(i * 7 + 3))
      fail("unique id not broadcast");
  auto *x = newComm();
  MPI_Comm_dup(MPI_COMM_WORLD, &x->comm);
  x->rank = rank;
  x->size = n;
  *c = x;
  return ncclSuccess;
}
extern "C" ncclResult_t ncclCommSplit(ncclComm_t p, int color, int key,
                                      ncclComm_t *c, ncclConfig_t *) {
  if (groupDepth)
    fail("split inside a group");
  if (color < 0)
    fail("negative color");
  auto *x = newComm();
  MPI_Comm_split(p->comm, color, key, &x->comm);
  MPI_Comm_rank(x->comm, &x->rank);
  MPI_Comm_size(x->comm, &x->size);
  *c = x;
  return ncclSuccess;
}
extern "C" ncclResult_t ncclCommCount(const ncclComm_t c, int *n) {
  *n = c->size;
  return ncclSuccess;
}
extern "C" ncclResult_t ncclCommUserRank(const ncclComm_t c, int *r) {
  *r = c->rank;
  return ncclSuccess;
}

static bool overlap(const char *a, size_t na, const char *b, size_t nb) {
  return na && nb && a < b + nb && b < a + na;
}
extern "C" ncclResult_t ncclAllGather(const void *s, void *r, size_t count,
                                      ncclDataType_t t, ncclComm_t c,
                                      cudaStream_t) {
  if (groupDepth)
    fail("collective in group (not used)");
  size_t bytes = count * typeSize(t);
  const char *send = (const char *)s;
  char *recv = (char *)r;
  bool inPlace = send == recv + c->rank * bytes;
  if (!inPlace && overlap(send, bytes, recv, bytes * c->size))
    fail("allgather: overlapping but not in place");
  queue().push_back([=] {
    std::vector<char> mine(send, send + bytes);
    MPI_Allgather(mine.data(), (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE,
                  c->comm);
  });
  return ncclSuccess;
}
extern "C" ncclResult_t ncclReduceScatter(const void *s, void *r, size_t count,
                                          ncclDataType_t t, ncclRedOp_t o,
                                          ncclComm_t c, cudaStream_t) {
  size_t bytes = count * typeSize(t);
  const char *send = (const char *)s;
  char *recv = (char *)r;
  bool inPlace = recv == send + c->rank * bytes;
  if (!inPlace && overlap(send, bytes * c->size, recv, bytes))
    fail("reducescatter: overlapping but not in place");
  queue().push_back([=] {
    std::vector<char> in(send, send + bytes * c->size), out(bytes);
    MPI_Reduce_scatter_block(in.data(), out.data(), (int)count, mpiType(t),
                             mpiOp(o), c->comm);
    std::memcpy(recv, out.data(), bytes);
  });
  return ncclSuccess;
}
extern "C" ncclResult_t ncclAllReduce(const void *s, void *r, size_t count,
                                      ncclDataType_t t, ncclRedOp_t o,
                                      ncclComm_t c, cudaStream_t) {
  size_t bytes = count * typeSize(t);
  const char *send = (const char *)s;
  char *recv = (char *)r;
  if (send != recv && overlap(send, bytes, recv, bytes))
    fail("allreduce: partial overlap");
  queue().push_back([=] {
    std::vector<char> in(send, send + bytes), out(bytes);
    MPI_Allreduce(in.data(), out.data(), (int)count, mpiType(t), mpiOp(o),
                  c->comm);
    std::memcpy(recv, out.data(), bytes);
  });
  return ncclSuccess;
}
struct P2P {
  bool send;
  char *buf;
  size_t bytes;
  int peer;
  ncclComm_t comm;
};
static std::vector<P2P> pending;
extern "C" ncclResult_t ncclSend(const void *b, size_t count, ncclDataType_t t,
                                 int peer, ncclComm_t c, cudaStream_t) {
  if (!groupDepth)
    fail("send outside group");
  if (peer < 0 || peer >= c->size)
    fail("send peer out of range");
  pending.push_back({true, const_cast<char *>(static_cast<const char *>(b)),
                     count * typeSize(t), peer, c});
  return ncclSuccess;
}
extern "C" ncclResult_t ncclRecv(void *b, size_t count, ncclDataType_t t,
                                 int peer, ncclComm_t c, cudaStream_t) {
  if (!groupDepth)
    fail("recv outside group");
  if (peer < 0 || peer >= c->size)
    fail("recv peer out of range");
  pending.push_back({false, (char *)b, count * typeSize(t), peer, c});
  return ncclSuccess;
}
extern "C" ncclResult_t ncclGroupStart() {
  ++groupDepth;
  return ncclSuccess;
}
extern "C" ncclResult_t ncclGroupEnd() {
  if (--groupDepth)
    return ncclSuccess;
  std::vector<P2P> ops;
  ops.swap(pending);
  if (ops.empty())
    return ncclSuccess;
  queue().push_back([ops] {
    std::vector<MPI_Request> reqs(ops.size());
    std::vector<std::vector<char>> tmp(ops.size());
    for (size_t i = 0; i < ops.size(); ++i) {
      const P2P &p = ops[i];
      if (p.send) {
        tmp[i].assign(p.buf, p.buf + p.bytes);
        MPI_Isend(tmp[i].data(), (int)p.bytes, MPI_BYTE, p.peer, 99,
                  p.comm->comm, &reqs[i]);
      } else {
        tmp[i].resize(p.bytes + 1);
        MPI_Irecv(tmp[i].data(), (int)p.bytes + 1, MPI_BYTE, p.peer, 99,
                  p.comm->comm, &reqs[i]);
      }
    }
    std::vector<MPI_Status> st(ops.size());
    MPI_Waitall((int)ops.size(), reqs.data(), st.data());
    for (size_t i = 0; i < ops.size(); ++i)
      if (!ops[i].send) {
        int n;
        MPI_Get_count(&st[i], MPI_BYTE, &n);
        if ((size_t)n != ops[i].bytes)
          fail("recv size differs from the matching send");
        std::memcpy(ops[i].buf, tmp[i].data(), ops[i].bytes);
      }
  });
  return ncclSuccess;
}
