//===- FunctionPartitioner.h - SPMD generation of one function -*- C++ -*-===//
//
// The state of tofu-partition while it builds the SPMD function of one
// planned function: the local value and per-rank boxes of every tensor, the
// per-rank index tables, and the byte accounting. Partition.cpp holds the
// conversions, linalg operations and the driver; PartitionTensorOps.cpp the
// data-movement operations of the tensor dialect.
//
//===----------------------------------------------------------------------===//

#ifndef LIB_DIALECT_TOFU_TRANSFORMS_FUNCTIONPARTITIONER_H
#define LIB_DIALECT_TOFU_TRANSFORMS_FUNCTIONPARTITIONER_H

#include "tofu/Dialect/Tofu/IR/Tofu.h"
#include "tofu/Partition/Distribution.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/DenseMap.h"

#include <map>
#include <string>
#include <vector>

namespace tofu {
namespace partition {

using namespace mlir;

/// Names of the plan attributes written by tofu-search.
constexpr char kTiling[] = "tofu.tiling";
constexpr char kTilings[] = "tofu.tilings";
constexpr char kStrategy[] = "tofu.strategy";
constexpr char kPlan[] = "tofu.plan";
constexpr char kLayout[] = "tofu.layout";

/// A tensor as the ranks hold it.
struct Held {
  Value value;
  RankBoxes boxes;
  /// Grid axes with a pending reduction, and its kind.
  SmallVector<int64_t> partial;
  shard::ReductionKind reduction = shard::ReductionKind::Sum;
};

class FunctionPartitioner {
public:
  FunctionPartitioner(ModuleOp module, func::FuncOp func, ProcessGrid grid,
                      shard::GridOp gridOp)
      : module(module), func(func), grid(std::move(grid)), gridOp(gridOp),
        b(func.getContext()) {}

  /// Builds the SPMD function next to `func`; returns null after an error.
  func::FuncOp run();

  /// Operation names that ran replicated, with their counts.
  std::map<std::string, unsigned> replicatedOps;
  /// Bytes the generated communication receives per step, summed over
  /// ranks, per tensor of the plan (same accounting as the runtime).
  std::map<std::string, double> generatedBytes;
  /// The plan's name of every tensor value.
  llvm::DenseMap<Value, std::string> names;

private:
  // The plan on the IR.
  FailureOr<SmallVector<Tiling>> getTilings(Value v);
  FailureOr<RankBoxes> getLayout(Value v, LayoutAttr *layout = nullptr);
  LayoutAttr makeLayout(ArrayRef<Tiling> tilings);

  // Per-rank constants.
  Value perRankIndex(ArrayRef<int64_t> values);
  Value indexConstant(int64_t v);
  /// An attribute when every rank has the same value, else perRankIndex.
  OpFoldResult perRankFoldResult(ArrayRef<int64_t> values);

  // Conversions.
  /// `orig` in the per-rank boxes `want`. A conversion made earlier for the
  /// same boxes of the same tensor is reused (with `reuse`), so each
  /// distinct conversion communicates once; ProgramCostModel counts the
  /// fetches of the operators' inputs the same way.
  FailureOr<Value> getLocal(Value orig, const RankBoxes &want, Location loc,
                            bool reuse = true);
  Value convert(const Held &held, const RankBoxes &want, Location loc);
  /// Emits the shard collective `c` on `input` (see matchCollective).
  Value emitCollective(const Collective &c, Value input,
                       RankedTensorType resultType, Location loc);
  FailureOr<Value> materializeSource(Value orig, const RankBoxes &want,
                                     Location loc);
  Held reducePartial(Held held, ArrayRef<Tiling> target, Location loc);
  LogicalResult setResult(Value orig, Held held, Location loc);

  /// Each rank's `regions[r]` of `orig`: in bounds, but possibly of
  /// different shapes or empty. Same-shaped windows are converted to and the
  /// regions sliced out of them, so dimensions where the ranks differ are
  /// dynamic in the result.
  FailureOr<Value> getRegions(Value orig, const RankBoxes &regions,
                              Location loc);

  // Operations.
  /// The loop each step cuts (-1: replicated), from `tofu.strategy`.
  FailureOr<std::vector<int>> getCutVars(Operation *op,
                                         ArrayRef<int64_t> extents);
  LogicalResult partitionLinalg(linalg::GenericOp op);
  /// Widens the regions that an operation reads of `orig` through `map` to
  /// the tiles the ranks hold, in the dimensions that bound no loop.
  void widenToHeldTile(Value orig, AffineMap map, RankBoxes &regions);
  /// Data movement of the tensor dialect (pad, slices, reshapes, concat);
  /// returns failure() after an error, and false when the operation must run
  /// replicated instead.
  FailureOr<bool> partitionTensorOp(Operation *op);
  LogicalResult runReplicated(Operation *op);
  LogicalResult mapCapturedValues(Operation *op, IRMapping &mapping);
  LogicalResult buildReturn(func::ReturnOp ret, func::FuncOp newFunc);

  RankedTensorType localType(Value orig, const RankBoxes &boxes) {
    auto type = cast<RankedTensorType>(orig.getType());
    return RankedTensorType::get(getBoxShape(boxes.front()),
                                 type.getElementType());
  }
  RankBoxes wholeBoxes(Value orig) {
    auto type = cast<RankedTensorType>(orig.getType());
    return RankBoxes(grid.size(), Box::whole(Shape(type.getShape().begin(),
                                                   type.getShape().end())));
  }
  FlatSymbolRefAttr gridRef() {
    return FlatSymbolRefAttr::get(gridOp.getSymNameAttr());
  }

  ModuleOp module;
  func::FuncOp func;
  ProcessGrid grid;
  shard::GridOp gridOp;
  OpBuilder b;
  /// Where per-rank tables are built (the entry of the new function).
  OpBuilder::InsertPoint tablePoint;
  Value rankIndex;
  std::map<std::vector<int64_t>, Value> tables;
  llvm::DenseMap<Value, Held> held;
  /// Conversions already made, by tensor and boxes (getLocal).
  std::map<std::pair<const void *, std::vector<int64_t>>, Value> converted;
  /// The tensor being converted, for the byte accounting.
  Value current;
  void count(Value local, double elementsPerRankGroup) {
    auto type = cast<RankedTensorType>(local.getType());
    int64_t bytes = (type.getElementTypeBitWidth() + 7) / 8;
    auto it = names.find(current);
    generatedBytes[it == names.end() ? "(unnamed)" : it->second] +=
        elementsPerRankGroup * bytes;
  }
  /// Non-tensor values (scalars, indices) of the old function.
  IRMapping scalars;
};

} // namespace partition
} // namespace tofu

#endif // LIB_DIALECT_TOFU_TRANSFORMS_FUNCTIONPARTITIONER_H
