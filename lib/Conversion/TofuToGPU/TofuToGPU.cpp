//===- TofuToGPU.cpp - GEMM-shaped linalg ops to cuBLAS calls -------------===//
//
// Implements convert-tofu-to-gpu: every GEMM-shaped linalg op on buffers
// becomes a call of tofu_gpu_sgemm (include/tofu/Runtime/TofuCudaRuntime.h)
// with the addresses and strides of its operands.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"
#include "tofu/Conversion/TofuToMPI/RuntimeABI.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "convert-tofu-to-gpu"

namespace tofu {
#define GEN_PASS_DEF_CONVERTTOFUTOGPU
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// The runtime entry point of the GEMMs.
constexpr llvm::StringLiteral kSgemm = "tofu_gpu_sgemm";

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// One operand of the product as the runtime sees it: the address of its
/// first element, and its strides (elements) per loop of the op (0 for a
/// loop that does not index it).
struct OperandView {
  Value address;
  SmallVector<Value> loopStrides;
  /// Size of the memref dimension that each loop indexes, or null.
  SmallVector<Value> loopSizes;
};

OperandView getOperandView(OpBuilder &b, Location loc, Value buffer,
                           AffineMap map) {
  auto type = cast<MemRefType>(buffer.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  Value offsetBytes = arith::MulIOp::create(b, loc, metadata.getOffset(),
                                            index(b, loc, elementBytes));
  OperandView view;
  view.address = arith::AddIOp::create(b, loc, aligned, offsetBytes);
  Value zero = index(b, loc, 0);
  view.loopStrides.assign(map.getNumDims(), zero);
  view.loopSizes.assign(map.getNumDims(), Value());
  for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    view.loopStrides[loop] = metadata.getStrides()[pos];
    view.loopSizes[loop] = metadata.getSizes()[pos];
  }
  return view;
}

/// Whether the op right before `op` (skipping ops without memory effects)
/// fills `buffer` with +0.0, and returns it.
linalg::FillOp getZeroFillBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getDpsInits()[0] != buffer || !fill.hasPureBufferSemantics())
        return nullptr;
      FloatAttr value;
      if (!matchPattern(fill.getInputs()[0], m_Constant(&value)))
        return nullptr;
      return value.getValue().isPosZero() ? fill : nullptr;
    }
    if (!isPure(prev))
      return nullptr;
  }
  return nullptr;
}

struct ConvertTofuToGPUPass
    : public tofu::impl::ConvertTofuToGPUBase<ConvertTofuToGPUPass> {
  void runOnOperation() override;
};

} // namespace

/// Replaces `op` by a call of the runtime's GEMM.
static void lowerGemm(ModuleOp module, linalg::LinalgOp op,
                      const GemmMatch &match) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value a = op.getDpsInputOperand(match.lhsInput)->get();
  Value bb = op.getDpsInputOperand(match.rhsInput)->get();
  Value c = op.getDpsInitOperand(0)->get();

  float beta = 1.0f;
  if (linalg::FillOp fill = getZeroFillBefore(op, c)) {
    beta = 0.0f;
    fill.erase();
  }

  OperandView va = getOperandView(b, loc, a, maps[match.lhsInput]);
  OperandView vb = getOperandView(b, loc, bb, maps[match.rhsInput]);
  OperandView vc = getOperandView(b, loc, c, maps[2]);

  Value m = vc.loopSizes[match.mLoop];
  Value n = vc.loopSizes[match.nLoop];
  Value k = va.loopSizes[match.kLoop];
  Value one = index(b, loc, 1);
  Value batch = one;
  Value zero = index(b, loc, 0);
  Value aBatch = zero, bBatch = zero, cBatch = zero;
  ArrayRef<unsigned> outer = match.batchLoops;
  if (!outer.empty()) {
    unsigned inner = outer.back();
    outer = outer.drop_back();
    batch = vc.loopSizes[inner];
    aBatch = va.loopStrides[inner];
    bBatch = vb.loopStrides[inner];
    cBatch = vc.loopStrides[inner];
  }

  // Outer batch loops: one strided-batched call per iteration.
  Value pa = va.address, pb = vb.address, pc = vc.address;
  int64_t elementBytes = 4;
  Value bytes = index(b, loc, elementBytes);
  for (unsigned loop : outer) {
    auto forOp = scf::ForOp::create(b, loc, zero, vc.loopSizes[loop], one);
    b.setInsertionPointToStart(forOp.getBody());
    Value iv = forOp.getInductionVar();
    auto advance = [&](Value base, Value stride) {
      Value elements = arith::MulIOp::create(b, loc, iv, stride);
      Value offset = arith::MulIOp::create(b, loc, elements, bytes);
      return arith::AddIOp::create(b, loc, base, offset).getResult();
    };
    pa = advance(pa, va.loopStrides[loop]);
    pb = advance(pb, vb.loopStrides[loop]);
    pc = advance(pc, vc.loopStrides[loop]);
  }

  SmallVector<Value> args{batch,
                          m,
                          n,
                          k,
                          pa,
                          va.loopStrides[match.mLoop],
                          va.loopStrides[match.kLoop],
                          aBatch,
                          pb,
                          vb.loopStrides[match.kLoop],
                          vb.loopStrides[match.nLoop],
                          bBatch,
                          pc,
                          vc.loopStrides[match.mLoop],
                          vc.loopStrides[match.nLoop],
                          cBatch};
  args.push_back(arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                llvm::APFloat(beta)));
  func::FuncOp callee =
      declareRuntimeFunction(module, kSgemm, ValueRange(args).getTypes(), {});
  auto call = func::CallOp::create(b, loc, callee, args);
  call->setAttr("tofu.library", b.getStringAttr("cublas"));
  if (std::optional<int64_t> flops = getGemmFlops(op))
    call->setAttr("tofu.flops", b.getI64IntegerAttr(*flops));
  LLVM_DEBUG(llvm::dbgs() << "convert-tofu-to-gpu: " << op->getName() << " -> "
                          << kSgemm << " beta " << beta << "\n");
  op->erase();
}

void ConvertTofuToGPUPass::runOnOperation() {
  ModuleOp module = getOperation();
  SmallVector<std::pair<linalg::LinalgOp, GemmMatch>> gemms;
  WalkResult result = module.walk([&](linalg::LinalgOp op) {
    std::optional<GemmMatch> match = matchGemm(op);
    if (!match)
      return WalkResult::advance();
    if (!op.hasPureBufferSemantics()) {
      op->emitOpError("convert-tofu-to-gpu: a matrix product on tensors; "
                      "bufferize before the library calls");
      return WalkResult::interrupt();
    }
    gemms.emplace_back(op, *match);
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return signalPassFailure();
  for (auto &[op, match] : gemms)
    lowerGemm(module, op, match);
}
