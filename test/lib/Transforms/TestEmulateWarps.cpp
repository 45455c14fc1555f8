//===- TestEmulateWarps.cpp - Warp reductions run on the host -------------===//
//
// -test-tofu-emulate-warps rewrites each warp of tofu-gpu-warp-reductions
// (an scf.parallel over 32 lanes whose body combines the lanes' values with
// gpu.shuffle xor) into host code that computes the same: every lane's
// value up to the first shuffle into a buffer of 32, then each shuffle
// step as a loop over the lanes that combines lane l's value with lane
// l xor offset's, then the rest of the body as lane 0. The lowered step
// then runs on the CPU, so that the pass's loads, body and stores are
// checked against the CPU's numbers without a GPU.
//
//===----------------------------------------------------------------------===//

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"

using namespace mlir;

namespace {

struct TestEmulateWarpsPass
    : public PassWrapper<TestEmulateWarpsPass, OperationPass<ModuleOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(TestEmulateWarpsPass)

  StringRef getArgument() const final { return "test-tofu-emulate-warps"; }
  StringRef getDescription() const final {
    return "Run the warps of tofu-gpu-warp-reductions as host loops";
  }
  void getDependentDialects(DialectRegistry &registry) const override {
    registry
        .insert<arith::ArithDialect, memref::MemRefDialect, scf::SCFDialect>();
  }

  void runOnOperation() override {
    SmallVector<scf::ParallelOp> warps;
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op.getBody()->getOps<gpu::ShuffleOp>().empty())
        warps.push_back(op);
    });
    for (scf::ParallelOp warp : warps)
      if (failed(emulate(warp)))
        return signalPassFailure();
  }

  LogicalResult emulate(scf::ParallelOp warp) {
    std::optional<int64_t> lanes = getConstantIntValue(warp.getUpperBound()[0]);
    if (warp.getNumLoops() != 1 || !lanes)
      return warp.emitError("test-tofu-emulate-warps: not a warp");
    Block *body = warp.getBody();
    Value lane = warp.getInductionVars()[0];
    // The ops before the first shuffle compute each lane's value; each
    // shuffle's one user combines; the rest is lane 0's.
    SmallVector<Operation *> before, after;
    SmallVector<gpu::ShuffleOp> shuffles;
    for (Operation &op : body->without_terminator()) {
      if (auto shuffle = dyn_cast<gpu::ShuffleOp>(op))
        shuffles.push_back(shuffle);
      else if (shuffles.empty())
        before.push_back(&op);
      else
        after.push_back(&op);
    }
    OpBuilder b(warp);
    Location loc = warp.getLoc();
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    Value count = arith::ConstantIndexOp::create(b, loc, *lanes);
    Type type = shuffles.front().getValue().getType();
    auto bufferType = MemRefType::get({*lanes}, type);
    Value values = memref::AllocaOp::create(b, loc, bufferType);
    // Every lane's value before the first shuffle.
    auto laneLoop = [&](function_ref<void(OpBuilder &, Value)> fn) {
      scf::ForOp::create(b, loc, zero, count, one, ValueRange{},
                         [&](OpBuilder &nested, Location, Value l, ValueRange) {
                           fn(nested, l);
                           scf::YieldOp::create(nested, loc);
                         });
    };
    laneLoop([&](OpBuilder &nested, Value l) {
      IRMapping map;
      map.map(lane, l);
      for (Operation *op : before)
        nested.clone(*op, map);
      memref::StoreOp::create(
          nested, loc, map.lookup(shuffles.front().getValue()), values, l);
    });
    Operation *last = nullptr;
    for (gpu::ShuffleOp shuffle : shuffles) {
      std::optional<int64_t> offset = getConstantIntValue(shuffle.getOffset());
      if (shuffle.getMode() != gpu::ShuffleMode::XOR || !offset ||
          !shuffle.getShuffleResult().hasOneUse())
        return shuffle.emitError("test-tofu-emulate-warps: not an xor "
                                 "shuffle with one combining user");
      Operation *combine = *shuffle.getShuffleResult().getUsers().begin();
      Value next = memref::AllocaOp::create(b, loc, bufferType);
      Value shift = arith::ConstantIndexOp::create(b, loc, *offset);
      laneLoop([&](OpBuilder &nested, Value l) {
        Value mine = memref::LoadOp::create(nested, loc, values, l);
        Value peer = arith::XOrIOp::create(nested, loc, l, shift);
        Value theirs = memref::LoadOp::create(nested, loc, values, peer);
        IRMapping map;
        map.map(shuffle.getValue(), mine);
        map.map(shuffle.getShuffleResult(), theirs);
        memref::StoreOp::create(
            nested, loc, nested.clone(*combine, map)->getResult(0), next, l);
      });
      values = next;
      last = combine;
    }
    // The rest of the body as lane 0, with the ops before the shuffles
    // again for the values it uses.
    IRMapping map;
    map.map(lane, zero);
    for (Operation *op : before)
      b.clone(*op, map);
    map.map(last->getResult(0), memref::LoadOp::create(b, loc, values, zero));
    // The combining ops are done above.
    for (Operation *op : after)
      if (!llvm::any_of(shuffles, [&](gpu::ShuffleOp s) {
            return llvm::is_contained(s->getUsers(), op);
          }))
        b.clone(*op, map);
    warp.erase();
    return success();
  }
};

} // namespace

namespace tofu {
namespace test {
void registerTestEmulateWarpsPass() {
  PassRegistration<TestEmulateWarpsPass>();
}
} // namespace test
} // namespace tofu
