//===- Partition.cpp - The tofu-partition pass ----------------------------===//
//
// Generates the SPMD program of a plan (Tofu §6, SOYBEAN §5.2). The
// geometry (which box of every tensor and of every operator's iteration
// space each rank owns) comes from lib/Partition/Distribution; this file
// turns it into IR:
//
//  * every tensor value of the function has a local value and the per-rank
//    boxes it holds (possibly partial over some grid axes);
//  * a linalg operation is cloned onto its local iteration box: each
//    input is converted to the image of the box under its indexing map,
//    the maps are rebased onto those regions, and `linalg.index` is offset
//    by the rank's box;
//  * a result is converted right away to its tensor's layout: partial
//    values with shard.reduce_scatter / shard.all_reduce, everything else
//    with shard.all_gather / all_to_all / all_slice when that is exactly
//    the conversion, else a local slice or tofu.fetch;
//  * the data-movement operations of the tensor dialect (pad, slices,
//    reshapes, concat) run on their output boxes (PartitionTensorOps.cpp);
//  * any other operation runs replicated on whole inputs.
//
// Conversions to an operand's region are emitted just before the operation
// that reads it, and the original operation order is kept.
//
//===----------------------------------------------------------------------===//

#include "FunctionPartitioner.h"

#include "tofu/Dialect/TDL/Transforms/OpDescription.h"
#include "tofu/Dialect/Tofu/Transforms/Passes.h"
#include "tofu/Dialect/Tofu/Transforms/PlanOnIR.h"
#include "tofu/Partition/Distribution.h"
#include "tofu/Partition/Search.h"
#include "tofu/PlanIO/PlanIO.h"
#include "tofu/Transforms/GraphImport.h"
#include "tofu/Transforms/ReportOutput.h"
#include "tofu/Transforms/TrainingAttributes.h"
#include "tofu/Transforms/TrainingSignature.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <limits>
#include <map>

namespace tofu {
#define GEN_PASS_DEF_TOFUPARTITION
#include "tofu/Dialect/Tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;
using namespace tofu::partition;

#define DEBUG_TYPE "tofu-partition"

//===----------------------------------------------------------------------===//
// The plan on the IR
//===----------------------------------------------------------------------===//

FailureOr<SmallVector<Tiling>> FunctionPartitioner::getTilings(Value v) {
  ArrayAttr list;
  Location loc = v.getLoc();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    list = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), kTiling);
  } else {
    auto r = cast<OpResult>(v);
    auto all = r.getOwner()->getAttrOfType<ArrayAttr>(kTilings);
    if (all && r.getResultNumber() < all.size())
      list = dyn_cast<ArrayAttr>(all[r.getResultNumber()]);
    loc = r.getOwner()->getLoc();
  }
  if (!list || list.empty())
    return failure();
  SmallVector<Tiling> tilings;
  for (Attribute a : list) {
    auto s = dyn_cast<StringAttr>(a);
    std::optional<Tiling> t = s ? parseTiling(s.str()) : std::nullopt;
    if (!t || t->kind == Tiling::Kind::Partial) {
      emitError(loc, "tofu-partition: invalid tiling ")
          << a << " in the plan (expected \"cut(d)\" or \"rep\")";
      return failure();
    }
    tilings.push_back(*t);
  }
  if (tilings.size() != grid.shape.size()) {
    emitError(loc, "tofu-partition: the value has ")
        << tilings.size() << " tilings but the plan has " << grid.shape.size()
        << " steps";
    return failure();
  }
  return tilings;
}

LayoutAttr FunctionPartitioner::makeLayout(ArrayRef<Tiling> tilings) {
  SmallVector<int64_t> axes;
  for (const Tiling &t : tilings)
    axes.push_back(t.kind == Tiling::Kind::Cut ? (int64_t)t.dim : -1);
  return LayoutAttr::get(func.getContext(), axes, {});
}

FailureOr<RankBoxes> FunctionPartitioner::getLayout(Value v,
                                                    LayoutAttr *layout) {
  auto type = cast<RankedTensorType>(v.getType());
  FailureOr<SmallVector<Tiling>> tilings = getTilings(v);
  if (failed(tilings)) {
    // Values the plan does not tile (e.g. of undescribed operations) are
    // held whole.
    if (layout)
      *layout = makeLayout(
          SmallVector<Tiling>(grid.shape.size(), Tiling::replicate()));
    return wholeBoxes(v);
  }
  std::string error;
  std::optional<RankBoxes> boxes = getLayoutBoxes(
      Shape(type.getShape().begin(), type.getShape().end()),
      std::vector<Tiling>(tilings->begin(), tilings->end()), grid, error);
  if (!boxes) {
    emitError(v.getLoc(), "tofu-partition: cannot lay out the value: ")
        << error;
    return failure();
  }
  if (layout)
    *layout = makeLayout(*tilings);
  return *boxes;
}

//===----------------------------------------------------------------------===//
// Per-rank constants
//===----------------------------------------------------------------------===//

Value FunctionPartitioner::indexConstant(int64_t v) {
  OpBuilder::InsertionGuard guard(b);
  b.restoreInsertionPoint(tablePoint);
  std::vector<int64_t> key{std::numeric_limits<int64_t>::min(), v};
  Value &c = tables[key];
  if (!c)
    c = arith::ConstantIndexOp::create(b, func.getLoc(), v);
  return c;
}

/// The value `values[r]` on rank r: a constant when all ranks agree,
/// otherwise an element of a per-rank table.
Value FunctionPartitioner::perRankIndex(ArrayRef<int64_t> values) {
  if (llvm::all_equal(values))
    return indexConstant(values.front());
  std::vector<int64_t> key(values.begin(), values.end());
  Value &v = tables[key];
  if (v)
    return v;
  OpBuilder::InsertionGuard guard(b);
  b.restoreInsertionPoint(tablePoint);
  Location loc = func.getLoc();
  auto type = RankedTensorType::get({(int64_t)values.size()}, b.getIndexType());
  SmallVector<APInt> ints;
  for (int64_t x : values)
    ints.push_back(APInt(64, x, /*isSigned=*/true));
  Value table = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(type, ArrayRef<APInt>(ints)));
  v = tensor::ExtractOp::create(b, loc, table, ValueRange{rankIndex});
  return v;
}

OpFoldResult FunctionPartitioner::perRankFoldResult(ArrayRef<int64_t> values) {
  if (llvm::all_equal(values))
    return b.getIndexAttr(values.front());
  return perRankIndex(values);
}

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

static bool contains(const Box &outer, const Box &inner) {
  return outer.intersect(inner) == inner;
}

Value FunctionPartitioner::convert(const Held &h, const RankBoxes &want,
                                   Location loc) {
  if (h.boxes == want)
    return h.value;
  auto type = cast<RankedTensorType>(h.value.getType());
  Shape shape = getBoxShape(want.front());
  auto resultType = RankedTensorType::get(shape, type.getElementType());
  size_t rank = shape.size();
  // A conversion that is exactly one collective of the shard dialect, or
  // all-gathers of several dimensions. They move what a fetch would.
  std::optional<std::vector<Collective>> collectives;
  if (std::optional<Collective> c = matchCollective(h.boxes, want, grid))
    collectives = std::vector<Collective>{*c};
  else
    collectives = matchAllGathers(h.boxes, want, grid);
  if (collectives) {
    if (collectives->front().kind != Collective::Kind::AllSlice)
      count(h.value, getReceivedElements(h.boxes, want));
    Value v = h.value;
    RankBoxes boxes = h.boxes;
    for (const Collective &c : *collectives) {
      boxes = *applyCollective(c, boxes, grid);
      v = emitCollective(c, v, localType(v, boxes), loc);
    }
    return v;
  }
  bool local = true;
  for (size_t r = 0; r < want.size(); ++r)
    local &= contains(h.boxes[r], want[r]);
  if (local) {
    // Every rank holds what it needs: a slice at a per-rank offset.
    SmallVector<OpFoldResult> offsets, sizes, strides;
    for (size_t d = 0; d < rank; ++d) {
      SmallVector<int64_t> perRank;
      for (size_t r = 0; r < want.size(); ++r)
        perRank.push_back(want[r].lo[d] - h.boxes[r].lo[d]);
      offsets.push_back(perRankFoldResult(perRank));
      sizes.push_back(b.getIndexAttr(shape[d]));
      strides.push_back(b.getIndexAttr(1));
    }
    return tensor::ExtractSliceOp::create(b, loc, resultType, h.value, offsets,
                                          sizes, strides);
  }
  SmallVector<int64_t> src, dst, global(rank, 0);
  for (size_t r = 0; r < want.size(); ++r)
    for (size_t d = 0; d < rank; ++d) {
      src.push_back(h.boxes[r].lo[d]);
      dst.push_back(want[r].lo[d]);
      global[d] =
          std::max({global[d], h.boxes[r].hi[d] + 1, want[r].hi[d] + 1});
    }
  count(h.value, getReceivedElements(h.boxes, want));
  return FetchOp::create(
      b, loc, resultType, h.value, gridRef(), b.getDenseI64ArrayAttr(global),
      b.getDenseI64ArrayAttr(src), b.getDenseI64ArrayAttr(dst));
}

Value FunctionPartitioner::emitCollective(const Collective &c, Value input,
                                          RankedTensorType resultType,
                                          Location loc) {
  SmallVector<int16_t> axes(c.axes.begin(), c.axes.end());
  auto axesAttr = b.getDenseI16ArrayAttr(axes);
  switch (c.kind) {
  case Collective::Kind::AllSlice:
    return shard::AllSliceOp::create(b, loc, resultType, gridRef(), axesAttr,
                                     input, b.getIndexAttr(c.dim));
  case Collective::Kind::AllGather:
    return shard::AllGatherOp::create(b, loc, resultType, gridRef(), axesAttr,
                                      input, b.getIndexAttr(c.dim));
  case Collective::Kind::AllToAll:
    return shard::AllToAllOp::create(b, loc, resultType, gridRef(), axesAttr,
                                     input, b.getIndexAttr(c.dim),
                                     b.getIndexAttr(c.concatDim));
  }
  llvm_unreachable("unknown collective");
}

FailureOr<Value> FunctionPartitioner::materializeSource(Value orig,
                                                        const RankBoxes &want,
                                                        Location loc) {
  Operation *def = orig.getDefiningOp();
  RankedTensorType type = localType(orig, want);
  if (isa_and_nonnull<tensor::EmptyOp>(def))
    return tensor::EmptyOp::create(b, loc, type.getShape(),
                                   type.getElementType())
        .getResult();
  if (auto cst = dyn_cast_or_null<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
    if (dense && dense.isSplat())
      return arith::ConstantOp::create(b, loc, dense.resizeSplat(type))
          .getResult();
    // A general constant is built whole and sliced.
    Value whole = b.clone(*def)->getResult(0);
    return convert(Held{whole, wholeBoxes(orig), {}, {}}, want, loc);
  }
  return emitError(loc, "tofu-partition: no local value for a tensor defined ")
         << (def ? "by '" + def->getName().getStringRef().str() + "'"
                 : std::string("outside the function"));
}

FailureOr<Value> FunctionPartitioner::getLocal(Value orig,
                                               const RankBoxes &want,
                                               Location loc, bool reuse) {
  current = orig;
  // A fill of a scalar is rebuilt where it is needed rather than moved.
  if (auto fill = orig.getDefiningOp<linalg::GenericOp>();
      fill && fill.getNumDpsInputs() == 1 && fill.getNumResults() == 1 &&
      !isa<ShapedType>(fill.getDpsInputs()[0].getType())) {
    auto yield = cast<linalg::YieldOp>(fill.getBody()->getTerminator());
    if (yield.getOperand(0) == fill.getBody()->getArgument(0)) {
      RankedTensorType type = localType(orig, want);
      Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                            type.getElementType());
      return linalg::FillOp::create(
                 b, loc,
                 ValueRange{scalars.lookupOrDefault(fill.getDpsInputs()[0])},
                 ValueRange{empty})
          .getResult(0);
    }
  }
  auto it = held.find(orig);
  if (it == held.end())
    return materializeSource(orig, want, loc);
  // Only conversions whose every rank reads something are shared, as
  // ProgramCostModel::evaluate counts them.
  if (!reuse ||
      llvm::any_of(want, [](const Box &box) { return box.volume() <= 0; }))
    return convert(it->second, want, loc);
  std::pair<const void *, std::vector<int64_t>> key{orig.getAsOpaquePointer(),
                                                    {}};
  for (const Box &box : want) {
    key.second.insert(key.second.end(), box.lo.begin(), box.lo.end());
    key.second.insert(key.second.end(), box.hi.begin(), box.hi.end());
  }
  // Everything is built in order in the new function's body, so an earlier
  // conversion there dominates this one.
  auto [known, added] = converted.try_emplace(std::move(key), Value());
  Value previous = known->second;
  if (!added && previous.getDefiningOp() &&
      previous.getDefiningOp()->getBlock() == b.getInsertionBlock())
    return previous;
  known->second = convert(it->second, want, loc);
  return known->second;
}

FailureOr<Value> FunctionPartitioner::getRegions(Value orig,
                                                 const RankBoxes &regions,
                                                 Location loc) {
  auto type = cast<RankedTensorType>(orig.getType());
  Shape shape(type.getShape().begin(), type.getShape().end());
  RankBoxes windows = getUniformWindows(regions, shape);
  bool everyRankReads =
      llvm::all_of(regions, [](const Box &box) { return box.volume() > 0; });
  FailureOr<Value> local = getLocal(orig, windows, loc, everyRankReads);
  if (failed(local) || windows == regions)
    return local;
  SmallVector<OpFoldResult> offsets, sizes, strides;
  Shape extent = getBoxShape(windows.front());
  for (size_t d = 0; d < shape.size(); ++d) {
    SmallVector<int64_t> offset, size;
    for (size_t r = 0; r < regions.size(); ++r) {
      int64_t n = std::max<int64_t>(0, regions[r].hi[d] - regions[r].lo[d] + 1);
      size.push_back(n);
      offset.push_back(std::clamp<int64_t>(regions[r].lo[d] - windows[r].lo[d],
                                           0, extent[d] - n));
    }
    offsets.push_back(perRankFoldResult(offset));
    sizes.push_back(perRankFoldResult(size));
    strides.push_back(b.getIndexAttr(1));
  }
  return tensor::ExtractSliceOp::create(b, loc, *local, offsets, sizes, strides)
      .getResult();
}

/// Reduces the pending axes of `h` in increasing order: with a
/// reduce-scatter along the dimension that the target layout cuts at that
/// axis when the local extent divides, otherwise with an all-reduce.
Held FunctionPartitioner::reducePartial(Held h, ArrayRef<Tiling> target,
                                        Location loc) {
  for (int64_t axis : h.partial) {
    auto type = cast<RankedTensorType>(h.value.getType());
    Shape shape(type.getShape().begin(), type.getShape().end());
    int64_t k = grid.shape[axis];
    const Tiling &t = target[axis];
    auto axes = b.getDenseI16ArrayAttr({(int16_t)axis});
    auto kind = shard::ReductionKindAttr::get(b.getContext(), h.reduction);
    if (t.kind == Tiling::Kind::Cut && t.dim < shape.size() &&
        shape[t.dim] % k == 0) {
      count(h.value, double(grid.size()) * (k - 1) / k * getNumElements(shape));
      shape[t.dim] /= k;
      auto resultType = RankedTensorType::get(shape, type.getElementType());
      h.value =
          shard::ReduceScatterOp::create(b, loc, resultType, gridRef(), axes,
                                         h.value, kind, b.getIndexAttr(t.dim));
      for (size_t r = 0; r < h.boxes.size(); ++r) {
        Box &box = h.boxes[r];
        box.lo[t.dim] += grid.getCoords(r)[axis] * shape[t.dim];
        box.hi[t.dim] = box.lo[t.dim] + shape[t.dim] - 1;
      }
    } else {
      count(h.value,
            double(grid.size()) * 2 * (k - 1) / k * getNumElements(shape));
      h.value = shard::AllReduceOp::create(b, loc, type, gridRef(), axes,
                                           h.value, kind);
    }
  }
  h.partial.clear();
  return h;
}

/// Converts a freshly computed result to the layout of its tensor.
LogicalResult FunctionPartitioner::setResult(Value orig, Held h, Location loc) {
  current = orig;
  LayoutAttr layout;
  FailureOr<RankBoxes> boxes = getLayout(orig, &layout);
  if (failed(boxes))
    return failure();
  SmallVector<Tiling> target;
  for (int64_t d : layout.getAxes())
    target.push_back(d < 0 ? Tiling::replicate() : Tiling::cut(d));
  if (!h.partial.empty())
    h = reducePartial(std::move(h), target, loc);
  Value v = convert(h, *boxes, loc);
  if (Operation *def = v.getDefiningOp(); def && def->getNumResults() == 1)
    def->setAttr(kLayout, layout);
  held[orig] = Held{v, *boxes, {}, {}};
  return success();
}

//===----------------------------------------------------------------------===//
// Operations
//===----------------------------------------------------------------------===//

/// The range of an affine expression over a box of loop indices, or
/// std::nullopt for symbols and non-constant products.
static std::optional<std::pair<int64_t, int64_t>> getRange(AffineExpr e,
                                                           const Box &box) {
  if (auto d = dyn_cast<AffineDimExpr>(e))
    return std::pair{box.lo[d.getPosition()], box.hi[d.getPosition()]};
  if (auto c = dyn_cast<AffineConstantExpr>(e))
    return std::pair{c.getValue(), c.getValue()};
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return std::nullopt;
  auto l = getRange(bin.getLHS(), box), r = getRange(bin.getRHS(), box);
  if (!l || !r)
    return std::nullopt;
  auto floorDiv = [](int64_t a, int64_t c) {
    return a >= 0 ? a / c : -((-a + c - 1) / c);
  };
  switch (e.getKind()) {
  case AffineExprKind::Add:
    return std::pair{l->first + r->first, l->second + r->second};
  case AffineExprKind::Mul: {
    if (r->first != r->second)
      return std::nullopt;
    int64_t c = r->first;
    return c >= 0 ? std::pair{l->first * c, l->second * c}
                  : std::pair{l->second * c, l->first * c};
  }
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv:
  case AffineExprKind::Mod: {
    int64_t c = r->first;
    if (r->first != r->second || c <= 0)
      return std::nullopt;
    if (e.getKind() == AffineExprKind::FloorDiv)
      return std::pair{floorDiv(l->first, c), floorDiv(l->second, c)};
    if (e.getKind() == AffineExprKind::CeilDiv)
      return std::pair{-floorDiv(-l->first, c), -floorDiv(-l->second, c)};
    if (floorDiv(l->first, c) == floorDiv(l->second, c))
      return std::pair{l->first - floorDiv(l->first, c) * c,
                       l->second - floorDiv(l->second, c) * c};
    return std::pair{int64_t(0), c - 1};
  }
  default:
    return std::nullopt;
  }
}

static std::string str(AffineExpr e) {
  std::string text;
  llvm::raw_string_ostream os(text);
  e.print(os);
  return text;
}

/// True if the expression is a sum of constant multiples of dimensions and
/// a constant, so that shifting the loops shifts it by a constant.
static bool isLinear(AffineExpr e) {
  if (isa<AffineDimExpr, AffineConstantExpr>(e))
    return true;
  auto bin = dyn_cast<AffineBinaryOpExpr>(e);
  if (!bin)
    return false;
  if (e.getKind() == AffineExprKind::Add)
    return isLinear(bin.getLHS()) && isLinear(bin.getRHS());
  if (e.getKind() == AffineExprKind::Mul)
    return isLinear(bin.getLHS()) && isa<AffineConstantExpr>(bin.getRHS());
  return false;
}

namespace {
/// The regions of one operand over every rank's iteration box, and the
/// operand's indexing map rebased onto the local region.
struct OperandRegions {
  RankBoxes boxes;
  AffineMap localMap;
};
} // namespace

///
/// An output dimension written through a compound index (a scatter such as
/// the `2 * d2 + d5` of a strided convolution's data gradient) is held
/// whole, since elements that no iteration writes keep their initial value;
/// the plan never cuts the loops of such an index.
static FailureOr<OperandRegions>
getOperandRegions(Operation *op, unsigned operand, AffineMap map,
                  const RankBoxes &iteration, const std::vector<bool> &cut,
                  ArrayRef<int64_t> outputShape = {}) {
  auto rangeOf =
      [&](unsigned d, AffineExpr e,
          const Box &box) -> std::optional<std::pair<int64_t, int64_t>> {
    if (!outputShape.empty() && !isa<AffineDimExpr, AffineConstantExpr>(e))
      return std::pair{int64_t(0), outputShape[d] - 1};
    return getRange(e, box);
  };
  OperandRegions out;
  Box local = Box::whole(getBoxShape(iteration.front()));
  SmallVector<AffineExpr> rebased;
  Box localRegion;
  for (AffineExpr e : map.getResults()) {
    bool usesCut = false;
    for (unsigned d = 0; d < cut.size(); ++d)
      usesCut |= cut[d] && e.isFunctionOfDim(d);
    if (usesCut && !isLinear(e))
      return op->emitError("tofu-partition: the indexing map result '")
             << str(e) << "' of operand #" << operand
             << " is not linear in a loop that the plan cuts";
    auto r = rangeOf(localRegion.lo.size(), e, local);
    if (!r)
      return op->emitError("tofu-partition: cannot bound the indexing map "
                           "result '")
             << str(e) << "' of operand #" << operand;
    localRegion.lo.push_back(r->first);
    localRegion.hi.push_back(r->second);
    rebased.push_back(e - r->first);
  }
  for (const Box &box : iteration) {
    Box region;
    for (AffineExpr e : map.getResults()) {
      auto r = rangeOf(region.lo.size(), e, box);
      region.lo.push_back(r->first);
      region.hi.push_back(r->second);
    }
    out.boxes.push_back(region);
  }
  if (!haveUniformShape(out.boxes) ||
      (!out.boxes.empty() &&
       getBoxShape(out.boxes.front()) != getBoxShape(localRegion)))
    return op->emitError("tofu-partition: the ranks read regions of "
                         "different shapes from operand #")
           << operand;
  out.localMap = AffineMap::get(map.getNumDims(), map.getNumSymbols(), rebased,
                                op->getContext());
  return out;
}

/// The reduction that output `r` of a linalg operation accumulates with:
/// the yielded value must combine the output's block argument with one
/// floating-point add, mul, max or min.
static std::optional<shard::ReductionKind>
getReductionKind(linalg::GenericOp op, unsigned r) {
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  Operation *combiner = yield.getOperand(r).getDefiningOp();
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(r));
  if (!combiner || combiner->getNumOperands() != 2 ||
      !llvm::is_contained(combiner->getOperands(), Value(acc)))
    return std::nullopt;
  if (isa<arith::AddFOp>(combiner))
    return shard::ReductionKind::Sum;
  if (isa<arith::MulFOp>(combiner))
    return shard::ReductionKind::Product;
  if (isa<arith::MaximumFOp, arith::MaxNumFOp>(combiner))
    return shard::ReductionKind::Max;
  if (isa<arith::MinimumFOp, arith::MinNumFOp>(combiner))
    return shard::ReductionKind::Min;
  return std::nullopt;
}

/// The identity of a reduction on floats.
static double getIdentity(shard::ReductionKind kind) {
  switch (kind) {
  case shard::ReductionKind::Max:
    return -std::numeric_limits<double>::infinity();
  case shard::ReductionKind::Min:
    return std::numeric_limits<double>::infinity();
  case shard::ReductionKind::Product:
    return 1.0;
  default:
    return 0.0;
  }
}

/// Whether `v` is a fill, or a splat constant, of exactly `value`: then
/// every rank may start a partial reduction from it, and no second buffer
/// of the reduction's identity is needed.
static bool isSplatOf(Value v, FloatAttr value) {
  Attribute scalar;
  if (auto fill = v.getDefiningOp<linalg::FillOp>())
    return matchPattern(fill.value(), m_Constant(&scalar)) && scalar == value;
  DenseElementsAttr dense;
  return matchPattern(v, m_Constant(&dense)) && dense.isSplat() &&
         dense.getSplatValue<Attribute>() == value;
}

LogicalResult FunctionPartitioner::mapCapturedValues(Operation *op,
                                                     IRMapping &mapping) {
  llvm::SetVector<Value> captured;
  for (Region &region : op->getRegions())
    getUsedValuesDefinedAbove(region, captured);
  for (Value v : captured) {
    if (isa<RankedTensorType>(v.getType())) {
      FailureOr<Value> whole = getLocal(v, wholeBoxes(v), op->getLoc());
      if (failed(whole))
        return failure();
      mapping.map(v, *whole);
    } else if (Value s = scalars.lookupOrNull(v)) {
      mapping.map(v, s);
    }
  }
  return success();
}

FailureOr<std::vector<int>>
FunctionPartitioner::getCutVars(Operation *op, ArrayRef<int64_t> extents) {
  auto strategies = op->getAttrOfType<ArrayAttr>(kStrategy);
  if (!strategies || strategies.size() != grid.shape.size())
    return op->emitError("tofu-partition: the operation has no strategy for "
                         "each of the plan's ")
           << grid.shape.size() << " steps";
  std::vector<int> cutVars;
  for (Attribute a : strategies) {
    auto s = dyn_cast<StringAttr>(a);
    StringRef name = s ? s.getValue() : "";
    unsigned dim;
    if (name == "replicated") {
      cutVars.push_back(-1);
      continue;
    }
    if (!name.consume_front("d") || name.getAsInteger(10, dim) ||
        dim >= extents.size())
      return op->emitError("tofu-partition: unsupported strategy ")
             << a << " (expected a loop 'd<i>' or \"replicated\")";
    cutVars.push_back(dim);
  }
  for (int64_t e : extents)
    if (ShapedType::isDynamic(e))
      return op->emitError("tofu-partition: dynamic loop ranges are not "
                           "supported");
  return cutVars;
}

/// A dimension that an operation reads through a compound index (the
/// `2 * d2 + d5` of a strided or windowed convolution) bounds none of its
/// loops, so the operation may read it from a longer tile than its windows
/// reach (widenToHeldTiles): a 1x1 stride-2 convolution then reads the rows
/// 0..31 its rank holds instead of a 31-row slice of them, and its library
/// call sees the tensor it would see unpartitioned (a dense tile, or the
/// zero pad it folds) rather than a strided view of an odd extent, which
/// oneDNN runs on a slower path.
void FunctionPartitioner::widenToHeldTile(Value orig, AffineMap map,
                                          RankBoxes &regions) {
  auto it = held.find(orig);
  if (it == held.end() || !it->second.partial.empty())
    return;
  std::vector<bool> free;
  for (AffineExpr e : map.getResults())
    free.push_back(!isa<AffineDimExpr, AffineConstantExpr>(e));
  widenToHeldTiles(regions, it->second.boxes, free);
}

LogicalResult FunctionPartitioner::partitionLinalg(linalg::GenericOp op) {
  Location loc = op.getLoc();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  FailureOr<std::vector<int>> cutVars = getCutVars(op, extents);
  if (failed(cutVars))
    return failure();
  std::vector<bool> cut(extents.size(), false);
  for (int v : *cutVars)
    if (v >= 0)
      cut[v] = true;
  std::string error;
  std::optional<RankBoxes> iteration =
      getIterationBoxes(std::vector<int64_t>(extents.begin(), extents.end()),
                        *cutVars, grid, error);
  if (!iteration)
    return op.emitError("tofu-partition: ") << error;

  // Inputs: the image of each rank's box, fetched just before the op.
  SmallVector<AffineMap> maps;
  SmallVector<Value> inputs, inits;
  for (OpOperand *operand : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    Value v = operand->get();
    if (!isa<RankedTensorType>(v.getType())) {
      maps.push_back(map);
      inputs.push_back(scalars.lookupOrDefault(v));
      continue;
    }
    FailureOr<OperandRegions> regions = getOperandRegions(
        op, operand->getOperandNumber(), map, *iteration, cut);
    if (failed(regions))
      return failure();
    // An input that the body does not read (it gives a loop its extent)
    // needs only its shape: nothing moves, as ProgramCostModel counts it.
    if (op.getMatchingBlockArgument(operand).use_empty()) {
      RankedTensorType type = localType(v, regions->boxes);
      maps.push_back(regions->localMap);
      inputs.push_back(tensor::EmptyOp::create(b, loc, type.getShape(),
                                               type.getElementType()));
      continue;
    }
    widenToHeldTile(v, map, regions->boxes);
    FailureOr<Value> local = getLocal(v, regions->boxes, loc);
    if (failed(local))
      return failure();
    maps.push_back(regions->localMap);
    inputs.push_back(*local);
  }

  // Outputs: the image of the box; loops cut but absent from the output
  // map make the result partial.
  SmallVector<Held> results;
  for (OpOperand &init : op.getDpsInitsMutable()) {
    unsigned r = init.getOperandNumber() - op.getNumDpsInputs();
    AffineMap map = op.getMatchingIndexingMap(&init);
    FailureOr<OperandRegions> regions = getOperandRegions(
        op, init.getOperandNumber(), map, *iteration, cut,
        cast<RankedTensorType>(init.get().getType()).getShape());
    if (failed(regions))
      return failure();
    for (AffineExpr e : map.getResults())
      if (!isa<AffineDimExpr, AffineConstantExpr>(e))
        for (unsigned d = 0; d < cut.size(); ++d)
          if (cut[d] && e.isFunctionOfDim(d))
            return op.emitError("tofu-partition: the plan cuts loop d")
                   << d << ", which the compound output index '" << str(e)
                   << "' scatters into";
    Held h;
    h.boxes = regions->boxes;
    for (size_t i = 0; i < cutVars->size(); ++i) {
      int v = (*cutVars)[i];
      if (v < 0 || map.isFunctionOfDim(v))
        continue;
      if (op.getIteratorTypesArray()[v] != utils::IteratorType::reduction)
        return op.emitError("tofu-partition: the plan cuts the parallel loop "
                            "d")
               << v << ", which output #" << r << " does not use";
      h.partial.push_back(i);
    }
    auto type = localType(init.get(), h.boxes);
    Value local;
    if (op.getMatchingBlockArgument(&init).use_empty()) {
      local = tensor::EmptyOp::create(b, loc, type.getShape(),
                                      type.getElementType());
    } else {
      FailureOr<Value> v = getLocal(init.get(), h.boxes, loc);
      if (failed(v))
        return failure();
      local = *v;
    }
    if (!h.partial.empty()) {
      std::optional<shard::ReductionKind> kind = getReductionKind(op, r);
      if (!kind || !isa<FloatType>(type.getElementType()))
        return op.emitError("tofu-partition: the plan cuts a reduction "
                            "loop, but output #")
               << r << " does not accumulate with a floating-point add, "
               << "mul, max or min";
      h.reduction = *kind;
      auto identityAttr =
          b.getFloatAttr(type.getElementType(), getIdentity(*kind));
      if (!op.getMatchingBlockArgument(&init).use_empty() &&
          !isSplatOf(local, identityAttr)) {
        // Only the first rank of each group starts from the initial value;
        // the others start from the reduction's identity.
        Value first;
        for (int64_t axis : h.partial) {
          SmallVector<int64_t> coords;
          for (int64_t w = 0; w < grid.size(); ++w)
            coords.push_back(grid.getCoords(w)[axis]);
          Value isFirst =
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                    perRankIndex(coords), indexConstant(0));
          first =
              first ? arith::AndIOp::create(b, loc, first, isFirst).getResult()
                    : isFirst;
        }
        Value identity = arith::ConstantOp::create(b, loc, identityAttr);
        Value empty = tensor::EmptyOp::create(b, loc, type.getShape(),
                                              type.getElementType());
        Value filled = linalg::FillOp::create(b, loc, ValueRange{identity},
                                              ValueRange{empty})
                           .getResult(0);
        local = arith::SelectOp::create(b, loc, first, local, filled);
      }
    }
    maps.push_back(regions->localMap);
    inits.push_back(local);
    results.push_back(std::move(h));
  }

  // Loop offsets of this rank, for linalg.index.
  SmallVector<Value> loopOffsets(extents.size());
  op.getRegion().walk([&](linalg::IndexOp index) {
    unsigned d = index.getDim();
    if (loopOffsets[d])
      return;
    SmallVector<int64_t> lo;
    for (const Box &box : *iteration)
      lo.push_back(box.lo[d]);
    loopOffsets[d] = perRankIndex(lo);
  });

  IRMapping mapping;
  if (failed(mapCapturedValues(op, mapping)))
    return failure();
  SmallVector<Type> resultTypes;
  for (Value init : inits)
    resultTypes.push_back(init.getType());
  auto local = linalg::GenericOp::create(
      b, loc, resultTypes, inputs, inits, b.getAffineMapArrayAttr(maps),
      op.getIteratorTypes(), /*doc=*/nullptr, /*library_call=*/nullptr);
  op.getRegion().cloneInto(&local.getRegion(), mapping);
  local.getRegion().walk([&](linalg::IndexOp index) {
    Value offset = loopOffsets[index.getDim()];
    if (!offset || matchPattern(offset, m_Zero()))
      return;
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(index);
    auto shifted = arith::AddIOp::create(b, index.getLoc(), index, offset);
    index.getResult().replaceAllUsesExcept(shifted, shifted);
  });
  for (auto [r, h] : llvm::enumerate(results)) {
    h.value = local.getResult(r);
    if (!h.partial.empty()) {
      SmallVector<int64_t> axes(grid.shape.size(), -1);
      local->setAttr(kLayout, LayoutAttr::get(b.getContext(), axes, h.partial));
    }
    if (failed(setResult(op.getResult(r), std::move(h), loc)))
      return failure();
  }
  return success();
}

LogicalResult FunctionPartitioner::runReplicated(Operation *op) {
  IRMapping mapping;
  for (Value v : op->getOperands()) {
    if (isa<RankedTensorType>(v.getType())) {
      FailureOr<Value> whole = getLocal(v, wholeBoxes(v), op->getLoc());
      if (failed(whole))
        return failure();
      mapping.map(v, *whole);
    } else if (Value s = scalars.lookupOrNull(v)) {
      mapping.map(v, s);
    } else if (!isa<TensorType>(v.getType())) {
      return op->emitError("tofu-partition: an operand has no local value");
    }
  }
  if (failed(mapCapturedValues(op, mapping)))
    return failure();
  Operation *clone = b.clone(*op, mapping);
  for (StringRef name : {kTilings, kStrategy})
    clone->removeAttr(name);
  for (auto [orig, local] : llvm::zip(op->getResults(), clone->getResults())) {
    if (auto type = dyn_cast<RankedTensorType>(orig.getType())) {
      if (!type.hasStaticShape())
        return op->emitError("tofu-partition: dynamic shapes are not "
                             "supported");
      if (failed(setResult(orig, Held{local, wholeBoxes(orig), {}, {}},
                           op->getLoc())))
        return failure();
    } else {
      scalars.map(orig, local);
    }
  }
  return success();
}

LogicalResult FunctionPartitioner::buildReturn(func::ReturnOp ret,
                                               func::FuncOp newFunc) {
  SmallVector<Value> operands;
  SmallVector<int> feeds = getFedArguments(func);
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (!isa<RankedTensorType>(v.getType())) {
      operands.push_back(scalars.lookupOrDefault(v));
      continue;
    }
    // An updated weight or state returns in its argument's layout, so that
    // it can be fed back; everything else in its own.
    Value layoutOf = v;
    if (feeds[i] >= 0 && func.getArgument(feeds[i]).getType() == v.getType())
      layoutOf = func.getArgument(feeds[i]);
    LayoutAttr layout;
    FailureOr<RankBoxes> boxes = getLayout(layoutOf, &layout);
    if (failed(boxes))
      return failure();
    FailureOr<Value> local = getLocal(v, *boxes, ret.getLoc(), /*reuse=*/false);
    if (failed(local))
      return failure();
    operands.push_back(*local);
    newFunc.setResultAttr(i, kLayout, layout);
  }
  func::ReturnOp::create(b, ret.getLoc(), operands);
  SmallVector<Type> types;
  for (Value v : operands)
    types.push_back(v.getType());
  newFunc.setFunctionType(b.getFunctionType(newFunc.getArgumentTypes(), types));
  return success();
}

func::FuncOp FunctionPartitioner::run() {
  Block &body = func.getBody().front();
  // Arguments take their local types.
  SmallVector<Type> argTypes;
  SmallVector<LayoutAttr> argLayouts;
  for (BlockArgument arg : body.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType())) {
      argTypes.push_back(arg.getType());
      argLayouts.push_back({});
      continue;
    }
    LayoutAttr layout;
    FailureOr<RankBoxes> boxes = getLayout(arg, &layout);
    if (failed(boxes))
      return {};
    argTypes.push_back(localType(arg, *boxes));
    argLayouts.push_back(layout);
    held[arg] = Held{Value(), *boxes, {}, {}};
  }
  b.setInsertionPoint(func);
  auto newFunc = func::FuncOp::create(
      b, func.getLoc(), (func.getSymName() + ".spmd").str(),
      b.getFunctionType(argTypes, func.getResultTypes()));
  auto fail = [&]() -> func::FuncOp {
    newFunc.erase();
    return {};
  };
  Block *entry = newFunc.addEntryBlock();
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    if (DictionaryAttr attrs = func.getArgAttrDict(i))
      for (NamedAttribute a : attrs)
        if (a.getName() != kTiling)
          newFunc.setArgAttr(i, a.getName(), a.getValue());
    if (argLayouts[i])
      newFunc.setArgAttr(i, kLayout, argLayouts[i]);
    if (held.count(arg))
      held[arg].value = entry->getArgument(i);
    else
      scalars.map(arg, entry->getArgument(i));
  }
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (DictionaryAttr attrs = func.getResultAttrDict(i))
      for (NamedAttribute a : attrs)
        newFunc.setResultAttr(i, a.getName(), a.getValue());
  b.setInsertionPointToStart(entry);
  rankIndex = shard::ProcessLinearIndexOp::create(b, func.getLoc(), gridOp);
  tablePoint = b.saveInsertionPoint();
  b.setInsertionPointToEnd(entry);

  for (Operation &op : body.without_terminator()) {
    bool hasTensors = llvm::any_of(op.getOperandTypes(),
                                   [](Type t) { return isa<TensorType>(t); }) ||
                      llvm::any_of(op.getResultTypes(),
                                   [](Type t) { return isa<TensorType>(t); });
    // Sources are built where a consumer needs them.
    if (isa<tensor::EmptyOp>(op) || (isa<arith::ConstantOp>(op) && hasTensors))
      continue;
    if (!hasTensors && op.getNumRegions() == 0) {
      b.clone(op, scalars);
      continue;
    }
    if (auto generic = dyn_cast<linalg::GenericOp>(op);
        generic && generic->hasAttr(kStrategy) &&
        generic.hasPureTensorSemantics()) {
      if (failed(partitionLinalg(generic)))
        return fail();
      continue;
    }
    if (op.hasAttr(kStrategy)) {
      FailureOr<bool> done = partitionTensorOp(&op);
      if (failed(done))
        return fail();
      if (*done)
        continue;
    }
    ++replicatedOps[op.getName().getStringRef().str()];
    if (failed(runReplicated(&op)))
      return fail();
  }
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret) {
    mlir::emitError(func.getLoc(), "tofu-partition: the function does not end in func.return");
    return fail();
  }
  if (failed(buildReturn(ret, newFunc)))
    return fail();
  return newFunc;
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {

struct TofuPartitionPass
    : public tofu::impl::TofuPartitionBase<TofuPartitionPass> {
  using TofuPartitionBase::TofuPartitionBase;

  void runOnOperation() override;

private:
  LogicalResult partitionFunction(func::FuncOp func);

  /// The byte reports of the functions, for `report`.
  std::string reportText;
};

} // namespace

/// Prints the plan's bytes next to the generated program's, itemised per
/// tensor where they differ.
static void writeBytesReport(StringRef func, const PlanOnIR &plan,
                             const std::map<std::string, double> &generated,
                             llvm::raw_ostream &os) {
  double total = 0;
  for (auto &[name, bytes] : generated)
    total += bytes;
  os << llvm::formatv(
      "tofu-partition @{0}: cost-model bytes {1:F0} B/step, program bytes "
      "{3:F0} B/step, generated {2:F0} B/step\n",
      func, plan.totalBytes, total, plan.programBytes);
  std::vector<std::tuple<double, std::string, double, double, double>> rows;
  std::map<std::string, double> all = plan.bytesPerTensor;
  for (auto &[name, bytes] : generated)
    all.emplace(name, 0.0);
  for (auto &[name, bytes] : plan.programBytesPerTensor)
    all.emplace(name, 0.0);
  for (auto &[name, planned] : all) {
    auto it = generated.find(name);
    double made = it == generated.end() ? 0.0 : it->second;
    auto p = plan.programBytesPerTensor.find(name);
    double modelled = p == plan.programBytesPerTensor.end() ? 0.0 : p->second;
    if (std::abs(made - planned) > 0.5 || std::abs(made - modelled) > 0.5)
      rows.emplace_back(-std::abs(made - modelled), name, planned, modelled,
                        made);
  }
  std::sort(rows.begin(), rows.end());
  if (!rows.empty())
    os << llvm::formatv("  {0,-8} {1,12} {2,10} {3,12}\n", "tensor",
                        "cost-model B", "program B", "generated B");
  for (auto &[key, name, planned, modelled, made] : rows)
    os << llvm::formatv("  {0,-8} {1,12:F0} {2,10:F0} {3,12:F0}\n", name,
                        planned, modelled, made);
}

LogicalResult TofuPartitionPass::partitionFunction(func::FuncOp func) {
  FailureOr<PlanOnIR> plan =
      readPlanOnIR(func, /*evaluate=*/verifyPlan || !report.empty());
  if (failed(plan))
    return failure();
  const std::vector<int64_t> &ks = plan->steps;
  ModuleOp module = getOperation();
  OpBuilder b(func);

  if (keepReference) {
    auto reference = cast<func::FuncOp>(b.clone(*func));
    reference.setSymName((func.getSymName() + "_reference").str());
    reference->removeAttr(kPlan);
    for (unsigned i = 0; i < reference.getNumArguments(); ++i)
      reference.removeArgAttr(i, kTiling);
    reference.walk([](Operation *op) {
      op->removeAttr(kTilings);
      op->removeAttr(kStrategy);
    });
  }

  // Named linalg operations become generics with the same plan.
  IRRewriter rewriter(b);
  SmallVector<linalg::LinalgOp> named;
  func.walk([&](linalg::LinalgOp op) {
    if (!isa<linalg::GenericOp>(op))
      named.push_back(op);
  });
  for (linalg::LinalgOp op : named) {
    SmallVector<NamedAttribute> kept;
    for (NamedAttribute a : op->getDiscardableAttrs())
      kept.push_back(a);
    SmallVector<std::string> resultNames;
    for (Value r : op->getResults()) {
      resultNames.push_back(plan->names.lookup(r));
      plan->names.erase(r);
    }
    rewriter.setInsertionPoint(op);
    FailureOr<linalg::GenericOp> generic =
        linalg::generalizeNamedOp(rewriter, op);
    if (failed(generic))
      return op->emitError("tofu-partition: cannot generalize the operation");
    for (NamedAttribute a : kept)
      (*generic)->setAttr(a.getName(), a.getValue());
    for (auto [name, to] : llvm::zip(resultNames, (*generic)->getResults()))
      if (!name.empty())
        plan->names[to] = name;
  }

  std::string gridName = (func.getSymName() + "_grid").str();
  b.setInsertionPointToStart(module.getBody());
  auto gridOp = shard::GridOp::create(
      b, func.getLoc(), b.getStringAttr(gridName), b.getDenseI64ArrayAttr(ks));
  FunctionPartitioner partitioner(module, func, ProcessGrid{ks}, gridOp);
  partitioner.names = plan->names;
  func::FuncOp spmd = partitioner.run();
  if (!spmd) {
    gridOp.erase();
    return failure();
  }
  for (auto &[name, count] : partitioner.replicatedOps)
    emitRemark(func.getLoc(), "tofu-partition: ")
        << count << " '" << name
        << "' operation(s) run replicated on whole inputs";
  if (!report.empty()) {
    llvm::raw_string_ostream os(reportText);
    writeBytesReport(func.getSymName(), *plan, partitioner.generatedBytes, os);
  }
  std::string name = func.getSymName().str();
  spmd->setAttr(kPlan, func->getAttr(kPlan));
  func.erase();
  spmd.setSymName(name);
  return success();
}

void TofuPartitionPass::runOnOperation() {
  SmallVector<func::FuncOp> funcs;
  for (auto func : getOperation().getOps<func::FuncOp>())
    if (func->hasAttr(kPlan))
      funcs.push_back(func);
  if (funcs.empty()) {
    mlir::emitError(getOperation().getLoc(), "tofu-partition: no function carries a plan; "
                             "run tofu-search first");
    return signalPassFailure();
  }
  for (func::FuncOp func : funcs)
    if (getOperation().lookupSymbol((func.getSymName() + "_grid").str())) {
      func.emitError("tofu-partition: @")
          << func.getSymName() << " is already partitioned (the module has @"
          << func.getSymName() << "_grid); partition the step once";
      return signalPassFailure();
    }
  reportText.clear();
  for (func::FuncOp func : funcs)
    if (failed(partitionFunction(func)))
      return signalPassFailure();
  if (!report.empty() &&
      failed(writeReport(getOperation(), "tofu-partition", report, reportText)))
    return signalPassFailure();
}
