//===- ConvPattern.cpp - Convolutions from indexing maps ------------------===//
//
// Implements the MLIR-free rules of ConvPattern.h: the image is the one
// operand with windowed indices `o * s + k`; its plain dimensions name the
// batch and channel loops, which in turn name the output (the operand that
// shares the batch loop) and the filter (the one that shares the channel
// loop); every loop must then play exactly one of the 3 + 2 * spatial
// roles. A zero pad of the image folds into cuDNN's padding when cuDNN's
// symmetric padding computes the same outputs.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/ConvPattern.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <set>

using namespace tofu::conv;

namespace {

/// The loop of a plain index (one loop, coefficient 1), or -1.
int64_t plainLoop(const IndexExpr &e) {
  if (e.size() != 1 || e[0].coefficient != 1)
    return -1;
  return e[0].loop;
}

/// Whether every dimension of `map` is a plain index.
bool isPlain(const IndexMap &map) {
  return std::all_of(map.begin(), map.end(),
                     [](const IndexExpr &e) { return plainLoop(e) >= 0; });
}

std::optional<ConvPattern> fail(std::string *whyNot, const char *reason) {
  if (whyNot)
    *whyNot = reason;
  return std::nullopt;
}

} // namespace

bool tofu::conv::hasWindowedIndex(const std::vector<IndexMap> &maps) {
  for (const IndexMap &map : maps)
    for (const IndexExpr &e : map)
      if (e.size() > 1)
        return true;
  return false;
}

std::string ConvPattern::verify(unsigned numLoops) const {
  unsigned spatial = getSpatialRank();
  if (spatial < 1 || spatial > 2)
    return "the spatial rank is not 1 or 2";
  if (kernelLoops.size() != spatial || strides.size() != spatial)
    return "the spatial loops and strides disagree in number";
  std::set<unsigned> operands{image, filter, output};
  if (operands != std::set<unsigned>{0, 1, 2})
    return "the operands are not 0, 1 and 2";
  ConvKind expected = output == 2  ? ConvKind::Forward
                      : image == 2 ? ConvKind::BackwardData
                                   : ConvKind::BackwardFilter;
  if (kind != expected)
    return "the kind does not match the operand written";
  if (depthwise != (filterLoop == channelLoop))
    return "the filter loop is the channel loop exactly when depthwise";
  if (depthwise && grouped)
    return "a depthwise convolution has no group dimension";
  std::set<unsigned> loops{batchLoop, channelLoop, filterLoop};
  if (grouped)
    loops.insert(groupLoop);
  loops.insert(outputLoops.begin(), outputLoops.end());
  loops.insert(kernelLoops.begin(), kernelLoops.end());
  unsigned roles = (depthwise ? 2 : 3) + (grouped ? 1 : 0) + 2 * spatial;
  if (loops.size() != roles || numLoops != loops.size() ||
      *loops.rbegin() >= numLoops)
    return "the loops are not distinct or not all loops of the op";
  for (int64_t s : strides)
    if (s < 1)
      return "a stride is not positive";
  return "";
}

void ConvPattern::dump() const {
  const char *names[] = {"forward", "backward-data", "backward-filter"};
  llvm::errs() << (depthwise ? "depthwise conv "
                   : grouped ? "grouped conv "
                             : "conv ")
               << names[static_cast<int>(kind)] << " image " << image
               << " filter " << filter << " output " << output << " loops n "
               << batchLoop << " c " << channelLoop << " f " << filterLoop;
  for (unsigned i = 0; i < getSpatialRank(); ++i)
    llvm::errs() << " (o " << outputLoops[i] << " k " << kernelLoops[i] << " s "
                 << strides[i] << ")";
  llvm::errs() << "\n";
}

std::optional<ConvPattern>
tofu::conv::matchConvPattern(const std::vector<IndexMap> &maps,
                             unsigned numLoops, std::string *whyNot,
                             bool allowGroups) {
  if (whyNot)
    whyNot->clear();
  if (maps.size() != 3 || !hasWindowedIndex(maps))
    return std::nullopt;

  // The image: the one operand with windowed indices.
  ConvPattern p;
  std::vector<unsigned> windowed;
  for (unsigned i = 0; i < 3; ++i)
    if (!isPlain(maps[i]))
      windowed.push_back(i);
  if (windowed.size() != 1)
    return fail(whyNot, "more than one operand has windowed indices");
  p.image = windowed[0];
  const IndexMap &image = maps[p.image];
  if (image.size() < 3)
    return fail(whyNot, "the windowed operand has fewer than 3 dimensions");
  // A group dimension: three plain dimensions before one or two windowed
  // ones (N, G, C, spatial..).
  unsigned windows = 0;
  for (const IndexExpr &e : image)
    windows += plainLoop(e) < 0;
  p.grouped = image.size() == 3 + windows && windows >= 1 && windows <= 2 &&
              plainLoop(image[0]) >= 0 && plainLoop(image[1]) >= 0 &&
              plainLoop(image[2]) >= 0;
  if (p.grouped && !allowGroups)
    return fail(whyNot,
                "a grouped convolution, which this backend does not call");
  if (!p.grouped && image.size() > 4)
    return fail(whyNot, "only 1-D and 2-D convolutions are library calls");
  unsigned first = p.getFirstSpatialDim();
  unsigned spatial = image.size() - first;

  // Batch, groups and channels: the image's first dimensions (NCHW, or
  // NGCHW).
  int64_t batch = plainLoop(image[0]), channel = plainLoop(image[first - 1]);
  if (batch < 0 || channel < 0)
    return fail(whyNot, "the image is not in NCHW layout");
  p.batchLoop = batch;
  p.channelLoop = channel;
  if (p.grouped)
    p.groupLoop = plainLoop(image[1]);
  // Where the filter's own dimensions start: after its group dimension.
  unsigned f0 = p.grouped ? 1 : 0;

  // The output shares the batch loop (its dimension 0), the filter the
  // channel loop (its dimension 1, or 0 for a depthwise filter, which has
  // no filter dimension and one dimension fewer).
  unsigned others[2] = {(p.image + 1) % 3, (p.image + 2) % 3};
  bool found[2] = {false, false};
  for (unsigned i : others) {
    const IndexMap &map = maps[i];
    bool depthwiseFilter = !p.grouped && map.size() + 1 == image.size() &&
                           plainLoop(map[0]) == channel &&
                           plainLoop(map[0]) != batch;
    if (map.size() != image.size() && !depthwiseFilter)
      return fail(whyNot, "the operands differ in rank");
    if (depthwiseFilter && !allowGroups)
      return fail(whyNot, "a depthwise convolution, which this backend "
                          "does not call");
    if (p.grouped && (plainLoop(map[0]) == batch
                          ? plainLoop(map[1]) != int64_t(p.groupLoop)
                          : plainLoop(map[0]) != int64_t(p.groupLoop)))
      return fail(whyNot, "the group dimension is not after the batch of "
                          "the output and first in the filter");
    if (depthwiseFilter && !found[1]) {
      p.filter = i;
      p.depthwise = found[1] = true;
    } else if (plainLoop(map[0]) == batch && !found[0]) {
      p.output = i;
      found[0] = true;
    } else if (plainLoop(map[f0 + 1]) == channel && !found[1]) {
      p.filter = i;
      found[1] = true;
    }
  }
  if (!found[0] || !found[1])
    return fail(whyNot, "the filter is not in FCHW or the output not in "
                        "NFHW layout");
  const IndexMap &filter = maps[p.filter], &output = maps[p.output];
  p.filterLoop = plainLoop(filter[f0]);
  if (plainLoop(output[first - 1]) != static_cast<int64_t>(p.filterLoop))
    return fail(whyNot, "the filter and the output do not share the "
                        "filter loop");
  // Where the kernel dimensions of the filter start.
  unsigned kernelDim = p.depthwise ? 1 : f0 + 2;

  // Each window: output loop * stride + kernel loop * 1.
  for (unsigned d = 0; d < spatial; ++d) {
    unsigned o = plainLoop(output[first + d]),
             k = plainLoop(filter[kernelDim + d]);
    const IndexExpr &window = image[first + d];
    if (window.size() != 2)
      return fail(whyNot, "a window index is not the sum of two loops");
    const Term *outTerm = nullptr, *kernelTerm = nullptr;
    for (const Term &t : window) {
      if (t.loop == o && !outTerm)
        outTerm = &t;
      else if (t.loop == k && !kernelTerm)
        kernelTerm = &t;
    }
    if (!outTerm || !kernelTerm)
      return fail(whyNot, "a window index does not combine an output loop "
                          "and a kernel loop");
    if (kernelTerm->coefficient != 1)
      return fail(whyNot, "the dilation is not 1");
    if (outTerm->coefficient < 1)
      return fail(whyNot, "a stride is not positive");
    p.outputLoops.push_back(o);
    p.kernelLoops.push_back(k);
    p.strides.push_back(outTerm->coefficient);
  }

  p.kind = p.output == 2  ? ConvKind::Forward
           : p.image == 2 ? ConvKind::BackwardData
                          : ConvKind::BackwardFilter;
  if (!p.verify(numLoops).empty())
    return fail(whyNot, "a loop is not a batch, channel, filter, output or "
                        "kernel loop of the convolution");
  return p;
}

std::optional<std::vector<int64_t>> tofu::conv::foldZeroPad(
    const ConvPattern &p, const std::vector<int64_t> &low,
    const std::vector<int64_t> &high, const std::vector<int64_t> &extents,
    const std::vector<int64_t> &kernel, const std::vector<int64_t> &output,
    std::string *whyNot) {
  auto none = [&](const char *reason) {
    if (whyNot)
      *whyNot = reason;
    return std::nullopt;
  };
  if (whyNot)
    whyNot->clear();
  unsigned spatial = p.getSpatialRank();
  if (low.size() != 2 + spatial || high.size() != low.size() ||
      extents.size() != low.size() || kernel.size() != spatial ||
      output.size() != spatial || p.strides.size() != spatial)
    return none("the pad does not match the rank of the convolution");
  if (low[0] != 0 || low[1] != 0 || high[0] != 0 || high[1] != 0)
    return none("the pad is not only spatial");
  std::vector<int64_t> padding;
  for (unsigned d = 0; d < spatial; ++d) {
    int64_t lo = low[2 + d], hi = high[2 + d], in = extents[2 + d];
    int64_t k = kernel[d], out = output[d], s = p.strides[d];
    if (lo < 0 || hi < 0 || in < 1 || k < 1 || s < 1)
      return none("a pad is negative or an extent is not positive");
    if (lo >= k)
      return none("a pad is not smaller than the kernel");
    if (in + lo + hi < k || out != (in + lo + hi - k) / s + 1)
      return none("the output extent does not follow from the padded image");
    if (in + 2 * lo < k || out != (in + 2 * lo - k) / s + 1)
      return none("the pad is asymmetric (cuDNN pads both sides alike)");
    padding.push_back(lo);
  }
  return padding;
}
