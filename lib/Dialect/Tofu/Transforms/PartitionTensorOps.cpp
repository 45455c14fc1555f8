//===- PartitionTensorOps.cpp - Data movement on local boxes --------------===//
//
// tofu-partition for the data-movement operations of the tensor dialect.
// Their TDL descriptions (TensorTDLModels.cpp) have one loop per output
// dimension and no reduction, so a strategy cuts output dimensions and each
// rank computes the box of the output that its iteration box is. The input
// regions follow from the descriptions' accesses:
//
//   tensor.extract_slice  the box mapped through offsets and strides;
//   tensor.expand_shape   the contiguous source range of each group;
//   tensor.collapse_shape the source box of each group's range;
//   tensor.pad            the part of the box inside the source, shifted;
//   tensor.insert_slice   the destination's box, and the part of the source
//                         that lands in it;
//   tensor.concat         the part of each input that lands in the box.
//
// Pad, insert_slice and concat give ranks regions of different shapes (or
// none), so those are sliced out of same-shaped windows with per-rank sizes
// and placed at per-rank offsets. A reshape whose box is not contiguous in
// its source reshapes the smallest contiguous hull of the box and slices
// the box out of it. A pad whose value depends on the position runs
// replicated.
//
//===----------------------------------------------------------------------===//

#include "FunctionPartitioner.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace mlir;
using namespace tofu;
using namespace tofu::partition;

namespace {

/// The static shape of a value.
Shape getShape(Value v) {
  auto type = cast<RankedTensorType>(v.getType());
  return Shape(type.getShape().begin(), type.getShape().end());
}

/// The inclusive range of `[lo, hi]` that `[from, to]` covers, as
/// (first, last); first > last when they do not meet.
std::pair<int64_t, int64_t> meet(int64_t lo, int64_t hi, int64_t from,
                                 int64_t to) {
  return {std::max(lo, from), std::min(hi, to)};
}

/// An empty box of rank n.
Box emptyBox(size_t n) {
  Box box;
  box.lo.assign(n, 0);
  box.hi.assign(n, -1);
  return box;
}

/// The extent of dimension `d` of each rank's region (0 where empty), as
/// FunctionPartitioner::getRegions slices them.
std::vector<int64_t> getExtents(const RankBoxes &regions, size_t d) {
  std::vector<int64_t> extents;
  for (const Box &r : regions)
    extents.push_back(std::max<int64_t>(0, r.hi[d] - r.lo[d] + 1));
  return extents;
}

/// A value of static type `type`: `v` itself, or a cast of it.
Value castTo(OpBuilder &b, Location loc, Value v, RankedTensorType type) {
  if (v.getType() == type)
    return v;
  return tensor::CastOp::create(b, loc, type, v);
}

} // namespace

FailureOr<bool> FunctionPartitioner::partitionTensorOp(Operation *op) {
  if (op->getNumResults() != 1 ||
      !isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp,
           tensor::CollapseShapeOp, tensor::PadOp, tensor::InsertSliceOp,
           tensor::ConcatOp>(op))
    return false;
  Value result = op->getResult(0);
  auto resultType = dyn_cast<RankedTensorType>(result.getType());
  if (!resultType || !resultType.hasStaticShape() ||
      llvm::any_of(op->getOperandTypes(), [](Type t) {
        auto ranked = dyn_cast<RankedTensorType>(t);
        return ranked && !ranked.hasStaticShape();
      }))
    return false;
  Shape outShape = getShape(result);
  FailureOr<std::vector<int>> cutVars = getCutVars(op, outShape);
  if (failed(cutVars))
    return failure();
  std::string error;
  std::optional<RankBoxes> boxes =
      getIterationBoxes(std::vector<int64_t>(outShape.begin(), outShape.end()),
                        *cutVars, grid, error);
  if (!boxes)
    return op->emitError("tofu-partition: ") << error;
  const RankBoxes &out = *boxes;
  size_t ranks = out.size();
  Location loc = op->getLoc();
  RankedTensorType resultLocalType = localType(result, out);
  Shape localShape = getBoxShape(out.front());
  auto unit = [&](size_t n) {
    return SmallVector<OpFoldResult>(n, b.getIndexAttr(1));
  };

  // Each case returns the local result, or null to run replicated.
  FailureOr<Value> local =
      TypeSwitch<Operation *, FailureOr<Value>>(op)
          .Case([&](tensor::ExtractSliceOp slice) -> FailureOr<Value> {
            if (!slice.getOffsets().empty() || !slice.getSizes().empty() ||
                !slice.getStrides().empty())
              return Value();
            Shape src = getShape(slice.getSource());
            llvm::SmallBitVector dropped = slice.getDroppedDims();
            RankBoxes regions(ranks, emptyBox(src.size()));
            for (size_t r = 0; r < ranks; ++r) {
              size_t j = 0;
              for (size_t d = 0; d < src.size(); ++d) {
                int64_t off = slice.getStaticOffsets()[d];
                int64_t stride = slice.getStaticStrides()[d];
                if (dropped.test(d)) {
                  regions[r].lo[d] = regions[r].hi[d] = off;
                  continue;
                }
                regions[r].lo[d] = off + stride * out[r].lo[j];
                regions[r].hi[d] = off + stride * out[r].hi[j];
                ++j;
              }
            }
            FailureOr<Value> in = getLocal(slice.getSource(), regions, loc);
            if (failed(in))
              return failure();
            SmallVector<OpFoldResult> offsets, sizes;
            size_t j = 0;
            for (size_t d = 0; d < src.size(); ++d) {
              offsets.push_back(b.getIndexAttr(0));
              sizes.push_back(
                  b.getIndexAttr(dropped.test(d) ? 1 : localShape[j++]));
            }
            SmallVector<OpFoldResult> strides;
            for (int64_t s : slice.getStaticStrides())
              strides.push_back(b.getIndexAttr(s));
            return tensor::ExtractSliceOp::create(b, loc, resultLocalType, *in,
                                                  offsets, sizes, strides)
                .getResult();
          })
          .Case([&](tensor::ExpandShapeOp expand) -> FailureOr<Value> {
            // Each group's box, widened to a contiguous hull, is one range
            // of its source dimension; the box is sliced out of the hull.
            auto groups = expand.getReassociationIndices();
            Shape src = getShape(expand.getSrc());
            RankBoxes regions(ranks, emptyBox(src.size()));
            RankBoxes hulls(ranks, out.front());
            for (size_t r = 0; r < ranks; ++r)
              for (auto [i, group] : llvm::enumerate(groups)) {
                Box part;
                Shape shape;
                for (int64_t d : group) {
                  part.lo.push_back(out[r].lo[d]);
                  part.hi.push_back(out[r].hi[d]);
                  shape.push_back(outShape[d]);
                }
                Box hull = getContiguousHull(part, shape);
                auto range = getContiguousRange(hull, shape);
                regions[r].lo[i] = range->first;
                regions[r].hi[i] = range->second;
                for (auto [g, d] : llvm::enumerate(group)) {
                  hulls[r].lo[d] = hull.lo[g];
                  hulls[r].hi[d] = hull.hi[g];
                }
              }
            FailureOr<Value> in = getLocal(expand.getSrc(), regions, loc);
            if (failed(in))
              return failure();
            Value expanded = tensor::ExpandShapeOp::create(
                                 b, loc, localType(result, hulls), *in, groups)
                                 .getResult();
            return convert(Held{expanded, hulls, {}, {}}, out, loc);
          })
          .Case([&](tensor::CollapseShapeOp collapse) -> FailureOr<Value> {
            // Each group's range of the output, widened to a contiguous
            // hull, is one box of the source; the range is sliced out of
            // the collapsed hull.
            auto groups = collapse.getReassociationIndices();
            Shape src = getShape(collapse.getSrc());
            RankBoxes regions(ranks, emptyBox(src.size()));
            RankBoxes hulls(ranks, out.front());
            for (size_t r = 0; r < ranks; ++r)
              for (auto [i, group] : llvm::enumerate(groups)) {
                Shape shape;
                for (int64_t d : group)
                  shape.push_back(src[d]);
                Box hull = getRangeHull(out[r].lo[i], out[r].hi[i], shape);
                auto range = getContiguousRange(hull, shape);
                hulls[r].lo[i] = range->first;
                hulls[r].hi[i] = range->second;
                for (auto [g, d] : llvm::enumerate(group)) {
                  regions[r].lo[d] = hull.lo[g];
                  regions[r].hi[d] = hull.hi[g];
                }
              }
            if (!haveUniformShape(hulls))
              return Value();
            FailureOr<Value> in = getLocal(collapse.getSrc(), regions, loc);
            if (failed(in))
              return failure();
            Value collapsed = tensor::CollapseShapeOp::create(
                                  b, loc, localType(result, hulls), *in, groups)
                                  .getResult();
            return convert(Held{collapsed, hulls, {}, {}}, out, loc);
          })
          .Case([&](tensor::PadOp pad) -> FailureOr<Value> {
            Value padValue = pad.getConstantPaddingValue();
            if (!padValue || !pad.getLow().empty() || !pad.getHigh().empty())
              return Value();
            if (Operation *def = padValue.getDefiningOp();
                def && pad->isAncestor(def))
              padValue = b.clone(*def)->getResult(0);
            else
              padValue = scalars.lookupOrDefault(padValue);
            Shape src = getShape(pad.getSource());
            size_t rank = src.size();
            RankBoxes regions(ranks, emptyBox(rank));
            std::vector<std::vector<int64_t>> low(rank), high(rank);
            for (size_t r = 0; r < ranks; ++r) {
              Box region = emptyBox(rank);
              std::vector<int64_t> before(rank), size(rank);
              for (size_t d = 0; d < rank; ++d) {
                int64_t l = pad.getStaticLow()[d];
                auto [first, last] =
                    meet(out[r].lo[d], out[r].hi[d], l, l + src[d] - 1);
                region.lo[d] = first - l;
                region.hi[d] = last - l;
                size[d] = std::max<int64_t>(0, last - first + 1);
                before[d] = size[d] ? first - out[r].lo[d] : 0;
              }
              // A rank that reads nothing of the source (its tile lies in a
              // padding band) keeps the empty region at the origin, as
              // ProgramCostModel places it, and pads nothing to its tile.
              if (region.volume()) {
                regions[r] = region;
              } else {
                std::fill(before.begin(), before.end(), 0);
                std::fill(size.begin(), size.end(), 0);
              }
              for (size_t d = 0; d < rank; ++d) {
                low[d].push_back(before[d]);
                high[d].push_back(localShape[d] - before[d] - size[d]);
              }
            }
            FailureOr<Value> in = getRegions(pad.getSource(), regions, loc);
            if (failed(in))
              return failure();
            SmallVector<OpFoldResult> lows, highs;
            for (size_t d = 0; d < rank; ++d) {
              lows.push_back(perRankFoldResult(low[d]));
              highs.push_back(perRankFoldResult(high[d]));
            }
            Value padded = tensor::PadOp::create(b, loc, Type(), *in, lows,
                                                 highs, padValue)
                               .getResult();
            return castTo(b, loc, padded, resultLocalType);
          })
          .Case([&](tensor::InsertSliceOp insert) -> FailureOr<Value> {
            if (!insert.getOffsets().empty() || !insert.getSizes().empty() ||
                !insert.getStrides().empty())
              return Value();
            Shape src = getShape(insert.getSource());
            llvm::SmallBitVector dropped = insert.getDroppedDims();
            size_t destRank = outShape.size();
            RankBoxes regions(ranks, emptyBox(src.size()));
            std::vector<std::vector<int64_t>> offset(destRank);
            for (size_t r = 0; r < ranks; ++r) {
              bool empty = false;
              Box part = emptyBox(src.size());
              std::vector<int64_t> at(destRank, 0);
              size_t j = 0;
              for (size_t d = 0; d < destRank; ++d) {
                int64_t off = insert.getStaticOffsets()[d];
                int64_t stride = insert.getStaticStrides()[d];
                if (dropped.test(d)) {
                  empty |= off < out[r].lo[d] || off > out[r].hi[d];
                  at[d] = off - out[r].lo[d];
                  continue;
                }
                // Source indices i with off + stride * i inside the box.
                int64_t first = std::max<int64_t>(
                    0, (out[r].lo[d] - off + stride - 1) / stride);
                if (out[r].lo[d] < off)
                  first = 0;
                int64_t last =
                    out[r].hi[d] < off
                        ? -1
                        : std::min<int64_t>(src[j] - 1,
                                            (out[r].hi[d] - off) / stride);
                empty |= first > last;
                part.lo[j] = first;
                part.hi[j] = last;
                at[d] = off + stride * first - out[r].lo[d];
                ++j;
              }
              if (!empty)
                regions[r] = part;
              for (size_t d = 0; d < destRank; ++d)
                offset[d].push_back(empty ? 0 : at[d]);
            }
            FailureOr<Value> dest =
                getLocal(insert.getDest(), RankBoxes(out), loc);
            if (failed(dest))
              return failure();
            FailureOr<Value> in = getRegions(insert.getSource(), regions, loc);
            if (failed(in))
              return failure();
            SmallVector<OpFoldResult> offsets, sizes, strides;
            size_t j = 0;
            for (size_t d = 0; d < destRank; ++d) {
              offsets.push_back(perRankFoldResult(offset[d]));
              strides.push_back(b.getIndexAttr(insert.getStaticStrides()[d]));
              if (dropped.test(d)) {
                sizes.push_back(b.getIndexAttr(1));
                continue;
              }
              std::vector<int64_t> size;
              for (size_t r = 0; r < ranks; ++r)
                size.push_back(regions[r].volume() ? getBoxShape(regions[r])[j]
                                                   : 0);
              sizes.push_back(perRankFoldResult(size));
              ++j;
            }
            return tensor::InsertSliceOp::create(b, loc, *in, *dest, offsets,
                                                 sizes, strides)
                .getResult();
          })
          .Case([&](tensor::ConcatOp concat) -> FailureOr<Value> {
            int64_t axis = concat.getDim();
            Value acc = tensor::EmptyOp::create(
                b, loc, localShape, resultLocalType.getElementType());
            int64_t start = 0;
            for (Value input : concat.getInputs()) {
              Shape src = getShape(input);
              RankBoxes regions(ranks, emptyBox(src.size()));
              std::vector<int64_t> at;
              for (size_t r = 0; r < ranks; ++r) {
                auto [first, last] = meet(out[r].lo[axis], out[r].hi[axis],
                                          start, start + src[axis] - 1);
                // A rank that reads nothing of this input keeps the empty
                // region at the origin, as ProgramCostModel places it.
                if (first <= last) {
                  regions[r] = out[r];
                  regions[r].lo[axis] = first - start;
                  regions[r].hi[axis] = last - start;
                }
                at.push_back(first > last ? 0 : first - out[r].lo[axis]);
              }
              start += src[axis];
              if (llvm::all_of(regions,
                               [](const Box &r) { return !r.volume(); }))
                continue;
              FailureOr<Value> in = getRegions(input, regions, loc);
              if (failed(in))
                return failure();
              SmallVector<OpFoldResult> offsets, sizes;
              for (size_t d = 0; d < localShape.size(); ++d) {
                offsets.push_back((int64_t)d == axis ? perRankFoldResult(at)
                                                     : b.getIndexAttr(0));
                sizes.push_back(perRankFoldResult(getExtents(regions, d)));
              }
              acc =
                  tensor::InsertSliceOp::create(b, loc, *in, acc, offsets,
                                                sizes, unit(localShape.size()))
                      .getResult();
            }
            return acc;
          })
          .Default([](Operation *) -> FailureOr<Value> { return Value(); });
  if (failed(local))
    return failure();
  if (!*local)
    return false;
  if (Operation *def = local->getDefiningOp())
    for (StringRef name : {kTilings, kStrategy})
      def->removeAttr(name);
  if (failed(setResult(result, Held{*local, out, {}, {}}, loc)))
    return failure();
  return true;
}
