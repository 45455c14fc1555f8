//===- TofuToMPI.cpp - Communication to the MPI runtime -------------------===//
//
// Lowers the communication of a partitioned program to calls into the CPU
// runtime (include/tofu/Runtime/TofuRuntime.h), on tensors, so that the
// usual one-shot bufferization and LLVM lowering follow.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToMPI/TofuToMPI.h"
#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"
#include "tofu/Transforms/TrainingAttributes.h"
#include "tofu/Conversion/TofuToMPI/RuntimeABI.h"
#include "tofu/Dialect/Tofu/IR/Tofu.h"

#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/SymbolTable.h"

namespace tofu {
#define GEN_PASS_DEF_CONVERTTOFUTOMPI
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// Element type codes of the runtime.
constexpr int64_t kF32 = 0, kF64 = 1;

Value i64(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIntOp::create(b, loc, v, 64);
}

FailureOr<int64_t> typeCode(Operation *op, Type element) {
  if (element.isF32())
    return kF32;
  if (element.isF64())
    return kF64;
  return op->emitOpError("convert-tofu-to-mpi: element type ")
         << element << " is not supported (f32 or f64)";
}

/// Allocates the result buffer, calls `callee` with the input, the result
/// and `extra` arguments (constants), and returns the result as a tensor.
///
/// The input's buffer view, the call and the result live in one
/// `scf.execute_region no_inline`. Outside of it, `to_buffer` is a pure op
/// that `cse` merges with an identical one earlier in the block, or that
/// code motion moves: the runtime would then read a buffer that one-shot
/// bufferization, which takes the tensor as read where its `to_buffer`
/// stands, has already reused. In the region, the read stays at the call,
/// whatever a compiler runs between this pass and bufferization.
///
/// With `gpuTag`, the call is tagged as a library call of the GPU
/// pipeline whose first two operands are device buffers.
Value callWithResult(ModuleOp module, OpBuilder &b, Location loc,
                     StringRef callee, Value input, RankedTensorType result,
                     ArrayRef<Value> extra, bool gpuTag) {
  auto region = scf::ExecuteRegionOp::create(b, loc, TypeRange{result});
  region.setNoInline(true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&region.getRegion().emplaceBlock());
  auto memrefType = MemRefType::get(result.getShape(), result.getElementType());
  Value out = memref::AllocOp::create(b, loc, memrefType);
  Value in = getUnrankedView(b, loc, input);
  Value outU = memref::CastOp::create(
      b, loc, UnrankedMemRefType::get(result.getElementType(), 0), out);
  SmallVector<Value> args{in, outU};
  args.append(extra.begin(), extra.end());
  func::FuncOp f =
      declareRuntimeFunction(module, callee, ValueRange(args).getTypes(), {});
  auto call = func::CallOp::create(b, loc, f, args);
  call->setAttr(kWritesOperandAttr, b.getI64IntegerAttr(1));
  if (gpuTag) {
    call->setAttr(kLibraryAttr, b.getStringAttr("collective"));
    call->setAttr(kDeviceOperandsAttr, b.getI64IntegerAttr(2));
  }
  Value tensor = bufferization::ToTensorOp::create(b, loc, result, out,
                                                   /*restrict=*/true,
                                                   /*writable=*/true);
  scf::YieldOp::create(b, loc, tensor);
  return region.getResult(0);
}

/// The runtime function `base` for buffers of `element`: one declaration per
/// element type, since the call's unranked buffers name it (the runtime
/// moves bytes either way).
FailureOr<std::string> getMoveCallee(Operation *op, StringRef base,
                                     Type element) {
  std::string callee = base.str();
  if (element.isF32())
    return callee;
  if (!element.isF64() && !element.isInteger(32) && !element.isInteger(64))
    return op->emitOpError("convert-tofu-to-mpi: element type ")
           << element << " is not supported (f32, f64, i32 or i64)";
  llvm::raw_string_ostream os(callee);
  os << "_" << element;
  return callee;
}

/// Checks that the grid axes of a collective increase, so that the
/// runtime's group order (row-major over the axes in increasing order) is
/// the one the operation names.
LogicalResult checkIncreasing(Operation *op, ArrayRef<int16_t> axes) {
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] <= axes[i - 1])
      return op->emitOpError("convert-tofu-to-mpi: grid axes must increase");
  return success();
}

/// The index of this rank in its group over `axes` of a grid of `shape`:
/// its row-major index over those axes.
Value getGroupIndex(ModuleOp module, OpBuilder &b, Location loc,
                    ArrayRef<int64_t> shape, ArrayRef<int16_t> axes) {
  func::FuncOp f =
      declareRuntimeFunction(module, "tofu_rank", {}, {b.getI64Type()});
  Value rank = arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      func::CallOp::create(b, loc, f, ValueRange{}).getResult(0));
  auto constant = [&](int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value index;
  for (int16_t a : axes) {
    int64_t stride = 1;
    for (size_t i = a + 1; i < shape.size(); ++i)
      stride *= shape[i];
    Value coord = rank;
    if (stride != 1)
      coord = arith::DivUIOp::create(b, loc, coord, constant(stride));
    if (a != 0)
      coord = arith::RemUIOp::create(b, loc, coord, constant(shape[a]));
    if (index)
      coord = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, index, constant(shape[a])),
          coord);
    index = coord;
  }
  return index ? index : constant(0);
}

struct ConvertTofuToMPIPass
    : public tofu::impl::ConvertTofuToMPIBase<ConvertTofuToMPIPass> {
  using ConvertTofuToMPIBase::ConvertTofuToMPIBase;
  void runOnOperation() override;
};

} // namespace

/// The grid shape and the bit mask of `axes`.
static FailureOr<std::pair<SmallVector<int64_t>, int64_t>>
getGrid(Operation *op, FlatSymbolRefAttr name, ArrayRef<int16_t> axes) {
  auto grid = SymbolTable::lookupNearestSymbolFrom<shard::GridOp>(op, name);
  if (!grid)
    return op->emitOpError("convert-tofu-to-mpi: no shard.grid ") << name;
  SmallVector<int64_t> shape(grid.getShape());
  for (int64_t k : shape)
    if (ShapedType::isDynamic(k))
      return op->emitOpError("convert-tofu-to-mpi: dynamic grids are not "
                             "supported");
  int64_t mask = 0;
  if (axes.empty())
    mask = (int64_t(1) << shape.size()) - 1;
  for (int16_t a : axes)
    mask |= int64_t(1) << a;
  return std::pair{shape, mask};
}

void ConvertTofuToMPIPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (runtime != "cpu" && runtime != "gpu") {
    module.emitError("convert-tofu-to-mpi: runtime must be cpu or gpu, not '")
        << runtime << "'";
    return signalPassFailure();
  }
  bool onGPU = runtime == "gpu";
  // The collectives' entry points: tofu_<op> of the MPI runtime, or
  // tofu_gpu_<op> of the GPU collectives.
  std::string prefix = onGPU ? "tofu_gpu_" : "tofu_";
  auto call = [&](OpBuilder &b, Location loc, StringRef callee, Value input,
                  RankedTensorType result, ArrayRef<Value> extra) {
    return callWithResult(module, b, loc, callee, input, result, extra, onGPU);
  };
  SmallVector<Operation *> ops;
  module.walk([&](Operation *op) {
    if (isa<FetchOp, shard::AllGatherOp, shard::AllToAllOp, shard::AllSliceOp,
            shard::AllReduceOp, shard::ReduceScatterOp,
            shard::ProcessLinearIndexOp>(op))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    Value replacement;
    if (auto fetch = dyn_cast<FetchOp>(op)) {
      auto type = fetch.getResult().getType();
      int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
      if (type.getRank() == 0) {
        replacement = fetch.getInput();
      } else {
        // One declaration per element type, since the call's unranked
        // buffers name it; the runtime moves bytes either way.
        std::string callee = prefix + "fetch";
        Type element = type.getElementType();
        if (!element.isF32()) {
          llvm::raw_string_ostream os(callee);
          os << "_" << element;
        }
        replacement = call(b, loc, callee, fetch.getInput(), type,
                           {getConstantInts(b, loc, fetch.getSrcOffsets()),
                            getConstantInts(b, loc, fetch.getDstOffsets()),
                            i64(b, loc, bytes)});
      }
    } else if (isa<shard::AllGatherOp, shard::AllToAllOp, shard::AllSliceOp>(
                   op)) {
      // Tile collectives: the group is the ranks that differ only in the
      // grid axes; no axes is a group of one.
      auto gridName = op->getAttrOfType<FlatSymbolRefAttr>("grid");
      auto axes = op->getAttrOfType<DenseI16ArrayAttr>("grid_axes");
      ArrayRef<int16_t> axisList;
      if (axes)
        axisList = axes.asArrayRef();
      Value input = op->getOperand(0);
      auto type = cast<RankedTensorType>(op->getResult(0).getType());
      auto grid = getGrid(op, gridName, axisList);
      if (failed(grid) || failed(checkIncreasing(op, axisList)))
        return signalPassFailure();
      int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
      if (axisList.empty() && input.getType() == type) {
        replacement = input;
      } else if (auto slice = dyn_cast<shard::AllSliceOp>(op)) {
        // No communication: the rank's chunk of its own tile.
        int64_t dim = slice.getSliceAxis().getSExtValue();
        Value index = getGroupIndex(module, b, loc, grid->first, axisList);
        Value offset = arith::MulIOp::create(
            b, loc, index,
            arith::ConstantIndexOp::create(b, loc, type.getDimSize(dim)));
        SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
        SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
        SmallVector<OpFoldResult> sizes;
        offsets[dim] = offset;
        for (int64_t n : type.getShape())
          sizes.push_back(b.getIndexAttr(n));
        replacement = tensor::ExtractSliceOp::create(b, loc, type, input,
                                                     offsets, sizes, strides);
      } else if (auto gather = dyn_cast<shard::AllGatherOp>(op)) {
        auto callee =
            getMoveCallee(op, prefix + "all_gather", type.getElementType());
        if (failed(callee))
          return signalPassFailure();
        replacement = call(b, loc, *callee, input, type,
                           {getConstantInts(b, loc, grid->first),
                            i64(b, loc, grid->second),
                            i64(b, loc, gather.getGatherAxis().getSExtValue()),
                            i64(b, loc, bytes)});
      } else {
        auto toAll = cast<shard::AllToAllOp>(op);
        auto callee =
            getMoveCallee(op, prefix + "all_to_all", type.getElementType());
        if (failed(callee))
          return signalPassFailure();
        if (toAll.getSplitAxis() == toAll.getConcatAxis()) {
          op->emitOpError("convert-tofu-to-mpi: an all_to_all that splits "
                          "and concatenates the same dimension is not "
                          "supported");
          return signalPassFailure();
        }
        replacement = call(b, loc, *callee, input, type,
                           {getConstantInts(b, loc, grid->first),
                            i64(b, loc, grid->second),
                            i64(b, loc, toAll.getSplitAxis().getSExtValue()),
                            i64(b, loc, toAll.getConcatAxis().getSExtValue()),
                            i64(b, loc, bytes)});
      }
    } else if (auto reduce = dyn_cast<shard::AllReduceOp>(op)) {
      auto type = cast<RankedTensorType>(reduce.getResult().getType());
      auto grid = getGrid(op, reduce.getGridAttr(), reduce.getGridAxes());
      auto code = typeCode(op, type.getElementType());
      if (failed(grid) || failed(code))
        return signalPassFailure();
      if (type != reduce.getInput().getType()) {
        op->emitOpError("convert-tofu-to-mpi: the element type changes");
        return signalPassFailure();
      }
      replacement = call(
          b, loc, prefix + "all_reduce", reduce.getInput(), type,
          {getConstantInts(b, loc, grid->first), i64(b, loc, grid->second),
           i64(b, loc, (int64_t)reduce.getReduction()), i64(b, loc, *code)});
    } else if (auto scatter = dyn_cast<shard::ReduceScatterOp>(op)) {
      auto type = cast<RankedTensorType>(scatter.getResult().getType());
      auto grid = getGrid(op, scatter.getGridAttr(), scatter.getGridAxes());
      auto code = typeCode(op, type.getElementType());
      if (failed(grid) || failed(code))
        return signalPassFailure();
      if (scatter.getGridAxes().size() != 1) {
        op->emitOpError("convert-tofu-to-mpi: reduce_scatter over several "
                        "grid axes is not supported");
        return signalPassFailure();
      }
      replacement = call(
          b, loc, prefix + "reduce_scatter", scatter.getInput(), type,
          {getConstantInts(b, loc, grid->first),
           i64(b, loc, scatter.getGridAxes()[0]),
           i64(b, loc, scatter.getScatterAxis().getSExtValue()),
           i64(b, loc, (int64_t)scatter.getReduction()), i64(b, loc, *code)});
    } else if (isa<shard::ProcessLinearIndexOp>(op)) {
      func::FuncOp f =
          declareRuntimeFunction(module, "tofu_rank", {}, {b.getI64Type()});
      Value rank = func::CallOp::create(b, loc, f, ValueRange{}).getResult(0);
      replacement = arith::IndexCastOp::create(b, loc, b.getIndexType(), rank);
    }
    op->getResult(0).replaceAllUsesWith(replacement);
    op->erase();
  }
  // Nothing of shard or tofu may be left.
  SmallVector<Operation *> grids;
  WalkResult left = module.walk([&](Operation *op) {
    if (isa<shard::GridOp>(op)) {
      grids.push_back(op);
      return WalkResult::advance();
    }
    StringRef ns = op->getDialect() ? op->getDialect()->getNamespace() : "";
    if (ns == "shard" || ns == "tofu") {
      op->emitOpError("convert-tofu-to-mpi: cannot lower this operation");
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (left.wasInterrupted())
    return signalPassFailure();
  for (Operation *g : grids)
    g->erase();
  // Attributes of our dialects would not parse where they are not loaded.
  // The driver's tag is a unit attribute, which parses anywhere.
  auto isOurs = [](NamedAttribute a) {
    return (a.getName().strref().starts_with("tofu.") &&
            a.getName() != tofu::attrs::kDriver &&
            a.getName() != kLibraryAttr && a.getName() != kDeviceOperandsAttr &&
            a.getName() != kWritesOperandAttr) ||
           a.getName().strref().starts_with("tdl.");
  };
  module.walk([&](Operation *op) {
    SmallVector<StringAttr> names;
    for (NamedAttribute a : op->getDiscardableAttrs())
      if (isOurs(a))
        names.push_back(a.getName());
    for (StringAttr n : names)
      op->removeDiscardableAttr(n);
    if (auto f = dyn_cast<func::FuncOp>(op)) {
      for (unsigned i = 0; i < f.getNumArguments(); ++i)
        if (DictionaryAttr d = f.getArgAttrDict(i)) {
          SmallVector<NamedAttribute> kept;
          for (NamedAttribute a : d)
            if (!isOurs(a))
              kept.push_back(a);
          f.setArgAttrs(i, kept);
        }
      for (unsigned i = 0; i < f.getNumResults(); ++i)
        if (DictionaryAttr d = f.getResultAttrDict(i)) {
          SmallVector<NamedAttribute> kept;
          for (NamedAttribute a : d)
            if (!isOurs(a))
              kept.push_back(a);
          f.setResultAttrs(i, kept);
        }
    }
  });
}
