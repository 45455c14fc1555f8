//===- ScalarPowers.cpp - Powers by constant exponents as arithmetic ------===//
//
// Implements tofu-cpu-scalar-powers: an f32 or f64 math.powf by a constant
// exponent that PyTorch computes without pow (2, 3, 0.5, -0.5, -1, -2)
// becomes the multiplications, square root or division PyTorch uses, which
// LLVM vectorizes; other exponents and types stay libm calls (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUCPUSCALARPOWERS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// The value of `pow` for its constant exponent, built before it, or null
/// when the exponent is not one of the special cases.
Value rewritePower(math::PowFOp pow) {
  FloatAttr exponent;
  if (!matchPattern(pow.getRhs(), m_Constant(&exponent)))
    return nullptr;
  // f16 and bf16 keep pow, which computes them in f32 (x * x would
  // overflow or round in the narrow type); vectors keep it too.
  if (!pow.getType().isF32() && !pow.getType().isF64())
    return nullptr;
  double e = exponent.getValueAsDouble();
  OpBuilder b(pow);
  Location loc = pow.getLoc();
  Value x = pow.getLhs();
  auto mul = [&](Value l, Value r) {
    return arith::MulFOp::create(b, loc, l, r).getResult();
  };
  auto one = [&] {
    return arith::ConstantOp::create(b, loc, b.getFloatAttr(x.getType(), 1.0))
        .getResult();
  };
  if (e == 2.0)
    return mul(x, x);
  if (e == 3.0)
    return mul(mul(x, x), x);
  if (e == 0.5)
    return math::SqrtOp::create(b, loc, x);
  if (e == -0.5)
    return math::RsqrtOp::create(b, loc, x);
  if (e == -1.0)
    return arith::DivFOp::create(b, loc, one(), x);
  if (e == -2.0)
    return arith::DivFOp::create(b, loc, one(), mul(x, x));
  return nullptr;
}

struct TofuCPUScalarPowersPass
    : public tofu::impl::TofuCPUScalarPowersBase<TofuCPUScalarPowersPass> {
  void runOnOperation() override {
    getOperation()->walk([](math::PowFOp pow) {
      if (Value value = rewritePower(pow)) {
        pow.replaceAllUsesWith(value);
        pow.erase();
      }
    });
  }
};

} // namespace
