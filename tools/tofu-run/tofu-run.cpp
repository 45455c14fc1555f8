//===- tofu-run.cpp - Train a (partitioned) step in process ---------------===//
//
// Runs a training step under MPI without leaving the process:
//
//   mpiexec -n 4 tofu-run step.mlir --steps 3 --reference
//
// takes the output of `tofu-opt ... --tofu-search=... --tofu-partition`,
// adds the driver (tofu-train-driver), lowers the communication to the CPU
// runtime (convert-tofu-to-mpi) and the program to LLVM, and JIT-compiles
// and runs `main` with the runtime loaded. The runtime checks that the job
// has as many ranks as the program's grid. The runtime library is the one
// next to the executable (`../lib` in the build tree, the library directory
// in an installed tree).
//
// With --gpu, an unpartitioned step (the output of tofu-autodiff and
// tofu-optimizer) runs on the GPU instead: the same driver and initial
// values, lowered by tofu-gpu-pipeline and run with the CUDA runtime
// loaded next to the CPU runtime (which fills the initial values and
// prints the losses); the median step time is printed at the end.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/Passes.h"
#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"
#include "tofu/Conversion/TofuToMPI/RuntimeABI.h"
#include "tofu/Dialect/TDL/IR/TDL.h"
#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"
#include "tofu/Dialect/Tofu/IR/Tofu.h"
#include "tofu/Dialect/Tofu/Transforms/Passes.h"

#include "mlir/ExecutionEngine/ExecutionEngine.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

using namespace mlir;

static llvm::cl::opt<std::string> inputFile(llvm::cl::Positional,
                                            llvm::cl::desc("<step.mlir>"),
                                            llvm::cl::init("-"));
static llvm::cl::opt<unsigned> steps("steps", llvm::cl::desc("Training steps"),
                                     llvm::cl::init(3));
static llvm::cl::opt<uint64_t>
    seed("seed", llvm::cl::desc("Seed of the initial values"),
         llvm::cl::init(1));
static llvm::cl::opt<bool>
    reference("reference",
              llvm::cl::desc("Also run the unpartitioned step and print the "
                             "largest relative difference"));
static llvm::cl::opt<uint64_t> intBound(
    "int-bound",
    llvm::cl::desc("Integer inputs (token ids) take values in [0, int-bound)"),
    llvm::cl::init(2));
static llvm::cl::opt<bool>
    onGPU("gpu", llvm::cl::desc("Run the unpartitioned step on the GPU "
                                "(tofu-gpu-pipeline, CUDA runtime) and print "
                                "the median step time"));
static llvm::cl::opt<unsigned>
    warmup("warmup",
           llvm::cl::desc("With --gpu: leading steps left out of the step "
                          "time"),
           llvm::cl::init(0));
static llvm::cl::opt<bool> gpuLowerOnly(
    "gpu-lower-only",
    llvm::cl::desc("With --gpu: print the lowered module instead of running "
                   "it (needs no GPU)"));
static llvm::cl::opt<std::string>
    funcName("func",
             llvm::cl::desc("The training step (default: the function "
                            "whose first result has tofu.loss)"),
             llvm::cl::init(""));

/// The runtime library `name` (the CPU runtime unless given) next to the
/// executable `argv0`: in `../lib` (the build tree) or `../<install lib
/// dir>`; empty if neither exists, with the paths tried in `tried`.
static std::string findRuntime(const char *argv0, std::string &tried,
                               StringRef name = TOFU_RUNTIME_NAME) {
  std::string exe = llvm::sys::fs::getMainExecutable(
      argv0, reinterpret_cast<void *>(&findRuntime));
  llvm::SmallString<256> prefix(llvm::sys::path::parent_path(exe));
  llvm::sys::path::remove_filename(prefix); // bin/ -> the tree's root
  SmallVector<StringRef, 2> dirs{"lib"};
  if (StringRef(TOFU_INSTALL_LIB_DIR) != "lib")
    dirs.push_back(TOFU_INSTALL_LIB_DIR);
  for (StringRef dir : dirs) {
    llvm::SmallString<256> candidate(prefix);
    llvm::sys::path::append(candidate, dir, name);
    if (llvm::sys::fs::exists(candidate))
      return std::string(candidate);
    if (!tried.empty())
      tried += ", ";
    tried += std::string(candidate);
  }
  return "";
}

/// The lowering to LLVM after the driver and convert-tofu-to-mpi, with
/// allocations routed through the runtime's counting hooks.
static const char *kLowering =
    "one-shot-bufferize{bufferize-function-boundaries},"
    "buffer-deallocation-pipeline,tofu-early-dealloc,convert-linalg-to-loops,"
    "expand-strided-metadata,lower-affine,convert-scf-to-cf,"
    "convert-math-to-llvm,convert-math-to-libm,"
    "finalize-memref-to-llvm{use-generic-functions=1},convert-to-llvm,"
    "reconcile-unrealized-casts";

/// The training step that tofu-train-driver drives: --func, or the function
/// whose first result has tofu.loss.
static func::FuncOp findStep(ModuleOp module) {
  if (!funcName.empty())
    return module.lookupSymbol<func::FuncOp>(funcName);
  for (auto func : module.getOps<func::FuncOp>())
    if (func.getNumResults() && func.getResultAttr(0, "tofu.loss"))
      return func;
  return nullptr;
}

/// Brackets every call of the step in @main with the CUDA runtime's step
/// timer and reports the median before the runtime is finalized.
static LogicalResult addStepTimer(ModuleOp module, func::FuncOp step) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || !step)
    return module.emitError("tofu-run: --gpu: no @main or no training step "
                            "after tofu-train-driver");
  OpBuilder b(module.getContext());
  auto callTimer = [&](StringRef name, ValueRange args, Location loc) {
    func::FuncOp callee = tofu::declareRuntimeFunction(
        module, name, ValueRange(args).getTypes(), {});
    func::CallOp::create(b, loc, callee, args);
  };
  SmallVector<func::CallOp> calls;
  main.walk([&](func::CallOp call) { calls.push_back(call); });
  for (func::CallOp call : calls) {
    if (call.getCallee() == step.getSymName()) {
      b.setInsertionPoint(call);
      callTimer("tofu_gpu_timer_begin", {}, call.getLoc());
      b.setInsertionPointAfter(call);
      callTimer("tofu_gpu_timer_end", {}, call.getLoc());
    } else if (call.getCallee() == "tofu_finalize") {
      b.setInsertionPoint(call);
      Value skip = arith::ConstantIntOp::create(b, call.getLoc(), warmup, 64);
      callTimer("tofu_gpu_timer_report", skip, call.getLoc());
    }
  }
  return success();
}

/// The CUDA runtime next to the executable `argv0`; exits with a message
/// unless it is there, loads and finds a GPU.
static std::string requireGPU(const char *argv0) {
  auto fail = [](const llvm::Twine &why) {
    llvm::errs() << "tofu-run: --gpu: no usable GPU: " << why << "\n";
    std::exit(1);
  };
  if (StringRef(TOFU_CUDA_RUNTIME_NAME).empty())
    fail("this build has no CUDA runtime (the CUDA toolkit or cuDNN was not "
         "found when it was configured)");
  std::string tried;
  std::string library = findRuntime(argv0, tried, TOFU_CUDA_RUNTIME_NAME);
  if (library.empty())
    fail("cannot find the CUDA runtime; tried " + tried);
  std::string error;
  auto runtime =
      llvm::sys::DynamicLibrary::getPermanentLibrary(library.c_str(), &error);
  if (!runtime.isValid())
    fail("cannot load " + library + ": " + error);
  using Probe = int32_t (*)(char *, int64_t);
  auto probe =
      reinterpret_cast<Probe>(runtime.getAddressOfSymbol("tofu_gpu_probe"));
  if (!probe)
    fail(library + " has no tofu_gpu_probe");
  char why[256] = "";
  if (probe(why, sizeof(why)) < 1)
    fail(why);
  return library;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  llvm::cl::ParseCommandLineOptions(argc, argv,
                                    "Tofu-MLIR in-process training runner\n");
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();

  DialectRegistry registry;
  registerAllDialects(registry);
  registerAllExtensions(registry);
  registerAllToLLVMIRTranslations(registry);
  registry.insert<tofu::tdl::TDLDialect, tofu::TofuDialect>();
  tofu::tdl::registerTDLExternalModels(registry);
  registerAllPasses();
  tofu::registerTofuPartitionPasses();
  tofu::registerTofuConversionPasses();
  tofu::registerTofuGPUPipeline();
  MLIRContext context(registry);

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file) {
    llvm::errs() << "tofu-run: " << error << "\n";
    return 1;
  }
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  if (onGPU && reference) {
    llvm::errs() << "tofu-run: --gpu runs an unpartitioned step; "
                    "--reference needs a partitioned one\n";
    return 1;
  }
  std::string cudaRuntime;
  if (onGPU && !gpuLowerOnly)
    cudaRuntime = requireGPU(argv[0]);

  std::string driver = "tofu-train-driver{steps=" + std::to_string(steps) +
                       " seed=" + std::to_string(seed) +
                       " reference=" + (reference ? "1" : "0") +
                       " int-bound=" + std::to_string(intBound) +
                       (funcName.empty() ? "" : " func=" + funcName) + "}";
  PassManager pm(&context);
  if (!onGPU) {
    if (failed(parsePassPipeline(driver + ",convert-tofu-to-mpi," + kLowering,
                                 pm, llvm::errs())) ||
        failed(pm.run(*module)))
      return 1;
  } else {
    bool partitioned = false;
    module->walk([&](Operation *op) {
      StringRef dialect = op->getName().getDialectNamespace();
      partitioned |= dialect == "shard" || dialect == "tofu";
    });
    if (partitioned) {
      llvm::errs() << "tofu-run: --gpu runs unpartitioned steps only (the "
                      "module has shard or tofu ops)\n";
      return 1;
    }
    func::FuncOp step = findStep(*module);
    std::string stepName = step ? step.getSymName().str() : "";
    PassManager lower(&context);
    if (failed(parsePassPipeline(driver, pm, llvm::errs())) ||
        failed(pm.run(*module)) ||
        failed(addStepTimer(*module,
                            module->lookupSymbol<func::FuncOp>(stepName))) ||
        failed(parsePassPipeline("tofu-gpu-pipeline", lower, llvm::errs())) ||
        failed(lower.run(*module)))
      return 1;
    if (gpuLowerOnly) {
      module->print(llvm::outs());
      return 0;
    }
  }

  std::string tried;
  std::string runtime = findRuntime(argv[0], tried);
  if (runtime.empty()) {
    llvm::errs() << "tofu-run: cannot find the CPU runtime; tried " << tried
                 << "\n";
    return 1;
  }
  auto transformer = makeOptimizingTransformer(2, 0, nullptr);
  ExecutionEngineOptions options;
  options.transformer = transformer;
  SmallVector<StringRef> libs{runtime, TOFU_C_RUNNER_UTILS};
  if (onGPU)
    libs.push_back(cudaRuntime);
  options.sharedLibPaths = libs;
  auto engine = ExecutionEngine::create(*module, options);
  if (!engine) {
    llvm::errs() << "tofu-run: cannot compile the module: "
                 << llvm::toString(engine.takeError()) << "\n";
    return 1;
  }
  if (llvm::Error e = (*engine)->invokePacked("main")) {
    llvm::errs() << "tofu-run: " << llvm::toString(std::move(e)) << "\n";
    return 1;
  }
  return 0;
}
