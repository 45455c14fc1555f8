//===- ConvMatcher.cpp - Recognising convolutions in linalg ---------------===//
//
// Finds the linalg ops that a library convolution computes: the named
// convolutions and tofu-autodiff's `linalg.generic` data and filter
// gradients. The indexing maps are turned into the plain form of
// ConvPattern.h and matched there; this file adds what needs MLIR (the
// multiply-accumulate body, element types, static extents).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"

#include "tofu/Runtime/ConvPlan.h"

#include "llvm/Support/MathExtras.h"

using namespace mlir;

namespace {

/// Appends `e` times `scale` to `out` as `coefficient * loop` terms; false
/// when `e` is not a sum of loops times constants.
bool appendTerms(AffineExpr e, int64_t scale, tofu::conv::IndexExpr &out) {
  if (auto dim = dyn_cast<AffineDimExpr>(e)) {
    out.push_back({dim.getPosition(), scale});
    return true;
  }
  auto binary = dyn_cast<AffineBinaryOpExpr>(e);
  if (!binary)
    return false;
  if (e.getKind() == AffineExprKind::Add)
    return appendTerms(binary.getLHS(), scale, out) &&
           appendTerms(binary.getRHS(), scale, out);
  auto factor = dyn_cast<AffineConstantExpr>(binary.getRHS());
  int64_t product = 0;
  if (e.getKind() != AffineExprKind::Mul || !factor ||
      llvm::MulOverflow(scale, factor.getValue(), product))
    return false;
  return appendTerms(binary.getLHS(), product, out);
}

std::optional<tofu::conv::ConvPattern> fail(std::string *whyNot,
                                            const char *reason) {
  if (whyNot)
    *whyNot = reason;
  return std::nullopt;
}

} // namespace

std::optional<tofu::conv::ConvPattern>
tofu::matchConvolution(linalg::LinalgOp op, std::string *whyNot,
                       bool allowGroups) {
  if (whyNot)
    whyNot->clear();
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      op->getNumRegions() != 1 || op.hasIndexSemantics())
    return std::nullopt;
  std::vector<conv::IndexMap> maps;
  for (AffineMap map : op.getIndexingMapsArray()) {
    conv::IndexMap &converted = maps.emplace_back();
    for (AffineExpr e : map.getResults())
      if (!appendTerms(e, 1, converted.emplace_back()))
        return std::nullopt;
  }
  if (!conv::hasWindowedIndex(maps) || !isMultiplyAccumulate(op))
    return std::nullopt;
  std::optional<conv::ConvPattern> pattern =
      conv::matchConvPattern(maps, op.getNumLoops(), whyNot, allowGroups);
  if (!pattern)
    return std::nullopt;

  if (!getLibraryElementType(op))
    return fail(whyNot, "the operands are not all f32 or all f64");
  // The libraries derive the output extent from the image, the kernel and the
  // stride; an op that computes fewer outputs is left to generated kernels
  // (checked here for static shapes, by the runtime otherwise).
  auto image = cast<ShapedType>(op->getOperand(pattern->image).getType());
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d = 0, e = pattern->getSpatialRank(); d < e; ++d) {
    int64_t in = image.getDimSize(pattern->getFirstSpatialDim() + d);
    int64_t kernel = ranges[pattern->kernelLoops[d]];
    int64_t out = ranges[pattern->outputLoops[d]];
    if (ShapedType::isDynamic(in) || ShapedType::isDynamic(kernel) ||
        ShapedType::isDynamic(out))
      continue;
    if (!tofu::gpu::isConsistentExtent(in, kernel, out, pattern->strides[d]))
      return fail(whyNot, "the output extent does not follow from the image "
                          "extent, the kernel and the stride");
  }
  return pattern;
}
