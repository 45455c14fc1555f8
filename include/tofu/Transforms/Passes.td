//===- Passes.td - Tofu training-program passes --------------*- tablegen -*-===//
//
// Passes that turn a forward model into one complete training iteration.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TRANSFORMS_PASSES_TD
#define TOFU_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def TofuLoss : Pass<"tofu-loss", "mlir::ModuleOp"> {
  let summary = "Turn a function returning logits or predictions into one "
                "returning a 0-d loss";
  let description = [{
    Appends a loss to every public function (or the one named by `func`)
    whose one result is a statically shaped float tensor, so that
    `tofu-autodiff` can differentiate it. The loss is built from
    `linalg.generic` operations that `tdl-attach` describes: the search
    still cuts the batch dimension through it, and its partial sums reduce
    to a 0-d tensor.

    - `softmax-cross-entropy`: `-mean_rows sum_c labels * log_softmax(x)`
      over the last (class) dimension, with the row maximum subtracted for
      stability. With `labels=probabilities` (the default), `labels` has the
      logits' type and holds class probabilities (one-hot for hard labels).
      With `labels=i64` or `labels=i32` it holds one class id per row, as
      PyTorch's `cross_entropy` takes them: `tensor<Bxi64>` for logits
      `tensor<BxCxf32>`. An id outside `[0, C)` selects no class, so its row
      adds nothing to the sum (the mean is still over every row).
    - `mse`: `mean((predictions - targets)^2)` over every element.
    - `sum`: the sum of every element (no new argument).

    The labels or targets become a new trailing argument, marked
    `{tofu.input, tofu.name = "labels"}` (or `"targets"`) so that
    `tofu-autodiff{weights=all}` treats it as data, not as a weight.

    Before (`kind=mse`):

    ```mlir
    func.func @forward(%x: tensor<4x6xf32>, %w: tensor<6x3xf32>) -> tensor<4x3xf32>
    ```

    After:

    ```mlir
    func.func @forward(%x: tensor<4x6xf32>, %w: tensor<6x3xf32>,
        %targets: tensor<4x3xf32> {tofu.input, tofu.name = "targets"}) -> tensor<f32>
    ```
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"softmax-cross-entropy\"",
           "softmax-cross-entropy, mse or sum">,
    Option<"labels", "labels", "std::string", /*default=*/"\"probabilities\"",
           "Cross-entropy labels: probabilities (the logits' type), or i64 "
           "or i32 class ids (the logits' shape without the class "
           "dimension)">,
    Option<"funcName", "func", "std::string", /*default=*/"\"\"",
           "Add the loss to this function only (default: every public "
           "function)">,
    Option<"resultIndex", "result", "int64_t", /*default=*/"-1",
           "Which result the loss is on, for a function that returns "
           "several (the others are dropped); default: the only one">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TofuLiftConstants : Pass<"tofu-lift-constants", "mlir::ModuleOp"> {
  let summary = "Turn the weights an export bakes in as constants into "
                "arguments";
  let description = [{
    Exporters such as torch-mlir's FX importer write a model's parameters as
    constants (`arith.constant dense_resource<...>` or `dense<...>`), so a
    forward function has only its data as arguments and nothing to train.
    This pass makes every floating-point tensor constant of rank >= 1 that
    holds a parameter, in every public function with a body (or the one
    named by `func`), a new trailing argument named after its resource key
    (or `const<N>`), so that `tofu-autodiff{weights=all}` differentiates it.
    A parameter is a constant that is not a splat, or a splat that a linalg
    op reads as an input (exporters that leave out the weights' values
    write splats of 1). Splats used as inits or as operands of element-wise
    ops, 0-d constants and integer tables stay constants.

    Before:

    ```mlir
    func.func @forward(%x: tensor<1x84xf32>) -> tensor<1x10xf32> {
      %w = arith.constant dense_resource<fc_weight> : tensor<10x84xf32>
      ...
    ```

    After:

    ```mlir
    func.func @forward(%x: tensor<1x84xf32>,
        %arg1: tensor<10x84xf32> {tofu.name = "fc_weight"}) -> tensor<1x10xf32> {
      ...
    ```
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"\"",
           "Lift the constants of this function only (default: every "
           "public function)">,
  ];
}

def TofuBatchProducts : Pass<"tofu-batch-products", "mlir::ModuleOp"> {
  let summary = "Products of the slices of one tensor by a shared operand "
                "become one product";
  let description = [{
    An unrolled RNN multiplies each time step's input, slice t of an input
    of shape (T, ...), by the same weight: T products of a few rows that
    each read the whole weight. This pass makes them one product over the
    whole input, with t as an outer parallel loop, and gives each old
    product's result as slice t of the new one; autodiff then derives one
    weight-gradient product (its K is T times the rows) instead of T, and
    the partition search sees one operator instead of T. Each output
    element sums the same terms in the same order.

    A batch is the set of contractions (`linalg::isaContractionOpInterface`:
    matmuls, and generics such as `bk,kgh->bgh`) of one function body that
    accumulate into a zero fill nothing else reads, have the same shared
    operand at the same position, the same op, indexing maps, result type
    and body, and read as their other operand slice t of the same static
    tensor: an `extract_slice` at (t, 0, ...) of sizes (1, the other
    extents), unit strides, rank-reducing or followed by a `collapse_shape`
    that merges the unit dimension into the next. It is rewritten only when
    its slices are each index of the first dimension once; anything else
    is left as it is.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TofuStackProductSums : Pass<"tofu-stack-product-sums", "mlir::ModuleOp"> {
  let summary = "A sum of reductions of one form becomes one reduction over "
                "stacked operands";
  let description = [{
    Autodiff sums a shared weight's gradient over its uses: for an unrolled
    RNN, one product per time step (`sum_b h_t[b, k] * g_t[b, n]`, the
    recurrent weight's gradient) and one row sum per time step (the bias's),
    each into a zero fill, then T - 1 element-wise additions. This pass
    makes the terms of such a sum that have the same form one reduction
    with a new outermost reduction loop over the terms: each operand that
    differs between the terms is stacked along a new first dimension
    (`tensor.expand_shape` of each, one `tensor.concat`), an operand they
    share is read as it is. A partitioned step that cuts the batch then
    reduces the gradient once per step instead of once per time step, and
    the CPU path makes one library call with K = T times the batch.

    A sum is a tree of `linalg.generic` additions of two tensors of the
    result's type (identity maps, parallel loops, `yield in0 + in1`) whose
    inner results nothing else reads. Its terms of one form are generics
    with static shapes, no index ops, a body `yield acc + e` and a zero
    fill as output that nothing else reads, with the same indexing maps,
    iterator types, operand and result types, fill value and body; the
    largest such set with at least two terms is stacked when an operand
    differs between them and the stacks copy at most the bytes of the
    additions they remove (T small activations for T - 1 weight-sized sums;
    never two weights to save one activation-sized sum), and the sum is rebuilt from the new reduction and the
    other terms. Each output element sums the same terms in another order:
    results change by rounding. The stacked operands stay live until the
    sum, where each term's operands were live until its term.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TofuSplitResults : Pass<"tofu-split-results", "mlir::ModuleOp"> {
  let summary = "Split linalg.generics with several results into one per "
                "result";
  let description = [{
    Exporters fuse independent computations into one `linalg.generic` with
    several results: torch-mlir lowers an adaptive average pooling to one
    generic that sums each window and also yields the window's size. Autodiff
    and TDL take one result per operation, so this pass gives each result
    its own generic with the body ops that the result's value depends on.

    A result whose value does not read its accumulator and depends only on
    the loops of its output map (the window size: a function of the output
    position) becomes a parallel generic over those loops. Any other result
    keeps every loop and every input of the original. A generic in which
    one result reads another result's accumulator, or whose body holds
    regions, is left as it is.

    Before:

    ```mlir
    %r:2 = linalg.generic {indexing_maps = [(d0, d1) -> (d1), (d0, d1) -> (d0), (d0, d1) -> (d0)],
        iterator_types = ["parallel", "reduction"]} ins(%w) outs(%sum, %size) {
      ... linalg.yield %acc_plus_x, %size_of_d0
    }
    ```

    After: one generic over `(d0, d1)` that yields the sum, and one over
    `(d0)` that yields the size.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def TofuUnrollLoops : Pass<"tofu-unroll-loops", "mlir::ModuleOp"> {
  let summary = "Fully unroll scf.for loops with static bounds";
  let description = [{
    Replaces every `scf.for` whose bounds and step are constants by one copy
    of its body per iteration, the induction variable a constant and the
    `iter_args` threaded from copy to copy; slice offsets computed from the
    induction variable fold to static ones. A recurrent model (an LSTM whose
    time loop carries `h` and `c`) becomes the straight-line program that
    `tdl-attach` describes and the search partitions; its copies read the
    same weights, so coarsening merges them as time steps.

    A loop nest that would give more than `max-iterations` iterations in
    all is an error on the loop, as are bounds that are not constants. The
    IR is unchanged when any loop fails.

    Before:

    ```mlir
    %h = scf.for %t = %c0 to %c3 step %c1 iter_args(%s = %h0) -> (tensor<4x8xf32>) {
      %x_t = tensor.extract_slice %x[%t, 0, 0] [1, 4, 8] [1, 1, 1] : tensor<3x4x8xf32> to tensor<4x8xf32>
      %n = ... cell(%x_t, %s) ...
      scf.yield %n : tensor<4x8xf32>
    }
    ```

    After: three copies of the cell, reading `%x[0, 0, 0]`, `%x[1, 0, 0]`
    and `%x[2, 0, 0]`.
  }];
  let options = [
    Option<"maxIterations", "max-iterations", "uint64_t", /*default=*/"1024",
           "Largest number of iterations of a loop nest to unroll">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TofuConvertFloatType : Pass<"tofu-convert-float-type", "mlir::ModuleOp"> {
  let summary = "Convert a whole program from one floating-point type to "
                "another";
  let description = [{
    Rewrites every use of the float type `from` in the module as `to`, so
    that a training step in f32 becomes the same step in f64 (and back):
    function signatures and the types of every value and block argument
    (tensors, memrefs, scalars in `linalg` bodies, `complex` element types),
    `arith.constant` values and other float attributes (converted with
    round-to-nearest-even when `to` is narrower), and `dense<...>` tensor
    constants element by element. An `arith.extf` or `arith.truncf` whose
    types become equal is removed; one whose direction flips becomes the
    other.

    Ops of the dialects a training step is built from (`func`, `arith`,
    `math`, `linalg`, `tensor`, `scf`, `cf`, `memref`, `bufferization`,
    `affine`, `complex`, `ub`, `tofu`, `tdl`, `shard`) are converted
    generically. The module is left unchanged and each of these is an error
    on the op: an op of another dialect that uses `from`, a bitcast of a
    `from` value (its bits have no meaning in the other type), a function
    declaration without a body whose signature uses `from` (its callee
    would still expect the old type), and a constant of `from` elements
    that is not a `dense<...>` literal (`dense_resource`: lift it to an
    argument with `tofu-lift-constants` first).

    Before (`from=f32 to=f64`):

    ```mlir
    func.func @step(%w: tensor<4xf32>) -> tensor<4xf32> {
      %c = arith.constant dense<[0.5, 1.0, 1.5, 2.0]> : tensor<4xf32>
      %e = tensor.empty() : tensor<4xf32>
      %r = linalg.generic {indexing_maps = [#id, #id, #id],
          iterator_types = ["parallel"]} ins(%w, %c : tensor<4xf32>, tensor<4xf32>)
          outs(%e : tensor<4xf32>) {
      ^bb0(%a: f32, %b: f32, %o: f32):
        %m = arith.mulf %a, %b : f32
        linalg.yield %m : f32
      } -> tensor<4xf32>
      return %r : tensor<4xf32>
    }
    ```

    After: the same function with every `f32` replaced by `f64`, including
    `dense<[5.000000e-01, 1.000000e+00, 1.500000e+00, 2.000000e+00]> :
    tensor<4xf64>` and the body's `^bb0(%a: f64, %b: f64, %o: f64)`.
  }];
  let options = [
    Option<"fromType", "from", "std::string", /*default=*/"\"f32\"",
           "The float type to replace (f16, bf16, f32, f64, ...)">,
    Option<"toType", "to", "std::string", /*default=*/"\"f64\"",
           "The float type to replace it with">,
  ];
}

def TofuAutodiff : Pass<"tofu-autodiff", "mlir::ModuleOp"> {
  let summary = "Reverse-mode automatic differentiation of a scalar loss";
  let description = [{
    Turns every function that returns a scalar loss (a 0-d float tensor) and
    has weight arguments into a training-step function `@<name>_train` that
    returns the loss and the gradient of every weight, in argument order.

    Weights are the arguments marked `{tofu.weight}`, or those that
    `weights` lists: by index (`weights=1,2`), by name (`weights=fc.weight`:
    the argument's `tofu.name` attribute, its name location
    `loc("fc.weight")`, or its SSA name in the source file), or `all`: every
    floating-point tensor argument except the data inputs (marked
    `{tofu.input}`, as `tofu-loss` marks labels, or listed by `inputs`, e.g.
    `weights=all inputs=0`), or `auto`: the marked arguments if there are
    any, else `all`. Finding no function to differentiate is an
    error that says how to mark weights.

    Adjoints of `linalg` operations are derived from their indexing maps:
    named operations are generalized, and the gradient of input `i` is a
    `linalg.generic` over the same loops whose output map is input `i`'s
    map and whose body is the derivative of the scalar body (arith/math
    rules, max/min reductions through a mask). Tensor data movement (`pad`,
    `extract_slice`, `insert_slice`, `expand_shape`, `collapse_shape`,
    `concat`) gets its transposed movement. Gradients of a value used more
    than once are summed.

    Every forward operation gets `tofu.op_id`; every backward operation gets
    `tofu.bwd_of` (the forward operation it belongs to); every operation
    that produces a gradient gets `tofu.grad_of` (the forward tensor), and
    accumulations are marked `tofu.grad_accum`. Results carry `tofu.loss`
    and `tofu.grad_of_arg`.

    Scalars taken from weights (`tensor.extract`, scalars captured in a
    linalg body or passed as scalar operands, the value of `linalg.fill`)
    are differentiated too.

    A row maximum that is only subtracted for stability and that the
    normalisation cancels, as in `exp(x - max(x)) / sum(exp(x - max(x)))`
    and in log-softmax, is held constant: nothing the function computes
    depends on it, so its gradient is exactly zero, and the backward pass
    skips the reduction that would compute it (`cancel-shifts=false`
    differentiates through it).

    An operation on the path from a weight to the loss that cannot be
    differentiated is an error that names it, as is an operation that reads
    an active value to which no rule propagates a gradient. Weights must be
    statically shaped float tensors; dynamic shapes on the weight path and
    functions with more than one block are errors.
  }];
  let options = [
    Option<"funcName", "func", "std::string", /*default=*/"\"\"",
           "Differentiate only this function (default: every function with "
           "weights that returns a 0-d tensor)">,
    ListOption<"weightArgs", "weights", "std::string",
               "The weight arguments: indices, names, 'all' (every "
               "floating-point tensor argument except the inputs) or 'auto' "
               "(the marked ones if any, else all); default: arguments "
               "marked tofu.weight">,
    ListOption<"inputArgs", "inputs", "std::string",
               "Data arguments (indices, names, or 'auto': argument 0 "
               "unless a later one leads with the batch and it does not) "
               "that weights=all leaves out, besides those marked "
               "tofu.input">,
    Option<"keepForward", "keep-forward", "bool", /*default=*/"false",
           "Keep the forward function next to the training step">,
    Option<"cancelShifts", "cancel-shifts", "bool", /*default=*/"true",
           "Hold constant the row maxima that softmax and log-softmax "
           "subtract and their normalisation cancels (their gradient is "
           "zero); false differentiates through them">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TofuOptimizer : Pass<"tofu-optimizer", "mlir::ModuleOp"> {
  let summary = "Append the weight update of an optimizer to training steps";
  let description = [{
    Rewrites every training step produced by `tofu-autodiff` (results marked
    `tofu.grad_of_arg`) so that it returns the loss, the updated weights and
    the updated optimizer state instead of the gradients. The update is
    element-wise `linalg.generic` operations.

    - `sgd`: w' = w - lr g
    - `momentum`: v' = mu v + g, w' = w - lr v' (one state tensor per weight)
    - `adam`: m' = b1 m + (1-b1) g, v' = b2 v + (1-b2) g^2, t' = t + 1,
      w' = w - lr (m'/(1-b1^t')) / (sqrt(v'/(1-b2^t')) + eps)
      (two state tensors per weight, plus the step count t as a 0-d tensor)

    State arguments are appended after the original arguments (marked
    `tofu.state_of`), state results after the weights (marked
    `tofu.updated_arg`). Each state argument is named (`tofu.name`) after
    its weight and torch.optim's key: `<w>.momentum_buffer`, `<w>.exp_avg`,
    `<w>.exp_avg_sq`, and `optimizer.step` for Adam's step count.

    With `lr-arg`, the learning rate is a 0-d argument of the step
    (`optimizer.lr`, marked `tofu.hyperparameter` with `lr` as its default
    value) instead of a constant, so that one compiled step serves any
    learning rate (`tofu-run --lr`).
  }];
  let options = [
    Option<"kind", "kind", "std::string", /*default=*/"\"sgd\"",
           "sgd, momentum or adam">,
    Option<"learningRate", "lr", "double", /*default=*/"0.01",
           "Learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "Momentum coefficient (momentum)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"epsilon", "eps", "double", /*default=*/"1e-8", "Adam epsilon">,
    Option<"lrArg", "lr-arg", "bool", /*default=*/"false",
           "Take the learning rate as a 0-d argument of the step (default "
           "value: lr)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::linalg::LinalgDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::tensor::TensorDialect"];
}

def TofuSearch : Pass<"tofu-search", "mlir::ModuleOp"> {
  let summary = "Find the partition plan that minimises communication";
  let description = [{
    Tofu's search (EuroSys'19, section 5) over every function with TDL
    descriptions (run `tdl-attach` first): the graph is coarsened (forward
    and backward operators grouped, tensors with their gradients,
    element-wise chains and unrolled time steps merged), then each recursion
    step k1, k2, ... of the device count is an exact DP over the coarse
    graph.

    `devices` is a count (`8`) or a hierarchy, outermost level first
    (`2x4`), with one bandwidth per level in GB/s (`bandwidth=25,300`); the
    first cuts go to the slowest level. `algorithm` selects the search or a
    baseline under the same cost model: `tofu`, `brute-force`,
    `data-parallel`, `allrow-greedy`, `spartan`, `equalchop`, `icml18`.
    `replication` adds SOYBEAN's replicated tiling to the search space.

    The plan is put on the IR: `tofu.tilings` on every operation (one array
    of per-step tilings per result), `tofu.tiling` on tensor arguments,
    `tofu.strategy` (the loop variable cut at each step, or `replicated`)
    on every described operation, and `tofu.plan` on the function. A report
    goes to stderr (or `report=<file>`). The plan is written as JSON
    (docs/plan-format.md) only when `plan-out=<file>` is given, and drawn as
    SVG only when `svg=<file>` is given: nothing is written by default.
    `plan-in` reads a JSON plan instead of searching.
  }];
  let options = [
    Option<"devices", "devices", "std::string", /*default=*/"\"\"",
           "Device count or hierarchy, e.g. 8 or 2x4">,
    Option<"bandwidth", "bandwidth", "std::string", /*default=*/"\"\"",
           "GB/s per level, comma separated (default 10 each)">,
    Option<"algorithm", "algorithm", "std::string", /*default=*/"\"tofu\"",
           "tofu, brute-force, data-parallel, batch-parallel, allrow-greedy, "
           "spartan, equalchop or icml18">,
    Option<"batchDim", "batch-dim", "unsigned", /*default=*/"0",
           "batch-parallel: the inputs' batch dimension (1 for time-major "
           "data)">,
    Option<"replication", "replication", "bool", /*default=*/"false",
           "Allow replicated tilings (SOYBEAN's r)">,
    Option<"coarsen", "coarsen", "bool", /*default=*/"true",
           "Coarsen the graph (Tofu section 5.1)">,
    Option<"refine", "refine", "unsigned", /*default=*/"2",
           "Sweeps of the refinement that minimises the bytes the generated "
           "program moves (tofu algorithm; 0 disables it)">,
    Option<"sharedReads", "shared-reads", "bool", /*default=*/"true",
           "Also search counting once the conversions that the program "
           "shares between readers, and keep the plan that moves fewer "
           "program bytes (tofu algorithm)">,
    Option<"planIn", "plan-in", "std::string", /*default=*/"\"\"",
           "Read the plan from this JSON file instead of searching">,
    Option<"planOut", "plan-out", "std::string", /*default=*/"\"\"",
           "Write the plan as JSON to this file (default: not written)">,
    Option<"svg", "svg", "std::string", /*default=*/"\"\"",
           "Draw the plan as SVG to this file (default: not drawn)">,
    Option<"report", "report", "std::string", /*default=*/"\"-\"",
           "Where the report goes: '-' for stderr, a file, or 'none'">,
    Option<"deviceMemory", "device-memory", "std::string",
           /*default=*/"\"\"",
           "Memory of one device, e.g. 80GB: warn when the plan's estimate "
           "per device exceeds it (default: no limit)">,
    Option<"maxTable", "max-table", "uint64_t", /*default=*/"1u << 22",
           "Largest DP table before groups are fixed greedily">,
  ];
}

#endif // TOFU_TRANSFORMS_PASSES_TD
