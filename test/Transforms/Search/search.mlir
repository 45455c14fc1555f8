// RUN: tofu-opt %S/Inputs/mlp-forward.mlir --tdl-attach --tofu-search="devices=4 plan-out=none svg=none report=none" | FileCheck %s

// The batch is cut at both steps: every operator cuts its batch loop d0,
// the small weights are gathered, and the loss is reduced.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: %arg0: tensor<16x8xf32> {tofu.tiling = ["cut(0)", "cut(0)"]}
// CHECK-SAME: tofu.plan = {algorithm = "tofu", bytes = 792 : i64, devices = "4", program_bytes = 1184 : i64, steps = [2, 2]}
// CHECK: linalg.matmul
// CHECK-SAME: tofu.strategy = ["d0", "d0"], tofu.tilings = {{\[\["cut\(0\)", "cut\(0\)"\]\]}}
// CHECK: linalg.generic
// CHECK-SAME: tofu.strategy = ["d0", "d0"]
// CHECK: linalg.matmul
// CHECK-SAME: tofu.strategy = ["d0", "d0"]
// CHECK: tensor.empty() {tofu.tilings = {{\[\["rep", "rep"\]\]}}} : tensor<f32>
// CHECK: linalg.generic
// CHECK-SAME: tofu.strategy = ["d0", "d0"], tofu.tilings = {{\[\["rep", "rep"\]\]}}
