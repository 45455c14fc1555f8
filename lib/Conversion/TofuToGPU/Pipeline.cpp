//===- Pipeline.cpp - tofu-gpu-pipeline -----------------------------------===//
//
// Registers tofu-gpu-pipeline: a training step on tensors to host code
// that calls cuBLAS and launches generated kernels from an embedded cubin.
// The stages and their reasons are in docs/gpu.md.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

#include <cstdlib>

using namespace mlir;

namespace {

struct TofuGPUPipelineOptions
    : public PassPipelineOptions<TofuGPUPipelineOptions> {
  Option<std::string> chip{*this, "chip",
                           llvm::cl::desc("GPU architecture of the cubin"),
                           llvm::cl::init("sm_90")};
  Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features of the cubin (sm_90 needs +ptx80 or "
                     "later)"),
      llvm::cl::init("+ptx80")};
  Option<std::string> format{
      *this, "format",
      llvm::cl::desc("kernel binary format: bin (cubin), isa (PTX) or "
                     "fatbin"),
      llvm::cl::init("bin")};
  Option<int64_t> blockSize{*this, "block-size",
                            llvm::cl::desc("threads per block of the "
                                           "generated kernels"),
                            llvm::cl::init(256)};
  Option<int64_t> splitMinLength{
      *this, "split-min-length",
      llvm::cl::desc("split reductions at least this long"),
      llvm::cl::init(256)};
  Option<int64_t> splitRatio{
      *this, "split-ratio",
      llvm::cl::desc("preferred partial results per reduced row"),
      llvm::cl::init(32)};
  Option<bool> foldStridedDataGradients{
      *this, "fold-strided-data-gradients",
      llvm::cl::desc("strided data gradients write the interior of their "
                     "padded image instead of a packed image and a copy"),
      llvm::cl::init(false)};
  Option<bool> fuseKeepResults{
      *this, "fuse-keep-results",
      llvm::cl::desc("fuse a producer with other uses into a consumer over "
                     "the same loops, keeping its results "
                     "(tofu-fuse-elementwise's keep-results: Adam's update "
                     "of a weight in one kernel)"),
      llvm::cl::init(false)};
  Option<bool> warpReductions{
      *this, "warp-reductions",
      llvm::cl::desc("reduce rows with one warp each (warp shuffles) "
                     "instead of splitting them"),
      llvm::cl::init(false)};
  Option<bool> vectorLoads{
      *this, "vector-loads",
      llvm::cl::desc("element-wise kernels read and write groups of 16 "
                     "bytes per thread (tofu-gpu-parallel-loops)"),
      llvm::cl::init(false)};
  Option<bool> hostStandIn{
      *this, "host-stand-in",
      llvm::cl::desc("stop after the kernels' parallel loops and leave out "
                     "the device placement: the module runs on the CPU with "
                     "the CUDA runtime's host stand-in (tests)"),
      llvm::cl::init(false)};
  Option<std::string> report{
      *this, "report",
      llvm::cl::desc("write tofu-gpu-report's output to this file ('-' for "
                     "stderr; empty for no report)"),
      llvm::cl::init("")};
};

void buildTofuGPUPipeline(OpPassManager &pm,
                          const TofuGPUPipelineOptions &options) {
  std::string text = llvm::formatv(
      // Element-wise ops are memory-bound on the GPU: an element-wise
      // producer is recomputed in all its consumers rather than written.
      // Fusion that keeps a producer's results (one kernel for Adam's
      // update of a weight) is an option until a GPU has timed it.
      "tofu-fuse-elementwise{{duplicate=true keep-results={4}},"
      "tofu-gpu-split-reductions{{min-length={0} ratio={1} rows={3}},"
      "canonicalize,cse,"
      // An op whose result is inserted into a slice of another tensor
      // writes into that slice instead of into a buffer of its own copied
      // afterwards, as in tofu-cpu-pipeline (an LSTM cell's gates): a copy
      // kernel less per insert.
      "tofu-insert-slices-in-place,eliminate-empty-tensors,"
      "one-shot-bufferize{{bufferize-function-boundaries "
      "function-boundary-type-conversion=identity-layout-map "
      "allow-return-allocs-from-loops},"
      // The regions of the communication calls (convert-tofu-to-mpi),
      // whose buffers tofu-gpu-device-memory places.
      "tofu-inline-execute-regions,"
      // buffer-deallocation-pipeline, with the results of calls (the
      // steps of @main) freed on their own and every buffer freed after
      // its last use rather than at the end of its block.
      "expand-realloc{{emit-deallocs=false},canonicalize,"
      "ownership-based-buffer-deallocation,canonicalize,"
      "tofu-simplify-deallocs,"
      "tofu-split-call-deallocs,"
      "bufferization-lower-deallocations,cse,canonicalize,"
      "tofu-early-dealloc,"
      "convert-tofu-to-gpu{{fold-strided-data-gradients={2}}",
      options.splitMinLength.getValue(), options.splitRatio.getValue(),
      options.foldStridedDataGradients.getValue() ? "true" : "false",
      options.warpReductions.getValue() ? "false" : "true",
      options.fuseKeepResults.getValue() ? "true" : "false");
  if (!options.hostStandIn)
    text += ",tofu-gpu-device-memory";
  if (!options.report.empty())
    text += llvm::formatv(",tofu-gpu-report{{output={{{0}}}",
                          options.report.getValue());
  if (options.warpReductions)
    text += ",tofu-gpu-warp-reductions";
  text += llvm::formatv(",tofu-gpu-parallel-loops{{block-size={0} "
                        "vector-loads={1}}",
                        options.blockSize.getValue(),
                        options.vectorLoads.getValue() ? "true" : "false");
  if (!options.hostStandIn)
    text += llvm::formatv(
        ",func.func(gpu-map-parallel-loops,convert-parallel-loops-to-gpu),"
        "lower-affine,canonicalize,"
        // The kernels get their extents and strides as constants (divisions
        // by constants become multiplications and shifts), not parameters.
        "gpu-launch-sink-index-computations,"
        "gpu-kernel-outlining,"
        "tofu-gpu-merge-kernels,"
        "tofu-gpu-stream-order,"
        "gpu-lower-to-nvvm-pipeline{{cubin-chip={0} cubin-features={1} "
        "cubin-format={2}},"
        "tofu-gpu-check-lowered",
        options.chip.getValue(), options.features.getValue(),
        options.format.getValue());
  if (failed(parsePassPipeline(text, pm, llvm::errs())))
    llvm::report_fatal_error("tofu-gpu-pipeline: invalid options",
                             /*gen_crash_diag=*/false);
}

} // namespace

void tofu::registerTofuGPUPipeline() {
  PassPipelineRegistration<TofuGPUPipelineOptions>(
      "tofu-gpu-pipeline",
      "Lower a training step to host code with cuBLAS calls and generated "
      "CUDA kernels (docs/gpu.md)",
      buildTofuGPUPipeline);
}

void tofu::setDefaultCudaHome() {
  for (const char *name : {"CUDA_HOME", "CUDA_ROOT", "CUDA_PATH"})
    if (const char *value = std::getenv(name); value && *value)
      return;
  if (llvm::sys::fs::exists("/usr/local/cuda/bin/ptxas"))
    ::setenv("CUDA_HOME", "/usr/local/cuda", /*overwrite=*/0);
}
