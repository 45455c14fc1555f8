//===- RowReductions.cpp - Reductions along rows in registers -------------===//
//
// Implements tofu-cpu-row-reductions: a linalg reduction on buffers whose
// only reduction loop is its innermost, long loop becomes loops that carry
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

/// The positions of the loops that index each result of `map`, or
/// std::nullopt when a result is not a bare loop.
std::optional<SmallVector<unsigned>> getLoopPositions(AffineMap map) {
  SmallVector<unsigned> positions;
  for (AffineExpr e : map.getResults()) {
    auto dim = dyn_cast<AffineDimExpr>(e);
    if (!dim)
      return std::nullopt;
    positions.push_back(dim.getPosition());
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
      op.hasIndexSemantics() || op.getNumReductionLoops() != 1)
    return;
  unsigned n = op.getNumLoops();
  if (op.getIteratorTypesArray().back() != utils::IteratorType::reduction)
    return;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (llvm::any_of(extents, ShapedType::isDynamic) ||
      extents.back() < minLength)
    return;
  Operation *combiner = getCombiner(op);
  if (!combiner)
    return;
  SmallVector<SmallVector<unsigned>> positions;
  for (OpOperand &operand : op->getOpOperands()) {
    if (!isa<MemRefType>(operand.get().getType())) {
      positions.emplace_back();
      continue;
    }
    std::optional<SmallVector<unsigned>> p =
        getLoopPositions(op.getMatchingIndexingMap(&operand));
    if (!p)
      return;
    positions.push_back(*p);
  }

  OpBuilder b(op);
  Location loc = op.getLoc();
  auto constant = [&](int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v).getResult();
  };
  Value zero = constant(0), one = constant(1);
  SmallVector<Value> ivs;
  for (unsigned l = 0; l + 1 < n; ++l) {
    auto loop = scf::ForOp::create(b, loc, zero, constant(extents[l]), one);
    ivs.push_back(loop.getInductionVar());
    b.setInsertionPointToStart(loop.getBody());
  }
  auto indices = [&](unsigned operand) {
    SmallVector<Value> at;
    for (unsigned p : positions[operand])
      at.push_back(ivs[p]);
    return at;
  };
  unsigned init = op.getNumDpsInputs();
  Value output = op.getDpsInits()[0];
  Value start = memref::LoadOp::create(b, loc, output, indices(init));
  auto row = scf::ForOp::create(b, loc, zero, constant(extents.back()), one,
                                ValueRange{start});
  b.setInsertionPointToStart(row.getBody());
  ivs.push_back(row.getInductionVar());
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
  mapping.map(body.getArgument(init), row.getRegionIterArgs()[0]);
  for (Operation &inner : body.without_terminator()) {
    Operation *clone = b.clone(inner, mapping);
    // The partial sums of the row may be added in any order: LLVM then
    // keeps one per vector lane (a maximum or minimum needs no flag).
    if (&inner == combiner)
      if (auto add = dyn_cast<arith::AddFOp>(clone))
        add.setFastmath(arith::FastMathFlags::reassoc);
  }
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  scf::YieldOp::create(b, loc, mapping.lookup(yield.getValues()[0]));
  b.setInsertionPointAfter(row);
  memref::StoreOp::create(b, loc, row.getResult(0), output, indices(init));
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
