//===- CheckLowered.cpp - The end of the GPU pipeline is fully lowered ----===//
//
// Implements tofu-gpu-check-lowered: no linalg op, no scf.parallel, no
// un-serialized gpu.module and no gpu.alloc, gpu.dealloc or gpu.wait that
// the host lowering left may be left, and kernels must come with a
// gpu.binary.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"
#include "tofu/Dialect/Tofu/IR/Tofu.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUGPUCHECKLOWERED
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

struct TofuGPUCheckLoweredPass
    : public tofu::impl::TofuGPUCheckLoweredBase<TofuGPUCheckLoweredPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    bool failed = false;
    bool hasLaunch = false, hasBinary = false;
    module.walk([&](Operation *op) {
      if (isa<linalg::LinalgOp>(op)) {
        op->emitOpError("tofu-gpu-check-lowered: a linalg op is left after "
                        "the GPU lowering");
        failed = true;
      } else if (isa<scf::ParallelOp>(op)) {
        op->emitOpError("tofu-gpu-check-lowered: a parallel loop was not "
                        "mapped to the GPU");
        failed = true;
      } else if (isa<gpu::GPUModuleOp>(op)) {
        op->emitOpError("tofu-gpu-check-lowered: a gpu.module was not "
                        "serialized to a binary");
        failed = true;
      } else if (isa<gpu::AllocOp, gpu::DeallocOp, gpu::WaitOp>(op)) {
        op->emitOpError("tofu-gpu-check-lowered: the host lowering left this "
                        "op, it was not turned into runtime calls");
        failed = true;
      } else if (isa<gpu::LaunchFuncOp, gpu::LaunchOp>(op)) {
        hasLaunch = true;
      } else if (isa<gpu::BinaryOp>(op)) {
        hasBinary = true;
      }
    });
    if (hasLaunch && !hasBinary) {
      module.emitError("tofu-gpu-check-lowered: kernels are launched but no "
                       "gpu.binary holds them");
      failed = true;
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace
