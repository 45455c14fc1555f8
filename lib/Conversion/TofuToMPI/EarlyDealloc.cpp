//===- EarlyDealloc.cpp - Free buffers after their last use ---------------===//
//
// Implements tofu-early-dealloc. Ownership-based buffer deallocation frees
// every buffer of a block at the end of the block, which makes the peak of a
// straight-line training step the sum of all its buffers. This pass moves
// each such `memref.dealloc` up to just after the last operation of the
// block that uses the buffer or a view of it, so that a step holds only the
// buffers that are still needed. It also implements tofu-split-call-deallocs,
// which gives the results of calls their own deallocations so that the
// first pass can move them too.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToMPI/EarlyDealloc.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tofu-early-dealloc"

namespace tofu {
#define GEN_PASS_DEF_TOFUEARLYDEALLOC
#define GEN_PASS_DEF_TOFUSPLITCALLDEALLOCS
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

struct TofuEarlyDeallocPass
    : public tofu::impl::TofuEarlyDeallocBase<TofuEarlyDeallocPass> {
  void runOnOperation() override;
};

/// The buffer that `v` is a view of: through view-like operations, casts
/// and the base buffer of `memref.extract_strided_metadata`.
Value getRootBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def)) {
      v = view.getViewSource();
    } else if (auto cast = dyn_cast<memref::CastOp>(def)) {
      v = cast.getSource();
    } else if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def);
               meta && v == meta.getBaseBuffer()) {
      v = meta.getSource();
    } else {
      break;
    }
  }
  return v;
}

/// Whether an operation may turn a buffer into something that this pass
/// cannot follow (an address as an integer, an LLVM value).
bool escapes(Operation *op) {
  return isa<memref::ExtractAlignedPointerAsIndexOp,
             UnrealizedConversionCastOp>(op) ||
         (op->getDialect() && op->getDialect()->getNamespace() == "llvm");
}

/// The last operation of `block` that uses `root` or a value that may be a
/// view of it, ignoring `dealloc`; `root`'s definition when nothing uses
/// it. Returns null when a use cannot be placed in the block or the buffer
/// escapes.
Operation *getLastUser(Block *block, Value root, Operation *dealloc) {
  Operation *last = root.getDefiningOp();
  SmallVector<Value> worklist{root};
  llvm::SmallPtrSet<Value, 8> seen{root};
  auto add = [&](Value v) {
    if (isa<BaseMemRefType>(v.getType()) && seen.insert(v).second)
      worklist.push_back(v);
  };
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (OpOperand &use : v.getUses()) {
      Operation *owner = use.getOwner();
      if (owner == dealloc)
        continue;
      Operation *ancestor = block->findAncestorOpInBlock(*owner);
      if (!ancestor || escapes(owner))
        return nullptr;
      if (last->isBeforeInBlock(ancestor))
        last = ancestor;
      // Callees return buffers they own (ownership-based deallocation), so
      // call results are never views of their operands.
      if (isa<func::CallOp>(owner))
        continue;
      // Anything else may return a view: its results, those of the
      // operation of the block that holds it, and the buffers its regions
      // receive.
      for (Value r : owner->getResults())
        add(r);
      if (ancestor != owner)
        for (Value r : ancestor->getResults())
          add(r);
      for (Region &region : owner->getRegions())
        for (Block &b : region)
          for (BlockArgument arg : b.getArguments())
            add(arg);
    }
  }
  return last;
}

} // namespace

void TofuEarlyDeallocPass::runOnOperation() {
  SmallVector<memref::DeallocOp> deallocs;
  getOperation()->walk([&](memref::DeallocOp op) { deallocs.push_back(op); });
  [[maybe_unused]] unsigned moved = 0;
  for (memref::DeallocOp dealloc : deallocs) {
    Block *block = dealloc->getBlock();
    Value root = getRootBuffer(dealloc.getMemref());
    // A buffer allocated in the block, or the result of a call in it
    // (owned by the caller: ownership-based deallocation makes callees
    // return buffers they own).
    Operation *def = root.getDefiningOp();
    if (!def || !isa<memref::AllocOp, func::CallOp>(def) ||
        def->getBlock() != block)
      continue;
    Operation *last = getLastUser(block, root, dealloc);
    if (!last || !last->isBeforeInBlock(dealloc) ||
        last->getNextNode() == dealloc.getOperation())
      continue;
    // The freed value (a view or the base buffer) is defined at or before
    // the last use, since its definition uses the buffer.
    dealloc->moveAfter(last);
    ++moved;
  }
  LLVM_DEBUG(llvm::dbgs() << "tofu-early-dealloc: moved " << moved << " of "
                          << deallocs.size() << " deallocations\n");
}

//===----------------------------------------------------------------------===//
// tofu-split-call-deallocs
//===----------------------------------------------------------------------===//

namespace {

struct TofuSplitCallDeallocsPass
    : public tofu::impl::TofuSplitCallDeallocsBase<
          TofuSplitCallDeallocsPass> {
  void runOnOperation() override;
};

/// Whether `op` allocates its memref result (memref.alloc, gpu.alloc,
/// bufferization.clone, ...): each execution yields a buffer that aliases
/// nothing live.
bool allocatesResult(Operation *op, Value result) {
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> instances;
  effects.getEffects(instances);
  return llvm::any_of(instances, [&](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Allocate>(e.getEffect()) &&
           e.getValue() == result;
  });
}

/// Whether every memref result of `callee` is a view of a buffer that the
/// callee allocates, a distinct one for each result, on every return.
bool returnsFreshBuffers(func::FuncOp callee) {
  if (!callee || callee.isExternal())
    return false;
  bool fresh = true;
  callee.walk([&](func::ReturnOp ret) {
    llvm::SmallPtrSet<Value, 8> roots;
    for (Value v : ret.getOperands()) {
      if (!isa<BaseMemRefType>(v.getType()))
        continue;
      Value root = getRootBuffer(v);
      Operation *def = root.getDefiningOp();
      if (!def || !allocatesResult(def, root) || !roots.insert(root).second)
        fresh = false;
    }
  });
  return fresh;
}

} // namespace

void TofuSplitCallDeallocsPass::runOnOperation() {
  SmallVector<bufferization::DeallocOp> deallocs;
  getOperation()->walk(
      [&](bufferization::DeallocOp op) { deallocs.push_back(op); });
  llvm::DenseMap<Operation *, bool> freshCallees;
  auto isFreshCall = [&](Operation *def) {
    auto call = dyn_cast_or_null<func::CallOp>(def);
    if (!call)
      return false;
    auto [it, inserted] = freshCallees.try_emplace(call, false);
    if (inserted) {
      auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      it->second = returnsFreshBuffers(callee);
    }
    return it->second;
  };
  unsigned split = 0;
  for (bufferization::DeallocOp dealloc : deallocs) {
    if (!dealloc.getRetained().empty())
      continue;
    SmallVector<Value> roots;
    bool allKnown = true;
    llvm::SmallPtrSet<Value, 8> seen;
    for (auto [memref, condition] :
         llvm::zip(dealloc.getMemrefs(), dealloc.getConditions())) {
      Value root = getRootBuffer(memref);
      roots.push_back(root);
      if (matchPattern(condition, m_Zero()))
        continue; // never freed here
      Operation *def = root.getDefiningOp();
      bool fresh = def && (allocatesResult(def, root) || isFreshCall(def));
      if (!fresh || !seen.insert(root).second)
        allKnown = false;
    }
    if (!allKnown)
      continue;
    // The buffers are distinct, fresh and retained by nothing: each gets
    // its own deallocation, of the buffer itself rather than of the base
    // buffer extracted from it, so that tofu-early-dealloc can move it up
    // to the buffer's last use.
    OpBuilder b(dealloc);
    for (auto [root, condition] : llvm::zip(roots, dealloc.getConditions())) {
      if (matchPattern(condition, m_Zero()))
        continue;
      bufferization::DeallocOp::create(b, dealloc.getLoc(), ValueRange{root},
                                       ValueRange{condition}, ValueRange{});
      ++split;
    }
    dealloc.erase();
  }
  (void)split;
  LLVM_DEBUG(llvm::dbgs() << "tofu-split-call-deallocs: " << split
                          << " deallocations on their own\n");
}
