//===- CombineCollectives.cpp - One collective for several small ones -----===//
//
// A partitioned step makes many small collectives that do not depend on
// each other: the four gate gradients of an LSTM cell gathered one after
// the other, a layer's two hidden states before their products. Each is a
// rendezvous of its group, which costs a few microseconds whatever its
// size. This pass stacks the inputs of collectives of the same kind, group,
// axes and tile type along a new leading dimension and makes one
// collective of the stack (its axes shifted by one), whose slices replace
// the old results: the same elements move, in fewer calls.
//
// Collectives are combined in program order. One joins a group when its
// input is defined before the first use of any result of the group, so
// that the combined collective, placed before that first use, sees every
// input and precedes every use; otherwise it starts a new group.
//
// Before grouping, the scalar consumers of collective results (side-effect
// free operations on scalars and 0-d tensors, such as a loss summed over
// time steps, each step's term all-reduced) move down to just before the
// first use of their results. The collectives they read
// then have their first use late and can join one group.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/Tofu/Transforms/Passes.h"

#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/MapVector.h"

namespace tofu {
#define GEN_PASS_DEF_TOFUCOMBINECOLLECTIVES
#include "tofu/Dialect/Tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

/// The attributes that name a dimension of a collective's tensors, which
/// stacking shifts by one.
constexpr llvm::StringLiteral kAxisAttributes[] = {
    "gather_axis", "scatter_axis", "split_axis", "concat_axis"};

bool isCombinable(Operation *op) {
  return isa<shard::AllGatherOp, shard::AllReduceOp, shard::ReduceScatterOp,
             shard::AllToAllOp>(op);
}

/// The tile's type when `op` may be stacked: a static tensor without an
/// encoding, of at most `maxBytes` bytes and of a rank the runtimes'
/// copies take once stacked.
RankedTensorType getTileType(Operation *op, uint64_t maxBytes) {
  auto in = dyn_cast<RankedTensorType>(op->getOperand(0).getType());
  auto out = dyn_cast<RankedTensorType>(op->getResult(0).getType());
  if (!in || !out || !in.hasStaticShape() || !out.hasStaticShape() ||
      in.getEncoding() || out.getEncoding() || in.getRank() + 1 > 8 ||
      !in.getElementType().isIntOrFloat())
    return {};
  uint64_t bits = in.getNumElements() * in.getElementTypeBitWidth();
  if (bits > 8 * maxBytes)
    return {};
  return in;
}

/// Whether `type` is a scalar or a 0-d tensor.
bool isScalar(Type type) {
  if (type.isIntOrIndexOrFloat())
    return true;
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getRank() == 0;
}

/// Whether `op` may move down past other operations of its block: free of
/// side effects, not a collective, on scalars only (so that moving it
/// delays no real work and keeps no tensor alive for longer).
bool isMovable(Operation *op) {
  if (op->hasTrait<OpTrait::IsTerminator>() || isCombinable(op) ||
      op->getNumResults() == 0 || !isMemoryEffectFree(op))
    return false;
  return llvm::all_of(op->getOperandTypes(), isScalar) &&
         llvm::all_of(op->getResultTypes(), isScalar);
}

/// Moves the movable operations of `block` that read the result of a
/// combinable collective, directly or through other such operations, to
/// just before the first operation that uses one of their results. Later
/// ones move first, so that a chain moves together and keeps its order.
void sinkConsumers(Block &block) {
  SmallVector<Operation *> consumers;
  llvm::SmallPtrSet<Operation *, 16> reads;
  for (Operation &op : block) {
    if (isCombinable(&op)) {
      reads.insert(&op);
      continue;
    }
    if (!isMovable(&op) || llvm::none_of(op.getOperands(), [&](Value v) {
          Operation *def = v.getDefiningOp();
          return def && reads.contains(def);
        }))
      continue;
    reads.insert(&op);
    consumers.push_back(&op);
  }
  for (Operation *op : llvm::reverse(consumers)) {
    Operation *first = nullptr;
    for (Operation *user : op->getUsers()) {
      Operation *at = block.findAncestorOpInBlock(*user);
      if (at && (!first || at->isBeforeInBlock(first)))
        first = at;
    }
    if (first && first != op->getNextNode())
      op->moveBefore(first);
  }
}

/// The first operation of `block` that uses a result of `op`: its
/// terminator when nothing else does.
Operation *getFirstUse(Block &block, Operation *op) {
  Operation *first = block.getTerminator();
  for (Operation *user : op->getResult(0).getUsers()) {
    Operation *at = block.findAncestorOpInBlock(*user);
    if (at && at->isBeforeInBlock(first))
      first = at;
  }
  return first;
}

struct Group {
  SmallVector<Operation *> members;
  /// The bytes of the members' inputs.
  uint64_t bytes = 0;
  /// The first use of any member's result.
  Operation *firstUse = nullptr;
};

/// Whether `value` is available before `point` (a block argument, or
/// defined by an operation of `block` before it).
bool isDefinedBefore(Block &block, Value value, Operation *point) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return true;
  Operation *at = block.findAncestorOpInBlock(*def);
  return !at || at->isBeforeInBlock(point);
}

/// Replaces a group of two or more collectives with one on their stack.
void combine(const Group &group) {
  Operation *first = group.members.front();
  auto tile = cast<RankedTensorType>(first->getOperand(0).getType());
  auto result = cast<RankedTensorType>(first->getResult(0).getType());
  int64_t n = group.members.size();
  auto stack = [&](RankedTensorType t) {
    SmallVector<int64_t> shape{n};
    llvm::append_range(shape, t.getShape());
    return RankedTensorType::get(shape, t.getElementType());
  };
  OpBuilder b(group.firstUse);
  Location loc = b.getFusedLoc(llvm::map_to_vector(
      group.members, [](Operation *op) { return op->getLoc(); }));
  // Slice i of a stack: offsets (i, 0, ...), sizes (1, tile...), unit
  // strides, the unit dimension dropped.
  auto sliceOf = [&](RankedTensorType t, int64_t i) {
    SmallVector<OpFoldResult> offsets(t.getRank() + 1, b.getIndexAttr(0));
    offsets[0] = b.getIndexAttr(i);
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1)};
    for (int64_t d : t.getShape())
      sizes.push_back(b.getIndexAttr(d));
    SmallVector<OpFoldResult> strides(t.getRank() + 1, b.getIndexAttr(1));
    return std::make_tuple(offsets, sizes, strides);
  };
  Value stacked = tensor::EmptyOp::create(b, loc, stack(tile).getShape(),
                                          tile.getElementType());
  for (int64_t i = 0; i < n; ++i) {
    auto [offsets, sizes, strides] = sliceOf(tile, i);
    stacked =
        tensor::InsertSliceOp::create(b, loc, group.members[i]->getOperand(0),
                                      stacked, offsets, sizes, strides);
  }
  // The first member's operation and its own attributes (not the
  // dialect attributes, such as a tile's tofu.layout), on the stack.
  OperationState state(loc, first->getName());
  state.addOperands(stacked);
  state.addTypes(stack(result));
  for (NamedAttribute attr : first->getAttrs()) {
    if (attr.getName().strref().contains('.'))
      continue;
    if (llvm::is_contained(kAxisAttributes, attr.getName().strref())) {
      auto axis = cast<IntegerAttr>(attr.getValue());
      state.addAttribute(attr.getName(),
                         b.getIndexAttr(axis.getValue().getSExtValue() + 1));
    } else {
      state.addAttribute(attr.getName(), attr.getValue());
    }
  }
  Operation *combined = b.create(state);
  for (int64_t i = 0; i < n; ++i) {
    auto [offsets, sizes, strides] = sliceOf(result, i);
    Value slice = tensor::ExtractSliceOp::create(
        b, loc, result, combined->getResult(0), offsets, sizes, strides);
    group.members[i]->getResult(0).replaceAllUsesWith(slice);
    group.members[i]->erase();
  }
}

struct TofuCombineCollectivesPass
    : public tofu::impl::TofuCombineCollectivesBase<
          TofuCombineCollectivesPass> {
  using Base::Base;

  void runOnOperation() override {
    getOperation()->walk([&](Block *block) {
      // Program order means nothing in a graph region.
      if (block->empty() || !block->mightHaveTerminator() ||
          !mayHaveSSADominance(*block->getParent()))
        return;
      combineInBlock(*block);
    });
  }

  void combineInBlock(Block &block) {
    sinkConsumers(block);
    // Each combination changes the uses and the order that grouping
    // depends on, so the groups are found again after each one.
    while (std::optional<Group> group = findGroup(block))
      combine(*group);
  }

  /// The first group of two or more collectives in `block`, if any.
  std::optional<Group> findGroup(Block &block) {
    // The open group of each kind, group and tile type (the operation's
    // name, its attributes but the layout, its types).
    llvm::MapVector<std::tuple<OperationName, DictionaryAttr, Type, Type>,
                    Group>
        open;
    for (Operation &op : block) {
      RankedTensorType tile =
          isCombinable(&op) ? getTileType(&op, maxBytes) : nullptr;
      if (!tile)
        continue;
      uint64_t bytes =
          tile.getNumElements() * tile.getElementTypeBitWidth() / 8;
      NamedAttrList attrs(op.getAttrDictionary());
      attrs.erase("tofu.layout");
      auto key = std::make_tuple(
          op.getName(), attrs.getDictionary(op.getContext()),
          op.getOperand(0).getType(), op.getResult(0).getType());
      Group &group = open[key];
      // A member's result is defined before the group's first use, but
      // is not available to the combined collective.
      Operation *def = op.getOperand(0).getDefiningOp();
      if (!group.members.empty() &&
          (!isDefinedBefore(block, op.getOperand(0), group.firstUse) ||
           llvm::is_contained(group.members, def) ||
           group.bytes + bytes > maxBytes)) {
        if (group.members.size() > 1)
          return std::move(group);
        group = Group();
      }
      Operation *use = getFirstUse(block, &op);
      if (!group.firstUse || use->isBeforeInBlock(group.firstUse))
        group.firstUse = use;
      group.members.push_back(&op);
      group.bytes += bytes;
    }
    for (auto &entry : open)
      if (entry.second.members.size() > 1)
        return std::move(entry.second);
    return std::nullopt;
  }
};

} // namespace
