// RUN: tofu-opt %s --tofu-loss=kind=softmax-cross-entropy -split-input-file | FileCheck %s --check-prefix=CE
// RUN: tofu-opt %s --tofu-loss=kind=mse -split-input-file | FileCheck %s --check-prefix=MSE
// RUN: tofu-opt %s --tofu-loss=kind=sum -split-input-file | FileCheck %s --check-prefix=SUM
// RUN: tofu-opt %s --tofu-loss -split-input-file | tofu-opt --tdl-attach -split-input-file | FileCheck %s --check-prefix=DESC
// RUN: tofu-opt %s --tofu-loss=labels=i64 -split-input-file | FileCheck %s --check-prefix=IDS
// RUN: tofu-opt %s --tofu-loss=labels=i32 -split-input-file | FileCheck %s --check-prefix=IDS32
// RUN: tofu-opt %s --tofu-loss=labels=i64 -split-input-file | tofu-opt --tdl-attach -split-input-file | FileCheck %s --check-prefix=IDSDESC

// Tests that logits become a 0-d loss: softmax cross-entropy over the last
// dimension with the row maximum subtracted, the mean squared error over
// every element, or the plain sum, with labels or targets as a new trailing
// argument marked as data.

// CE-LABEL: func.func @logits(
// CE-SAME:    %[[X:.*]]: tensor<4x6xf32>, %[[W:.*]]: tensor<6x3xf32>,
// CE-SAME:    %[[L:.*]]: tensor<4x3xf32> {tofu.input, tofu.name = "labels"}) -> tensor<f32>
// CE:         %[[Y:.*]] = linalg.matmul
// CE:         %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CE:         %[[MINIT:.*]] = linalg.fill ins(%[[NINF]] : f32) {{.*}} -> tensor<4xf32>
// CE:         %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[Y]] : tensor<4x3xf32>) outs(%[[MINIT]] : tensor<4xf32>)
// CE:           arith.maximumf
// CE:         %[[SEXP:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[Y]], %[[MAX]] : tensor<4x3xf32>, tensor<4xf32>)
// CE:           arith.subf
// CE:           math.exp
// CE:         %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[Y]], %[[MAX]], %[[SEXP]], %[[L]] : {{.*}}) outs({{.*}} : tensor<f32>)
// CE:           math.log
// CE:           arith.constant -2.500000e-01 : f32
// CE:         return %[[LOSS]] : tensor<f32>

// MSE-LABEL: func.func @logits(
// MSE-SAME:    %[[T:[^:]*]]: tensor<4x3xf32> {tofu.input, tofu.name = "targets"}) -> tensor<f32>
// MSE:         %[[Y:.*]] = linalg.matmul
// MSE:         %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[Y]], %[[T]] : tensor<4x3xf32>, tensor<4x3xf32>) outs({{.*}} : tensor<f32>)
// MSE:           arith.subf
// MSE:           arith.constant 0.0833333358 : f32
// MSE:         return %[[LOSS]] : tensor<f32>

// SUM-LABEL: func.func @logits(
// SUM-SAME:    %{{.*}}: tensor<4x6xf32>, %{{.*}}: tensor<6x3xf32>) -> tensor<f32>
// SUM:         %[[Y:.*]] = linalg.matmul
// SUM:         %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[Y]] : tensor<4x3xf32>) outs({{.*}} : tensor<f32>)
// SUM:         return %[[LOSS]] : tensor<f32>

// DESC-LABEL: func.func @logits(
// DESC:         tdl.desc = #tdl.desc<(in0, init0) -> (d0) = max(init0[d0], max(d1) in0[d0, d1])>
// DESC:         tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0) = init0[d0] + (sum(d1) exp(in0[d0, d1] - in1[d0]))>
// DESC:         tdl.desc = #tdl.desc<(in0, in1, in2, in3, init0) -> () = init0 + (sum(d0, d1) in3[d0, d1] * (in0[d0, d1] - (in1[d0] + log(in2[d0]))) * -0.25)>
// Tests that with integer class ids the labels are one id per row, and the
// loss is one sum of the log-probabilities picked one-hot on the fly (the
// class loop's index against the id), so that an id that is no class adds
// nothing.

// IDS-LABEL: func.func @logits(
// IDS-SAME:    %[[L:[^:]*]]: tensor<4xi64> {tofu.input, tofu.name = "labels"}) -> tensor<f32>
// IDS:         %[[Y:.*]] = linalg.matmul
// IDS:         %[[MAX:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[Y]] : tensor<4x3xf32>)
// IDS:         %[[SEXP:.*]] = linalg.generic {{.*}}iterator_types = ["parallel", "reduction"]} ins(%[[Y]], %[[MAX]] : tensor<4x3xf32>, tensor<4xf32>)
// IDS:         %[[LOSS:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction"]} ins(%[[Y]], %[[MAX]], %[[SEXP]], %[[L]] : tensor<4x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xi64>) outs({{.*}} : tensor<f32>)
// IDS:           math.log
// IDS:           %[[ID:.*]] = arith.index_cast %{{.*}} : i64 to index
// IDS:           %[[C:.*]] = linalg.index 1 : index
// IDS:           %[[HIT:.*]] = arith.cmpi eq, %[[ID]], %[[C]] : index
// IDS:           arith.select %[[HIT]]
// IDS:           arith.constant -2.500000e-01 : f32
// IDS:         return %[[LOSS]] : tensor<f32>

// IDS32-LABEL: func.func @logits(
// IDS32-SAME:    tensor<4xi32> {tofu.input, tofu.name = "labels"}) -> tensor<f32>
// IDS32:         arith.index_cast %{{.*}} : i32 to index

// IDSDESC-LABEL: func.func @logits(
// IDSDESC:         tdl.desc = #tdl.desc<(in0, in1, in2, in3, init0) -> () = init0 + (sum(d0, d1) select(cmpi(index_cast(in3[d0]), d1), in0[d0, d1] - (in1[d0] + log(in2[d0])), 0.0) * -0.25)>
func.func @logits(%x: tensor<4x6xf32>, %w: tensor<6x3xf32>) -> tensor<4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %i = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x3xf32>) outs(%i : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %y : tensor<4x3xf32>
}

// -----

// Tests that the class dimension is the last one: rows are every leading
// position (batch and sequence), and the mean is over them (1/8); private
// functions keep their results.

// IDS-LABEL: func.func @sequence(
// IDS-SAME:    %{{.*}}: tensor<2x4xi64> {tofu.input, tofu.name = "labels"}) -> tensor<f64>
// IDS:         linalg.index 2 : index
// IDS:         arith.constant -1.250000e-01 : f64
// IDSDESC-LABEL: func.func @sequence(
// CE-LABEL: func.func private @helper(%{{.*}}: tensor<2xf32>) -> tensor<2xf32>
// CE-LABEL: func.func @sequence(
// CE-SAME:    %{{.*}}: tensor<2x4x5xf64> {tofu.input, tofu.name = "labels"}) -> tensor<f64>
// CE:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs({{.*}} : tensor<2x4xf64>)
// CE:         linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]{{.*}} outs({{.*}} : tensor<2x4xf64>)
// CE:         arith.constant -1.250000e-01 : f64
// MSE-LABEL: func.func @sequence(
// MSE:         arith.constant 2.500000e-02 : f64
// SUM-LABEL: func.func @sequence(
// SUM-SAME:    %{{.*}}: tensor<2x4x5xf64>) -> tensor<f64>
func.func private @helper(%a: tensor<2xf32>) -> tensor<2xf32> {
  return %a : tensor<2xf32>
}
func.func @sequence(%x: tensor<2x4x5xf64>) -> tensor<2x4x5xf64> {
  return %x : tensor<2x4x5xf64>
}
