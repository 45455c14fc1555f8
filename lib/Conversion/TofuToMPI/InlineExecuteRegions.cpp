//===- InlineExecuteRegions.cpp - Inline single-block execute_regions -----===//
//
// Implements tofu-inline-execute-regions: every scf.execute_region with one
// block, no_inline or not, is replaced by its ops (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToMPI/EarlyDealloc.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUINLINEEXECUTEREGIONS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

struct TofuInlineExecuteRegionsPass
    : public tofu::impl::TofuInlineExecuteRegionsBase<
          TofuInlineExecuteRegionsPass> {
  void runOnOperation() override {
    SmallVector<scf::ExecuteRegionOp> regions;
    getOperation()->walk<WalkOrder::PostOrder>([&](scf::ExecuteRegionOp op) {
      if (op.getRegion().hasOneBlock())
        regions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ExecuteRegionOp op : regions) {
      Block &body = op.getRegion().front();
      auto yield = cast<scf::YieldOp>(body.getTerminator());
      SmallVector<Value> results(yield.getOperands());
      rewriter.eraseOp(yield);
      rewriter.inlineBlockBefore(&body, op);
      rewriter.replaceOp(op, results);
    }
  }
};

} // namespace
