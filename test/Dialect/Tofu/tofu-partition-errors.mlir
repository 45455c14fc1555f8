// RUN: tofu-opt %s --tdl-attach --tofu-partition=verify-plan -split-input-file -verify-diagnostics

// Tests that a module without a plan is an error, not a silent no-op.
// expected-error @+1 {{tofu-partition: no function carries a plan; run tofu-search first}}
module {
  func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// Tests that the plan needs its devices and steps.
// expected-error @+1 {{the plan attribute 'tofu.plan' needs 'devices' and 'steps'}}
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> attributes {tofu.plan = {devices = "2"}} {
  return %x : tensor<4xf32>
}

// -----

// Tests that a tiling the search cannot produce is rejected.
// expected-error @+1 {{tofu-partition: invalid tiling "cut(x)"}}
func.func @f(%x: tensor<4xf32> {tofu.tiling = ["cut(x)"]}) -> tensor<4xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  return %x : tensor<4xf32>
}

// -----

// Tests that a cut of an indivisible dimension is rejected by the cost model.
// expected-error @+1 {{tofu-partition: the plan is not feasible: step 0: tensor %arg0 cannot be cut(0) over 2 workers}}
func.func @f(%x: tensor<3xf32> {tofu.tiling = ["cut(0)"]}) -> tensor<3xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %e = tensor.empty() {tofu.tilings = [["rep"]]} : tensor<3xf32>
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"], tofu.strategy = ["replicated"], tofu.tilings = [["rep"]]}
      ins(%x : tensor<3xf32>) outs(%e : tensor<3xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<3xf32>
  return %y : tensor<3xf32>
}

// -----

// Tests that an unknown algorithm in the plan is rejected.
// expected-error @+1 {{tofu-partition: unknown algorithm 'magic' in the plan}}
func.func @f(%x: tensor<4xf32> {tofu.tiling = ["cut(0)"]}) -> tensor<4xf32> attributes {tofu.plan = {algorithm = "magic", devices = "2", steps = [2]}} {
  return %x : tensor<4xf32>
}

// -----

// Tests that an operation without a strategy for every step is rejected.
func.func @f(%x: tensor<4xf32> {tofu.tiling = ["cut(0)"]}) -> tensor<4xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %e = tensor.empty() {tofu.tilings = [["cut(0)"]]} : tensor<4xf32>
  // expected-error @+1 {{tofu-partition: the operation has no strategy for each step}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"], tofu.tilings = [["cut(0)"]]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
