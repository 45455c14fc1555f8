//===- ConvPlanTest.cpp - Strided convolutions as cuDNN calls -------------===//
//
// The checks of planConv (extents, packed filters, unit-dimension strides)
// and the host convolutions of runConvOnHost: the forward convolution
// against its definition, and the data and filter gradients against the
// forward one through the adjoint identities
//   <conv(X, W), Y> = <X, dataGradient(W, Y)> = <W, filterGradient(X, Y)>,
// on strided (padded, NHWC-ordered) image and output buffers, with and
// without cuDNN's zero padding of the image, and both betas.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/ConvPlan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <ostream>
#include <string>
#include <vector>

using namespace tofu::gpu;

namespace {

/// A tensor of 4 dimensions in its own storage, with the strides of a
/// permutation of its dimensions (innermost last) and `pad` unused
/// elements after each innermost run.
struct Tensor {
  intptr_t sizes[4];
  intptr_t strides[4];
  std::vector<float> data;

  Tensor(const intptr_t (&s)[4], const int (&order)[4], intptr_t pad,
         float seed) {
    for (int d = 0; d < 4; ++d)
      sizes[d] = s[d];
    intptr_t stride = 1;
    for (int i = 3; i >= 0; --i) {
      strides[order[i]] = stride;
      stride *= sizes[order[i]] + (i == 3 ? pad : 0);
    }
    data.resize(stride);
    for (size_t i = 0; i < data.size(); ++i)
      data[i] = seed + 0.125f * float(i % 11) - 0.25f * float(i % 5);
  }

  float &at(intptr_t a, intptr_t b, intptr_t c, intptr_t d) {
    return data[a * strides[0] + b * strides[1] + c * strides[2] +
                d * strides[3]];
  }
  intptr_t address() { return reinterpret_cast<intptr_t>(data.data()); }
};

constexpr int kNCHW[4] = {0, 1, 2, 3};
constexpr int kNHWC[4] = {0, 2, 3, 1};

/// The problem of a convolution on these tensors.
ConvProblem makeProblem(Tensor &x, Tensor &w, Tensor &y, intptr_t sh,
                        intptr_t sw, float beta, intptr_t ph = 0,
                        intptr_t pw = 0, intptr_t groups = 1) {
  ConvProblem p;
  p.padH = ph, p.padW = pw, p.groups = groups;
  p.n = x.sizes[0], p.c = x.sizes[1], p.h = x.sizes[2], p.w = x.sizes[3];
  p.f = w.sizes[0], p.kh = w.sizes[2], p.kw = w.sizes[3];
  p.oh = y.sizes[2], p.ow = y.sizes[3], p.strideH = sh, p.strideW = sw;
  p.x = x.address(), p.filter = w.address(), p.y = y.address();
  for (int d = 0; d < 4; ++d) {
    p.xStrides[d] = x.strides[d];
    p.wStrides[d] = w.strides[d];
    p.yStrides[d] = y.strides[d];
  }
  p.beta = beta;
  return p;
}

/// Sum of a * b over the logical elements of two tensors of equal sizes.
double dot(Tensor &a, Tensor &b) {
  double sum = 0.0;
  for (intptr_t i = 0; i < a.sizes[0]; ++i)
    for (intptr_t j = 0; j < a.sizes[1]; ++j)
      for (intptr_t k = 0; k < a.sizes[2]; ++k)
        for (intptr_t l = 0; l < a.sizes[3]; ++l)
          sum += double(a.at(i, j, k, l)) * double(b.at(i, j, k, l));
  return sum;
}

struct Shape {
  intptr_t n, c, h, w, f, kh, kw, sh, sw;
  /// Padding on both sides of the rows and the columns.
  intptr_t ph = 0, pw = 0;
  /// Groups of c / groups channels and f / groups filters.
  intptr_t groups = 1;
  intptr_t cg() const { return c / groups; }
  intptr_t oh() const { return (h + 2 * ph - kh) / sh + 1; }
  intptr_t ow() const { return (w + 2 * pw - kw) / sw + 1; }
};

void PrintTo(const Shape &s, std::ostream *os) {
  *os << "n" << s.n << " c" << s.c << " " << s.h << "x" << s.w << " f" << s.f
      << " kernel " << s.kh << "x" << s.kw << " stride " << s.sh << "x" << s.sw
      << " pad " << s.ph << "x" << s.pw << " groups " << s.groups;
}

class ConvPlanShapes : public testing::TestWithParam<Shape> {};

TEST_P(ConvPlanShapes, ForwardMatchesDefinition) {
  Shape s = GetParam();
  for (float beta : {0.0f, 1.0f}) {
    Tensor x({s.n, s.c, s.h, s.w}, kNHWC, 1, 1.0f);
    Tensor w({s.f, s.cg(), s.kh, s.kw}, kNCHW, 0, -0.5f);
    Tensor y({s.n, s.f, s.oh(), s.ow()}, kNCHW, 2, 0.25f);
    Tensor expected = y;
    for (intptr_t b = 0; b < s.n; ++b)
      for (intptr_t f = 0; f < s.f; ++f)
        for (intptr_t i = 0; i < s.oh(); ++i)
          for (intptr_t j = 0; j < s.ow(); ++j) {
            float sum = 0.0f;
            // Filter f reads the channels of its group.
            intptr_t first = f / (s.f / s.groups) * s.cg();
            for (intptr_t c = 0; c < s.cg(); ++c)
              for (intptr_t k = 0; k < s.kh; ++k)
                for (intptr_t l = 0; l < s.kw; ++l) {
                  // The padded image: zero outside the image.
                  intptr_t r = i * s.sh + k - s.ph, q = j * s.sw + l - s.pw;
                  if (r >= 0 && r < s.h && q >= 0 && q < s.w)
                    sum += x.at(b, first + c, r, q) * w.at(f, c, k, l);
                }
            float &e = expected.at(b, f, i, j);
            e = beta * e + sum;
          }
    ConvProblem p =
        makeProblem(x, w, y, s.sh, s.sw, beta, s.ph, s.pw, s.groups);
    ASSERT_EQ(planConv(p), "");
    runConvOnHost(ConvKind::Forward, p);
    for (intptr_t b = 0; b < s.n; ++b)
      for (intptr_t f = 0; f < s.f; ++f)
        for (intptr_t i = 0; i < s.oh(); ++i)
          for (intptr_t j = 0; j < s.ow(); ++j)
            EXPECT_NEAR(y.at(b, f, i, j), expected.at(b, f, i, j), 1e-4);
  }
}

TEST_P(ConvPlanShapes, GradientsAreAdjoint) {
  Shape s = GetParam();
  Tensor x({s.n, s.c, s.h, s.w}, kNCHW, 3, 1.0f);
  Tensor w({s.f, s.cg(), s.kh, s.kw}, kNCHW, 0, -0.5f);
  Tensor dy({s.n, s.f, s.oh(), s.ow()}, kNHWC, 1, 0.75f);
  Tensor y({s.n, s.f, s.oh(), s.ow()}, kNCHW, 0, 9.0f);
  ConvProblem forward =
      makeProblem(x, w, y, s.sh, s.sw, 0.0f, s.ph, s.pw, s.groups);
  ASSERT_EQ(planConv(forward), "");
  runConvOnHost(ConvKind::Forward, forward);
  double reference = dot(y, dy);

  // beta = 0 overwrites every element, also rows that no window reaches.
  Tensor dx({s.n, s.c, s.h, s.w}, kNCHW, 2, 7.0f);
  ConvProblem data =
      makeProblem(dx, w, dy, s.sh, s.sw, 0.0f, s.ph, s.pw, s.groups);
  ASSERT_EQ(planConv(data), "");
  runConvOnHost(ConvKind::BackwardData, data);
  EXPECT_NEAR(dot(x, dx), reference, 1e-3 * std::fabs(reference) + 1e-3);

  Tensor dw({s.f, s.cg(), s.kh, s.kw}, kNCHW, 0, 5.0f);
  ConvProblem filter =
      makeProblem(x, dw, dy, s.sh, s.sw, 0.0f, s.ph, s.pw, s.groups);
  ASSERT_EQ(planConv(filter), "");
  runConvOnHost(ConvKind::BackwardFilter, filter);
  EXPECT_NEAR(dot(w, dw), reference, 1e-3 * std::fabs(reference) + 1e-3);

  // beta = 1 adds the gradient once more.
  filter.beta = 1.0f;
  runConvOnHost(ConvKind::BackwardFilter, filter);
  EXPECT_NEAR(dot(w, dw), 2 * reference, 2e-3 * std::fabs(reference) + 1e-3);
}

INSTANTIATE_TEST_SUITE_P(
    Shapes, ConvPlanShapes,
    testing::Values(Shape{2, 3, 6, 6, 4, 3, 3, 1, 1},
                    // Strided, with a row that no window reaches.
                    Shape{1, 2, 8, 7, 3, 3, 3, 2, 2},
                    // 1x1 kernels, a different stride per dimension.
                    Shape{2, 4, 5, 6, 2, 1, 1, 2, 3},
                    // 1-D: height 1.
                    Shape{2, 3, 1, 10, 4, 1, 3, 1, 1},
                    // Padded: the zoo's 3x3 with pad 1, strided, and a
                    // different padding per dimension (1-D: only columns).
                    Shape{2, 3, 6, 6, 4, 3, 3, 1, 1, 1, 1},
                    Shape{1, 2, 7, 8, 3, 3, 3, 2, 2, 1, 1},
                    Shape{1, 2, 5, 6, 2, 3, 5, 1, 2, 0, 2},
                    Shape{2, 3, 1, 10, 4, 1, 3, 1, 1, 0, 1},
                    // Depthwise (groups = channels = filters), strided and
                    // padded, and 2 groups of 2 channels and 3 filters.
                    Shape{2, 4, 7, 7, 4, 3, 3, 2, 2, 1, 1, 4},
                    Shape{1, 4, 6, 5, 6, 3, 3, 1, 1, 1, 0, 2}),
    [](const testing::TestParamInfo<Shape> &info) {
      const Shape &s = info.param;
      return "n" + std::to_string(s.n) + "c" + std::to_string(s.c) + "h" +
             std::to_string(s.h) + "w" + std::to_string(s.w) + "f" +
             std::to_string(s.f) + "k" + std::to_string(s.kh) + "x" +
             std::to_string(s.kw) + "s" + std::to_string(s.sh) + "x" +
             std::to_string(s.sw) + "p" + std::to_string(s.ph) + "x" +
             std::to_string(s.pw) + "g" + std::to_string(s.groups);
    });

TEST(ConvPlanTest, SubsamplesStridedUnitWindows) {
  // 1x1 windows with strides (2, 2) on an 8x8 image (its last row and
  // column read by no window) and (3, 2) on 9x6: the forward convolution
  // and the filter gradient of the subsampled view, with stride 1, equal
  // the strided ones exactly (the same sums in the same order).
  struct Case {
    intptr_t h, w, sh, sw;
  };
  for (Case k : {Case{8, 8, 2, 2}, Case{9, 6, 3, 2}}) {
    intptr_t oh = (k.h - 1) / k.sh + 1, ow = (k.w - 1) / k.sw + 1;
    Tensor x({2, 3, k.h, k.w}, kNHWC, 1, 1.0f);
    Tensor w({4, 3, 1, 1}, kNCHW, 0, -0.5f);
    Tensor y({2, 4, oh, ow}, kNCHW, 0, 0.25f), y2 = y;
    ConvProblem strided = makeProblem(x, w, y, k.sh, k.sw, 0.0f);
    ConvProblem view = makeProblem(x, w, y2, k.sh, k.sw, 0.0f);
    ASSERT_EQ(planConv(strided), "");
    ASSERT_TRUE(subsampleUnitWindow(ConvKind::Forward, view));
    EXPECT_EQ(view.strideH, 1);
    EXPECT_EQ(view.h, oh);
    EXPECT_EQ(view.xStrides[2], x.strides[2] * k.sh);
    ASSERT_EQ(planConv(view), "");
    runConvOnHost(ConvKind::Forward, strided);
    runConvOnHost(ConvKind::Forward, view);
    EXPECT_EQ(y.data, y2.data);

    Tensor dw({4, 3, 1, 1}, kNCHW, 0, 5.0f), dw2 = dw;
    ConvProblem filter = makeProblem(x, dw, y, k.sh, k.sw, 1.0f);
    ConvProblem filterView = makeProblem(x, dw2, y, k.sh, k.sw, 1.0f);
    ASSERT_TRUE(subsampleUnitWindow(ConvKind::BackwardFilter, filterView));
    ASSERT_EQ(planConv(filter), "");
    ASSERT_EQ(planConv(filterView), "");
    runConvOnHost(ConvKind::BackwardFilter, filter);
    runConvOnHost(ConvKind::BackwardFilter, filterView);
    EXPECT_EQ(dw.data, dw2.data);

    // The data gradient writes every element of the image: left alone.
    ConvProblem data = makeProblem(x, w, y, k.sh, k.sw, 0.0f);
    EXPECT_FALSE(subsampleUnitWindow(ConvKind::BackwardData, data));
  }
  // Strides that do not tile the image (7 rows, stride 2: the view's last
  // row would reach row 8, past the image), wider windows, padding and
  // unit strides are left alone.
  Tensor x({1, 2, 8, 8}, kNCHW, 0, 1.0f), w3({2, 2, 3, 3}, kNCHW, 0, 1.0f);
  Tensor w1({2, 2, 1, 1}, kNCHW, 0, 1.0f), x7({1, 2, 7, 7}, kNCHW, 0, 1.0f);
  Tensor y4({1, 2, 4, 4}, kNCHW, 0, 0.0f), y8({1, 2, 8, 8}, kNCHW, 0, 0.0f);
  ConvProblem odd = makeProblem(x7, w1, y4, 2, 2, 0.0f);
  EXPECT_FALSE(subsampleUnitWindow(ConvKind::Forward, odd));
  ConvProblem wide = makeProblem(x, w3, y4, 2, 2, 0.0f, 1, 1);
  ConvProblem unit = makeProblem(x, w1, y8, 1, 1, 0.0f);
  EXPECT_FALSE(subsampleUnitWindow(ConvKind::Forward, wide));
  EXPECT_FALSE(subsampleUnitWindow(ConvKind::Forward, unit));
}

TEST(ConvPlanTest, NormalizesUnitDimensions) {
  Tensor x({2, 3, 1, 10}, kNCHW, 0, 1.0f);
  Tensor w({4, 3, 1, 3}, kNCHW, 0, 1.0f);
  Tensor y({2, 4, 1, 8}, kNCHW, 0, 1.0f);
  ConvProblem p = makeProblem(x, w, y, 1, 1, 0.0f);
  // What the lowering passes for a 1-D convolution: 1 for the height.
  p.xStrides[2] = p.wStrides[2] = p.yStrides[2] = 1;
  ASSERT_EQ(planConv(p), "");
  EXPECT_EQ(p.xStrides[2], 10);
  EXPECT_EQ(p.wStrides[2], 3);
  EXPECT_EQ(p.yStrides[2], 8);
}

TEST(ConvPlanTest, RejectsWhatCuDNNCannotDo) {
  Tensor x({2, 3, 6, 6}, kNCHW, 0, 1.0f);
  Tensor w({4, 3, 3, 3}, kNCHW, 0, 1.0f);
  Tensor y({2, 4, 4, 4}, kNCHW, 0, 1.0f);
  ConvProblem good = makeProblem(x, w, y, 1, 1, 0.0f);
  ConvProblem p = good;
  EXPECT_EQ(planConv(p), "");

  p = good;
  p.oh = 3;
  EXPECT_EQ(planConv(p), "the output extent does not follow from the input "
                         "extent, the kernel, the stride and the padding");
  p = good;
  p.padH = p.padW = 1;
  EXPECT_EQ(planConv(p), "the output extent does not follow from the input "
                         "extent, the kernel, the stride and the padding");
  p.oh = p.ow = 6;
  EXPECT_EQ(planConv(p), "");
  p = good;
  p.groups = 2;
  EXPECT_EQ(planConv(p), "the groups do not divide the channels and the "
                         "filters");
  p.groups = 0;
  EXPECT_EQ(planConv(p), "the groups do not divide the channels and the "
                         "filters");
  p = good;
  p.padW = -1;
  EXPECT_EQ(planConv(p), "a padding is negative or not smaller than the "
                         "kernel");
  p = good;
  p.padH = 3;
  p.oh = 10;
  EXPECT_EQ(planConv(p), "a padding is negative or not smaller than the "
                         "kernel");
  p = good;
  p.kh = 7;
  EXPECT_NE(planConv(p), "");
  p = good;
  p.n = 0;
  EXPECT_EQ(planConv(p), "an extent or stride is not in [1, INT_MAX]");
  p = good;
  p.strideW = 0;
  EXPECT_EQ(planConv(p), "an extent or stride is not in [1, INT_MAX]");
  p = good;
  std::swap(p.wStrides[2], p.wStrides[3]);
  EXPECT_EQ(planConv(p),
            "the filter is not packed in (F, C / groups, KH, KW) order");
  p = good;
  p.xStrides[3] = -1;
  EXPECT_EQ(planConv(p),
            "a stride of the image or the output is not in [1, INT_MAX]");
  p = good;
  p.beta = 0.5f;
  EXPECT_EQ(planConv(p), "beta must be 0 or 1");
}

} // namespace
