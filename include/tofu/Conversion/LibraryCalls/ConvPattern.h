//===- ConvPattern.h - Convolutions from indexing maps ----------*- C++ -*-===//
//
// Recognises a 1-D or 2-D convolution from the indexing maps of a
// multiply-accumulate op, whichever of its three tensors the op writes:
// the forward convolution writes the output, tofu-autodiff's data gradient
// writes the image, its filter gradient writes the filter. Plain C++
// without MLIR, so that the rules are unit tested on their own; the linalg
// side (element types, the body) is in ConvMatcher.cpp. Also the rule by
// which a constant zero pad of the image becomes the padding of the cuDNN
// call (ConvPadding.cpp finds the pads).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_CONVERSION_LIBRARYCALLS_CONVPATTERN_H
#define TOFU_CONVERSION_LIBRARYCALLS_CONVPATTERN_H

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tofu {
namespace conv {

/// One term `coefficient * loop` of an index expression.
struct Term {
  unsigned loop = 0;
  int64_t coefficient = 1;
};

/// The index of one dimension of an operand: the sum of its terms. An
/// expression with a constant part cannot be written in this form.
using IndexExpr = std::vector<Term>;

/// The indexing map of one operand: one expression per dimension.
using IndexMap = std::vector<IndexExpr>;

/// Which convolution the op computes, named after the tensor it writes.
enum class ConvKind {
  /// Y[n, f, o..] += X[n, c, o * s + k..] * W[f, c, k..]
  Forward,
  /// X[n, c, o * s + k..] += W[f, c, k..] * Y[n, f, o..] (data gradient)
  BackwardData,
  /// W[f, c, k..] += X[n, c, o * s + k..] * Y[n, f, o..] (filter gradient)
  BackwardFilter,
};

/// A convolution with dilation 1 on an NCHW image X (N, C, spatial..), an
/// FCHW filter W (F, C, kernel..) and an NFHW output Y (N, F, spatial..),
/// found in the maps of an op with two inputs and one output (operand
/// numbers 0, 1 and 2). A depthwise convolution (one filter per channel,
/// linalg's depthwise_conv_*_nchw_chw) has a CHW filter W (C, kernel..)
/// and an NCHW output: Y[n, c, o..] += X[n, c, o * s + k..] * W[c, k..].
/// A grouped convolution (linalg's conv_2d_ngchw_gfchw) has a group
/// dimension after the batch in the image X (N, G, C, spatial..) and the
/// output Y (N, G, F, spatial..), and first in the filter W (G, F, C,
/// kernel..): Y[n, g, f, o..] += X[n, g, c, o * s + k..] * W[g, f, c, k..].
struct ConvPattern {
  ConvKind kind = ConvKind::Forward;
  /// Operand numbers of the image, the filter and the output.
  unsigned image = 0, filter = 1, output = 2;
  /// Loops of the batch, the input channels and the filters (the channel
  /// loop again when depthwise).
  unsigned batchLoop = 0, channelLoop = 0, filterLoop = 0;
  bool depthwise = false;
  /// Whether the tensors have a group dimension, and its loop.
  bool grouped = false;
  unsigned groupLoop = 0;
  /// Per spatial dimension (outermost first): the output loop, the kernel
  /// loop and the stride.
  std::vector<unsigned> outputLoops, kernelLoops;
  std::vector<int64_t> strides;

  /// 1 or 2.
  unsigned getSpatialRank() const { return outputLoops.size(); }
  /// The first spatial dimension of the image and the output: after the
  /// batch, the group and the channels.
  unsigned getFirstSpatialDim() const { return grouped ? 3 : 2; }
  /// Checks the invariants above; returns what is wrong or "".
  std::string verify(unsigned numLoops) const;
  void dump() const;
};

/// Whether some dimension of some map is indexed by a sum of loops: the
/// mark of a convolution (or of another windowed op such as pooling).
bool hasWindowedIndex(const std::vector<IndexMap> &maps);

/// Matches the maps of the two inputs and the output (in operand order) of
/// an op with `numLoops` loops. Returns std::nullopt when they are not such
/// a convolution; then `whyNot` (if given) says why, and stays empty when
/// no map has a windowed index (the op is no convolution at all). Depthwise
/// and grouped convolutions only with `allowGroups` (for a backend whose
/// entry points take groups). Not matched: 3-D and higher convolutions,
/// dilations other than 1, depthwise convolutions with several filters
/// per channel, other layouts (NHWC, HWCF, groups elsewhere than after the
/// batch), constant offsets.
/// Iterator types are not looked at: the op's value is the sum over its
/// whole iteration space whatever they say (tofu-autodiff marks the window
/// loops of a data gradient parallel).
std::optional<ConvPattern> matchConvPattern(const std::vector<IndexMap> &maps,
                                            unsigned numLoops,
                                            std::string *whyNot = nullptr,
                                            bool allowGroups = false);

/// The padding of a cuDNN call that computes the convolution `p` on an
/// image padded with zeros by `low` and `high` elements per dimension
/// (image rank: 2 + the spatial rank) from an image of `extents`; `kernel`
/// and `output` are the extents of the kernel and output loops per
/// spatial dimension. cuDNN pads both sides of a dimension alike: the
/// padding is `low`, and the fold is exact when cuDNN's output extent with
/// it, (in + 2 * low - kernel) / stride + 1, is the op's. A high pad that
/// differs from the low one is fine where the stride never reaches the
/// difference. Returns std::nullopt with `whyNot` (if given) when the pad
/// must stay a copy: a pad of the batch or channels, a negative pad, a pad
/// of at least the kernel extent (outputs of padding only), an output
/// extent that does not follow from the padded image, or an asymmetric
/// pad that cuDNN's symmetric padding would change.
std::optional<std::vector<int64_t>>
foldZeroPad(const ConvPattern &p, const std::vector<int64_t> &low,
            const std::vector<int64_t> &high,
            const std::vector<int64_t> &extents,
            const std::vector<int64_t> &kernel,
            const std::vector<int64_t> &output, std::string *whyNot = nullptr);

} // namespace conv
} // namespace tofu

#endif // TOFU_CONVERSION_LIBRARYCALLS_CONVPATTERN_H
