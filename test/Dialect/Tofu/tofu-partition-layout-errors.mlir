// RUN: tofu-opt %s --tdl-attach --tofu-partition -split-input-file -verify-diagnostics

// Without verify-plan, the partitioner itself rejects what it cannot lay
// out. Tests that a cut of an indivisible dimension is an error.
// expected-error @+1 {{tofu-partition: cannot lay out the value: dimension 0 of local extent 3 does not divide by 2 at step 0}}
func.func @f(%x: tensor<3xf32> {tofu.tiling = ["cut(0)"]}) -> tensor<3xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  return %x : tensor<3xf32>
}

// -----

// Tests that steps that are not the recursion of the devices are rejected.
// expected-error @+1 {{tofu-partition: the plan's steps do not match devices '4'}}
func.func @f(%x: tensor<4xf32> {tofu.tiling = ["cut(0)"]}) -> tensor<4xf32> attributes {tofu.plan = {devices = "4", steps = [4]}} {
  return %x : tensor<4xf32>
}

// -----

// Tests that a step that is not a positive integer is rejected.
// expected-error @+1 {{tofu-partition: invalid step "2" in the plan}}
func.func @f(%x: tensor<4xf32> {tofu.tiling = ["cut(0)"]}) -> tensor<4xf32> attributes {tofu.plan = {devices = "2", steps = ["2"]}} {
  return %x : tensor<4xf32>
}

// -----

// Tests that an operation without a strategy per step is rejected.
func.func @f(%x: tensor<4xf32> {tofu.tiling = ["cut(0)"]}) -> tensor<4xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %e = tensor.empty() {tofu.tilings = [["cut(0)"]]} : tensor<4xf32>
  // expected-error @+1 {{tofu-partition: the operation has no strategy for each of the plan's 1 steps}}
  %y = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                       iterator_types = ["parallel"], tofu.strategy = [], tofu.tilings = [["cut(0)"]]}
      ins(%x : tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%v: f32, %o: f32):
    linalg.yield %v : f32
  } -> tensor<4xf32>
  return %y : tensor<4xf32>
}
