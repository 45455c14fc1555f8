//===- TestInputs.cpp - Deterministic inputs for execution tests ----------===//

#include "TestInputs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include <cmath>

using namespace mlir;

Value tofu::test::randomIntTensor(OpBuilder &b, Location loc,
                                  RankedTensorType type, uint64_t seed,
                                  uint64_t bound) {
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  unsigned width = type.getElementType().getIntOrFloatBitWidth();
  SmallVector<APInt> values;
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    values.push_back(APInt(width, (state >> 33) % bound));
  }
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, values));
}

Value tofu::test::randomTensor(OpBuilder &b, Location loc,
                               RankedTensorType type, uint64_t seed,
                               double scale, bool nonNegative) {
  uint64_t state = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  SmallVector<APFloat> values;
  auto floatType = cast<FloatType>(type.getElementType());
  for (int64_t i = 0, e = type.getNumElements(); i < e; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    double unit = double(state >> 11) / double(1ULL << 53); // [0, 1)
    APFloat v((nonNegative ? unit : 2.0 * unit - 1.0) * scale);
    bool lost;
    v.convert(floatType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
              &lost);
    values.push_back(v);
  }
  return arith::ConstantOp::create(b, loc,
                                   DenseElementsAttr::get(type, values));
}

void tofu::test::printValue(OpBuilder &b, Location loc, StringRef label,
                            Value value) {
  vector::PrintOp::create(b, loc, label);
  vector::PrintOp::create(b, loc, value, vector::PrintPunctuation::NewLine);
}

double tofu::test::weightScale(RankedTensorType type) {
  int64_t largest = 1;
  for (int64_t d : type.getShape())
    largest = std::max(largest, d);
  double fanIn = double(type.getNumElements()) / double(largest);
  return 1.0 / std::sqrt(std::max(1.0, fanIn));
}
