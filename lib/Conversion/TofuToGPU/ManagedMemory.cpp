//===- ManagedMemory.cpp - Buffers in CUDA managed memory -----------------===//
//
// Implements tofu-gpu-managed-memory: the buffers of a bufferized program
// that the host may touch move to managed memory (gpu.alloc host_shared),
// which kernels, cuBLAS and the host all reach; the others, touched only by
// kernels and library calls, to device memory (gpu.alloc). Deallocations
// become gpu.dealloc, which tofu-gpu-stream-order queues on the stream.
// Copies become linalg.copy so that they run as kernels, and constant
// globals are copied into managed buffers.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/DenseSet.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUMANAGEDMEMORY
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// Whether the host may read or write `buffer` (or a view of it) in the
/// lowered program. It does not when every use, through views, is a linalg
/// op with at least one loop (a generated kernel), a copy of a ranked
/// buffer (a linalg.copy kernel), a library call's address or metadata, or
/// a deallocation. Anything else counts as a host access: a 0-d linalg op
/// (host loads and stores after tofu-gpu-parallel-loops), a return (the
/// caller may read the buffer), a call, a load or store, a region's
/// operand.
bool isReachedByHost(Value buffer) {
  SmallVector<Value> worklist{buffer};
  DenseSet<Value> seen{buffer};
  auto push = [&](Value alias) {
    if (seen.insert(alias).second)
      worklist.push_back(alias);
  };
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (OpOperand &use : value.getUses()) {
      Operation *user = use.getOwner();
      if (isa<memref::DeallocOp, memref::DimOp,
              memref::ExtractAlignedPointerAsIndexOp>(user))
        continue;
      if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        push(metadata.getBaseBuffer());
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
        if (view.getViewSource() != value)
          return true;
        for (Value result : user->getResults())
          if (isa<MemRefType>(result.getType()))
            push(result);
        continue;
      }
      if (auto copy = dyn_cast<memref::CopyOp>(user)) {
        auto source = dyn_cast<MemRefType>(copy.getSource().getType());
        auto target = dyn_cast<MemRefType>(copy.getTarget().getType());
        if (source && target && source.getRank() > 0 && target.getRank() > 0)
          continue;
        return true;
      }
      if (auto linalgOp = dyn_cast<linalg::LinalgOp>(user)) {
        if (linalgOp.getNumLoops() > 0)
          continue;
        return true;
      }
      return true;
    }
  }
  return false;
}

struct TofuGPUManagedMemoryPass
    : public tofu::impl::TofuGPUManagedMemoryBase<TofuGPUManagedMemoryPass> {
  void runOnOperation() override;
};

} // namespace

void TofuGPUManagedMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  // Collect first: the rewrites create ops of the kinds being walked.
  SmallVector<memref::AllocOp> allocs;
  SmallVector<memref::DeallocOp> deallocs;
  SmallVector<memref::CopyOp> copies;
  SmallVector<memref::GetGlobalOp> globals;
  module.walk([&](Operation *op) {
    if (op->getParentOfType<gpu::GPUModuleOp>())
      return;
    if (auto alloc = dyn_cast<memref::AllocOp>(op))
      allocs.push_back(alloc);
    else if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
      deallocs.push_back(dealloc);
    else if (auto copy = dyn_cast<memref::CopyOp>(op))
      copies.push_back(copy);
    else if (auto global = dyn_cast<memref::GetGlobalOp>(op))
      globals.push_back(global);
  });

  for (memref::AllocOp alloc : allocs) {
    if (alloc.getMemref().getType().getMemorySpace()) {
      alloc.emitOpError("tofu-gpu-managed-memory: buffers in a memory "
                        "space are not supported");
      return signalPassFailure();
    }
    OpBuilder b(alloc);
    bool hostShared = isReachedByHost(alloc.getMemref());
    auto managed = gpu::AllocOp::create(
        b, alloc.getLoc(), alloc.getMemref().getType(), /*asyncToken=*/Type(),
        /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
        alloc.getSymbolOperands(), hostShared);
    alloc.getMemref().replaceAllUsesWith(managed.getMemref());
    alloc.erase();
  }
  for (memref::DeallocOp dealloc : deallocs) {
    OpBuilder b(dealloc);
    gpu::DeallocOp::create(b, dealloc.getLoc(), /*asyncToken=*/Type(),
                           ValueRange(), dealloc.getMemref());
    dealloc.erase();
  }
  for (memref::CopyOp copy : copies) {
    OpBuilder b(copy);
    linalg::CopyOp::create(b, copy.getLoc(), copy.getSource(),
                           copy.getTarget());
    copy.erase();
  }
  // Constant globals live in host memory, which kernels cannot read: copy
  // each into a managed buffer at the function's entry (a host copy) and
  // free it before every return.
  for (memref::GetGlobalOp global : globals) {
    auto func = global->getParentOfType<FunctionOpInterface>();
    if (!func || func.isExternal()) {
      global.emitOpError("tofu-gpu-managed-memory: a global outside a "
                         "function body is not supported");
      return signalPassFailure();
    }
    auto type = cast<MemRefType>(global.getType());
    if (!type.getLayout().isIdentity() || !type.hasStaticShape()) {
      global.emitOpError("tofu-gpu-managed-memory: only globals with a "
                         "static shape and the identity layout are supported");
      return signalPassFailure();
    }
    Block &entry = func.getFunctionBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location loc = global.getLoc();
    auto hostCopy =
        memref::GetGlobalOp::create(b, loc, type, global.getNameAttr());
    auto managed = gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                        ValueRange(), ValueRange(),
                                        /*hostShared=*/true);
    memref::CopyOp::create(b, loc, hostCopy, managed.getMemref());
    // A buffer that the function returns stays alive for its caller.
    bool returned = llvm::any_of(global->getUsers(), [](Operation *user) {
      return user->hasTrait<OpTrait::ReturnLike>();
    });
    global.getResult().replaceAllUsesWith(managed.getMemref());
    global.erase();
    if (returned)
      continue;
    func.walk([&](Operation *op) {
      if (op->hasTrait<OpTrait::ReturnLike>() &&
          op->getParentOp() == func.getOperation()) {
        OpBuilder rb(op);
        gpu::DeallocOp::create(rb, loc, /*asyncToken=*/Type(), ValueRange(),
                               managed.getMemref());
      }
    });
  }
}
