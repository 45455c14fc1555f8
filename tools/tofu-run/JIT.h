//===- JIT.h - Compile the lowered step in parallel and load it -*- C++ -*-===//
//
// tofu-run's JIT: the LLVM module of a lowered training run is optimized,
// then split into parts (the driver, the straight-line functions, and
// llvm::SplitModule's parts of the rest), each compiled to an object on its
// own thread with its own LLVMContext, and the objects are linked in
// process by ORC's LLJIT against the runtime libraries. Code generation
// was most of a step's compile time and ran on one core (docs/cpu.md,
// *The parallel JIT*).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUN_JIT_H
#define TOFU_RUN_JIT_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
class raw_pwrite_stream;
namespace orc {
class LLJIT;
} // namespace orc
} // namespace llvm

namespace tofu::run {

/// Optimizes `module` at -O2 for `machine`, as MLIR's
/// makeOptimizingTransformer does but without loop unrolling: the step's
/// loop nests have static trip counts, and unrolled in full (the scalar
/// fallback of every vectorized loop too) they made most of the machine
/// code and of the compile time, for no faster step (docs/cpu.md, *Compile
/// time and the JIT*). Vectorization and interleaving stay on.
void optimizeModule(llvm::Module &module, llvm::TargetMachine &machine);

/// Writes the machine code of `module` for `machine` to `os` as an object
/// file. Fails when the target cannot emit one.
llvm::Error emitObject(llvm::Module &module, llvm::TargetMachine &machine,
                       llvm::raw_pwrite_stream &os);

/// Where the JIT's time went, in seconds: the whole module's optimization,
/// and the code generation time summed over the parts.
struct JITTimes {
  double optimize = 0;
  double codegen = 0;
  unsigned parts = 0;
  unsigned threads = 0;
};

/// The functions of a program that the linker has placed: name, address
/// and size in bytes.
struct JITFunctions {
  struct Entry {
    std::string name;
    uint64_t address, size;
  };
  std::mutex mutex;
  std::vector<Entry> entries;
};

/// A program compiled to machine code and not yet loaded: the objects of
/// its parts, and the functions that its llvm.global_ctors and
/// llvm.global_dtors named, in the order they run (the objects have no
/// loader to run them; JITProgram does). The compile cache keeps it
/// (CompileCache.h).
struct CompiledProgram {
  std::vector<std::unique_ptr<llvm::MemoryBuffer>> objects;
  llvm::SmallVector<std::string> constructors, destructors;
  /// What the lowering reported (tofu-cpu-report's FLOP shares), printed
  /// again when the program is loaded from the cache; empty when nothing.
  std::string report;
};

/// Compiles `module` for the target machines of `machineBuilder` on up to
/// `threads` threads, one part per thread.
llvm::Expected<CompiledProgram>
compileProgram(std::unique_ptr<llvm::Module> module,
               const llvm::orc::JITTargetMachineBuilder &machineBuilder,
               unsigned threads, JITTimes &times);

/// A program compiled and loaded in this process.
class JITProgram {
public:
  /// Links the objects of `program` with the shared `libraries` and the
  /// process's own symbols (libc, libm). With `recordFunctions`, the
  /// linker's placement of every function is kept for writePerfMap.
  static llvm::Expected<std::unique_ptr<JITProgram>>
  load(CompiledProgram program,
       const llvm::orc::JITTargetMachineBuilder &machineBuilder,
       llvm::ArrayRef<std::string> libraries, bool recordFunctions = false);

  /// compileProgram, then load.
  static llvm::Expected<std::unique_ptr<JITProgram>>
  create(std::unique_ptr<llvm::Module> module,
         const llvm::orc::JITTargetMachineBuilder &machineBuilder,
         llvm::ArrayRef<std::string> libraries, unsigned threads,
         JITTimes &times, bool recordFunctions = false);
  ~JITProgram();

  /// The address of the function `name` (looked up in the compiled parts).
  llvm::Expected<void *> lookup(llvm::StringRef name);

  /// Runs the module's constructors (llvm.global_ctors), which a program
  /// needs before any other of its functions.
  llvm::Error initialize();
  /// Runs the module's destructors (llvm.global_dtors).
  llvm::Error deinitialize();

  /// Writes the address, size and name of every function the linker has
  /// placed (after a lookup; local functions too) to `path` in perf's map
  /// format (`/tmp/perf-<pid>.map` is the file `perf
  /// report` reads for the process): without it perf shows the step's
  /// generated code as bare addresses.
  llvm::Error writePerfMap(llvm::StringRef path);

private:
  JITProgram() = default;
  llvm::Error runAll(llvm::ArrayRef<std::string> names);

  std::unique_ptr<llvm::orc::LLJIT> jit;
  llvm::SmallVector<std::string> constructors;
  llvm::SmallVector<std::string> destructors;
  /// The functions placed so far (filled as the linker places them).
  std::unique_ptr<JITFunctions> functions = std::make_unique<JITFunctions>();
  llvm::Error sessionErrors = llvm::Error::success();
};

} // namespace tofu::run

#endif // TOFU_RUN_JIT_H
