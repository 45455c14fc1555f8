//===- VectorLoads.cpp - Element-wise ops as 16-byte loads and stores ----===//
//
// The vectorized form of an element-wise linalg op for
// tofu-gpu-parallel-loops{vector-loads=true}: each thread computes a group
// of consecutive elements along the contiguous last dimension, and reads
// and writes each group with one 16-byte access where the address allows.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToGPU/TofuToGPU.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"

using namespace mlir;

namespace {

/// The bytes of one vector access: NVPTX's widest load and store.
constexpr int64_t kVectorBytes = 16;

/// How the lanes of a group read an operand.
enum class Access {
  /// A scalar input (not a buffer).
  Value,
  /// The operand does not depend on the vectorized loop: one load for all
  /// lanes.
  Broadcast,
  /// Its last dimension is the vectorized loop and contiguous: one vector
  /// load when the group's address is aligned, else one load per lane.
  Vector,
  /// Any other buffer (a transposed read): one load per lane.
  PerLane,
};

/// The bytes of an integer or float element; 0 for other types (index,
/// complex, vectors) and widths that are not whole bytes.
int64_t getElementBytes(Type type) {
  Type element = getElementTypeOrSelf(type);
  if (!element.isIntOrFloat())
    return 0;
  unsigned bits = element.getIntOrFloatBitWidth();
  return bits % 8 == 0 ? bits / 8 : 0;
}

Access classify(linalg::GenericOp op, OpOperand &operand, unsigned loop,
                int64_t width) {
  auto type = dyn_cast<MemRefType>(operand.get().getType());
  if (!type)
    return Access::Value;
  AffineMap map = op.getMatchingIndexingMap(&operand);
  if (!map.isFunctionOfDim(loop))
    return Access::Broadcast;
  // The group is contiguous only when the loop indexes the last dimension
  // alone and nothing else (not a diagonal's row, not a skewed one).
  auto last = dyn_cast<AffineDimExpr>(map.getResults().back());
  bool onlyLast =
      llvm::none_of(map.getResults().drop_back(), [&](AffineExpr expr) {
        return expr.isFunctionOfDim(loop);
      });
  if (last && last.getPosition() == loop && onlyLast &&
      type.isLastDimUnitStride() &&
      getElementBytes(type) * width == kVectorBytes)
    return Access::Vector;
  return Access::PerLane;
}

/// The indices of `operand` at the loop indices `ivs`.
SmallVector<Value> getIndices(OpBuilder &b, Location loc, AffineMap map,
                              ValueRange ivs) {
  SmallVector<Value> indices;
  for (unsigned r = 0; r < map.getNumResults(); ++r)
    indices.push_back(
        affine::AffineApplyOp::create(b, loc, map.getSubMap({r}), ivs));
  return indices;
}

/// Whether the group of `memref` at `indices` starts at an address that a
/// vector access may use: the element's address is a multiple of 16 bytes.
/// The check runs in the kernel, so a buffer of any origin is safe; for a
/// static layout whose outer strides are multiples of 16 bytes it reduces
/// to one test of the base pointer, the same in every thread.
Value isAligned(OpBuilder &b, Location loc, Value memref, ValueRange indices) {
  auto type = cast<MemRefType>(memref.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, memref);
  Value linear = metadata.getOffset();
  for (auto [index, stride] : llvm::zip(indices, metadata.getStrides()))
    linear = arith::AddIOp::create(
        b, loc, linear, arith::MulIOp::create(b, loc, index, stride));
  Value bytes = arith::ConstantIndexOp::create(b, loc, getElementBytes(type));
  Value address = arith::AddIOp::create(
      b, loc, memref::ExtractAlignedPointerAsIndexOp::create(b, loc, memref),
      arith::MulIOp::create(b, loc, linear, bytes));
  Value rest = arith::RemUIOp::create(
      b, loc, address, arith::ConstantIndexOp::create(b, loc, kVectorBytes));
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, rest,
                               arith::ConstantIndexOp::create(b, loc, 0));
}

} // namespace

scf::ParallelOp tofu::lowerToVectorLoop(RewriterBase &rewriter,
                                        linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumLoops() == 0 ||
      op.getNumReductionLoops() != 0 || op.getNumDpsInits() == 0)
    return {};
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return {};
  // The group's elements are consecutive along the last loop, which
  // tofu-gpu-parallel-loops makes the one that walks the contiguous last
  // dimension of the largest operand.
  unsigned loop = op.getNumLoops() - 1;
  int64_t bytes = getElementBytes(op.getDpsInits()[0].getType());
  if (bytes == 0 || kVectorBytes % bytes != 0)
    return {};
  int64_t width = kVectorBytes / bytes;
  if (width < 2 || ranges[loop] % width != 0)
    return {};
  SmallVector<Access> access;
  for (OpOperand &operand : op->getOpOperands())
    access.push_back(classify(op, operand, loop, width));
  // Every output is written with vector stores, and no input reads an
  // output's buffer through another map: the group's lanes all read before
  // any of them writes.
  for (OpOperand &init : op.getDpsInitsMutable()) {
    if (access[init.getOperandNumber()] != Access::Vector)
      return {};
    for (OpOperand *input : op.getDpsInputOperands())
      if (input->get() == init.get() &&
          op.getMatchingIndexingMap(input) != op.getMatchingIndexingMap(&init))
        return {};
  }

  Location loc = op.getLoc();
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  // The last loop counts groups with a unit step: upstream's tiling with
  // guards (scf::tileParallelLoop, noMinMaxBounds) scales the inner index
  // by the step once more in its guard, which skips elements of a loop of
  // a larger step.
  SmallVector<Value> lowers(ranges.size(), zero), steps(ranges.size(), one),
      uppers;
  for (auto [i, range] : llvm::enumerate(ranges))
    uppers.push_back(arith::ConstantIndexOp::create(
        rewriter, loc, i == loop ? range / width : range));
  auto parallel = scf::ParallelOp::create(rewriter, loc, lowers, uppers, steps);

  OpBuilder::InsertionGuard guard(rewriter);
  rewriter.setInsertionPoint(parallel.getBody()->getTerminator());
  SmallVector<Value> ivs(parallel.getInductionVars());
  ivs[loop] = arith::MulIOp::create(
      rewriter, loc, ivs[loop],
      arith::ConstantIndexOp::create(rewriter, loc, width));
  // The loop indices of each lane of the group.
  SmallVector<SmallVector<Value>> laneIvs;
  for (int64_t lane = 0; lane < width; ++lane) {
    laneIvs.push_back(ivs);
    if (lane > 0)
      laneIvs.back()[loop] = arith::AddIOp::create(
          rewriter, loc, ivs[loop],
          arith::ConstantIndexOp::create(rewriter, loc, lane));
  }
  Block *body = op.getBody();
  // The group's address test, for all vector operands at once: with a
  // test per operand, LLVM merges the two ways of loading an operand back
  // into scalar loads from a selected address.
  Value aligned;
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned number = operand.getOperandNumber();
    // An input the body does not read is not read at all.
    if (access[number] != Access::Vector ||
        (!op.isDpsInit(&operand) && body->getArgument(number).use_empty()))
      continue;
    Value test = isAligned(
        rewriter, loc, operand.get(),
        getIndices(rewriter, loc, op.getMatchingIndexingMap(&operand), ivs));
    aligned =
        aligned ? arith::AndIOp::create(rewriter, loc, aligned, test) : test;
  }
  auto group = scf::IfOp::create(rewriter, loc, TypeRange{}, aligned,
                                 /*withElseRegion=*/true);
  auto emitGroup = [&](bool vectorized) {
    // The value of each block argument in each lane.
    SmallVector<SmallVector<Value>> values(body->getNumArguments());
    for (OpOperand &operand : op->getOpOperands()) {
      unsigned number = operand.getOperandNumber();
      if (body->getArgument(number).use_empty())
        continue;
      Value source = operand.get();
      AffineMap map = op.getMatchingIndexingMap(&operand);
      switch (access[number]) {
      case Access::Value:
        values[number].assign(width, source);
        break;
      case Access::Broadcast:
        values[number].assign(
            width, memref::LoadOp::create(rewriter, loc, source,
                                          getIndices(rewriter, loc, map, ivs)));
        break;
      case Access::Vector:
        if (vectorized) {
          auto type =
              VectorType::get({width}, getElementTypeOrSelf(source.getType()));
          Value vector = vector::LoadOp::create(
              rewriter, loc, type, source, getIndices(rewriter, loc, map, ivs),
              /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes));
          for (int64_t lane = 0; lane < width; ++lane)
            values[number].push_back(
                vector::ExtractOp::create(rewriter, loc, vector, lane));
          break;
        }
        [[fallthrough]];
      case Access::PerLane:
        for (int64_t lane = 0; lane < width; ++lane)
          values[number].push_back(memref::LoadOp::create(
              rewriter, loc, source,
              getIndices(rewriter, loc, map, laneIvs[lane])));
        break;
      }
    }
    // The op's body once per lane.
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    SmallVector<SmallVector<Value>> results(op.getNumDpsInits());
    for (int64_t lane = 0; lane < width; ++lane) {
      IRMapping mapping;
      for (BlockArgument arg : body->getArguments())
        if (!arg.use_empty())
          mapping.map(arg, values[arg.getArgNumber()][lane]);
      for (Operation &nested : body->without_terminator()) {
        if (auto index = dyn_cast<linalg::IndexOp>(nested)) {
          mapping.map(index.getResult(), laneIvs[lane][index.getDim()]);
          continue;
        }
        rewriter.clone(nested, mapping);
      }
      for (auto [i, result] : llvm::enumerate(yield.getValues()))
        results[i].push_back(mapping.lookupOrDefault(result));
    }
    for (auto [init, lanes] : llvm::zip(op.getDpsInitsMutable(), results)) {
      Value target = init.get();
      AffineMap map = op.getMatchingIndexingMap(&init);
      if (vectorized) {
        auto type =
            VectorType::get({width}, getElementTypeOrSelf(target.getType()));
        Value vector =
            vector::FromElementsOp::create(rewriter, loc, type, lanes);
        vector::StoreOp::create(
            rewriter, loc, vector, target, getIndices(rewriter, loc, map, ivs),
            /*nontemporal=*/false, llvm::MaybeAlign(kVectorBytes));
        continue;
      }
      for (int64_t lane = 0; lane < width; ++lane)
        memref::StoreOp::create(rewriter, loc, lanes[lane], target,
                                getIndices(rewriter, loc, map, laneIvs[lane]));
    }
  };
  rewriter.setInsertionPoint(group.thenBlock()->getTerminator());
  emitGroup(/*vectorized=*/true);
  rewriter.setInsertionPoint(group.elseBlock()->getTerminator());
  emitGroup(/*vectorized=*/false);
  return parallel;
}
