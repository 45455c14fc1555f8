//===- RowReductions.cpp - Reductions along rows in registers -------------===//
//
// Implements tofu-cpu-row-reductions: a linalg reduction on buffers whose
// innermost loops are reductions over a long row becomes loops that carry
// the partial result in a register and may reassociate its sum, so that
// LLVM's loop vectorizer reduces the row in vector lanes (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUCPUROWREDUCTIONS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// A loop position for each result of `map` (std::nullopt for a constant
/// 0, a unit dimension such as a keepdim reduction's), or std::nullopt when
/// a result is neither.
std::optional<SmallVector<std::optional<unsigned>>>
getLoopPositions(AffineMap map) {
  SmallVector<std::optional<unsigned>> positions;
  for (AffineExpr e : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(e)) {
      positions.push_back(dim.getPosition());
      continue;
    }
    auto constant = dyn_cast<AffineConstantExpr>(e);
    if (!constant || constant.getValue() != 0)
      return std::nullopt;
    positions.push_back(std::nullopt);
  }
  return positions;
}

/// The float add, maximum or minimum that folds the output into the
/// yielded value of a one-output reduction, or null.
Operation *getCombiner(linalg::GenericOp op) {
  SmallVector<Operation *, 1> combiners;
  BlockArgument out = op.getRegionOutputArgs()[0];
  if (!out.hasOneUse() ||
      !matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return nullptr;
  if (!isa<arith::AddFOp, arith::MaximumFOp, arith::MinimumFOp,
           arith::MaxNumFOp, arith::MinNumFOp>(combiners[0]))
    return nullptr;
  return combiners[0];
}

/// Lowers `op` when it qualifies.
void lowerRowReduction(linalg::GenericOp op, int64_t minLength) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.hasIndexSemantics() || op.getNumReductionLoops() == 0)
    return;
  // The row: the innermost loops, while they are reductions (a batch
  // norm's sum over the height and width of an image).
  unsigned n = op.getNumLoops();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned row = n;
  while (row > 0 && iterators[row - 1] == utils::IteratorType::reduction)
    --row;
  if (row == n)
    return;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (llvm::any_of(extents, ShapedType::isDynamic))
    return;
  int64_t length = 1;
  for (unsigned l = row; l < n; ++l)
    length *= extents[l];
  if (length < minLength)
    return;
  Operation *combiner = getCombiner(op);
  if (!combiner)
    return;
  SmallVector<SmallVector<std::optional<unsigned>>> positions;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType())) {
      positions.emplace_back();
      continue;
    }
    auto p = getLoopPositions(op.getMatchingIndexingMap(&operand));
    if (!p)
      return;
    positions.push_back(*p);
  }
  // The output element stays the same along the row.
  unsigned init = op.getNumDpsInputs();
  if (llvm::any_of(positions[init], [&](std::optional<unsigned> p) {
        return p && *p >= row;
      }))
    return;

  OpBuilder b(op);
  Location loc = op.getLoc();
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value zero = constant(0), one = constant(1);
  // Loops outside the row, parallel or reductions (a batch norm's sum over
  // the images): the output element is loaded before each row and stored
  // after it.
  SmallVector<Value> ivs;
  for (unsigned l = 0; l < row; ++l) {
    auto loop = scf::ForOp::create(b, loc, zero, constant(extents[l]), one);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  auto indices = [&](unsigned operand) {
    SmallVector<Value> at;
    for (std::optional<unsigned> p : positions[operand])
      at.push_back(p ? ivs[*p] : zero);
    return at;
  };
  Value output = op.getDpsInits()[0];
  Value partial = memref::LoadOp::create(b, loc, output, indices(init));
  // The row's loops carry the partial result.
  SmallVector<scf::ForOp> nest;
  for (unsigned l = row; l < n; ++l) {
    auto loop = scf::ForOp::create(b, loc, zero, constant(extents[l]), one,
                                   ValueRange{partial});
    nest.push_back(loop);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
    partial = loop.getRegionIterArgs()[0];
  }
  Block &body = op.getRegion().front();
  IRMapping mapping;
  for (unsigned i = 0; i < init; ++i) {
    Value input = op.getDpsInputs()[i];
    Value value =
        isa<MemRefType>(input.getType())
            ? memref::LoadOp::create(b, loc, input, indices(i)).getResult()
            : input;
    mapping.map(body.getArgument(i), value);
  }
  mapping.map(body.getArgument(init), partial);
  for (Operation &inner : body.without_terminator()) {
    Operation *clone = b.clone(inner, mapping);
    // The partial sums of the row may be added in any order: LLVM then
    // keeps one per vector lane (a maximum or minimum needs no flag).
    if (&inner == combiner)
      if (auto add = dyn_cast<arith::AddFOp>(clone))
        add.setFastmath(add.getFastmath() | arith::FastMathFlags::reassoc);
  }
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  scf::YieldOp::create(b, loc, mapping.lookup(yield.getValues()[0]));
  for (unsigned i = nest.size() - 1; i > 0; --i) {
    b.setInsertionPointAfter(nest[i]);
    scf::YieldOp::create(b, loc, nest[i].getResult(0));
  }
  b.setInsertionPointAfter(nest.front());
  memref::StoreOp::create(b, loc, nest.front().getResult(0), output,
                          indices(init));
  op.erase();
}

struct TofuCPURowReductionsPass
    : public tofu::impl::TofuCPURowReductionsBase<TofuCPURowReductionsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::GenericOp> ops;
    getOperation()->walk([&](linalg::GenericOp op) { ops.push_back(op); });
    for (linalg::GenericOp op : ops)
      lowerRowReduction(op, minLength);
  }
};

} // namespace
