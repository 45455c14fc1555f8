//===- JITTest.cpp - tofu-run's parallel JIT ------------------------------===//
//
// JITProgram (tools/tofu-run/JIT.h) splits a module into parts compiled on
// their own threads: the `optnone` driver, the straight-line functions and
// the functions with loops. These tests compile one small module of each
// kind of function on 1 and on 2 threads and check what it computes, that
// its constructors run before and its destructors after, and that a part's
// mutable global is the one that every other part sees.
//
//===----------------------------------------------------------------------===//

#include "JIT.h"
#include "CompileCache.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"

#include "gtest/gtest.h"

#include <map>
#include <vector>

using namespace llvm;

/// What the compiled code records, in order (found by the JIT among the
/// test's own symbols).
static std::vector<int64_t> recorded;
extern "C" void tofu_jit_test_record(int64_t value) {
  recorded.push_back(value);
}

namespace {

// A constructor and a destructor; two loops (one internal global that the
// first writes and the straight-line step reads); the driver, optnone.
constexpr const char *kProgram = R"(
declare void @tofu_jit_test_record(i64)

@total = internal global i64 0

define internal void @load() {
  call void @tofu_jit_test_record(i64 -1)
  ret void
}

define internal void @unload() {
  call void @tofu_jit_test_record(i64 -2)
  ret void
}

@llvm.global_ctors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 123, ptr @load, ptr null }]
@llvm.global_dtors = appending global [1 x { i32, ptr, ptr }] [{ i32, ptr, ptr } { i32 123, ptr @unload, ptr null }]

; total += 0 + 1 + ... + (n - 1)
define internal void @sum(i64 %n) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %old = load i64, ptr @total
  %new = add i64 %old, %i
  store i64 %new, ptr @total
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}

; n * n, by repeated addition
define internal i64 @square(i64 %n) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %add, %loop ]
  %add = add i64 %acc, %n
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %add
}

define internal void @step(i64 %n) noinline {
  call void @sum(i64 %n)
  %total = load i64, ptr @total
  call void @tofu_jit_test_record(i64 %total)
  %square = call i64 @square(i64 %n)
  call void @tofu_jit_test_record(i64 %square)
  ret void
}

define void @main() noinline optnone {
  call void @step(i64 10)
  call void @step(i64 4)
  ret void
}
)";

class JITTest : public ::testing::TestWithParam<unsigned> {
protected:
  static void SetUpTestSuite() {
    InitializeNativeTarget();
    InitializeNativeTargetAsmPrinter();
  }

  std::unique_ptr<Module> parse(const char *text) {
    SMDiagnostic error;
    std::unique_ptr<Module> module = parseAssemblyString(text, error, context);
    if (!module)
      ADD_FAILURE() << error.getMessage().str();
    return module;
  }

  /// The host's target at -O1, as tofu-run compiles.
  static orc::JITTargetMachineBuilder hostBuilder() {
    orc::JITTargetMachineBuilder builder =
        cantFail(orc::JITTargetMachineBuilder::detectHost());
    builder.setCodeGenOptLevel(CodeGenOptLevel::Less);
    return builder;
  }

  /// `text` parsed for the target of `builder`.
  std::unique_ptr<Module> parseFor(const char *text,
                                   orc::JITTargetMachineBuilder &builder) {
    std::unique_ptr<Module> module = parse(text);
    if (!module)
      return nullptr;
    module->setDataLayout(cantFail(builder.getDefaultDataLayoutForTarget()));
    module->setTargetTriple(builder.getTargetTriple());
    return module;
  }

  /// `text` compiled for the host, on GetParam() threads.
  Expected<std::unique_ptr<tofu::run::JITProgram>>
  compile(const char *text, tofu::run::JITTimes &times) {
    orc::JITTargetMachineBuilder builder = hostBuilder();
    std::unique_ptr<Module> module = parseFor(text, builder);
    if (!module)
      return createStringError("the test's module does not parse");
    return tofu::run::JITProgram::create(std::move(module), builder, {},
                                         GetParam(), times,
                                         /*recordFunctions=*/true);
  }

  /// Runs kProgram's driver between its constructors and destructors and
  /// checks what it records: @total is one variable, 45 after the first
  /// step and 45 + 6 after the second.
  static void expectRunsKProgram(tofu::run::JITProgram &program) {
    Expected<void *> entry = program.lookup("main");
    ASSERT_TRUE(bool(entry)) << toString(entry.takeError());
    recorded.clear();
    ASSERT_FALSE(bool(program.initialize()));
    reinterpret_cast<void (*)()> (*entry)();
    ASSERT_FALSE(bool(program.deinitialize()));
    std::vector<int64_t> expected{-1, 45, 100, 51, 16, -2};
    EXPECT_EQ(recorded, expected);
  }

  LLVMContext context;
};

TEST_P(JITTest, RunsTheDriverBetweenConstructorsAndDestructors) {
  tofu::run::JITTimes times;
  Expected<std::unique_ptr<tofu::run::JITProgram>> program =
      compile(kProgram, times);
  ASSERT_TRUE(bool(program)) << toString(program.takeError());
  // The driver, the straight-line step, and the loops in one part per
  // thread.
  EXPECT_EQ(times.parts, 2 + GetParam());
  expectRunsKProgram(**program);
}

// A program loaded from the compile cache runs as the one compiled: the
// same objects, constructors and destructors.
TEST_P(JITTest, AProgramFromTheCompileCacheRunsAsCompiled) {
  orc::JITTargetMachineBuilder builder = hostBuilder();
  std::unique_ptr<Module> module = parseFor(kProgram, builder);
  ASSERT_TRUE(module);
  tofu::run::JITTimes times;
  Expected<tofu::run::CompiledProgram> compiled =
      tofu::run::compileProgram(std::move(module), builder, GetParam(), times);
  ASSERT_TRUE(bool(compiled)) << toString(compiled.takeError());
  SmallString<128> directory;
  ASSERT_FALSE(sys::fs::createUniqueDirectory("jit-test-cache", directory));
  Expected<tofu::run::CompileCache> cache =
      tofu::run::CompileCache::open(directory);
  ASSERT_TRUE(bool(cache)) << toString(cache.takeError());
  ASSERT_FALSE(bool(cache->store("key", *compiled)));
  Expected<std::optional<tofu::run::CompiledProgram>> found =
      cache->lookup("key");
  sys::fs::remove_directories(directory);
  ASSERT_TRUE(bool(found)) << toString(found.takeError());
  ASSERT_TRUE(found->has_value());
  Expected<std::unique_ptr<tofu::run::JITProgram>> program =
      tofu::run::JITProgram::load(std::move(**found), builder, {});
  ASSERT_TRUE(bool(program)) << toString(program.takeError());
  expectRunsKProgram(**program);
}

TEST_P(JITTest, AnUndefinedSymbolIsAnError) {
  constexpr const char *kUndefined = R"(
declare void @tofu_jit_test_no_such_function()
define void @main() {
  call void @tofu_jit_test_no_such_function()
  ret void
}
)";
  tofu::run::JITTimes times;
  Expected<std::unique_ptr<tofu::run::JITProgram>> program =
      compile(kUndefined, times);
  ASSERT_TRUE(bool(program)) << toString(program.takeError());
  Expected<void *> entry = (*program)->lookup("main");
  ASSERT_FALSE(bool(entry));
  EXPECT_NE(toString(entry.takeError()).find("tofu_jit_test_no_such_function"),
            std::string::npos);
}

TEST_P(JITTest, AnAliasIsAnError) {
  constexpr const char *kAlias = R"(
define void @main() {
  ret void
}
@start = alias void (), ptr @main
)";
  tofu::run::JITTimes times;
  Expected<std::unique_ptr<tofu::run::JITProgram>> program =
      compile(kAlias, times);
  ASSERT_FALSE(bool(program));
  EXPECT_NE(toString(program.takeError()).find("aliases or ifuncs"),
            std::string::npos);
}

// An unnamed internal global that a function of another part reads: the
// parts' objects name it alike.
TEST_P(JITTest, AnUnnamedGlobalIsOneSymbol) {
  constexpr const char *kUnnamed = R"(
declare void @tofu_jit_test_record(i64)
@0 = internal global i64 7
define internal void @bump(i64 %n) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %old = load i64, ptr @0
  %new = add i64 %old, 1
  store i64 %new, ptr @0
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}
define void @main() noinline optnone {
  call void @bump(i64 5)
  %v = load i64, ptr @0
  call void @tofu_jit_test_record(i64 %v)
  ret void
}
)";
  tofu::run::JITTimes times;
  Expected<std::unique_ptr<tofu::run::JITProgram>> program =
      compile(kUnnamed, times);
  ASSERT_TRUE(bool(program)) << toString(program.takeError());
  Expected<void *> entry = (*program)->lookup("main");
  ASSERT_TRUE(bool(entry)) << toString(entry.takeError());
  recorded.clear();
  reinterpret_cast<void (*)()> (*entry)();
  EXPECT_EQ(recorded, std::vector<int64_t>{12});
}

// The perf map names every function of the program that ran, the internal
// ones too (a call within one object needs no relocation, so nothing else
// keeps their symbols), each at its address with a size above 0.
TEST_P(JITTest, ThePerfMapNamesEveryFunction) {
  // @inner and @outer both have loops: one part holds both on one thread.
  constexpr const char *kNested = R"(
declare void @tofu_jit_test_record(i64)

define internal i64 @inner(i64 %n) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  call void @tofu_jit_test_record(i64 %i)
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %next
}

define internal i64 @outer(i64 %n) noinline {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %acc = phi i64 [ 0, %entry ], [ %add, %loop ]
  %v = call i64 @inner(i64 %i)
  %add = add i64 %acc, %v
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret i64 %add
}

define void @main() noinline optnone {
  %r = call i64 @outer(i64 5)
  call void @tofu_jit_test_record(i64 %r)
  ret void
}
)";
  tofu::run::JITTimes times;
  Expected<std::unique_ptr<tofu::run::JITProgram>> program =
      compile(kNested, times);
  ASSERT_TRUE(bool(program)) << toString(program.takeError());
  Expected<void *> entry = (*program)->lookup("main");
  ASSERT_TRUE(bool(entry)) << toString(entry.takeError());
  SmallString<128> path;
  ASSERT_FALSE(sys::fs::createTemporaryFile("jit-test", "map", path));
  ASSERT_FALSE(bool((*program)->writePerfMap(path)));
  ErrorOr<std::unique_ptr<MemoryBuffer>> text = MemoryBuffer::getFile(path);
  sys::fs::remove(path);
  ASSERT_TRUE(bool(text));
  std::map<std::string, std::pair<uint64_t, uint64_t>> functions;
  SmallVector<StringRef> lines;
  (*text)->getBuffer().split(lines, '\n', -1, /*KeepEmpty=*/false);
  for (StringRef line : lines) {
    SmallVector<StringRef, 3> fields;
    line.split(fields, ' ');
    ASSERT_EQ(fields.size(), 3u) << line.str();
    uint64_t address = 0, size = 0;
    ASSERT_FALSE(fields[0].getAsInteger(16, address)) << line.str();
    ASSERT_FALSE(fields[1].getAsInteger(16, size)) << line.str();
    EXPECT_GT(size, 0u) << line.str();
    functions[fields[2].str()] = {address, size};
  }
  for (const char *name : {"main", "outer", "inner"})
    EXPECT_TRUE(functions.count(name)) << name << " in\n"
                                       << (*text)->getBuffer().str();
  EXPECT_EQ(functions["main"].first, reinterpret_cast<uintptr_t>(*entry));
}

INSTANTIATE_TEST_SUITE_P(Threads, JITTest, ::testing::Values(1u, 2u));

} // namespace
