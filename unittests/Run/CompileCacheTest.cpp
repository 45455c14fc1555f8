//===- CompileCacheTest.cpp - tofu-run's compile cache --------------------===//
//
// The compile cache (tools/tofu-run/CompileCache.h): its keys, its entries
// (every truncation and every altered byte of one is found damaged), the
// claim that makes other processes wait, and the removal of the least
// recently used entries.
//
//===----------------------------------------------------------------------===//

#include "CompileCache.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <chrono>
#include <sys/wait.h>
#include <unistd.h>

using namespace llvm;
using namespace tofu::run;

namespace {

/// Two objects (one with a zero byte and one empty), a constructor, two
/// destructors and a report.
CompiledProgram makeProgram() {
  CompiledProgram program;
  program.objects.push_back(
      MemoryBuffer::getMemBufferCopy(StringRef("obj\0ect", 7), "a"));
  program.objects.push_back(MemoryBuffer::getMemBufferCopy("", "b"));
  program.constructors = {"load"};
  program.destructors = {"unload", "close"};
  program.report = "library share: 95%\n";
  return program;
}

void expectSame(const CompiledProgram &a, const CompiledProgram &b) {
  ASSERT_EQ(a.objects.size(), b.objects.size());
  for (size_t i = 0; i < a.objects.size(); ++i)
    EXPECT_EQ(a.objects[i]->getBuffer(), b.objects[i]->getBuffer());
  EXPECT_EQ(a.constructors, b.constructors);
  EXPECT_EQ(a.destructors, b.destructors);
  EXPECT_EQ(a.report, b.report);
}

class CompileCacheTest : public ::testing::Test {
protected:
  void SetUp() override {
    ASSERT_FALSE(sys::fs::createUniqueDirectory("compile-cache", directory));
  }
  void TearDown() override { sys::fs::remove_directories(directory); }

  SmallString<128> directory;
};

TEST(CompileCacheKey, NamesThePartsAndTheirBoundaries) {
  std::string key = compileCacheKey({"ab", "c"});
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(key, compileCacheKey({"ab", "c"}));
  EXPECT_NE(key, compileCacheKey({"a", "bc"}));
  EXPECT_NE(key, compileCacheKey({"ab", "d"}));
  EXPECT_NE(key, compileCacheKey({"ab", "c", ""}));
}

TEST(CompileCacheEntry, DecodesWhatWasEncoded) {
  CompiledProgram program = makeProgram();
  Expected<CompiledProgram> decoded =
      decodeProgram(encodeProgram(program), "entry");
  ASSERT_TRUE(bool(decoded)) << toString(decoded.takeError());
  expectSame(program, *decoded);
}

TEST(CompileCacheEntry, EveryTruncationAndAlteredByteIsDamaged) {
  std::string bytes = encodeProgram(makeProgram());
  for (size_t size = 0; size < bytes.size(); ++size) {
    Expected<CompiledProgram> decoded =
        decodeProgram(StringRef(bytes).take_front(size), "entry");
    ASSERT_FALSE(bool(decoded)) << "truncated to " << size;
    EXPECT_NE(toString(decoded.takeError()).find("damaged"), std::string::npos);
  }
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::string altered = bytes;
    altered[i] ^= 0x20;
    Expected<CompiledProgram> decoded = decodeProgram(altered, "entry");
    ASSERT_FALSE(bool(decoded)) << "byte " << i << " altered";
    consumeError(decoded.takeError());
  }
}

TEST_F(CompileCacheTest, StoresAndFindsAProgram) {
  Expected<CompileCache> cache = CompileCache::open(directory);
  ASSERT_TRUE(bool(cache)) << toString(cache.takeError());
  Expected<std::optional<CompiledProgram>> missing = cache->lookup("k");
  ASSERT_TRUE(bool(missing)) << toString(missing.takeError());
  EXPECT_FALSE(missing->has_value());
  CompiledProgram program = makeProgram();
  ASSERT_FALSE(bool(cache->store("k", program)));
  Expected<std::optional<CompiledProgram>> found = cache->lookup("k");
  ASSERT_TRUE(bool(found)) << toString(found.takeError());
  ASSERT_TRUE(found->has_value());
  expectSame(program, **found);
}

TEST_F(CompileCacheTest, ATruncatedEntryIsAnError) {
  Expected<CompileCache> cache = CompileCache::open(directory);
  ASSERT_TRUE(bool(cache)) << toString(cache.takeError());
  ASSERT_FALSE(bool(cache->store("k", makeProgram())));
  uint64_t size;
  ASSERT_FALSE(sys::fs::file_size(cache->entryPath("k"), size));
  ASSERT_EQ(::truncate(cache->entryPath("k").c_str(), off_t(size - 1)), 0);
  Expected<std::optional<CompiledProgram>> found = cache->lookup("k");
  ASSERT_FALSE(bool(found));
  EXPECT_NE(toString(found.takeError()).find("damaged compile cache entry"),
            std::string::npos);
}

// While a process holds a key's claim, another cannot take it; once the
// process has released it (here: ended), it can.
TEST_F(CompileCacheTest, AClaimExcludesOtherProcesses) {
  Expected<CompileCache> cache = CompileCache::open(directory);
  ASSERT_TRUE(bool(cache)) << toString(cache.takeError());
  int claimed[2], release[2];
  ASSERT_EQ(::pipe(claimed), 0);
  ASSERT_EQ(::pipe(release), 0);
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    Expected<std::optional<CompileCache::Claim>> claim =
        cache->claim("k", std::chrono::seconds(60));
    char byte = claim && claim->has_value() ? 'y' : 'n';
    if (!claim)
      consumeError(claim.takeError());
    (void)!::write(claimed[1], &byte, 1);
    (void)!::read(release[0], &byte, 1);
    ::_exit(0);
  }
  char byte = 0;
  ASSERT_EQ(::read(claimed[0], &byte, 1), 1);
  ASSERT_EQ(byte, 'y');
  {
    Expected<std::optional<CompileCache::Claim>> other = cache->claim("k");
    ASSERT_TRUE(bool(other)) << toString(other.takeError());
    EXPECT_FALSE(other->has_value());
  }
  // Another key is not held.
  {
    Expected<std::optional<CompileCache::Claim>> other = cache->claim("j");
    ASSERT_TRUE(bool(other)) << toString(other.takeError());
    EXPECT_TRUE(other->has_value());
  }
  ASSERT_EQ(::write(release[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  Expected<std::optional<CompileCache::Claim>> after = cache->claim("k");
  ASSERT_TRUE(bool(after)) << toString(after.takeError());
  EXPECT_TRUE(after->has_value());
  for (int fd : {claimed[0], claimed[1], release[0], release[1]})
    ::close(fd);
}

// Beyond the capacity the least recently used entries go: a lookup counts
// as a use.
TEST_F(CompileCacheTest, RemovesTheLeastRecentlyUsedEntries) {
  CompiledProgram program = makeProgram();
  uint64_t entry = encodeProgram(program).size();
  Expected<CompileCache> cache = CompileCache::open(directory, 2 * entry);
  ASSERT_TRUE(bool(cache)) << toString(cache.takeError());
  ASSERT_FALSE(bool(cache->store("a", program)));
  ASSERT_FALSE(bool(cache->store("b", program)));
  // a was used an hour ago, b a minute later; then a is looked up.
  auto hourAgo = std::chrono::time_point_cast<std::chrono::nanoseconds>(
      std::chrono::system_clock::now() - std::chrono::hours(1));
  for (auto [key, time] : {std::pair{"a", hourAgo},
                           std::pair{"b", hourAgo + std::chrono::minutes(1)}}) {
    int fd;
    ASSERT_FALSE(sys::fs::openFileForWrite(cache->entryPath(key), fd,
                                           sys::fs::CD_OpenExisting,
                                           sys::fs::OF_Append));
    ASSERT_FALSE(sys::fs::setLastAccessAndModificationTime(fd, time));
    sys::Process::SafelyCloseFileDescriptor(fd);
  }
  Expected<std::optional<CompiledProgram>> used = cache->lookup("a");
  ASSERT_TRUE(bool(used)) << toString(used.takeError());
  ASSERT_FALSE(bool(cache->store("c", program)));
  EXPECT_TRUE(sys::fs::exists(cache->entryPath("a")));
  EXPECT_FALSE(sys::fs::exists(cache->entryPath("b")));
  EXPECT_TRUE(sys::fs::exists(cache->entryPath("c")));
}

// Its programs run in the process that loads them: a directory that other
// users may write is refused, and one that the cache creates is private.
TEST_F(CompileCacheTest, ADirectoryOthersMayWriteIsRefused) {
  SmallString<128> inner(directory);
  sys::path::append(inner, "made");
  ASSERT_TRUE(bool(CompileCache::open(inner)));
  sys::fs::file_status status;
  ASSERT_FALSE(sys::fs::status(inner, status));
  EXPECT_EQ(status.permissions() & sys::fs::all_perms, sys::fs::owner_all);
  ASSERT_FALSE(
      sys::fs::setPermissions(inner, sys::fs::owner_all | sys::fs::group_all));
  Expected<CompileCache> shared = CompileCache::open(inner);
  ASSERT_FALSE(bool(shared));
  EXPECT_NE(toString(shared.takeError()).find("must be private"),
            std::string::npos);
}

TEST(CompileCacheOpen, AnUnwritableDirectoryIsAnError) {
  Expected<CompileCache> cache = CompileCache::open("/proc/tofu-cache");
  ASSERT_FALSE(bool(cache));
  EXPECT_NE(toString(cache.takeError()).find("cannot create"),
            std::string::npos);
}

} // namespace
