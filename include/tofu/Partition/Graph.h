//===- Graph.h - The dataflow graph the search partitions -------*- C++ -*-===//
//
// An MLIR-free view of a training step: tensors and the operators that read
// and write them, each operator with its TDL description and concrete
// shapes. The metadata that tofu-autodiff and tofu-optimizer leave on the IR
// (which forward operator a backward operator belongs to, which tensor a
// gradient is of, which weight an update is of) is kept so that coarsening
// can group the graph as Tofu §5.1 does.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_GRAPH_H
#define TOFU_PARTITION_GRAPH_H

#include "tofu/Partition/Strategy.h"

#include <memory>
#include <string>
#include <vector>

namespace tofu {

/// What a tensor is in a training step; the memory estimate and the picture
/// use it.
enum class TensorRole {
  Input,          // data or labels
  Weight,         // a trainable weight
  OptimizerState, // optimizer state (momentum, Adam moments, step count)
  Gradient,       // a gradient or a partial gradient
  Activation,     // any other intermediate
};

const char *stringifyTensorRole(TensorRole role);

/// The largest tensor the cost model represents: element counts times the
/// largest split factor (2^20 devices) and byte counts must stay far from
/// int64_t overflow.
inline constexpr int64_t kMaxTensorElements = int64_t(1) << 40;
inline constexpr int64_t kMaxTensorBytes = int64_t(1) << 48;

/// Checks that a tensor of `shape` with `elementBytes`-byte elements is
/// within kMaxTensorElements and kMaxTensorBytes, without overflowing.
/// Returns an error message, or "" when it is.
std::string checkTensorSize(const Shape &shape, int64_t elementBytes);

struct TensorNode {
  std::string name;
  Shape shape;
  int64_t elementBytes = 4;
  TensorRole role = TensorRole::Activation;
  /// The operator that produces the tensor, or -1 for function arguments and
  /// values from operators without a description.
  int producer = -1;
  /// For a gradient (or partial gradient): the tensor it is the gradient of.
  int gradientOf = -1;
  /// For optimizer state and updated weights: the weight tensor.
  int stateOf = -1;
};

struct OpNode {
  std::string name;
  std::shared_ptr<const tdl::OpDesc> desc;
  OpShapes shapes;
  /// The tensor of every description input and output; -1 for scalars.
  std::vector<int> inputs;
  /// Inputs from this position on are captured by the operation's body (a
  /// gather's table) rather than passed as operands; the generated program
  /// reads them whole.
  unsigned firstCaptured = ~0u;
  std::vector<int> outputs;
  /// Backward operators: the forward operator whose adjoint they compute.
  int forwardOf = -1;
  /// Operators of the backward pass (forwardOf may still be -1, e.g. for the
  /// seed of the loss gradient).
  bool backward = false;
  /// The sum that accumulates the gradients of a tensor used more than once.
  bool gradientAccumulation = false;
  /// Optimizer operators: the weight tensor they update.
  int updateOf = -1;
};

struct Graph {
  std::vector<TensorNode> tensors;
  std::vector<OpNode> ops;
  /// Returned tensors that the next step takes back as an argument (an
  /// updated weight or state), as (returned tensor, argument tensor): the
  /// program returns them in the argument's layout.
  std::vector<std::pair<int, int>> feeds;
  /// Filled by finalize(): for every tensor, its readers as (op, input).
  std::vector<std::vector<std::pair<int, unsigned>>> users;

  /// Weights, optimizer state, updated weights, and the gradients of any of
  /// them: what data parallelism replicates and the memory estimate counts
  /// as model state.
  bool isModelState(int t) const;

  /// Tensors that tofu-partition builds on every rank where they are read
  /// instead of moving them: values without a producer that are not
  /// arguments (tensor.empty, constants) and fills of a scalar.
  bool isRebuilt(int t) const;

  /// Computes `users` and checks that every index is in range and every
  /// operator's shapes match its tensors. Returns an error message or "".
  std::string finalize();
};

} // namespace tofu

#endif // TOFU_PARTITION_GRAPH_H
