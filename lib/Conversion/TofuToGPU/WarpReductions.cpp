//===- WarpReductions.cpp - Row reductions as one warp per row ------------===//
//
// Implements tofu-gpu-warp-reductions: a linalg.generic on buffers that
// reduces rows becomes a block of 32 threads per row whose lanes reduce
// strided elements and combine their partial results with warp shuffles.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUWARPREDUCTIONS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

constexpr int64_t kWarpSize = 32;

struct TofuGPUWarpReductionsPass
    : public tofu::impl::TofuGPUWarpReductionsBase<TofuGPUWarpReductionsPass> {
  using Base::Base;
  void runOnOperation() override;
};

/// The row reduction that `op` is, if it is one a warp reduces: its
/// combiner and neutral element.
std::pair<Operation *, TypedAttr> getWarpReduction(linalg::GenericOp op,
                                                   int64_t minLength) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      tofu::isLibraryOp(op))
    return {};
  // The block and thread loops must be the kernel's own: inside another
  // parallel loop, gpu-map-parallel-loops would map the lanes to a
  // sequential loop and the shuffles would mix rows.
  if (op->getParentOfType<scf::ParallelOp>() ||
      op->getParentOfType<scf::ForallOp>() ||
      op->getParentOfType<gpu::LaunchOp>())
    return {};
  auto out = dyn_cast<MemRefType>(op.getDpsInits()[0].getType());
  if (!out || !out.getElementType().isF32())
    return {};
  SmallVector<unsigned> reductions;
  op.getReductionDims(reductions);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (reductions.empty() || llvm::any_of(ranges, ShapedType::isDynamic))
    return {};
  int64_t length = 1;
  for (unsigned loop : reductions)
    length *= ranges[loop];
  // The lanes walk the reduction loops row-major: the last one must walk
  // the contiguous last dimension of the largest input.
  std::optional<unsigned> row = tofu::getRowLoop(op);
  if (length < minLength || row != reductions.back())
    return {};
  Value target = op.getDpsInits()[0];
  for (OpOperand *input : op.getDpsInputOperands()) {
    auto type = dyn_cast<MemRefType>(input->get().getType());
    // A lane reads its inputs before lane 0 writes the output: an output
    // that is also an input would be read unchanged.
    if (!type || input->get() == target)
      return {};
    AffineMap map = op.getMatchingIndexingMap(input);
    if (type.getRank() > 0 && map.getResults().back().isFunctionOfDim(*row) &&
        !type.isLastDimUnitStride())
      return {};
  }
  // Each row its own output element (every parallel loop a result of the
  // output's map, no reduction loop in it): the blocks' lanes 0 never
  // update one element together.
  AffineMap outMap = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  for (unsigned loop : reductions)
    if (outMap.isFunctionOfDim(loop))
      return {};
  SmallVector<unsigned> parallel;
  op.getParallelDims(parallel);
  for (unsigned loop : parallel)
    if (!llvm::is_contained(outMap.getResults(),
                            getAffineDimExpr(loop, op.getContext())))
      return {};
  return tofu::getReductionCombiner(op);
}

/// `combiner` applied to `acc` (in place of the output's block argument
/// `out`) and `value` (in place of its other operand).
Value combine(OpBuilder &b, Operation *combiner, BlockArgument out, Value acc,
              Value value) {
  IRMapping map;
  for (Value operand : combiner->getOperands())
    map.map(operand, operand == out ? acc : value);
  return b.clone(*combiner, map)->getResult(0);
}

/// The values of `loops` (in order, the last fastest) for the linear index
/// `linear` of their row-major product.
void delinearize(OpBuilder &b, Location loc, Value linear,
                 ArrayRef<unsigned> loops, ArrayRef<int64_t> ranges,
                 SmallVectorImpl<Value> &ivs) {
  for (unsigned loop : llvm::reverse(loops)) {
    Value range = arith::ConstantIndexOp::create(b, loc, ranges[loop]);
    ivs[loop] = arith::RemUIOp::create(b, loc, linear, range);
    linear = arith::DivUIOp::create(b, loc, linear, range);
  }
}

/// The indices into an operand of `map` at the loop values `ivs`.
SmallVector<Value> getIndices(OpBuilder &b, Location loc, AffineMap map,
                              ArrayRef<Value> ivs) {
  SmallVector<Value> indices;
  for (unsigned i = 0; i < map.getNumResults(); ++i)
    indices.push_back(
        affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), ivs));
  return indices;
}

void lowerToWarps(RewriterBase &rewriter, linalg::GenericOp op,
                  Operation *combiner, TypedAttr neutral) {
  Location loc = op.getLoc();
  rewriter.setInsertionPoint(op);
  SmallVector<unsigned> parallel, reductions;
  op.getParallelDims(parallel);
  op.getReductionDims(reductions);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  int64_t rows = 1, length = 1;
  for (unsigned loop : parallel)
    rows *= ranges[loop];
  for (unsigned loop : reductions)
    length *= ranges[loop];
  auto index = [&](int64_t v) {
    return arith::ConstantIndexOp::create(rewriter, loc, v).getResult();
  };
  Value zero = index(0), one = index(1);
  // One block per row, one warp per block.
  auto blocks =
      scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                              ValueRange{index(rows)}, ValueRange{one});
  rewriter.setInsertionPoint(blocks.getBody()->getTerminator());
  Value row = blocks.getInductionVars()[0];
  auto lanes = scf::ParallelOp::create(rewriter, loc, ValueRange{index(0)},
                                       ValueRange{index(kWarpSize)},
                                       ValueRange{index(1)});
  rewriter.setInsertionPoint(lanes.getBody()->getTerminator());
  Value lane = lanes.getInductionVars()[0];
  SmallVector<Value> ivs(op.getNumLoops());
  delinearize(rewriter, loc, row, parallel, ranges, ivs);
  Value init = arith::ConstantOp::create(rewriter, loc, neutral);
  BlockArgument out = op.getRegionOutputArgs()[0];
  // Lane j: elements j, j + 32, ... of the row.
  auto strided = scf::ForOp::create(
      rewriter, loc, lane, index(length), index(kWarpSize), ValueRange{init},
      [&](OpBuilder &b, Location loc, Value k, ValueRange acc) {
        SmallVector<Value> loopValues(ivs);
        delinearize(b, loc, k, reductions, ranges, loopValues);
        IRMapping map;
        for (auto [arg, input] :
             llvm::zip(op.getRegionInputArgs(), op.getDpsInputOperands()))
          map.map(arg, memref::LoadOp::create(
                           b, loc, input->get(),
                           getIndices(b, loc, op.getMatchingIndexingMap(input),
                                      loopValues)));
        map.map(out, acc[0]);
        for (Operation &bodyOp : op.getBlock()->without_terminator())
          b.clone(bodyOp, map);
        auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
        scf::YieldOp::create(b, loc, map.lookup(yield.getValues()[0]));
      });
  // The 32 partial results combined across the warp, every lane holding
  // the whole row's at the end.
  Value partial = strided.getResult(0);
  Value width = arith::ConstantIntOp::create(rewriter, loc, kWarpSize, 32);
  for (int64_t offset = kWarpSize / 2; offset >= 1; offset /= 2) {
    Value shift = arith::ConstantIntOp::create(rewriter, loc, offset, 32);
    auto shuffle = gpu::ShuffleOp::create(rewriter, loc, partial, shift, width,
                                          gpu::ShuffleMode::XOR);
    partial =
        combine(rewriter, combiner, out, partial, shuffle.getShuffleResult());
  }
  Value first = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::eq,
                                      lane, zero);
  auto store = scf::IfOp::create(rewriter, loc, first, /*withElse=*/false);
  rewriter.setInsertionPoint(store.thenBlock()->getTerminator());
  // The output does not depend on the reduction loops.
  for (unsigned loop : reductions)
    ivs[loop] = zero;
  Value target = op.getDpsInits()[0];
  SmallVector<Value> indices = getIndices(
      rewriter, loc, op.getMatchingIndexingMap(op.getDpsInitOperand(0)), ivs);
  Value old = memref::LoadOp::create(rewriter, loc, target, indices);
  memref::StoreOp::create(rewriter, loc,
                          combine(rewriter, combiner, out, old, partial),
                          target, indices);
  rewriter.eraseOp(op);
}

} // namespace

void TofuGPUWarpReductionsPass::runOnOperation() {
  if (minLength < 1) {
    getOperation().emitError("tofu-gpu-warp-reductions: min-length must be "
                             "at least 1");
    return signalPassFailure();
  }
  SmallVector<std::tuple<linalg::GenericOp, Operation *, TypedAttr>> ops;
  getOperation().walk([&](linalg::GenericOp op) {
    if (op->getParentOfType<gpu::GPUModuleOp>())
      return;
    auto [combiner, neutral] = getWarpReduction(op, minLength);
    if (combiner)
      ops.emplace_back(op, combiner, neutral);
  });
  IRRewriter rewriter(&getContext());
  for (auto [op, combiner, neutral] : ops)
    lowerToWarps(rewriter, op, combiner, neutral);
}
