//===- UnitWindows.cpp - 1x1 convolutions as batched products -------------===//
//
// Implements tofu-cpu-unit-windows: a forward convolution or data gradient
// whose window is one element (1x1) with unit strides is a product batched
// over the images, `nchw,fc->nfhw` and `fc,nfhw->nchw`. It becomes that
// product as a linalg.generic on the filter collapsed to F x C, which the
// shared GEMM rule takes as one OpenBLAS call per image (a batch loop that
// the filter does not hold: stride 0), which ran faster than oneDNN's 1x1
// kernels on an Intel Xeon (docs/cpu.md, stage 0b). The filter gradient sums
// over the images, a K that spans the batch and the pixels, and stays a
// convolution.
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

/// Whether `pattern` on `op` is a forward convolution or data gradient with
/// a 1x1 window and unit strides on tensors of static shapes.
bool isUnitWindow(linalg::LinalgOp op, const tofu::conv::ConvPattern &p) {
  if (!op.hasPureTensorSemantics() ||
      p.kind == tofu::conv::ConvKind::BackwardFilter)
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
/// the loops (n, f, c, spatial..) for a forward convolution and (n, c, f,
/// spatial..) for a data gradient: the written tensor's loops first, then
/// the summed one, the operands in the order `op` has them.
void rewrite(linalg::LinalgOp op, const tofu::conv::ConvPattern &p,
             RewriterBase &rewriter) {
  Location loc = op.getLoc();
  MLIRContext *ctx = op.getContext();
  rewriter.setInsertionPoint(op);
  Value filter = op->getOperand(p.filter);
  ReassociationIndices kernelDims = {1};
  for (unsigned d = 0; d < p.getSpatialRank(); ++d)
    kernelDims.push_back(2 + d);
  Value collapsed = tensor::CollapseShapeOp::create(
      rewriter, loc, filter,
      SmallVector<ReassociationIndices>{{0}, kernelDims});

  bool forward = p.kind == tofu::conv::ConvKind::Forward;
  unsigned spatial = p.getSpatialRank();
  // Loops: 0 = n, 1 = the written channels, 2 = the summed ones, then the
  // pixels.
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
  iterators[2] = utils::IteratorType::reduction;
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < 2; ++i)
    inputs.push_back(i == p.filter ? collapsed : op->getOperand(i));
  Value init = op->getOperand(2);
  auto product = linalg::GenericOp::create(
      rewriter, loc, init.getType(), inputs, ValueRange{init}, maps, iterators,
      [&](OpBuilder &b, Location bodyLoc, ValueRange args) {
        Value mul = arith::MulFOp::create(b, bodyLoc, args[0], args[1]);
        Value sum = arith::AddFOp::create(b, bodyLoc, args[2], mul);
        linalg::YieldOp::create(b, bodyLoc, sum);
      });
  // The op's tags (tofu.op_id, tofu.grad_of, ...), not a named op's own.
  for (NamedAttribute attr : op->getDiscardableAttrs())
    if (attr.getName().getValue().starts_with("tofu."))
      product->setAttr(attr.getName(), attr.getValue());
  rewriter.replaceOp(op, product->getResults());
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
        if (p->filter != 2 && isUnitWindow(op, *p))
          found.push_back({op, *p});
    });
    IRRewriter rewriter(&getContext());
    for (auto &[op, pattern] : found)
      rewrite(op, pattern, rewriter);
  }
};

} // namespace
