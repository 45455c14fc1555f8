//===- StreamOrder.cpp - Kernels and library calls on one stream ----------===//
//
// Implements tofu-gpu-stream-order: the outlined kernel launches of a
// block are chained by async tokens, library calls keep the chain (the
// CUDA runtime queues them on the same, single stream), device
// allocations and all deallocations join the chain (stream-ordered), and
// the host waits only before it touches memory or leaves the block.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tofu-gpu-stream-order"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUSTREAMORDER
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

bool tofu::isLibraryCall(Operation *op) {
  return isa<func::CallOp>(op) &&
         (op->hasAttr(tofu::kLibraryAttr) || op->hasAttr(kStreamOrderedAttr));
}

bool tofu::callsFunctionWithBody(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
      call, call.getCalleeAttr());
  return callee && !callee.isExternal();
}

namespace {

/// What an op means for the queued GPU work.
enum class OpRole {
  /// No memory effect, or only allocations: the work stays queued.
  Neutral,
  /// A synchronous kernel launch: queued after the current token.
  Launch,
  /// A library call, or a region of nothing but library calls and neutral
  /// ops: queued by the runtime on the stream; needs a chain to exist so
  /// that the host waits for it later.
  Library,
  /// A synchronous device allocation, deallocation or copy: queued after
  /// the current token (stream-ordered; the runtime does not wait).
  Memory,
  /// A call of a function of the module: it queues work of its own, and
  /// waits before it touches memory that the caller's work writes.
  Call,
  /// Anything else: the host waits for the queued work first.
  Host,
};

OpRole classify(Operation *op);

/// Whether every op in the regions of `op` is neutral or a library call,
/// and at least one is a library call.
bool holdsOnlyLibraryCalls(Operation *op) {
  bool anyCall = false;
  for (Region &region : op->getRegions())
    for (Block &block : region)
      for (Operation &nested : block) {
        if (nested.hasTrait<OpTrait::IsTerminator>() &&
            nested.getNumOperands() == 0)
          continue;
        OpRole role = classify(&nested);
        if (role == OpRole::Library)
          anyCall = true;
        else if (role != OpRole::Neutral)
          return false;
      }
  return anyCall;
}

OpRole classify(Operation *op) {
  if (auto launch = dyn_cast<gpu::LaunchFuncOp>(op))
    return launch.getAsyncToken() || !launch.getAsyncDependencies().empty()
               ? OpRole::Host
               : OpRole::Launch;
  if (auto alloc = dyn_cast<gpu::AllocOp>(op))
    if (!alloc.getAsyncToken() && !alloc.getHostShared())
      return OpRole::Memory;
  if (auto dealloc = dyn_cast<gpu::DeallocOp>(op))
    if (!dealloc.getAsyncToken())
      return OpRole::Memory;
  if (auto copy = dyn_cast<gpu::MemcpyOp>(op))
    if (!copy.getAsyncToken())
      return OpRole::Memory;
  if (tofu::isLibraryCall(op))
    return OpRole::Library;
  if (tofu::callsFunctionWithBody(op))
    return OpRole::Call;
  if (op->getNumRegions() > 0 && holdsOnlyLibraryCalls(op))
    return OpRole::Library;
  if (op->getNumRegions() > 0)
    return OpRole::Host;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return OpRole::Host;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  for (const MemoryEffects::EffectInstance &effect : instances)
    if (!isa<MemoryEffects::Allocate>(effect.getEffect()))
      return OpRole::Host;
  return OpRole::Neutral;
}

struct TofuGPUStreamOrderPass
    : public tofu::impl::TofuGPUStreamOrderBase<TofuGPUStreamOrderPass> {
  void runOnOperation() override;
  void orderBlock(Block &block, bool queuedBefore);
};

} // namespace

/// Orders `block`; `queuedBefore` says whether work queued before it (by
/// a caller) may still be running when it starts.
void TofuGPUStreamOrderPass::orderBlock(Block &block, bool queuedBefore) {
  auto tokenType = gpu::AsyncTokenType::get(&getContext());
  Value current;
  auto startChain = [&](Operation *before) {
    if (!current) {
      OpBuilder b(before);
      current =
          gpu::WaitOp::create(b, before->getLoc(), tokenType, ValueRange())
              .getAsyncToken();
    }
  };
  // Whether the chain holds work that the host must wait for before it
  // touches memory: launches, library calls, allocations. A chain of
  // deallocations only does not: they hand blocks back to the runtime's
  // cache, and later work that reuses them is queued after them. Such a
  // chain stays open across host ops (and across a function's return).
  bool chainHasWork = false;
  // Work that was queued outside this block's chain (by a caller, or by a
  // function that this block called) and that the host has not waited for.
  // All work is on the runtime's one stream, so waiting for any chain, or a
  // new one, waits for it too.
  bool otherWork = queuedBefore;
  auto waitBefore = [&](Operation *op, bool always) {
    if (!(current && (always || chainHasWork)) && !otherWork)
      return;
    OpBuilder b(op);
    if (!current)
      current = gpu::WaitOp::create(b, op->getLoc(), tokenType, ValueRange())
                    .getAsyncToken();
    gpu::WaitOp::create(b, op->getLoc(), Type(), ValueRange{current});
    current = Value();
    chainHasWork = false;
    otherWork = false;
  };
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (&op == block.getTerminator()) {
      // A function returns with its work queued (its callers wait before
      // they touch memory); a region's blocks end with theirs done.
      if (!isa<func::ReturnOp>(op))
        waitBefore(&op, /*always=*/true);
      break;
    }
    switch (classify(&op)) {
    case OpRole::Neutral:
      break;
    case OpRole::Library:
      startChain(&op);
      chainHasWork = true;
      break;
    case OpRole::Call:
      // The callee waits for the queued work before it touches memory (its
      // entry counts as queued after), and returns with its own work queued.
      otherWork = true;
      break;
    case OpRole::Launch: {
      auto launch = cast<gpu::LaunchFuncOp>(op);
      startChain(launch);
      OpBuilder b(launch);
      std::optional<gpu::KernelDim3> cluster;
      if (launch.hasClusterSize())
        cluster = launch.getClusterSizeOperandValues();
      auto async = gpu::LaunchFuncOp::create(
          b, launch.getLoc(), launch.getKernelAttr(),
          launch.getGridSizeOperandValues(), launch.getBlockSizeOperandValues(),
          launch.getDynamicSharedMemorySize(), launch.getKernelOperands(),
          tokenType, ValueRange{current}, cluster);
      for (NamedAttribute attr : launch->getDiscardableAttrs())
        async->setAttr(attr.getName(), attr.getValue());
      current = async.getAsyncToken();
      chainHasWork = true;
      launch.erase();
      break;
    }
    case OpRole::Memory: {
      startChain(&op);
      OpBuilder b(&op);
      if (auto copy = dyn_cast<gpu::MemcpyOp>(op)) {
        current = gpu::MemcpyOp::create(b, copy.getLoc(), tokenType,
                                        ValueRange{current}, copy.getDst(),
                                        copy.getSrc())
                      .getAsyncToken();
        chainHasWork = true;
      } else if (auto alloc = dyn_cast<gpu::AllocOp>(op)) {
        auto async = gpu::AllocOp::create(
            b, alloc.getLoc(), alloc.getMemref().getType(), tokenType,
            ValueRange{current}, alloc.getDynamicSizes(),
            alloc.getSymbolOperands(), /*hostShared=*/false);
        alloc.getMemref().replaceAllUsesWith(async.getMemref());
        current = async.getAsyncToken();
        chainHasWork = true;
      } else {
        auto dealloc = cast<gpu::DeallocOp>(op);
        current = gpu::DeallocOp::create(b, dealloc.getLoc(), tokenType,
                                         ValueRange{current},
                                         dealloc.getMemref())
                      .getAsyncToken();
      }
      op.erase();
      break;
    }
    case OpRole::Host:
      // An op with regions orders its blocks with chains of their own:
      // the open chain is closed before it, whatever it holds.
      waitBefore(&op, /*always=*/op.getNumRegions() > 0);
      for (Region &region : op.getRegions())
        for (Block &nested : region)
          orderBlock(nested, /*queuedBefore=*/false);
      break;
    }
  }
  // A block without a terminator (e.g. a module's) ends with the work done.
  if (current && !block.empty() &&
      !block.back().hasTrait<OpTrait::IsTerminator>()) {
    OpBuilder b = OpBuilder::atBlockEnd(&block);
    gpu::WaitOp::create(b, block.back().getLoc(), Type(), ValueRange{current});
  }
}

void TofuGPUStreamOrderPass::runOnOperation() {
  getOperation().walk([&](FunctionOpInterface func) {
    if (func->getParentOfType<gpu::GPUModuleOp>() || func.isExternal())
      return;
    // A function may be called with work still queued, except the
    // training driver (tofu-train-driver's @main), which nothing calls.
    bool calledWithWork = !func->hasAttr(tofu::attrs::kDriver);
    for (Block &block : func.getFunctionBody())
      orderBlock(block, calledWithWork && block.isEntryBlock());
  });
}
