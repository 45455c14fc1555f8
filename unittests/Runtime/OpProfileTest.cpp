//===- OpProfileTest.cpp - The GPU profile's bookkeeping ------------------===//

#include "tofu/Runtime/OpProfile.h"

#include <gtest/gtest.h>

using tofu::gpu::OpClass;
using tofu::gpu::OpProfile;

namespace {

TEST(OpProfileTest, SameNameAndClassIsOneOp) {
  OpProfile profile;
  int a = profile.getId("k0_map_addf", OpClass::Generated);
  EXPECT_EQ(profile.getId("k0_map_addf", OpClass::Generated), a);
  EXPECT_NE(profile.getId("k1_loop_addf", OpClass::Generated), a);
  EXPECT_NE(profile.getId("k0_map_addf", OpClass::Cublas), a);
}

TEST(OpProfileTest, ReportsPerStepAfterTheWarmUp) {
  OpProfile profile;
  int kernel = profile.getId("k0_map_addf", OpClass::Generated);
  int gemm = profile.getId("sgemm NN m=4 n=4 k=4 batch=1", OpClass::Cublas);
  // A warm-up step that is slower than the others, then two steps.
  profile.beginStep();
  profile.add(kernel, 100.0f);
  profile.add(gemm, 100.0f);
  for (int s = 0; s < 2; ++s) {
    profile.beginStep();
    profile.add(kernel, 1.0f);
    profile.add(kernel, 2.0f);
    profile.add(gemm, 6.0f);
  }
  std::string text = profile.report(/*warmup=*/1, {250.0f, 10.0f, 12.0f},
                                    /*top=*/10);
  // 11 ms per step, 9 ms in ops: 3 in two launches, 6 in one GEMM.
  EXPECT_NE(text.find("2 steps after 1 warm-up; per step: 11.000 ms, of "
                      "which 9.000 ms in ops and 2.000 ms between them"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("generated kernels     3.000 ms  33.3% of the ops, 2 "
                      "calls (1 distinct)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cuBLAS                6.000 ms  66.7% of the ops, 1 "
                      "calls (1 distinct)"),
            std::string::npos)
      << text;
  // The longest op first.
  size_t gemmLine = text.find("sgemm NN");
  size_t kernelLine = text.find("  k0_map_addf");
  ASSERT_NE(gemmLine, std::string::npos);
  ASSERT_NE(kernelLine, std::string::npos);
  EXPECT_LT(gemmLine, kernelLine);
  EXPECT_NE(text.find("      6.000  66.7%      1  sgemm NN"), std::string::npos)
      << text;
}

TEST(OpProfileTest, TopLimitsTheOpsListed) {
  OpProfile profile;
  profile.beginStep();
  for (int i = 0; i < 5; ++i)
    profile.add(profile.getId("k" + std::to_string(i), OpClass::Generated),
                float(i + 1));
  std::string text = profile.report(0, {20.0f}, /*top=*/2);
  EXPECT_NE(text.find("  k4\n"), std::string::npos) << text;
  EXPECT_NE(text.find("  k3\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("  k2\n"), std::string::npos) << text;
}

TEST(OpProfileTest, CpuStyleNamesItsClassesAndTheRest) {
  OpProfile profile(tofu::gpu::OpProfileStyle::cpu());
  int gemm = profile.getId("sgemm NN m=4 n=4 k=4 batch=1", OpClass::Blas);
  int gather = profile.getId("all_gather 2x4 -> 4x4", OpClass::Collective);
  profile.beginStep();
  profile.add(gemm, 3.0f);
  profile.add(gather, 1.0f);
  std::string text = profile.report(0, {10.0f}, /*top=*/10);
  EXPECT_NE(text.find("cpu profile: 1 steps after 0 warm-up; per step: "
                      "10.000 ms, of which 4.000 ms in library calls and "
                      "collectives and 6.000 ms in generated code, copies "
                      "and allocation\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("cpu profile:   OpenBLAS              3.000 ms  75.0% "
                      "of the ops, 1 calls (1 distinct)\n"
                      "cpu profile:   oneDNN                0.000 ms   0.0% "
                      "of the ops, 0 calls (0 distinct)\n"
                      "cpu profile:   collectives           1.000 ms  25.0% "
                      "of the ops, 1 calls (1 distinct)\n"),
            std::string::npos)
      << text;
  // The GPU's classes are not listed.
  EXPECT_EQ(text.find("cuBLAS"), std::string::npos) << text;
  EXPECT_EQ(text.find("gpu profile"), std::string::npos) << text;
}

TEST(OpProfileTest, NothingProfiled) {
  OpProfile profile;
  EXPECT_EQ(profile.report(3, {}, 10), "gpu profile: no step profiled\n");
  profile.beginStep();
  EXPECT_EQ(profile.report(1, {1.0f}, 10), "gpu profile: no step profiled\n");
}

} // namespace
