//===- CompileCache.cpp - Compiled programs kept on disk ------------------===//

#include "CompileCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/SHA256.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Support/xxhash.h"

#include <algorithm>
#include <chrono>
#include <unistd.h>

using namespace llvm;
using namespace tofu::run;

namespace {
/// An entry: the magic, then the constructors, the destructors and the
/// objects, each list as a count and length-prefixed byte strings (little
/// endian), the report as one such string, then the XXH3 checksum of
/// everything before it.
constexpr StringLiteral kMagic = "TOFUJIT2";
constexpr StringLiteral kEntrySuffix = ".tofu-jit";
constexpr StringLiteral kLockSuffix = ".lock";
constexpr StringLiteral kTemporarySuffix = ".tmp-";

void appendInteger(std::string &out, uint64_t value, unsigned bytes) {
  for (unsigned i = 0; i < bytes; ++i)
    out.push_back(char((value >> (8 * i)) & 0xff));
}

void appendString(std::string &out, StringRef bytes) {
  appendInteger(out, bytes.size(), 8);
  out.append(bytes.begin(), bytes.end());
}

/// Reads an entry from the front, failing on the first field that runs
/// past its end.
class Reader {
public:
  explicit Reader(StringRef bytes) : rest(bytes) {}
  bool integer(uint64_t &value, unsigned bytes) {
    if (rest.size() < bytes)
      return false;
    value = 0;
    for (unsigned i = 0; i < bytes; ++i)
      value |= uint64_t(uint8_t(rest[i])) << (8 * i);
    rest = rest.drop_front(bytes);
    return true;
  }
  bool string(StringRef &value) {
    uint64_t size;
    if (!integer(size, 8) || rest.size() < size)
      return false;
    value = rest.take_front(size);
    rest = rest.drop_front(size);
    return true;
  }
  bool empty() const { return rest.empty(); }

private:
  StringRef rest;
};

/// `what` failed for the reason `code` gives.
Error fileError(std::error_code code, const Twine &what) {
  return createStringError(code, what + ": " + code.message());
}

uint64_t checksum(StringRef bytes) {
  return xxh3_64bits(arrayRefFromStringRef(bytes));
}
} // namespace

std::string tofu::run::compileCacheKey(ArrayRef<StringRef> parts) {
  SHA256 hash;
  for (StringRef part : parts) {
    std::string size;
    appendInteger(size, part.size(), 8);
    hash.update(size);
    hash.update(part);
  }
  return toHex(hash.final(), /*LowerCase=*/true);
}

std::string tofu::run::encodeProgram(const CompiledProgram &program) {
  std::string out(kMagic);
  for (const SmallVector<std::string> *names :
       {&program.constructors, &program.destructors}) {
    appendInteger(out, names->size(), 4);
    for (const std::string &name : *names)
      appendString(out, name);
  }
  appendInteger(out, program.objects.size(), 4);
  for (const std::unique_ptr<MemoryBuffer> &object : program.objects)
    appendString(out, object->getBuffer());
  appendString(out, program.report);
  appendInteger(out, checksum(out), 8);
  return out;
}

Expected<CompiledProgram> tofu::run::decodeProgram(StringRef bytes,
                                                   StringRef name) {
  auto damaged = [&](const Twine &why) {
    return createStringError("damaged compile cache entry " + name + ": " +
                             why);
  };
  if (bytes.size() < kMagic.size() + 8 || !bytes.starts_with(kMagic))
    return damaged("not an entry of this cache");
  StringRef body = bytes.drop_back(8);
  uint64_t expected;
  Reader trailer(bytes.take_back(8));
  trailer.integer(expected, 8);
  if (checksum(body) != expected)
    return damaged("its checksum does not match");
  Reader reader(body.drop_front(kMagic.size()));
  CompiledProgram program;
  // A count, then as many byte strings, each given to `add`.
  auto readList = [&](function_ref<void(StringRef, uint64_t)> add) {
    uint64_t count;
    if (!reader.integer(count, 4))
      return false;
    for (uint64_t i = 0; i < count; ++i) {
      StringRef value;
      if (!reader.string(value))
        return false;
      add(value, i);
    }
    return true;
  };
  auto addTo = [](SmallVector<std::string> &names) {
    return [&names](StringRef name, uint64_t) { names.push_back(name.str()); };
  };
  if (!readList(addTo(program.constructors)) ||
      !readList(addTo(program.destructors)) ||
      !readList([&](StringRef object, uint64_t i) {
        program.objects.push_back(MemoryBuffer::getMemBufferCopy(
            object, "tofu-run.cached" + std::to_string(i)));
      }))
    return damaged("it ends early");
  StringRef report;
  if (!reader.string(report))
    return damaged("it ends early");
  program.report = report.str();
  if (!reader.empty())
    return damaged("it has bytes after its last object");
  return program;
}

Expected<CompileCache> CompileCache::open(StringRef directory,
                                          uint64_t capacity) {
  if (std::error_code code = sys::fs::create_directories(
          directory, /*IgnoreExisting=*/true, sys::fs::owner_all))
    return fileError(code, "cannot create the compile cache " + directory);
  sys::fs::file_status status;
  if (std::error_code code = sys::fs::status(directory, status))
    return fileError(code, "cannot read the compile cache " + directory);
  if (status.getUser() != ::getuid() ||
      (status.permissions() & (sys::fs::group_write | sys::fs::others_write)) !=
          0)
    return createStringError(
        "the compile cache " + directory +
        " is another user's or writable by other users; its programs run in "
        "this process, so it must be private (chmod go-w)");
  if (sys::fs::access(directory, sys::fs::AccessMode::Write))
    return createStringError("cannot write the compile cache " + directory +
                             ": the directory is not writable");
  if (std::error_code code = sys::fs::create_directories(
          directory + "/locks", /*IgnoreExisting=*/true, sys::fs::owner_all))
    return fileError(code,
                     "cannot create the compile cache's locks in " + directory);
  return CompileCache(directory.str(), capacity);
}

std::string CompileCache::entryPath(StringRef key) const {
  SmallString<128> path(directory);
  sys::path::append(path, key + kEntrySuffix);
  return std::string(path);
}

std::string CompileCache::lockPath(StringRef key) const {
  SmallString<128> path(directory);
  sys::path::append(path, "locks", key.take_front(2) + kLockSuffix);
  return std::string(path);
}

CompileCache::Claim::~Claim() {
  if (fd < 0)
    return;
  (void)sys::fs::unlockFile(fd);
  (void)sys::Process::SafelyCloseFileDescriptor(fd);
}

Expected<std::optional<CompileCache::Claim>>
CompileCache::claim(StringRef key, std::chrono::milliseconds timeout) {
  int fd;
  std::string path = lockPath(key);
  if (std::error_code code = sys::fs::openFileForReadWrite(
          path, fd, sys::fs::CD_OpenAlways, sys::fs::OF_None))
    return fileError(code, "cannot open " + path);
  Claim claim(fd);
  std::error_code code = sys::fs::tryLockFile(fd, timeout);
  if (code == std::errc::no_lock_available)
    return std::nullopt;
  if (code)
    return fileError(code, "cannot lock " + path);
  return std::optional<Claim>(std::move(claim));
}

Expected<std::optional<CompiledProgram>> CompileCache::lookup(StringRef key) {
  std::string path = entryPath(key);
  // Read, not mapped: another process may replace or remove the file.
  ErrorOr<std::unique_ptr<MemoryBuffer>> bytes =
      MemoryBuffer::getFile(path, /*IsText=*/false,
                            /*RequiresNullTerminator=*/false,
                            /*IsVolatile=*/true);
  if (!bytes) {
    if (bytes.getError() == std::errc::no_such_file_or_directory)
      return std::nullopt;
    return fileError(bytes.getError(), "cannot read " + path);
  }
  Expected<CompiledProgram> program =
      decodeProgram((*bytes)->getBuffer(), path);
  if (!program)
    return program.takeError();
  // The entry is now the most recently used (prune goes by the time).
  int fd;
  if (!sys::fs::openFileForWrite(path, fd, sys::fs::CD_OpenExisting,
                                 sys::fs::OF_Append)) {
    (void)sys::fs::setLastAccessAndModificationTime(
        fd, std::chrono::time_point_cast<std::chrono::nanoseconds>(
                std::chrono::system_clock::now()));
    (void)sys::Process::SafelyCloseFileDescriptor(fd);
  }
  return std::optional<CompiledProgram>(std::move(*program));
}

Error CompileCache::store(StringRef key, const CompiledProgram &program) {
  std::string path = entryPath(key);
  int fd;
  SmallString<128> temporary;
  if (std::error_code code = sys::fs::createUniqueFile(
          path + kTemporarySuffix + "%%%%%%%%", fd, temporary, sys::fs::OF_None,
          sys::fs::owner_read | sys::fs::owner_write))
    return fileError(code, "cannot write in " + directory);
  {
    raw_fd_ostream os(fd, /*shouldClose=*/true);
    os << encodeProgram(program);
    os.close();
    if (os.has_error()) {
      std::error_code error = os.error();
      os.clear_error();
      (void)sys::fs::remove(temporary);
      return fileError(error, "cannot write " + temporary);
    }
  }
  if (std::error_code code = sys::fs::rename(temporary, path)) {
    (void)sys::fs::remove(temporary);
    return fileError(code, "cannot write " + path);
  }
  prune();
  return Error::success();
}

void CompileCache::prune() {
  struct Entry {
    std::string path;
    uint64_t size;
    sys::TimePoint<> used;
  };
  std::vector<Entry> entries;
  uint64_t total = 0;
  auto now = std::chrono::system_clock::now();
  std::error_code code;
  for (sys::fs::directory_iterator it(directory, code), end; !code && it != end;
       it.increment(code)) {
    StringRef name = sys::path::filename(it->path());
    sys::fs::file_status status;
    if (sys::fs::status(it->path(), status))
      continue;
    // What a process that was stopped while it wrote left behind.
    if (name.contains(kTemporarySuffix)) {
      if (now - status.getLastModificationTime() > std::chrono::hours(1))
        (void)sys::fs::remove(it->path());
      continue;
    }
    if (!name.ends_with(kEntrySuffix))
      continue;
    entries.push_back(
        {it->path(), status.getSize(), status.getLastModificationTime()});
    total += status.getSize();
  }
  if (total <= capacity)
    return;
  llvm::sort(entries,
             [](const Entry &a, const Entry &b) { return a.used < b.used; });
  // The newest entry, the one just stored, stays even alone beyond the
  // capacity. An entry that another process removed first is gone too.
  for (size_t i = 0; i + 1 < entries.size() && total > capacity; ++i) {
    std::error_code removed = sys::fs::remove(entries[i].path,
                                              /*IgnoreNonExisting=*/true);
    if (!removed)
      total -= entries[i].size;
  }
}
