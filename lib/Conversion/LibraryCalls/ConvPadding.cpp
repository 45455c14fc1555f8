//===- ConvPadding.cpp - Zero pads as cuDNN padding -----------------------===//
//
// Finds the zero pads around the convolutions that become library calls
// (cuDNN, oneDNN), on buffers. A `tensor.pad` of the image with
// 0.0 becomes, after bufferization, a buffer filled with zeros into whose
// interior the image is copied; the forward convolution and the filter
// gradient read that buffer. When every reader is such a convolution and
// conv::foldZeroPad accepts the pad, the calls read the unpadded image
// with cuDNN's padding and the padded buffer, its fill and its copy go
// away. The data gradient of a padded image is computed onto a padded
// buffer of which the step only reads the interior (the slice of
// tofu-autodiff's gradient of the pad); when nothing else reads that
// buffer, the call writes the interior alone, with cuDNN's padding.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/LibraryCalls/LibraryCalls.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tofu-library-calls"

using namespace mlir;
using namespace tofu;

namespace {

/// Whether `v` is the constant +0.0.
bool isPositiveZero(Value v) {
  FloatAttr value;
  return matchPattern(v, m_Constant(&value)) && value.getValue().isPosZero();
}

/// Whether `op` writes +0.0 to every element of `buffer` and nothing else:
/// a linalg.fill, or the linalg.map without inputs that bufferization
/// makes of a tensor.pad's constant region.
bool isZeroFillOf(Operation *op, Value buffer) {
  if (auto fill = dyn_cast<linalg::FillOp>(op))
    return fill.getDpsInits()[0] == buffer && isPositiveZero(fill.value());
  auto map = dyn_cast<linalg::MapOp>(op);
  if (!map || !map.getInputs().empty() || map.getInit() != buffer)
    return false;
  auto yield = dyn_cast<linalg::YieldOp>(map.getMapper().front().back());
  return yield && yield->getNumOperands() == 1 &&
         isPositiveZero(yield->getOperand(0));
}

/// The buffer that `v` is a view of, through view-like ops.
Value getRootBuffer(Value v) {
  while (auto view = v.getDefiningOp<ViewLikeOpInterface>())
    v = view.getViewSource();
  return v;
}

/// Whether a write to `written` may change `root` (a root buffer): an
/// allocation of this function is only reached through views of itself;
/// anything else (an argument) may alias any buffer that is not such an
/// allocation.
bool mayAlias(Value written, Value root) {
  Value other = getRootBuffer(written);
  if (other == root)
    return true;
  auto isAllocation = [](Value v) {
    return v.getDefiningOp<memref::AllocOp>() ||
           v.getDefiningOp<memref::AllocaOp>();
  };
  return !isAllocation(root) && !isAllocation(other);
}

/// Appends to `written` the buffers that `op` and the ops nested in it may
/// write or free; returns false when an effect is unknown. A call tagged
/// with kWritesOperandAttr writes that operand alone.
bool getWrittenBuffers(Operation *op, SmallVectorImpl<Value> &written) {
  WalkResult result = op->walk([&](Operation *nested) {
    if (auto call = dyn_cast<func::CallOp>(nested)) {
      auto index = call->getAttrOfType<IntegerAttr>(kWritesOperandAttr);
      if (!index || index.getInt() < 0 ||
          index.getInt() >= int64_t(call->getNumOperands()))
        return WalkResult::interrupt();
      written.push_back(call->getOperand(index.getInt()));
      return WalkResult::advance();
    }
    // An op with recursive effects (its nested ops are walked too) may
    // also have effects of its own (linalg.generic writes its outputs).
    auto effects = dyn_cast<MemoryEffectOpInterface>(nested);
    if (!effects)
      return nested->hasTrait<OpTrait::HasRecursiveMemoryEffects>()
                 ? WalkResult::advance()
                 : WalkResult::interrupt();
    SmallVector<MemoryEffects::EffectInstance> instances;
    effects.getEffects(instances);
    for (const MemoryEffects::EffectInstance &effect : instances) {
      if (!isa<MemoryEffects::Write, MemoryEffects::Free>(effect.getEffect()))
        continue;
      Value value = effect.getValue();
      if (!value || !isa<BaseMemRefType>(value.getType()))
        return WalkResult::interrupt();
      written.push_back(value);
    }
    return WalkResult::advance();
  });
  return !result.wasInterrupted();
}

/// Whether an op strictly between `from` and `to` (same block) may write
/// or free `buffer`. Ops with unknown effects may. A `memref.dealloc` of
/// `buffer` itself (tofu-early-dealloc frees the image right after its
/// last use, the copy) does not count when `frees` is given: it is
/// appended there, for the caller to move after the new last use.
bool isWrittenBetween(Operation *from, Operation *to, Value buffer,
                      SmallVectorImpl<Operation *> *frees = nullptr) {
  Value root = getRootBuffer(buffer);
  for (Operation *op = from->getNextNode(); op && op != to;
       op = op->getNextNode()) {
    if (auto dealloc = dyn_cast<memref::DeallocOp>(op);
        dealloc && frees && getRootBuffer(dealloc.getMemref()) == root) {
      if (!llvm::is_contained(*frees, op))
        frees->push_back(op);
      continue;
    }
    SmallVector<Value> written;
    if (!getWrittenBuffers(op, written))
      return true;
    if (llvm::any_of(written, [&](Value v) { return mayAlias(v, root); }))
      return true;
  }
  return false;
}

/// The static offsets and sizes of a unit-stride subview of `source`, as
/// the low pad, the extents and the high pad of the padded buffer.
struct Window {
  std::vector<int64_t> low, extents, high;
};

std::optional<Window> getWindow(memref::SubViewOp subview) {
  auto sourceType = cast<MemRefType>(subview.getSource().getType());
  if (!sourceType.hasStaticShape() ||
      subview.getType().getRank() != sourceType.getRank())
    return std::nullopt;
  ArrayRef<int64_t> offsets = subview.getStaticOffsets();
  ArrayRef<int64_t> sizes = subview.getStaticSizes();
  ArrayRef<int64_t> strides = subview.getStaticStrides();
  Window window;
  for (int64_t d = 0, e = sourceType.getRank(); d < e; ++d) {
    if (ShapedType::isDynamic(offsets[d]) || ShapedType::isDynamic(sizes[d]) ||
        strides[d] != 1)
      return std::nullopt;
    window.low.push_back(offsets[d]);
    window.extents.push_back(sizes[d]);
    window.high.push_back(sourceType.getDimSize(d) - offsets[d] - sizes[d]);
  }
  return window;
}

/// Applies conv::foldZeroPad to the convolution `op` on a padded image
/// whose interior is `window`.
std::optional<std::vector<int64_t>> foldWindow(linalg::LinalgOp op,
                                               const conv::ConvPattern &pattern,
                                               const Window &window,
                                               std::string *whyNot) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  std::vector<int64_t> kernel, output;
  for (unsigned d = 0, e = pattern.getSpatialRank(); d < e; ++d) {
    kernel.push_back(ranges[pattern.kernelLoops[d]]);
    output.push_back(ranges[pattern.outputLoops[d]]);
  }
  return conv::foldZeroPad(pattern, window.low, window.high, window.extents,
                           kernel, output, whyNot);
}

void remarkKept(Operation *op, StringRef pass, StringRef reason) {
  op->emitRemark(pass) << ": the zero pad stays a copy (" << reason << ")";
}

} // namespace

void ConvPadding::analyze(
    ArrayRef<std::pair<linalg::LinalgOp, conv::ConvPattern>> convolutions) {
  // Readers of a padded image, grouped by the padded buffer.
  llvm::MapVector<Value, SmallVector<unsigned>> readers;
  for (auto [i, entry] : llvm::enumerate(convolutions)) {
    auto &[op, pattern] = entry;
    // torch-mlir pads a grouped convolution's image before it splits the
    // channels into groups: no pad reaches one here.
    if (pattern.grouped)
      continue;
    if (pattern.kind == conv::ConvKind::BackwardData)
      analyzeDataGradient(op, pattern);
    else
      readers[op->getOperand(pattern.image)].push_back(i);
  }
  for (auto &[padded, users] : readers)
    analyzeReaders(padded, convolutions, users);
}

void ConvPadding::analyzeReaders(
    Value padded,
    ArrayRef<std::pair<linalg::LinalgOp, conv::ConvPattern>> convolutions,
    ArrayRef<unsigned> readers) {
  auto alloc = padded.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  // The pad: a zero fill, a subview and a copy into it; besides them only
  // the convolutions and deallocations may use the buffer.
  Operation *zeroFill = nullptr;
  memref::SubViewOp subview;
  SmallVector<Operation *> deallocs;
  bool other = false;
  for (Operation *user : padded.getUsers()) {
    if (isa<memref::DeallocOp>(user))
      deallocs.push_back(user);
    else if (!zeroFill && isZeroFillOf(user, padded))
      zeroFill = user;
    else if (auto view = dyn_cast<memref::SubViewOp>(user); view && !subview)
      subview = view;
    else if (llvm::none_of(readers, [&](unsigned i) {
               return convolutions[i].first == user;
             }))
      other = true;
  }
  if (!zeroFill || !subview || !subview->hasOneUse())
    return;
  auto copy = dyn_cast<memref::CopyOp>(*subview->user_begin());
  if (!copy || copy.getTarget() != subview.getResult())
    return;
  Operation *first = convolutions[readers.front()].first;
  if (other) {
    remarkKept(first, pass, "the padded image has other readers");
    return;
  }
  std::optional<Window> window = getWindow(subview);
  if (!window) {
    remarkKept(first, pass, "the pad is not static");
    return;
  }
  // The convolutions read the source instead of the copy, so they must
  // come after the copy and nothing in between may change the source.
  Block *block = copy->getBlock();
  if (!zeroFill->isBeforeInBlock(copy) || !subview->isBeforeInBlock(copy))
    return;
  SmallVector<std::pair<unsigned, std::vector<int64_t>>> folds;
  SmallVector<Operation *> sourceFrees;
  Operation *lastReader = nullptr;
  for (unsigned i : readers) {
    auto &[op, pattern] = convolutions[i];
    if (llvm::count(op->getOperands(), padded) != 1) {
      remarkKept(op, pass, "the padded image is more than the image");
      return;
    }
    if (op->getBlock() != block || !copy->isBeforeInBlock(op)) {
      remarkKept(op, pass, "the convolution is not after the pad in its block");
      return;
    }
    std::string whyNot;
    std::optional<std::vector<int64_t>> padding =
        foldWindow(op, pattern, *window, &whyNot);
    if (!padding) {
      remarkKept(op, pass, whyNot);
      return;
    }
    if (isWrittenBetween(copy, op, copy.getSource(), &sourceFrees)) {
      remarkKept(op, pass, "the image may change between the pad and the "
                     "convolution");
      return;
    }
    folds.emplace_back(i, std::move(*padding));
    if (!lastReader || lastReader->isBeforeInBlock(op))
      lastReader = op;
  }
  // The convolutions now read the image: it is freed after the last one.
  for (Operation *free : sourceFrees)
    if (free->isBeforeInBlock(lastReader))
      free->moveAfter(lastReader);
  for (auto &[i, padding] : folds) {
    Image &image = images[convolutions[i].first];
    image.buffer = copy.getSource();
    image.offsets.assign(padding.size(), 0);
    image.padding.assign(padding.begin(), padding.end());
  }
  LLVM_DEBUG(llvm::dbgs() << "tofu-library-calls: folded a zero pad into "
                          << folds.size() << " convolutions\n");
  deadOps.push_back(copy);
  deadOps.push_back(subview);
  deadOps.push_back(zeroFill);
  llvm::append_range(deadOps, deallocs);
  deadOps.push_back(alloc);
}

void ConvPadding::analyzeDataGradient(linalg::LinalgOp op,
                                      const conv::ConvPattern &pattern) {
  Value padded = op->getOperand(pattern.image);
  auto alloc = padded.getDefiningOp<memref::AllocOp>();
  if (!alloc)
    return;
  // Besides the convolution, fills and deallocations, only subviews of one
  // and the same window may use the buffer: nothing reads the border.
  std::optional<Window> window;
  bool sliced = false;
  for (Operation *user : padded.getUsers()) {
    if (user == op || isa<memref::DeallocOp, linalg::FillOp>(user))
      continue;
    auto subview = dyn_cast<memref::SubViewOp>(user);
    if (!subview)
      return;
    std::optional<Window> w = getWindow(subview);
    if (!w ||
        (window && (w->low != window->low || w->extents != window->extents)))
      return;
    window = w;
    sliced = true;
  }
  if (!sliced)
    return;
  if (!foldStridedDataGradients &&
      llvm::any_of(pattern.strides, [](int64_t s) { return s != 1; })) {
    op->emitRemark(pass) << ": the strided data gradient writes a packed "
                            "image, copied into its padded one";
    return;
  }
  std::string whyNot;
  std::optional<std::vector<int64_t>> padding =
      foldWindow(op, pattern, *window, &whyNot);
  if (!padding) {
    op->emitRemark(pass) << ": the data gradient stays on the whole padded "
                             "image ("
                         << whyNot << ")";
    return;
  }
  Image &image = images[op];
  image.buffer = padded;
  unsigned spatial = pattern.getSpatialRank();
  image.offsets.assign(window->low.end() - spatial, window->low.end());
  image.extents.assign(window->extents.end() - spatial, window->extents.end());
  image.padding.assign(padding->begin(), padding->end());
  LLVM_DEBUG(llvm::dbgs() << "tofu-library-calls: the data gradient writes "
                             "the interior of its padded image\n");
}

const ConvPadding::Image *ConvPadding::lookup(Operation *op) const {
  auto it = images.find(op);
  return it == images.end() ? nullptr : &it->second;
}

void ConvPadding::eraseFoldedPads() {
  for (Operation *op : deadOps)
    op->erase();
  deadOps.clear();
}
