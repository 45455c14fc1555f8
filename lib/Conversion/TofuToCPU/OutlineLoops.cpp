//===- OutlineLoops.cpp - A function per loop nest of long functions ------===//
//
// Implements tofu-outline-loops: the top-level loop nests of a function
// with many of them become private, non-inlined functions, which keeps
// LLVM's optimization of a long training step linear in its length
// (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUOUTLINELOOPS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// The text of `func` under a fixed name: two outlined nests with the same
/// text compute the same thing on their arguments.
std::string getText(func::FuncOp func) {
  std::string name = func.getSymName().str();
  func.setSymName("outlined");
  std::string text;
  llvm::raw_string_ostream os(text);
  func->print(os, OpPrintingFlags().useLocalScope());
  func.setSymName(name);
  return text;
}

struct TofuOutlineLoopsPass
    : public tofu::impl::TofuOutlineLoopsBase<TofuOutlineLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    IRRewriter rewriter(&getContext());
    SmallVector<func::FuncOp> funcs(module.getOps<func::FuncOp>());
    llvm::StringMap<func::FuncOp> outlinedByText;
    for (func::FuncOp func : funcs) {
      // The training driver's loop carries the weights (its results are
      // used after it); a step's own loops of linalg ops have no results.
      if (func.isExternal() || func->hasAttr(tofu::attrs::kDriver))
        continue;
      SmallVector<Operation *> nests;
      for (Block &block : func.getBody())
        for (Operation &op : block)
          if (isa<scf::ForOp, scf::ParallelOp>(op) && op.getNumResults() == 0)
            nests.push_back(&op);
      if (nests.size() < minLoops)
        continue;
      unsigned index = 0;
      for (Operation *nest : nests) {
        // The nest alone in a region, which the upstream utility outlines
        // into a function and replaces by a call.
        rewriter.setInsertionPoint(nest);
        auto wrapper =
            scf::ExecuteRegionOp::create(rewriter, nest->getLoc(), TypeRange{});
        Block *body = rewriter.createBlock(&wrapper.getRegion());
        rewriter.moveOpBefore(nest, body, body->end());
        rewriter.setInsertionPointToEnd(body);
        scf::YieldOp::create(rewriter, nest->getLoc());
        std::string name;
        do {
          name = (func.getSymName() + "_loops" + std::to_string(index++)).str();
        } while (symbols.lookup(name));
        func::CallOp call;
        FailureOr<func::FuncOp> outlined = outlineSingleBlockRegion(
            rewriter, nest->getLoc(), wrapper.getRegion(), name, &call);
        if (failed(outlined)) {
          wrapper.emitOpError("tofu-outline-loops: cannot outline this loop "
                              "nest");
          return signalPassFailure();
        }
        outlined->setPrivate();
        (*outlined)->setAttr(
            "passthrough",
            rewriter.getArrayAttr({rewriter.getStringAttr("noinline")}));
        // The call replaces the wrapper; a nest that another one repeats
        // (a layer or time step of the same shapes) calls the function
        // outlined first, so that LLVM compiles it once.
        rewriter.setInsertionPoint(wrapper);
        auto replacement = cast<func::CallOp>(rewriter.clone(*call));
        auto [known, isNew] =
            outlinedByText.try_emplace(getText(*outlined), *outlined);
        if (isNew) {
          symbols.insert(*outlined);
        } else {
          replacement.setCallee(known->second.getSymName());
          rewriter.eraseOp(*outlined);
        }
        rewriter.eraseOp(wrapper);
      }
    }
  }
};

} // namespace
