//===- TensorTDLModels.cpp - TDL descriptions of tensor ops ---------------===//
//
// Data-movement operations of the tensor dialect, all affine:
//
//   tensor.pad            out[d] = in0[d - low]        (reads outside = pad)
//   tensor.extract_slice  out[d] = in0[off + d * stride]
//   tensor.insert_slice   out[d] = insert(in0[(d - off) floordiv stride],
//                                         in1[d])
//   tensor.expand_shape   out[d0, d1] = in0[d0 * n1 + d1]
//   tensor.collapse_shape out[d] = in0[d floordiv n1, d mod n1]
//   tensor.concat         out[d] = concat(in0[d + 0], in1[d - n0], ...)
//
// Accesses that may fall outside their tensor are written as `d + c`, never
// as a bare variable: TDL requires a bare variable to span the whole
// dimension.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;
using namespace tofu::tdl;

namespace {

/// `d + c`, always with an explicit offset.
std::string offsetDim(int64_t d, int64_t c) {
  return c < 0 ? printDim(d) + " - " + std::to_string(-c)
               : printDim(d) + " + " + std::to_string(c);
}

LogicalResult requireStatic(Operation *op, std::string &reason) {
  for (Type t :
       llvm::concat<Type>(op->getOperandTypes(), op->getResultTypes())) {
    auto shaped = dyn_cast<RankedTensorType>(t);
    if (shaped && !shaped.hasStaticShape()) {
      reason = "the operation has dynamic shapes";
      return failure();
    }
  }
  return success();
}

/// Static shapes, offsets, sizes and strides of a slice operation.
LogicalResult requireStaticSlice(OffsetSizeAndStrideOpInterface op,
                                 std::string &reason) {
  if (failed(requireStatic(op, reason)))
    return failure();
  if (!op.getOffsets().empty() || !op.getSizes().empty() ||
      !op.getStrides().empty()) {
    reason = "the slice has dynamic offsets, sizes or strides";
    return failure();
  }
  return success();
}

FailureOr<OpDesc> describe(tensor::PadOp op, std::string &reason) {
  if (failed(requireStatic(op, reason)))
    return failure();
  if (!op.getLow().empty() || !op.getHigh().empty()) {
    reason = "the padding amounts are dynamic";
    return failure();
  }
  auto src = op.getSourceType(), res = op.getResultType();
  std::string idx;
  for (int64_t d = 0; d < res.getRank(); ++d) {
    int64_t low = op.getStaticLow()[d];
    bool same = src.getDimSize(d) == res.getDimSize(d) && low == 0;
    idx += (d ? ", " : "") + (same ? printDim(d) : offsetDim(d, -low));
  }
  std::string text = "(" + printOperandNames(op) + ") -> (" +
                     printDimList(res.getRank()) + ") = pad(in0[" + idx + "])";
  return parseGeneratedDescription(text, reason);
}

FailureOr<OpDesc> describe(tensor::ExtractSliceOp op, std::string &reason) {
  if (failed(requireStaticSlice(op, reason)))
    return failure();
  auto src = op.getSourceType();
  llvm::SmallBitVector dropped = op.getDroppedDims();
  std::string idx;
  int64_t resDim = 0;
  for (int64_t d = 0; d < src.getRank(); ++d) {
    int64_t off = op.getStaticOffsets()[d], stride = op.getStaticStrides()[d];
    int64_t size = op.getStaticSizes()[d];
    std::string e;
    if (dropped.test(d)) {
      e = std::to_string(off);
    } else {
      bool whole = off == 0 && stride == 1 && size == src.getDimSize(d);
      std::string v = stride == 1
                          ? printDim(resDim)
                          : printDim(resDim) + " * " + std::to_string(stride);
      e = whole ? v : v + " + " + std::to_string(off);
      ++resDim;
    }
    idx += (d ? ", " : "") + e;
  }
  std::string text = "(" + printOperandNames(op) + ") -> (" +
                     printDimList(op.getResultType().getRank()) + ") = in0[" +
                     idx + "]";
  return parseGeneratedDescription(text, reason);
}

FailureOr<OpDesc> describe(tensor::InsertSliceOp op, std::string &reason) {
  if (failed(requireStaticSlice(op, reason)))
    return failure();
  auto dest = op.getDestType();
  llvm::SmallBitVector dropped = op.getDroppedDims();
  std::string srcIdx;
  bool first = true;
  for (int64_t d = 0; d < dest.getRank(); ++d) {
    if (dropped.test(d))
      continue;
    int64_t off = op.getStaticOffsets()[d], stride = op.getStaticStrides()[d];
    std::string e = "(" + offsetDim(d, -off) + ")";
    if (stride != 1)
      e += " floordiv " + std::to_string(stride);
    srcIdx += (first ? "" : ", ") + e;
    first = false;
  }
  std::string dims = printDimList(dest.getRank());
  std::string src =
      op.getSourceType().getRank() ? "in0[" + srcIdx + "]" : "in0";
  std::string text = "(" + printOperandNames(op) + ") -> (" + dims +
                     ") = insert(" + src + ", in1[" + dims + "])";
  return parseGeneratedDescription(text, reason);
}

FailureOr<OpDesc> describe(tensor::ExpandShapeOp op, std::string &reason) {
  if (failed(requireStatic(op, reason)))
    return failure();
  auto res = op.getResultType();
  std::string idx;
  for (auto [i, group] : llvm::enumerate(op.getReassociationIndices())) {
    std::string e;
    for (size_t g = 0; g < group.size(); ++g) {
      int64_t stride = 1;
      for (size_t h = g + 1; h < group.size(); ++h)
        stride *= res.getDimSize(group[h]);
      std::string term = printDim(group[g]);
      if (stride != 1)
        term += " * " + std::to_string(stride);
      e += (g ? " + " : "") + term;
    }
    if (group.empty())
      e = "0";
    idx += (i ? ", " : "") + e;
  }
  std::string src = op.getSrcType().getRank() ? "in0[" + idx + "]" : "in0";
  std::string text = "(" + printOperandNames(op) + ") -> (" +
                     printDimList(res.getRank()) + ") = " + src;
  return parseGeneratedDescription(text, reason);
}

FailureOr<OpDesc> describe(tensor::CollapseShapeOp op, std::string &reason) {
  if (failed(requireStatic(op, reason)))
    return failure();
  auto src = op.getSrcType();
  std::vector<std::string> idx(src.getRank());
  for (auto [i, group] : llvm::enumerate(op.getReassociationIndices())) {
    for (size_t g = 0; g < group.size(); ++g) {
      int64_t stride = 1;
      for (size_t h = g + 1; h < group.size(); ++h)
        stride *= src.getDimSize(group[h]);
      std::string e = printDim(i);
      if (src.getDimSize(group[g]) == 1 && group.size() > 1) {
        idx[group[g]] = "0";
        continue;
      }
      if (group.size() == 1) {
        idx[group[g]] = e;
        continue;
      }
      if (stride != 1)
        e += " floordiv " + std::to_string(stride);
      if (g != 0)
        e = "(" + e + ") mod " + std::to_string(src.getDimSize(group[g]));
      idx[group[g]] = e;
    }
  }
  std::string access;
  for (size_t d = 0; d < idx.size(); ++d)
    access += (d ? ", " : "") + (idx[d].empty() ? "0" : idx[d]);
  auto res = op.getResultType();
  std::string text = "(" + printOperandNames(op) + ") -> (" +
                     printDimList(res.getRank()) +
                     ") = " + (src.getRank() ? "in0[" + access + "]" : "in0");
  return parseGeneratedDescription(text, reason);
}

FailureOr<OpDesc> describe(tensor::ConcatOp op, std::string &reason) {
  if (failed(requireStatic(op, reason)))
    return failure();
  int64_t axis = op.getDim();
  auto res = op.getResultType();
  std::string args;
  int64_t offset = 0;
  for (auto [i, input] : llvm::enumerate(op.getInputs())) {
    std::string idx;
    for (int64_t d = 0; d < res.getRank(); ++d)
      idx +=
          (d ? ", " : "") + (d == axis ? offsetDim(d, -offset) : printDim(d));
    args += (i ? ", in" : "in") + std::to_string(i) + "[" + idx + "]";
    offset += cast<RankedTensorType>(input.getType()).getDimSize(axis);
  }
  std::string text = "(" + printOperandNames(op) + ") -> (" +
                     printDimList(res.getRank()) + ") = concat(" + args + ")";
  return parseGeneratedDescription(text, reason);
}

template <typename OpTy>
struct TensorTDLModel
    : public TDLOpInterface::ExternalModel<TensorTDLModel<OpTy>, OpTy> {
  FailureOr<OpDesc> getTDLDescription(Operation *op,
                                      std::string &reason) const {
    return describe(cast<OpTy>(op), reason);
  }
};

} // namespace

void tofu::tdl::registerTensorTDLExternalModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, tensor::TensorDialect *) {
    tensor::PadOp::attachInterface<TensorTDLModel<tensor::PadOp>>(*ctx);
    tensor::ExtractSliceOp::attachInterface<
        TensorTDLModel<tensor::ExtractSliceOp>>(*ctx);
    tensor::InsertSliceOp::attachInterface<
        TensorTDLModel<tensor::InsertSliceOp>>(*ctx);
    tensor::ExpandShapeOp::attachInterface<
        TensorTDLModel<tensor::ExpandShapeOp>>(*ctx);
    tensor::CollapseShapeOp::attachInterface<
        TensorTDLModel<tensor::CollapseShapeOp>>(*ctx);
    tensor::ConcatOp::attachInterface<TensorTDLModel<tensor::ConcatOp>>(*ctx);
  });
}
