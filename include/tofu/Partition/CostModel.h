//===- CostModel.h - The cost model of one search step ----------*- C++ -*-===//
//
// The cost model (Lemma 1 of the Tofu technical report, on the tensors of
// one step):
//
//  - At a step of k workers, every tensor is tiled (cut along one dimension,
//    or, with `replication`, replicated) over its current local shape L, and
//    every operator runs one partition-n-reduce strategy over its current
//    local instance.
//  - An operator input costs the elements the workers must fetch to hold
//    the regions the strategy reads, given the tensor's tiling; an output
//    costs the conversion from what the strategy produces (a cut, partial
//    values, or a replica) to the tensor's tiling.
//  - Both are computed exactly on the operator's local operand shape Q. When
//    an earlier step made Q differ from the tensor's local shape L (the
//    operator fetched more than the tensor's tile), the count is scaled by
//    |L| / |Q|, keeping the cost a weight times the tensor size.
//  - A step's cost is the sum over edges, times the number of groups that
//    run it (Eq. 3), in bytes. The plan's cost is the sum over steps.
//
// Cuts whose dimension (or loop extent) does not divide by k are excluded.
// A tensor with no divisible dimension is replicated, an operator with no
// even strategy runs replicated (it reads whole inputs and produces
// replicas); the plan records a remark for each.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PARTITION_COSTMODEL_H
#define TOFU_PARTITION_COSTMODEL_H

#include "tofu/Partition/Coarsening.h"
#include "tofu/Partition/Graph.h"
#include "tofu/Partition/Topology.h"

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace tofu {

enum class Algorithm {
  Tofu,          // coarsening + exact DP per step + recursion
  BruteForce,    // exhaustive per step, no coarsening (small graphs)
  DataParallel,  // weights replicated, everything else cut on dimension 0
  BatchParallel, // weights replicated, the inputs' batch dimension followed
  AllRowGreedy,  // every tensor cut on dimension 0, best strategy per op
  Spartan,       // largest tensor first, greedy
  EqualChop,     // the DP, but one step of k: one dimension per tensor
  ICML18,        // the DP without output-reduction strategies
};

std::optional<Algorithm> parseAlgorithm(const std::string &name);
const char *stringifyAlgorithm(Algorithm algorithm);

struct SearchOptions {
  Algorithm algorithm = Algorithm::Tofu;
  /// Add SOYBEAN's replicated tiling to every tensor's choices. Operators
  /// still split their work.
  bool replication = false;
  /// BatchParallel: the dimension of every input (data and labels) that
  /// holds the batch.
  unsigned batchDim = 0;
  /// Tofu §5.1 coarsening. Each step is first solved on the uncoarsened
  /// graph; the coarsened graph (whose ties shrink the tables) is only used
  /// when that DP's tables would exceed `maxTableSize` (the step is then not
  /// exact). Without coarsening the DP fixes variables greedily instead.
  CoarsenOptions coarsen;
  /// The largest DP table before the search fixes variables greedily.
  uint64_t maxTableSize = 1u << 22;
  /// The largest number of assignments brute force enumerates.
  uint64_t maxBruteForce = 1u << 24;
  /// The largest number of values one coarse node may have before its slots
  /// become separate DP variables (the DP stays exact).
  uint64_t maxNodeValues = 4;
  /// Tofu: sweeps of the refinement that re-solves each step with the other
  /// steps fixed, minimising what the generated program moves
  /// (ProgramCost.h) instead of the step model; 0 disables it.
  unsigned refineSweeps = 2;
  /// Tofu: run the recursion a second time with the conversions that the
  /// program shares counted once (StepSearch.h, searchStep's
  /// `sharedReads`), and keep that plan when the program moves fewer bytes
  /// with it.
  bool sharedReads = true;
};

/// An operator's choice at one step: the loop variable it cuts, or -1 when
/// it runs replicated.
struct OpChoice {
  int var = -1;
  bool operator==(const OpChoice &o) const { return var == o.var; }
};

/// The local shapes before a step.
struct StepState {
  std::vector<Shape> tensorShapes;
  std::vector<OpShapes> opShapes;
  /// Operators whose local instance no longer fits their description.
  std::vector<bool> opBroken;
  /// Worker groups that run the step.
  int64_t groups = 1;

  static StepState initial(const Graph &graph);
};

/// What an operator does at one step, with the cost of each operand.
struct OpStep {
  OpChoice choice;
  /// The loop variable's name, or "replicated".
  std::string strategy;
  /// Per input: "unread", "whole" (every worker reads all of it), "cut(d)"
  /// (balanced chunks along d) or "region" (anything else: halos, strides,
  /// slices); per output: the tiling produced.
  std::vector<std::string> needs;
  /// Per input, for "region" needs: the box each worker reads.
  std::vector<std::vector<Box>> regions;
  std::vector<Tiling> produces;
  std::vector<double> inputBytes, outputBytes;
};

struct PlanStep {
  unsigned k = 2;
  unsigned level = 0;
  int64_t groups = 1;
  StepState before;
  std::vector<Tiling> tilings;
  std::vector<OpStep> ops;
  double bytes = 0;
  /// True when the step was chosen by the DP (not by a baseline heuristic,
  /// and not imported).
  bool searched = false;
  /// True when the DP proved the step optimal over the step's whole search
  /// space, with no coarsening ties: false when it had to fix variables
  /// greedily, or fell back to the coarsened graph.
  bool exact = false;
  /// True when the uncoarsened DP did not fit and the step was searched on
  /// the coarsened graph (exact over its ties only when `exact` would have
  /// been: see `coarsenedExact`).
  bool coarsened = false;
  /// For a coarsened step: the DP was exact over the coarsened graph.
  bool coarsenedExact = false;
  /// True when the DP minimised the step's cost with the conversions that
  /// the program shares counted once (StepSearch.h, `sharedReads`) rather
  /// than the step model; `exact` is then false.
  bool sharedReads = false;
  /// True when no tensor could be cut at this step (see
  /// StepModel::degenerate); the plan then carries a warning.
  bool degenerate = false;
  /// The solver's objective for the step; equals `bytes` unless the step
  /// was searched with shared reads (StepSearch.h) (a tested
  /// invariant of the min-sum encoding).
  double objective = 0;
};

class StepModel;

struct Plan {
  Plan() = default;
  /// A plan of `options.algorithm` for `topology`, with no steps yet.
  Plan(const Topology &topology, const SearchOptions &options);

  Algorithm algorithm = Algorithm::Tofu;
  bool replication = false;
  Topology topology;
  std::vector<PlanStep> steps;
  /// The step model's cost: the sum of the steps' bytes (Eq. 3).
  double totalBytes = 0;
  /// What the generated SPMD program moves per training step, summed over
  /// ranks (ProgramCost.h); -1 when it could not be evaluated.
  double programBytes = -1;
  /// The same per tensor.
  std::vector<double> programTensorBytes;
  std::vector<std::string> remarks;
  /// Steps whose plan costs memory without communicating (degenerate
  /// steps), with the memory they cost.
  std::vector<std::string> warnings;

  /// Each tensor's shape on one device after every step.
  std::vector<Shape> getFinalTensorShapes(const Graph &graph) const;

  /// Appends `step`, chosen on `model`, and returns the local shapes after
  /// it. A degenerate step gets a warning with the memory it costs: every
  /// worker of a group holds every tensor whole.
  StepState addStep(const StepModel &model, PlanStep step);
};

/// Strategy sets of operator instances, shared across steps and searches.
class StrategyCache {
public:
  /// The strategies of `desc` on `shapes` for k workers, or null with the
  /// reason in `error`.
  const StrategySet *get(const tdl::OpDesc &desc, const OpShapes &shapes,
                         unsigned k, std::string &error);

private:
  std::unordered_map<std::string, std::shared_ptr<StrategySet>> sets;
  std::unordered_map<std::string, std::string> failures;
};

/// The feasible choices and the edge costs of one step.
class StepModel {
public:
  StepModel(const Graph &graph, const StepState &state, unsigned k,
            const SearchOptions &options, StrategyCache &cache);

  const Graph &graph;
  const StepState &state;
  unsigned k;

  /// Feasible tilings per tensor and choices per operator.
  std::vector<std::vector<Tiling>> tensorOptions;
  std::vector<std::vector<OpChoice>> opOptions;
  /// True when no tensor has a dimension divisible by k: every tensor is
  /// replicated and the step divides nothing.
  bool degenerate = false;
  /// Remarks about fallbacks.
  std::vector<std::string> remarks;

  /// Edge costs that replace the step model's (the refinement's program
  /// costs): per operator and operand, indexed by the choice's position in
  /// `opOptions` times the tensor's number of options plus the tiling's
  /// position in `tensorOptions`.
  struct EdgeCosts {
    std::vector<std::vector<std::vector<double>>> inputs, outputs;
  };
  const EdgeCosts *edgeCosts = nullptr;

  /// Bytes for operand `j` of `op` under `choice`, given the tensor's tiling.
  double inputCost(int op, unsigned j, OpChoice choice, Tiling tiling) const;
  double outputCost(int op, unsigned j, OpChoice choice, Tiling tiling) const;
  /// Whether `choice` reads operand `j` of `op` whole on every worker, with
  /// the operand at the tensor's local shape: such readers can share one
  /// replica of the tensor.
  bool readsWhole(int op, unsigned j, OpChoice choice) const;
  /// Bytes that make tensor `t`, tiled as `tiling`, whole on every worker
  /// (what a reader for which readsWhole holds pays as its input cost).
  double replicateCost(int t, Tiling tiling) const;
  /// The strategy behind a choice (null for replicated).
  const Strategy *getStrategy(int op, OpChoice choice) const;
  /// The best choice of one operator given every tensor's tiling.
  OpChoice bestChoice(int op, const std::vector<Tiling> &tilings) const;
  /// Fills a plan step for complete choices.
  PlanStep evaluate(std::vector<Tiling> tilings,
                    std::vector<OpChoice> choices) const;
  /// The step's cost alone.
  double cost(const std::vector<Tiling> &tilings,
              const std::vector<OpChoice> &choices) const;
  /// The local shapes after the step.
  StepState advance(const std::vector<Tiling> &tilings,
                    const std::vector<OpChoice> &choices) const;
  StepState advance(const PlanStep &step) const;

private:
  std::vector<const StrategySet *> sets;
  /// Per operator and input: whether the description reads the input.
  std::vector<std::vector<bool>> reads;
};

} // namespace tofu

#endif // TOFU_PARTITION_COSTMODEL_H
