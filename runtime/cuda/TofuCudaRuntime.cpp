//===- TofuCudaRuntime.cpp - The CUDA runtime -----------------------------===//
//
// Implements include/tofu/Runtime/TofuCudaRuntime.h over the CUDA driver
// API (modules, launches, streams, events, memory), cuBLAS (GEMMs) and
// cuDNN (convolutions). The primary context of the calling rank's device
// is retained on first use and made current on every entry point, so that
// the functions can be called from any host thread. All GPU work of a rank
// goes to one non-blocking stream, never destroyed: mgpuStreamCreate
// returns it, mgpuStreamDestroy leaves it, and the rank's cuBLAS and cuDNN
// handles (created once, each with its own workspace) queue their calls on
// it, so that kernels and library calls run in program order without the
// host waiting between them. A rank is the process, or each in-process
// worker of a team (`--workers K`), which runs on its own device of
// WorkerDevices.h where the machine has several; each module of the lowered
// code is loaded on the loading rank's device, and into another device's
// context where a rank first launches one of its kernels there. Memory comes
// from a caching allocator (BlockCache.h): device memory for the buffers
// that only the GPU touches, managed memory for the others; a freed block
// is reused in stream order without a driver call, so that only the first
// step allocates from the driver.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/TofuCudaRuntime.h"
#include "tofu/Runtime/BlockCache.h"
#include "tofu/Runtime/CallTrace.h"
#include "tofu/Runtime/ConvPlan.h"
#include "tofu/Runtime/GemmPlan.h"
#include "tofu/Runtime/OpProfile.h"
#include "tofu/Runtime/WorkerDevices.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudnn.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace {

[[noreturn]] void fatal(const char *call, const char *error) {
  std::fprintf(stderr, "tofu cuda runtime: %s failed: %s\n", call, error);
  std::abort();
}

/// Aborts for a failed driver call, naming the error and its code (the
/// name is unknown once the driver is shutting down).
[[noreturn]] void fatalDriver(const char *call, CUresult result) {
  const char *name = nullptr;
  if (cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = nullptr;
  char error[96];
  std::snprintf(error, sizeof(error), "%s (CUresult %d)",
                name ? name : "unknown CUresult", static_cast<int>(result));
  fatal(call, error);
}

/// Checks a CUDA driver API call, naming it on failure.
#define TOFU_CU_CHECK(call)                                                    \
  do {                                                                         \
    CUresult result_ = (call);                                                 \
    if (result_ != CUDA_SUCCESS)                                               \
      fatalDriver(#call, result_);                                             \
  } while (0)

/// Checks a CUDA runtime API call, naming it on failure.
#define TOFU_CUDART_CHECK(call)                                                \
  do {                                                                         \
    cudaError_t error_ = (call);                                               \
    if (error_ != cudaSuccess)                                                 \
      fatal(#call, cudaGetErrorName(error_));                                  \
  } while (0)

/// Checks a cuBLAS call, naming it on failure.
#define TOFU_CUBLAS_CHECK(call)                                                \
  do {                                                                         \
    cublasStatus_t status_ = (call);                                           \
    if (status_ != CUBLAS_STATUS_SUCCESS)                                      \
      fatal(#call, cublasGetStatusName(status_));                              \
  } while (0)

/// Checks a cuDNN call, naming it on failure.
#define TOFU_CUDNN_CHECK(call)                                                 \
  do {                                                                         \
    cudnnStatus_t status_ = (call);                                            \
    if (status_ != CUDNN_STATUS_SUCCESS)                                       \
      fatal(#call, cudnnGetErrorString(status_));                              \
  } while (0)

/// Reports a misuse of a tofu_gpu_* entry point and aborts.
[[noreturn]] void misuse(const char *function, const char *message) {
  std::fprintf(stderr, "tofu cuda runtime: %s: %s\n", function, message);
  std::abort();
}

/// A device and its retained primary context.
struct Device {
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
};

/// Guards the devices, the driver's initialization and the peer access.
std::mutex deviceMutex;
int requestedOrdinal = 0;
bool ordinalRequested = false;
/// The devices opened so far, by ordinal.
std::map<int, Device *> openDevices;
/// Whether a device was opened, read without the lock: the process may
/// exit while a thread holds it (no driver: initDriver), and the exit
/// runs the lowered code's module destructors.
std::atomic<bool> anyDeviceOpen{false};
/// The device of the process rank (the caller outside a team of
/// in-process workers), once chosen.
Device *processDevice = nullptr;

/// The process's rank on its node where mpiexec started it (MPICH's Hydra
/// sets MPI_LOCALRANKID, Open MPI OMPI_COMM_WORLD_LOCAL_RANK); null outside
/// mpiexec.
const char *getLocalRank() {
  const char *local = std::getenv("MPI_LOCALRANKID");
  return local ? local : std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
}

/// The device of a process that mpiexec started with others on its node:
/// its rank on the node modulo the number of devices, so that one process
/// runs on each GPU; device 0 outside mpiexec.
int getLocalOrdinal(int count) {
  const char *local = getLocalRank();
  if (!local || count < 1)
    return 0;
  return std::atoi(local) % count;
}

/// The most devices a process uses (ordinals 0 to kMaxDevices - 1).
constexpr int kMaxDevices = 64;

/// Set by an exit handler that runs before the driver's own teardown.
/// After it, the driver may already be shut down, so the entry points that
/// the lowered code's module destructors call (mgpuModuleUnload) do
/// nothing: the process releases everything as it exits.
std::atomic<bool> exiting{false};

void markExiting() { exiting.store(true); }

/// Initializes the driver once and returns the number of devices; call
/// with deviceMutex held. Without a driver or a device the process stops
/// here (the lowered code loads its modules before main runs), with the
/// reason.
int initDriver() {
  static int count = -1;
  if (count >= 0)
    return count;
  CUresult init = cuInit(/*Flags=*/0);
  if (init != CUDA_SUCCESS) {
    const char *name = nullptr;
    if (cuGetErrorName(init, &name) != CUDA_SUCCESS)
      name = nullptr;
    std::fprintf(stderr,
                 "tofu cuda runtime: no usable GPU: cuInit failed: %s "
                 "(CUresult %d)\n",
                 name ? name : "unknown CUresult", static_cast<int>(init));
    std::exit(2);
  }
  // Registered after cuInit, so that it runs before the exit handlers that
  // the driver and the CUDA runtime register, and certainly before the
  // executable's destructors (run after every exit handler).
  std::atexit(markExiting);
  // Where the count is unknown, device 0 (cuDeviceGet then names the
  // error).
  int devices = 0;
  count = cuDeviceGetCount(&devices) == CUDA_SUCCESS ? devices : 0;
  return count;
}

/// Retains the primary context of device `ordinal` once; call with
/// deviceMutex held.
Device &openDevice(int ordinal) {
  if (ordinal < 0 || ordinal >= kMaxDevices)
    misuse("the device", "its ordinal must be in [0, 64)");
  Device *&d = openDevices[ordinal];
  if (!d) {
    auto *opened = new Device();
    opened->ordinal = ordinal;
    TOFU_CU_CHECK(cuDeviceGet(&opened->device, ordinal));
    TOFU_CU_CHECK(cuDevicePrimaryCtxRetain(&opened->context, opened->device));
    d = opened;
    anyDeviceOpen.store(true);
  }
  return *d;
}

} // namespace

/// The calling in-process worker's rank (runtime/cpu/Workers.h), -1 outside
/// a team, and the team's size: defined by the CPU runtime, weak so that
/// this library also loads without it.
extern "C" int64_t tofu_worker_rank(void) __attribute__((weak));
extern "C" int64_t tofu_worker_count(void) __attribute__((weak));

namespace {

int getWorkerRank() { return tofu_worker_rank ? int(tofu_worker_rank()) : -1; }

int getWorkerCount() {
  return tofu_worker_count ? int(tofu_worker_count()) : 0;
}

/// TOFU_GPU_WORKER_DEVICES, read once (WorkerDevices.h).
int getWorkerDeviceLimit() {
  static int limit = [] {
    std::string error;
    int parsed = tofu::gpu::parseWorkerDeviceLimit(
        std::getenv("TOFU_GPU_WORKER_DEVICES"), error);
    if (parsed < 0)
      misuse("the in-process workers' devices", error.c_str());
    return parsed;
  }();
  return limit;
}

/// Lets each of the first `teamDevices` devices read the memory of every
/// other (the collectives' kernels read the peers' tiles in place); false
/// with the reason where a pair cannot. Call with deviceMutex held.
bool enablePeerAccess(int teamDevices, std::string &why) {
  for (int a = 0; a < teamDevices; ++a)
    openDevice(a);
  for (int a = 0; a < teamDevices; ++a) {
    Device &from = *openDevices[a];
    TOFU_CU_CHECK(cuCtxSetCurrent(from.context));
    for (int b = 0; b < teamDevices; ++b) {
      if (a == b)
        continue;
      Device &to = *openDevices[b];
      int can = 0;
      TOFU_CU_CHECK(cuDeviceCanAccessPeer(&can, from.device, to.device));
      if (!can) {
        why = "device " + std::to_string(a) + " cannot read device " +
              std::to_string(b) + "'s memory (no peer access)";
        return false;
      }
      CUresult result = cuCtxEnablePeerAccess(to.context, 0);
      if (result == CUDA_ERROR_TOO_MANY_PEERS) {
        why = "device " + std::to_string(a) + " has too many peers";
        return false;
      }
      if (result != CUDA_SUCCESS &&
          result != CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED)
        fatalDriver("cuCtxEnablePeerAccess", result);
    }
  }
  return true;
}

/// The number of devices a team of `workers` uses (WorkerDevices.h), with
/// peer access between them, decided once per team size: where a pair of
/// devices cannot read each other's memory, the whole team shares device 0
/// (with a warning: run one process per GPU under mpiexec to use them
/// all). Call with deviceMutex held.
int getTeamDevices(int workers, int count) {
  static std::map<int, int> decided;
  auto it = decided.find(workers);
  if (it != decided.end())
    return it->second;
  int teamDevices =
      tofu::gpu::getTeamDeviceCount(workers, count, getWorkerDeviceLimit());
  std::string why;
  if (teamDevices > 1 && !enablePeerAccess(teamDevices, why)) {
    std::fprintf(stderr,
                 "tofu cuda runtime: warning: the %d workers share device 0: "
                 "%s (one process per GPU under mpiexec uses them all)\n",
                 workers, why.c_str());
    teamDevices = 1;
  }
  decided[workers] = teamDevices;
  return teamDevices;
}

/// The calling rank's device, with its context made current: the process
/// rank's (the requested ordinal, or the node-local rank's under mpiexec),
/// or an in-process worker's (WorkerDevices.h; the whole team on the
/// process's device when one was requested or mpiexec started the
/// process). Cached per thread with the rank it was chosen for: worker 0
/// runs on the thread that started the team.
Device &getDevice() {
  thread_local Device *device = nullptr;
  thread_local int deviceRank = -2;
  int rank = getWorkerRank();
  if (!device || deviceRank != rank) {
    std::lock_guard<std::mutex> lock(deviceMutex);
    int count = initDriver();
    if (rank < 0 || ordinalRequested || getLocalRank()) {
      if (!processDevice)
        processDevice = &openDevice(ordinalRequested ? requestedOrdinal
                                                     : getLocalOrdinal(count));
      device = processDevice;
    } else {
      int teamDevices = getTeamDevices(getWorkerCount(), count);
      device = &openDevice(tofu::gpu::getWorkerDevice(rank, teamDevices));
    }
    deviceRank = rank;
  }
  TOFU_CU_CHECK(cuCtxSetCurrent(device->context));
  return *device;
}

struct Blas;
struct Dnn;
struct LockedBlockCache;
struct StepTimer;

/// What a rank has of its own on its device: the process's one rank, or
/// each in-process worker of `tofu-run --gpu --workers K` (on its device
/// of WorkerDevices.h), whose streams, library handles, memory and timers
/// stay apart: a block freed on one stream is reused on that stream only.
struct Rank {
  /// Created by the rank's first call (the process rank's may be asked for
  /// from any thread).
  std::atomic<CUstream> stream{nullptr};
  Blas *blas = nullptr;
  Dnn *dnn = nullptr;
  LockedBlockCache *cache = nullptr;
  StepTimer *timer = nullptr;
};

/// Guards the creation of the process rank's state and the list of the
/// ranks' caches.
std::mutex rankMutex;

Rank &getRank() {
  static Rank process;
  thread_local Rank *worker = nullptr;
  if (getWorkerRank() < 0)
    return process;
  if (!worker)
    worker = new Rank();
  return *worker;
}

/// The calling rank's stream (the process's, or a worker's own); makes the
/// device's context current.
CUstream getRankStream() {
  getDevice();
  Rank &r = getRank();
  if (CUstream stream = r.stream.load(std::memory_order_acquire))
    return stream;
  std::lock_guard<std::mutex> lock(rankMutex);
  CUstream stream = r.stream.load(std::memory_order_relaxed);
  if (!stream) {
    TOFU_CU_CHECK(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    r.stream.store(stream, std::memory_order_release);
  }
  return stream;
}

// Profile

/// TOFU_GPU_PROFILE=1: a pair of timing events around every kernel launch,
/// library call, copy and fill of a timed step (between
/// tofu_gpu_timer_begin and _end), read when the step ends and reported
/// per op by tofu_gpu_timer_report (OpProfile.h).
struct Profiler {
  std::mutex mutex;
  bool enabled = false;
  bool inStep = false;
  tofu::gpu::OpProfile profile;
  /// Reused from step to step; the first `used` are recorded this step.
  std::vector<CUevent> events;
  size_t used = 0;
  struct Pending {
    int id;
    CUevent start, stop;
  };
  std::vector<Pending> pending;

  CUevent nextEvent() {
    if (used == events.size()) {
      CUevent event = nullptr;
      TOFU_CU_CHECK(cuEventCreate(&event, CU_EVENT_DEFAULT));
      events.push_back(event);
    }
    return events[used++];
  }
};

Profiler &getProfiler() {
  static Profiler *profiler = [] {
    auto *p = new Profiler();
    const char *value = std::getenv("TOFU_GPU_PROFILE");
    p->enabled = value && std::strcmp(value, "1") == 0;
    return p;
  }();
  return *profiler;
}

/// Times the GPU work queued on `stream` during its lifetime as one
/// execution of the op that `name()` names, when profiling a step.
class OpTimer {
public:
  template <typename NameFn>
  OpTimer(tofu::gpu::OpClass opClass, CUstream stream, NameFn name)
      : stream(stream) {
    Profiler &p = getProfiler();
    // In-process workers: worker 0's ops are profiled.
    if (!p.enabled || getWorkerRank() > 0)
      return;
    {
      std::lock_guard<std::mutex> lock(p.mutex);
      if (!p.inStep)
        return;
    }
    std::string text = name();
    std::lock_guard<std::mutex> lock(p.mutex);
    id = p.profile.getId(text, opClass);
    start = p.nextEvent();
    TOFU_CU_CHECK(cuEventRecord(start, stream));
  }
  ~OpTimer() {
    if (!start)
      return;
    Profiler &p = getProfiler();
    std::lock_guard<std::mutex> lock(p.mutex);
    CUevent stop = p.nextEvent();
    TOFU_CU_CHECK(cuEventRecord(stop, stream));
    p.pending.push_back({id, start, stop});
  }
  OpTimer(const OpTimer &) = delete;
  OpTimer &operator=(const OpTimer &) = delete;

private:
  CUstream stream;
  CUevent start = nullptr;
  int id = -1;
};

/// Reads the events of the step that just ended (its stop event has been
/// waited for) into the profile.
void finishProfiledStep() {
  Profiler &p = getProfiler();
  if (!p.enabled)
    return;
  std::lock_guard<std::mutex> lock(p.mutex);
  for (const Profiler::Pending &op : p.pending) {
    float ms = 0.0f;
    TOFU_CU_CHECK(cuEventElapsedTime(&ms, op.start, op.stop));
    p.profile.add(op.id, ms);
  }
  p.pending.clear();
  p.used = 0;
  p.inStep = false;
}

/// Bytes of the cuBLAS and cuDNN workspaces (outside the block cache).
std::atomic<uint64_t> workspaceBytes{0};

/// Whether TOFU_GPU_TF32=1 allows TF32 tensor-core math.
bool allowsTF32() {
  const char *tf32 = std::getenv("TOFU_GPU_TF32");
  return tf32 && std::strcmp(tf32, "1") == 0;
}

/// Workspace given to cuBLAS (split-K and similar algorithms use it).
constexpr size_t kCublasWorkspaceBytes = size_t(32) << 20;

/// The cuBLAS handle, its stream (the process's) and workspace.
struct Blas {
  cublasHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  void *workspace = nullptr;
};

std::mutex blasMutex;

Blas &getBlas() {
  CUstream stream = getRankStream();
  std::lock_guard<std::mutex> lock(blasMutex);
  Blas *&blas = getRank().blas;
  if (!blas) {
    auto *b = new Blas();
    TOFU_CUDART_CHECK(cudaSetDevice(getDevice().ordinal));
    TOFU_CUBLAS_CHECK(cublasCreate(&b->handle));
    b->stream = stream;
    TOFU_CUBLAS_CHECK(cublasSetStream(b->handle, b->stream));
    TOFU_CUDART_CHECK(cudaMalloc(&b->workspace, kCublasWorkspaceBytes));
    workspaceBytes += kCublasWorkspaceBytes;
    TOFU_CUBLAS_CHECK(
        cublasSetWorkspace(b->handle, b->workspace, kCublasWorkspaceBytes));
    cublasMath_t mode =
        allowsTF32() ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH;
    TOFU_CUBLAS_CHECK(cublasSetMathMode(b->handle, mode));
    blas = b;
  }
  return *blas;
}

/// A convolution algorithm chosen for one problem, of the enum type of its
/// kind, with the workspace it needs and its math type.
struct ConvAlgorithm {
  int algorithm = 0;
  size_t workspaceBytes = 0;
  cudnnMathType_t math = CUDNN_FMA_MATH;
};

/// What an algorithm is chosen for: the problem (tofu::gpu::getConvKey)
/// and the math.
using ConvKey = std::array<intptr_t, tofu::gpu::ConvKey().size() + 1>;

/// A rank's cuDNN handle (on the rank's stream, so that library calls and
/// kernels stay in order), its descriptors (set again for each call) and
/// its workspace (grown on demand, never shrunk).
struct Dnn {
  cudnnHandle_t handle = nullptr;
  cudaStream_t stream = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  void *workspace = nullptr;
  size_t workspaceBytes = 0;
};

/// The algorithm chosen for each problem, for every rank of the process
/// (in-process workers compute replicated convolutions alike, so they must
/// run the same algorithm); guarded by dnnMutex.
std::map<ConvKey, ConvAlgorithm> &getChosenAlgorithms() {
  static auto *chosen = new std::map<ConvKey, ConvAlgorithm>;
  return *chosen;
}

/// Guards each rank's Dnn and every call that uses its descriptors.
std::mutex dnnMutex;

/// Creates the rank's handle and descriptors once; call with dnnMutex
/// held.
Dnn &getDnn() {
  Blas &blasState = getBlas();
  Dnn *&dnn = getRank().dnn;
  if (!dnn) {
    auto *d = new Dnn();
    TOFU_CUDNN_CHECK(cudnnCreate(&d->handle));
    d->stream = blasState.stream;
    TOFU_CUDNN_CHECK(cudnnSetStream(d->handle, d->stream));
    TOFU_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d->x));
    TOFU_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d->y));
    TOFU_CUDNN_CHECK(cudnnCreateFilterDescriptor(&d->w));
    TOFU_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&d->conv));
    dnn = d;
  }
  return *dnn;
}

/// Destroys the cuDNN state; call with dnnMutex held, before the stream
/// is destroyed.
void destroyDnn() {
  Dnn *&dnn = getRank().dnn;
  if (!dnn)
    return;
  TOFU_CUDART_CHECK(cudaStreamSynchronize(dnn->stream));
  TOFU_CUDNN_CHECK(cudnnDestroyConvolutionDescriptor(dnn->conv));
  TOFU_CUDNN_CHECK(cudnnDestroyFilterDescriptor(dnn->w));
  TOFU_CUDNN_CHECK(cudnnDestroyTensorDescriptor(dnn->y));
  TOFU_CUDNN_CHECK(cudnnDestroyTensorDescriptor(dnn->x));
  TOFU_CUDNN_CHECK(cudnnDestroy(dnn->handle));
  if (dnn->workspace)
    TOFU_CUDART_CHECK(cudaFree(dnn->workspace));
  delete dnn;
  dnn = nullptr;
}

/// Describes a planned problem to cuDNN (every value fits in int).
void setDescriptors(Dnn &d, const tofu::gpu::ConvProblem &p) {
  auto toInts = [](const intptr_t *values, int *out) {
    for (int i = 0; i < 4; ++i)
      out[i] = static_cast<int>(values[i]);
  };
  intptr_t sizes[4];
  int dims[4], strides[4];
  p.getXSizes(sizes);
  toInts(sizes, dims);
  toInts(p.xStrides, strides);
  TOFU_CUDNN_CHECK(
      cudnnSetTensorNdDescriptor(d.x, CUDNN_DATA_FLOAT, 4, dims, strides));
  p.getYSizes(sizes);
  toInts(sizes, dims);
  toInts(p.yStrides, strides);
  TOFU_CUDNN_CHECK(
      cudnnSetTensorNdDescriptor(d.y, CUDNN_DATA_FLOAT, 4, dims, strides));
  // The filter of a grouped convolution has the channels of one group;
  // the image and the output have all of them.
  TOFU_CUDNN_CHECK(cudnnSetFilter4dDescriptor(
      d.w, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, int(p.f),
      int(p.getGroupChannels()), int(p.kh), int(p.kw)));
  TOFU_CUDNN_CHECK(cudnnSetConvolution2dDescriptor(
      d.conv, int(p.padH), int(p.padW), int(p.strideH), int(p.strideW),
      /*dilation_h=*/1, /*dilation_w=*/1, CUDNN_CROSS_CORRELATION,
      CUDNN_DATA_FLOAT));
  // Set on every call: the descriptor is shared by all problems.
  TOFU_CUDNN_CHECK(cudnnSetConvolutionGroupCount(d.conv, int(p.groups)));
  TOFU_CUDNN_CHECK(cudnnSetConvolutionMathType(
      d.conv, allowsTF32() ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH));
}

/// Whether TOFU_GPU_NONDETERMINISTIC=1 lets cuDNN use algorithms whose
/// results vary from run to run (atomic accumulation).
bool allowsNondeterminism() {
  const char *allowed = std::getenv("TOFU_GPU_NONDETERMINISTIC");
  return allowed && std::strcmp(allowed, "1") == 0;
}

/// Whether TOFU_GPU_CUDNN_HEURISTICS=1 ranks the algorithms by cuDNN's
/// heuristics (cudnnGet*Algorithm_v7) rather than by timing each on the
/// problem (cudnnFind*Algorithm, the default).
bool usesHeuristics() {
  const char *value = std::getenv("TOFU_GPU_CUDNN_HEURISTICS");
  return value && std::strcmp(value, "1") == 0;
}

/// Ranks the algorithms of a convolution with `find(requested, &count,
/// perfs)` (cuDNN times each on the problem, fastest first) or, for a
/// `small` problem (whose timings are mostly noise, so that two runs
/// would choose differently), with TOFU_GPU_CUDNN_HEURISTICS=1 or when
/// timing fails (e.g. for want of memory for its own buffers), `get(...)`
/// (cuDNN's heuristics, the same from run to run), and takes
/// the first usable deterministic algorithm (bit-identical results from
/// run to run), or the first usable one if none is deterministic or
/// TOFU_GPU_NONDETERMINISTIC=1. Of timed algorithms within 5% or 50
/// microseconds of that one, the lowest-numbered is taken, so that timing
/// noise does not change the choice from run to run (two deterministic
/// algorithms may round differently). TOFU_GPU_CUDNN_LOG=1 prints each
/// choice with the candidates' times.
template <typename Perf, typename Find, typename Get>
ConvAlgorithm queryAlgorithms(const char *entry, bool small, Find find,
                              Get get) {
  constexpr int kRequested = 16;
  Perf perfs[kRequested];
  int count = 0;
  bool timed = !small && !usesHeuristics() &&
               find(kRequested, &count, perfs) == CUDNN_STATUS_SUCCESS;
  if (!timed)
    TOFU_CUDNN_CHECK(get(kRequested, &count, perfs));
  auto usable = [](const Perf &p) { return p.status == CUDNN_STATUS_SUCCESS; };
  auto deterministic = [&](const Perf &p) {
    return usable(p) &&
           (allowsNondeterminism() || p.determinism == CUDNN_DETERMINISTIC);
  };
  bool anyDeterministic = std::any_of(perfs, perfs + count, deterministic);
  auto candidate = [&](const Perf &p) {
    return anyDeterministic ? deterministic(p) : usable(p);
  };
  const Perf *chosen = std::find_if(perfs, perfs + count, candidate);
  if (chosen == perfs + count)
    misuse(entry, "cuDNN offers no algorithm for this convolution");
  if (timed) {
    float limit = std::max(chosen->time * 1.05f, chosen->time + 0.05f);
    for (int i = 0; i < count; ++i)
      if (candidate(perfs[i]) && perfs[i].time <= limit &&
          perfs[i].algo < chosen->algo)
        chosen = &perfs[i];
  }
  if (const char *log = std::getenv("TOFU_GPU_CUDNN_LOG");
      log && std::strcmp(log, "1") == 0) {
    std::fprintf(stderr, "tofu cuda runtime: %s: algorithm %d of", entry,
                 static_cast<int>(chosen->algo));
    for (int i = 0; i < count; ++i)
      if (usable(perfs[i]))
        std::fprintf(stderr, " %d%s(%.4f ms)", static_cast<int>(perfs[i].algo),
                     perfs[i].determinism == CUDNN_DETERMINISTIC ? "" : "*",
                     timed ? perfs[i].time : -1.0f);
    std::fprintf(stderr, "\n");
  }
  return {static_cast<int>(chosen->algo), chosen->memory, chosen->mathType};
}

/// Chooses (once per problem) the algorithm of a convolution whose
/// descriptors are set.
ConvAlgorithm getAlgorithm(Dnn &d, const char *entry, tofu::gpu::ConvKind kind,
                           const tofu::gpu::ConvProblem &p) {
  ConvKey key;
  tofu::gpu::ConvKey problem = tofu::gpu::getConvKey(kind, p);
  std::copy(problem.begin(), problem.end(), key.begin());
  key.back() = allowsTF32();
  std::map<ConvKey, ConvAlgorithm> &algorithms = getChosenAlgorithms();
  auto it = algorithms.find(key);
  if (it != algorithms.end())
    return it->second;
  ConvAlgorithm chosen;
  // Under 2^30 multiply-adds a convolution takes about 0.1 ms or less on
  // an H100, where cudnnFind's timings differ from run to run by more
  // than the algorithms do.
  double macs =
      double(p.n) * p.f * p.oh * p.ow * p.getGroupChannels() * p.kh * p.kw;
  bool small = macs < double(1 << 30);
  switch (kind) {
  case tofu::gpu::ConvKind::Forward:
    chosen = queryAlgorithms<cudnnConvolutionFwdAlgoPerf_t>(
        entry, small,
        [&](int requested, int *count, auto *perfs) {
          return cudnnFindConvolutionForwardAlgorithm(
              d.handle, d.x, d.w, d.conv, d.y, requested, count, perfs);
        },
        [&](int requested, int *count, auto *perfs) {
          return cudnnGetConvolutionForwardAlgorithm_v7(
              d.handle, d.x, d.w, d.conv, d.y, requested, count, perfs);
        });
    break;
  case tofu::gpu::ConvKind::BackwardData:
    chosen = queryAlgorithms<cudnnConvolutionBwdDataAlgoPerf_t>(
        entry, small,
        [&](int requested, int *count, auto *perfs) {
          return cudnnFindConvolutionBackwardDataAlgorithm(
              d.handle, d.w, d.y, d.conv, d.x, requested, count, perfs);
        },
        [&](int requested, int *count, auto *perfs) {
          return cudnnGetConvolutionBackwardDataAlgorithm_v7(
              d.handle, d.w, d.y, d.conv, d.x, requested, count, perfs);
        });
    break;
  case tofu::gpu::ConvKind::BackwardFilter:
    chosen = queryAlgorithms<cudnnConvolutionBwdFilterAlgoPerf_t>(
        entry, small,
        [&](int requested, int *count, auto *perfs) {
          return cudnnFindConvolutionBackwardFilterAlgorithm(
              d.handle, d.x, d.y, d.conv, d.w, requested, count, perfs);
        },
        [&](int requested, int *count, auto *perfs) {
          return cudnnGetConvolutionBackwardFilterAlgorithm_v7(
              d.handle, d.x, d.y, d.conv, d.w, requested, count, perfs);
        });
    break;
  }
  algorithms.emplace(key, chosen);
  return chosen;
}

/// Grows the workspace to at least `bytes` (after the queued calls that
/// may still use the old one).
void reserveWorkspace(Dnn &d, size_t bytes) {
  if (bytes <= d.workspaceBytes)
    return;
  TOFU_CUDART_CHECK(cudaStreamSynchronize(d.stream));
  if (d.workspace)
    TOFU_CUDART_CHECK(cudaFree(d.workspace));
  d.workspace = nullptr;
  TOFU_CUDART_CHECK(cudaMalloc(&d.workspace, bytes));
  workspaceBytes += bytes - d.workspaceBytes;
  d.workspaceBytes = bytes;
}

#ifdef TOFU_HAVE_GPU_WORKERS
} // namespace

namespace tofu::runtime::collectives {
// Collectives.cpp (CollectivesSupport.h, whose error macros are its own).
CUfunction getFatbinKernel(const char *name);
} // namespace tofu::runtime::collectives

namespace {
#endif

/// TOFU_GPU_TRACE: the checksum of an operand's contents once the work
/// queued on the caller's stream is done (CallTrace.h): on the GPU where
/// the checksum kernel is built, else from a host copy.
uint64_t checksumOnDevice(const tofu::trace::Operand &operand) {
  CUstream stream = getRankStream();
  long long total = tofu::trace::getVolume(operand.shape);
  if (total == 0)
    return 0;
#ifdef TOFU_HAVE_GPU_WORKERS
  // One sum per thread of the host (a rank or an in-process worker, each on
  // its own device), kept: freeing it could wait for the whole GPU.
  thread_local CUdeviceptr sum = 0;
  if (!sum)
    TOFU_CU_CHECK(cuMemAlloc(&sum, sizeof(uint64_t)));
  TOFU_CU_CHECK(cuMemsetD8Async(sum, 0, sizeof(uint64_t), stream));
  const float *first = reinterpret_cast<const float *>(operand.address);
  tofu::trace::Shape shape = operand.shape;
  void *params[] = {&first, &shape, &total, &sum};
  unsigned blocks = unsigned(std::min<long long>((total + 255) / 256, 1024));
  TOFU_CU_CHECK(cuLaunchKernel(
      tofu::runtime::collectives::getFatbinKernel("tofu_checksum"), blocks, 1,
      1, 256, 1, 1, 0, stream, params, nullptr));
  uint64_t result = 0;
  TOFU_CU_CHECK(cuMemcpyDtoHAsync(&result, sum, sizeof(result), stream));
  TOFU_CU_CHECK(cuStreamSynchronize(stream));
  return result;
#else
  std::vector<float> copy(size_t(tofu::trace::getSpan(operand.shape)));
  TOFU_CU_CHECK(cuStreamSynchronize(stream));
  TOFU_CU_CHECK(cuMemcpyDtoH(copy.data(), CUdeviceptr(operand.address),
                             copy.size() * sizeof(float)));
  return tofu::trace::checksumOnHost(copy.data(), operand.shape);
#endif
}

int runPlannedConv(const char *entry, tofu::gpu::ConvKind kind,
                   tofu::gpu::ConvProblem p);

/// One convolution entry point: checks the call and queues it on the
/// process's stream (the host does not wait for it).
void runConv(const char *entry, tofu::gpu::ConvKind kind,
             tofu::gpu::ConvProblem p) {
  std::string error = tofu::gpu::planConv(p);
  if (!error.empty())
    misuse(entry, error.c_str());
  // A traced call names its algorithm: tracing waits around every call,
  // which changes the timings that choose an algorithm.
  int algorithm = -1;
  tofu::trace::traceCall(
      std::max(getWorkerRank(), 0),
      [&] {
        return tofu::gpu::describeConv(entry, p) + " algorithm " +
               std::to_string(algorithm);
      },
      [&] { return tofu::trace::getConvOperands(kind, p); },
      [&] { algorithm = runPlannedConv(entry, kind, p); }, checksumOnDevice);
}

/// Queues a checked convolution call; returns cuDNN's algorithm.
int runPlannedConv(const char *entry, tofu::gpu::ConvKind kind,
                   tofu::gpu::ConvProblem p) {
  std::lock_guard<std::mutex> lock(dnnMutex);
  Dnn &d = getDnn();
  setDescriptors(d, p);
  ConvAlgorithm algorithm = getAlgorithm(d, entry, kind, p);
  if (allowsTF32())
    TOFU_CUDNN_CHECK(cudnnSetConvolutionMathType(d.conv, algorithm.math));
  reserveWorkspace(d, algorithm.workspaceBytes);
  OpTimer timer(tofu::gpu::OpClass::Cudnn, getRankStream(),
                [&] { return tofu::gpu::describeConv(entry, p); });
  const float alpha = 1.0f;
  // The tensor that the call writes: its address, sizes and strides.
  intptr_t out = p.filter, sizes[4];
  const intptr_t *strides = p.wStrides;
  if (kind == tofu::gpu::ConvKind::Forward) {
    out = p.y, strides = p.yStrides;
    p.getYSizes(sizes);
  } else if (kind == tofu::gpu::ConvKind::BackwardData) {
    out = p.x, strides = p.xStrides;
    p.getXSizes(sizes);
  } else {
    p.getWSizes(sizes);
  }
  // Queues the call with `target` in place of the tensor that it writes.
  auto launch = [&](intptr_t target) {
    auto *x = reinterpret_cast<float *>(
        kind == tofu::gpu::ConvKind::BackwardData ? target : p.x);
    auto *w = reinterpret_cast<float *>(
        kind == tofu::gpu::ConvKind::BackwardFilter ? target : p.filter);
    auto *y = reinterpret_cast<float *>(
        kind == tofu::gpu::ConvKind::Forward ? target : p.y);
    switch (kind) {
    case tofu::gpu::ConvKind::Forward:
      TOFU_CUDNN_CHECK(cudnnConvolutionForward(
          d.handle, &alpha, d.x, x, d.w, w, d.conv,
          static_cast<cudnnConvolutionFwdAlgo_t>(algorithm.algorithm),
          d.workspace, algorithm.workspaceBytes, &p.beta, d.y, y));
      break;
    case tofu::gpu::ConvKind::BackwardData:
      TOFU_CUDNN_CHECK(cudnnConvolutionBackwardData(
          d.handle, &alpha, d.w, w, d.y, y, d.conv,
          static_cast<cudnnConvolutionBwdDataAlgo_t>(algorithm.algorithm),
          d.workspace, algorithm.workspaceBytes, &p.beta, d.x, x));
      break;
    case tofu::gpu::ConvKind::BackwardFilter:
      TOFU_CUDNN_CHECK(cudnnConvolutionBackwardFilter(
          d.handle, &alpha, d.x, x, d.y, y, d.conv,
          static_cast<cudnnConvolutionBwdFilterAlgo_t>(algorithm.algorithm),
          d.workspace, algorithm.workspaceBytes, &p.beta, d.w, w));
      break;
    }
  };
  static const int checks = [] {
    const char *value = std::getenv("TOFU_GPU_CUDNN_CHECK");
    return value ? std::atoi(value) : 0;
  }();
  static std::map<std::string, int> checked;
  std::string name =
      checks > 0 ? tofu::gpu::describeConv(entry, p) : std::string();
  if (checks <= 0 || checked[name]++ >= checks) {
    launch(out);
    return algorithm.algorithm;
  }
  // TOFU_GPU_CUDNN_CHECK=N: the first N calls of each problem run twice,
  // the second time on a copy of the written tensor's previous contents,
  // and the two results are compared bit for bit (a diagnostic: it waits).
  size_t span = 1;
  for (int k = 0; k < 4; ++k)
    span += size_t(sizes[k] - 1) * size_t(strides[k]);
  size_t bytes = span * sizeof(float);
  CUstream stream = getRankStream();
  CUdeviceptr before = 0, again = 0;
  TOFU_CU_CHECK(cuMemAlloc(&before, bytes));
  TOFU_CU_CHECK(cuMemAlloc(&again, bytes));
  TOFU_CU_CHECK(cuMemcpyDtoDAsync(before, CUdeviceptr(out), bytes, stream));
  launch(out);
  TOFU_CU_CHECK(cuMemcpyDtoDAsync(again, before, bytes, stream));
  launch(intptr_t(again));
  std::vector<float> first(span), second(span);
  TOFU_CU_CHECK(cuStreamSynchronize(stream));
  TOFU_CU_CHECK(cuMemcpyDtoH(first.data(), CUdeviceptr(out), bytes));
  TOFU_CU_CHECK(cuMemcpyDtoH(second.data(), again, bytes));
  TOFU_CU_CHECK(cuMemFree(before));
  TOFU_CU_CHECK(cuMemFree(again));
  size_t differ = 0;
  for (size_t k = 0; k < span; ++k)
    differ += std::memcmp(&first[k], &second[k], sizeof(float)) != 0;
  std::fprintf(stderr,
               "tofu cuda runtime: cudnn check: %s algorithm %d beta %g: "
               "%s (%zu of %zu elements differ)\n",
               name.c_str(), algorithm.algorithm, double(p.beta),
               differ ? "NOT REPRODUCIBLE" : "bit-identical", differ, span);
  return algorithm.algorithm;
}

} // namespace

//===----------------------------------------------------------------------===//
// Modules and launches
//===----------------------------------------------------------------------===//

namespace {

struct Module;

/// A kernel of a Module, looked up in each device's copy of the module
/// once (without a lock afterwards: every worker launches through it).
struct Kernel {
  Module *module = nullptr;
  std::string name;
  std::array<std::atomic<CUfunction>, kMaxDevices> loaded{};

  /// The kernel in the context of `d`, which is current.
  CUfunction get(const Device &d);
};

/// A module of the lowered code (its gpu.binary, which lives as long as the
/// code), loaded into the context of each device that runs one of its
/// kernels: the process rank's device when the module is loaded, an
/// in-process worker's device at the worker's first launch there.
struct Module {
  const void *image = nullptr;
  /// mgpuModuleLoadJIT's optimization level; -1 for a binary.
  int jitLevel = -1;
  /// Guards the loads and `kernels`.
  std::mutex mutex;
  std::array<std::atomic<CUmodule>, kMaxDevices> loaded{};
  /// One handle per kernel name: the lowered code looks a kernel up before
  /// each of its launches.
  std::map<std::string, std::unique_ptr<Kernel>> kernels;

  /// The module in the context of `d`, which is current.
  CUmodule get(const Device &d) {
    CUmodule m = loaded[d.ordinal].load(std::memory_order_acquire);
    if (m)
      return m;
    std::lock_guard<std::mutex> lock(mutex);
    m = loaded[d.ordinal].load(std::memory_order_relaxed);
    if (!m) {
      if (jitLevel < 0) {
        TOFU_CU_CHECK(cuModuleLoadData(&m, image));
      } else {
        CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
        void *values[] = {reinterpret_cast<void *>(intptr_t(jitLevel))};
        TOFU_CU_CHECK(cuModuleLoadDataEx(&m, image, 1, options, values));
      }
      loaded[d.ordinal].store(m, std::memory_order_release);
    }
    return m;
  }

  /// The handle of kernel `name`, made once.
  Kernel *getKernel(const char *name) {
    std::lock_guard<std::mutex> lock(mutex);
    std::unique_ptr<Kernel> &kernel = kernels[name];
    if (!kernel) {
      kernel = std::make_unique<Kernel>();
      kernel->module = this;
      kernel->name = name;
    }
    return kernel.get();
  }
};

CUfunction Kernel::get(const Device &d) {
  CUfunction f = loaded[d.ordinal].load(std::memory_order_acquire);
  if (f)
    return f;
  CUmodule m = module->get(d);
  std::lock_guard<std::mutex> lock(module->mutex);
  f = loaded[d.ordinal].load(std::memory_order_relaxed);
  if (!f) {
    TOFU_CU_CHECK(cuModuleGetFunction(&f, m, name.c_str()));
    loaded[d.ordinal].store(f, std::memory_order_release);
  }
  return f;
}

Module *loadModule(const void *image, int jitLevel) {
  auto *module = new Module();
  module->image = image;
  module->jitLevel = jitLevel;
  // Loaded on the caller's device at once, so that a bad image stops the
  // process where it loads.
  module->get(getDevice());
  return module;
}

} // namespace

extern "C" void *mgpuModuleLoad(void *data, size_t /*size*/) {
  return loadModule(data, /*jitLevel=*/-1);
}

extern "C" void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return loadModule(data, optLevel);
}

extern "C" void mgpuModuleUnload(void *handle) {
  // The lowered code unloads its modules from global destructors, which
  // run at exit after the driver may have shut down (docs/gpu.md, *Exit*).
  if (exiting.load() || !anyDeviceOpen.load())
    return;
  auto *module = static_cast<Module *>(handle);
  for (int ordinal = 0; ordinal < kMaxDevices; ++ordinal) {
    CUmodule loaded = module->loaded[ordinal].load();
    if (!loaded)
      continue;
    CUcontext context = nullptr;
    {
      std::lock_guard<std::mutex> devices(deviceMutex);
      context = openDevices.at(ordinal)->context;
    }
    TOFU_CU_CHECK(cuCtxSetCurrent(context));
    TOFU_CU_CHECK(cuModuleUnload(loaded));
  }
  delete module;
  getDevice();
}

extern "C" void *mgpuModuleGetFunction(void *module, const char *name) {
  Device &d = getDevice();
  Kernel *kernel = static_cast<Module *>(module)->getKernel(name);
  // Looked up at once on the caller's device, so that a missing kernel
  // stops the process here.
  kernel->get(d);
  return kernel;
}

extern "C" void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                 intptr_t gridZ, intptr_t blockX,
                                 intptr_t blockY, intptr_t blockZ,
                                 int32_t sharedMemBytes, void *stream,
                                 void **params, void **extra,
                                 size_t /*paramsCount*/) {
  auto *kernel = static_cast<Kernel *>(function);
  CUfunction fn = kernel->get(getDevice());
  OpTimer timer(tofu::gpu::OpClass::Generated, static_cast<CUstream>(stream),
                [&] { return kernel->name; });
  if (sharedMemBytes > 48 * 1024) {
    // Dynamic shared memory above 48 KiB must be opted into per kernel.
    TOFU_CU_CHECK(cuFuncSetAttribute(
        fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, sharedMemBytes));
  }
  TOFU_CU_CHECK(cuLaunchKernel(fn, gridX, gridY, gridZ, blockX, blockY, blockZ,
                               sharedMemBytes, static_cast<CUstream>(stream),
                               params, extra));
}

//===----------------------------------------------------------------------===//
// Streams and events
//===----------------------------------------------------------------------===//

// The lowered host code creates a stream for each chain of launches and
// destroys it after waiting for it; all of them are the rank's stream.
extern "C" void *mgpuStreamCreate() { return getRankStream(); }

extern "C" void mgpuStreamDestroy(void *stream) {
  if (static_cast<CUstream>(stream) != getRankStream())
    TOFU_CU_CHECK(cuStreamDestroy(static_cast<CUstream>(stream)));
}

extern "C" void mgpuStreamSynchronize(void *stream) {
  getDevice();
  TOFU_CU_CHECK(cuStreamSynchronize(static_cast<CUstream>(stream)));
}

extern "C" void mgpuStreamWaitEvent(void *stream, void *event) {
  getDevice();
  TOFU_CU_CHECK(cuStreamWaitEvent(static_cast<CUstream>(stream),
                                  static_cast<CUevent>(event), 0));
}

extern "C" void *mgpuEventCreate() {
  getDevice();
  CUevent event = nullptr;
  TOFU_CU_CHECK(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

extern "C" void mgpuEventDestroy(void *event) {
  getDevice();
  TOFU_CU_CHECK(cuEventDestroy(static_cast<CUevent>(event)));
}

extern "C" void mgpuEventSynchronize(void *event) {
  getDevice();
  TOFU_CU_CHECK(cuEventSynchronize(static_cast<CUevent>(event)));
}

extern "C" void mgpuEventRecord(void *event, void *stream) {
  getDevice();
  TOFU_CU_CHECK(cuEventRecord(static_cast<CUevent>(event),
                              static_cast<CUstream>(stream)));
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace {

using tofu::gpu::MemoryKind;

/// The caching allocator (include/tofu/Runtime/BlockCache.h) over the CUDA
/// driver.
struct CudaBlockDriver final : tofu::gpu::BlockDriver {
  void getMemoryInfo(uint64_t &freeBytes, uint64_t &totalBytes) override {
    size_t f = 0, t = 0;
    TOFU_CU_CHECK(cuMemGetInfo(&f, &t));
    freeBytes = f;
    totalBytes = t;
  }
  void *allocate(uint64_t bytes, MemoryKind kind) override {
    CUdeviceptr ptr = 0;
    if (kind == MemoryKind::Managed)
      TOFU_CU_CHECK(cuMemAllocManaged(&ptr, bytes, CU_MEM_ATTACH_GLOBAL));
    else
      TOFU_CU_CHECK(cuMemAlloc(&ptr, bytes));
    return reinterpret_cast<void *>(ptr);
  }
  void release(void *ptr, uint64_t, MemoryKind) override {
    TOFU_CU_CHECK(cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)));
  }
  /// The owning rank's stream, whose queued work may still use its idle
  /// blocks (another rank may release them: mgpuMemAlloc).
  CUstream stream = nullptr;
  /// The device of the owning rank.
  int ordinal = 0;
  void synchronize() override { TOFU_CU_CHECK(cuStreamSynchronize(stream)); }
};

/// A rank's cache and the mutex that guards it.
struct LockedBlockCache {
  std::mutex mutex;
  CudaBlockDriver driver;
  tofu::gpu::BlockCache cache{driver};
};

/// Every rank's cache, in the order they were made (guarded by rankMutex).
std::vector<LockedBlockCache *> &getAllBlockCaches() {
  static std::vector<LockedBlockCache *> caches;
  return caches;
}

LockedBlockCache &getBlockCache() {
  CUstream stream = getRankStream();
  std::lock_guard<std::mutex> lock(rankMutex);
  LockedBlockCache *&cache = getRank().cache;
  if (!cache) {
    cache = new LockedBlockCache();
    cache->driver.stream = stream;
    cache->driver.ordinal = getDevice().ordinal;
    getAllBlockCaches().push_back(cache);
  }
  return *cache;
}

/// Returns the idle blocks of every rank's cache but `own` to the driver,
/// on the same device, each after its rank's queued work, holding one
/// cache's lock at a time: in-process workers may share a device, and one
/// worker's idle blocks can be what another needs.
void releaseOtherRanksIdleBlocks(LockedBlockCache *own) {
  std::vector<LockedBlockCache *> caches;
  {
    std::lock_guard<std::mutex> lock(rankMutex);
    caches = getAllBlockCaches();
  }
  for (LockedBlockCache *other : caches) {
    if (other == own || other->driver.ordinal != own->driver.ordinal)
      continue;
    std::lock_guard<std::mutex> lock(other->mutex);
    other->cache.releaseIdle();
  }
}

/// The kind of every allocation: `TOFU_GPU_MEMORY=managed` puts device
/// buffers in managed memory too (a fallback for checking).
bool forcesManagedMemory() {
  static const bool forced = [] {
    const char *mode = std::getenv("TOFU_GPU_MEMORY");
    return mode && std::strcmp(mode, "managed") == 0;
  }();
  return forced;
}

} // namespace

extern "C" void *mgpuMemAlloc(uint64_t sizeBytes, void *stream,
                              int8_t isHostShared) {
  (void)stream; // One stream per rank: its blocks are usable in its order.
  getDevice();
  if (sizeBytes == 0)
    return nullptr;
  MemoryKind kind = isHostShared || forcesManagedMemory() ? MemoryKind::Managed
                                                          : MemoryKind::Device;
  LockedBlockCache &locked = getBlockCache();
  tofu::gpu::OutOfMemory error;
  void *ptr = nullptr;
  {
    std::lock_guard<std::mutex> lock(locked.mutex);
    ptr = locked.cache.allocate(sizeBytes, kind, &error);
  }
  if (!ptr) {
    // The cache returned its own idle blocks already; the other workers'
    // may be what is missing. Then once more.
    releaseOtherRanksIdleBlocks(&locked);
    std::lock_guard<std::mutex> lock(locked.mutex);
    ptr = locked.cache.allocate(sizeBytes, kind, &error);
  }
  if (!ptr) {
    std::fprintf(stderr, "tofu cuda runtime: mgpuMemAlloc: %s\n",
                 error.describe(workspaceBytes.load()).c_str());
    std::abort();
  }
  return ptr;
}

extern "C" void mgpuMemFree(void *ptr, void *stream) {
  if (!ptr)
    return;
  getDevice();
  {
    // Back to the free list without waiting (see BlockCache.h).
    LockedBlockCache &locked = getBlockCache();
    std::lock_guard<std::mutex> lock(locked.mutex);
    if (locked.cache.free(ptr))
      return;
  }
  // Not from mgpuMemAlloc: freed after the work queued before it.
  TOFU_CU_CHECK(cuStreamSynchronize(stream ? static_cast<CUstream>(stream)
                                           : getRankStream()));
  TOFU_CU_CHECK(cuMemFree(reinterpret_cast<CUdeviceptr>(ptr)));
}

extern "C" void mgpuMemcpy(void *dst, void *src, size_t sizeBytes,
                           void *stream) {
  getDevice();
  OpTimer timer(tofu::gpu::OpClass::Copy, static_cast<CUstream>(stream),
                [] { return std::string("memcpy"); });
  TOFU_CU_CHECK(cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                              reinterpret_cast<CUdeviceptr>(src), sizeBytes,
                              static_cast<CUstream>(stream)));
}

extern "C" void mgpuMemset32(void *dst, uint32_t value, size_t count,
                             void *stream) {
  getDevice();
  OpTimer timer(tofu::gpu::OpClass::Copy, static_cast<CUstream>(stream),
                [] { return std::string("memset32"); });
  TOFU_CU_CHECK(cuMemsetD32Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                 count, static_cast<CUstream>(stream)));
}

extern "C" void mgpuMemset16(void *dst, uint16_t value, size_t count,
                             void *stream) {
  getDevice();
  OpTimer timer(tofu::gpu::OpClass::Copy, static_cast<CUstream>(stream),
                [] { return std::string("memset16"); });
  TOFU_CU_CHECK(cuMemsetD16Async(reinterpret_cast<CUdeviceptr>(dst), value,
                                 count, static_cast<CUstream>(stream)));
}

extern "C" void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes) {
  getDevice();
  TOFU_CU_CHECK(cuMemHostRegister(ptr, sizeBytes, /*Flags=*/0));
}

extern "C" void mgpuMemHostUnregister(void *ptr) {
  getDevice();
  TOFU_CU_CHECK(cuMemHostUnregister(ptr));
}

namespace {
/// The aligned pointer and the byte extent of a ranked descriptor.
void getHostRange(int64_t rank, void *descriptor, int64_t elementSizeBytes,
                  char **begin, uint64_t *bytes) {
  auto *words = static_cast<int64_t *>(descriptor);
  char *aligned = reinterpret_cast<char *>(words[1]);
  int64_t offset = words[2];
  const int64_t *sizes = words + 3;
  const int64_t *strides = words + 3 + rank;
  // One past the last element reachable through the strides.
  int64_t extent = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (sizes[i] == 0) {
      extent = 0;
      break;
    }
    extent += (sizes[i] - 1) * strides[i];
  }
  *begin = aligned + offset * elementSizeBytes;
  *bytes = static_cast<uint64_t>(extent) * elementSizeBytes;
}
} // namespace

extern "C" void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                                          int64_t elementSizeBytes) {
  char *begin = nullptr;
  uint64_t bytes = 0;
  getHostRange(rank, descriptor, elementSizeBytes, &begin, &bytes);
  if (bytes)
    mgpuMemHostRegister(begin, bytes);
}

extern "C" void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                            int64_t elementSizeBytes) {
  char *begin = nullptr;
  uint64_t bytes = 0;
  getHostRange(rank, descriptor, elementSizeBytes, &begin, &bytes);
  if (bytes)
    mgpuMemHostUnregister(begin);
}

extern "C" void mgpuSetDefaultDevice(int32_t device) {
  std::lock_guard<std::mutex> lock(deviceMutex);
  if (processDevice && processDevice->ordinal != device)
    misuse("mgpuSetDefaultDevice", "the device is already in use");
  requestedOrdinal = device;
  ordinalRequested = true;
}

//===----------------------------------------------------------------------===//
// Tofu entry points
//===----------------------------------------------------------------------===//

extern "C" void tofu_gpu_init() { getBlas(); }

extern "C" int32_t tofu_gpu_probe(char *message, int64_t size) {
  auto fail = [&](const char *call, CUresult result) {
    const char *name = nullptr;
    cuGetErrorName(result, &name);
    if (message && size > 0)
      std::snprintf(message, size_t(size), "%s failed: %s", call,
                    name ? name : "unknown CUresult");
    return 0;
  };
  CUresult result = cuInit(/*Flags=*/0);
  if (result != CUDA_SUCCESS)
    return fail("cuInit", result);
  int count = 0;
  result = cuDeviceGetCount(&count);
  if (result != CUDA_SUCCESS)
    return fail("cuDeviceGetCount", result);
  if (count == 0 && message && size > 0)
    std::snprintf(message, size_t(size), "the driver lists no device");
  return count;
}

namespace {
/// The events of tofu_gpu_timer_*: one pair per step, read once the step
/// has finished, so that timing a step does not make the host wait.
struct StepTimer {
  /// The event pairs of the steps whose time is not read yet; the last
  /// one has no stop event while its step is being timed.
  std::vector<std::pair<CUevent, CUevent>> steps;
  /// The times read so far, in step order.
  std::vector<float> milliseconds;

  bool isOpen() const { return !steps.empty() && !steps.back().second; }
};
StepTimer &getStepTimer() {
  Rank &r = getRank();
  if (!r.timer)
    r.timer = new StepTimer();
  return *r.timer;
}

/// Reads and destroys the events of the oldest steps as long as they have
/// completed (`wait`: waits for all), so that the events of a long run do
/// not pile up.
void harvestStepTimes(bool wait) {
  StepTimer &stepTimer = getStepTimer();
  size_t done = 0;
  for (auto [start, stop] : stepTimer.steps) {
    if (!stop)
      break; // The open step.
    if (wait)
      TOFU_CU_CHECK(cuEventSynchronize(stop));
    else if (cuEventQuery(stop) != CUDA_SUCCESS)
      break;
    float ms = 0.0f;
    TOFU_CU_CHECK(cuEventElapsedTime(&ms, start, stop));
    stepTimer.milliseconds.push_back(ms);
    TOFU_CU_CHECK(cuEventDestroy(start));
    TOFU_CU_CHECK(cuEventDestroy(stop));
    ++done;
  }
  stepTimer.steps.erase(stepTimer.steps.begin(),
                        stepTimer.steps.begin() + done);
}

CUevent recordEvent() {
  CUevent event = nullptr;
  TOFU_CU_CHECK(cuEventCreate(&event, CU_EVENT_DEFAULT));
  TOFU_CU_CHECK(cuEventRecord(event, getRankStream()));
  return event;
}

/// The milliseconds of every timed step, which are forgotten (waits for
/// the last one).
std::vector<float> takeStepTimes() {
  StepTimer &stepTimer = getStepTimer();
  if (stepTimer.isOpen())
    misuse("tofu_gpu_timer_report", "a step's timer is open");
  harvestStepTimes(/*wait=*/true);
  std::vector<float> times;
  times.swap(stepTimer.milliseconds);
  return times;
}
} // namespace

extern "C" void tofu_gpu_timer_begin() {
  getDevice();
  StepTimer &stepTimer = getStepTimer();
  if (stepTimer.isOpen())
    misuse("tofu_gpu_timer_begin", "the previous step's timer is open");
  harvestStepTimes(/*wait=*/false);
  stepTimer.steps.push_back({recordEvent(), nullptr});
  // In-process workers: the profile is worker 0's.
  Profiler &p = getProfiler();
  if (p.enabled && getWorkerRank() <= 0) {
    std::lock_guard<std::mutex> lock(p.mutex);
    p.inStep = true;
    p.profile.beginStep();
  }
}

extern "C" void tofu_gpu_timer_end() {
  getDevice();
  StepTimer &stepTimer = getStepTimer();
  if (!stepTimer.isOpen())
    misuse("tofu_gpu_timer_end", "no tofu_gpu_timer_begin before");
  stepTimer.steps.back().second = recordEvent();
  // The profile reads every op's events: only a profiled step waits.
  if (getProfiler().enabled && getWorkerRank() <= 0) {
    TOFU_CU_CHECK(cuEventSynchronize(stepTimer.steps.back().second));
    finishProfiledStep();
  }
  LockedBlockCache &locked = getBlockCache();
  std::lock_guard<std::mutex> lock(locked.mutex);
  locked.cache.finishStep();
}

extern "C" void tofu_gpu_timer_report(int64_t warmup) {
  getDevice();
  const std::vector<float> all = takeStepTimes();
  // In-process workers: worker 0 reports.
  if (getWorkerRank() > 0)
    return;
  std::vector<float> times = all;
  size_t skip =
      std::min<size_t>(size_t(std::max<int64_t>(warmup, 0)), times.size());
  times.erase(times.begin(), times.begin() + skip);
  if (times.empty()) {
    std::printf("gpu step time: no step timed\n");
  } else {
    std::sort(times.begin(), times.end());
    size_t n = times.size();
    double median =
        n % 2 ? times[n / 2] : 0.5 * (double(times[n / 2 - 1]) + times[n / 2]);
    std::printf("gpu step time: median %.3f ms over %zu steps after %zu "
                "warm-up\n",
                median, n, skip);
  }
  if (getProfiler().enabled)
    std::fputs(getProfiler()
                   .profile.report(skip, all, /*top=*/30)
                   .c_str(),
               stdout);
  tofu_gpu_memory_report();
}

extern "C" void tofu_gpu_memory_report() {
  LockedBlockCache &locked = getBlockCache();
  std::lock_guard<std::mutex> lock(locked.mutex);
  const tofu::gpu::BlockCache &cache = locked.cache;
  std::printf("gpu memory: peak live bytes %llu, peak held bytes %llu, "
              "workspace bytes %llu\n",
              static_cast<unsigned long long>(cache.getPeakLiveBytes()),
              static_cast<unsigned long long>(cache.getPeakHeldBytes()),
              static_cast<unsigned long long>(workspaceBytes.load()));
  std::printf(
      "gpu memory: driver allocations %lld, driver allocations after "
      "the first step: %lld\n",
      static_cast<long long>(cache.getDriverAllocations()),
      static_cast<long long>(cache.getDriverAllocationsAfterFirstStep()));
  std::fflush(stdout);
}

extern "C" void tofu_gpu_synchronize() {
  getDevice();
  // A worker waits for its own stream, not for the other workers'.
  if (getWorkerRank() >= 0)
    TOFU_CU_CHECK(cuStreamSynchronize(getRankStream()));
  else
    TOFU_CU_CHECK(cuCtxSynchronize());
}

extern "C" void tofu_gpu_shutdown() {
  std::lock_guard<std::mutex> dnnLock(dnnMutex);
  std::lock_guard<std::mutex> lock(blasMutex);
  Blas *&blas = getRank().blas;
  if (!blas)
    return;
  getDevice();
  destroyDnn();
  // The stream stays: it belongs to the process, not to the handles.
  TOFU_CUDART_CHECK(cudaStreamSynchronize(blas->stream));
  TOFU_CUBLAS_CHECK(cublasDestroy(blas->handle));
  TOFU_CUDART_CHECK(cudaFree(blas->workspace));
  delete blas;
  blas = nullptr;
}

namespace {

/// Queues the cuBLAS call of a planned GEMM.
void runPlannedGemm(const tofu::gpu::GemmPlan &plan, intptr_t a, intptr_t b,
                    intptr_t c, intptr_t cBatch, float beta) {
  Blas &blasState = getBlas();
  auto *pc = reinterpret_cast<float *>(c);
  if (plan.kind == tofu::gpu::GemmPlan::ZeroC) {
    // k = 0: C = beta * C, so only an overwritten C changes (to zero).
    if (beta == 0.0f) {
      for (int i = 0; i < plan.batch; ++i)
        TOFU_CUDART_CHECK(cudaMemset2DAsync(
            pc + intptr_t(i) * cBatch, size_t(plan.c.ld) * sizeof(float), 0,
            size_t(plan.rows) * sizeof(float), plan.cols, blasState.stream));
    }
    return;
  }
  auto *first = reinterpret_cast<const float *>(plan.swapped ? b : a);
  auto *second = reinterpret_cast<const float *>(plan.swapped ? a : b);
  cublasOperation_t opFirst = plan.first.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opSecond =
      plan.second.transposed ? CUBLAS_OP_T : CUBLAS_OP_N;
  OpTimer timer(tofu::gpu::OpClass::Cublas, blasState.stream, [&] {
    return tofu::gpu::describeGemm("sgemm", plan, beta != 0.0f);
  });
  const float alpha = 1.0f;
  if (plan.batch == 1) {
    TOFU_CUBLAS_CHECK(cublasSgemm(blasState.handle, opFirst, opSecond,
                                  plan.rows, plan.cols, plan.k, &alpha, first,
                                  plan.first.ld, second, plan.second.ld, &beta,
                                  pc, plan.c.ld));
  } else {
    TOFU_CUBLAS_CHECK(cublasSgemmStridedBatched(
        blasState.handle, opFirst, opSecond, plan.rows, plan.cols, plan.k,
        &alpha, first, plan.first.ld, plan.first.batchStride, second,
        plan.second.ld, plan.second.batchStride, &beta, pc, plan.c.ld,
        plan.c.batchStride, plan.batch));
  }
}

} // namespace

extern "C" void tofu_gpu_sgemm(intptr_t batch, intptr_t m, intptr_t n,
                               intptr_t k, intptr_t a, intptr_t aRow,
                               intptr_t aCol, intptr_t aBatch, intptr_t b,
                               intptr_t bRow, intptr_t bCol, intptr_t bBatch,
                               intptr_t c, intptr_t cRow, intptr_t cCol,
                               intptr_t cBatch, float beta) {
  if (beta != 0.0f && beta != 1.0f)
    misuse("tofu_gpu_sgemm", "beta must be 0 or 1");
  tofu::gpu::GemmPlan plan;
  std::string error =
      tofu::gpu::planStridedGemm(batch, m, n, k, aRow, aCol, aBatch, bRow, bCol,
                                 bBatch, cRow, cCol, cBatch, plan);
  if (!error.empty())
    misuse("tofu_gpu_sgemm", error.c_str());
  if (plan.kind == tofu::gpu::GemmPlan::Nothing)
    return;
  tofu::trace::traceCall(
      std::max(getWorkerRank(), 0),
      [&] { return tofu::gpu::describeGemm("sgemm", plan, beta != 0.0f); },
      [&] {
        return tofu::trace::getGemmOperands(batch, m, n, k, a, aRow, aCol,
                                            aBatch, b, bRow, bCol, bBatch, c,
                                            cRow, cCol, cBatch, beta);
      },
      [&] { runPlannedGemm(plan, a, b, c, cBatch, beta); }, checksumOnDevice);
}

TOFU_GPU_DEFINE_CONV2D_ENTRY_POINTS(runConv)
