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
// The CPU lowering is tofu-cpu-pipeline: matrix products become OpenBLAS
// calls and f32 convolutions oneDNN calls (--library-calls=false keeps the
// naive loops as a reference), with --threads threads per rank.
//
// --init, --data, --save, --save-every and --resume train from and to
// safetensors files (docs/training.md, "Files"), --list-inputs names what
// they hold, --lr sets the learning rate of a step built with
// tofu-optimizer{lr-arg=1}, and --log-every/--log say how often and where
// the losses go.
//
// A compiled program is kept in the compile cache (CompileCache.h;
// --compile-cache, by default tofu/jit in the user's cache directory): a
// later run of the same step with the same options loads it instead of
// compiling, and the ranks of a job on one node compile it once.
//
// --workers K runs the K ranks of a partitioned step as K threads of this
// process instead of K MPI processes (runtime/cpu/Workers.h): the same
// program, whose collectives read the peers' tiles in place; with --gpu,
// all K on the process's GPU, each with its own stream. An executable of
// --emit-executable starts the K workers itself.
//
// With --gpu, an unpartitioned step (the output of tofu-autodiff and
// tofu-optimizer) runs on the GPU instead: the same driver and initial
// values, lowered by tofu-gpu-pipeline and run with the CUDA runtime
// loaded next to the CPU runtime (which fills the initial values and
// prints the losses); the median step time is printed at the end.
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"
#include "JIT.h"
#include "OpenBLASCore.h"
#include "tofu/Conversion/Passes.h"
#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"
#include "tofu/Conversion/TofuToMPI/RuntimeABI.h"
#include "tofu/Dialect/TDL/IR/TDL.h"
#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"
#include "tofu/Dialect/Tofu/IR/Tofu.h"
#include "tofu/Dialect/Tofu/Transforms/Passes.h"
#include "tofu/Runtime/TofuCudaRuntime.h"
#include "tofu/Transforms/TrainingAttributes.h"
#include "tofu/Transforms/TrainingSignature.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Config/llvm-config.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

using namespace mlir;

static llvm::cl::OptionCategory tofuRunCategory("tofu-run options");

static llvm::cl::opt<std::string>
    inputFile(llvm::cl::Positional,
              llvm::cl::desc("<step.mlir> ('-' for stdin, one rank only)"),
              llvm::cl::init("-"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<unsigned> steps("steps",
                                     llvm::cl::desc("Training steps, at least "
                                                    "1 (default 3)"),
                                     llvm::cl::init(3),
                                     llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<uint64_t>
    seed("seed", llvm::cl::desc("Seed of the initial values (default 1)"),
         llvm::cl::init(1),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<bool>
    reference("reference",
              llvm::cl::desc("Also run the unpartitioned step and print the "
                             "largest relative difference"),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<uint64_t> intBound(
    "int-bound",
    llvm::cl::desc("Integer inputs (token ids) take values in [0, int-bound) "
                   "(default 2)"),
    llvm::cl::init(2),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<bool>
    onGPU("gpu",
          llvm::cl::desc("Run the step on the GPU "
                         "(tofu-gpu-pipeline, CUDA runtime; a "
                         "partitioned step under mpiexec, one "
                         "process per GPU, through NCCL) and print "
                         "the median step time"),
          llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<unsigned>
    warmup("warmup",
           llvm::cl::desc("Leading steps left out of the step time of --gpu "
                          "and --timing (default 0)"),
           llvm::cl::init(0),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<unsigned> workers(
    "workers",
    llvm::cl::desc("Run the ranks of a partitioned step as this many threads "
                   "of one process instead of under mpiexec (default 1; "
                   "with --gpu, all on one GPU)"),
    llvm::cl::init(1), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<bool> combineCollectives(
    "combine-collectives",
    llvm::cl::desc("Combine small independent collectives of a partitioned "
                   "step into one (tofu-combine-collectives; default on)"),
    llvm::cl::init(true), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<bool> gpuLowerOnly(
    "gpu-lower-only",
    llvm::cl::desc("With --gpu: print the lowered module instead of running "
                   "it (needs no GPU)"),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> gpuPipelineOptions(
    "gpu-pipeline",
    llvm::cl::desc("With --gpu: options of tofu-gpu-pipeline, e.g. "
                   "'split-ratio=16 fold-strided-data-gradients=false'"),
    llvm::cl::value_desc("options"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> cpuPipelineOptions(
    "cpu-pipeline",
    llvm::cl::desc("Without --gpu: more options of tofu-cpu-pipeline, e.g. "
                   "'fuse-keep-results=false approximate-math=false'"),
    llvm::cl::value_desc("options"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> emitExecutable(
    "emit-executable",
    llvm::cl::desc("Write a standalone executable of the run (the lowered "
                   "module compiled and linked against this build's "
                   "runtimes) to this path instead of running it; with "
                   "--gpu it needs no GPU. Links with $TOFU_CC (default cc)"),
    llvm::cl::value_desc("path"), llvm::cl::init(""),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> executableCPU(
    "executable-cpu",
    llvm::cl::desc("With --emit-executable: the CPU to generate code for "
                   "(default: the generic CPU of the host's architecture, "
                   "so that the executable runs on any machine of it; "
                   "'native': this machine's CPU and its features, as "
                   "tofu-run's own JIT; or an LLVM CPU name such as "
                   "'skylake-avx512')"),
    llvm::cl::value_desc("cpu"), llvm::cl::init(""),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> executableRpath(
    "executable-rpath",
    llvm::cl::desc("With --emit-executable: the executable's run path for "
                   "the runtimes instead of their directories in this "
                   "build, e.g. '$ORIGIN/../lib' for an executable that "
                   "travels with its libraries"),
    llvm::cl::value_desc("dir"), llvm::cl::init(""),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<bool> libraryCalls(
    "library-calls",
    llvm::cl::desc("Run matrix products as OpenBLAS calls (false: every op "
                   "as generated loops, the reference lowering; default true)"),
    llvm::cl::init(true), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<bool>
    timing("timing",
           llvm::cl::desc("Print the compile time and the median step time "
                          "after --warmup steps"),
           llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<unsigned> jitThreads(
    "jit-threads",
    llvm::cl::desc("Threads that generate the machine code of the lowered "
                   "program, one part of it each (default: the machine's "
                   "cores over the ranks that mpiexec started on it)"),
    llvm::cl::value_desc("N"), llvm::cl::init(0),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string>
    perfMap("perf-map",
            llvm::cl::desc("Write the address, size and name of each compiled "
                           "function to this file, or without a file to "
                           "/tmp/perf-<pid>.map, where `perf report` finds the "
                           "names of JIT-compiled code"),
            llvm::cl::value_desc("file"), llvm::cl::ValueOptional,
            llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> compileCache(
    "compile-cache",
    llvm::cl::desc("Keep compiled programs in this directory and load them "
                   "instead of compiling the same step again; the ranks on "
                   "a node compile a step once. 'off' compiles every run "
                   "(default: $TOFU_COMPILE_CACHE, else tofu/jit in "
                   "$XDG_CACHE_HOME or ~/.cache)"),
    llvm::cl::value_desc("dir|off"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<bool> libraryReport(
    "report",
    llvm::cl::desc("Print the FLOPs that go to library calls and to "
                   "generated loops (tofu-cpu-report)"),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> initFile(
    "init",
    llvm::cl::desc("Initial weights (and optionally optimizer state) from "
                   "this safetensors file, by name (see --list-inputs)"),
    llvm::cl::value_desc("file"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> dataFile(
    "data",
    llvm::cl::desc("Training data: one tensor per data input with a leading "
                   "sample dimension; step s takes samples [s*b, (s+1)*b) "
                   "modulo their number"),
    llvm::cl::value_desc("file"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> saveFile(
    "save",
    llvm::cl::desc("Write the final weights and optimizer state here (and "
                   "every --save-every steps), atomically"),
    llvm::cl::value_desc("file"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<unsigned>
    saveEvery("save-every",
              llvm::cl::desc("Also write --save every N steps (default 0: "
                             "after the last step only)"),
              llvm::cl::value_desc("N"), llvm::cl::init(0),
              llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> resumeFile(
    "resume",
    llvm::cl::desc("Continue from this checkpoint of --save: its weights, "
                   "optimizer state and step count, up to --steps in all"),
    llvm::cl::value_desc("file"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<double> learningRate(
    "lr",
    llvm::cl::desc("The learning rate of a step built with "
                   "tofu-optimizer{lr-arg=1} (default: the one it was built "
                   "with)"),
    llvm::cl::value_desc("rate"), llvm::cl::init(0),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<unsigned>
    logEvery("log-every",
             llvm::cl::desc("Print the loss, steps/s and samples/s every N "
                            "steps and after the last (default 1)"),
             llvm::cl::value_desc("N"), llvm::cl::init(1),
             llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string> logFile(
    "log",
    llvm::cl::desc("Write one JSON line per step (step, loss, seconds) to "
                   "this file"),
    llvm::cl::value_desc("file"), llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<bool> listInputs(
    "list-inputs",
    llvm::cl::desc("Print the name, global shape, element type and kind of "
                   "every input of the step, and exit"),
    llvm::cl::cat(tofuRunCategory));
static llvm::cl::opt<std::string>
    funcName("func",
             llvm::cl::desc("The training step (default: the function "
                            "whose first result has tofu.loss)"),
             llvm::cl::init(""),
    llvm::cl::cat(tofuRunCategory));

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

/// The version of what the compile cache's key covers: a change of how a
/// run is compiled that the build's bytes do not show changes it.
static constexpr llvm::StringLiteral kCompileCacheFormat =
    "tofu-run compile cache 1";

/// The compile cache's directory: --compile-cache, else
/// $TOFU_COMPILE_CACHE, else tofu/jit in the user's cache directory
/// ($XDG_CACHE_HOME or ~/.cache). Empty when off.
static std::string getCompileCacheDirectory() {
  std::string directory;
  if (compileCache.getNumOccurrences())
    directory = compileCache;
  else if (const char *value = std::getenv("TOFU_COMPILE_CACHE");
           value && *value)
    directory = value;
  else if (llvm::SmallString<128> path;
           llvm::sys::path::cache_directory(path)) {
    llvm::sys::path::append(path, "tofu", "jit");
    directory = std::string(path);
  }
  return directory == "off" ? "" : directory;
}

/// The file of the shared library that holds `address`, and its identity:
/// device, inode, size and modification time. The key holds these for
/// LLVM's and MLIR's libraries, which lower and compile the program and
/// may change under this executable without a new version string (a
/// package update of the same soname).
static std::string describeLibraryOf(const void *address) {
  Dl_info info;
  if (!dladdr(address, &info) || !info.dli_fname)
    return "?";
  llvm::sys::fs::file_status status;
  if (llvm::sys::fs::status(info.dli_fname, status))
    return info.dli_fname;
  llvm::sys::fs::UniqueID id = status.getUniqueID();
  return llvm::formatv(
             "{0} {1}:{2} {3} {4}", info.dli_fname, id.getDevice(),
             id.getFile(), status.getSize(),
             status.getLastModificationTime().time_since_epoch().count())
      .str();
}

/// What identifies this build in the compile cache's key: LLVM's version,
/// the libraries that hold LLVM and MLIR (describeLibraryOf), and a hash of
/// the bytes of this executable (the lowerings are linked into it; read
/// through /proc/self/exe, which is the running file even when a rebuild
/// has replaced it on disk) and of the CPU runtime that the programs call.
/// Sets `error` when a file cannot be read.
static std::string describeBuild(const char *argv0, StringRef runtime,
                                 std::string &error) {
  std::string exe = "/proc/self/exe";
  if (!llvm::sys::fs::exists(exe))
    exe = llvm::sys::fs::getMainExecutable(
        argv0, reinterpret_cast<void *>(&describeBuild));
  std::string description = LLVM_VERSION_STRING " " TOFU_C_RUNNER_UTILS " " +
                            describeLibraryOf(reinterpret_cast<const void *>(
                                &llvm::sys::getProcessTriple)) +
                            " " +
                            describeLibraryOf(reinterpret_cast<const void *>(
                                static_cast<void (*)(DialectRegistry &)>(
                                    &mlir::registerLLVMDialectTranslation)));
  for (StringRef path : {StringRef(exe), runtime}) {
    llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> bytes =
        llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                    /*RequiresNullTerminator=*/false,
                                    /*IsVolatile=*/true);
    if (!bytes) {
      error = "cannot read " + path.str() +
              " for the compile cache: " + bytes.getError().message();
      return "";
    }
    description += " " + tofu::run::compileCacheKey((*bytes)->getBuffer());
  }
  return description;
}

/// An option given on the command line that is not tofu-run's own (one of
/// LLVM's, hidden from --help, such as -vectorize-loops), or "" when there
/// is none.
static std::string findLLVMOptionGiven() {
  for (auto &[name, option] : llvm::cl::getRegisteredOptions())
    if (option->getNumOccurrences() &&
        !llvm::is_contained(option->Categories, &tofuRunCategory))
      return "-" + name.str();
  return "";
}

/// Takes `key`'s claim into `claim` when no other process holds it: this
/// process compiles. Otherwise another process compiles the same step (a
/// rank of the same job on this node): waits until it has released the
/// claim, without keeping it, so that a process that waited and still
/// finds no entry compiles at once, beside the others. Says, through
/// `warn`, when the wait is long, and stops waiting after 10 minutes.
template <typename Warn>
static llvm::Error
claimOrWait(tofu::run::CompileCache &cache, StringRef key,
            std::optional<tofu::run::CompileCache::Claim> &claim, Warn warn) {
  llvm::Expected<std::optional<tofu::run::CompileCache::Claim>> taken =
      cache.claim(key);
  if (!taken)
    return taken.takeError();
  if (*taken) {
    claim.emplace(std::move(**taken));
    return llvm::Error::success();
  }
  for (int seconds = 10; seconds <= 600; seconds += 10) {
    llvm::Expected<std::optional<tofu::run::CompileCache::Claim>> waited =
        cache.claim(key, std::chrono::seconds(10));
    if (!waited)
      return waited.takeError();
    if (*waited)
      return llvm::Error::success();
    if (seconds == 10)
      warn("waiting for another process that compiles this step (it holds " +
           cache.lockPath(key) + ")");
  }
  warn("another process has compiled this step for 10 minutes; compiling it "
       "here too");
  return llvm::Error::success();
}

/// The training steps of `module`, as tofu-train-driver finds them: the
/// functions whose first result is a loss, but the unpartitioned reference
/// that tofu-partition keeps.
static SmallVector<func::FuncOp> getSteps(ModuleOp module) {
  SmallVector<func::FuncOp> steps;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal() && !func.getSymName().ends_with("_reference") &&
        func.getNumResults() && func.getResultAttr(0, "tofu.loss"))
      steps.push_back(func);
  return steps;
}

/// The training step that tofu-train-driver drives: --func, or the first
/// of getSteps.
static func::FuncOp findStep(ModuleOp module) {
  if (!funcName.empty())
    return module.lookupSymbol<func::FuncOp>(funcName);
  SmallVector<func::FuncOp> steps = getSteps(module);
  return steps.empty() ? nullptr : steps.front();
}

/// Brackets every call of the step in @main with a runtime's step timer
/// (`prefix`_begin/_end: tofu_timer on the CPU, tofu_gpu_timer on the GPU)
/// and reports the median before the runtime is finalized. With
/// `streamOrdered`, the begin and end calls are marked as queued on the
/// GPU's stream (they record events and do not wait).
static LogicalResult addStepTimer(ModuleOp module, func::FuncOp step,
                                  StringRef prefix, bool streamOrdered) {
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || !step)
    return module.emitError("tofu-run: no @main or no training step after "
                            "tofu-train-driver");
  OpBuilder b(module.getContext());
  auto callTimer = [&](StringRef name, ValueRange args, Location loc) {
    func::FuncOp callee = tofu::declareRuntimeFunction(
        module, name, ValueRange(args).getTypes(), {});
    return func::CallOp::create(b, loc, callee, args);
  };
  auto bracket = [&](StringRef name, Location loc) {
    func::CallOp call = callTimer(name, {}, loc);
    if (streamOrdered)
      call->setAttr(tofu::kStreamOrderedAttr, b.getUnitAttr());
  };
  SmallVector<func::CallOp> calls;
  main.walk([&](func::CallOp call) { calls.push_back(call); });
  for (func::CallOp call : calls) {
    if (call.getCallee() == step.getSymName()) {
      b.setInsertionPoint(call);
      bracket((prefix + "_begin").str(), call.getLoc());
      b.setInsertionPointAfter(call);
      bracket((prefix + "_end").str(), call.getLoc());
    } else if (call.getCallee() == "tofu_finalize") {
      b.setInsertionPoint(call);
      Value skip = arith::ConstantIntOp::create(b, call.getLoc(), warmup, 64);
      callTimer((prefix + "_report").str(), skip, call.getLoc());
    }
  }
  return success();
}

/// Compiles the lowered `module` (LLVM dialect, its @main the training
/// run) into an executable at `path`: translated to LLVM IR, @main renamed
/// and called from a C `int main(void)`, optimized at -O2 for the generic
/// CPU of the host's architecture (the executable may run on another
/// machine; `cpu` names another: `native` for the host's own CPU and
/// features), written as an object and linked by $TOFU_CC (default cc)
/// against `libraries` with run paths to their directories, or with the
/// run path `rpath` when it is not empty. Its `main`
/// sets TOFU_NUM_THREADS to `threads` unless the environment has it (the
/// runtime reads it, as it does when tofu-run sets it). Returns an error
/// message, empty on success.
static std::string compileExecutable(ModuleOp module, StringRef path,
                                     ArrayRef<std::string> libraries,
                                     StringRef rpath, StringRef cpu,
                                     bool allowUndefinedInLibraries,
                                     int threads, int workerCount) {
  llvm::LLVMContext context;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "tofu-run");
  if (!llvmModule)
    return "cannot translate the lowered module to LLVM IR";
  llvm::Function *run = llvmModule->getFunction("main");
  if (!run || !run->arg_empty())
    return "the lowered module has no @main() to call";
  run->setName("tofu_lowered_main");
  auto *entry = llvm::Function::Create(
      llvm::FunctionType::get(llvm::Type::getInt32Ty(context), false),
      llvm::Function::ExternalLinkage, "main", *llvmModule);
  llvm::IRBuilder<> builder(llvm::BasicBlock::Create(context, "entry", entry));
  // --threads, unless the environment sets it: setenv(name, N, 0).
  llvm::Type *i32 = builder.getInt32Ty(), *ptr = builder.getPtrTy();
  llvm::FunctionCallee setenvFn = llvmModule->getOrInsertFunction(
      "setenv", llvm::FunctionType::get(i32, {ptr, ptr, i32}, false));
  builder.CreateCall(setenvFn,
                     {builder.CreateGlobalString("TOFU_NUM_THREADS"),
                      builder.CreateGlobalString(std::to_string(threads)),
                      builder.getInt32(0)});
  if (workerCount > 1) {
    // tofu_workers_run(K, body, null): each worker runs the lowered main.
    auto *body = llvm::Function::Create(
        llvm::FunctionType::get(builder.getVoidTy(), {ptr}, false),
        llvm::Function::InternalLinkage, "tofu_worker_body", *llvmModule);
    llvm::IRBuilder<> bodyBuilder(
        llvm::BasicBlock::Create(context, "entry", body));
    bodyBuilder.CreateCall(run);
    bodyBuilder.CreateRetVoid();
    llvm::FunctionCallee start = llvmModule->getOrInsertFunction(
        "tofu_workers_run",
        llvm::FunctionType::get(builder.getVoidTy(),
                                {builder.getInt64Ty(), ptr, ptr}, false));
    builder.CreateCall(start, {builder.getInt64(workerCount), body,
                               llvm::ConstantPointerNull::get(
                                   llvm::PointerType::get(context, 0))});
  } else {
    builder.CreateCall(run);
  }
  builder.CreateRet(builder.getInt32(0));

  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  std::string error;
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return "no LLVM target for " + triple.str() + ": " + error;
  std::string cpuName = cpu.str(), features;
  if (cpu == "native") {
    cpuName = llvm::sys::getHostCPUName().str();
    llvm::SubtargetFeatures host;
    for (const auto &[feature, enabled] : llvm::sys::getHostCPUFeatures())
      host.AddFeature(feature, enabled);
    features = host.getString();
  }
  if (!cpuName.empty()) {
    std::unique_ptr<llvm::MCSubtargetInfo> info(
        target->createMCSubtargetInfo(triple, "", ""));
    if (!info || !info->isCPUStringValid(cpuName))
      return "'" + cpu.str() + "' is not a CPU of " + triple.str() +
             " (--executable-cpu)";
  }
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, cpuName, features, llvm::TargetOptions(), llvm::Reloc::PIC_));
  llvmModule->setTargetTriple(triple);
  llvmModule->setDataLayout(machine->createDataLayout());
  tofu::run::optimizeModule(*llvmModule, *machine);

  llvm::SmallString<128> object;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("tofu-run", "o", object))
    return "cannot create a temporary object file: " + ec.message();
  llvm::scope_exit removeObject(
      [&] { llvm::sys::fs::remove(object); });
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(object, ec);
    if (ec)
      return "cannot write " + object.str().str() + ": " + ec.message();
    if (llvm::Error error = tofu::run::emitObject(*llvmModule, *machine, os))
      return llvm::toString(std::move(error));
    os.close();
    if (os.has_error())
      return "cannot write " + object.str().str() + ": " +
             os.error().message();
  }

  const char *ccName = std::getenv("TOFU_CC");
  std::string cc = ccName && *ccName ? ccName : "cc";
  llvm::ErrorOr<std::string> ccPath = llvm::sys::findProgramByName(cc);
  if (!ccPath)
    return "cannot find the linker driver " + cc +
           " (set TOFU_CC to a C compiler)";
  // Only the libraries that the executable uses become its dependencies
  // (MLIR's C runner utilities would bring all of libMLIR and libLLVM).
  std::vector<std::string> args{*ccPath, object.str().str(), "-o", path.str(),
                                "-Wl,--as-needed"};
  for (const std::string &library : libraries) {
    args.push_back(library);
    if (rpath.empty())
      args.push_back("-Wl,-rpath," +
                     llvm::sys::path::parent_path(library).str());
  }
  if (!rpath.empty())
    args.push_back("-Wl,-rpath," + rpath.str());
  args.push_back("-lm"); // The math functions that the lowering calls.
  if (allowUndefinedInLibraries)
    args.push_back("-Wl,--allow-shlib-undefined");
  std::vector<StringRef> argRefs(args.begin(), args.end());
  std::string message;
  int status = llvm::sys::ExecuteAndWait(*ccPath, argRefs, std::nullopt, {},
                                         0, 0, &message);
  if (status != 0)
    return "linking with " + *ccPath + " failed" +
           (message.empty() ? "" : ": " + message);
  return "";
}

/// The CUDA runtime next to the executable `argv0`; exits with a message
/// unless it is there, loads and finds a GPU.
/// `collectives`: the TOFU_GPU_COLLECTIVES_* kind the step needs (0 for
/// an unpartitioned one).
static std::string requireGPU(const char *argv0, int32_t collectives) {
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
  using HasCollectives = int32_t (*)();
  auto hasCollectives = reinterpret_cast<HasCollectives>(
      runtime.getAddressOfSymbol("tofu_gpu_has_collectives"));
  if (collectives && (!hasCollectives || !(hasCollectives() & collectives))) {
    llvm::errs() << "tofu-run: --gpu: a partitioned step "
                 << (collectives == TOFU_GPU_COLLECTIVES_NCCL
                         ? "in one process per GPU needs NCCL"
                         : "in in-process workers needs the GPU collectives")
                 << ", and this build has "
                 << (hasCollectives && hasCollectives() ? "only the workers'"
                                                        : "none")
                 << " (nvcc, MPI or NCCL was not found when it was "
                    "configured, or -DTOFU_ENABLE_NCCL=OFF)\n";
    std::exit(1);
  }
  return library;
}

/// The number of ranks and this process's rank in the job that mpiexec
/// started, from the environment of the process managers that MPICH
/// (Hydra: PMI_SIZE/PMI_RANK) and Open MPI set; {1, 0} outside mpiexec.
static std::pair<int, int> getLaunchedRanks() {
  auto read = [](const char *name) -> int {
    const char *v = std::getenv(name);
    int n = -1;
    if (v && !StringRef(v).getAsInteger(10, n))
      return n;
    return -1;
  };
  for (auto [size, rank] : {std::pair{"PMI_SIZE", "PMI_RANK"},
                            std::pair{"OMPI_COMM_WORLD_SIZE",
                                      "OMPI_COMM_WORLD_RANK"}}) {
    int n = read(size), r = read(rank);
    if (n >= 1)
      return {n, std::max(r, 0)};
  }
  return {1, 0};
}

/// How many ranks of the job run on this node (MPICH's Hydra:
/// MPI_LOCALNRANKS, Open MPI: OMPI_COMM_WORLD_LOCAL_SIZE); 1 outside
/// mpiexec.
static int getLocalRanks() {
  for (const char *name : {"MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE"}) {
    int n = 0;
    if (const char *v = std::getenv(name);
        v && !StringRef(v).getAsInteger(10, n) && n >= 1)
      return n;
  }
  return 1;
}

/// Whether the module holds a partitioned step (tofu-partition's grid).
static bool isPartitioned(ModuleOp module) {
  bool partitioned = false;
  module->walk([&](Operation *op) {
    StringRef dialect = op->getName().getDialectNamespace();
    partitioned |= dialect == "shard" || dialect == "tofu";
  });
  return partitioned;
}

/// --list-inputs: one line per argument of the step, with the name and
/// global shape that --init, --data and --save use.
static int printInputs(ModuleOp module) {
  func::FuncOp step = findStep(module);
  if (!step) {
    llvm::errs() << "tofu-run: no training step found\n";
    return 1;
  }
  // A partitioned step's arguments are tiles: the reference has the
  // global types.
  auto global = module.lookupSymbol<func::FuncOp>(
      (step.getSymName() + "_reference").str());
  if (!global || global.getNumArguments() != step.getNumArguments())
    global = step;
  for (unsigned i = 0; i < step.getNumArguments(); ++i) {
    namespace attrs = tofu::attrs;
    StringRef kind = step.getArgAttr(i, attrs::kWeight)     ? "weight"
                     : step.getArgAttr(i, attrs::kStateOf) ? "state"
                     : step.getArgAttr(i, attrs::kHyperparameter)
                         ? "hyperparameter"
                         : "data";
    llvm::outs() << tofu::getFileTensorName(step, i) << " ";
    Type type = global.getArgumentTypes()[i];
    if (auto tensor = dyn_cast<RankedTensorType>(type)) {
      llvm::outs() << "[";
      llvm::interleaveComma(tensor.getShape(), llvm::outs());
      llvm::outs() << "] " << tensor.getElementType();
    } else {
      llvm::outs() << type;
    }
    llvm::outs() << " " << kind << "\n";
  }
  return 0;
}

static const char *kOverview =
    "Tofu-MLIR in-process training runner\n\n"
    "Runs a training step (the output of tofu-opt's training pipeline, "
    "partitioned by --tofu-partition or not) for a few steps and prints the "
    "losses. A partitioned step runs under mpiexec with one rank per "
    "device of its plan.\n\n"
    "Examples:\n"
    "  tofu-run step.mlir --steps 5\n"
    "  mpiexec -n 4 tofu-run spmd.mlir --steps 3 --reference\n"
    "  tofu-run spmd.mlir --list-inputs\n"
    "  mpiexec -n 4 tofu-run spmd.mlir --init w.safetensors --data "
    "train.safetensors --steps 1000 --save-every 100 --save ckpt.safetensors\n"
    "  mpiexec -n 4 tofu-run spmd.mlir --data train.safetensors --steps 1000 "
    "--resume ckpt.safetensors --save ckpt.safetensors\n"
    "  tofu-run step.mlir --gpu --steps 25 --warmup 5\n";

/// `--threads`: libLLVM already registers an int option of that name (the
/// ThinLTO code generator's, unused here), so tofu-run adopts it rather than
/// registering a second one. Null if this libLLVM has none.
static llvm::cl::opt<int> *adoptThreadsOption() {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("threads");
  if (it == options.end())
    return nullptr;
  auto *threads = static_cast<llvm::cl::opt<int> *>(it->second);
  threads->setDescription("Threads of each rank's library calls (default "
                          "1: mpiexec -n <cores> fills one core per rank)");
  threads->setValueStr("N");
  threads->addCategory(tofuRunCategory);
  return threads;
}

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  tofu::setDefaultCudaHome(); // For tofu-gpu-pipeline's ptxas.
  llvm::cl::opt<int> *threadsOption = adoptThreadsOption();
  llvm::cl::HideUnrelatedOptions(tofuRunCategory);
  auto [ranks, rank] = getLaunchedRanks();
  // Every rank parses the same command line: only rank 0 reports its
  // errors (all ranks exit). The option parsers write to stderr directly,
  // so the other ranks' stderr is closed while they parse.
  int savedStderr = -1;
  if (rank != 0) {
    llvm::errs().flush();
    savedStderr = ::dup(2);
    int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) {
      ::dup2(null, 2);
      ::close(null);
    }
  }
  bool parsed = llvm::cl::ParseCommandLineOptions(
      argc, argv, kOverview, rank == 0 ? &llvm::errs() : &llvm::nulls());
  if (savedStderr >= 0) {
    llvm::errs().flush();
    ::dup2(savedStderr, 2);
    ::close(savedStderr);
  }
  if (!parsed)
    return 1;
  int rankThreads = threadsOption && threadsOption->getNumOccurrences()
                        ? threadsOption->getValue()
                        : 1;
  // Every rank gets the same input and options: only rank 0 speaks.
  auto fail = [rank = rank](const llvm::Twine &message) {
    if (rank == 0)
      llvm::errs() << "tofu-run: " << message << "\n";
    return 1;
  };
  if (steps < 1)
    return fail("--steps must be at least 1");
  if (warmup >= steps)
    return fail("--warmup (" + llvm::Twine(unsigned(warmup)) +
                ") must be less than --steps (" +
                llvm::Twine(unsigned(steps)) + ")");
  if (intBound < 1 || intBound > (uint64_t(1) << 31))
    return fail("--int-bound must be in [1, 2^31]");
  if (!inputFile.getNumOccurrences() && ::isatty(0))
    return fail("no training step given: name its file, as in tofu-run "
                "step.mlir --steps 3 (--help lists the options)");
  if (warmup > 0 && !timing && !onGPU)
    return fail("--warmup leaves steps out of the step time: give --timing "
                "too");
  if (workers < 1 || workers > 4096)
    return fail("--workers must be in [1, 4096]");
  if (workers > 1 && ranks > 1)
    return fail("--workers runs the ranks in one process: run it without "
                "mpiexec");
  if (workers > 1 && (!saveFile.empty() || !resumeFile.empty()))
    return fail("--workers does not take --save or --resume (a checkpoint is "
                "written by MPI ranks): run under mpiexec");
  if (gpuLowerOnly && !onGPU)
    return fail("--gpu-lower-only prints the GPU lowering: give --gpu too");
  if (gpuPipelineOptions.getNumOccurrences() && !onGPU)
    return fail("--gpu-pipeline sets options of the GPU lowering: give --gpu "
                "too");
  if (cpuPipelineOptions.getNumOccurrences() && onGPU)
    return fail("--cpu-pipeline sets options of the CPU lowering; with --gpu "
                "give --gpu-pipeline");
  if (inputFile == "-" && ranks > 1)
    return fail("cannot read the step from stdin with " + llvm::Twine(ranks) +
                " ranks (mpiexec gives stdin to rank 0 only): write it to a "
                "file and pass its path");
  // Before the CPU runtime loads OpenBLAS (docs/cpu.md, *OpenBLAS's kernels
  // on CPUs it does not know*).
  std::string blasNote = tofu::selectOpenBLASCore();
  if (!blasNote.empty() && timing && rank == 0)
    llvm::outs() << "openblas: " << blasNote << "\n";
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
  tofu::registerTofuCPUPipeline();
  tofu::registerTofuGPUPipeline();
  MLIRContext context(registry);

  std::string error;
  auto file = openInputFile(inputFile, &error);
  if (!file)
    return fail(error);
  if (file->getBufferSize() == 0 ||
      file->getBuffer().find_first_not_of(" \t\r\n") == StringRef::npos)
    return fail("empty input: " + inputFile + " holds no training step");
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
  // Diagnostics with their source lines, from rank 0 only.
  llvm::raw_null_ostream quiet;
  llvm::raw_ostream &diagnosticStream =
      rank == 0 ? static_cast<llvm::raw_ostream &>(llvm::errs()) : quiet;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context,
                                         diagnosticStream);
  // A remark (a library call the lowering could not make, a pad kept as a
  // copy) is the message at its source line: the op it is attached to, as
  // the pipeline has rewritten it, is printed with errors only.
  ScopedDiagnosticHandler remarks(&context, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Remark)
      return failure();
    diagnostics.emitDiagnostic(diag.getLocation(), diag.str(),
                               DiagnosticSeverity::Remark);
    return success();
  });
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  if (listInputs)
    return rank == 0 ? printInputs(*module) : 0;
  if (learningRate.getNumOccurrences())
    if (func::FuncOp step = findStep(*module);
        step && llvm::none_of(llvm::seq(step.getNumArguments()),
                              [&](unsigned i) {
                                return step.getArgAttr(
                                    i, tofu::attrs::kHyperparameter);
                              }))
      return fail("--lr: the step's learning rate is a constant; build it "
                  "with tofu-optimizer{lr-arg=1} to set it at run time");
  if (onGPU && (!initFile.empty() || !dataFile.empty() || !saveFile.empty() ||
                !resumeFile.empty()))
    return fail("--gpu does not take --init, --data, --save or --resume yet");
  if (!initFile.empty() && !resumeFile.empty())
    return fail("--init and --resume exclude each other (a checkpoint holds "
                "the weights)");
  if (saveEvery > 0 && saveFile.empty())
    return fail("--save-every needs --save");
  if (logEvery < 1)
    return fail("--log-every must be at least 1");
  for (const std::string *path : {&initFile, &dataFile, &resumeFile})
    if (!path->empty() && !llvm::sys::fs::exists(*path))
      return fail("no such file: " + *path);
  // Files written during the run must not be files the run reads (a
  // checkpoint may go where --resume read one).
  for (auto [option, path] : {std::pair{"--save", &saveFile},
                              std::pair{"--log", &logFile}})
    for (auto [readOption, read] :
         {std::pair{"the step's file", &inputFile.getValue()},
          std::pair{"--init", &initFile.getValue()},
          std::pair{"--data", &dataFile.getValue()},
          std::pair{"--resume", &resumeFile.getValue()}}) {
      bool same = false;
      if (path->empty() || read->empty() || *read == "-" ||
          (path == &saveFile && read == &resumeFile.getValue()) ||
          llvm::sys::fs::equivalent(*path, *read, same) || !same)
        continue;
      return fail(llvm::Twine(option) + " " + *path + " would overwrite " +
                  readOption + "; choose another file");
    }
  // Files written during the run: their directory must take them now, not
  // after the compilation, when the runtime could only abort.
  for (auto [option, path] : {std::pair{"--save", &saveFile},
                              std::pair{"--log", &logFile}}) {
    if (path->empty())
      continue;
    StringRef dir = llvm::sys::path::parent_path(*path);
    if (dir.empty())
      dir = ".";
    if (!llvm::sys::fs::is_directory(dir) ||
        llvm::sys::fs::access(dir, llvm::sys::fs::AccessMode::Write))
      return fail(llvm::Twine("cannot write ") + option + " " + *path +
                  ": " + dir + " is not a writable directory");
    if (llvm::sys::fs::is_directory(*path))
      return fail(llvm::Twine("cannot write ") + option + " " + *path +
                  ": it is a directory");
  }
  if (onGPU && reference)
    return fail("--gpu does not take --reference yet: compare the losses "
                "with those of the same step on the CPU");
  if (module->lookupSymbol("main"))
    return fail(inputFile + " already has a training driver (@main): give "
                "tofu-run the step itself, as tofu-opt wrote it before "
                "--tofu-train-driver and --convert-tofu-to-mpi");
  if (SmallVector<func::FuncOp> found = getSteps(*module);
      funcName.empty() && found.size() > 1) {
    SmallVector<std::string> names;
    for (func::FuncOp f : found)
      names.push_back("@" + f.getSymName().str());
    return fail(inputFile + " has " + llvm::Twine(found.size()) +
                " training steps (" + llvm::join(names, ", ") +
                "): choose one with --func");
  }
  if (reference && !isPartitioned(*module))
    return fail("--reference compares a partitioned step with the "
                "unpartitioned one it was made from, but this step is not "
                "partitioned (tofu-opt --tofu-partition)");
  if (ranks > 1 && !isPartitioned(*module))
    return fail("the step is not partitioned, but runs on " +
                llvm::Twine(ranks) +
                " ranks: every rank would compute the same whole step. "
                "Partition it first (tofu-opt --tofu-partition after a "
                "search with devices=" +
                llvm::Twine(ranks) + "), or run it on one rank");
  if (perfMap.getNumOccurrences() && (!emitExecutable.empty() || gpuLowerOnly))
    return fail("--perf-map names the functions of a run; --emit-executable "
                "and --gpu-lower-only run nothing");
  if (compileCache.getNumOccurrences() && compileCache.empty())
    return fail("--compile-cache takes a directory, or 'off'");
  if (onGPU && compileCache.getNumOccurrences() && compileCache != "off" &&
      rank == 0)
    llvm::errs() << "tofu-run: warning: --compile-cache keeps nothing with "
                    "--gpu yet; compiling\n";
  if (compileCache.getNumOccurrences() && compileCache != "off" &&
      !emitExecutable.empty())
    return fail("--compile-cache keeps the programs of runs; "
                "--emit-executable writes an executable instead");
  if (!executableCPU.empty() && emitExecutable.empty())
    return fail("--executable-cpu is the CPU of --emit-executable's "
                "executable; give --emit-executable PATH too");
  if (!executableRpath.empty() && emitExecutable.empty())
    return fail("--executable-rpath is the run path of --emit-executable's "
                "executable; give --emit-executable PATH too");
  std::string cudaRuntime;
  if (onGPU && !gpuLowerOnly && emitExecutable.empty())
    cudaRuntime =
        requireGPU(argv[0], !isPartitioned(*module) ? 0
                            : workers > 1 ? TOFU_GPU_COLLECTIVES_WORKERS
                                          : TOFU_GPU_COLLECTIVES_NCCL);
  if (!emitExecutable.empty()) {
    if (ranks > 1)
      return fail("--emit-executable compiles; run it on one rank");
    if (onGPU) {
      std::string tried;
      if (!StringRef(TOFU_CUDA_RUNTIME_NAME).empty())
        cudaRuntime = findRuntime(argv[0], tried, TOFU_CUDA_RUNTIME_NAME);
      if (cudaRuntime.empty())
        return fail("--gpu --emit-executable: this build has no CUDA "
                    "runtime to link against");
    }
  }

  std::string driver = "tofu-train-driver{steps=" + std::to_string(steps) +
                       " seed=" + std::to_string(seed) +
                       " reference=" + (reference ? "1" : "0") +
                       " int-bound=" + std::to_string(intBound) +
                       (funcName.empty() ? "" : " func=" + funcName) +
                       (onGPU ? " unroll=1" : "");
  // Paths in braces, which the pass option parser takes verbatim.
  for (auto [option, value] :
       {std::pair{"init", &initFile}, std::pair{"data", &dataFile},
        std::pair{"save", &saveFile}, std::pair{"resume", &resumeFile}})
    if (!value->empty())
      driver += std::string(" ") + option + "={" + *value + "}";
  if (saveEvery > 0)
    driver += " save-every=" + std::to_string(saveEvery);
  if (logEvery != 1)
    driver += " log-every=" + std::to_string(logEvery);
  if (learningRate.getNumOccurrences()) {
    if (!(learningRate > 0) || !std::isfinite(double(learningRate)))
      return fail("--lr must be positive");
    driver += " lr=" + llvm::formatv("{0:e17}", double(learningRate)).str();
  }
  if (!logFile.empty())
    driver += " log={" + logFile + "}";
  driver += "}";
  if (rankThreads < 1 || rankThreads > 1024)
    return fail("--threads must be in [1, 1024]");
  // Read by the CPU runtime before its first library call.
  ::setenv("TOFU_NUM_THREADS", std::to_string(rankThreads).c_str(), 1);
  auto compileStart = std::chrono::steady_clock::now();
  // The pipelines that lower the step. With the step's text, the host's
  // CPU and this build they make the compile cache's key.
  // Small independent collectives of a partitioned step become one.
  std::string combine = combineCollectives ? ",tofu-combine-collectives" : "";
  std::string communication, lowering;
  if (!onGPU) {
    // The communication becomes calls into the runtime.
    communication = combine + ",convert-tofu-to-mpi";
    lowering = std::string("tofu-cpu-pipeline{library-calls=") +
               (libraryCalls ? "1" : "0") + " " + cpuPipelineOptions + "}";
  } else {
    // A partitioned step's communication calls the GPU collectives
    // (Collectives.cpp: NCCL, one process per GPU under mpiexec).
    communication = isPartitioned(*module)
                        ? combine + ",convert-tofu-to-mpi{runtime=gpu}"
                        : "";
    lowering = "tofu-gpu-pipeline{" + gpuPipelineOptions + "}";
  }
  // The lowering's options (--cpu-pipeline, --gpu-pipeline) are checked
  // before anything runs; the parser has said what is wrong.
  if (PassManager check(&context);
      failed(parsePassPipeline(lowering, check, diagnosticStream)))
    return fail(llvm::Twine("the lowering '") + lowering +
                "' is not valid: see " +
                (onGPU ? "--gpu-pipeline" : "--cpu-pipeline"));
  // On the GPU the step timer is stream-ordered and always there.
  bool stepTimer = timing || onGPU;
  // The driver, the communication and the step timer: what the run's
  // options make of the step, before the lowering (the compile cache's
  // key is the result).
  auto prepareModule = [&]() -> LogicalResult {
    func::FuncOp step = findStep(*module);
    std::string stepName = step ? step.getSymName().str() : "";
    PassManager pm(&context);
    return success(succeeded(parsePassPipeline(driver + communication, pm,
                                               llvm::errs())) &&
                   succeeded(pm.run(*module)) &&
                   (!stepTimer ||
                    succeeded(addStepTimer(
                        *module, module->lookupSymbol<func::FuncOp>(stepName),
                        onGPU ? "tofu_gpu_timer" : "tofu_timer", onGPU))));
  };
  // The report goes to a file of every rank's own: the compile cache keeps
  // it with the program, whichever rank compiled it, and rank 0 prints it.
  std::string reportFile;
  // tofu-cpu-pipeline fuses element-wise chains first: after the driver is
  // built, whose initial values follow the step's unfused ops (the fan-in
  // of a weight; docs/cpu.md).
  auto lowerModule = [&]() -> LogicalResult {
    std::string pipeline = lowering;
    if (libraryReport && !onGPU) {
      llvm::SmallString<128> path;
      if (std::error_code code = llvm::sys::fs::createTemporaryFile(
              "tofu-run-report", "txt", path)) {
        fail("cannot write the report: " + code.message());
        return failure();
      }
      reportFile = std::string(path);
      pipeline.insert(pipeline.size() - 1, " report={" + reportFile + "}");
    }
    PassManager lower(&context);
    if (succeeded(parsePassPipeline(pipeline, lower, llvm::errs())) &&
        succeeded(lower.run(*module)))
      return success();
    if (!reportFile.empty())
      llvm::sys::fs::remove(reportFile);
    return failure();
  };
  // The report that the lowering wrote, its file removed.
  auto takeReport = [&]() -> std::string {
    if (reportFile.empty())
      return "";
    std::string text;
    if (llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
            llvm::MemoryBuffer::getFile(reportFile))
      text = (*file)->getBuffer().str();
    llvm::sys::fs::remove(reportFile);
    reportFile.clear();
    return text;
  };
  // Only @main is called from outside: every other function is internal to
  // the optimizer, and the split of the parallel JIT (JIT.cpp) makes
  // visible only those that another part calls. The step, internal now,
  // returns its struct of results through memory, however short (so that
  // every run takes the same path).
  auto internalize = [&]() -> LogicalResult {
    for (auto func : module->getOps<LLVM::LLVMFuncOp>())
      if (!func.isExternal() && func.getName() != "main")
        func.setLinkage(LLVM::Linkage::Internal);
    PassManager resultsInMemory(&context);
    resultsInMemory.addPass(
        tofu::createTofuLLVMResultsInMemory({/*minMembers=*/2}));
    return resultsInMemory.run(*module);
  };

  if (failed(prepareModule()))
    return 1;
  if (gpuLowerOnly) {
    if (failed(lowerModule()))
      return 1;
    module->print(llvm::outs());
    return 0;
  }
  std::string tried;
  std::string runtime = findRuntime(argv[0], tried);
  if (runtime.empty())
    return fail("cannot find the CPU runtime; tried " + tried);
  if (!emitExecutable.empty()) {
    if (failed(lowerModule()))
      return 1;
    if (std::string report = takeReport(); rank == 0)
      llvm::errs() << report;
    if (failed(internalize()))
      return 1;
    SmallVector<std::string> libraries{runtime};
    if (onGPU)
      libraries.push_back(cudaRuntime);
    libraries.push_back(TOFU_C_RUNNER_UTILS);
    std::string error =
        compileExecutable(*module, emitExecutable, libraries, executableRpath,
                          executableCPU, onGPU, rankThreads, workers);
    if (!error.empty())
      return fail("--emit-executable: " + error);
    return 0;
  }
  // The optimizer sees the host's target machine: without it the loop
  // vectorizer assumes no vector registers and libm calls stay calls.
  llvm::Expected<llvm::orc::JITTargetMachineBuilder> machineBuilder =
      llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!machineBuilder)
    return fail("cannot compile the module: " +
                llvm::toString(machineBuilder.takeError()));
  // Code generation at -O1: the step's time is in its library calls and
  // vectorized loops, which it does not slow down, and it takes a tenth
  // less of the compile time than -O2 (docs/cpu.md).
  machineBuilder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Less);
  llvm::Expected<llvm::DataLayout> dataLayout =
      machineBuilder->getDefaultDataLayoutForTarget();
  if (!dataLayout)
    return fail("cannot compile the module: " +
                llvm::toString(dataLayout.takeError()));
  SmallVector<std::string> libraries{runtime, TOFU_C_RUNNER_UTILS};
  if (onGPU)
    libraries.push_back(cudaRuntime);

  // The compile cache (CompileCache.h). The GPU's programs are not kept
  // yet; an LLVM option of the command line (hidden from --help) changes
  // the compile in ways the key does not see.
  auto warn = [rank = rank](const llvm::Twine &message) {
    if (rank == 0)
      llvm::errs() << "tofu-run: warning: " << message << "\n";
  };
  // TOFU_COMPILE_CACHE_VERBOSE=1: every rank says whether it compiled or
  // loaded its program.
  const char *verbose = std::getenv("TOFU_COMPILE_CACHE_VERBOSE");
  bool cacheVerbose = verbose && StringRef(verbose) == "1";
  std::optional<tofu::run::CompileCache> cache;
  std::string cacheKey;
  std::optional<tofu::run::CompileCache::Claim> claim;
  std::optional<tofu::run::CompiledProgram> compiled;
  if (std::string directory = getCompileCacheDirectory();
      !directory.empty() && !onGPU) {
    if (std::string option = findLLVMOptionGiven(); !option.empty()) {
      if (compileCache.getNumOccurrences())
        warn("--compile-cache is off with the LLVM option " + option);
    } else if (llvm::Expected<tofu::run::CompileCache> opened =
                   tofu::run::CompileCache::open(directory)) {
      cache.emplace(std::move(*opened));
    } else {
      warn(llvm::toString(opened.takeError()) +
           "; compiling without the compile cache");
    }
  }
  double waited = 0;
  if (cache) {
    std::string error;
    std::string build = describeBuild(argv[0], runtime, error);
    if (!error.empty()) {
      warn(error + "; compiling without the compile cache");
      cache.reset();
    } else {
      // The module as the options made it: every option that changes the
      // program is in it (--steps, --seed, the files, --warmup's timer).
      std::string prepared;
      llvm::raw_string_ostream os(prepared);
      module->print(os);
      std::string target = machineBuilder->getTargetTriple().str() + " " +
                           machineBuilder->getCPU() + " " +
                           machineBuilder->getFeatures().getString();
      // An entry made with --report holds the report.
      cacheKey = tofu::run::compileCacheKey(
          {kCompileCacheFormat, build, target, prepared, lowering,
           libraryReport ? "report" : "no report"});
      auto waitStart = std::chrono::steady_clock::now();
      if (llvm::Error error = claimOrWait(*cache, cacheKey, claim, warn))
        warn(llvm::toString(std::move(error)));
      llvm::Expected<std::optional<tofu::run::CompiledProgram>> found =
          cache->lookup(cacheKey);
      if (!found)
        warn(llvm::toString(found.takeError()) + "; compiling it again");
      else
        compiled = std::move(*found);
      waited = std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                             waitStart)
                   .count();
    }
  }
  bool loaded = compiled.has_value();
  auto loweredAt = std::chrono::steady_clock::now(), translatedAt = loweredAt;
  tofu::run::JITTimes jitTimes;
  // Lowers, translates and compiles the prepared module into `compiled`.
  auto compile = [&]() -> bool {
    if (failed(lowerModule()))
      return false;
    std::string report = takeReport();
    if (failed(internalize()))
      return false;
    loweredAt = std::chrono::steady_clock::now();
    llvm::LLVMContext llvmContext;
    std::unique_ptr<llvm::Module> llvmModule =
        translateModuleToLLVMIR(*module, llvmContext, "tofu-run");
    if (!llvmModule) {
      fail("cannot translate the lowered module to LLVM IR");
      return false;
    }
    llvmModule->setDataLayout(*dataLayout);
    llvmModule->setTargetTriple(machineBuilder->getTargetTriple());
    translatedAt = std::chrono::steady_clock::now();
    // By default the ranks on this node share its cores: they all compile
    // at once, unless the compile cache has them wait for this one.
    unsigned cores = llvm::hardware_concurrency().compute_thread_count();
    unsigned threads =
        jitThreads
            ? unsigned(jitThreads)
            : std::max(1u, claim ? cores : cores / unsigned(getLocalRanks()));
    llvm::Expected<tofu::run::CompiledProgram> made = tofu::run::compileProgram(
        std::move(llvmModule), *machineBuilder, threads, jitTimes);
    if (!made) {
      fail("cannot compile the module: " + llvm::toString(made.takeError()));
      return false;
    }
    compiled = std::move(*made);
    compiled->report = std::move(report);
    if (cache)
      if (llvm::Error error = cache->store(cacheKey, *compiled))
        warn(llvm::toString(std::move(error)));
    return true;
  };
  if (!compiled && !compile())
    return 1;
  claim.reset();
  if (rank == 0 && libraryReport)
    llvm::errs() << compiled->report;
  // Loads `compiled` and finds its @main (ORC links the objects on the
  // first lookup).
  std::unique_ptr<tofu::run::JITProgram> program;
  auto load = [&]() -> llvm::Expected<void *> {
    llvm::Expected<std::unique_ptr<tofu::run::JITProgram>> made =
        tofu::run::JITProgram::load(std::move(*compiled), *machineBuilder,
                                    libraries, perfMap.getNumOccurrences() > 0);
    compiled.reset();
    if (!made)
      return made.takeError();
    program = std::move(*made);
    return program->lookup("main");
  };
  llvm::Expected<void *> entry = load();
  if (!entry && loaded) {
    // A program from the cache that does not link (a library changed in a
    // way that the key does not see) is compiled again and replaced.
    warn("the compile cache entry " + cache->entryPath(cacheKey) +
         " does not load (" + llvm::toString(entry.takeError()) +
         "); compiling it again");
    program.reset();
    loaded = false;
    if (!compile())
      return 1;
    entry = load();
  }
  if (!entry)
    return fail("cannot compile the module: " +
                llvm::toString(entry.takeError()));
  if (cacheVerbose) {
    // One write: the ranks share the stream.
    std::string line =
        "tofu-run: compile cache: rank " + std::to_string(rank) + " " +
        (loaded ? "loaded" : cache ? "compiled" : "compiled, off") +
        (cache ? " " + cache->entryPath(cacheKey) : "") + "\n";
    llvm::errs() << line;
  }
  auto *runMain = reinterpret_cast<void (*)()>(*entry);
  if (llvm::Error error = program->initialize())
    return fail("cannot initialize the compiled program: " +
                llvm::toString(std::move(error)));
  // The perf map is written after the run, when the linker has placed
  // every function that ran; its file is opened now, so that a map that
  // cannot be written stops the run before it starts.
  std::string perfMapPath;
  if (perfMap.getNumOccurrences()) {
    perfMapPath = perfMap.empty()
                      ? "/tmp/perf-" + std::to_string(getpid()) + ".map"
                      : perfMap.getValue();
    std::error_code code;
    llvm::raw_fd_ostream probe(perfMapPath, code, llvm::sys::fs::OF_Text);
    if (code)
      return fail("cannot write the perf map: cannot open '" + perfMapPath +
                  "': " + code.message());
  }
  if (timing && rank == 0) {
    auto now = std::chrono::steady_clock::now();
    auto seconds = [](auto duration) {
      return std::chrono::duration<double>(duration).count();
    };
    if (loaded)
      llvm::outs() << llvm::format(
          "compile time: %.3f s (loaded from the compile cache)\n"
          "  entry %s\n",
          seconds(now - compileStart), cache->entryPath(cacheKey).c_str());
    else
      llvm::outs() << llvm::format(
          "compile time: %.3f s (lowering and JIT)\n"
          "  MLIR lowering %.3f s, translation to LLVM IR %.3f s, "
          "optimization and code generation %.3f s (optimization %.3f s; "
          "code generation in %u parts on %u threads, %.3f s summed over "
          "them)\n",
          seconds(now - compileStart),
          seconds(loweredAt - compileStart) - waited,
          seconds(translatedAt - loweredAt), seconds(now - translatedAt),
          jitTimes.optimize, jitTimes.parts, jitTimes.threads,
          jitTimes.codegen);
    if (waited >= 0.001)
      llvm::outs() << llvm::format(
          "  %.3f s in the compile cache (its claim and lookup)\n", waited);
    llvm::outs().flush();
  }
  if (workers > 1) {
    // Every worker runs @main with its own rank (the runtime's
    // tofu_workers_run starts them).
    using Body = void (*)(void *);
    auto run = reinterpret_cast<void (*)(int64_t, Body, void *)>(
        llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(
            "tofu_workers_run"));
    if (!run)
      return fail("the CPU runtime " + runtime + " has no tofu_workers_run");
    run(
        workers, [](void *main) { reinterpret_cast<void (*)()>(main)(); },
        *entry);
  } else {
    runMain();
  }
  if (!perfMapPath.empty())
    if (llvm::Error error = program->writePerfMap(perfMapPath))
      return fail("cannot write the perf map: " +
                  llvm::toString(std::move(error)));
  if (llvm::Error error = program->deinitialize())
    return fail(llvm::toString(std::move(error)));
  return 0;
}
