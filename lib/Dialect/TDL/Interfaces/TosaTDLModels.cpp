//===- TosaTDLModels.cpp - TDL descriptions of tosa ops -------------------===//
//
// TOSA operations that TDL can describe:
//
//   element-wise  (in0, in1) -> (d0, d1) = add(in0[d0, d1], in1[0, d1])
//                 (a size-1 dimension broadcasts and is read at index 0)
//   reduce_*      (in0) -> (d0, d1) = sum(r) in0[d0, r]
//   matmul        (a, b, azp, bzp) -> (d0, d1, d2) =
//                     sum(d3) (a[d0, d1, d3] - azp[0]) * (b[d0, d3, d2] -
//                     bzp[0])
//   conv2d        out = bias + sum(ky, kx, ci) (in[..] - izp) * (w[..] - wzp)
//
// conv2d adds its bias after the reduction, so its reduction variables are
// nested and only output dimensions can be cut.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"

#include "mlir/Dialect/Tosa/IR/TosaOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace tofu::tdl;

namespace {

FailureOr<RankedTensorType> staticResult(Operation *op, std::string &reason) {
  for (Type t :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape()) {
      reason = "the operation has unranked or dynamic shapes";
      return failure();
    }
  }
  return cast<RankedTensorType>(op->getResult(0).getType());
}

/// An access to operand `i` that broadcasts size-1 dimensions of a same-rank
/// operand and reads operands of another rank (shift, zero points) at 0.
std::string broadcastAccess(Operation *op, unsigned i,
                            RankedTensorType result) {
  auto type = cast<RankedTensorType>(op->getOperand(i).getType());
  std::string s = "in" + std::to_string(i);
  if (type.getRank() == 0)
    return s;
  s += "[";
  for (int64_t d = 0; d < type.getRank(); ++d) {
    bool same = type.getRank() == result.getRank() &&
                type.getDimSize(d) == result.getDimSize(d);
    s += (d ? ", " : "") + (same ? printDim(d) : std::string("0"));
  }
  return s + "]";
}

FailureOr<OpDesc> describeElementwise(Operation *op, std::string &reason) {
  auto result = staticResult(op, reason);
  if (failed(result))
    return failure();
  std::vector<std::string> args;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    args.push_back(broadcastAccess(op, i, *result));
  std::string text = "(" + printOperandNames(op) + ") -> (" +
                     printDimList(result->getRank()) +
                     ") = " + printScalarOp(op->getName().stripDialect(), args);
  return parseGeneratedDescription(text, reason);
}

FailureOr<OpDesc> describeReduce(Operation *op, uint32_t axis,
                                 const char *reducer, std::string &reason) {
  auto result = staticResult(op, reason);
  if (failed(result))
    return failure();
  std::string idx;
  for (int64_t d = 0; d < result->getRank(); ++d)
    idx += (d ? ", " : "") + (d == axis ? std::string("r") : printDim(d));
  std::string text = "(in0) -> (" + printDimList(result->getRank()) +
                     ") = " + reducer + "(r) in0[" + idx + "]";
  return parseGeneratedDescription(text, reason);
}

FailureOr<OpDesc> describe(tosa::MatMulOp op, std::string &reason) {
  if (failed(staticResult(op, reason)))
    return failure();
  std::string text = "(" + printOperandNames(op) +
                     ") -> (d0, d1, d2) = sum(d3) (in0[d0, d1, d3] - in2[0]) * "
                     "(in1[d0, d3, d2] - in3[0])";
  return parseGeneratedDescription(text, reason);
}

FailureOr<OpDesc> describe(tosa::Conv2DOp op, std::string &reason) {
  auto result = staticResult(op, reason);
  if (failed(result))
    return failure();
  ArrayRef<int64_t> pad = op.getPad(), stride = op.getStride(),
                    dilation = op.getDilation();
  auto spatial = [&](int64_t out, int64_t k, int64_t i) {
    return printDim(out) + " * " + std::to_string(stride[i]) + " + " +
           printDim(k) + " * " + std::to_string(dilation[i]) + " - " +
           std::to_string(pad[2 * i]);
  };
  auto biasType = cast<RankedTensorType>(op.getBias().getType());
  std::string bias =
      biasType.getDimSize(0) == result->getDimSize(3) ? "in2[d3]" : "in2[0]";
  std::string text =
      "(" + printOperandNames(op) + ") -> (d0, d1, d2, d3) = " + bias +
      " + sum(d4, d5, d6) (in0[d0, " + spatial(1, 4, 0) + ", " +
      spatial(2, 5, 1) + ", d6] - in3[0]) * (in1[d3, d4, d5, d6] - in4[0])";
  return parseGeneratedDescription(text, reason);
}

template <typename OpTy>
struct TosaTDLModel
    : public TDLOpInterface::ExternalModel<TosaTDLModel<OpTy>, OpTy> {
  FailureOr<OpDesc> getTDLDescription(Operation *op,
                                      std::string &reason) const {
    if constexpr (std::is_same_v<OpTy, tosa::MatMulOp> ||
                  std::is_same_v<OpTy, tosa::Conv2DOp>)
      return describe(cast<OpTy>(op), reason);
    else if constexpr (std::is_same_v<OpTy, tosa::ReduceSumOp>)
      return describeReduce(op, cast<OpTy>(op).getAxis(), "sum", reason);
    else if constexpr (std::is_same_v<OpTy, tosa::ReduceMaxOp>)
      return describeReduce(op, cast<OpTy>(op).getAxis(), "max", reason);
    else if constexpr (std::is_same_v<OpTy, tosa::ReduceMinOp>)
      return describeReduce(op, cast<OpTy>(op).getAxis(), "min", reason);
    else if constexpr (std::is_same_v<OpTy, tosa::ReduceProductOp>)
      return describeReduce(op, cast<OpTy>(op).getAxis(), "prod", reason);
    else
      return describeElementwise(op, reason);
  }
};

/// Attaches the model to the TOSA operations it can describe.
template <typename... OpTys> static void attachTosaModels(MLIRContext *ctx) {
  auto attach = [&](auto tag) {
    using OpTy = typename decltype(tag)::type;
    constexpr bool known =
        std::is_same_v<OpTy, tosa::MatMulOp> ||
        std::is_same_v<OpTy, tosa::Conv2DOp> ||
        std::is_same_v<OpTy, tosa::ReduceSumOp> ||
        std::is_same_v<OpTy, tosa::ReduceMaxOp> ||
        std::is_same_v<OpTy, tosa::ReduceMinOp> ||
        std::is_same_v<OpTy, tosa::ReduceProductOp> ||
        OpTy::template hasTrait<OpTrait::tosa::TosaElementwiseOperator>();
    if constexpr (known)
      OpTy::template attachInterface<TosaTDLModel<OpTy>>(*ctx);
  };
  (attach(llvm::type_identity<OpTys>()), ...);
}

} // namespace

void tofu::tdl::registerTosaTDLExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tosa::TosaDialect *) {
    attachTosaModels<
#define GET_OP_LIST
#include "mlir/Dialect/Tosa/IR/TosaOps.cpp.inc"
        >(ctx);
  });
}
