//===- TrainPipeline.cpp - From a forward model to a plan -----------------===//
//
// tofu-train-pipeline: one command from a forward export (logits out) to a
// partitioned training step: inline calls, lift weights baked in as
// constants to arguments, unroll static loops, make element-wise tensor ops
// linalg, batch products over time steps, add the loss, differentiate, add
// the optimizer, describe every operation and search the plan.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/Passes.h"

#include "tofu/Dialect/TDL/Transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace {

/// The options of tofu-train-pipeline: those of the passes it runs, under
/// the names users know from them.
struct TrainPipelineOptions : public PassPipelineOptions<TrainPipelineOptions> {
  Option<std::string> loss{
      *this, "loss",
      llvm::cl::desc("Loss to append: softmax-cross-entropy, mse, sum, or "
                     "none when the model already returns a 0-d loss"),
      llvm::cl::init("none")};
  Option<std::string> labels{
      *this, "labels",
      llvm::cl::desc("Cross-entropy labels: probabilities, or i64 or i32 "
                     "class ids"),
      llvm::cl::init("probabilities")};
  Option<int64_t> result{
      *this, "result",
      llvm::cl::desc("Which result the loss is on, for a model that returns "
                     "several (default: the only one)"),
      llvm::cl::init(-1)};
  ListOption<std::string> weights{
      *this, "weights",
      llvm::cl::desc("Weight arguments: indices, names, 'all' or 'auto' "
                     "(default: the marked ones if any, else all but the "
                     "inputs)")};
  ListOption<std::string> inputs{
      *this, "inputs",
      llvm::cl::desc("Data arguments that weights=all leaves out (default: "
                     "auto, argument 0 unless another one leads with the "
                     "batch and it does not)")};
  Option<std::string> optimizer{*this, "optimizer",
                                llvm::cl::desc("sgd, momentum or adam"),
                                llvm::cl::init("adam")};
  Option<double> learningRate{*this, "lr", llvm::cl::desc("Learning rate"),
                              llvm::cl::init(0.01)};
  Option<uint64_t> maxIterations{
      *this, "max-iterations",
      llvm::cl::desc("Largest loop nest to unroll, in iterations"),
      llvm::cl::init(1024)};
  ListOption<std::string> libraries{
      *this, "library", llvm::cl::desc("Extra .tdl libraries for tdl-attach")};
  Option<std::string> devices{
      *this, "devices",
      llvm::cl::desc("Device count or hierarchy, e.g. 8 or 2x4")};
  Option<std::string> bandwidth{
      *this, "bandwidth",
      llvm::cl::desc("GB/s per level, comma separated (default 10 each)")};
  Option<std::string> algorithm{
      *this, "algorithm",
      llvm::cl::desc("tofu, brute-force, data-parallel, batch-parallel, "
                     "allrow-greedy, spartan, equalchop or icml18"),
      llvm::cl::init("tofu")};
  Option<unsigned> batchDim{
      *this, "batch-dim",
      llvm::cl::desc("batch-parallel: the inputs' batch dimension"),
      llvm::cl::init(0)};
  Option<bool> replication{*this, "replication",
                           llvm::cl::desc("Allow replicated tilings"),
                           llvm::cl::init(false)};
  Option<unsigned> refine{
      *this, "refine",
      llvm::cl::desc("Sweeps of the search's refinement on the generated "
                     "program's bytes (0 keeps the recursion's plan)"),
      llvm::cl::init(2)};
  Option<bool> sharedReads{
      *this, "shared-reads",
      llvm::cl::desc("Also search counting once the conversions the program "
                     "shares, keeping the plan that moves fewer bytes"),
      llvm::cl::init(true)};
  Option<std::string> planOut{
      *this, "plan-out",
      llvm::cl::desc("Write the plan as JSON to this file (default: not "
                     "written)"),
      llvm::cl::init("")};
  Option<std::string> svg{*this, "svg",
                          llvm::cl::desc("Draw the plan as SVG to this file "
                                         "(default: not drawn)"),
                          llvm::cl::init("")};
  Option<std::string> report{
      *this, "report",
      llvm::cl::desc("Where the report goes: '-', a file, or 'none'"),
      llvm::cl::init("-")};
};

void buildTrainPipeline(OpPassManager &pm,
                        const TrainPipelineOptions &options) {
  // Calls to functions of the module, inlined without the canonicalization
  // that the inliner runs by default (it would rewrite the model's ops).
  pm.addPass(createInlinerPass({}, [](OpPassManager &) {}));
  pm.addPass(createSymbolDCEPass());
  // Parameters that the export bakes in as constants become arguments.
  pm.addPass(tofu::createTofuLiftConstants());
  tofu::TofuUnrollLoopsOptions unroll;
  unroll.maxIterations = options.maxIterations;
  pm.addPass(tofu::createTofuUnrollLoops(unroll));
  // Element-wise arith and math ops on whole tensors (as StableHLO-to-linalg
  // exports leave some) become linalg.generics, which autodiff differentiates.
  pm.addNestedPass<func::FuncOp>(createConvertElementwiseToLinalgPass());
  // One generic per result (an exported adaptive average pooling yields the
  // window sums and sizes together).
  pm.addPass(tofu::createTofuSplitResults());
  // An unrolled RNN's per-step products by one weight become one product.
  pm.addPass(tofu::createTofuBatchProducts());
  if (options.loss != "none") {
    tofu::TofuLossOptions loss;
    loss.kind = options.loss;
    loss.labels = options.labels;
    loss.resultIndex = options.result;
    pm.addPass(tofu::createTofuLoss(loss));
  }
  tofu::TofuAutodiffOptions autodiff;
  autodiff.weightArgs.assign(options.weights.begin(), options.weights.end());
  if (autodiff.weightArgs.empty())
    autodiff.weightArgs.push_back("auto");
  autodiff.inputArgs.assign(options.inputs.begin(), options.inputs.end());
  if (autodiff.inputArgs.empty())
    autodiff.inputArgs.push_back("auto");
  pm.addPass(tofu::createTofuAutodiff(autodiff));
  // A shared weight's per-use gradient products become one product.
  pm.addPass(tofu::createTofuStackProductSums());
  tofu::TofuOptimizerOptions optimizer;
  optimizer.kind = options.optimizer;
  optimizer.learningRate = options.learningRate;
  pm.addPass(tofu::createTofuOptimizer(optimizer));
  tofu::tdl::TDLAttachOptions attach;
  attach.libraries.assign(options.libraries.begin(), options.libraries.end());
  pm.addPass(tofu::tdl::createTDLAttach(attach));
  tofu::TofuSearchOptions search;
  search.devices = options.devices;
  search.bandwidth = options.bandwidth;
  search.algorithm = options.algorithm;
  search.replication = options.replication;
  search.batchDim = options.batchDim;
  search.refine = options.refine;
  search.sharedReads = options.sharedReads;
  search.planOut = options.planOut;
  search.svg = options.svg;
  search.report = options.report;
  pm.addPass(tofu::createTofuSearch(search));
}

} // namespace

void tofu::registerTofuTrainPipeline() {
  PassPipelineRegistration<TrainPipelineOptions>(
      "tofu-train-pipeline",
      "From a forward model to a partitioned training step: inline, "
      "tofu-lift-constants, tofu-unroll-loops, "
      "convert-elementwise-to-linalg, tofu-split-results, tofu-batch-products, "
      "tofu-loss, tofu-autodiff, tofu-stack-product-sums, tofu-optimizer, "
      "tdl-attach and tofu-search",
      buildTrainPipeline);
}
