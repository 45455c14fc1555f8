//===- DeviceMemory.cpp - Buffers in device memory ------------------------===//
//
// Implements tofu-gpu-device-memory: every buffer that a kernel, a library
// call or another function of the module uses moves to device memory
// (gpu.alloc). Where the host reads or writes such a buffer (a load, a
// store, a call of an external function such as the CPU runtime's fills),
// it works on a host copy: the buffer is copied to the host before the op
// and back after it (gpu.memcpy, queued on the stream by
// tofu-gpu-stream-order). Buffers that only the host touches stay in host
// memory. Copies become linalg.copy kernels, and constant globals that the
// GPU reads are copied into a device buffer at each call's entry.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/ADT/MapVector.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUDEVICEMEMORY
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// The uses of one buffer (an allocation, a function argument or a global),
/// through its views.
struct BufferUses {
  /// Whether a kernel, a copy, a library call or another function of the
  /// module uses the buffer.
  bool device = false;
  /// The ops that run on the host and read the buffer, each with whether
  /// it may also write it (all but loads).
  llvm::MapVector<Operation *, bool> host;
  /// Whether a function returns the buffer or a view of it.
  bool returned = false;
  /// An op that cannot work on a host copy (an op with regions, one that
  /// returns an alias of the buffer, a terminator that passes it on).
  Operation *unsupported = nullptr;
};

/// The buffer that `def` is a view of (a view, or the base buffer of
/// extract_strided_metadata), or null.
Value getViewSource(Operation *def) {
  if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(def))
    return metadata.getSource();
  if (auto view = dyn_cast<ViewLikeOpInterface>(def))
    return view.getViewSource();
  return Value();
}

/// Walks the uses of `buffer` through views and classifies them.
BufferUses collectUses(Value buffer) {
  BufferUses uses;
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
      if (isa<memref::DeallocOp, memref::DimOp, gpu::DeallocOp>(user))
        continue;
      if (isa<memref::ExtractAlignedPointerAsIndexOp>(user)) {
        uses.device = true; // A library call's operand.
        continue;
      }
      if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
        push(metadata.getBaseBuffer());
        continue;
      }
      if (auto view = dyn_cast<ViewLikeOpInterface>(user);
          view && view.getViewSource() == value) {
        for (Value result : user->getResults())
          if (isa<BaseMemRefType>(result.getType()))
            push(result);
        continue;
      }
      if (auto copy = dyn_cast<memref::CopyOp>(user);
          copy && (!isa<MemRefType>(copy.getSource().getType()) ||
                   !isa<MemRefType>(copy.getTarget().getType()))) {
        uses.unsupported = user; // No linalg.copy of unranked buffers.
        continue;
      }
      if (isa<func::ReturnOp>(user))
        uses.returned = true;
      if (isa<linalg::LinalgOp, memref::CopyOp, func::ReturnOp>(user)) {
        uses.device = true;
        continue;
      }
      if (tofu::callsFunctionWithBody(user)) {
        uses.device = true;
        continue;
      }
      // A library call that takes buffers (a GPU collective of
      // convert-tofu-to-mpi{runtime=gpu}): its first `tofu.device_operands`
      // operands are device buffers, the others host constants it reads.
      if (auto count =
              user->getAttrOfType<IntegerAttr>(tofu::kDeviceOperandsAttr);
          count && tofu::isLibraryCall(user)) {
        if ((int64_t)use.getOperandNumber() < count.getInt()) {
          uses.device = true;
          continue;
        }
        uses.host.insert({user, /*writes=*/false});
        continue;
      }
      bool aliases = llvm::any_of(user->getResultTypes(), [](Type type) {
        return isa<BaseMemRefType>(type);
      });
      if (user->getNumRegions() > 0 || isa<ViewLikeOpInterface>(user) ||
          aliases || user->hasTrait<OpTrait::IsTerminator>()) {
        uses.unsupported = user;
        continue;
      }
      uses.host[user] |= !isa<memref::LoadOp>(user);
    }
  }
  return uses;
}

struct TofuGPUDeviceMemoryPass
    : public tofu::impl::TofuGPUDeviceMemoryBase<TofuGPUDeviceMemoryPass> {
  void runOnOperation() override;
  LogicalResult placeOnDevice(Value buffer, const BufferUses &uses);
};

} // namespace

/// Gives each host access to the device buffer `buffer` a host copy: the
/// op reads and writes a host buffer of the same type, which is filled
/// from the device before it and copied back after it.
LogicalResult TofuGPUDeviceMemoryPass::placeOnDevice(Value buffer,
                                                     const BufferUses &uses) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  for (auto &[op, writes] : uses.host) {
    if (!type || !type.hasStaticShape() || !type.getLayout().isIdentity())
      return op->emitOpError("tofu-gpu-device-memory: the host accesses a "
                             "device buffer of type ")
             << buffer.getType()
             << ", which has no static shape and identity layout";
    Location loc = op->getLoc();
    OpBuilder b(op);
    Value host = memref::AllocOp::create(b, loc, type);
    gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), host, buffer);
    // Redirect the op's operands from the device buffer's views to the
    // same views of the host copy.
    IRMapping mapping;
    mapping.map(buffer, host);
    for (OpOperand &operand : op->getOpOperands()) {
      SmallVector<Operation *> chain;
      Value value = operand.get();
      while (value != buffer) {
        Operation *def = value.getDefiningOp();
        Value source = def ? getViewSource(def) : Value();
        if (!source)
          break;
        chain.push_back(def);
        value = source;
      }
      if (value != buffer)
        continue;
      for (Operation *def : llvm::reverse(chain))
        if (!mapping.contains(def->getResult(0)))
          b.clone(*def, mapping);
      operand.set(mapping.lookup(operand.get()));
    }
    b.setInsertionPointAfter(op);
    if (writes)
      gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), buffer, host);
    memref::DeallocOp::create(b, loc, host);
  }
  return success();
}

void TofuGPUDeviceMemoryPass::runOnOperation() {
  ModuleOp module = getOperation();
  // Collect first: the rewrites create ops of the kinds being walked.
  SmallVector<memref::AllocOp> allocs;
  SmallVector<memref::DeallocOp> deallocs;
  SmallVector<memref::CopyOp> copies;
  SmallVector<memref::GetGlobalOp> globals;
  // Device buffers from elsewhere: a function's arguments, the results of
  // a call of a function of the module.
  SmallVector<Value> external;
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
    else if (auto func = dyn_cast<FunctionOpInterface>(op);
             func && !func.isExternal())
      llvm::append_range(external, func.getArguments());
    else if (tofu::callsFunctionWithBody(op))
      llvm::append_range(external, op->getResults());
  });
  llvm::erase_if(external, [](Value value) {
    return !isa<BaseMemRefType>(value.getType());
  });

  auto reportUnsupported = [](const BufferUses &uses) {
    uses.unsupported->emitOpError(
        "tofu-gpu-device-memory: cannot place a buffer that this op uses "
        "(an op with regions, an alias of the buffer, a terminator that "
        "passes it on, or a copy of an unranked buffer)");
  };

  // Device buffers: those that the GPU uses. The others stay in host memory.
  DenseSet<Value> onDevice;
  for (memref::AllocOp alloc : allocs) {
    auto type = alloc.getMemref().getType();
    if (type.getMemorySpace()) {
      alloc.emitOpError("tofu-gpu-device-memory: buffers in a memory "
                        "space are not supported");
      return signalPassFailure();
    }
    BufferUses uses = collectUses(alloc.getMemref());
    if (uses.device && uses.unsupported) {
      reportUnsupported(uses);
      return signalPassFailure();
    }
    if (!uses.device)
      continue;
    OpBuilder b(alloc);
    auto device = gpu::AllocOp::create(
        b, alloc.getLoc(), type, /*asyncToken=*/Type(),
        /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
        alloc.getSymbolOperands(), /*hostShared=*/false);
    alloc.getMemref().replaceAllUsesWith(device.getMemref());
    alloc.erase();
    onDevice.insert(device.getMemref());
    if (failed(placeOnDevice(device.getMemref(), uses)))
      return signalPassFailure();
  }
  // A function's memref arguments and results are device buffers: its
  // callers pass their own device buffers, and it returns its own.
  for (Value value : external) {
    BufferUses uses = collectUses(value);
    if (uses.unsupported) {
      reportUnsupported(uses);
      return signalPassFailure();
    }
    if (failed(placeOnDevice(value, uses)))
      return signalPassFailure();
    onDevice.insert(value);
  }
  // Constant globals live in host memory, which kernels cannot read: one
  // that the GPU uses is copied into a device buffer at the function's
  // entry, which is freed before every return (unless returned).
  for (memref::GetGlobalOp global : globals) {
    BufferUses uses = collectUses(global.getResult());
    if (!uses.device)
      continue;
    if (uses.unsupported) {
      reportUnsupported(uses);
      return signalPassFailure();
    }
    auto func = global->getParentOfType<FunctionOpInterface>();
    if (!func || func.isExternal()) {
      global.emitOpError("tofu-gpu-device-memory: a global outside a "
                         "function body is not supported");
      return signalPassFailure();
    }
    auto definition = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(
        global, global.getNameAttr());
    if (!definition || !definition.getConstant()) {
      global.emitOpError("tofu-gpu-device-memory: only constant globals are "
                         "supported (each call would write its own copy)");
      return signalPassFailure();
    }
    auto type = cast<MemRefType>(global.getType());
    if (!type.getLayout().isIdentity() || !type.hasStaticShape()) {
      global.emitOpError("tofu-gpu-device-memory: only globals with a "
                         "static shape and the identity layout are supported");
      return signalPassFailure();
    }
    Block &entry = func.getFunctionBody().front();
    OpBuilder b = OpBuilder::atBlockBegin(&entry);
    Location loc = global.getLoc();
    auto hostCopy =
        memref::GetGlobalOp::create(b, loc, type, global.getNameAttr());
    auto device = gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                       ValueRange(), ValueRange(),
                                       /*hostShared=*/false);
    gpu::MemcpyOp::create(b, loc, Type(), ValueRange(), device.getMemref(),
                          hostCopy);
    global.getResult().replaceAllUsesWith(device.getMemref());
    global.erase();
    if (failed(placeOnDevice(device.getMemref(), uses)))
      return signalPassFailure();
    if (uses.returned)
      continue;
    func.walk([&](Operation *op) {
      if (op->hasTrait<OpTrait::ReturnLike>() &&
          op->getParentOp() == func.getOperation()) {
        OpBuilder rb(op);
        gpu::DeallocOp::create(rb, loc, /*asyncToken=*/Type(), ValueRange(),
                               device.getMemref());
      }
    });
  }
  // Deallocations of device buffers (through their views) become
  // gpu.dealloc; host buffers keep memref.dealloc.
  for (memref::DeallocOp dealloc : deallocs) {
    Value root = dealloc.getMemref();
    while (Operation *def = root.getDefiningOp()) {
      Value source = getViewSource(def);
      if (!source)
        break;
      root = source;
    }
    if (!onDevice.contains(root))
      continue;
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
}
