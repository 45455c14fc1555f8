//===- LibraryCalls.cpp - GEMMs and convolutions as library calls ---------===//
//
// Implements lowerLibraryCalls, which every backend's conversion runs:
// every GEMM-shaped linalg op on buffers becomes a call of the backend's
// strided GEMM, every convolution a call of its convolution of that kind,
// with the addresses, extents and strides of their operands; a zero pad
// of a convolution's image becomes the call's padding (ConvPadding.cpp).
// The backends differ only in the entry points (LibraryCallEntries).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"
#include "tofu/Conversion/TofuToMPI/RuntimeABI.h"
#include "tofu/Runtime/GemmPlan.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

#define DEBUG_TYPE "tofu-library-calls"

using namespace mlir;
using namespace tofu;

namespace {

int64_t getElementBytes(Type element) {
  return element.getIntOrFloatBitWidth() / 8;
}

Value index(OpBuilder &b, Location loc, int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

/// A buffer as the runtime sees it: the address of its first element, and
/// the size and the stride (elements) of each of its dimensions.
struct BufferView {
  Value address;
  SmallVector<Value> sizes, strides;
};

BufferView getBufferView(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto metadata = memref::ExtractStridedMetadataOp::create(b, loc, buffer);
  Value aligned =
      memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  int64_t elementBytes = type.getElementTypeBitWidth() / 8;
  Value offsetBytes = arith::MulIOp::create(b, loc, metadata.getOffset(),
                                            index(b, loc, elementBytes));
  BufferView view;
  view.address = arith::AddIOp::create(b, loc, aligned, offsetBytes);
  view.sizes.assign(metadata.getSizes().begin(), metadata.getSizes().end());
  view.strides.assign(metadata.getStrides().begin(),
                      metadata.getStrides().end());
  return view;
}

/// One operand of the product as the runtime sees it: the address of its
/// first element, and its strides (elements) per loop of the op (0 for a
/// loop that does not index it).
struct OperandView {
  Value address;
  SmallVector<Value> loopStrides;
  /// Size of the memref dimension that each loop indexes, or null.
  SmallVector<Value> loopSizes;
  /// The same as the memref type knows them (ShapedType::kDynamic when it
  /// does not).
  SmallVector<int64_t> staticStrides, staticSizes;
};

OperandView getOperandView(OpBuilder &b, Location loc, Value memref,
                           AffineMap map) {
  BufferView buffer = getBufferView(b, loc, memref);
  OperandView view;
  view.address = buffer.address;
  Value zero = index(b, loc, 0);
  view.loopStrides.assign(map.getNumDims(), zero);
  view.loopSizes.assign(map.getNumDims(), Value());
  view.staticStrides.assign(map.getNumDims(), ShapedType::kDynamic);
  view.staticSizes.assign(map.getNumDims(), ShapedType::kDynamic);
  auto type = cast<MemRefType>(memref.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  bool strided = succeeded(type.getStridesAndOffset(strides, offset));
  for (auto [pos, expr] : llvm::enumerate(map.getResults())) {
    unsigned loop = cast<AffineDimExpr>(expr).getPosition();
    view.loopStrides[loop] = buffer.strides[pos];
    view.loopSizes[loop] = buffer.sizes[pos];
    if (strided)
      view.staticStrides[loop] = strides[pos];
    view.staticSizes[loop] = type.getDimSize(pos);
  }
  return view;
}

/// Whether the op right before `op` (skipping ops without memory effects)
/// fills `buffer` with +0.0, and returns it.
linalg::FillOp getZeroFillBefore(Operation *op, Value buffer) {
  for (Operation *prev = op->getPrevNode(); prev; prev = prev->getPrevNode()) {
    if (auto fill = dyn_cast<linalg::FillOp>(prev)) {
      if (fill.getDpsInits()[0] != buffer || !fill.hasPureBufferSemantics())
        return nullptr;
      FloatAttr value;
      if (!matchPattern(fill.getInputs()[0], m_Constant(&value)))
        return nullptr;
      return value.getValue().isPosZero() ? fill : nullptr;
    }
    if (!isPure(prev))
      return nullptr;
  }
  return nullptr;
}

/// The beta of a library call that writes `buffer` in place of `op`: 0
/// when a zero fill of `buffer` comes right before `op` (the fill is then
/// erased), 1 otherwise.
float takeZeroFillBefore(Operation *op, Value buffer) {
  linalg::FillOp fill = getZeroFillBefore(op, buffer);
  if (!fill)
    return 1.0f;
  fill.erase();
  return 0.0f;
}

/// Declares `name` and calls it with `args` in place of `op`, tagged with
/// the library and the op's FLOPs for the backends' reports.
void createLibraryCall(OpBuilder &b, ModuleOp module, linalg::LinalgOp op,
                       StringRef name, StringRef library,
                       ArrayRef<Value> args) {
  func::FuncOp callee =
      declareRuntimeFunction(module, name, ValueRange(args).getTypes(), {});
  auto call = func::CallOp::create(b, op.getLoc(), callee, args);
  call->setAttr(kLibraryAttr, b.getStringAttr(library));
  if (std::optional<int64_t> flops = getMultiplyAccumulateFlops(op))
    call->setAttr("tofu.flops", b.getI64IntegerAttr(*flops));
}

} // namespace

/// One M, N or K group of a product as one dimension of the call: its
/// extent and, per operand that holds it, its stride (that of the group's
/// innermost loop), each also as a constant where the types fix it
/// (ShapedType::kDynamic where they do not).
struct GroupDim {
  Value size;
  int64_t staticSize = 1;
  SmallVector<Value, 2> strides;
  SmallVector<int64_t, 2> staticStrides;
};

/// Folds `loops` into one GroupDim. The group is one dimension of an
/// operand when each of its loops strides over the next one's whole
/// extent; `conditions` gets each such equality that the buffers' static
/// strides do not settle. Returns false when one of them is statically
/// false.
static bool foldGroup(OpBuilder &b, Location loc, ArrayRef<unsigned> loops,
                      ArrayRef<const OperandView *> holders, GroupDim &group,
                      SmallVector<Value> &conditions) {
  const OperandView &first = *holders.front();
  group.size = first.loopSizes[loops.front()];
  for (unsigned loop : loops.drop_front())
    group.size =
        arith::MulIOp::create(b, loc, group.size, first.loopSizes[loop]);
  for (unsigned loop : loops) {
    int64_t extent = first.staticSizes[loop];
    if (ShapedType::isDynamic(extent) ||
        ShapedType::isDynamic(group.staticSize) ||
        llvm::MulOverflow(group.staticSize, extent, group.staticSize))
      group.staticSize = ShapedType::kDynamic;
  }
  for (const OperandView *view : holders) {
    group.strides.push_back(view->loopStrides[loops.back()]);
    group.staticStrides.push_back(view->staticStrides[loops.back()]);
    for (auto [outer, inner] :
         llvm::zip(loops.drop_back(), loops.drop_front())) {
      int64_t stride = view->staticStrides[inner];
      int64_t extent = view->staticSizes[inner];
      int64_t have = view->staticStrides[outer];
      if (!ShapedType::isDynamic(stride) && !ShapedType::isDynamic(extent) &&
          !ShapedType::isDynamic(have)) {
        int64_t want;
        if (llvm::MulOverflow(stride, extent, want) || have != want)
          return false;
        continue;
      }
      Value want = arith::MulIOp::create(b, loc, view->loopStrides[inner],
                                         view->loopSizes[inner]);
      conditions.push_back(arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, view->loopStrides[outer], want));
    }
  }
  return true;
}

/// One operand as the call sees it: a rows x cols matrix with a row and a
/// column stride.
struct CallOperand {
  const GroupDim &rows, &cols;
  unsigned rowHolder, colHolder;

  Value rowStride() const { return rows.strides[rowHolder]; }
  Value colStride() const { return cols.strides[colHolder]; }
};

/// Whether the runtime's GEMM plan takes the operand (gpu::describeOperand:
/// one dimension of unit stride, the other striding over at least the
/// first's extent; extents that fit in int): true or false when the types
/// settle it, std::nullopt when only the run time can.
static std::optional<bool> isUsableStatically(const CallOperand &x) {
  int64_t rows = x.rows.staticSize, cols = x.cols.staticSize;
  int64_t rs = x.rows.staticStrides[x.rowHolder];
  int64_t cs = x.cols.staticStrides[x.colHolder];
  if (llvm::any_of(std::initializer_list<int64_t>{rows, cols, rs, cs},
                   ShapedType::isDynamic))
    return std::nullopt;
  if (rows > INT_MAX || cols > INT_MAX)
    return false;
  gpu::StridedMatrix matrix;
  matrix.rows = rows, matrix.cols = cols, matrix.row = rs, matrix.col = cs;
  gpu::BlasOperand described;
  return gpu::describeOperand(matrix, described);
}

/// The same test on the values at run time (the extents are not checked
/// against INT_MAX there: the runtime refuses those calls).
static Value isUsableAtRunTime(OpBuilder &b, Location loc,
                               const CallOperand &x) {
  Value one = index(b, loc, 1);
  Value rows = arith::MaxSIOp::create(b, loc, x.rows.size, one);
  Value cols = arith::MaxSIOp::create(b, loc, x.cols.size, one);
  auto cmp = [&](arith::CmpIPredicate p, Value l, Value r) -> Value {
    return arith::CmpIOp::create(b, loc, p, l, r);
  };
  auto any = [&](Value l, Value r) -> Value {
    return arith::OrIOp::create(b, loc, l, r);
  };
  auto all = [&](Value l, Value r) -> Value {
    return arith::AndIOp::create(b, loc, l, r);
  };
  using P = arith::CmpIPredicate;
  Value oneRow = cmp(P::eq, rows, one), oneCol = cmp(P::eq, cols, one);
  Value columnMajor = all(any(cmp(P::eq, x.rowStride(), one), oneRow),
                          any(oneCol, cmp(P::sge, x.colStride(), rows)));
  Value rowMajor = all(any(cmp(P::eq, x.colStride(), one), oneCol),
                       any(oneRow, cmp(P::sge, x.rowStride(), cols)));
  return any(columnMajor, rowMajor);
}

/// Replaces `op` by a call of the runtime's GEMM. A product whose grouped
/// loops the buffers' strides do not make one dimension each stays as it
/// is (generated loops); where only the strides at run time can tell, the
/// call runs under that condition and the op, with its zero fill, is the
/// other branch.
static void lowerGemm(ModuleOp module, linalg::LinalgOp op,
                      const GemmMatch &match, StringRef entry,
                      StringRef library, StringRef pass) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  Value a = op.getDpsInputOperand(match.lhsInput)->get();
  Value bb = op.getDpsInputOperand(match.rhsInput)->get();
  Value c = op.getDpsInitOperand(0)->get();

  OperandView va = getOperandView(b, loc, a, maps[match.lhsInput]);
  OperandView vb = getOperandView(b, loc, bb, maps[match.rhsInput]);
  OperandView vc = getOperandView(b, loc, c, maps[2]);

  // m, n, k and their strides: C (m, n), A (m, k), B (k, n); the extents
  // of m and n are C's, that of k is A's.
  GroupDim gm, gn, gk;
  SmallVector<Value> conditions;
  if (!foldGroup(b, loc, match.mLoops, {&vc, &va}, gm, conditions) ||
      !foldGroup(b, loc, match.nLoops, {&vc, &vb}, gn, conditions) ||
      !foldGroup(b, loc, match.kLoops, {&va, &vb}, gk, conditions)) {
    LLVM_DEBUG(llvm::dbgs() << pass << ": " << op->getName()
                            << " stays loops: a group is not contiguous\n");
    return;
  }
  // Each operand must be one the runtime's plan takes: settled by the
  // types, or checked at run time with the groups, and where the operand's
  // innermost dimension is a batch loop (a contiguous buffer then has no
  // unit-stride matrix dimension: `ikb,kjb->bij` on function arguments,
  // whose strides are known only at run time).
  auto batchInnermost = [&](AffineMap map) {
    return map.getNumResults() > 0 &&
           llvm::is_contained(
               match.batchLoops,
               cast<AffineDimExpr>(map.getResults().back()).getPosition());
  };
  AffineMap operandMaps[] = {maps[match.lhsInput], maps[match.rhsInput],
                             maps[2]};
  CallOperand operands[] = {CallOperand{gm, gk, 1, 0},
                            CallOperand{gk, gn, 1, 1},
                            CallOperand{gm, gn, 0, 0}};
  std::optional<bool> usable[3];
  bool checked = !conditions.empty();
  for (unsigned i = 0; i < 3; ++i) {
    usable[i] = isUsableStatically(operands[i]);
    if (usable[i] == false) {
      LLVM_DEBUG(llvm::dbgs() << pass << ": " << op->getName()
                              << " stays loops: no BLAS operand\n");
      return;
    }
    checked |= !usable[i] && batchInnermost(operandMaps[i]);
  }
  for (unsigned i = 0; i < 3; ++i)
    if (!usable[i] && checked)
      conditions.push_back(isUsableAtRunTime(b, loc, operands[i]));
  Value m = gm.size, n = gn.size, k = gk.size;
  linalg::FillOp fill = getZeroFillBefore(op, c);
  // The first iteration of the accumulation loops overwrites C in place of
  // the fill only where there is a first iteration: with an extent that
  // may be 0 the fill stays (and every call adds into C).
  if (llvm::any_of(match.accumulateLoops, [&](unsigned loop) {
        int64_t extent = va.staticSizes[loop];
        return ShapedType::isDynamic(extent) || extent == 0;
      }))
    fill = nullptr;
  float beta = fill ? 0.0f : 1.0f;
  if (!conditions.empty()) {
    Value all = conditions.front();
    for (Value cond : ArrayRef<Value>(conditions).drop_front())
      all = arith::AndIOp::create(b, loc, all, cond);
    auto ifOp = scf::IfOp::create(b, loc, all, /*withElseRegion=*/true);
    if (fill) {
      fill->moveBefore(ifOp.elseBlock()->getTerminator());
      fill->setAttr(kLibraryFallbackAttr, b.getUnitAttr());
    }
    op->moveBefore(ifOp.elseBlock()->getTerminator());
    op->setAttr(kLibraryFallbackAttr, b.getUnitAttr());
    b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  } else if (fill) {
    fill.erase();
  }

  Value one = index(b, loc, 1);
  Value batch = one;
  Value zero = index(b, loc, 0);
  Value aBatch = zero, bBatch = zero, cBatch = zero;
  ArrayRef<unsigned> outer = match.batchLoops;
  if (!outer.empty()) {
    unsigned inner = outer.back();
    outer = outer.drop_back();
    batch = vc.loopSizes[inner];
    aBatch = va.loopStrides[inner];
    bBatch = vb.loopStrides[inner];
    cBatch = vc.loopStrides[inner];
  }

  // Accumulation loops, then outer batch loops: one (strided-batched)
  // call per iteration. The accumulation loops hold neither C nor its
  // extents: their calls add into the same C (stride 0), all but the
  // first where C starts from the dropped zero fill.
  Value pa = va.address, pb = vb.address, pc = vc.address;
  Value bytes = index(b, loc, getElementBytes(match.elementType));
  Value first;
  auto loopOver = [&](Value extent, unsigned loop) {
    auto forOp = scf::ForOp::create(b, loc, zero, extent, one);
    b.setInsertionPointToStart(forOp.getBody());
    Value iv = forOp.getInductionVar();
    auto advance = [&](Value base, Value stride) {
      Value elements = arith::MulIOp::create(b, loc, iv, stride);
      Value offset = arith::MulIOp::create(b, loc, elements, bytes);
      return arith::AddIOp::create(b, loc, base, offset).getResult();
    };
    pa = advance(pa, va.loopStrides[loop]);
    pb = advance(pb, vb.loopStrides[loop]);
    pc = advance(pc, vc.loopStrides[loop]);
    return iv;
  };
  for (unsigned loop : match.accumulateLoops) {
    Value iv = loopOver(va.loopSizes[loop], loop);
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, iv, zero);
    first = first ? arith::AndIOp::create(b, loc, first, isFirst).getResult()
                  : isFirst;
  }
  for (unsigned loop : outer)
    loopOver(vc.loopSizes[loop], loop);

  SmallVector<Value> args{batch,
                          m,
                          n,
                          k,
                          pa,
                          gm.strides[1],
                          gk.strides[0],
                          aBatch,
                          pb,
                          gk.strides[1],
                          gn.strides[1],
                          bBatch,
                          pc,
                          gm.strides[0],
                          gn.strides[0],
                          cBatch};
  Value betaValue = arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                   llvm::APFloat(beta));
  if (first && beta != 1.0f)
    betaValue = arith::SelectOp::create(
        b, loc, first, betaValue,
        arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                       llvm::APFloat(1.0f)));
  args.push_back(betaValue);
  createLibraryCall(b, module, op, entry, library, args);
  LLVM_DEBUG(llvm::dbgs() << pass << ": " << op->getName() << " -> " << entry
                          << " beta " << beta
                          << (conditions.empty() ? "" : " (checked strides)")
                          << "\n");
  if (conditions.empty())
    op->erase();
}

/// Replaces `op` by a call of the runtime's convolution of its kind, on
/// `image` with its padding when given. A 1-D convolution is passed as a
/// 2-D one of height 1.
static void lowerConvolution(ModuleOp module, linalg::LinalgOp op,
                             const conv::ConvPattern &pattern,
                             const ConvPadding::Image *image, StringRef entry,
                             StringRef library, StringRef pass) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  Value written = op->getOperand(2);
  float beta = takeZeroFillBefore(op, written);
  unsigned spatial = pattern.getSpatialRank();
  SmallVector<int64_t> padding(spatial, 0);
  BufferView x;
  if (image) {
    // The unpadded image, or the interior of the padded one.
    x = getBufferView(b, loc, image->buffer);
    padding = image->padding;
    for (unsigned d = 0; d < spatial; ++d) {
      Value &size = x.sizes[2 + d];
      Value stride = x.strides[2 + d];
      if (!image->extents.empty())
        size = index(b, loc, image->extents[d]);
      Value elements = arith::MulIOp::create(
          b, loc, stride, index(b, loc, image->offsets[d]));
      Value bytes = arith::MulIOp::create(
          b, loc, elements,
          index(b, loc, getElementBytes(getLibraryElementType(op))));
      x.address = arith::AddIOp::create(b, loc, x.address, bytes);
    }
  } else {
    x = getBufferView(b, loc, op->getOperand(pattern.image));
  }
  BufferView w = getBufferView(b, loc, op->getOperand(pattern.filter));
  BufferView y = getBufferView(b, loc, op->getOperand(pattern.output));
  if (spatial == 1) {
    // Height 1: its strides are never used (the runtime normalizes them).
    Value one = index(b, loc, 1);
    for (BufferView *view : {&x, &w, &y}) {
      view->sizes.insert(view->sizes.begin() + 2, one);
      view->strides.insert(view->strides.begin() + 2, one);
    }
  }
  bool is2D = spatial == 2;
  Value strideH = index(b, loc, is2D ? pattern.strides.front() : 1);
  Value strideW = index(b, loc, pattern.strides.back());
  Value padH = index(b, loc, is2D ? padding.front() : 0);
  Value padW = index(b, loc, padding.back());
  // The order of TOFU_CONV2D_PARAMS.
  SmallVector<Value> args{x.sizes[0], x.sizes[1], x.sizes[2], x.sizes[3],
                          w.sizes[0], w.sizes[2], w.sizes[3], y.sizes[2],
                          y.sizes[3], strideH,    strideW,    padH,
                          padW};
  for (BufferView *view : {&x, &w, &y}) {
    args.push_back(view->address);
    llvm::append_range(args, view->strides);
  }
  args.push_back(arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                llvm::APFloat(beta)));
  createLibraryCall(b, module, op, entry, library, args);
  LLVM_DEBUG(llvm::dbgs() << pass << ": " << op->getName() << " -> " << entry
                          << " beta " << beta << " padding " << padding.back()
                          << "\n");
  op->erase();
}

LogicalResult
tofu::lowerLibraryCalls(ModuleOp module, StringRef pass,
                        llvm::function_ref<LibraryCallEntries(Type)> entriesFor,
                        bool foldStridedDataGradients) {
  std::vector<std::tuple<linalg::LinalgOp, GemmMatch, LibraryCallEntries>>
      gemms;
  SmallVector<std::pair<linalg::LinalgOp, conv::ConvPattern>> convolutions;
  SmallVector<LibraryCallEntries> convEntries;
  WalkResult result = module.walk([&](linalg::LinalgOp op) {
    std::optional<GemmMatch> gemm = matchGemm(op);
    std::string whyNot;
    std::optional<conv::ConvPattern> convolution =
        gemm ? std::nullopt : matchConvolution(op, &whyNot);
    Type element = getLibraryElementType(op);
    LibraryCallEntries entries =
        element ? entriesFor(element) : LibraryCallEntries();
    bool hasConvEntry = convolution && !entries.conv[0].empty();
    if (convolution && !hasConvEntry && !entries.noConvReason.empty())
      whyNot = entries.noConvReason.str();
    if (!whyNot.empty() &&
        (!entries.conv[0].empty() || !entries.noConvReason.empty()))
      op->emitRemark(pass) << ": not a library call (" << whyNot
                           << "); the convolution stays generated code";
    if ((!gemm || entries.gemm.empty()) && !hasConvEntry)
      return WalkResult::advance();
    if (!op.hasPureBufferSemantics()) {
      op->emitOpError(pass)
          << ": a " << (gemm ? "matrix product" : "convolution")
          << " on tensors; bufferize before the library calls";
      return WalkResult::interrupt();
    }
    if (gemm) {
      gemms.emplace_back(op, *gemm, entries);
    } else {
      convolutions.emplace_back(op, *convolution);
      convEntries.push_back(entries);
    }
    return WalkResult::advance();
  });
  if (result.wasInterrupted())
    return failure();
  // Pads are decided before anything is rewritten: the check that nothing
  // writes an image between its pad and its convolutions needs the linalg
  // ops' memory effects, which the library calls do not declare.
  ConvPadding padding(pass, foldStridedDataGradients);
  padding.analyze(convolutions);
  for (auto &[op, match, entries] : gemms)
    lowerGemm(module, op, match, entries.gemm, entries.gemmLibrary, pass);
  for (auto [i, entry] : llvm::enumerate(convolutions)) {
    auto &[op, pattern] = entry;
    const LibraryCallEntries &entries = convEntries[i];
    lowerConvolution(module, op, pattern, padding.lookup(op),
                     entries.conv[static_cast<int>(pattern.kind)],
                     entries.convLibrary, pass);
  }
  padding.eraseFoldedPads();
  return success();
}

bool tofu::isProductOp(linalg::LinalgOp op) {
  return matchGemm(op) || matchConvolution(op);
}
