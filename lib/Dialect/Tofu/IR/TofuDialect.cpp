//===- TofuDialect.cpp - The tofu dialect ---------------------------------===//
//
// Registers the tofu dialect and verifies layouts and fetches.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/Tofu/IR/Tofu.h"
#include "tofu/Partition/Distribution.h"

#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace tofu;

#include "tofu/Dialect/Tofu/IR/TofuDialect.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "tofu/Dialect/Tofu/IR/TofuAttributes.cpp.inc"

#define GET_OP_CLASSES
#include "tofu/Dialect/Tofu/IR/TofuOps.cpp.inc"

namespace {
/// Names the large literal LLVM structs of a lowered step: a step that
/// returns hundreds of memrefs returns them as one struct, whose type the
/// generic printer repeats in every `llvm.extractvalue` of it (a BERT slice
/// lowered for the GPU printed 300 MB of text, most of it that type).
struct TofuOpAsmInterface : public OpAsmDialectInterface {
  using OpAsmDialectInterface::OpAsmDialectInterface;

  /// Structs of fewer members (memref descriptors) print as they are.
  static constexpr size_t kMinAliasedMembers = 16;

  AliasResult getAlias(Type type, raw_ostream &os) const override {
    auto structType = dyn_cast<LLVM::LLVMStructType>(type);
    if (!structType || structType.isIdentified() ||
        structType.getBody().size() < kMinAliasedMembers)
      return AliasResult::NoAlias;
    os << "tofu_struct";
    return AliasResult::OverridableAlias;
  }
};
} // namespace

void TofuDialect::initialize() {
  addInterfaces<TofuOpAsmInterface>();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "tofu/Dialect/Tofu/IR/TofuAttributes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "tofu/Dialect/Tofu/IR/TofuOps.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// LayoutAttr
//===----------------------------------------------------------------------===//

LogicalResult LayoutAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 ArrayRef<int64_t> axes,
                                 ArrayRef<int64_t> partial) {
  for (int64_t d : axes)
    if (d < -1)
      return emitError() << "layout axis entry " << d
                         << " is neither a dimension nor -1";
  llvm::SmallSet<int64_t, 4> seen;
  for (int64_t a : partial) {
    if (a < 0 || a >= (int64_t)axes.size())
      return emitError() << "partial axis " << a << " is not one of the "
                         << axes.size() << " grid axes";
    if (!seen.insert(a).second)
      return emitError() << "partial axis " << a << " is listed twice";
    if (axes[a] != -1)
      return emitError() << "grid axis " << a
                         << " both cuts a dimension and holds partial values";
  }
  return success();
}

LogicalResult
LayoutAttr::verifyRank(function_ref<InFlightDiagnostic()> emitError,
                       int64_t rank) const {
  for (int64_t d : getAxes())
    if (d >= rank)
      return emitError() << "layout cuts dimension " << d
                         << " of a tensor of rank " << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// FetchOp
//===----------------------------------------------------------------------===//

/// The per-rank boxes of `offsets` (one row per rank) with shape `sizes`.
static RankBoxes getBoxes(ArrayRef<int64_t> offsets, ArrayRef<int64_t> sizes) {
  RankBoxes boxes;
  size_t rank = sizes.size();
  for (size_t r = 0; rank && r + rank <= offsets.size(); r += rank) {
    Box b;
    for (size_t d = 0; d < rank; ++d) {
      b.lo.push_back(offsets[r + d]);
      b.hi.push_back(offsets[r + d] + sizes[d] - 1);
    }
    boxes.push_back(b);
  }
  return boxes;
}

LogicalResult FetchOp::verify() {
  auto in = getInput().getType();
  auto out = getResult().getType();
  if (!in.hasStaticShape() || !out.hasStaticShape())
    return emitOpError("needs static shapes");
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type");
  int64_t rank = getShape().size();
  if (in.getRank() != rank || out.getRank() != rank)
    return emitOpError("has operand rank ")
           << in.getRank() << " and result rank " << out.getRank()
           << " but a global shape of rank " << rank;
  if (rank == 0)
    return success();
  auto src = getSrcOffsets(), dst = getDstOffsets();
  if (src.size() % rank || src.size() != dst.size() || src.empty())
    return emitOpError("needs one row of ")
           << rank << " offsets per rank in both offset arrays";
  RankBoxes held = getBoxes(src, in.getShape());
  RankBoxes wanted = getBoxes(dst, out.getShape());
  Box whole = Box::whole(Shape(getShape().begin(), getShape().end()));
  for (auto [name, boxes] : {std::pair{"held", &held}, {"requested", &wanted}})
    for (size_t r = 0; r < boxes->size(); ++r)
      if (!((*boxes)[r].intersect(whole) == (*boxes)[r]))
        return emitOpError("the ")
               << name << " region " << (*boxes)[r].str() << " of rank " << r
               << " is outside the tensor";
  std::string error = checkFetchable(held, wanted);
  if (!error.empty())
    return emitOpError(error);
  return success();
}

LogicalResult FetchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto grid = symbolTable.lookupNearestSymbolFrom<shard::GridOp>(
      *this, getGridAttr());
  if (!grid)
    return emitOpError("'") << getGrid() << "' is not a shard.grid";
  int64_t size = 1;
  for (int64_t k : grid.getShape())
    size *= k;
  int64_t rank = getShape().size();
  if (rank && (int64_t)getSrcOffsets().size() != size * rank)
    return emitOpError("has offsets for ")
           << getSrcOffsets().size() / rank << " ranks but the grid has "
           << size;
  return success();
}
