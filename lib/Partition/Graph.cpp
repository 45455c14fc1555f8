//===- Graph.cpp - The dataflow graph the search partitions ---------------===//

#include "tofu/Partition/Graph.h"

using namespace tofu;

/// True when operator `node` fills its output with a scalar input (its
/// other input, the init, unread), which tofu-partition rebuilds on every
/// rank instead of moving.
static bool isScalarFill(const OpNode &node) {
  const tdl::OpDesc &desc = *node.desc;
  if (desc.outputs.size() != 1 || desc.outputs[0].reducer != tdl::Reducer::None)
    return false;
  const tdl::Expr &body = desc.outputs[0].body;
  if (body.kind != tdl::Expr::Kind::Access)
    return false;
  for (size_t j = 0; j < desc.inputs.size() && j < node.inputs.size(); ++j)
    if (desc.inputs[j] == body.name)
      return node.inputs[j] < 0 && body.indices.empty();
  return false;
}

bool Graph::isRebuilt(int t) const {
  const TensorNode &node = tensors[t];
  if (node.producer < 0)
    return node.role == TensorRole::Activation;
  return isScalarFill(ops[node.producer]);
}

const char *tofu::stringifyTensorRole(TensorRole role) {
  switch (role) {
  case TensorRole::Input:
    return "input";
  case TensorRole::Weight:
    return "weight";
  case TensorRole::OptimizerState:
    return "optimizer-state";
  case TensorRole::Gradient:
    return "gradient";
  case TensorRole::Activation:
    return "activation";
  }
  return "?";
}

std::string tofu::checkTensorSize(const Shape &shape, int64_t elementBytes) {
  std::string text;
  for (size_t d = 0; d < shape.size(); ++d)
    text += (d ? "x" : "") + std::to_string(shape[d]);
  if (shape.empty())
    text = "scalar";
  if (elementBytes < 1)
    return "tensor of shape " + text + " has elements of " +
           std::to_string(elementBytes) + " bytes";
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return "tensor of shape " + text + " has a negative dimension";
    // Checked: elements <= 2^40 before the product, so only d can overflow.
    if (d > kMaxTensorElements ||
        (d != 0 && elements > kMaxTensorElements / d))
      elements = kMaxTensorElements + 1;
    else
      elements *= d;
  }
  if (elements > kMaxTensorElements ||
      (elements != 0 && elementBytes > kMaxTensorBytes / elements))
    return "tensor of shape " + text + " with " + std::to_string(elementBytes) +
           "-byte elements is larger than the cost model can represent (at "
           "most 2^40 elements and 2^48 bytes)";
  return "";
}

std::string Graph::finalize() {
  users.assign(tensors.size(), {});
  int numTensors = tensors.size();

  for (size_t o = 0; o < ops.size(); ++o) {
    const OpNode &op = ops[o];
    std::string where = "op " + std::to_string(o) + " (" + op.name + ")";
    if (!op.desc)
      return where + " has no description";
    if (op.inputs.size() != op.desc->inputs.size() ||
        op.shapes.inputs.size() != op.inputs.size())
      return where + ": input count does not match its description";
    if (op.outputs.size() != op.desc->outputs.size() ||
        op.shapes.outputs.size() != op.outputs.size())
      return where + ": output count does not match its description";
    for (unsigned i = 0; i < op.inputs.size(); ++i) {
      int t = op.inputs[i];
      if (t < -1 || t >= numTensors)
        return where + ": input " + std::to_string(i) + " is out of range";
      if (t >= 0 && tensors[t].shape != op.shapes.inputs[i])
        return where + ": input " + std::to_string(i) +
               " shape differs from tensor " + tensors[t].name;
      if (t >= 0)
        users[t].push_back({(int)o, i});
    }
    for (unsigned i = 0; i < op.outputs.size(); ++i) {
      int t = op.outputs[i];
      if (t < -1 || t >= numTensors)
        return where + ": output " + std::to_string(i) + " is out of range";
      if (t >= 0 && tensors[t].shape != op.shapes.outputs[i])
        return where + ": output " + std::to_string(i) +
               " shape differs from tensor " + tensors[t].name;
    }
    if (op.forwardOf >= (int)ops.size() || op.updateOf >= numTensors)
      return where + ": metadata is out of range";
  }
  for (const TensorNode &t : tensors)
    if (t.producer >= (int)ops.size() || t.gradientOf >= numTensors ||
        t.stateOf >= numTensors)
      return "tensor " + t.name + ": metadata is out of range";
  return "";
}

bool Graph::isModelState(int t) const {
  // Gradients of gradients do not occur; a few hops bound the walk.
  for (int hops = 0; t >= 0 && hops < 4; ++hops) {
    const TensorNode &tn = tensors[t];
    if (tn.role == TensorRole::Weight ||
        tn.role == TensorRole::OptimizerState || tn.stateOf >= 0)
      return true;
    t = tn.gradientOf;
  }
  return false;
}
