//===- ArgumentSelection.cpp - Naming and selecting arguments -------------===//
//
// Resolves `weights=` and `inputs=` entries (indices, names, `all`) to
// function arguments, with diagnostics located on the argument or on the
// function's name.
//
//===----------------------------------------------------------------------===//

#include "tofu/Transforms/ArgumentSelection.h"
#include "tofu/Transforms/TrainingAttributes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/Sequence.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MemoryBuffer.h"

#include <mutex>

using namespace mlir;

/// The first name of a NameLoc inside `loc`, or "".
static std::string findNameLoc(Location loc) {
  std::string name;
  loc->walk([&](Location inner) {
    if (auto named = dyn_cast<NameLoc>(inner)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

/// The SSA name written at `loc` in its source file, or "". Source files
/// are read once and kept (the file may be read from many passes).
static std::string findSourceName(Location loc) {
  auto file = dyn_cast<FileLineColLoc>(loc);
  if (!file || file.getLine() == 0 || file.getColumn() == 0)
    return "";
  static std::mutex mutex;
  static llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> cache;
  std::lock_guard<std::mutex> lock(mutex);
  StringRef path = file.getFilename().getValue();
  auto it = cache.find(path);
  if (it == cache.end()) {
    auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/true);
    it = cache.try_emplace(path, buffer ? std::move(*buffer) : nullptr).first;
  }
  if (!it->second)
    return "";
  StringRef text = it->second->getBuffer();
  for (unsigned line = 1; line < file.getLine(); ++line) {
    size_t eol = text.find('\n');
    if (eol == StringRef::npos)
      return "";
    text = text.drop_front(eol + 1);
  }
  text = text.take_until([](char c) { return c == '\n'; });
  if (file.getColumn() > text.size())
    return "";
  text = text.drop_front(file.getColumn() - 1);
  if (!text.consume_front("%"))
    return "";
  StringRef name = text.take_while([](char c) {
    return llvm::isAlnum(c) || c == '_' || c == '.' || c == '$' || c == '-';
  });
  // Numbered values (%0, %arg0 as printed) carry no chosen name.
  if (name.empty() || llvm::isDigit(name.front()))
    return "";
  return name.str();
}

std::string tofu::getArgumentName(func::FuncOp func, unsigned index) {
  if (auto name = func.getArgAttrOfType<StringAttr>(index, attrs::kName))
    return name.getValue().str();
  if (func.isExternal())
    return "";
  Location loc = func.getArgument(index).getLoc();
  std::string name = findNameLoc(loc);
  if (name.empty())
    name = findSourceName(loc);
  return name;
}

/// Whether `name` is one that the training files give something else: the
/// name of an argument without one (`arg<N>`), the optimizer's
/// (`optimizer.*`) or safetensors' header entry.
static bool isReservedFileName(StringRef name) {
  return (name.starts_with("arg") &&
          llvm::all_of(name.drop_front(3), llvm::isDigit) && name.size() > 3) ||
         name.starts_with("optimizer.") || name == "__metadata__";
}

void tofu::recordArgumentNames(func::FuncOp func) {
  unsigned numArgs = func.getNumArguments();
  SmallVector<std::string> names;
  llvm::StringMap<unsigned> uses;
  for (unsigned i = 0; i < numArgs; ++i) {
    names.push_back(getArgumentName(func, i));
    if (!names.back().empty())
      ++uses[names.back()];
  }
  Builder b(func.getContext());
  for (unsigned i = 0; i < numArgs; ++i)
    if (!names[i].empty() && uses[names[i]] == 1 &&
        !isReservedFileName(names[i]) && !func.getArgAttr(i, attrs::kName))
      func.setArgAttr(i, attrs::kName, b.getStringAttr(names[i]));
}

bool tofu::isFloatTensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && isa<FloatType>(tensor.getElementType());
}

InFlightDiagnostic tofu::emitFunctionError(func::FuncOp func,
                                           const Twine &message) {
  return mlir::emitError(func.getLoc(), message);
}

std::optional<unsigned> tofu::resolveArgument(func::FuncOp func,
                                              StringRef entry, StringRef pass,
                                              StringRef what) {
  unsigned numArgs = func.getNumArguments();
  unsigned index;
  if (!entry.getAsInteger(10, index)) {
    if (index < numArgs)
      return index;
    emitFunctionError(func, pass)
        << ": " << what << " argument " << index << " out of range: '@"
        << func.getName() << "' has " << numArgs << " arguments";
    return std::nullopt;
  }
  SmallVector<std::string> names;
  unsigned unnamed = 0;
  for (unsigned i = 0; i < numArgs; ++i) {
    std::string name = getArgumentName(func, i);
    if (name == entry)
      return i;
    if (!name.empty())
      names.push_back(name);
    else
      ++unnamed;
  }
  InFlightDiagnostic diag = emitFunctionError(func, pass);
  diag << ": no argument of '@" << func.getName() << "' is named '" << entry
       << "'";
  if (names.empty()) {
    diag << " (its arguments have no names: give an index, or name them with "
            "loc(\"name\") or {"
         << attrs::kName << " = \"name\"})";
    return std::nullopt;
  }
  constexpr size_t kShown = 8;
  diag << " (its names: ";
  for (size_t i = 0; i < std::min(kShown, names.size()); ++i)
    diag << (i ? ", " : "") << names[i];
  if (names.size() > kShown)
    diag << ", and " << names.size() - kShown << " more";
  diag << ")";
  if (unnamed)
    diag << "; " << unnamed
         << " arguments have no name (names are read from a source file "
            "on disk, loc(\"name\") or {"
         << attrs::kName << " = \"name\"}): give their index";
  return std::nullopt;
}

/// The leading dimension of a ranked tensor of rank >= 1, or -1.
static int64_t getLeadingDim(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || tensor.getRank() == 0)
    return -1;
  return tensor.getDimSize(0);
}

unsigned tofu::guessDataInput(func::FuncOp func, StringRef pass) {
  unsigned numArgs = func.getNumArguments();
  // The batch: the leading dimension of the marked data (the labels that
  // tofu-loss adds), else of the result.
  int64_t batch = -1;
  for (unsigned i = 0; i < numArgs && batch < 0; ++i)
    if (func.getArgAttr(i, attrs::kInput))
      batch = getLeadingDim(func.getArgumentTypes()[i]);
  if (batch < 0 && func.getNumResults() == 1)
    batch = getLeadingDim(func.getResultTypes()[0]);
  if (numArgs == 0 || batch < 0 ||
      getLeadingDim(func.getArgumentTypes()[0]) == batch)
    return 0;
  for (unsigned i = 1; i < numArgs; ++i) {
    if (func.getArgAttr(i, attrs::kInput) ||
        getLeadingDim(func.getArgumentTypes()[i]) != batch)
      continue;
    mlir::emitRemark(func.getArgument(i).getLoc(), pass)
        << ": argument " << i << " is the data input: it leads with the batch ("
        << batch << ") and argument 0 does not; pass inputs= to choose";
    return i;
  }
  return 0;
}

/// Whether `op` belongs to the loss at the end of a model: it is
/// element-wise (parallel loops only, every operand indexed by a
/// permutation of them), reduces to a 0-d tensor, works on 0-d tensors
/// only, or returns.
static bool isLossOp(Operation *op) {
  if (isa<func::ReturnOp>(op))
    return true;
  auto isScalar = [](Type t) {
    auto shaped = dyn_cast<ShapedType>(t);
    return !shaped || (shaped.hasRank() && shaped.getRank() == 0);
  };
  if (llvm::all_of(op->getResultTypes(), isScalar) &&
      !isa<linalg::LinalgOp>(op))
    return true;
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp || linalgOp.getNumDpsInits() != 1)
    return false;
  if (linalgOp.getRank(linalgOp.getDpsInitOperand(0)) == 0)
    return true;
  if (linalgOp.getNumReductionLoops() != 0)
    return false;
  return llvm::all_of(linalgOp.getIndexingMapsArray(), [&](AffineMap map) {
    return map.getNumResults() == map.getNumDims() && map.isPermutation();
  });
}

/// Whether `v` is computed from a contraction: a linalg op with reduction
/// loops and a result of rank 1 or more (a product of the model), looking
/// back through a bounded number of ops.
static bool dependsOnContraction(Value v) {
  SmallVector<Value> worklist{v};
  llvm::SmallPtrSet<Operation *, 32> seen;
  while (!worklist.empty() && seen.size() < 256) {
    Operation *def = worklist.pop_back_val().getDefiningOp();
    if (!def || !seen.insert(def).second)
      continue;
    auto linalgOp = dyn_cast<linalg::LinalgOp>(def);
    if (linalgOp && linalgOp.getNumReductionLoops() > 0 &&
        linalgOp.getNumDpsInits() == 1 &&
        linalgOp.getRank(linalgOp.getDpsInitOperand(0)) > 0)
      return true;
    llvm::append_range(worklist, def->getOperands());
  }
  return false;
}

/// Whether argument `i` of `func` is data that only the loss reads, such
/// as the target of a model that computes its own loss: a tensor that
/// leads with the batch, is compared element-wise with the model's
/// prediction (a value computed by a contraction), and reaches the 0-d
/// result only through element-wise ops and reductions to 0-d
/// (isLossOp). A weight of the model passes through a product, a
/// broadcast or a reduction over some of its dimensions first, or feeds
/// the prediction rather than meeting it.
static bool isReadOnlyByLoss(func::FuncOp func, unsigned i, int64_t batch) {
  if (func.isExternal() || func.getNumResults() != 1 || batch < 1 ||
      getLeadingDim(func.getArgumentTypes()[i]) != batch)
    return false;
  auto result = dyn_cast<RankedTensorType>(func.getResultTypes()[0]);
  if (!result || result.getRank() != 0)
    return false;
  // Its first readers meet the prediction element-wise.
  Value arg = func.getArgument(i);
  bool meetsPrediction = false;
  for (Operation *user : arg.getUsers()) {
    auto linalgOp = dyn_cast<linalg::LinalgOp>(user);
    if (!linalgOp || linalgOp.getNumReductionLoops() != 0)
      continue;
    for (Value input : linalgOp.getDpsInputs())
      meetsPrediction |= input != arg && dependsOnContraction(input);
  }
  if (!meetsPrediction)
    return false;
  SmallVector<Value> worklist{arg};
  llvm::SmallPtrSet<Operation *, 16> seen;
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    for (Operation *user : v.getUsers()) {
      if (!seen.insert(user).second)
        continue;
      if (!isLossOp(user))
        return false;
      llvm::append_range(worklist, user->getResults());
    }
  }
  return !seen.empty();
}

FailureOr<SmallVector<unsigned>>
tofu::selectWeights(func::FuncOp func, ArrayRef<std::string> weights,
                    ArrayRef<std::string> inputs, StringRef pass) {
  unsigned numArgs = func.getNumArguments();
  llvm::SmallDenseSet<unsigned> excluded;
  for (unsigned i = 0; i < numArgs; ++i)
    if (func.getArgAttr(i, attrs::kInput))
      excluded.insert(i);
  for (const std::string &entry : inputs) {
    if (entry == "auto") {
      excluded.insert(guessDataInput(func, pass));
      continue;
    }
    std::optional<unsigned> i = resolveArgument(func, entry, pass, "input");
    if (!i)
      return failure();
    excluded.insert(*i);
  }
  llvm::SmallDenseSet<unsigned> chosen, lossData;
  if (weights.empty()) {
    for (unsigned i = 0; i < numArgs; ++i)
      if (func.getArgAttr(i, attrs::kWeight))
        chosen.insert(i);
  }
  bool anyMarked = llvm::any_of(llvm::seq(numArgs), [&](unsigned i) {
    return func.getArgAttr(i, attrs::kWeight) != nullptr;
  });
  for (const std::string &entry : weights) {
    if (entry == "auto" && anyMarked) {
      for (unsigned i = 0; i < numArgs; ++i)
        if (func.getArgAttr(i, attrs::kWeight))
          chosen.insert(i);
      continue;
    }
    if (entry == "all" || entry == "auto") {
      // The batch, from the data arguments.
      int64_t batch = -1;
      for (unsigned i = 0; i < numArgs && batch < 0; ++i)
        if (excluded.contains(i))
          batch = getLeadingDim(func.getArgumentTypes()[i]);
      for (unsigned i = 0; i < numArgs; ++i) {
        if (excluded.contains(i) || !isFloatTensor(func.getArgumentTypes()[i]))
          continue;
        if (isReadOnlyByLoss(func, i, batch)) {
          lossData.insert(i);
          continue;
        }
        chosen.insert(i);
      }
      continue;
    }
    std::optional<unsigned> i = resolveArgument(func, entry, pass, "weight");
    if (!i)
      return failure();
    if (excluded.contains(*i)) {
      mlir::emitError(func.getArgument(*i).getLoc(), pass)
          << ": argument " << *i << " is both a weight and an input";
      return failure();
    }
    chosen.insert(*i);
  }
  SmallVector<unsigned> result(chosen.begin(), chosen.end());
  llvm::sort(result);
  if (!weights.empty() && !result.empty()) {
    // One line that says what is trained and what is data.
    auto describe = [&](unsigned i) {
      std::string name = getArgumentName(func, i);
      return name.empty() ? "arg" + std::to_string(i)
                          : name + " (arg" + std::to_string(i) + ")";
    };
    InFlightDiagnostic remark = mlir::emitRemark(func.getLoc(), pass);
    remark << ": '@" << func.getName() << "': weights: ";
    llvm::interleaveComma(result, remark,
                          [&](unsigned i) { remark << describe(i); });
    remark << "; data: ";
    SmallVector<unsigned> data;
    for (unsigned i = 0; i < numArgs; ++i)
      if (!chosen.contains(i))
        data.push_back(i);
    if (data.empty())
      remark << "none";
    llvm::interleaveComma(data, remark, [&](unsigned i) {
      remark << describe(i);
      if (lossData.contains(i))
        remark << " read only by the loss";
    });
  }
  return result;
}
