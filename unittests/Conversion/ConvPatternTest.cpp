//===- ConvPatternTest.cpp - Convolutions from indexing maps --------------===//
//
// The rules of matchConvPattern on hand-written maps: the forward
// convolution and tofu-autodiff's data and filter gradients in any operand
// and loop order, strides, 1-D convolutions, and the forms that must not
// match (GEMMs, dilations, other layouts, groups, 3-D, a loop that plays
// two roles); depthwise and grouped convolutions where a backend takes
// them; the folding of a zero pad into cuDNN's symmetric padding,
// checked against the padded convolution computed both ways.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/ConvPattern.h"

#include <gtest/gtest.h>

using namespace tofu::conv;

namespace {

/// A plain index: the loop itself.
IndexExpr loop(unsigned l) { return {{l, 1}}; }

/// A window index: out * stride + kernel * dilation.
IndexExpr window(unsigned out, int64_t stride, unsigned kernel,
                 int64_t dilation = 1) {
  return {{out, stride}, {kernel, dilation}};
}

/// The loops of conv_2d_nchw_fchw: n, f, oh, ow, c, kh, kw.
enum : unsigned { N, F, OH, OW, C, KH, KW };

IndexMap image(int64_t stride = 1) {
  return {loop(N), loop(C), window(OH, stride, KH), window(OW, stride, KW)};
}
IndexMap filter() { return {loop(F), loop(C), loop(KH), loop(KW)}; }
IndexMap output() { return {loop(N), loop(F), loop(OH), loop(OW)}; }

void expectLoops(const ConvPattern &p) {
  EXPECT_EQ(p.batchLoop, N);
  EXPECT_EQ(p.channelLoop, C);
  EXPECT_EQ(p.filterLoop, F);
  EXPECT_EQ(p.outputLoops, (std::vector<unsigned>{OH, OW}));
  EXPECT_EQ(p.kernelLoops, (std::vector<unsigned>{KH, KW}));
  EXPECT_EQ(p.verify(7), "");
}

/// Matches `maps` and expects `kind` with the image, filter and output at
/// these operand numbers, the loops above and `stride` in both dimensions.
void expectMatch(const std::vector<IndexMap> &maps, ConvKind kind, unsigned x,
                 unsigned w, unsigned y, int64_t stride) {
  std::optional<ConvPattern> p = matchConvPattern(maps, 7);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->kind, kind);
  EXPECT_EQ(p->image, x);
  EXPECT_EQ(p->filter, w);
  EXPECT_EQ(p->output, y);
  EXPECT_EQ(p->strides, (std::vector<int64_t>{stride, stride}));
  expectLoops(*p);
}

TEST(ConvPatternTest, Forward) {
  expectMatch({image(), filter(), output()}, ConvKind::Forward, 0, 1, 2, 1);
  expectMatch({filter(), image(3), output()}, ConvKind::Forward, 1, 0, 2, 3);
}

TEST(ConvPatternTest, BackwardData) {
  // tofu-autodiff: ins(W, dY) outs(dX), dX indexed by oh * 2 + kh.
  expectMatch({filter(), output(), image(2)}, ConvKind::BackwardData, 2, 0, 1,
              2);
}

TEST(ConvPatternTest, BackwardFilter) {
  // tofu-autodiff: ins(X, dY) outs(dW).
  expectMatch({image(), output(), filter()}, ConvKind::BackwardFilter, 0, 2, 1,
              1);
}

TEST(ConvPatternTest, AnyLoopOrderAndTermOrder) {
  // Loops permuted (c, kw, n, oh, f, kh, ow) and the window's terms in
  // kernel-first order.
  unsigned c = 0, kw = 1, n = 2, oh = 3, f = 4, kh = 5, ow = 6;
  IndexMap x{loop(n), loop(c), {{kh, 1}, {oh, 3}}, {{kw, 1}, {ow, 2}}};
  IndexMap w{loop(f), loop(c), loop(kh), loop(kw)};
  IndexMap y{loop(n), loop(f), loop(oh), loop(ow)};
  std::optional<ConvPattern> p = matchConvPattern({x, w, y}, 7);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->batchLoop, n);
  EXPECT_EQ(p->channelLoop, c);
  EXPECT_EQ(p->filterLoop, f);
  EXPECT_EQ(p->outputLoops, (std::vector<unsigned>{oh, ow}));
  EXPECT_EQ(p->kernelLoops, (std::vector<unsigned>{kh, kw}));
  EXPECT_EQ(p->strides, (std::vector<int64_t>{3, 2}));
}

TEST(ConvPatternTest, OneDimensional) {
  // The zoo's conv1d: loops n, f, x, c, k.
  IndexMap x{loop(0), loop(3), window(2, 1, 4)};
  IndexMap w{loop(1), loop(3), loop(4)};
  IndexMap y{loop(0), loop(1), loop(2)};
  std::optional<ConvPattern> p = matchConvPattern({x, w, y}, 5);
  ASSERT_TRUE(p);
  EXPECT_EQ(p->getSpatialRank(), 1u);
  EXPECT_EQ(p->verify(5), "");
}

/// Expects no match, with `reason` (empty: no convolution at all).
void expectNoMatch(const std::vector<IndexMap> &maps, unsigned numLoops,
                   const std::string &reason) {
  std::string whyNot = "stale";
  EXPECT_FALSE(matchConvPattern(maps, numLoops, &whyNot));
  EXPECT_EQ(whyNot, reason);
}

TEST(ConvPatternTest, NotWindowed) {
  // A matmul: no windowed index, so no reason either.
  expectNoMatch({{loop(0), loop(2)}, {loop(2), loop(1)}, {loop(0), loop(1)}}, 3,
                "");
}

TEST(ConvPatternTest, Dilation) {
  IndexMap x{loop(N), loop(C), window(OH, 1, KH, 2), window(OW, 1, KW, 2)};
  expectNoMatch({x, filter(), output()}, 7, "the dilation is not 1");
}

TEST(ConvPatternTest, NHWC) {
  IndexMap x{loop(N), window(OH, 1, KH), window(OW, 1, KW), loop(C)};
  IndexMap w{loop(KH), loop(KW), loop(C), loop(F)};
  IndexMap y{loop(N), loop(OH), loop(OW), loop(F)};
  expectNoMatch({x, w, y}, 7, "the image is not in NCHW layout");
}

TEST(ConvPatternTest, HWCFFilter) {
  IndexMap w{loop(KH), loop(KW), loop(C), loop(F)};
  expectNoMatch({image(), w, output()}, 7,
                "the filter is not in FCHW or the output not in NFHW layout");
}

TEST(ConvPatternTest, ThreeDimensional) {
  IndexMap x{loop(0), loop(1), window(2, 1, 3), window(4, 1, 5),
             window(6, 1, 7)};
  expectNoMatch({x, x, x}, 8, "more than one operand has windowed indices");
  IndexMap w{loop(8), loop(1), loop(3), loop(5), loop(7)};
  IndexMap y{loop(0), loop(8), loop(2), loop(4), loop(6)};
  expectNoMatch({x, w, y}, 9,
                "only 1-D and 2-D convolutions are library calls");
}

TEST(ConvPatternTest, Grouped) {
  // A group loop G (7) that indexes all three tensors is no role of the
  // convolution: the ranks differ.
  IndexMap x{loop(N), loop(C), window(OH, 1, KH), window(OW, 1, KW), loop(7)};
  expectNoMatch({x, filter(), output()}, 8,
                "only 1-D and 2-D convolutions are library calls");
  IndexMap w{loop(F), loop(C), loop(KH), loop(7)};
  IndexMap y{loop(N), loop(F), loop(OH), loop(7)};
  IndexMap x1{loop(N), loop(C), window(OH, 1, KH), loop(7)};
  expectNoMatch({x1, w, y}, 8, "a window index is not the sum of two loops");
}

/// The loops of depthwise_conv_2d_nchw_chw: n, oh, ow, c, kh, kw.
enum : unsigned { DN, DOH, DOW, DC, DKH, DKW };

IndexMap depthwiseImage(int64_t stride = 1) {
  return {loop(DN), loop(DC), window(DOH, stride, DKH),
          window(DOW, stride, DKW)};
}
IndexMap depthwiseFilter() { return {loop(DC), loop(DKH), loop(DKW)}; }
IndexMap depthwiseOutput() {
  return {loop(DN), loop(DC), loop(DOH), loop(DOW)};
}

/// The loops of conv_2d_ngchw_gfchw: n, g, f, oh, ow, c, kh, kw.
enum : unsigned { GN, GG, GF, GOH, GOW, GC, GKH, GKW };

IndexMap groupedImage(int64_t stride = 1) {
  return {loop(GN), loop(GG), loop(GC), window(GOH, stride, GKH),
          window(GOW, stride, GKW)};
}
IndexMap groupedFilter() {
  return {loop(GG), loop(GF), loop(GC), loop(GKH), loop(GKW)};
}
IndexMap groupedOutput() {
  return {loop(GN), loop(GG), loop(GF), loop(GOH), loop(GOW)};
}

/// The loops that a depthwise or grouped pattern must find.
struct GroupLoops {
  bool depthwise = false, grouped = false;
  unsigned batch = 0, group = 0, channel = 0, filter = 0;
  std::vector<unsigned> outputs, kernels;
};
const GroupLoops kDepthwise{true, false, DN, 0, DC, DC, {DOH, DOW}, {DKH, DKW}};
const GroupLoops kGrouped{false, true, GN, GG, GC, GF, {GOH, GOW}, {GKH, GKW}};

/// Matches `maps` with groups allowed and expects `kind`, these operand
/// numbers, the loops of `l` and `stride` in both dimensions.
void expectGroupsMatch(const std::vector<IndexMap> &maps, const GroupLoops &l,
                       ConvKind kind, unsigned x, unsigned w, unsigned y,
                       int64_t stride) {
  unsigned numLoops = (l.grouped ? 4 : 2) + 4;
  std::string whyNot;
  std::optional<ConvPattern> p =
      matchConvPattern(maps, numLoops, &whyNot, /*allowGroups=*/true);
  ASSERT_TRUE(p) << whyNot;
  EXPECT_EQ(p->depthwise, l.depthwise);
  EXPECT_EQ(p->grouped, l.grouped);
  EXPECT_EQ(p->kind, kind);
  EXPECT_EQ(p->image, x);
  EXPECT_EQ(p->filter, w);
  EXPECT_EQ(p->output, y);
  EXPECT_EQ(p->batchLoop, l.batch);
  if (l.grouped)
    EXPECT_EQ(p->groupLoop, l.group);
  EXPECT_EQ(p->channelLoop, l.channel);
  EXPECT_EQ(p->filterLoop, l.filter);
  EXPECT_EQ(p->getFirstSpatialDim(), l.grouped ? 3u : 2u);
  EXPECT_EQ(p->outputLoops, l.outputs);
  EXPECT_EQ(p->kernelLoops, l.kernels);
  EXPECT_EQ(p->strides, (std::vector<int64_t>{stride, stride}));
  EXPECT_EQ(p->verify(numLoops), "");
}

/// The forward convolution of `image` (with unit strides), `filter` and
/// `output`, and tofu-autodiff's gradients (with strides of 2): ins(W, dY)
/// outs(dX), ins(X, dY) outs(dW).
void expectEveryKindMatches(IndexMap (*image)(int64_t), const IndexMap &filter,
                            const IndexMap &output, const GroupLoops &l) {
  expectGroupsMatch({image(1), filter, output}, l, ConvKind::Forward, 0, 1, 2,
                    1);
  expectGroupsMatch({filter, output, image(2)}, l, ConvKind::BackwardData, 2, 0,
                    1, 2);
  expectGroupsMatch({image(2), output, filter}, l, ConvKind::BackwardFilter, 0,
                    2, 1, 2);
}

TEST(ConvPatternTest, Depthwise) {
  expectEveryKindMatches(depthwiseImage, depthwiseFilter(), depthwiseOutput(),
                         kDepthwise);
  // One spatial dimension (depthwise_conv_1d_ncw_cw): n, ow, c, kw.
  std::string whyNot;
  std::optional<ConvPattern> p =
      matchConvPattern({{loop(0), loop(2), window(1, 1, 3)},
                        {loop(2), loop(3)},
                        {loop(0), loop(2), loop(1)}},
                       4, &whyNot, /*allowGroups=*/true);
  ASSERT_TRUE(p) << whyNot;
  EXPECT_TRUE(p->depthwise);
  EXPECT_EQ(p->getSpatialRank(), 1u);
}

TEST(ConvPatternTest, DepthwiseOnlyWhereAllowed) {
  expectNoMatch({depthwiseImage(), depthwiseFilter(), depthwiseOutput()}, 6,
                "a depthwise convolution, which this backend does not call");
  // A filter of one dimension fewer that is not indexed by the channels
  // (here by the output rows) is no depthwise filter.
  std::string whyNot;
  EXPECT_FALSE(matchConvPattern(
      {depthwiseImage(), {loop(DOH), loop(DKH), loop(DKW)}, depthwiseOutput()},
      6, &whyNot, /*allowGroups=*/true));
  EXPECT_EQ(whyNot, "the operands differ in rank");
  // An output that does not follow the image's channels.
  EXPECT_FALSE(matchConvPattern({depthwiseImage(),
                                 depthwiseFilter(),
                                 {loop(DN), loop(DKH), loop(DOH), loop(DOW)}},
                                6, &whyNot, /*allowGroups=*/true));
  // The channel loop as filter loop of an ordinary pattern, or the reverse.
  ConvPattern d = *matchConvPattern(
      {depthwiseImage(), depthwiseFilter(), depthwiseOutput()}, 6, nullptr,
      /*allowGroups=*/true);
  ConvPattern notDepthwise = d;
  notDepthwise.depthwise = false;
  EXPECT_NE(notDepthwise.verify(6), "");
  ConvPattern ordinary = *matchConvPattern({image(), filter(), output()}, 7);
  ordinary.depthwise = true;
  EXPECT_NE(ordinary.verify(7), "");
}

TEST(ConvPatternTest, Grouped2D) {
  expectEveryKindMatches(groupedImage, groupedFilter(), groupedOutput(),
                         kGrouped);
  // Not where the backend takes no groups.
  expectNoMatch({groupedImage(), groupedFilter(), groupedOutput()}, 8,
                "a grouped convolution, which this backend does not call");
  // The group loop elsewhere in the filter (G after F).
  std::string whyNot;
  EXPECT_FALSE(
      matchConvPattern({groupedImage(),
                        {loop(GF), loop(GG), loop(GC), loop(GKH), loop(GKW)},
                        groupedOutput()},
                       8, &whyNot, /*allowGroups=*/true));
  EXPECT_EQ(whyNot, "the group dimension is not after the batch of the "
                    "output and first in the filter");
  // A group loop that the output does not have.
  EXPECT_FALSE(
      matchConvPattern({groupedImage(),
                        groupedFilter(),
                        {loop(GN), loop(GF), loop(GF), loop(GOH), loop(GOW)}},
                       8, &whyNot, /*allowGroups=*/true));
  // A pattern with a group loop that is also depthwise is broken.
  ConvPattern g = *matchConvPattern(
      {groupedImage(), groupedFilter(), groupedOutput()}, 8, nullptr,
      /*allowGroups=*/true);
  g.depthwise = true;
  EXPECT_NE(g.verify(8), "");
}

TEST(ConvPatternTest, WindowOfWrongLoops) {
  // oh + ow: the window does not use the kernel loop.
  IndexMap x{loop(N), loop(C), window(OH, 1, OW), window(OW, 1, KW)};
  expectNoMatch({x, filter(), output()}, 7,
                "a window index does not combine an output loop and a "
                "kernel loop");
}

TEST(ConvPatternTest, LoopInTwoRoles) {
  // The output-row loop also serves as the filter loop.
  IndexMap w{loop(OH), loop(C), loop(KH), loop(KW)};
  IndexMap y{loop(N), loop(OH), loop(OH), loop(OW)};
  expectNoMatch({image(), w, y}, 7,
                "a loop is not a batch, channel, filter, output or kernel "
                "loop of the convolution");
}

TEST(ConvPatternTest, ExtraLoop) {
  // An eighth loop that indexes nothing.
  expectNoMatch({image(), filter(), output()}, 8,
                "a loop is not a batch, channel, filter, output or kernel "
                "loop of the convolution");
}

TEST(ConvPatternTest, VerifyCatchesBrokenPatterns) {
  ConvPattern p = *matchConvPattern({image(), filter(), output()}, 7);
  ConvPattern wrongKind = p;
  wrongKind.kind = ConvKind::BackwardData;
  EXPECT_NE(wrongKind.verify(7), "");
  ConvPattern zeroStride = p;
  zeroStride.strides[0] = 0;
  EXPECT_NE(zeroStride.verify(7), "");
  ConvPattern sameOperand = p;
  sameOperand.filter = 0;
  EXPECT_NE(sameOperand.verify(7), "");
}

ConvPattern forward(int64_t stride) {
  return *matchConvPattern({image(stride), filter(), output()}, 7);
}

TEST(ConvPatternTest, FoldsSymmetricPad) {
  // The zoo's 3x3 convolution with pad 1 on a 10x8 image, stride 1 and 2,
  // and the 7x7 stem with pad 3 and stride 2.
  std::string whyNot = "stale";
  std::optional<std::vector<int64_t>> pad = foldZeroPad(
      forward(1), {0, 0, 1, 1}, {0, 0, 1, 1}, {2, 3, 10, 8}, {3, 3}, {10, 8},
      &whyNot);
  ASSERT_TRUE(pad);
  EXPECT_EQ(*pad, (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(whyNot, "");
  pad = foldZeroPad(forward(2), {0, 0, 1, 1}, {0, 0, 1, 1}, {2, 3, 10, 8},
                    {3, 3}, {5, 4});
  ASSERT_TRUE(pad);
  EXPECT_EQ(*pad, (std::vector<int64_t>{1, 1}));
  pad = foldZeroPad(forward(2), {0, 0, 3, 3}, {0, 0, 3, 3}, {1, 3, 224, 224},
                    {7, 7}, {112, 112});
  ASSERT_TRUE(pad);
  EXPECT_EQ(*pad, (std::vector<int64_t>{3, 3}));
  // Different pads per dimension, and none in one of them.
  pad = foldZeroPad(forward(1), {0, 0, 0, 2}, {0, 0, 0, 2}, {1, 1, 6, 6},
                    {3, 5}, {4, 6});
  ASSERT_TRUE(pad);
  EXPECT_EQ(*pad, (std::vector<int64_t>{0, 2}));
}

TEST(ConvPatternTest, FoldsPadOfOneDimensional) {
  IndexMap x{loop(0), loop(3), window(2, 1, 4)};
  IndexMap w{loop(1), loop(3), loop(4)};
  IndexMap y{loop(0), loop(1), loop(2)};
  ConvPattern p = *matchConvPattern({x, w, y}, 5);
  std::optional<std::vector<int64_t>> pad =
      foldZeroPad(p, {0, 0, 2}, {0, 0, 2}, {4, 8, 16}, {5}, {16});
  ASSERT_TRUE(pad);
  EXPECT_EQ(*pad, (std::vector<int64_t>{2}));
}

TEST(ConvPatternTest, FoldsHighPadThatTheStrideNeverReaches) {
  // 3x3, stride 2, image 8: low 1 and high 0 or 1 give 4 outputs, as
  // cuDNN's padding 1 on both sides does.
  for (int64_t high : {0, 1}) {
    std::optional<std::vector<int64_t>> pad =
        foldZeroPad(forward(2), {0, 0, 1, 1}, {0, 0, high, high},
                    {1, 1, 8, 8}, {3, 3}, {4, 4});
    ASSERT_TRUE(pad);
    EXPECT_EQ(*pad, (std::vector<int64_t>{1, 1}));
  }
}

/// Expects foldZeroPad to refuse with `reason`.
void expectNoFold(const ConvPattern &p, const std::vector<int64_t> &low,
                  const std::vector<int64_t> &high,
                  const std::vector<int64_t> &extents,
                  const std::vector<int64_t> &kernel,
                  const std::vector<int64_t> &output,
                  const std::string &reason) {
  std::string whyNot;
  EXPECT_FALSE(foldZeroPad(p, low, high, extents, kernel, output, &whyNot));
  EXPECT_EQ(whyNot, reason);
}

TEST(ConvPatternTest, KeepsPadsThatCuDNNCannotTake) {
  // 'same' padding of an even kernel: low 0, high 1 (stride 1).
  expectNoFold(forward(1), {0, 0, 0, 0}, {0, 0, 1, 1}, {1, 1, 8, 8}, {2, 2},
               {8, 8}, "the pad is asymmetric (cuDNN pads both sides alike)");
  // Low 1, high 0 at stride 1: cuDNN would compute one more output.
  expectNoFold(forward(1), {0, 0, 1, 1}, {0, 0, 0, 0}, {1, 1, 8, 8}, {3, 3},
               {7, 7}, "the pad is asymmetric (cuDNN pads both sides alike)");
  expectNoFold(forward(1), {0, 1, 1, 1}, {0, 1, 1, 1}, {1, 1, 8, 8}, {3, 3},
               {8, 8}, "the pad is not only spatial");
  expectNoFold(forward(1), {0, 0, 3, 3}, {0, 0, 3, 3}, {1, 1, 8, 8}, {3, 3},
               {12, 12}, "a pad is not smaller than the kernel");
  expectNoFold(forward(1), {0, 0, -1, 0}, {0, 0, 1, 0}, {1, 1, 8, 8}, {3, 3},
               {6, 6}, "a pad is negative or an extent is not positive");
  expectNoFold(forward(1), {0, 0, 1, 1}, {0, 0, 1, 1}, {1, 1, 8, 8}, {3, 3},
               {7, 8}, "the output extent does not follow from the padded "
                       "image");
  expectNoFold(forward(1), {0, 0, 1}, {0, 0, 1}, {1, 1, 8}, {3}, {8},
               "the pad does not match the rank of the convolution");
}

/// One dimension of a convolution on the padded image, as the op computes
/// it (`padded`), or with cuDNN's symmetric padding `pad` (image elements
/// outside [0, in) read as zero).
std::vector<double> convolve1D(const std::vector<double> &x,
                               const std::vector<double> &w, int64_t stride,
                               int64_t pad, int64_t outputs) {
  std::vector<double> y(outputs, 0.0);
  for (int64_t o = 0; o < outputs; ++o)
    for (int64_t k = 0; k < int64_t(w.size()); ++k) {
      int64_t i = o * stride + k - pad;
      if (i >= 0 && i < int64_t(x.size()))
        y[o] += x[i] * w[k];
    }
  return y;
}

TEST(ConvPatternTest, FoldAgreesWithThePaddedConvolution) {
  // Every small 1-D case: when the pad folds, cuDNN's symmetric padding
  // computes the op's outputs; when it is asymmetric, cuDNN's output
  // extent differs from the op's.
  unsigned folded = 0, asymmetric = 0;
  for (int64_t in = 1; in <= 7; ++in)
    for (int64_t k = 1; k <= 4; ++k)
      for (int64_t s = 1; s <= 3; ++s)
        for (int64_t lo = 0; lo < k; ++lo)
          for (int64_t hi = 0; hi <= 4; ++hi) {
            if (in + lo + hi < k)
              continue;
            int64_t out = (in + lo + hi - k) / s + 1;
            IndexMap x{loop(0), loop(3), window(2, s, 4)};
            IndexMap w{loop(1), loop(3), loop(4)};
            IndexMap y{loop(0), loop(1), loop(2)};
            ConvPattern p = *matchConvPattern({x, w, y}, 5);
            std::string whyNot;
            std::optional<std::vector<int64_t>> pad = foldZeroPad(
                p, {0, 0, lo}, {0, 0, hi}, {1, 1, in}, {k}, {out}, &whyNot);
            std::vector<double> xs(in), ws(k), padded(lo + in + hi, 0.0);
            for (int64_t i = 0; i < in; ++i)
              padded[lo + i] = xs[i] = 1.0 + i * 0.5;
            for (int64_t i = 0; i < k; ++i)
              ws[i] = 2.0 - i;
            std::vector<double> expected = convolve1D(padded, ws, s, 0, out);
            if (pad) {
              ++folded;
              ASSERT_EQ(*pad, (std::vector<int64_t>{lo}));
              EXPECT_EQ(convolve1D(xs, ws, s, lo, out), expected)
                  << in << " " << k << " " << s << " " << lo << " " << hi;
            } else {
              ++asymmetric;
              EXPECT_EQ(whyNot,
                        "the pad is asymmetric (cuDNN pads both sides alike)");
              bool fits = in + 2 * lo >= k;
              EXPECT_TRUE(!fits || (in + 2 * lo - k) / s + 1 != out)
                  << in << " " << k << " " << s << " " << lo << " " << hi;
            }
          }
  EXPECT_GT(folded, 100u);
  EXPECT_GT(asymmetric, 100u);
}

} // namespace
