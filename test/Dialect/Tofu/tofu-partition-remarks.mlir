// RUN: tofu-opt %s --tdl-attach --tofu-partition -split-input-file -verify-diagnostics | FileCheck %s

// Tests that a pad whose value depends on the position runs replicated on
// the whole source, with a remark, and that its result is sliced afterwards.

// CHECK-LABEL: func.func @indexed_pad(
// CHECK: %[[W:.*]] = shard.all_gather
// CHECK-SAME: -> tensor<4xf32>
// CHECK: %[[P:.*]] = tensor.pad %[[W]] low[2] high[2]
// CHECK: shard.all_slice %[[P]]
// expected-remark @+1 {{tofu-partition: 1 'tensor.pad' operation(s) run replicated on whole inputs}}
func.func @indexed_pad(%x: tensor<4xf32> {tofu.tiling = ["cut(0)"]})
    -> tensor<8xf32> attributes {tofu.plan = {devices = "2", steps = [2]}} {
  %p = tensor.pad %x low[2] high[2] {
  ^bb0(%i: index):
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    tensor.yield %f : f32
  } {tofu.strategy = ["d0"], tofu.tilings = [["cut(0)"]]}
      : tensor<4xf32> to tensor<8xf32>
  return %p : tensor<8xf32>
}
