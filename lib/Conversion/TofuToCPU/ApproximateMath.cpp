//===- ApproximateMath.cpp - f32 transcendentals as polynomials -----------===//
//
// Implements tofu-approximate-math: the f32 tanh, exp, expm1, log, log1p
// and erf of a CPU step become MLIR's polynomial approximations, which
// vectorize, instead of scalar libm calls (Passes.td). The polynomials'
// fused multiply-adds become a multiply and an add that LLVM may contract:
// fused where the target has FMA instructions, two instructions where it
// has none, never a call of libm's fmaf.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/StringSwitch.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUAPPROXIMATEMATH
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

struct TofuApproximateMathPass
    : public tofu::impl::TofuApproximateMathBase<TofuApproximateMathPass> {
  void runOnOperation() override {
    // The input's own fmas stay (tagged: an erased op's address may be
    // reused by a new one).
    constexpr llvm::StringLiteral kGiven = "tofu.given_fma";
    getOperation()->walk([&](math::FmaOp fma) {
      fma->setAttr(kGiven, UnitAttr::get(fma.getContext()));
    });
    RewritePatternSet patterns(&getContext());
    // The functions named by the op mnemonic; the patterns match f32 (and
    // vectors of it) only.
    populateMathPolynomialApproximationPatterns(
        patterns, [](StringRef name) {
          name.consume_front("math.");
          return llvm::StringSwitch<bool>(name)
              .Cases({"tanh", "exp", "expm1", "log", "log1p", "erf"}, true)
              .Default(false);
        });
    // Each rewrite replaces a math op by an equivalent polynomial: stopping
    // early leaves some ops as libm calls, which is still correct.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      getOperation()->emitWarning("tofu-approximate-math: the rewrite did "
                                  "not converge; some math ops stay libm "
                                  "calls");
    getOperation()->walk([&](math::FmaOp fma) {
      if (fma->hasAttr(kGiven)) {
        fma->removeAttr(kGiven);
        return;
      }
      OpBuilder b(fma);
      auto contract = arith::FastMathFlagsAttr::get(
          b.getContext(), arith::FastMathFlags::contract);
      Value product = arith::MulFOp::create(b, fma.getLoc(), fma.getA(),
                                            fma.getB(), contract);
      fma.replaceAllUsesWith(
          arith::AddFOp::create(b, fma.getLoc(), product, fma.getC(), contract)
              .getResult());
      fma.erase();
    });
  }
};

} // namespace
