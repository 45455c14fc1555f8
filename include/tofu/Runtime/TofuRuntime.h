//===- TofuRuntime.h - C ABI of the CPU runtime over MPI -------*- C -*-===//
//
// The functions that TofuToMPI and tofu-train-driver call. Buffers come as
// MLIR unranked memref descriptors (`llvm.emit_c_interface`), so one entry
// point serves every rank and layout. The ranks form a row-major grid whose
// shape is passed as an i64 buffer; `axes` is a bit mask of grid axes.
//
// Every MPI call is checked; a failure prints the call and aborts the job.
// The runtime counts the logical bytes each rank receives per collective:
//   fetch           the elements it did not hold,
//   all_gather      the g - 1 tiles of the others,
//   all_to_all      (g - 1) / g of its input,
//   reduce_scatter  (g - 1) / g of its input,
//   all_reduce      2 (g - 1) / g of its buffer (reduce-scatter + all-gather),
// for a group of g ranks, and the peak of live bytes allocated through
// `tofu_alloc` (the allocation hook of finalize-memref-to-llvm's generic
// allocation functions).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_TOFURUNTIME_H
#define TOFU_RUNTIME_TOFURUNTIME_H

#include "tofu/Runtime/ConvABI.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// An unranked memref as MLIR passes it: the rank and a pointer to the
/// ranked descriptor {allocated, aligned, offset, sizes[rank], strides[rank]}.
typedef struct {
  int64_t rank;
  void *descriptor;
} TofuUnrankedMemRef;

/// Element types of the collectives (integers for inputs such as token
/// ids, which are moved but never reduced).
enum { TOFU_F32 = 0, TOFU_F64 = 1, TOFU_I32 = 2, TOFU_I64 = 3 };
/// Reductions, numbered as shard::ReductionKind.
enum { TOFU_SUM = 1, TOFU_MAX = 2, TOFU_MIN = 3, TOFU_PROD = 4 };

/// The collectives whose received bytes the runtime counts, in the order
/// of tofu_print_statistics.
enum {
  TOFU_COUNT_FETCH = 0,
  TOFU_COUNT_ALL_GATHER = 1,
  TOFU_COUNT_ALL_TO_ALL = 2,
  TOFU_COUNT_REDUCE_SCATTER = 3,
  TOFU_COUNT_ALL_REDUCE = 4
};

/// Adds `bytes` that this rank received in a collective of kind `kind`
/// (TOFU_COUNT_*) to the counts that tofu_print_statistics prints: the
/// GPU collectives count their bytes here, as the MPI runtime does its own.
void tofu_count_received_bytes(int64_t kind, double bytes);
/// The bytes this rank has received so far in collectives of kind `kind`
/// (TOFU_COUNT_*), as tofu_print_statistics sums them.
double tofu_received_bytes(int64_t kind);

/// Initializes MPI if needed. `gridSize` > 0 checks that the job has that
/// many ranks and aborts with a message otherwise.
void tofu_init(int64_t gridSize);
/// Frees every cached communicator and finalizes MPI if tofu_init began it.
void tofu_finalize(void);
/// The rank in MPI_COMM_WORLD (the linear index on the grid).
int64_t tofu_rank(void);

/// C[b] (m x n) = A[b] (m x k) B[b] (k x n) + beta C[b], b < batch, through
/// OpenBLAS (convert-tofu-to-cpu): each operand is the address of its first
/// element and its strides (elements) along its two matrix dimensions (A:
/// M then K, B: K then N, C: M then N) and the batch. One dimension of each
/// operand must have stride 1 (or extent 1); beta is 0 or 1. The GEMM uses
/// TOFU_NUM_THREADS OpenBLAS threads (default 1).
void tofu_cpu_sgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                    intptr_t a, intptr_t aRow, intptr_t aCol, intptr_t aBatch,
                    intptr_t b, intptr_t bRow, intptr_t bCol, intptr_t bBatch,
                    intptr_t c, intptr_t cRow, intptr_t cCol, intptr_t cBatch,
                    float beta);
/// tofu_cpu_sgemm in double precision (beta stays an f32 0 or 1).
void tofu_cpu_dgemm(intptr_t batch, intptr_t m, intptr_t n, intptr_t k,
                    intptr_t a, intptr_t aRow, intptr_t aCol, intptr_t aBatch,
                    intptr_t b, intptr_t bRow, intptr_t bCol, intptr_t bBatch,
                    intptr_t c, intptr_t cRow, intptr_t cCol, intptr_t cBatch,
                    float beta);

/// f32 convolutions through oneDNN (convert-tofu-to-cpu), with the
/// parameters and semantics of the GPU runtime's tofu_gpu_conv2d_*
/// (TOFU_CONV2D_PARAMS in ConvABI.h, checked by ConvPlan.h):
/// Y = conv(X, W) + beta Y, X = conv_data_gradient(W, Y) + beta X and
/// W = conv_filter_gradient(X, Y) + beta W. Each distinct problem creates
/// its oneDNN primitive once.
void tofu_cpu_conv2d_forward(TOFU_CONV2D_PARAMS);
void tofu_cpu_conv2d_backward_data(TOFU_CONV2D_PARAMS);
void tofu_cpu_conv2d_backward_filter(TOFU_CONV2D_PARAMS);

/// Wall-clock step timer (tofu-run --timing): begin and end bracket one
/// step, with a barrier across ranks at each; report prints, from rank 0,
/// the median over the steps after the first `warmup`.
void tofu_timer_begin(void);
void tofu_timer_end(void);
void tofu_timer_report(int64_t warmup);

/// Gives every rank the region of a distributed tensor that starts at its
/// row of `dstOffsets` (i64, ranks x rank), when every rank holds the region
/// that starts at its row of `srcOffsets`.
void _mlir_ciface_tofu_fetch(TofuUnrankedMemRef *src, TofuUnrankedMemRef *dst,
                             TofuUnrankedMemRef *srcOffsets,
                             TofuUnrankedMemRef *dstOffsets,
                             int64_t elementBytes);
/// tofu_fetch for f64, i32 and i64 buffers (declared per element type).
void _mlir_ciface_tofu_fetch_f64(TofuUnrankedMemRef *src,
                                 TofuUnrankedMemRef *dst,
                                 TofuUnrankedMemRef *srcOffsets,
                                 TofuUnrankedMemRef *dstOffsets,
                                 int64_t elementBytes);
void _mlir_ciface_tofu_fetch_i32(TofuUnrankedMemRef *src,
                                 TofuUnrankedMemRef *dst,
                                 TofuUnrankedMemRef *srcOffsets,
                                 TofuUnrankedMemRef *dstOffsets,
                                 int64_t elementBytes);
void _mlir_ciface_tofu_fetch_i64(TofuUnrankedMemRef *src,
                                 TofuUnrankedMemRef *dst,
                                 TofuUnrankedMemRef *srcOffsets,
                                 TofuUnrankedMemRef *dstOffsets,
                                 int64_t elementBytes);
/// dst = the tiles `src` of the ranks that differ only in `axes`,
/// concatenated along dimension `dim` in the order of their row-major index
/// over those axes (shard.all_gather).
void _mlir_ciface_tofu_all_gather(TofuUnrankedMemRef *src,
                                  TofuUnrankedMemRef *dst,
                                  TofuUnrankedMemRef *grid, int64_t axes,
                                  int64_t dim, int64_t elementBytes);
/// Splits src along `splitDim` into one chunk per rank of the group over
/// `axes`, sends chunk j to member j, and concatenates the chunks received
/// along `concatDim` in group order (shard.all_to_all).
void _mlir_ciface_tofu_all_to_all(TofuUnrankedMemRef *src,
                                  TofuUnrankedMemRef *dst,
                                  TofuUnrankedMemRef *grid, int64_t axes,
                                  int64_t splitDim, int64_t concatDim,
                                  int64_t elementBytes);
/// tofu_all_gather and tofu_all_to_all for f64, i32 and i64 buffers.
void _mlir_ciface_tofu_all_gather_f64(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t dim, int64_t elementBytes);
void _mlir_ciface_tofu_all_gather_i32(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t dim, int64_t elementBytes);
void _mlir_ciface_tofu_all_gather_i64(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t dim, int64_t elementBytes);
void _mlir_ciface_tofu_all_to_all_f64(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t splitDim, int64_t concatDim,
                                      int64_t elementBytes);
void _mlir_ciface_tofu_all_to_all_i32(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t splitDim, int64_t concatDim,
                                      int64_t elementBytes);
void _mlir_ciface_tofu_all_to_all_i64(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axes,
                                      int64_t splitDim, int64_t concatDim,
                                      int64_t elementBytes);
/// dst = the reduction of src over the ranks that differ only in `axes`.
void _mlir_ciface_tofu_all_reduce(TofuUnrankedMemRef *src,
                                  TofuUnrankedMemRef *dst,
                                  TofuUnrankedMemRef *grid, int64_t axes,
                                  int64_t kind, int64_t type);
/// dst = chunk c (the rank's coordinate on `axis`) along dimension `dim` of
/// the reduction of src over grid axis `axis`.
void _mlir_ciface_tofu_reduce_scatter(TofuUnrankedMemRef *src,
                                      TofuUnrankedMemRef *dst,
                                      TofuUnrankedMemRef *grid, int64_t axis,
                                      int64_t dim, int64_t kind, int64_t type);

/// Fills a tile with values from a counter-based hash of each element's
/// global row-major index in a tensor of shape `globalShape`, at the
/// tile's global `offsets`: uniform in [-scale, scale), or [0, scale) if
/// `nonNegative`. `stream` separates tensors.
void _mlir_ciface_tofu_fill_hash(TofuUnrankedMemRef *tile,
                                 TofuUnrankedMemRef *offsets,
                                 TofuUnrankedMemRef *globalShape, uint64_t seed,
                                 uint64_t stream, double scale,
                                 int64_t nonNegative, int64_t type);
/// tofu_fill_hash for i32 and i64 tiles (token ids in [0, scale)).
void _mlir_ciface_tofu_fill_hash_i32(TofuUnrankedMemRef *tile,
                                     TofuUnrankedMemRef *offsets,
                                     TofuUnrankedMemRef *globalShape,
                                     uint64_t seed, uint64_t stream,
                                     double scale, int64_t nonNegative,
                                     int64_t type);
void _mlir_ciface_tofu_fill_hash_i64(TofuUnrankedMemRef *tile,
                                     TofuUnrankedMemRef *offsets,
                                     TofuUnrankedMemRef *globalShape,
                                     uint64_t seed, uint64_t stream,
                                     double scale, int64_t nonNegative,
                                     int64_t type);
/// The largest difference |a - b| between a tile and the region of a whole
/// reference tensor at `offsets`, relative to max(max |b| over the whole
/// reference, 1e-3): tensors that are zero up to rounding compare
/// absolutely. NaN counts as infinite.
double _mlir_ciface_tofu_max_difference(TofuUnrankedMemRef *tile,
                                        TofuUnrankedMemRef *reference,
                                        TofuUnrankedMemRef *offsets,
                                        int64_t type);
/// Configures tofu_print_loss for a run of `steps` steps of
/// `samplesPerStep` samples (0: unknown): print every `every` steps and
/// the last, and write one JSON line per step to `path` (a byte buffer;
/// empty for none) on rank 0.
void _mlir_ciface_tofu_log_open(TofuUnrankedMemRef *path, int64_t every,
                                int64_t steps, int64_t samplesPerStep);
/// Prints (on rank 0) the loss of a step, and the reference loss when
/// `hasReference`; after tofu_log_open, only the steps it selects, with the
/// steps and samples per second since the previous printed line.
void tofu_print_loss(int64_t step, double loss, int64_t hasReference,
                     double reference);
/// The relative norm ||a - b|| / ||b|| (||a - b|| when b is zero) of a
/// distributed tensor against its whole reference, from every rank's tile
/// at its `offsets`. Collective; every rank gets the value. NaN counts as
/// infinite.
double _mlir_ciface_tofu_norm_difference(TofuUnrankedMemRef *tile,
                                         TofuUnrankedMemRef *reference,
                                         TofuUnrankedMemRef *offsets,
                                         int64_t type);
/// Prints (on rank 0) `relative norm difference: Y`, the largest relative
/// norm `normDifference` (the same on every rank), and `max relative
/// difference: X`, X the maximum of the element-wise `difference` over all
/// ranks.
void tofu_print_difference(double difference, double normDifference);
/// Prints (on rank 0) the bytes received per collective, summed over ranks
/// and divided by `steps`, and the largest peak of live allocated bytes.
void tofu_print_statistics(int64_t steps);

/// Allocation hooks with the signatures of finalize-memref-to-llvm's
/// generic allocation functions (use-generic-functions).
void *_mlir_memref_to_llvm_alloc(uint64_t size);
void *_mlir_memref_to_llvm_aligned_alloc(uint64_t alignment, uint64_t size);
void _mlir_memref_to_llvm_free(void *ptr);

/// Training files (tofu-train-driver's init=, data=, resume=, save= and
/// save-every=; docs/training.md, "Files"). Strings are byte buffers
/// without a terminator, empty for no file.
///
/// Opens the files of a run of `steps` steps: maps and validates each
/// file's header; a checkpoint gives the step to resume from.
void _mlir_ciface_tofu_io_open(TofuUnrankedMemRef *init,
                               TofuUnrankedMemRef *data,
                               TofuUnrankedMemRef *resume,
                               TofuUnrankedMemRef *save, int64_t saveEvery,
                               int64_t steps);
/// Overwrites this rank's tile (at `offsets` of a tensor of `globalShape`)
/// of argument `name` with the checkpoint's or the initial weights' values;
/// `kind` 0 is a weight (which must be there), 1 optimizer state (which
/// initial weights may leave out). Problems are collected for
/// tofu_io_start. Typed as tofu_fill_hash: _f32, _f64, _i32 and _i64.
void _mlir_ciface_tofu_io_load_f32(TofuUnrankedMemRef *name,
                                   TofuUnrankedMemRef *tile,
                                   TofuUnrankedMemRef *offsets,
                                   TofuUnrankedMemRef *globalShape,
                                   int64_t kind);
/// After the loads: stops the job, every problem printed by rank 0, if a
/// tensor was missing, mismatched or unexpected; else returns the step to
/// start from (0, or the checkpoint's).
int64_t tofu_io_start(void);
/// Fills this rank's tile of data argument `name` with the samples
/// [step b, (step + 1) b) modulo their number (b: the global batch,
/// globalShape[0]) of the data file's tensor `name`.
void _mlir_ciface_tofu_io_batch_f32(TofuUnrankedMemRef *name,
                                    TofuUnrankedMemRef *tile,
                                    TofuUnrankedMemRef *offsets,
                                    TofuUnrankedMemRef *globalShape,
                                    int64_t step);
/// Queues this rank's tile of a weight or state for tofu_io_save_end.
void _mlir_ciface_tofu_io_save_f32(TofuUnrankedMemRef *name,
                                   TofuUnrankedMemRef *tile,
                                   TofuUnrankedMemRef *offsets,
                                   TofuUnrankedMemRef *globalShape);
/// After step `stepsDone` - 1: writes the queued tiles as the checkpoint
/// (metadata "step" = stepsDone) if save-every divides stepsDone or it is
/// the last step, then forgets them. Collective.
void tofu_io_save_end(int64_t stepsDone);

#ifdef __cplusplus
}
#endif

#endif // TOFU_RUNTIME_TOFURUNTIME_H
