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
func::CallOp createLibraryCall(OpBuilder &b, ModuleOp module,
                               linalg::LinalgOp op, StringRef name,
                               StringRef library, ArrayRef<Value> args) {
  func::FuncOp callee =
      declareRuntimeFunction(module, name, ValueRange(args).getTypes(), {});
  auto call = func::CallOp::create(b, op.getLoc(), callee, args);
  call->setAttr(kLibraryAttr, b.getStringAttr(library));
  if (std::optional<int64_t> flops = getMultiplyAccumulateFlops(op))
    call->setAttr("tofu.flops", b.getI64IntegerAttr(*flops));
  return call;
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

/// A product's operands A, B and C as the call sees them: the views, the M,
/// N and K groups, and per operand whether its strides rule the call out
/// (`fails`) or the conditions at run time under which they allow it.
struct ProductOperands {
  OperandView views[3];
  GroupDim gm, gn, gk;
  bool fails[3] = {false, false, false};
  SmallVector<Value> conditions[3];
};

/// Folds `loops` into one GroupDim of the operands `holders` (0 A, 1 B,
/// 2 C). The group is one dimension of an operand when each of its loops
/// strides over the next one's whole extent: an operand gets each such
/// equality that its static strides do not settle as a condition, and
/// fails when one of them is statically false.
static void foldGroup(OpBuilder &b, Location loc, ArrayRef<unsigned> loops,
                      ArrayRef<unsigned> holders, ProductOperands &operands,
                      GroupDim &group) {
  const OperandView &first = operands.views[holders.front()];
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
  for (unsigned holder : holders) {
    const OperandView &view = operands.views[holder];
    group.strides.push_back(view.loopStrides[loops.back()]);
    group.staticStrides.push_back(view.staticStrides[loops.back()]);
    for (auto [outer, inner] :
         llvm::zip(loops.drop_back(), loops.drop_front())) {
      int64_t stride = view.staticStrides[inner];
      int64_t extent = view.staticSizes[inner];
      int64_t have = view.staticStrides[outer];
      if (!ShapedType::isDynamic(stride) && !ShapedType::isDynamic(extent) &&
          !ShapedType::isDynamic(have)) {
        int64_t want;
        if (llvm::MulOverflow(stride, extent, want) || have != want)
          operands.fails[holder] = true;
        continue;
      }
      Value want = arith::MulIOp::create(b, loc, view.loopStrides[inner],
                                         view.loopSizes[inner]);
      operands.conditions[holder].push_back(arith::CmpIOp::create(
          b, loc, arith::CmpIPredicate::eq, view.loopStrides[outer], want));
    }
  }
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

/// The operands `values` (A, B, C) of `match` with `maps` as the call
/// would see them. Each operand must be one the runtime's plan takes:
/// settled by the types, or checked at run time with the groups, and
/// where the operand's innermost dimension is a batch loop (a contiguous
/// buffer then has no unit-stride matrix dimension: `ikb,kjb->bij` on
/// function arguments, whose strides are known only at run time).
static ProductOperands describeOperands(OpBuilder &b, Location loc,
                                        const GemmMatch &match,
                                        ArrayRef<AffineMap> maps,
                                        ArrayRef<Value> values) {
  ProductOperands p;
  for (unsigned i = 0; i < 3; ++i)
    p.views[i] = getOperandView(b, loc, values[i], maps[i]);
  // m, n, k and their strides: C (m, n), A (m, k), B (k, n); the extents
  // of m and n are C's, that of k is A's.
  foldGroup(b, loc, match.mLoops, {2, 0}, p, p.gm);
  foldGroup(b, loc, match.nLoops, {2, 1}, p, p.gn);
  foldGroup(b, loc, match.kLoops, {0, 1}, p, p.gk);
  auto batchInnermost = [&](AffineMap map) {
    std::optional<unsigned> innermost = getInnermostLoop(map);
    return innermost && llvm::is_contained(match.batchLoops, *innermost);
  };
  CallOperand operands[] = {CallOperand{p.gm, p.gk, 1, 0},
                            CallOperand{p.gk, p.gn, 1, 1},
                            CallOperand{p.gm, p.gn, 0, 0}};
  std::optional<bool> usable[3];
  bool checked = llvm::any_of(
      p.conditions, [](const SmallVector<Value> &c) { return !c.empty(); });
  for (unsigned i = 0; i < 3; ++i) {
    usable[i] = isUsableStatically(operands[i]);
    if (usable[i] == false)
      p.fails[i] = true;
    checked |= !usable[i] && batchInnermost(maps[i]);
  }
  for (unsigned i = 0; i < 3; ++i)
    if (!usable[i] && checked && !p.fails[i])
      p.conditions[i].push_back(isUsableAtRunTime(b, loc, operands[i]));
  return p;
}

/// Whether a contiguous copy of input `input` (0 A, 1 B) of `match` makes
/// it an operand the call takes: its shape is static, so that the copy's
/// strides are too, its two matrix groups (`rows`, `cols`) have extents
/// that fit in int, and its innermost dimension is a loop of one of them
/// (it gets the unit stride), which holds every group adjacent and in
/// order as matchGemm requires.
static bool copyMakesOperand(Value input, AffineMap map, const GemmMatch &match,
                             const GroupDim &rows, const GroupDim &cols) {
  std::optional<unsigned> innermost = getInnermostLoop(map);
  if (!cast<MemRefType>(input.getType()).hasStaticShape() || !innermost)
    return false;
  for (int64_t extent : {rows.staticSize, cols.staticSize})
    if (ShapedType::isDynamic(extent) || extent > INT_MAX)
      return false;
  return !llvm::is_contained(match.batchLoops, *innermost) &&
         !llvm::is_contained(match.accumulateLoops, *innermost);
}

/// Emits the call of `entry` for `match` on `p` at `b`'s insertion point:
/// accumulation loops, then outer batch loops, one (strided-batched) call
/// per iteration. The accumulation loops hold neither C nor its extents:
/// their calls add into the same C (stride 0), all but the first where C
/// starts from a dropped zero fill (`beta` 0).
static func::CallOp emitGemmCall(OpBuilder &b, ModuleOp module,
                                 linalg::LinalgOp op, const GemmMatch &match,
                                 const ProductOperands &p, float beta,
                                 StringRef entry, StringRef library) {
  Location loc = op.getLoc();
  const OperandView &va = p.views[0], &vb = p.views[1], &vc = p.views[2];
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
  OpBuilder::InsertionGuard guard(b);
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

  SmallVector<Value> args{batch, p.gm.size,       p.gn.size,       p.gk.size,
                          pa,    p.gm.strides[1], p.gk.strides[0], aBatch,
                          pb,    p.gk.strides[1], p.gn.strides[1], bBatch,
                          pc,    p.gm.strides[0], p.gn.strides[0], cBatch};
  Value betaValue = arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                                   llvm::APFloat(beta));
  if (first && beta != 1.0f)
    betaValue = arith::SelectOp::create(
        b, loc, first, betaValue,
        arith::ConstantFloatOp::create(b, loc, b.getF32Type(),
                                       llvm::APFloat(1.0f)));
  args.push_back(betaValue);
  return createLibraryCall(b, module, op, entry, library, args);
}

/// An scf.if on the conjunction of `conditions` at `b`, with `b` left at
/// the start of its then-branch.
static scf::IfOp createGuard(OpBuilder &b, Location loc,
                             ArrayRef<Value> conditions) {
  Value all = conditions.front();
  for (Value cond : conditions.drop_front())
    all = arith::AndIOp::create(b, loc, all, cond);
  auto ifOp = scf::IfOp::create(b, loc, all, /*withElseRegion=*/true);
  b.setInsertionPoint(ifOp.thenBlock()->getTerminator());
  return ifOp;
}

/// Replaces `op` by a call of the runtime's GEMM, on its operands as they
/// are where their strides allow it. An input whose strides rule the call
/// out (two loops of one group that are not one dimension of it: a slice
/// of the batch of a product batched over time steps and the batch) is
/// read from a contiguous copy. A product whose output's strides rule it
/// out, or whose such input cannot be copied (a dynamic shape, a batch loop
/// innermost), stays as it is (generated loops). Where only the strides at run
/// time can tell, the call runs under that condition, and the other branch
/// is the call on copies or the op with its zero fill; the reports count
/// the first.
static void lowerGemm(ModuleOp module, linalg::LinalgOp op,
                      const GemmMatch &match, StringRef entry,
                      StringRef library, StringRef pass) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  SmallVector<AffineMap> allMaps = op.getIndexingMapsArray();
  AffineMap maps[] = {allMaps[match.lhsInput], allMaps[match.rhsInput],
                      allMaps[2]};
  Value values[] = {op.getDpsInputOperand(match.lhsInput)->get(),
                    op.getDpsInputOperand(match.rhsInput)->get(),
                    op.getDpsInitOperand(0)->get()};
  ProductOperands given = describeOperands(b, loc, match, maps, values);
  linalg::FillOp fill = getZeroFillBefore(op, values[2]);
  // The first iteration of the accumulation loops overwrites C in place of
  // the fill only where there is a first iteration: with an extent that
  // may be 0 the fill stays (and every call adds into C).
  if (llvm::any_of(match.accumulateLoops, [&](unsigned loop) {
        int64_t extent = given.views[0].staticSizes[loop];
        return ShapedType::isDynamic(extent) || extent == 0;
      }))
    fill = nullptr;
  float beta = fill ? 0.0f : 1.0f;
  bool copyable[2] = {
      copyMakesOperand(values[0], maps[0], match, given.gm, given.gk),
      copyMakesOperand(values[1], maps[1], match, given.gk, given.gn)};
  if (given.fails[2] || (given.fails[0] && !copyable[0]) ||
      (given.fails[1] && !copyable[1])) {
    LLVM_DEBUG(llvm::dbgs() << pass << ": " << op->getName()
                            << " stays loops: no BLAS operand\n");
    return;
  }
  scf::IfOp guard;
  auto conditionsOf = [&](ArrayRef<unsigned> which) {
    SmallVector<Value> all;
    for (unsigned i : which)
      llvm::append_range(all, given.conditions[i]);
    return all;
  };
  // The operands as they are.
  bool called = false;
  if (!given.fails[0] && !given.fails[1]) {
    SmallVector<Value> conditions = conditionsOf({0, 1, 2});
    if (!conditions.empty())
      guard = createGuard(b, loc, conditions);
    emitGemmCall(b, module, op, match, given, beta, entry, library);
    LLVM_DEBUG(llvm::dbgs()
               << pass << ": " << op->getName() << " -> " << entry << " beta "
               << beta << (guard ? " (checked strides)" : "") << "\n");
    called = true;
    if (guard)
      b.setInsertionPoint(guard.elseBlock()->getTerminator());
  }
  // Contiguous copies of the inputs whose strides rule the call out or
  // may: the call on them, under the other operands' conditions.
  bool copy[2];
  for (unsigned i = 0; i < 2; ++i)
    copy[i] = copyable[i] && (given.fails[i] || !given.conditions[i].empty());
  if ((!called || guard) && (copy[0] || copy[1])) {
    SmallVector<unsigned> kept{2};
    for (unsigned i = 0; i < 2; ++i)
      if (!copy[i])
        kept.push_back(i);
    SmallVector<Value> conditions = conditionsOf(kept);
    guard = conditions.empty() ? scf::IfOp() : createGuard(b, loc, conditions);
    Value operands[] = {values[0], values[1], values[2]};
    SmallVector<Operation *> fallbackOps;
    for (unsigned i = 0; i < 2; ++i) {
      if (!copy[i])
        continue;
      auto type = cast<MemRefType>(values[i].getType());
      auto alloc = memref::AllocOp::create(
          b, loc, MemRefType::get(type.getShape(), type.getElementType()));
      auto copyOp = linalg::CopyOp::create(b, loc, ValueRange{values[i]},
                                           ValueRange{alloc.getResult()});
      operands[i] = alloc;
      fallbackOps.push_back(copyOp);
    }
    ProductOperands copies = describeOperands(b, loc, match, maps, operands);
    func::CallOp call =
        emitGemmCall(b, module, op, match, copies, beta, entry, library);
    fallbackOps.push_back(call);
    for (unsigned i = 0; i < 2; ++i)
      if (copy[i])
        memref::DeallocOp::create(b, loc, operands[i]);
    // The reports count one call per product: the one on the operands as
    // they are where there is one.
    if (called)
      for (Operation *fallback : fallbackOps)
        fallback->setAttr(kLibraryFallbackAttr, b.getUnitAttr());
    LLVM_DEBUG(llvm::dbgs()
               << pass << ": " << op->getName() << " -> " << entry << " beta "
               << beta << " on copies"
               << (called ? " where the strides rule it out" : "") << "\n");
    if (guard)
      b.setInsertionPoint(guard.elseBlock()->getTerminator());
  }
  if (!guard) {
    if (fill)
      fill.erase();
    op->erase();
    return;
  }
  // The op, where the operands' strides rule out every call.
  if (fill) {
    fill->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
    fill->setAttr(kLibraryFallbackAttr, b.getUnitAttr());
  }
  op->moveBefore(b.getInsertionBlock(), b.getInsertionPoint());
  op->setAttr(kLibraryFallbackAttr, b.getUnitAttr());
}

/// Whether dimensions `d` and `d` + 1 of the buffer `v` are one dimension
/// (static strides, stride(d) = stride(d + 1) * size(d + 1)): the group
/// and channel dimensions of a grouped convolution's tensors, which its
/// call takes as one.
static bool areMergeable(Value v, unsigned d) {
  auto type = dyn_cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset = 0;
  if (!type || failed(type.getStridesAndOffset(strides, offset)))
    return false;
  int64_t size = type.getDimSize(d + 1);
  return !ShapedType::isDynamic(strides[d]) &&
         !ShapedType::isDynamic(strides[d + 1]) &&
         !ShapedType::isDynamic(size) && strides[d] == strides[d + 1] * size;
}

/// Makes dimensions `d` and `d` + 1 of `view` one (areMergeable).
static void mergeDims(OpBuilder &b, Location loc, BufferView &view,
                      unsigned d) {
  view.sizes[d] =
      arith::MulIOp::create(b, loc, view.sizes[d], view.sizes[d + 1]);
  view.strides[d] = view.strides[d + 1];
  view.sizes.erase(view.sizes.begin() + d + 1);
  view.strides.erase(view.strides.begin() + d + 1);
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
  // A depthwise filter (C, kernel..) is the grouped filter (C, 1, kernel..)
  // of groups = C.
  Value groups = index(b, loc, 1);
  if (pattern.depthwise) {
    groups = x.sizes[1];
    w.sizes.insert(w.sizes.begin() + 1, index(b, loc, 1));
    w.strides.insert(w.strides.begin() + 1, index(b, loc, 1));
  }
  // A grouped one's (N, G, C, ..), (G, F, C, ..) and (N, G, F, ..) are the
  // (N, G * C, ..), (G * F, C, ..) and (N, G * F, ..) of `groups` groups.
  if (pattern.grouped) {
    groups = x.sizes[1];
    mergeDims(b, loc, x, 1);
    mergeDims(b, loc, w, 0);
    mergeDims(b, loc, y, 1);
  }
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
                          w.sizes[0], groups,     w.sizes[2], w.sizes[3],
                          y.sizes[2], y.sizes[3], strideH,    strideW,
                          padH,       padW};
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
    Type element = getLibraryElementType(op);
    LibraryCallEntries entries =
        element ? entriesFor(element) : LibraryCallEntries();
    std::optional<conv::ConvPattern> convolution =
        gemm ? std::nullopt : matchConvolution(op, &whyNot, entries.grouped);
    if (convolution && convolution->grouped &&
        !(areMergeable(op->getOperand(convolution->image), 1) &&
          areMergeable(op->getOperand(convolution->filter), 0) &&
          areMergeable(op->getOperand(convolution->output), 1))) {
      whyNot = "the groups and the channels are not one dimension of the "
               "buffers";
      convolution.reset();
    }
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
  return matchGemm(op) ||
         matchConvolution(op, /*whyNot=*/nullptr, /*allowGroups=*/true);
}
