//===- ResultsInMemory.cpp - Long result structs through memory -----------===//
//
// Implements tofu-llvm-results-in-memory: a private or internal LLVM
// function that returns a long struct (a training step's updated weights,
// one memref descriptor each) writes its members through a pointer
// argument instead, and its calls load the members that they extract
// (Passes.td).
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToCPU/TofuToCPU.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/SymbolTable.h"

namespace tofu {
#define GEN_PASS_DEF_TOFULLVMRESULTSINMEMORY
#include "tofu/Conversion/Passes.h.inc"
} // namespace tofu

using namespace mlir;

namespace {

/// The calls of `func` in `module`, or nothing when a use of it is not a
/// direct call whose result only `llvm.extractvalue`s read, or is one
/// with attributes of its arguments or result, operand bundles or another
/// calling convention than C's (which the rewritten call would have to
/// carry over).
std::optional<SmallVector<LLVM::CallOp>>
getRewritableCalls(LLVM::LLVMFuncOp func, ModuleOp module) {
  std::optional<SymbolTable::UseRange> uses =
      SymbolTable::getSymbolUses(func, module);
  if (!uses)
    return std::nullopt;
  SmallVector<LLVM::CallOp> calls;
  for (const SymbolTable::SymbolUse &use : *uses) {
    auto call = dyn_cast<LLVM::CallOp>(use.getUser());
    if (!call || call.getCallee() != func.getName() ||
        call.getNumResults() != 1 || call.getArgAttrsAttr() ||
        call.getResAttrsAttr() || !call.getOpBundleOperands().empty() ||
        call.getCConv() != LLVM::cconv::CConv::C)
      return std::nullopt;
    // The alloca goes into the entry block of the call's allocation scope
    // (a function, or an OpenMP region whose threads each need their own).
    Operation *scope =
        call->getParentWithTrait<OpTrait::AutomaticAllocationScope>();
    if (!scope || scope->getNumRegions() == 0 || scope->getRegion(0).empty())
      return std::nullopt;
    for (Operation *user : call.getResult().getUsers())
      if (!isa<LLVM::ExtractValueOp>(user))
        return std::nullopt;
    calls.push_back(call);
  }
  return calls;
}

/// A pointer to member `position` of the struct of type `type` at `base`.
Value getMemberAddress(OpBuilder &b, Location loc, Value base, Type type,
                       ArrayRef<int64_t> position) {
  SmallVector<LLVM::GEPArg> indices{0};
  for (int64_t index : position)
    indices.push_back(static_cast<int32_t>(index));
  return LLVM::GEPOp::create(b, loc, base.getType(), type, base, indices);
}

/// Stores the struct that `ret` returns into `out`, member by member, and
/// makes it return nothing. Members inserted whole by the chain of
/// `llvm.insertvalue`s that built the struct are stored from the inserted
/// values (the chain is then dead); members of an undefined or poison
/// start are not stored; the others are extracted.
void storeResults(LLVM::ReturnOp ret, Value out, LLVM::LLVMStructType type) {
  OpBuilder b(ret);
  Location loc = ret.getLoc();
  Value result = ret.getArg();
  unsigned count = type.getBody().size();
  // member i: the value inserted last into i, `result` to extract it from
  // (a member written in part), or null (not yet seen).
  SmallVector<Value> members(count);
  Value start = result;
  while (auto insert = start.getDefiningOp<LLVM::InsertValueOp>()) {
    ArrayRef<int64_t> position = insert.getPosition();
    Value &member = members[position.front()];
    if (!member)
      member = position.size() == 1 ? insert.getValue() : result;
    start = insert.getContainer();
  }
  bool undefinedStart = start.getDefiningOp<LLVM::UndefOp>() ||
                        start.getDefiningOp<LLVM::PoisonOp>();
  for (unsigned i = 0; i < count; ++i) {
    Value member = members[i];
    if (!member && undefinedStart)
      continue;
    if (!member || member == result)
      member = LLVM::ExtractValueOp::create(b, loc, member ? result : start,
                                            int64_t(i));
    LLVM::StoreOp::create(b, loc, member,
                          getMemberAddress(b, loc, out, type, int64_t(i)));
  }
  LLVM::ReturnOp::create(b, loc, ValueRange{});
  ret.erase();
  // The chain of insertions, now without uses.
  while (result && result.use_empty()) {
    Operation *op = result.getDefiningOp();
    if (!op || !isa<LLVM::InsertValueOp, LLVM::UndefOp, LLVM::PoisonOp>(op))
      break;
    auto insert = dyn_cast<LLVM::InsertValueOp>(op);
    result = insert ? insert.getContainer() : Value();
    op->erase();
  }
}

/// Replaces `call`, whose callee now takes the struct's address first and
/// returns nothing, by a call that writes into an alloca of the entry
/// block of its allocation scope, and each extraction of its result by a
/// load after it. The alloca, the loads and the stores have the types' ABI
/// alignments (no struct is packed).
void rewriteCall(LLVM::CallOp call, LLVM::LLVMFuncOp callee,
                 LLVM::LLVMStructType type) {
  Operation *scope =
      call->getParentWithTrait<OpTrait::AutomaticAllocationScope>();
  Location loc = call.getLoc();
  OpBuilder b(call);
  b.setInsertionPointToStart(&scope->getRegion(0).front());
  Value one = LLVM::ConstantOp::create(b, loc, b.getI64Type(), 1);
  auto ptrType = LLVM::LLVMPointerType::get(b.getContext());
  Value out = LLVM::AllocaOp::create(b, loc, ptrType, type, one);
  b.setInsertionPoint(call);
  SmallVector<Value> operands{out};
  llvm::append_range(operands, call.getArgOperands());
  auto replacement = LLVM::CallOp::create(b, loc, callee, operands);
  for (NamedAttribute attr : call->getDiscardableAttrs())
    replacement->setAttr(attr.getName(), attr.getValue());
  b.setInsertionPointAfter(replacement);
  // In the order of the extractions where they are in one block.
  SmallVector<Operation *> users(call.getResult().getUsers());
  if (llvm::all_equal(llvm::map_range(
          users, [](Operation *user) { return user->getBlock(); })))
    llvm::sort(users, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
  for (Operation *user : users) {
    auto extract = cast<LLVM::ExtractValueOp>(user);
    Value member =
        LLVM::LoadOp::create(b, extract.getLoc(), extract.getType(),
                             getMemberAddress(b, extract.getLoc(), out, type,
                                              extract.getPosition()));
    extract.replaceAllUsesWith(member);
    extract.erase();
  }
  call.erase();
}

/// Whether `type` or a struct in it is packed: a member's ABI alignment
/// would then overstate the alignment of its address.
bool hasPackedStruct(Type type) {
  if (auto structType = dyn_cast<LLVM::LLVMStructType>(type))
    return structType.isPacked() ||
           llvm::any_of(structType.getBody(), hasPackedStruct);
  if (auto array = dyn_cast<LLVM::LLVMArrayType>(type))
    return hasPackedStruct(array.getElementType());
  return false;
}

/// Whether `func`'s passed-through LLVM attributes say what memory it
/// touches, which its stores of the results would contradict.
bool hasMemoryAttributes(LLVM::LLVMFuncOp func) {
  ArrayAttr passthrough = func.getPassthroughAttr();
  if (!passthrough)
    return false;
  return llvm::any_of(passthrough, [](Attribute entry) {
    StringAttr name = dyn_cast<StringAttr>(entry);
    if (auto pair = dyn_cast<ArrayAttr>(entry); pair && !pair.empty())
      name = dyn_cast<StringAttr>(pair[0]);
    return name &&
           llvm::is_contained({"readnone", "readonly", "writeonly", "memory",
                               "argmemonly", "inaccessiblememonly"},
                              name.getValue());
  });
}

struct ResultsInMemory
    : tofu::impl::TofuLLVMResultsInMemoryBase<ResultsInMemory> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto ptrType = LLVM::LLVMPointerType::get(&getContext());
    for (auto func :
         llvm::make_early_inc_range(module.getOps<LLVM::LLVMFuncOp>())) {
      if (func.isExternal() || func.isVarArg() ||
          func.getCConv() != LLVM::cconv::CConv::C ||
          (func.getLinkage() != LLVM::Linkage::Private &&
           func.getLinkage() != LLVM::Linkage::Internal))
        continue;
      LLVM::LLVMFunctionType funcType = func.getFunctionType();
      auto type = dyn_cast<LLVM::LLVMStructType>(funcType.getReturnType());
      if (!type || type.getBody().size() < minMembers ||
          hasPackedStruct(type) || hasMemoryAttributes(func))
        continue;
      std::optional<SmallVector<LLVM::CallOp>> calls =
          getRewritableCalls(func, module);
      if (!calls)
        continue;
      // The callee: the struct's address first, no result.
      SmallVector<Type> params{ptrType};
      llvm::append_range(params, funcType.getParams());
      func.setFunctionType(LLVM::LLVMFunctionType::get(
          LLVM::LLVMVoidType::get(&getContext()), params));
      Block &entry = func.getBody().front();
      Value out = entry.insertArgument(0u, ptrType, func.getLoc());
      SmallVector<Attribute> argAttrs;
      OpBuilder b(func);
      argAttrs.push_back(b.getDictionaryAttr(b.getNamedAttr(
          LLVM::LLVMDialect::getNoAliasAttrName(), b.getUnitAttr())));
      // An argument that the function returned is no longer returned.
      for (unsigned i = 0; i < funcType.getNumParams(); ++i) {
        NamedAttrList attrs(func.getArgAttrDict(i));
        attrs.erase(LLVM::LLVMDialect::getReturnedAttrName());
        argAttrs.push_back(attrs.getDictionary(&getContext()));
      }
      func.setArgAttrsAttr(b.getArrayAttr(argAttrs));
      func.setResAttrsAttr(nullptr);
      // It writes memory now.
      func.setMemoryEffectsAttr(nullptr);
      func.walk([&](LLVM::ReturnOp ret) { storeResults(ret, out, type); });
      for (LLVM::CallOp call : *calls)
        rewriteCall(call, func, type);
    }
  }
};

} // namespace
