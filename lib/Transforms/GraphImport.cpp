//===- GraphImport.cpp - From a function to the search's graph ------------===//

#include "tofu/Transforms/GraphImport.h"
#include "tofu/Dialect/TDL/Interfaces/TDLOpInterface.h"
#include "tofu/Dialect/TDL/Transforms/OpDescription.h"
#include "tofu/Transforms/TrainingAttributes.h"
#include "tofu/Transforms/TrainingSignature.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/DenseMap.h"

using namespace mlir;
using namespace tofu;

bool tofu::hasDescribedOps(func::FuncOp func) {
  if (func.isExternal())
    return false;
  for (Operation &op : func.getBody().front())
    if (tdl::getAttachedDesc(&op))
      return true;
  return false;
}

static std::optional<int64_t> getIntAttr(Operation *op, StringRef name) {
  return attrs::getInt64(op->getAttr(name));
}

/// The size in bytes of a tensor element: integers and floats rounded up to
/// whole bytes, complex numbers twice their parts. std::nullopt for types
/// without a fixed size (index) or that the search does not know.
static std::optional<int64_t> getElementBytes(Type type) {
  if (auto complex = dyn_cast<ComplexType>(type)) {
    std::optional<int64_t> part = getElementBytes(complex.getElementType());
    return part ? std::optional<int64_t>(2 * *part) : std::nullopt;
  }
  if (isa<IntegerType, FloatType>(type))
    return std::max<int64_t>(1, (type.getIntOrFloatBitWidth() + 7) / 8);
  return std::nullopt;
}

/// Fails with an error on `where` if `type` is a static tensor whose
/// elements have no size the cost model can count, or that is too large for
/// it.
static LogicalResult checkTensorType(Type type, Location where,
                                     StringRef what) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  if (!tensor || !tensor.hasStaticShape())
    return success();
  std::optional<int64_t> bytes = getElementBytes(tensor.getElementType());
  if (!bytes)
    return emitError(where, "tofu-search: ")
           << what << " has element type " << tensor.getElementType()
           << ", whose size in bytes is unknown (expected integers, floats or "
              "complex numbers)";
  std::string error = checkTensorSize(
      Shape(tensor.getShape().begin(), tensor.getShape().end()), *bytes);
  if (!error.empty())
    return emitError(where, "tofu-search: ") << what << ": " << error;
  return success();
}

FailureOr<ImportedGraph> tofu::importGraph(func::FuncOp func) {
  ImportedGraph out;
  Graph &g = out.graph;
  if (!func.getBody().hasOneBlock())
    return mlir::emitError(func.getLoc(), "tofu-search: functions with more than one block "
                          "(control flow) are not supported");
  Block &body = func.getBody().front();
  for (BlockArgument arg : body.getArguments())
    if (failed(checkTensorType(
            arg.getType(), func.getLoc(),
            "argument " + std::to_string(arg.getArgNumber()))))
      return failure();
  for (Operation &op : body)
    for (OpResult r : op.getResults())
      if (failed(checkTensorType(r.getType(), op.getLoc(),
                                  "result " +
                                      std::to_string(r.getResultNumber()) +
                                      " of '" +
                                      op.getName().getStringRef().str() +
                                      "'")))
        return failure();
  llvm::DenseMap<Value, int> tensorOf;
  llvm::DenseMap<int64_t, Operation *> forwardById;
  llvm::DenseMap<Operation *, int> opIndex;
  // One shared description per uniqued attribute, so that equal
  // descriptions are the same object (coarsening compares identities).
  llvm::DenseMap<Attribute, std::shared_ptr<const tdl::OpDesc>> descs;

  auto lookup = [&](Value v) -> int {
    auto it = tensorOf.find(v);
    return it == tensorOf.end() ? -1 : it->second;
  };
  auto getTensor = [&](Value v) -> int {
    auto it = tensorOf.find(v);
    if (it != tensorOf.end())
      return it->second;
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !type.hasStaticShape())
      return -1;
    TensorNode t;
    // Arguments keep their number; results are named by tensor id (the
    // plan's JSON and the tofu.tilings attributes connect the two).
    if (auto arg = dyn_cast<BlockArgument>(v))
      t.name = "%arg" + std::to_string(arg.getArgNumber());
    else
      t.name = "%t" + std::to_string(g.tensors.size());
    t.shape.assign(type.getShape().begin(), type.getShape().end());
    t.elementBytes = *getElementBytes(type.getElementType());
    int id = g.tensors.size();
    g.tensors.push_back(std::move(t));
    out.values.push_back(v);
    tensorOf[v] = id;
    return id;
  };

  // Arguments first: their ids are their argument numbers where tensors.
  for (BlockArgument arg : body.getArguments()) {
    int t = getTensor(arg);
    if (t < 0)
      continue;
    unsigned i = arg.getArgNumber();
    if (func.getArgAttr(i, attrs::kWeight))
      g.tensors[t].role = TensorRole::Weight;
    else if (func.getArgAttr(i, attrs::kStateOf))
      g.tensors[t].role = TensorRole::OptimizerState;
    else
      g.tensors[t].role = TensorRole::Input;
  }
  for (BlockArgument arg : body.getArguments())
    if (std::optional<int64_t> of = attrs::getInt64(
            func.getArgAttr(arg.getArgNumber(), attrs::kStateOf)))
      if (lookup(arg) >= 0 && *of >= 0 &&
          *of < (int64_t)body.getNumArguments())
        g.tensors[lookup(arg)].stateOf = lookup(body.getArgument(*of));

  for (Operation &op : body) {
    if (auto id = getIntAttr(&op, attrs::kOpId))
      forwardById[*id] = &op;
    tdl::DescAttr attr = tdl::getAttachedDesc(&op);
    if (!attr) {
      if (tdl::needsDescription(&op))
        return op.emitError("operation has no TDL description; run "
                            "tdl-attach first or describe it in a library");
      // Sources (tensor.empty, constants): their results are tensors.
      for (Value r : op.getResults())
        getTensor(r);
      continue;
    }
    std::string reason;
    FailureOr<OpShapes> shapes = tdl::getOpShapes(&op, reason);
    if (failed(shapes))
      return op.emitError("cannot partition: ") << reason;
    std::shared_ptr<const tdl::OpDesc> &shared = descs[attr];
    if (!shared)
      shared = std::make_shared<const tdl::OpDesc>(attr.getDesc());
    const tdl::OpDesc &desc = *shared;
    // The IR may carry descriptions that tdl-attach never checked.
    std::optional<LoopSpace> space = inferLoopSpace(desc, *shapes, reason);
    if (!space || !checkAccessBounds(desc, *shapes, *space, reason))
      return op.emitError("tofu-search: the TDL description does not fit "
                          "the operation: ")
             << reason;
    // Captured tensors (a gather's table) are inputs after the operands.
    SmallVector<Value> inputs = tdl::getDescribedInputs(&op);
    if (desc.inputs.size() != inputs.size() ||
        desc.outputs.size() != op.getNumResults())
      return op.emitError("the TDL description has ")
             << desc.inputs.size() << " inputs and " << desc.outputs.size()
             << " outputs but the operation has " << inputs.size()
             << " operands and captured tensors and " << op.getNumResults()
             << " results";
    OpNode node;
    node.name = op.getName().getStringRef().str();
    node.desc = shared;
    node.shapes = std::move(*shapes);
    for (Value v : inputs)
      node.inputs.push_back(getTensor(v));
    node.firstCaptured = op.getNumOperands();
    int index = g.ops.size();
    for (Value r : op.getResults()) {
      int t = getTensor(r);
      node.outputs.push_back(t);
      if (t >= 0)
        g.tensors[t].producer = index;
    }
    node.gradientAccumulation = op.hasAttr(attrs::kGradientAccumulation);
    node.backward =
        op.hasAttr(attrs::kBackwardOf) ||
        (op.hasAttr(attrs::kGradientOf) && !op.hasAttr(attrs::kOpId));
    if (auto of = getIntAttr(&op, attrs::kBackwardOf)) {
      Operation *fwd = forwardById.lookup(*of);
      if (fwd && opIndex.count(fwd))
        node.forwardOf = opIndex[fwd];
    }
    if (auto w = getIntAttr(&op, attrs::kUpdateOf);
        w && *w >= 0 && *w < (int64_t)body.getNumArguments()) {
      node.updateOf = lookup(body.getArgument(*w));
      for (int t : node.outputs)
        if (t >= 0)
          g.tensors[t].stateOf = node.updateOf;
    }
    if (auto of = op.getAttrOfType<DenseI64ArrayAttr>(attrs::kGradientOf);
        of && of.size() == 2) {
      int forward = -1;
      if (of[0] < 0 && of[1] >= 0 && of[1] < (int64_t)body.getNumArguments())
        forward = lookup(body.getArgument(of[1]));
      else if (Operation *fwd = forwardById.lookup(of[0]);
               fwd && of[1] >= 0 && of[1] < (int64_t)fwd->getNumResults())
        forward = lookup(fwd->getResult(of[1]));
      if (forward >= 0)
        for (int t : node.outputs)
          if (t >= 0) {
            g.tensors[t].gradientOf = forward;
            g.tensors[t].role = TensorRole::Gradient;
          }
    }
    opIndex[&op] = index;
    out.ops.push_back(&op);
    g.ops.push_back(std::move(node));
  }
  if (auto ret = dyn_cast<func::ReturnOp>(body.getTerminator())) {
    SmallVector<int> fed = getFedArguments(func);
    for (auto [i, v] : llvm::enumerate(ret.getOperands()))
      if (i < fed.size() && fed[i] >= 0 &&
          func.getArgument(fed[i]).getType() == v.getType() &&
          lookup(v) >= 0 && lookup(func.getArgument(fed[i])) >= 0)
        g.feeds.push_back({lookup(v), lookup(func.getArgument(fed[i]))});
  }
  std::string error = g.finalize();
  if (!error.empty())
    return mlir::emitError(func.getLoc(), "internal error importing the graph: ") << error;
  return out;
}
