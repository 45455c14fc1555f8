//===- CallTrace.h - Checksums of the GPU library calls' operands -*- C++
//-*-===//
//
// TOFU_GPU_TRACE=FILE makes the CUDA runtime (and its host stand-in,
// runtime/gpu-reference) write one line per cuBLAS or cuDNN call: its
// number, its entry point and problem, a checksum of each operand before
// the call and of the written operand after it. Two runs of the same step
// that should repeat bit for bit give the same file; where they do not,
// the first line that differs says whether a call read different inputs
// (the work before it differs: generated kernels, copies or an earlier
// call) or wrote a different result from the same inputs (the call does
// not repeat). `python3 -m tofu.calltrace A B` compares two files.
//
// The checksum of a tensor is the sum, modulo 2^64, of a mix of each
// element's bits and its row-major index: it does not depend on the order
// in which elements are added (the GPU adds them with integer atomics) or
// on the tensor's strides, and it changes when an element changes or two
// elements swap. The arithmetic is here, compiled for the host and, under
// nvcc, for the device (runtime/cuda/MultiFetch.cu), so that both sides
// compute the same sums. Free of CUDA and MLIR.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_CALLTRACE_H
#define TOFU_RUNTIME_CALLTRACE_H

#include <stdint.h>
#include <string.h>

#if defined(__CUDACC__)
#define TOFU_TRACE_HOST_DEVICE __host__ __device__
#else
#define TOFU_TRACE_HOST_DEVICE
#endif

namespace tofu {
namespace trace {

/// The largest rank of a traced operand (a batch of matrices is 3, an
/// image batch 4).
constexpr int kMaxRank = 4;

/// A strided view of f32 elements: its extents and its strides in
/// elements, outermost first.
struct Shape {
  int64_t sizes[kMaxRank] = {1, 1, 1, 1};
  int64_t strides[kMaxRank] = {0, 0, 0, 0};
  int32_t rank = 0;
};

// The host uploads a Shape as a kernel parameter.
static_assert(sizeof(Shape) == 72, "Shape's layout is shared with the kernel");

/// The number of elements of `s`.
TOFU_TRACE_HOST_DEVICE inline int64_t getVolume(const Shape &s) {
  int64_t volume = 1;
  for (int d = 0; d < s.rank; ++d)
    volume *= s.sizes[d];
  return volume;
}

/// The offset in elements of the element of row-major index `index`.
TOFU_TRACE_HOST_DEVICE inline int64_t getOffset(const Shape &s, int64_t index) {
  int64_t offset = 0;
  for (int d = s.rank - 1; d >= 0; --d) {
    offset += (index % s.sizes[d]) * s.strides[d];
    index /= s.sizes[d];
  }
  return offset;
}

/// An element's term of the checksum: its bits mixed with its index
/// (splitmix64's finalizer).
TOFU_TRACE_HOST_DEVICE inline uint64_t mixElement(uint32_t bits,
                                                  int64_t index) {
  uint64_t z = (uint64_t(bits) << 32 ^ uint64_t(index)) +
               0x9E3779B97F4A7C15ull * uint64_t(index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// The checksum of the view of `s` whose first element is at `first`, in
/// host memory.
inline uint64_t checksumOnHost(const float *first, const Shape &s) {
  uint64_t sum = 0;
  int64_t volume = getVolume(s);
  for (int64_t i = 0; i < volume; ++i) {
    uint32_t bits;
    memcpy(&bits, first + getOffset(s, i), sizeof(bits));
    sum += mixElement(bits, i);
  }
  return sum;
}

/// The elements from the first to the last that the view of `s` reaches
/// (strides are not negative), or 0 when it is empty.
inline int64_t getSpan(const Shape &s) {
  int64_t span = 1;
  for (int d = 0; d < s.rank; ++d) {
    if (s.sizes[d] == 0)
      return 0;
    span += (s.sizes[d] - 1) * s.strides[d];
  }
  return span;
}

} // namespace trace
} // namespace tofu

#if !defined(__CUDA_ARCH__)

#include "tofu/Runtime/ConvPlan.h"

#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace tofu {
namespace trace {

/// An operand of a library call: what it is to the call ("a", "x", ...),
/// the address of its first element, its view, whether the call writes it,
/// and whether it reads it (not a result that the call overwrites).
struct Operand {
  const char *role = "";
  intptr_t address = 0;
  Shape shape;
  bool written = false;
  bool read = true;
};

inline Shape makeShape(std::initializer_list<int64_t> sizes,
                       std::initializer_list<int64_t> strides) {
  Shape s;
  s.rank = int32_t(sizes.size());
  int d = 0;
  for (int64_t size : sizes)
    s.sizes[d++] = size;
  d = 0;
  for (int64_t stride : strides)
    s.strides[d++] = stride;
  return s;
}

/// The operands of tofu_gpu_sgemm (C = A B + beta C over a batch): A of
/// batch x m x k, B of batch x k x n, C of batch x m x n.
inline std::vector<Operand>
getGemmOperands(intptr_t batch, intptr_t m, intptr_t n, intptr_t k, intptr_t a,
                intptr_t aRow, intptr_t aCol, intptr_t aBatch, intptr_t b,
                intptr_t bRow, intptr_t bCol, intptr_t bBatch, intptr_t c,
                intptr_t cRow, intptr_t cCol, intptr_t cBatch, float beta) {
  return {{"a", a, makeShape({batch, m, k}, {aBatch, aRow, aCol}), false, true},
          {"b", b, makeShape({batch, k, n}, {bBatch, bRow, bCol}), false, true},
          {"c", c, makeShape({batch, m, n}, {cBatch, cRow, cCol}), true,
           beta != 0.0f}};
}

/// The operands of a convolution call: the image x, the filters w and the
/// result y, of which the forward call writes y, the data gradient x and
/// the filter gradient w.
inline std::vector<Operand> getConvOperands(gpu::ConvKind kind,
                                            const gpu::ConvProblem &p) {
  intptr_t sizes[4];
  auto shape = [&](const intptr_t strides[4]) {
    return makeShape({sizes[0], sizes[1], sizes[2], sizes[3]},
                     {strides[0], strides[1], strides[2], strides[3]});
  };
  std::vector<Operand> operands(3);
  p.getXSizes(sizes);
  operands[0] = {"x", p.x, shape(p.xStrides),
                 kind == gpu::ConvKind::BackwardData};
  p.getWSizes(sizes);
  operands[1] = {"w", p.filter, shape(p.wStrides),
                 kind == gpu::ConvKind::BackwardFilter};
  p.getYSizes(sizes);
  operands[2] = {"y", p.y, shape(p.yStrides), kind == gpu::ConvKind::Forward};
  // The written tensor is read only when the call accumulates into it.
  for (Operand &operand : operands)
    operand.read = !operand.written || p.beta != 0.0f;
  return operands;
}

/// The trace file of this process (TOFU_GPU_TRACE=PATH; PATH.rankN for
/// process N under mpiexec), opened at the first call; null when tracing
/// is off. Lines of concurrent callers (in-process workers) do not
/// interleave: each names its worker.
class CallTrace {
public:
  static CallTrace *get() {
    static CallTrace *trace = []() -> CallTrace * {
      const char *path = std::getenv("TOFU_GPU_TRACE");
      if (!path || !*path)
        return nullptr;
      // Under mpiexec each process writes its own file, PATH.rankN.
      std::string name = path;
      for (const char *variable : {"PMI_RANK", "OMPI_COMM_WORLD_RANK"})
        if (const char *rank = std::getenv(variable)) {
          name += std::string(".rank") + rank;
          break;
        }
      FILE *file = std::fopen(name.c_str(), "w");
      if (!file) {
        // A user's error, not the runtime's: a message and exit status 1.
        std::fprintf(stderr, "tofu gpu trace: cannot write %s\n", name.c_str());
        std::exit(1);
      }
      return new CallTrace(file);
    }();
    return trace;
  }

  /// Writes the line of call `what` by `worker`: the checksums of its
  /// operands before the call (`before`, one per operand; "-" for one the
  /// call does not read) and of its
  /// written operands after it (`after`, one per written operand, in
  /// order).
  void write(int worker, const std::string &what,
             const std::vector<Operand> &operands,
             const std::vector<uint64_t> &before,
             const std::vector<uint64_t> &after) {
    std::lock_guard<std::mutex> lock(mutex);
    std::string line = "call " + std::to_string(count[worker]++) + " worker " +
                       std::to_string(worker) + " | " + what + " |";
    char text[64];
    for (size_t i = 0; i < operands.size(); ++i) {
      if (operands[i].read)
        std::snprintf(text, sizeof(text), " %s %016llx", operands[i].role,
                      static_cast<unsigned long long>(before[i]));
      else
        std::snprintf(text, sizeof(text), " %s -", operands[i].role);
      line += text;
    }
    line += " ->";
    size_t j = 0;
    for (const Operand &operand : operands) {
      if (!operand.written)
        continue;
      std::snprintf(text, sizeof(text), " %s %016llx", operand.role,
                    static_cast<unsigned long long>(after[j++]));
      line += text;
    }
    line += "\n";
    std::fputs(line.c_str(), file);
    std::fflush(file);
  }

private:
  explicit CallTrace(FILE *file) : file(file) {}
  std::mutex mutex;
  FILE *file;
  /// The calls written so far, by worker.
  std::map<int, uint64_t> count;
};

/// The checksum of an operand in host memory.
inline uint64_t checksumOperandOnHost(const Operand &operand) {
  return checksumOnHost(reinterpret_cast<const float *>(operand.address),
                        operand.shape);
}

/// Runs `call`, traced when TOFU_GPU_TRACE is set: `describe()` names the
/// call, `getOperands()` lists its operands, and `checksum(operand)` must
/// return the checksum of an operand's current contents once all work
/// queued before it is done.
template <typename Describe, typename GetOperands, typename Call,
          typename Checksum>
void traceCall(int worker, Describe describe, GetOperands getOperands,
               Call call, Checksum checksum) {
  CallTrace *trace = CallTrace::get();
  if (!trace) {
    call();
    return;
  }
  std::vector<Operand> operands = getOperands();
  std::vector<uint64_t> before, after;
  for (const Operand &operand : operands)
    before.push_back(operand.read ? checksum(operand) : 0);
  call();
  for (const Operand &operand : operands)
    if (operand.written)
      after.push_back(checksum(operand));
  trace->write(worker, describe(), operands, before, after);
}

} // namespace trace
} // namespace tofu

#endif // !defined(__CUDA_ARCH__)

#endif // TOFU_RUNTIME_CALLTRACE_H
