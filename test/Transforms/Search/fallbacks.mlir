// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=6 plan-out=none svg=none report=none" -verify-diagnostics | FileCheck %s
// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=6 plan-out=none svg=none report=-" -o /dev/null 2>&1 | FileCheck %s --check-prefix=REMARK
// RUN: tofu-opt %S/Inputs/mlp-forward.mlir --tdl-attach --tofu-search="devices=4 max-table=1 coarsen=0 plan-out=none svg=none report=-" 2>&1 | FileCheck %s --check-prefix=BOUND
// RUN: tofu-opt %S/Inputs/mlp-forward.mlir --tdl-attach --tofu-search="devices=4 max-table=1 plan-out=none svg=none report=-" 2>&1 | FileCheck %s --check-prefix=COARSE

// Six devices are two steps, of 3 then 2. At the first step %w is cut along
// its 3 columns; at the second its local 5x1 tile has no even dimension, so
// it is replicated, with a remark in the report (and none without it).
// Dimensions that do not divide are never cut.

// REMARK: remark: step of 2: 1 tensor(s) have no dimension divisible by 2 and are replicated
// REMARK-NOT: remark:
func.func @f(%x: tensor<6x5xf32>, %w: tensor<5x3xf32>) -> tensor<6x3xf32> {
  %e = tensor.empty() : tensor<6x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<6x5xf32>, tensor<5x3xf32>)
                     outs(%e : tensor<6x3xf32>) -> tensor<6x3xf32>
  return %y : tensor<6x3xf32>
}
// CHECK: %arg0: tensor<6x5xf32> {tofu.tiling = ["cut(0)", "cut(0)"]}
// CHECK-SAME: %arg1: tensor<5x3xf32> {tofu.tiling = ["cut(1)", "rep"]}
// CHECK-SAME: steps = [3, 2]
// CHECK: linalg.matmul {{.*}}tofu.strategy = ["d0", "d0"]

// With a DP table bound of one entry (on Inputs/mlp-forward.mlir) and no
// coarsening, the search fixes groups greedily, still returns a plan, and
// says the step is not proven optimal.
// BOUND: remark: step of 2: the DP table would exceed 1 entries; some groups were fixed greedily and the step is not proven optimal
// BOUND: tofu.plan = {algorithm = "tofu"

// With coarsening (the default), the step falls back to the coarsened graph
// (here also fixed greedily), and the report does not claim it exact.
// COARSE: step      k  level   groups            bytes  exact
// COARSE-NEXT: 0      2      0        1 {{[0-9]+}}  no
// COARSE: remark: step of 2: the uncoarsened DP table would exceed 1 entries; the step was searched on the coarsened graph, whose ties may exclude the optimum, and some groups were fixed greedily
