//===- TofuCudaRuntime.h - C ABI of the CUDA runtime ------------*- C -*-===//
//
// The functions that host code lowered by tofu-gpu-pipeline calls. Two
// groups:
//
// - the `mgpu*` entry points that MLIR's gpu-to-llvm lowering and the
//   `#gpu.select_object` translation emit (module load and unload, function
//   lookup, kernel launch, streams, events, allocation, memcpy, memset,
//   host registration), with MLIR's `index` passed as intptr_t;
// - the `tofu_gpu_*` entry points that convert-tofu-to-gpu emits for the
//   library calls (cuBLAS GEMMs, cuDNN convolutions), and the runner's
//   setup and teardown.
//
// All work runs in the primary context of one device (device 0 unless
// mgpuSetDefaultDevice chose another; under mpiexec, the process's rank on
// its node modulo the number of devices). Every CUDA driver, runtime, cuBLAS
// and cuDNN call is checked; a failure prints the call and the error and
// aborts the process. All work is queued on one stream of the process:
// every stream that mgpuStreamCreate returns is that stream (never
// destroyed), and the library calls are queued on it without the host
// waiting, so that the host code waits only where it synchronizes a
// stream (docs/gpu.md, tofu-gpu-stream-order). The cuBLAS and cuDNN
// handles are created once, on first use, each with a workspace;
// `TOFU_GPU_TF32=1` in the environment allows TF32 tensor-core math
// (default: exact FP32).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_TOFUCUDARUNTIME_H
#define TOFU_RUNTIME_TOFUCUDARUNTIME_H

#include "tofu/Runtime/ConvABI.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

//===----------------------------------------------------------------------===//
// MLIR host-code entry points
//===----------------------------------------------------------------------===//

/// Loads a cubin (or PTX / fatbin) image; `size` is its length in bytes.
void *mgpuModuleLoad(void *data, size_t size);
/// Loads a PTX image with JIT options (optimization level `optLevel`).
void *mgpuModuleLoadJIT(void *data, int optLevel);
void mgpuModuleUnload(void *module);
/// Looks up the kernel `name` in `module`.
void *mgpuModuleGetFunction(void *module, const char *name);
/// Launches `function` on `stream` with `params` (an array of
/// `paramsCount` pointers to the kernel arguments).
void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t sharedMemBytes, void *stream,
                      void **params, void **extra, size_t paramsCount);

/// The stream of the process (created with the context, once).
void *mgpuStreamCreate(void);
/// Nothing for the process's stream.
void mgpuStreamDestroy(void *stream);
/// Waits until the work queued on `stream` is done.
void mgpuStreamSynchronize(void *stream);
void mgpuStreamWaitEvent(void *stream, void *event);

void *mgpuEventCreate(void);
void mgpuEventDestroy(void *event);
void mgpuEventSynchronize(void *event);
void mgpuEventRecord(void *event, void *stream);

/// Allocates `sizeBytes` of device memory, or of managed memory that the
/// host can also read and write when `isHostShared` is set
/// (`TOFU_GPU_MEMORY=managed` makes every allocation managed). Blocks come
/// from a cache of earlier freed ones of the same kind and rounded size;
/// the driver allocates only when none is free, and only when the free
/// device memory holds the block (otherwise the process stops with the
/// bytes needed and free).
void *mgpuMemAlloc(uint64_t sizeBytes, void *stream, int8_t isHostShared);
/// Returns a block of mgpuMemAlloc to the cache without waiting (all work
/// is in stream order on the process's one stream).
void mgpuMemFree(void *ptr, void *stream);
void mgpuMemcpy(void *dst, void *src, size_t sizeBytes, void *stream);
void mgpuMemset32(void *dst, uint32_t value, size_t count, void *stream);
void mgpuMemset16(void *dst, uint16_t value, size_t count, void *stream);

/// Page-locks host memory so that kernels can access it.
void mgpuMemHostRegister(void *ptr, uint64_t sizeBytes);
void mgpuMemHostUnregister(void *ptr);
/// The same for a ranked memref descriptor of rank `rank` (the descriptor
/// layout {allocated, aligned, offset, sizes[rank], strides[rank]}).
void mgpuMemHostRegisterMemRef(int64_t rank, void *descriptor,
                               int64_t elementSizeBytes);
void mgpuMemHostUnregisterMemRef(int64_t rank, void *descriptor,
                                 int64_t elementSizeBytes);

/// Chooses the device that later calls use; call before any other.
void mgpuSetDefaultDevice(int32_t device);

//===----------------------------------------------------------------------===//
// Tofu entry points
//===----------------------------------------------------------------------===//

/// Creates the context and the cuBLAS handle now rather than on first use.
void tofu_gpu_init(void);
/// Waits for all work, destroys the cuBLAS and cuDNN handles and frees their
/// workspaces.
void tofu_gpu_shutdown(void);
/// Waits until every stream of the device is idle.
void tofu_gpu_synchronize(void);

/// Whether a GPU can be used, without aborting: the number of devices that
/// the driver lists, or 0 with the reason in `message` (`size` bytes, NUL
/// terminated), e.g. "cuInit failed: CUDA_ERROR_NO_DEVICE".
int32_t tofu_gpu_probe(char *message, int64_t size);

/// Step timing for runners: `begin` and `end` record CUDA events on the
/// process's stream around one step (they bracket all the step's work,
/// which is queued on that stream) and do not wait, unless
/// TOFU_GPU_PROFILE is set; `report` waits for the last step and prints
/// the median over the steps after the first `warmup`.
void tofu_gpu_timer_begin(void);
void tofu_gpu_timer_end(void);
void tofu_gpu_timer_report(int64_t warmup);
/// Prints the memory statistics (also printed by tofu_gpu_timer_report):
/// the peak bytes of live buffers, the peak bytes held from the driver
/// (live and cached buffers), the workspaces' bytes, and the number of
/// driver allocations, in all and after the first step.
void tofu_gpu_memory_report(void);

/// Single-precision batched GEMM on row-or-column-major views:
///   C[b](m, n) = sum_k A[b](m, k) * B[b](k, n) + beta * C[b](m, n)
/// for b < batch. Each operand X is given by the address of X[0](0, 0)
/// (`x`), its stride between rows (`xRow`), between columns (`xCol`) and
/// between batches (`xBatch`), in elements. Each matrix must have a unit
/// stride in one of its two dimensions; transposed operands are expressed
/// by swapping the strides. Queues cublasSgemm (batch 1) or
/// cublasSgemmStridedBatched on the process's stream; does not wait.
/// `beta` is 0 (overwrite C) or 1 (accumulate into C).
void tofu_gpu_sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                    intptr_t a, intptr_t aRow, intptr_t aCol, intptr_t aBatch,
                    intptr_t b, intptr_t bRow, intptr_t bCol, intptr_t bBatch,
                    intptr_t c, intptr_t cRow, intptr_t cCol, intptr_t cBatch,
                    float beta);

/// Y = conv(X, W) + beta Y: cudnnConvolutionForward.
void tofu_gpu_conv2d_forward(TOFU_CONV2D_PARAMS);
/// X = conv_data_gradient(W, Y) + beta X: cudnnConvolutionBackwardData, with
/// Y in the role of the output's gradient and X in that of the image's.
void tofu_gpu_conv2d_backward_data(TOFU_CONV2D_PARAMS);
/// W = conv_filter_gradient(X, Y) + beta W: cudnnConvolutionBackwardFilter.
void tofu_gpu_conv2d_backward_filter(TOFU_CONV2D_PARAMS);

//===----------------------------------------------------------------------===//
// Collectives (convert-tofu-to-mpi{runtime=gpu})
//===----------------------------------------------------------------------===//

// The communication of a partitioned step (runtime/cuda/Collectives.cpp):
// the arguments and the semantics of the MPI runtime's tofu_fetch,
// tofu_all_gather, ... in TofuRuntime.h, on device buffers (the offsets and
// the grid stay host buffers). In-process workers run each call as the
// copy or reduction kernel on the workers' plans, reading the peers' tiles
// in place. One process per GPU under mpiexec goes through NCCL
// (NcclCollectives.cpp): every call is queued on the process's stream. MPI
// broadcasts the NCCL id; each (grid, axes) group is split from the world
// communicator once, in the order the program first uses it, as the MPI
// runtime does. Strided tiles are packed and unpacked by the copy kernel
// (CopyParts.h), fetches run the plan of FetchPlan.h as grouped
// ncclSend/ncclRecv, and the received bytes are counted as the MPI runtime
// counts them (tofu_count_received_bytes). A build without NCCL, nvcc or
// MPI has the entry points, which stop the process with a message where
// the build lacks what the call needs. The f64, i32 and i64 variants of
// fetch, all_gather and all_to_all take the same arguments
// (tofu_gpu_fetch_f64, ...).

/// What this build's GPU collectives can run: in-process workers (the copy
/// and reduction kernels; a build with nvcc and MPI) and one process per GPU
/// (NCCL, where it also has nccl.h and libnccl).
enum {
  TOFU_GPU_COLLECTIVES_WORKERS = 1,
  TOFU_GPU_COLLECTIVES_NCCL = 2,
};

/// The TOFU_GPU_COLLECTIVES_* this build has (0: none).
int32_t tofu_gpu_has_collectives(void);

#ifdef __cplusplus
}
#endif

#endif // TOFU_RUNTIME_TOFUCUDARUNTIME_H
