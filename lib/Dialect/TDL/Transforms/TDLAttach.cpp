//===- TDLAttach.cpp - Attach TDL descriptions to tensor operations -------===//
//
// The tdl-attach pass: gives every tensor operation a `tdl.desc` attribute
// from an existing attribute, a `.tdl` library or its TDLOpInterface, and
// checks it against the operation's shapes.
//
//===----------------------------------------------------------------------===//

#include "tofu/Dialect/TDL/Transforms/Passes.h"

#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"
#include "tofu/Dialect/TDL/Transforms/OpDescription.h"
#include "tofu/TDL/TDLLibrary.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>

#define DEBUG_TYPE "tdl-attach"

namespace tofu {
namespace tdl {
#define GEN_PASS_DEF_TDLATTACH
#include "tofu/Dialect/TDL/Transforms/Passes.h.inc"
} // namespace tdl
} // namespace tofu

using namespace mlir;
using namespace tofu;
using namespace tofu::tdl;

namespace {

/// An opaque description over all operands and captured tensors: no
/// dimension can be cut.
static OpDesc makeOpaqueDescription(Operation *op) {
  SmallVector<Value> inputs = getDescribedInputs(op);
  std::string names, args;
  for (unsigned i = 0; i < inputs.size(); ++i) {
    bool captured = i >= op->getNumOperands();
    std::string access =
        captured ? "cap" + std::to_string(i - op->getNumOperands())
                 : "in" + std::to_string(i);
    names += (i ? ", " : "") + access;
    if (auto t = dyn_cast<ShapedType>(inputs[i].getType());
        t && t.getRank() > 0) {
      access += "[";
      for (int64_t d = 0; d < t.getRank(); ++d)
        access += d ? ", :" : ":";
      access += "]";
    }
    args += (i ? ", " : "") + access;
  }
  std::string text = "(" + names + ") -> ";
  unsigned numResults = op->getNumResults();
  for (unsigned r = 0; r < numResults; ++r) {
    if (r)
      text += "; ";
    if (numResults > 1)
      text += "out" + std::to_string(r);
    text += "(";
    auto t = dyn_cast<ShapedType>(op->getResult(r).getType());
    for (int64_t d = 0; t && d < t.getRank(); ++d)
      text += (d ? ", o" : "o") + std::to_string(d);
    text += ") = opaque(" + args + ")";
  }
  ParseError error;
  std::optional<OpDesc> desc = parse(text, error);
  assert(desc && "opaque descriptions are well formed");
  return *desc;
}

/// Everything an external model's description of `op` depends on, as a
/// sequence of uniqued pointers and small integers: the op's name, inherent
/// and discardable attributes, operand and result types, and the structure of
/// its regions (each nested op with its attributes and types, and each
/// operand as a block argument, an earlier nested result, a constant or
/// captured value defined above, by its attribute or type). Two operations
/// with equal fingerprints get equal descriptions, so a model of many
/// identical layers is described once per distinct operation.
static void fingerprint(Operation *op, SmallVectorImpl<uintptr_t> &key) {
  auto ptr = [&](const void *p) { key.push_back(uintptr_t(p)); };
  auto describeOp = [&](Operation *o) {
    ptr(o->getName().getAsOpaquePointer());
    ptr(o->getPropertiesAsAttribute().getAsOpaquePointer());
    ptr(o->getRawDictionaryAttrs().getAsOpaquePointer());
    key.push_back(o->getNumOperands());
    key.push_back(o->getNumResults());
    for (Type t : o->getResultTypes())
      ptr(t.getAsOpaquePointer());
    key.push_back(o->getNumRegions());
  };
  describeOp(op);
  for (Type t : op->getOperandTypes())
    ptr(t.getAsOpaquePointer());
  if (op->getNumRegions() == 0)
    return;
  SmallVector<Value> captured = getCapturedTensors(op);
  llvm::DenseMap<Value, unsigned> local;
  unsigned next = 0;
  for (Region &region : op->getRegions()) {
    region.walk<WalkOrder::PreOrder>([&](Block *block) {
      key.push_back(block->getNumArguments());
      for (BlockArgument arg : block->getArguments()) {
        ptr(arg.getType().getAsOpaquePointer());
        local[arg] = next++;
      }
    });
  }
  op->walk<WalkOrder::PreOrder>([&](Operation *nested) {
    if (nested == op)
      return;
    describeOp(nested);
    for (Value v : nested->getOperands()) {
      if (auto it = local.find(v); it != local.end()) {
        key.push_back(1);
        key.push_back(it->second);
        continue;
      }
      Operation *def = v.getDefiningOp();
      if (def && op->isProperAncestor(def)) {
        // A value of an op nested in another block (not visited yet).
        key.push_back(2);
        ptr(v.getAsOpaquePointer());
        continue;
      }
      if (const Value *c = llvm::find(captured, v); c != captured.end()) {
        key.push_back(3);
        key.push_back(c - captured.begin());
        ptr(v.getType().getAsOpaquePointer());
        continue;
      }
      Attribute constant;
      if (def && matchPattern(v, m_Constant(&constant))) {
        key.push_back(4);
        ptr(constant.getAsOpaquePointer());
        ptr(v.getType().getAsOpaquePointer());
        continue;
      }
      key.push_back(5);
      ptr(v.getType().getAsOpaquePointer());
    }
    for (Value r : nested->getResults())
      local[r] = next++;
  });
}

struct TDLAttachPass : public tofu::tdl::impl::TDLAttachBase<TDLAttachPass> {
  using TDLAttachBase::TDLAttachBase;

  void runOnOperation() override;

private:
  LogicalResult loadLibraries(ModuleOp module);
  /// The description of `op` and where it came from, or failure with a
  /// reason.
  FailureOr<OpDesc> describe(Operation *op, std::string &reason,
                             StringRef &source);

  Library library;
};

LogicalResult TDLAttachPass::loadLibraries(ModuleOp module) {
  library = Library();
  std::string error;
  if (useBundledLibrary) {
    std::optional<Library> bundled =
        Library::parse(getBundledLibraryText(), error);
    if (!bundled)
      return mlir::emitError(module.getLoc(), "malformed bundled TDL library: ") << error;
    library.merge(*bundled);
  }
  for (const std::string &path : libraries) {
    auto buffer = llvm::MemoryBuffer::getFile(path);
    if (!buffer)
      return mlir::emitError(module.getLoc(), "cannot read TDL library '")
             << path << "': " << buffer.getError().message();
    std::optional<Library> lib =
        Library::parse((*buffer)->getBuffer().str(), error);
    if (!lib)
      return mlir::emitError(module.getLoc(), "malformed TDL library '")
             << path << "': " << error;
    library.merge(*lib);
  }
  return success();
}

FailureOr<OpDesc> TDLAttachPass::describe(Operation *op, std::string &reason,
                                          StringRef &source) {
  Attribute existing = op->getAttr(TDLDialect::getDescAttrName());
  if (auto desc = dyn_cast_or_null<DescAttr>(existing)) {
    source = "attribute";
    return desc.getDesc();
  }
  if (auto text = dyn_cast_or_null<StringAttr>(existing)) {
    source = "attribute";
    ParseError error;
    std::optional<OpDesc> desc = parse(text.str(), error);
    if (!desc) {
      reason = "invalid TDL description: " + error.message;
      return failure();
    }
    return *desc;
  }
  if (existing) {
    reason = "'tdl.desc' must be a #tdl.desc attribute or a string";
    return failure();
  }
  if (const LibraryEntry *entry =
          library.lookup(op->getName().getStringRef().str())) {
    source = "library";
    OpContext context;
    context.attribute = [&](const std::string &name) -> std::optional<int64_t> {
      if (auto attr = op->getAttrOfType<IntegerAttr>(name);
          attr && attr.getValue().getSignificantBits() <= 64)
        return attr.getValue().getSExtValue();
      return std::nullopt;
    };
    std::string shapeReason;
    if (FailureOr<OpShapes> shapes = getOpShapes(op, shapeReason);
        succeeded(shapes)) {
      context.operandShapes = shapes->inputs;
      context.resultShapes = shapes->outputs;
    }
    std::optional<OpDesc> desc = Library::instantiate(*entry, context, reason);
    if (!desc)
      return failure();
    return *desc;
  }
  if (auto iface = dyn_cast<TDLOpInterface>(op)) {
    source = "interface";
    return iface.getTDLDescription(reason);
  }
  source = "";
  reason = "no TDL description is known for this operation";
  return failure();
}

void TDLAttachPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (failed(loadLibraries(module)))
    return signalPassFailure();

  bool hadError = false;
  // Checked descriptions from the op's own interface, by fingerprint.
  std::map<SmallVector<uintptr_t>, DescAttr> cache;
  SmallVector<uintptr_t> key;
  module.walk([&](Operation *op) {
    if (!needsDescription(op))
      return;
    bool cacheable = isa<TDLOpInterface>(op) &&
                     !op->hasAttr(TDLDialect::getDescAttrName()) &&
                     !library.lookup(op->getName().getStringRef().str());
    if (cacheable) {
      key.clear();
      fingerprint(op, key);
      if (auto it = cache.find(key); it != cache.end()) {
        op->setAttr(TDLDialect::getDescAttrName(), it->second);
        return;
      }
    }
    std::string reason;
    StringRef source;
    FailureOr<OpDesc> desc = describe(op, reason, source);
    std::string shapeReason;
    FailureOr<OpShapes> shapes = getOpShapes(op, shapeReason);
    if (succeeded(desc) && failed(shapes)) {
      desc = failure();
      reason = shapeReason;
    }
    // A description the user or a library gave must fit the shapes.
    if (succeeded(desc)) {
      std::string error;
      std::optional<LoopSpace> space = inferLoopSpace(*desc, *shapes, error);
      if (!space || !checkAccessBounds(*desc, *shapes, *space, error)) {
        op->emitOpError("TDL description does not fit the operation: ")
            << error;
        hadError = true;
        return;
      }
    }
    bool reusable = cacheable && source == "interface" && succeeded(desc);
    if (failed(desc)) {
      if (source == "attribute" || source == "library" || !allowOpaque) {
        op->emitOpError("cannot be described in TDL: ") << reason;
        hadError = true;
        return;
      }
      op->emitRemark("described as opaque, so it will not be partitioned: ")
          << reason;
      desc = makeOpaqueDescription(op);
    }
    LLVM_DEBUG(llvm::dbgs() << op->getName() << " (" << source
                            << "): " << desc->str() << "\n");
    auto attr = DescAttr::get(op->getContext(), *desc);
    // Only checked descriptions from the interface are reused: errors and
    // remarks are reported on every operation.
    if (reusable)
      cache.emplace(key, attr);
    op->setAttr(TDLDialect::getDescAttrName(), attr);
  });
  if (hadError)
    signalPassFailure();
}

} // namespace
