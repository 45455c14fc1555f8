//===- JIT.cpp - Compile the lowered step in parallel and load it ---------===//

#include "JIT.h"

#include "llvm/Analysis/CFG.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/Bitcode/BitcodeWriter.h"
#include "llvm/ExecutionEngine/JITLink/JITLink.h"
#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/ExecutionEngine/Orc/ObjectLinkingLayer.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/SmallVectorMemoryBuffer.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/Threading.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"
#include "llvm/Transforms/Utils/SplitModule.h"

#include <chrono>

using namespace llvm;
using namespace tofu::run;

namespace {
using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// One part's object and the time its code generation took.
struct CompiledPart {
  std::unique_ptr<MemoryBuffer> object;
  double codegen = 0;
};

/// Records the address, size and name of every function that the linker
/// places, local ones too (JITLink's view of each object).
class FunctionRecorder : public orc::ObjectLinkingLayer::Plugin {
public:
  explicit FunctionRecorder(JITFunctions &functions) : functions(functions) {}

  void modifyPassConfig(orc::MaterializationResponsibility &,
                        jitlink::LinkGraph &,
                        jitlink::PassConfiguration &config) override {
    // A call of a local function in its own section needs no relocation,
    // so nothing references the function's symbol and the linker would
    // prune it: keep it (its code stays either way).
    config.PrePrunePasses.push_back([](jitlink::LinkGraph &graph) {
      for (jitlink::Symbol *symbol : graph.defined_symbols())
        if (isFunction(*symbol))
          symbol->setLive(true);
      return Error::success();
    });
    config.PostFixupPasses.push_back([this](jitlink::LinkGraph &graph) {
      std::lock_guard<std::mutex> lock(functions.mutex);
      for (jitlink::Symbol *symbol : graph.defined_symbols())
        if (isFunction(*symbol))
          functions.entries.push_back({(*symbol->getName()).str(),
                                       symbol->getAddress().getValue(),
                                       symbol->getSize()});
      return Error::success();
    });
  }
  Error notifyFailed(orc::MaterializationResponsibility &) override {
    return Error::success();
  }
  Error notifyRemovingResources(orc::JITDylib &, orc::ResourceKey) override {
    return Error::success();
  }
  void notifyTransferringResources(orc::JITDylib &, orc::ResourceKey,
                                   orc::ResourceKey) override {}

private:
  /// A named symbol in executable memory.
  static bool isFunction(jitlink::Symbol &symbol) {
    return symbol.hasName() && (symbol.getSection().getMemProt() &
                                orc::MemProt::Exec) != orc::MemProt::None;
  }

  JITFunctions &functions;
};

/// Compiles `module` with a target machine of its own.
Expected<CompiledPart> compilePart(Module &module,
                                   orc::JITTargetMachineBuilder builder) {
  Expected<std::unique_ptr<TargetMachine>> machine =
      builder.createTargetMachine();
  if (!machine)
    return machine.takeError();
  CompiledPart part;
  Clock::time_point start = Clock::now();
  SmallVector<char, 0> object;
  raw_svector_ostream os(object);
  if (Error error = emitObject(module, **machine, os))
    return std::move(error);
  part.codegen = secondsSince(start);
  part.object = std::make_unique<SmallVectorMemoryBuffer>(
      std::move(object), module.getModuleIdentifier(),
      /*RequiresNullTerminator=*/false);
  return part;
}

/// Makes the local `global` visible to the other parts (hidden: it stays
/// inside the program).
void exposeToParts(GlobalValue &global) {
  if (!global.hasLocalLinkage())
    return;
  global.setLinkage(GlobalValue::ExternalLinkage);
  global.setVisibility(GlobalValue::HiddenVisibility);
}

/// Moves the functions of `module` that `select` picks into a module of
/// their own, returned, and leaves their declarations behind. The local
/// symbols that they use become hidden external ones, defined in `module`.
/// Returns null when `select` picks none.
std::unique_ptr<Module> splitOff(Module &module,
                                 function_ref<bool(const Function &)> select) {
  SmallPtrSet<GlobalValue *, 4> picked;
  for (Function &function : module)
    if (!function.isDeclaration() && select(function))
      picked.insert(&function);
  if (picked.empty())
    return nullptr;
  // The symbols that the functions refer to, through constants too.
  SmallVector<Constant *> constants;
  for (GlobalValue *value : picked)
    for (Instruction &inst : instructions(cast<Function>(value)))
      for (Value *operand : inst.operands())
        if (auto *constant = dyn_cast<Constant>(operand))
          constants.push_back(constant);
  SmallPtrSet<Constant *, 32> seen;
  while (!constants.empty()) {
    Constant *constant = constants.pop_back_val();
    if (!seen.insert(constant).second)
      continue;
    if (auto *global = dyn_cast<GlobalValue>(constant)) {
      if (!picked.contains(global))
        exposeToParts(*global);
      continue;
    }
    for (Value *operand : constant->operands())
      if (auto *constant = dyn_cast<Constant>(operand))
        constants.push_back(constant);
  }
  // A picked function that the rest calls must be visible to it.
  for (GlobalValue *value : picked)
    if (!value->use_empty())
      exposeToParts(*value);
  ValueToValueMapTy map;
  std::unique_ptr<Module> part =
      CloneModule(module, map, [&](const GlobalValue *value) {
        return picked.contains(value);
      });
  for (GlobalValue *value : picked)
    cast<Function>(value)->deleteBody();
  return part;
}

/// Removes the llvm.global_ctors or llvm.global_dtors array of `module`
/// and returns the names of its functions in the order they run (by
/// priority, constructors from the lowest, destructors from the highest).
/// The objects of the parts have no loader to run them: JITProgram calls
/// them (the GPU lowering loads its kernels in a constructor).
Expected<SmallVector<std::string>> takeStructors(Module &module,
                                                 bool constructors) {
  // (priority, position in the array, function): equal priorities keep
  // the array's order.
  SmallVector<std::tuple<unsigned, size_t, Function *>> entries;
  for (const orc::CtorDtorIterator::Element &entry :
       constructors ? orc::getConstructors(module)
                    : orc::getDestructors(module)) {
    if (!entry.Func)
      return createStringError(
          Twine(constructors ? "llvm.global_ctors" : "llvm.global_dtors") +
          " has an entry that is not a function");
    entries.push_back({entry.Priority, entries.size(), entry.Func});
  }
  llvm::sort(entries, [&](const auto &a, const auto &b) {
    if (std::get<0>(a) != std::get<0>(b))
      return constructors ? std::get<0>(a) < std::get<0>(b)
                          : std::get<0>(a) > std::get<0>(b);
    return std::get<1>(a) < std::get<1>(b);
  });
  SmallVector<std::string> names;
  for (auto &[priority, position, function] : entries) {
    exposeToParts(*function);
    names.push_back(function->getName().str());
  }
  if (GlobalVariable *array = module.getNamedGlobal(
          constructors ? "llvm.global_ctors" : "llvm.global_dtors"))
    array->eraseFromParent();
  return names;
}

/// Makes `module` one that splits into parts that link: its unnamed
/// globals get names (each part's object would number them anew), its
/// comdats go (every symbol has one definition in one part), and a
/// definition that may be dropped when unused (linkonce) becomes weak, so
/// that a part does not drop what another uses. Aliases and ifuncs are
/// refused: no lowering of tofu emits them.
Error prepareForSplit(Module &module) {
  if (!module.alias_empty() || !module.ifunc_empty())
    return createStringError("the lowered module has aliases or ifuncs, "
                             "which tofu-run's JIT does not split");
  for (GlobalValue &global : module.global_values()) {
    if (!global.hasName())
      global.setName("tofu.jit.unnamed");
    if (auto *object = dyn_cast<GlobalObject>(&global))
      object->setComdat(nullptr);
    if (global.hasLinkOnceLinkage())
      global.setLinkage(global.hasLinkOnceODRLinkage()
                            ? GlobalValue::WeakODRLinkage
                            : GlobalValue::WeakAnyLinkage);
  }
  return Error::success();
}

/// The length of a basic block, in instructions, from which its function
/// is generated at -O0: instruction selection builds and schedules a
/// block at a time, in time that grows faster than the block's length.
constexpr size_t kLongBlock = 1000;

/// Whether the code of `function` is a sequence of calls, to be generated
/// at -O0: it has no loop (it runs each instruction at most once per
/// call), or a block of at least kLongBlock instructions (a step whose
/// loop nests are outlined but for a short one left inline). Its time is
/// in the loop nests and library calls that it calls.
bool isCallSequence(const Function &function) {
  for (const BasicBlock &block : function)
    if (block.size() >= kLongBlock)
      return true;
  SmallVector<std::pair<const BasicBlock *, const BasicBlock *>> backEdges;
  FindFunctionBackedges(function, backEdges);
  return backEdges.empty();
}

/// Optimizes `module` (its `optnone` driver stays as it is), then
/// generates its code in parts, at most `threads` at a time:
/// - its `optnone` functions (the training driver) in one part, at -O0;
/// - its sequences of calls (isCallSequence: the step) in one, at -O0:
///   the step's time is in the loop nests and library calls that it
///   calls, and -O1's instruction selection and scheduling of thousands
///   of straight-line memref descriptor moves took a third of the compile
///   time (and 2.3 to 2.8 s of ResNeXt-50's, whose step has a loop left);
/// - the rest split in up to `threads` parts, at `builder`'s level.
/// An LLVMContext belongs to one thread, so each part travels as bitcode
/// to a context of its own.
Expected<SmallVector<CompiledPart>>
compileParts(std::unique_ptr<Module> module,
             const orc::JITTargetMachineBuilder &builder, unsigned threads,
             JITTimes &times) {
  struct Part {
    SmallString<0> bitcode;
    bool fastCodegen;
  };
  SmallVector<Part> parts;
  if (Error error = prepareForSplit(*module))
    return std::move(error);
  // The whole module is optimized first, on one thread: a part optimized
  // alone sees the functions of the other parts as declarations, and the
  // LSTM's step (whose loop nests the split spreads over the parts) came
  // out of it with code that took about three times as long to generate.
  {
    orc::JITTargetMachineBuilder whole = builder;
    Expected<std::unique_ptr<TargetMachine>> machine =
        whole.createTargetMachine();
    if (!machine)
      return machine.takeError();
    Clock::time_point optimizeStart = Clock::now();
    optimizeModule(*module, **machine);
    times.optimize = secondsSince(optimizeStart);
  }
  Error invalid = Error::success();
  auto keep = [&](Module &part, bool fastCodegen) {
    std::string problems;
    raw_string_ostream os(problems);
    if (verifyModule(part, &os)) {
      invalid = joinErrors(std::move(invalid),
                           createStringError("a part of the split module is "
                                             "invalid: " +
                                             problems));
      return;
    }
    Part &kept = parts.emplace_back();
    kept.fastCodegen = fastCodegen;
    raw_svector_ostream bitcode(kept.bitcode);
    WriteBitcodeToFile(part, bitcode);
  };
  if (std::unique_ptr<Module> driver =
          splitOff(*module, [](const Function &function) {
            return function.hasFnAttribute(Attribute::OptimizeNone);
          }))
    keep(*driver, /*fastCodegen=*/true);
  if (std::unique_ptr<Module> calls = splitOff(*module, isCallSequence))
    keep(*calls, /*fastCodegen=*/true);
  if (threads <= 1) {
    keep(*module, /*fastCodegen=*/false);
  } else {
    // Round robin over the functions. Local symbols that another part
    // uses become hidden external ones.
    SplitModule(
        *module, threads,
        [&](std::unique_ptr<Module> part) {
          keep(*part, /*fastCodegen=*/false);
        },
        /*PreserveLocals=*/false, /*RoundRobin=*/true);
  }
  module.reset();
  if (invalid)
    return std::move(invalid);

  SmallVector<std::optional<Expected<CompiledPart>>> results(parts.size());
  {
    DefaultThreadPool pool(hardware_concurrency(threads));
    for (size_t i = 0; i < parts.size(); ++i)
      pool.async([&, i] {
        LLVMContext context;
        Expected<std::unique_ptr<Module>> part = parseBitcodeFile(
            MemoryBufferRef(parts[i].bitcode,
                            "tofu-run.part" + std::to_string(i)),
            context);
        if (!part) {
          results[i].emplace(part.takeError());
          return;
        }
        orc::JITTargetMachineBuilder partBuilder = builder;
        if (parts[i].fastCodegen)
          partBuilder.setCodeGenOptLevel(CodeGenOptLevel::None);
        results[i].emplace(compilePart(**part, partBuilder));
      });
    pool.wait();
  }
  SmallVector<CompiledPart> compiled;
  Error errors = Error::success();
  for (std::optional<Expected<CompiledPart>> &result : results) {
    if (!*result) {
      errors = joinErrors(std::move(errors), result->takeError());
      continue;
    }
    compiled.push_back(std::move(**result));
  }
  if (errors)
    return std::move(errors);
  return compiled;
}
} // namespace

void tofu::run::optimizeModule(Module &module, TargetMachine &machine) {
  LoopAnalysisManager loops;
  FunctionAnalysisManager functions;
  CGSCCAnalysisManager cgscc;
  ModuleAnalysisManager modules;
  PipelineTuningOptions tuning;
  tuning.LoopUnrolling = false;
  tuning.LoopInterleaving = true;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  // --time-passes times the optimizer's passes too.
  PassInstrumentationCallbacks callbacks;
  StandardInstrumentations instrumentations(module.getContext(),
                                            /*DebugLogging=*/false);
  instrumentations.registerCallbacks(callbacks, &modules);
  // Called-value propagation only annotates indirect calls with their
  // possible callees, and the lowered code makes none; on the ResNeXt-50
  // step (hundreds of internal functions with pointer arguments) it took
  // 2.0 of the 3.0 s of optimization.
  callbacks.registerShouldRunOptionalPassCallback(
      [](StringRef pass, Any) { return pass != "CalledValuePropagationPass"; });
  PassBuilder builder(&machine, tuning, std::nullopt, &callbacks);
  builder.registerModuleAnalyses(modules);
  builder.registerCGSCCAnalyses(cgscc);
  builder.registerFunctionAnalyses(functions);
  builder.registerLoopAnalyses(loops);
  builder.crossRegisterProxies(loops, functions, cgscc, modules);
  ModulePassManager pipeline =
      builder.buildPerModuleDefaultPipeline(OptimizationLevel::O2);
  pipeline.run(module, modules);
}

Error tofu::run::emitObject(Module &module, TargetMachine &machine,
                            raw_pwrite_stream &os) {
  legacy::PassManager codegen;
  if (machine.addPassesToEmitFile(codegen, os, nullptr,
                                  CodeGenFileType::ObjectFile))
    return createStringError("the LLVM target cannot emit an object file");
  codegen.run(module);
  return Error::success();
}

Expected<CompiledProgram>
tofu::run::compileProgram(std::unique_ptr<Module> module,
                          const orc::JITTargetMachineBuilder &machineBuilder,
                          unsigned threads, JITTimes &times) {
  threads = std::max(1u, threads);
  times.threads = threads;
  CompiledProgram program;
  for (auto [names, constructors] : {std::pair{&program.constructors, true},
                                     std::pair{&program.destructors, false}}) {
    Expected<SmallVector<std::string>> taken =
        takeStructors(*module, constructors);
    if (!taken)
      return taken.takeError();
    *names = std::move(*taken);
  }
  Expected<SmallVector<CompiledPart>> parts =
      compileParts(std::move(module), machineBuilder, threads, times);
  if (!parts)
    return parts.takeError();
  times.parts = parts->size();
  for (CompiledPart &part : *parts) {
    times.codegen += part.codegen;
    program.objects.push_back(std::move(part.object));
  }
  return program;
}

Expected<std::unique_ptr<JITProgram>>
JITProgram::create(std::unique_ptr<Module> module,
                   const orc::JITTargetMachineBuilder &machineBuilder,
                   ArrayRef<std::string> libraries, unsigned threads,
                   JITTimes &times, bool recordFunctions) {
  Expected<CompiledProgram> compiled =
      compileProgram(std::move(module), machineBuilder, threads, times);
  if (!compiled)
    return compiled.takeError();
  return load(std::move(*compiled), machineBuilder, libraries, recordFunctions);
}

Expected<std::unique_ptr<JITProgram>>
JITProgram::load(CompiledProgram compiled,
                 const orc::JITTargetMachineBuilder &machineBuilder,
                 ArrayRef<std::string> libraries, bool recordFunctions) {
  std::unique_ptr<JITProgram> program(new JITProgram());
  program->constructors = std::move(compiled.constructors);
  program->destructors = std::move(compiled.destructors);
  Expected<std::unique_ptr<orc::LLJIT>> jit =
      orc::LLJITBuilder().setJITTargetMachineBuilder(machineBuilder).create();
  if (!jit)
    return jit.takeError();
  program->jit = std::move(*jit);
  if (auto *linker = dyn_cast<orc::ObjectLinkingLayer>(
          &program->jit->getObjLinkingLayer());
      linker && recordFunctions)
    linker->addPlugin(std::make_shared<FunctionRecorder>(*program->functions));
  // The reason a lookup fails (a symbol that no library defines) reaches
  // the session, not the lookup: keep it for lookup's error.
  program->jit->getExecutionSession().setErrorReporter(
      [raw = program.get()](Error error) {
        raw->sessionErrors =
            joinErrors(std::move(raw->sessionErrors), std::move(error));
      });
  orc::JITDylib &dylib = program->jit->getMainJITDylib();
  char prefix = program->jit->getDataLayout().getGlobalPrefix();
  // The runtime libraries first, then the process (libc, libm).
  for (const std::string &library : libraries) {
    Expected<std::unique_ptr<orc::DynamicLibrarySearchGenerator>> generator =
        orc::DynamicLibrarySearchGenerator::Load(library.c_str(), prefix);
    if (!generator)
      return generator.takeError();
    dylib.addGenerator(std::move(*generator));
  }
  Expected<std::unique_ptr<orc::DynamicLibrarySearchGenerator>> process =
      orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(prefix);
  if (!process)
    return process.takeError();
  dylib.addGenerator(std::move(*process));
  for (std::unique_ptr<MemoryBuffer> &object : compiled.objects)
    if (Error error = program->jit->addObjectFile(std::move(object)))
      return std::move(error);
  return program;
}

JITProgram::~JITProgram() {
  // The session reports what its end fails at to sessionErrors.
  jit.reset();
  consumeError(std::move(sessionErrors));
}

Error JITProgram::runAll(ArrayRef<std::string> names) {
  for (const std::string &name : names) {
    Expected<void *> address = lookup(name);
    if (!address)
      return address.takeError();
    reinterpret_cast<void (*)()> (*address)();
  }
  return Error::success();
}

Error JITProgram::initialize() { return runAll(constructors); }

Error JITProgram::deinitialize() { return runAll(destructors); }

Error JITProgram::writePerfMap(StringRef path) {
  std::error_code code;
  raw_fd_ostream os(path, code, sys::fs::OF_Append | sys::fs::OF_Text);
  if (code)
    return createStringError(code, "cannot open '%s'", path.str().c_str());
  std::lock_guard<std::mutex> lock(functions->mutex);
  if (functions->entries.empty())
    return createStringError(inconvertibleErrorCode(),
                             "the linker reported no functions");
  for (const JITFunctions::Entry &entry : functions->entries)
    os << format_hex_no_prefix(entry.address, 1) << ' '
       << format_hex_no_prefix(entry.size, 1) << ' ' << entry.name << '\n';
  return Error::success();
}

Expected<void *> JITProgram::lookup(StringRef name) {
  Expected<orc::ExecutorAddr> address = jit->lookup(name);
  if (!address)
    return joinErrors(std::move(sessionErrors), address.takeError());
  return address->toPtr<void *>();
}
