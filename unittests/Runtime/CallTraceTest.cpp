//===- CallTraceTest.cpp - The call trace's checksums and operands --------===//

#include "tofu/Runtime/CallTrace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

using namespace tofu::trace;

namespace {

/// A row-major 2 x 3 matrix of 0.5, 1.5, ... and its transpose stored
/// column-major: the same tensor in two layouts.
TEST(CallTraceTest, ChecksumDependsOnTheTensorNotItsLayout) {
  std::vector<float> rowMajor = {0.5f, 1.5f, 2.5f, 3.5f, 4.5f, 5.5f};
  std::vector<float> colMajor = {0.5f, 3.5f, 1.5f, 4.5f, 2.5f, 5.5f};
  uint64_t a = checksumOnHost(rowMajor.data(), makeShape({2, 3}, {3, 1}));
  uint64_t b = checksumOnHost(colMajor.data(), makeShape({2, 3}, {1, 2}));
  EXPECT_EQ(a, b);
  // A padded row stride reads only the addressed elements.
  std::vector<float> padded = {0.5f, 1.5f, 2.5f, -7.0f, 3.5f, 4.5f, 5.5f};
  EXPECT_EQ(checksumOnHost(padded.data(), makeShape({2, 3}, {4, 1})), a);
  padded[3] = 99.0f;
  EXPECT_EQ(checksumOnHost(padded.data(), makeShape({2, 3}, {4, 1})), a);
}

TEST(CallTraceTest, ChecksumSeesChangedAndSwappedElements) {
  std::vector<float> x = {0.5f, 1.5f, 2.5f, 3.5f};
  Shape shape = makeShape({4}, {1});
  uint64_t sum = checksumOnHost(x.data(), shape);
  std::vector<float> changed = x;
  changed[2] = std::nextafter(2.5f, 3.0f); // One ulp.
  EXPECT_NE(checksumOnHost(changed.data(), shape), sum);
  std::vector<float> swapped = {1.5f, 0.5f, 2.5f, 3.5f};
  EXPECT_NE(checksumOnHost(swapped.data(), shape), sum);
  std::vector<float> zero = {0.0f}, minusZero = {-0.0f};
  EXPECT_NE(checksumOnHost(zero.data(), makeShape({1}, {1})),
            checksumOnHost(minusZero.data(), makeShape({1}, {1})));
}

TEST(CallTraceTest, SpanAndOffsets) {
  Shape shape = makeShape({2, 3, 4}, {24, 8, 1});
  EXPECT_EQ(getVolume(shape), 24);
  EXPECT_EQ(getSpan(shape), 1 + 24 + 16 + 3);
  EXPECT_EQ(getOffset(shape, 0), 0);
  EXPECT_EQ(getOffset(shape, 5), 8 + 1);
  EXPECT_EQ(getOffset(shape, 23), 24 + 16 + 3);
  EXPECT_EQ(getSpan(makeShape({2, 0}, {1, 1})), 0);
}

TEST(CallTraceTest, GemmOperandsReadTheResultOnlyWhenAccumulating) {
  std::vector<Operand> overwrite =
      getGemmOperands(2, 3, 4, 5, 100, 5, 1, 15, 200, 4, 1, 20, 300, 4, 1, 12,
                      /*beta=*/0.0f);
  ASSERT_EQ(overwrite.size(), 3u);
  EXPECT_STREQ(overwrite[0].role, "a");
  EXPECT_EQ(overwrite[0].shape.sizes[1], 3);
  EXPECT_EQ(overwrite[0].shape.sizes[2], 5);
  EXPECT_EQ(overwrite[1].shape.strides[0], 20);
  EXPECT_TRUE(overwrite[2].written);
  EXPECT_FALSE(overwrite[2].read);
  EXPECT_FALSE(overwrite[0].written);
  EXPECT_TRUE(overwrite[0].read);
  std::vector<Operand> accumulate =
      getGemmOperands(2, 3, 4, 5, 100, 5, 1, 15, 200, 4, 1, 20, 300, 4, 1, 12,
                      /*beta=*/1.0f);
  EXPECT_TRUE(accumulate[2].read);
}

TEST(CallTraceTest, ConvOperandsWriteWhatTheKindComputes) {
  tofu::gpu::ConvProblem p;
  p.n = 2, p.c = 4, p.h = 8, p.w = 8, p.f = 6, p.kh = 3, p.kw = 3;
  p.oh = 8, p.ow = 8, p.padH = 1, p.padW = 1, p.groups = 2;
  p.x = 1000, p.filter = 2000, p.y = 3000;
  using tofu::gpu::ConvKind;
  struct Case {
    ConvKind kind;
    const char *written;
  };
  for (Case c :
       {Case{ConvKind::Forward, "y"}, Case{ConvKind::BackwardData, "x"},
        Case{ConvKind::BackwardFilter, "w"}}) {
    std::vector<Operand> operands = getConvOperands(c.kind, p);
    ASSERT_EQ(operands.size(), 3u);
    for (const Operand &operand : operands) {
      bool isWritten = std::string(operand.role) == c.written;
      EXPECT_EQ(operand.written, isWritten) << operand.role;
      // beta = 0: the written tensor's previous contents are not read.
      EXPECT_EQ(operand.read, !isWritten) << operand.role;
    }
  }
  // The filters of a grouped convolution have c / groups channels.
  EXPECT_EQ(getConvOperands(ConvKind::Forward, p)[1].shape.sizes[1], 2);
  p.beta = 1.0f;
  EXPECT_TRUE(getConvOperands(ConvKind::BackwardData, p)[0].read);
}

} // namespace
