//===- CompileCache.h - Compiled programs kept on disk ----------*- C++ -*-===//
//
// tofu-run's compile cache: the objects of a compiled program (JIT.h), kept
// in a directory under a key that names everything the program was
// compiled from (the step's text, the lowering's options, the host's CPU
// and this build). A run that finds its key loads the objects and skips
// the lowering and the code generation. The ranks of a job on one node
// compile the same program: the first to claim the key compiles it, and
// the others wait for its entry instead of compiling it too (docs/cpu.md,
// *The compile cache*).
//
// Nothing here decides what a program computes: an entry that cannot be
// read back whole is reported as damaged and compiled anew, and a cache
// that cannot be written only costs the next run its compile.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUN_COMPILECACHE_H
#define TOFU_RUN_COMPILECACHE_H

#include "JIT.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace tofu::run {

/// The key of a program compiled from `parts` (each part a byte string;
/// their boundaries count): SHA-256 over them, as 64 hexadecimal digits.
std::string compileCacheKey(llvm::ArrayRef<llvm::StringRef> parts);

/// The bytes of an entry that holds `program`, and the program that
/// `bytes` hold; `name` names the entry in errors. A checksum over the
/// whole entry makes a truncated or altered one an error.
std::string encodeProgram(const CompiledProgram &program);
llvm::Expected<CompiledProgram> decodeProgram(llvm::StringRef bytes,
                                              llvm::StringRef name);

class CompileCache {
public:
  /// Entries are removed, least recently used first, when the directory
  /// holds more than this many bytes of them.
  static constexpr uint64_t kDefaultCapacity = uint64_t(1) << 30;

  /// The cache in `directory`, which is created private to the user when
  /// missing. Its entries run in the process that loads them, so a
  /// directory that another user owns or may write is refused.
  static llvm::Expected<CompileCache>
  open(llvm::StringRef directory, uint64_t capacity = kDefaultCapacity);

  /// While a process holds the claim of a key, other processes that claim
  /// it wait: the compile of a key runs once at a time. A claim is a lock
  /// on one of 256 lock files (chosen by the key's first two digits, so
  /// that the lock files stay few; two keys may share one), held by the
  /// process (fcntl): it does not exclude another claim of the same
  /// process. Released when destroyed, and by the system when the process
  /// ends.
  class Claim {
  public:
    Claim(Claim &&other) : fd(other.fd) { other.fd = -1; }
    Claim &operator=(Claim &&) = delete;
    ~Claim();

  private:
    friend class CompileCache;
    explicit Claim(int fd) : fd(fd) {}
    int fd;
  };
  /// Takes `key`'s claim, waiting up to `timeout` while another process
  /// holds it; std::nullopt when the time ran out.
  llvm::Expected<std::optional<Claim>>
  claim(llvm::StringRef key,
        std::chrono::milliseconds timeout = std::chrono::milliseconds(0));

  /// The program stored under `key` (its entry becomes the most recently
  /// used), std::nullopt when there is none, an error when the entry is
  /// damaged.
  llvm::Expected<std::optional<CompiledProgram>> lookup(llvm::StringRef key);
  /// Stores `program` under `key`, replacing the entry in one step (a
  /// reader sees the old entry or the new one, whole), then removes the
  /// least recently used entries beyond the capacity.
  llvm::Error store(llvm::StringRef key, const CompiledProgram &program);

  /// The file of `key`'s entry, and the lock file of its claim.
  std::string entryPath(llvm::StringRef key) const;
  std::string lockPath(llvm::StringRef key) const;

private:
  CompileCache(std::string directory, uint64_t capacity)
      : directory(std::move(directory)), capacity(capacity) {}
  void prune();

  std::string directory;
  uint64_t capacity;
};

} // namespace tofu::run

#endif // TOFU_RUN_COMPILECACHE_H
