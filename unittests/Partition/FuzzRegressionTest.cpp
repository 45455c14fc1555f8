//===- FuzzRegressionTest.cpp - Inputs that the fuzzers once failed on ----===//
//
// Feeds every input kept in fuzz/regressions/<target>/, and the seeds of the
// safetensors fuzzer, to the checks of that fuzz target (fuzz/FuzzTargets.h),
// so that the ordinary build tests them too. A check that fails aborts the
// test binary.
//
//===----------------------------------------------------------------------===//

#include "FuzzTargets.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tofu;

namespace {

/// Runs `check` on each file of fuzz/`kind`/`target` (`kind` is
/// "regressions" or "seeds"), in name order, and returns how many there
/// were.
size_t runRegressions(const std::string &target,
                      void (*check)(const std::string &),
                      const char *kind = "regressions") {
  std::filesystem::path dir =
      std::filesystem::path(TOFU_SOURCE_DIR) / "fuzz" / kind / target;
  std::vector<std::filesystem::path> files;
  if (!std::filesystem::is_directory(dir))
    return 0;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    if (entry.is_regular_file())
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  for (const std::filesystem::path &file : files) {
    std::ifstream in(file, std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::cerr << "checking " << file.filename().string() << "\n";
    check(text.str());
  }
  return files.size();
}

TEST(FuzzRegressionTest, TDLParse) {
  size_t n = runRegressions("tdl-parse-fuzzer", fuzz::checkTDLParse);
  std::cout << "[ fuzz regressions ] tdl-parse-fuzzer: " << n << " inputs\n";
  EXPECT_GT(n, 0u);
}

TEST(FuzzRegressionTest, TDLLibrary) {
  size_t n = runRegressions("tdl-library-fuzzer", fuzz::checkTDLLibrary);
  std::cout << "[ fuzz regressions ] tdl-library-fuzzer: " << n << " inputs\n";
  EXPECT_GT(n, 0u);
}

TEST(FuzzRegressionTest, PlanJSON) {
  size_t n = runRegressions("plan-json-fuzzer", fuzz::checkPlanJSON);
  std::cout << "[ fuzz regressions ] plan-json-fuzzer: " << n << " inputs\n";
  EXPECT_GT(n, 0u);
}

TEST(FuzzRegressionTest, SafeTensors) {
  size_t n =
      runRegressions("safetensors-fuzzer", fuzz::checkSafeTensors) +
      runRegressions("safetensors-fuzzer", fuzz::checkSafeTensors, "seeds");
  std::cout << "[ fuzz regressions ] safetensors-fuzzer: " << n << " inputs\n";
  EXPECT_GT(n, 0u);
}

} // namespace
