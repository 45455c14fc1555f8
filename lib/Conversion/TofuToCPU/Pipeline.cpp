//===- Pipeline.cpp - tofu-cpu-pipeline -----------------------------------===//
//
// Registers tofu-cpu-pipeline: a training step on tensors (after
// tofu-train-driver and convert-tofu-to-mpi, or any module whose
// communication is already calls) to the LLVM dialect, with its matrix
// products as OpenBLAS calls and everything else as loops. tofu-run uses
// it; mlir-runner users name it. The stages are in docs/cpu.md.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace {

struct TofuCPUPipelineOptions
    : public PassPipelineOptions<TofuCPUPipelineOptions> {
  Option<bool> libraryCalls{
      *this, "library-calls",
      llvm::cl::desc("Matrix products as OpenBLAS calls (false: every op "
                     "as generated loops, the reference lowering)"),
      llvm::cl::init(true)};
  Option<std::string> report{
      *this, "report",
      llvm::cl::desc("Write tofu-cpu-report's output to this file ('-' for "
                     "stderr; empty for no report)"),
      llvm::cl::init("")};
  Option<unsigned> outlineMinLoops{
      *this, "outline-min-loops",
      llvm::cl::desc("Give each loop nest a function of its own in "
                     "functions with at least this many (tofu-outline-loops)"),
      llvm::cl::init(64)};
  Option<bool> fuseElementwise{
      *this, "fuse-elementwise",
      llvm::cl::desc("Fuse element-wise chains on tensors first "
                     "(tofu-fuse-elementwise; the training driver is left "
                     "as it is)"),
      llvm::cl::init(true)};
  Option<bool> fuseKeepResults{
      *this, "fuse-keep-results",
      llvm::cl::desc("With fuse-elementwise: also fuse a producer with "
                     "other uses into a consumer over the same loops, "
                     "keeping its results (tofu-fuse-elementwise's "
                     "keep-results: Adam's update of a weight in one loop)"),
      llvm::cl::init(true)};
  Option<bool> approximateMath{
      *this, "approximate-math",
      llvm::cl::desc("f32 tanh, exp, expm1, log, log1p and erf as "
                     "polynomials that vectorize (tofu-approximate-math; "
                     "false: libm calls)"),
      llvm::cl::init(true)};
};

void buildTofuCPUPipeline(OpPassManager &pm,
                          const TofuCPUPipelineOptions &options) {
  std::string text =
      options.fuseElementwise
          ? llvm::formatv("tofu-fuse-elementwise{{keep-results={0}},",
                          options.fuseKeepResults.getValue())
                .str()
          : "";
  // 1x1 convolutions as products batched over the images (OpenBLAS calls).
  if (options.libraryCalls)
    text += "tofu-cpu-unit-windows,";
  // A tensor.empty whose op's result is inserted into a slice of another
  // tensor becomes that slice, so that the op writes into place instead of
  // into a buffer of its own copied afterwards (an LSTM cell's four gate
  // gradients into their 8 x 256 tensor); tofu-insert-slices-in-place
  // first puts each insert where eliminate-empty-tensors can see it.
  // Function arguments get identity layouts (the driver passes whole
  // buffers), so that tofu-cpu-collapse-loops can see that a weight's
  // dimensions are contiguous.
  text += "tofu-insert-slices-in-place,eliminate-empty-tensors,"
          "one-shot-bufferize{bufferize-function-boundaries "
          "function-boundary-type-conversion=identity-layout-map "
          "allow-return-allocs-from-loops},"
          // buffer-deallocation-pipeline, without the
          // simplification on the training driver.
          "expand-realloc{emit-deallocs=false},canonicalize,"
          "ownership-based-buffer-deallocation,canonicalize,"
          "tofu-simplify-deallocs,"
          "bufferization-lower-deallocations,cse,canonicalize,"
          "tofu-early-dealloc";
  if (options.libraryCalls)
    text += ",convert-tofu-to-cpu";
  if (!options.report.empty())
    text += llvm::formatv(",tofu-cpu-report{{output={{{0}}}",
                          options.report.getValue());
  // Allocations go through the runtime's counting hooks
  // (use-generic-functions).
  text +=
      llvm::formatv(",tofu-cpu-strided-copies,tofu-cpu-collapse-loops,"
                    "tofu-cpu-row-reductions,"
                    "convert-linalg-to-loops,tofu-cpu-scalar-powers,"
                    "tofu-outline-loops{{"
                    "min-loops={0}},{1}expand-strided-metadata,"
                    "lower-affine,",
                    options.outlineMinLoops.getValue(),
                    options.approximateMath ? "tofu-approximate-math," : "");
  text += "convert-scf-to-cf,convert-math-to-llvm,convert-math-to-libm,"
          "finalize-memref-to-llvm{use-generic-functions=1},convert-to-llvm,"
          "reconcile-unrealized-casts";
  if (failed(parsePassPipeline(text, pm, llvm::errs())))
    llvm::report_fatal_error("tofu-cpu-pipeline: invalid options",
                             /*gen_crash_diag=*/false);
}

} // namespace

void tofu::registerTofuCPUPipeline() {
  PassPipelineRegistration<TofuCPUPipelineOptions>(
      "tofu-cpu-pipeline",
      "Lower a training step to LLVM with its matrix products as OpenBLAS "
      "calls and the rest as loops (docs/cpu.md)",
      buildTofuCPUPipeline);
}
