// RUN: tofu-opt %s --tofu-train-pipeline="loss=softmax-cross-entropy optimizer=sgd devices=4 plan-out=none svg=none report=none" | FileCheck %s
// RUN: tofu-opt %s --tofu-train-pipeline="loss=softmax-cross-entropy labels=i64 optimizer=sgd devices=4 plan-out=none svg=none report=none" | FileCheck %s --check-prefix=IDS
// RUN: tofu-opt %s --tofu-train-pipeline="loss=softmax-cross-entropy optimizer=sgd devices=8 plan-out=none svg=none report=none" | FileCheck %s --check-prefix=REFINED
// RUN: tofu-opt %s --tofu-train-pipeline="loss=softmax-cross-entropy optimizer=sgd devices=8 plan-out=none svg=none report=none refine=0" | FileCheck %s --check-prefix=RECURSION

// Tests that the pipeline passes refine= to the search: at 8 devices the
// refinement lowers what the generated program moves.
// REFINED:   program_bytes = 1760
// RECURSION: program_bytes = 1888

// Tests that the pipeline inlines calls to functions of the module (a
// StableHLO-to-linalg export calls a private @relu), removes the callee,
// appends the loss, differentiates every float argument but the input,
// adds the optimizer, describes every operation and puts a plan on it.

// CHECK-NOT:   func.func private @relu
// CHECK-LABEL: func.func @forward_train(
// CHECK-SAME:    %{{.*}}: tensor<16x8xf32> {tofu.name = "x", tofu.tiling = [{{.*}}]},
// CHECK-SAME:    %{{.*}}: tensor<8x4xf32> {tofu.name = "w", tofu.tiling = [{{.*}}], tofu.weight},
// CHECK-SAME:    %{{.*}}: tensor<16x4xf32> {tofu.input, tofu.name = "labels", tofu.tiling = [{{.*}}]})
// CHECK-SAME:    -> (tensor<f32> {tofu.loss}, tensor<8x4xf32> {tofu.updated_arg = 1 : i64})
// CHECK-SAME:    tofu.plan
// CHECK-NOT:     func.call
// CHECK:         linalg.matmul {{.*}}tdl.desc
// CHECK:         return
// Tests that labels= reaches tofu-loss: one i64 class id per row, cut like
// the batch.
// IDS-LABEL: func.func @forward_train(
// IDS-SAME:    %{{.*}}: tensor<16xi64> {tofu.input, tofu.name = "labels", tofu.tiling = [{{.*}}]})
// IDS-SAME:    -> (tensor<f32> {tofu.loss}, tensor<8x4xf32> {tofu.updated_arg = 1 : i64})
func.func private @relu(%x: tensor<16x4xf32>) -> tensor<16x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<16x4xf32>) outs(%e : tensor<16x4xf32>) {
  ^bb0(%in: f32, %out: f32):
    %m = arith.maximumf %in, %z : f32
    linalg.yield %m : f32
  } -> tensor<16x4xf32>
  return %r : tensor<16x4xf32>
}
func.func @forward(%x: tensor<16x8xf32>, %w: tensor<8x4xf32>) -> tensor<16x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<16x4xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<16x4xf32>) -> tensor<16x4xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x8xf32>, tensor<8x4xf32>) outs(%i : tensor<16x4xf32>) -> tensor<16x4xf32>
  %r = func.call @relu(%y) : (tensor<16x4xf32>) -> tensor<16x4xf32>
  return %r : tensor<16x4xf32>
}
