//===- UnitWindows.cpp - 1x1 convolutions as batched products -------------===//
//
// Implements tofu-cpu-unit-windows: a convolution whose window is one
// element (1x1) with unit strides is a product batched over the images:
// `nchw,fc->nfhw` forward, `fc,nfhw->nchw` for the data gradient and
// `nfhw,nchw->fc` for the filter gradient. It becomes that product as a
// linalg.generic on the filter collapsed to F x C, which the shared GEMM
// rule takes as one OpenBLAS call per image (forward and data gradient: a
// batch loop that the filter does not hold, stride 0; filter gradient: an
// accumulation loop, each image's product added into the filter's), which
// ran faster than oneDNN's 1x1 kernels on an Intel Xeon (docs/cpu.md, stage
// 0b).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"
#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUCPUUNITWINDOWS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// Whether `pattern` on `op` is a convolution or gradient with a 1x1 window
/// and unit strides on tensors of static shapes.
bool isUnitWindow(linalg::LinalgOp op, const tofu::conv::ConvPattern &p) {
  if (!op.hasPureTensorSemantics())
    return false;
  for (OpOperand &operand : op->getOpOperands())
    if (!cast<ShapedType>(operand.get().getType()).hasStaticShape())
      return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  for (unsigned d = 0; d < p.getSpatialRank(); ++d)
    if (ranges[p.kernelLoops[d]] != 1 || p.strides[d] != 1)
      return false;
  return true;
}

/// Rewrites `op` as the product of the filter (F x C) and the images, with
/// the loops (n, f, c, spatial..) for a forward convolution and a filter
/// gradient and (n, c, f, spatial..) for a data gradient, the operands in
/// the order `op` has them. A filter gradient writes the collapsed filter
/// and expands its result back.
void rewrite(linalg::LinalgOp op, const tofu::conv::ConvPattern &p,
             RewriterBase &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  rewriter.setInsertionPoint(op);
  Value filter = op->getOperand(p.filter);
  ReassociationIndices kernelDims = {1};
  for (unsigned d = 0; d < p.getSpatialRank(); ++d)
    kernelDims.push_back(2 + d);
  auto collapse = [&](Value v) -> Value {
    return tensor::CollapseShapeOp::create(
        rewriter, loc, v, SmallVector<ReassociationIndices>{{0}, kernelDims});
  };

  bool filterGradient = p.kind == tofu::conv::ConvKind::BackwardFilter;
  bool forward = p.kind == tofu::conv::ConvKind::Forward || filterGradient;
  unsigned spatial = p.getSpatialRank();
  // Loops: 0 = n, 1 and 2 = the channels (the written ones first, but for
  // the filter gradient, which writes both), then the pixels.
  unsigned cLoop = forward ? 2 : 1, fLoop = forward ? 1 : 2;
  auto dim = [&](unsigned l) { return getAffineDimExpr(l, ctx); };
  SmallVector<AffineExpr> image{dim(0), dim(cLoop)};
  SmallVector<AffineExpr> output{dim(0), dim(fLoop)};
  for (unsigned d = 0; d < spatial; ++d) {
    image.push_back(dim(3 + d));
    output.push_back(dim(3 + d));
  }
  SmallVector<AffineExpr> weights{dim(fLoop), dim(cLoop)};
  unsigned numLoops = 3 + spatial;
  SmallVector<AffineMap> maps(3);
  maps[p.image] = AffineMap::get(numLoops, 0, image, ctx);
  maps[p.filter] = AffineMap::get(numLoops, 0, weights, ctx);
  maps[p.output] = AffineMap::get(numLoops, 0, output, ctx);
  SmallVector<utils::IteratorType> iterators(numLoops,
                                             utils::IteratorType::parallel);
  if (filterGradient) {
    iterators[0] = utils::IteratorType::reduction;
    for (unsigned d = 0; d < spatial; ++d)
      iterators[3 + d] = utils::IteratorType::reduction;
  } else {
    iterators[2] = utils::IteratorType::reduction;
  }
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < 2; ++i)
    inputs.push_back(i == p.filter ? collapse(filter) : op->getOperand(i));
  Value init = op->getOperand(2);
  if (filterGradient) {
    // A zero-filled filter gradient fills the collapsed filter instead, so
    // that the fill and the product write one buffer and the library call
    // takes the fill's place (beta 0).
    auto fill = filter.getDefiningOp<linalg::FillOp>();
    init =
        fill
            ? linalg::FillOp::create(rewriter, loc, fill.value(),
                                     collapse(fill.getDpsInitOperand(0)->get()))
                  .getResult(0)
            : collapse(filter);
  }
  linalg::GenericOp product = tofu::createMultiplyAccumulate(
      rewriter, op, inputs, init, maps, iterators);
  Value result = product->getResult(0);
  if (filterGradient)
    result = tensor::ExpandShapeOp::create(
        rewriter, loc, filter.getType(), result,
        SmallVector<ReassociationIndices>{{0}, kernelDims});
  rewriter.replaceOp(op, result);
}

struct TofuCPUUnitWindowsPass
    : public tofu::impl::TofuCPUUnitWindowsBase<TofuCPUUnitWindowsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, tofu::conv::ConvPattern>> found;
    getOperation().walk([&](linalg::LinalgOp op) {
      auto func = op->getParentOfType<func::FuncOp>();
      if (func && func->hasAttr(tofu::attrs::kDriver))
        return;
      if (std::optional<tofu::conv::ConvPattern> p = tofu::matchConvolution(op))
        if (isUnitWindow(op, *p))
          found.push_back({op, *p});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, pattern] : found)
      rewrite(op, pattern, rewriter);
  }
};

} // namespace
