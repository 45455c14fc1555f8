//===- RuntimeABI.cpp - Calling the CPU runtime from IR -------------------===//

#include "tofu/Conversion/TofuToMPI/RuntimeABI.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

using namespace mlir;

func::FuncOp tofu::declareRuntimeFunction(ModuleOp module, StringRef name,
                                          TypeRange inputs,
                                          TypeRange results) {
  if (auto f = module.lookupSymbol<func::FuncOp>(name))
    return f;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto f = func::FuncOp::create(b, module.getLoc(), name,
                                b.getFunctionType(inputs, results));
  f.setPrivate();
  if (llvm::any_of(inputs,
                   [](Type t) { return isa<MemRefType, UnrankedMemRefType>(t); }))
    f->setAttr("llvm.emit_c_interface", b.getUnitAttr());
  return f;
}

Value tofu::getUnrankedView(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> strides(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, strides);
  auto memrefType =
      MemRefType::get(type.getShape(), type.getElementType(), layout);
  Value buffer = bufferization::ToBufferOp::create(b, loc, memrefType, tensor,
                                                   /*read_only=*/true);
  return memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(type.getElementType(), 0), buffer);
}

Value tofu::getConstantInts(OpBuilder &b, Location loc,
                            ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({(int64_t)values.size()}, b.getI64Type());
  Value t = arith::ConstantOp::create(b, loc,
                                      DenseIntElementsAttr::get(type, values));
  return getUnrankedView(b, loc, t);
}
