//===- TrainDriver.cpp - The tofu-train-driver pass -----------------------===//
//
// Adds a `@main` that trains a training step (partitioned by tofu-partition
// or not) for a few steps with the CPU runtime: every rank fills its own
// tiles from a hash of the global element index, the loop feeds updated
// weights and optimizer state back, and rank 0 prints the losses. With
// `reference`, the unpartitioned step runs next to it on whole tensors and
// the largest relative difference is printed.
//
//===----------------------------------------------------------------------===//

#include "tofu/Conversion/TofuToMPI/RuntimeABI.h"
#include "tofu/Dialect/Tofu/Transforms/Passes.h"
#include "tofu/Partition/Distribution.h"
#include "tofu/Transforms/TrainingAttributes.h"
#include "tofu/Transforms/TrainingSignature.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Shard/IR/ShardOps.h"

#include <cmath>

namespace tofu {
#define GEN_PASS_DEF_TOFUTRAINDRIVER
#include "tofu/Dialect/Tofu/Transforms/Passes.h.inc"
} // namespace tofu

using namespace mlir;
using namespace tofu;

namespace {

struct TofuTrainDriverPass
    : public tofu::impl::TofuTrainDriverBase<TofuTrainDriverPass> {
  using TofuTrainDriverBase::TofuTrainDriverBase;

  void runOnOperation() override;
};

/// Builds the body of @main.
class DriverBuilder {
public:
  DriverBuilder(ModuleOp module, OpBuilder &b) : module(module), b(b) {}

  Value call(StringRef name, ValueRange args, TypeRange results = {}) {
    func::FuncOp f =
        declareRuntimeFunction(module, name, args.getTypes(), results);
    auto c = func::CallOp::create(b, loc, f, args);
    return results.empty() ? Value() : c.getResult(0);
  }
  Value i64(int64_t v) { return arith::ConstantIntOp::create(b, loc, v, 64); }
  Value f64(double v) {
    return arith::ConstantFloatOp::create(b, loc, b.getF64Type(), APFloat(v));
  }
  Value view(Value tensor) { return getUnrankedView(b, loc, tensor); }
  /// This rank's row of a per-rank table of offsets, as a buffer.
  Value rankRow(const RankBoxes &boxes, int64_t rank) {
    SmallVector<int64_t> flat;
    for (const Box &box : boxes)
      flat.append(box.lo.begin(), box.lo.end());
    if (rank == 0)
      return view(arith::ConstantOp::create(
          b, loc,
          DenseIntElementsAttr::get(RankedTensorType::get({0}, b.getI64Type()),
                                    ArrayRef<int64_t>{})));
    auto tableType =
        RankedTensorType::get({(int64_t)boxes.size(), rank}, b.getI64Type());
    Value table = arith::ConstantOp::create(
        b, loc, DenseIntElementsAttr::get(tableType, flat));
    SmallVector<OpFoldResult> offsets{rankIndex, b.getIndexAttr(0)};
    SmallVector<OpFoldResult> sizes{b.getIndexAttr(1), b.getIndexAttr(rank)};
    SmallVector<OpFoldResult> strides{b.getIndexAttr(1), b.getIndexAttr(1)};
    Value row = tensor::ExtractSliceOp::create(
        b, loc, RankedTensorType::get({rank}, b.getI64Type()), table, offsets,
        sizes, strides);
    return view(row);
  }
  Value constantInts(ArrayRef<int64_t> v) { return getConstantInts(b, loc, v); }
  /// `text` as a buffer of bytes (not terminated).
  Value string(StringRef text) {
    SmallVector<int8_t> bytes(text.begin(), text.end());
    auto type = RankedTensorType::get({(int64_t)bytes.size()}, b.getI8Type());
    return view(arith::ConstantOp::create(
        b, loc, DenseIntElementsAttr::get(type, ArrayRef<int8_t>(bytes))));
  }

  ModuleOp module;
  OpBuilder &b;
  Location loc = UnknownLoc::get(module.getContext());
  Value rankIndex;
};

/// The most training steps the driver unrolls into @main.
constexpr unsigned kMaxSteps = 10000;

/// The runtime's code of an element type (TOFU_F32 ... TOFU_I64).
int64_t getTypeCode(Type element) {
  return element.isF32()                 ? 0
         : element.isF64()               ? 1
         : element.isSignlessInteger(32) ? 2
                                         : 3;
}
/// The suffix of the runtime functions for an element type.
StringRef getTypeSuffix(Type element) {
  static const char *const suffixes[] = {"f32", "f64", "i32", "i64"};
  return suffixes[getTypeCode(element)];
}

/// The range of initial weights, as PyTorch's default initialization of
/// linear and convolution layers: uniform in +-1/sqrt(fan-in), with the
/// fan-in of the contraction that reads weight argument `arg` of the
/// unpartitioned step `global` (getFanIn). A weight that no contraction
/// reads, or a partitioned step without its unpartitioned reference (whose
/// local contractions may be cut), falls back to the elements over the
/// largest dimension of the global type.
double weightScale(func::FuncOp global, unsigned arg, RankedTensorType type,
                   bool isGlobal) {
  double fanIn;
  std::optional<int64_t> fromOp;
  if (isGlobal)
    fromOp = getFanIn(global, arg);
  if (fromOp) {
    fanIn = double(*fromOp);
  } else {
    int64_t largest = 1;
    for (int64_t d : type.getShape())
      largest = std::max(largest, d);
    fanIn = double(type.getNumElements()) / double(largest);
  }
  return 1.0 / std::sqrt(std::max(1.0, fanIn));
}

/// The boxes of argument `i` of `step` on every rank (whole tensors when
/// the step is not partitioned).
FailureOr<RankBoxes> getArgBoxes(func::FuncOp step, unsigned i,
                                 RankedTensorType global,
                                 const ProcessGrid &grid) {
  Shape shape(global.getShape().begin(), global.getShape().end());
  auto layout = step.getArgAttrOfType<LayoutAttr>(i, "tofu.layout");
  if (!layout)
    return RankBoxes(grid.size(), Box::whole(shape));
  std::vector<Tiling> tilings;
  for (int64_t d : layout.getAxes())
    tilings.push_back(d < 0 ? Tiling::replicate() : Tiling::cut(d));
  std::string error;
  std::optional<RankBoxes> boxes = getLayoutBoxes(shape, tilings, grid, error);
  if (!boxes)
    return mlir::emitError(step.getLoc(), "tofu-train-driver: argument #")
           << i << ": " << error;
  return *boxes;
}

} // namespace

void TofuTrainDriverPass::runOnOperation() {
  ModuleOp module = getOperation();
  func::FuncOp step;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (f.isExternal() || f.getSymName().ends_with("_reference"))
      continue;
    bool match = funcName.empty()
                     ? f.getNumResults() > 0 &&
                           f.getResultAttr(0, attrs::kLoss) != nullptr
                     : f.getSymName() == funcName;
    if (match) {
      step = f;
      break;
    }
  }
  if (!step) {
    if (!funcName.empty()) {
      mlir::emitError(module.getLoc(), "tofu-train-driver: no function @")
          << funcName;
      return signalPassFailure();
    }
    mlir::emitError(module.getLoc(),
                    "tofu-train-driver: no training step (a function whose "
                    "first result is a tofu.loss): build one from a forward "
                    "model with tofu-opt --tofu-train-pipeline, or "
                    "--tofu-autodiff --tofu-optimizer");
    return signalPassFailure();
  }
  if (module.lookupSymbol("main")) {
    mlir::emitError(module.getLoc(),
                    "tofu-train-driver: the module already has @main (a "
                    "driver); give the step as it was before "
                    "tofu-train-driver");
    return signalPassFailure();
  }
  func::FuncOp reference = module.lookupSymbol<func::FuncOp>(
      (step.getSymName() + "_reference").str());
  if (this->reference && !reference) {
    mlir::emitError(step.getLoc(), "tofu-train-driver: reference=1 needs @")
        << step.getSymName() << "_reference (kept by tofu-partition)";
    return signalPassFailure();
  }
  // The grid, from a tofu.layout's shard.grid if the step is partitioned.
  ProcessGrid grid{{1}};
  for (auto g : module.getOps<shard::GridOp>())
    if (g.getSymName() == (step.getSymName() + "_grid").str())
      grid.shape.assign(g.getShape().begin(), g.getShape().end());
  func::FuncOp globalOf = reference ? reference : step;
  auto isFloat = [](Type t) { return t.isF32() || t.isF64(); };
  auto isIndex = [](Type t) {
    return t.isSignlessInteger(32) || t.isSignlessInteger(64);
  };
  for (auto [i, t] : llvm::enumerate(step.getArgumentTypes())) {
    auto type = dyn_cast<RankedTensorType>(t);
    bool input = !step.getArgAttr(i, attrs::kStateOf) &&
                 !step.getArgAttr(i, attrs::kWeight);
    if (!type || !type.hasStaticShape() ||
        !(isFloat(type.getElementType()) ||
          (input && isIndex(type.getElementType())))) {
      mlir::emitError(step.getLoc(), "tofu-train-driver: argument #")
          << i << " must be a static f32 or f64 tensor (or i32 or i64 for "
          << "an input), not " << t;
      return signalPassFailure();
    }
  }
  for (Type t : step.getResultTypes()) {
    auto type = dyn_cast<RankedTensorType>(t);
    if (!type || !type.hasStaticShape() || !isFloat(type.getElementType())) {
      mlir::emitError(step.getLoc(),
                      "tofu-train-driver: every result must be a static f32 "
                      "or f64 tensor, not ")
          << t;
      return signalPassFailure();
    }
  }
  if (steps < 1) {
    mlir::emitError(step.getLoc(), "tofu-train-driver: steps must be at least "
                                   "1, not 0");
    return signalPassFailure();
  }
  // Unrolled steps are each a call in @main: a bound keeps the module (and
  // its compile time) reasonable.
  if (unroll && steps > kMaxSteps) {
    mlir::emitError(step.getLoc(), "tofu-train-driver: with unroll=1, steps "
                                   "must be at most ")
        << kMaxSteps << ", not " << static_cast<uint64_t>(steps.getValue());
    return signalPassFailure();
  }
  if (intBound < 1 || intBound > (1u << 31)) {
    mlir::emitError(step.getLoc(),
                    "tofu-train-driver: int-bound must be in [1, 2^31]");
    return signalPassFailure();
  }
  if (globalOf.getNumArguments() != step.getNumArguments() ||
      globalOf.getNumResults() != step.getNumResults()) {
    mlir::emitError(step.getLoc(),
                    "tofu-train-driver: the reference has another signature");
    return signalPassFailure();
  }

  SmallVector<int> feeds = getFedArguments(step);
  for (unsigned r = 0; r < feeds.size(); ++r)
    if (feeds[r] >= 0 &&
        step.getResultTypes()[r] != step.getArgumentTypes()[feeds[r]]) {
      mlir::emitError(step.getLoc(), "tofu-train-driver: result #")
          << r << " does not have the type of argument #" << feeds[r]
          << " that it updates";
      return signalPassFailure();
    }

  // A step that returns gradients but updates nothing would train with the
  // same loss forever.
  bool hasWeights = llvm::any_of(llvm::seq(step.getNumArguments()),
                                 [&](unsigned i) {
                                   return step.getArgAttr(i, attrs::kWeight);
                                 });
  if (hasWeights && llvm::none_of(feeds, [](int f) { return f >= 0; })) {
    mlir::emitError(step.getLoc(), "tofu-train-driver: @")
        << step.getSymName()
        << " updates none of its weights (no result has tofu.updated_arg): "
           "add the optimizer with tofu-opt --tofu-optimizer, or build the "
           "step with --tofu-train-pipeline";
    return signalPassFailure();
  }

  bool initOrResume = !initFile.empty() || !resumeFile.empty();
  bool io = initOrResume || !dataFile.empty() || !saveFile.empty();
  if (!initFile.empty() && !resumeFile.empty()) {
    mlir::emitError(step.getLoc(),
                    "tofu-train-driver: init and resume exclude each other "
                    "(a checkpoint holds the initial weights)");
    return signalPassFailure();
  }
  if (unroll && !resumeFile.empty()) {
    mlir::emitError(step.getLoc(), "tofu-train-driver: resume needs the "
                                   "step loop (unroll=0)");
    return signalPassFailure();
  }
  if (learningRate < 0 || !std::isfinite(double(learningRate))) {
    mlir::emitError(step.getLoc(), "tofu-train-driver: lr must be positive");
    return signalPassFailure();
  }
  if (learningRate > 0 &&
      llvm::none_of(llvm::seq(step.getNumArguments()), [&](unsigned i) {
        return step.getArgAttr(i, attrs::kHyperparameter) != nullptr;
      })) {
    mlir::emitError(step.getLoc(),
                    "tofu-train-driver: the step's learning rate is a "
                    "constant; build it with tofu-optimizer{lr-arg=1} to set "
                    "it at run time");
    return signalPassFailure();
  }
  if (logEvery < 1) {
    mlir::emitError(step.getLoc(),
                    "tofu-train-driver: log-every must be at least 1");
    return signalPassFailure();
  }
  if (saveEvery && saveFile.empty()) {
    mlir::emitError(step.getLoc(),
                    "tofu-train-driver: save-every needs a save file");
    return signalPassFailure();
  }

  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  DriverBuilder d(module, b);
  auto main = func::FuncOp::create(b, d.loc, "main", b.getFunctionType({}, {}));
  // Passes that would spend long on the driver for nothing skip it
  // (tofu-simplify-deallocs), and so does LLVM's optimizer: the driver is
  // glue around the calls of the step (its deallocations and descriptors
  // are thousands of instructions), and optimizing it took most of the
  // JIT's time on a Transformer step (docs/cpu.md).
  main->setAttr(tofu::attrs::kDriver, b.getUnitAttr());
  main->setAttr("passthrough",
                b.getArrayAttr({b.getStringAttr("noinline"),
                                b.getStringAttr("optnone")}));
  b.setInsertionPointToStart(main.addEntryBlock());
  // The runtime checks that the job has exactly this many ranks: an
  // unpartitioned step (grid 1) runs on one rank only.
  d.call("tofu_init", {d.i64(grid.size())});
  Value rank = d.call("tofu_rank", {}, {b.getI64Type()});
  d.rankIndex = arith::IndexCastOp::create(b, d.loc, b.getIndexType(), rank);
  if (io)
    d.call("tofu_io_open",
           {d.string(initFile), d.string(dataFile), d.string(resumeFile),
            d.string(saveFile), d.i64(saveEvery), d.i64(steps)});

  unsigned numArgs = step.getNumArguments();
  SmallVector<std::string> names;
  SmallVector<bool> isWeight, isState, isData;
  // The value of each hyperparameter argument (the learning rate).
  DenseMap<unsigned, double> hyperparameters;
  for (unsigned i = 0; i < numArgs; ++i) {
    names.push_back(tofu::getFileTensorName(step, i));
    isState.push_back(step.getArgAttr(i, attrs::kStateOf) != nullptr);
    isWeight.push_back(step.getArgAttr(i, attrs::kWeight) != nullptr);
    auto hyper = step.getArgAttrOfType<FloatAttr>(i, attrs::kHyperparameter);
    if (hyper)
      hyperparameters[i] = learningRate > 0 ? double(learningRate)
                                            : hyper.getValueAsDouble();
    isData.push_back(!isState[i] && !isWeight[i] && !hyper);
  }
  auto globalType = [&](unsigned i) {
    return cast<RankedTensorType>(globalOf.getArgumentTypes()[i]);
  };
  auto unranked = [&](Value buffer) {
    auto type = cast<MemRefType>(buffer.getType());
    return memref::CastOp::create(
        b, d.loc, UnrankedMemRefType::get(type.getElementType(), 0), buffer);
  };
  auto zeros = [&](int64_t rank) {
    return d.constantInts(SmallVector<int64_t>(rank, 0));
  };

  // Initial values: the same global values for the step and the reference.
  SmallVector<Value> args, refArgs;
  SmallVector<RankBoxes> argBoxes;
  for (unsigned i = 0; i < numArgs; ++i) {
    auto local = cast<RankedTensorType>(step.getArgumentTypes()[i]);
    RankedTensorType global = globalType(i);
    FailureOr<RankBoxes> boxes = getArgBoxes(step, i, global, grid);
    if (failed(boxes))
      return signalPassFailure();
    argBoxes.push_back(*boxes);
    bool state = isState[i], weight = isWeight[i];
    auto hyper = hyperparameters.find(i);
    auto fill = [&](RankedTensorType type, Value offsets) -> Value {
      auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
      Value buffer = memref::AllocOp::create(b, d.loc, memrefType);
      Type element = type.getElementType();
      if (hyper != hyperparameters.end()) {
        Value value = arith::ConstantOp::create(
            b, d.loc, b.getFloatAttr(element, hyper->second));
        linalg::FillOp::create(b, d.loc, ValueRange{value}, ValueRange{buffer});
      } else if (state) {
        // A zero buffer of its own for each state argument: zero fills of
        // tensor.empty would be merged by CSE into one buffer shared by
        // all the states of a shape, and the first step would then start
        // with fewer buffers than the later ones (which get a result
        // buffer per state), so the GPU runtime's cache could not serve
        // the second step from the blocks of the first.
        Value zero = arith::ConstantOp::create(b, d.loc,
                                               b.getFloatAttr(element, 0.0));
        linalg::FillOp::create(b, d.loc, ValueRange{zero}, ValueRange{buffer});
      } else {
        bool index = element.isInteger();
        int64_t code = getTypeCode(element);
        // One declaration per element type of the unranked buffer.
        StringRef callee = code == 2   ? "tofu_fill_hash_i32"
                           : code == 3 ? "tofu_fill_hash_i64"
                                       : "tofu_fill_hash";
        d.call(callee,
               {unranked(buffer), offsets, d.constantInts(global.getShape()),
                d.i64(seed), d.i64(i + 1),
                d.f64(index    ? double(intBound)
                      : weight ? weightScale(globalOf, i, global,
                                             reference || grid.size() == 1)
                               : 1.0),
                d.i64(weight ? 0 : 1), d.i64(code)});
      }
      // The file's values, where a file gives them.
      if ((weight || state) && initOrResume)
        d.call(("tofu_io_load_" + getTypeSuffix(element)).str(),
               {d.string(names[i]), unranked(buffer), offsets,
                d.constantInts(global.getShape()), d.i64(state ? 1 : 0)});
      return bufferization::ToTensorOp::create(b, d.loc, type, buffer,
                                               /*restrict=*/true,
                                               /*writable=*/true);
    };
    args.push_back(fill(local, d.rankRow(*boxes, local.getRank())));
    if (this->reference)
      refArgs.push_back(fill(global, zeros(global.getRank())));
  }
  // Stops the job (with every problem of the files) before the first step.
  Value start = io ? d.call("tofu_io_start", {}, {b.getI64Type()}) : d.i64(0);
  // The samples of a step: the global batch of the first data argument.
  int64_t samples = 0;
  for (unsigned i = 0; i < numArgs && !samples; ++i)
    if (isData[i] && globalType(i).getRank() > 0)
      samples = globalType(i).getDimSize(0);
  d.call("tofu_log_open",
         {d.string(logFile), d.i64(logEvery), d.i64(steps), d.i64(samples)});

  // A batch of the data file for data argument `i` at step `s`.
  auto batch = [&](unsigned i, RankedTensorType type, Value offsets,
                   Value s) -> Value {
    auto memrefType = MemRefType::get(type.getShape(), type.getElementType());
    Value buffer = memref::AllocOp::create(b, d.loc, memrefType);
    d.call(("tofu_io_batch_" + getTypeSuffix(type.getElementType())).str(),
           {d.string(names[i]), unranked(buffer), offsets,
            d.constantInts(globalType(i).getShape()), s});
    return bufferization::ToTensorOp::create(b, d.loc, type, buffer,
                                             /*restrict=*/true,
                                             /*writable=*/true);
  };
  auto toF64 = [&](Value loss) -> Value {
    Value scalar = tensor::ExtractOp::create(b, d.loc, loss, ValueRange{});
    if (scalar.getType().isF32())
      scalar = arith::ExtFOp::create(b, d.loc, b.getF64Type(), scalar);
    return scalar;
  };
  auto typeCode = [](Value v) {
    return getTypeCode(cast<RankedTensorType>(v.getType()).getElementType());
  };

  // The values that one step hands the next: the arguments (of the step
  // and of the reference) and the largest difference so far.
  struct Carry {
    SmallVector<Value> args, refArgs;
    Value worst;
  };
  // One step `s` (an i64) from `in`.
  auto emitStep = [&](Value s, const Carry &in) -> Carry {
    SmallVector<Value> callArgs = in.args, refCallArgs = in.refArgs;
    if (!dataFile.empty())
      for (unsigned i = 0; i < numArgs; ++i) {
        if (!isData[i])
          continue;
        auto local = cast<RankedTensorType>(step.getArgumentTypes()[i]);
        callArgs[i] = batch(i, local, d.rankRow(argBoxes[i], local.getRank()),
                            s);
        if (this->reference)
          refCallArgs[i] = batch(i, globalType(i),
                                 zeros(globalType(i).getRank()), s);
      }
    auto call = func::CallOp::create(b, d.loc, step, callArgs);
    SmallVector<Value> results(call.getResults());
    Carry out = in;
    Value loss = toF64(results[0]);
    Value refLoss = d.f64(0.0);
    SmallVector<Value> refResults;
    if (this->reference) {
      auto refCall = func::CallOp::create(b, d.loc, reference, refCallArgs);
      refResults.assign(refCall.getResults().begin(),
                        refCall.getResults().end());
      refLoss = toF64(refResults[0]);
      Value diff = d.call("tofu_max_difference",
                          {d.view(results[0]), d.view(refResults[0]),
                           d.constantInts({}), d.i64(typeCode(results[0]))},
                          {b.getF64Type()});
      out.worst = arith::MaximumFOp::create(b, d.loc, in.worst, diff);
    }
    d.call("tofu_print_loss",
           {s, loss, d.i64(this->reference ? 1 : 0), refLoss});
    for (unsigned r = 0; r < feeds.size(); ++r) {
      if (feeds[r] < 0)
        continue;
      out.args[feeds[r]] = results[r];
      if (this->reference)
        out.refArgs[feeds[r]] = refResults[r];
      if (saveFile.empty())
        continue;
      auto type = cast<RankedTensorType>(results[r].getType());
      d.call(("tofu_io_save_" + getTypeSuffix(type.getElementType())).str(),
             {d.string(names[feeds[r]]), d.view(results[r]),
              d.rankRow(argBoxes[feeds[r]], type.getRank()),
              d.constantInts(globalType(feeds[r]).getShape())});
    }
    if (!saveFile.empty())
      d.call("tofu_io_save_end",
             {arith::AddIOp::create(b, d.loc, s, d.i64(1))});
    return out;
  };

  Carry carry{args, refArgs, d.f64(0.0)};
  if (unroll) {
    for (unsigned s = 0; s < steps; ++s)
      carry = emitStep(d.i64(s), carry);
  } else {
    // The loop carries the fed arguments (and the reference's) and the
    // largest difference; the other arguments stay as they are.
    SmallVector<unsigned> fed;
    for (int a : feeds)
      if (a >= 0 && !llvm::is_contained(fed, unsigned(a)))
        fed.push_back(a);
    SmallVector<Value> inits;
    for (unsigned a : fed)
      inits.push_back(carry.args[a]);
    if (this->reference) {
      for (unsigned a : fed)
        inits.push_back(carry.refArgs[a]);
      inits.push_back(carry.worst);
    }
    auto index = [&](Value v) {
      return arith::IndexCastOp::create(b, d.loc, b.getIndexType(), v);
    };
    auto loop = scf::ForOp::create(
        b, d.loc, index(start), index(d.i64(steps)),
        arith::ConstantIndexOp::create(b, d.loc, 1), inits);
    OpBuilder::InsertionGuard guard(b);
    Block *body = loop.getBody();
    if (body->mightHaveTerminator())
      b.setInsertionPoint(body->getTerminator());
    else
      b.setInsertionPointToEnd(body);
    Carry in = carry;
    ValueRange iterArgs = loop.getRegionIterArgs();
    for (auto [k, a] : llvm::enumerate(fed)) {
      in.args[a] = iterArgs[k];
      if (this->reference)
        in.refArgs[a] = iterArgs[fed.size() + k];
    }
    if (this->reference)
      in.worst = iterArgs.back();
    Value s = arith::IndexCastOp::create(b, d.loc, b.getI64Type(),
                                         loop.getInductionVar());
    Carry out = emitStep(s, in);
    if (!inits.empty()) {
      SmallVector<Value> yields;
      for (unsigned a : fed)
        yields.push_back(out.args[a]);
      if (this->reference) {
        for (unsigned a : fed)
          yields.push_back(out.refArgs[a]);
        yields.push_back(out.worst);
      }
      scf::YieldOp::create(b, d.loc, yields);
    }
    b.setInsertionPointAfter(loop);
    ValueRange finals = loop.getResults();
    for (auto [k, a] : llvm::enumerate(fed)) {
      carry.args[a] = finals[k];
      if (this->reference)
        carry.refArgs[a] = finals[fed.size() + k];
    }
    if (this->reference)
      carry.worst = finals.back();
  }

  if (this->reference) {
    // Every final weight and optimizer state against the reference,
    // element by element and in relative norm.
    Value worst = carry.worst, worstNorm = d.f64(0.0);
    for (unsigned r = 0; r < feeds.size(); ++r) {
      if (feeds[r] < 0)
        continue;
      Value mine = carry.args[feeds[r]], theirs = carry.refArgs[feeds[r]];
      auto type = cast<RankedTensorType>(mine.getType());
      SmallVector<Value> operands{
          d.view(mine), d.view(theirs),
          d.rankRow(argBoxes[feeds[r]], type.getRank()),
          d.i64(typeCode(mine))};
      Value diff =
          d.call("tofu_max_difference", operands, {b.getF64Type()});
      worst = arith::MaximumFOp::create(b, d.loc, worst, diff);
      Value norm =
          d.call("tofu_norm_difference", operands, {b.getF64Type()});
      worstNorm = arith::MaximumFOp::create(b, d.loc, worstNorm, norm);
    }
    d.call("tofu_print_difference", {worst, worstNorm});
  }
  // The statistics are per step of this run.
  d.call("tofu_print_statistics",
         {arith::SubIOp::create(b, d.loc, d.i64(steps), start)});
  d.call("tofu_finalize", {});
  func::ReturnOp::create(b, d.loc);
  // Without reference=1 nothing calls the unpartitioned step that
  // tofu-partition kept beside the partitioned one: lowering and compiling
  // it took half of a partitioned step's compile time.
  if (reference && !this->reference &&
      SymbolTable::symbolKnownUseEmpty(reference, module))
    reference.erase();
}
