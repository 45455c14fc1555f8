//===- StridedCopies.cpp - Copies between strided views as loops ----------===//
//
// Implements tofu-cpu-strided-copies: a memref.copy whose source or target
// is not one contiguous block becomes a linalg.generic that yields its
// input, so that it is lowered to loops LLVM vectorizes rather than to the
// runner utilities' element-by-element memrefCopy (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUCPUSTRIDEDCOPIES
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

struct TofuCPUStridedCopiesPass
    : public tofu::impl::TofuCPUStridedCopiesBase<TofuCPUStridedCopiesPass> {
  void runOnOperation() override {
    getOperation()->walk([](memref::CopyOp copy) {
      // The training driver is compiled without optimization: its copies
      // stay calls.
      auto func = copy->getParentOfType<func::FuncOp>();
      if (func && func->hasAttr(tofu::attrs::kDriver))
        return;
      auto source = dyn_cast<MemRefType>(copy.getSource().getType());
      auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
      // A copy of one contiguous block is a memcpy.
      if (!source || !target || source.getRank() == 0 ||
          (memref::isStaticShapeAndContiguousRowMajor(source) &&
           memref::isStaticShapeAndContiguousRowMajor(target)))
        return;
      OpBuilder b(copy);
      AffineMap identity =
          b.getMultiDimIdentityMap(static_cast<unsigned>(source.getRank()));
      SmallVector<utils::IteratorType> iterators(source.getRank(),
                                                 utils::IteratorType::parallel);
      linalg::GenericOp::create(
          b, copy.getLoc(), TypeRange{}, ValueRange{copy.getSource()},
          ValueRange{copy.getTarget()}, ArrayRef<AffineMap>{identity, identity},
          iterators, [](OpBuilder &nested, Location loc, ValueRange args) {
            linalg::YieldOp::create(nested, loc, args[0]);
          });
      copy.erase();
    });
  }
};

} // namespace
