// RUN: tofu-opt %s --tdl-attach -split-input-file | FileCheck %s

// Tests that linalg contractions are described from their indexing maps.

// CHECK-LABEL: func.func @contractions
func.func @contractions(%a: tensor<8x6xf32>, %b: tensor<6x4xf32>, %c: tensor<8x4xf32>,
                        %ba: tensor<2x8x6xf32>, %bb: tensor<2x6x4xf32>, %bc: tensor<2x8x4xf32>,
                        %v: tensor<6xf32>, %y: tensor<8xf32>)
    -> (tensor<8x4xf32>, tensor<2x8x4xf32>, tensor<8xf32>) {
  // CHECK: linalg.matmul {tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1) = init0[d0, d1] + (sum(d2) in0[d0, d2] * in1[d2, d1])>}
  %0 = linalg.matmul ins(%a, %b : tensor<8x6xf32>, tensor<6x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  // CHECK: linalg.batch_matmul {tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1, d2) = init0[d0, d1, d2] + (sum(d3) in0[d0, d1, d3] * in1[d0, d3, d2])>}
  %1 = linalg.batch_matmul ins(%ba, %bb : tensor<2x8x6xf32>, tensor<2x6x4xf32>) outs(%bc : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  // CHECK: linalg.matvec {tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0) = init0[d0] + (sum(d1) in0[d0, d1] * in1[d1])>}
  %2 = linalg.matvec ins(%a, %v : tensor<8x6xf32>, tensor<6xf32>) outs(%y : tensor<8xf32>) -> tensor<8xf32>
  return %0, %1, %2 : tensor<8x4xf32>, tensor<2x8x4xf32>, tensor<8xf32>
}

// -----

// Tests that convolutions and pooling get halos in their spatial accesses.

// CHECK-LABEL: func.func @convolutions
func.func @convolutions(%x1: tensor<4x3x10xf32>, %w1: tensor<8x3x3xf32>, %o1: tensor<4x8x8xf32>,
                        %x2: tensor<2x3x9x9xf32>, %w2: tensor<5x3x3x3xf32>, %o2: tensor<2x5x4x4xf32>,
                        %x3: tensor<1x2x6x6x6xf32>, %w3: tensor<4x2x3x3x3xf32>, %o3: tensor<1x4x4x4x4xf32>,
                        %xd: tensor<2x9x9x3xf32>, %wd: tensor<3x3x3xf32>, %od: tensor<2x7x7x3xf32>,
                        %win: tensor<2x2xf32>, %op: tensor<2x3x4x4xf32>)
    -> (tensor<4x8x8xf32>, tensor<2x5x4x4xf32>, tensor<1x4x4x4x4xf32>, tensor<2x7x7x3xf32>, tensor<2x3x4x4xf32>) {
  // CHECK: linalg.conv_1d_ncw_fcw {tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1, d2) = init0[d0, d1, d2] + (sum(d3, d4) in0[d0, d3, d2 + d4] * in1[d1, d3, d4])>}
  %0 = linalg.conv_1d_ncw_fcw ins(%x1, %w1 : tensor<4x3x10xf32>, tensor<8x3x3xf32>) outs(%o1 : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
  // CHECK: linalg.conv_2d_nchw_fchw {{.*}}tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1, d2, d3) = init0[d0, d1, d2, d3] + (sum(d4, d5, d6) in0[d0, d4, d2 * 2 + d5, d3 * 2 + d6] * in1[d1, d4, d5, d6])>
  %1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x2, %w2 : tensor<2x3x9x9xf32>, tensor<5x3x3x3xf32>) outs(%o2 : tensor<2x5x4x4xf32>) -> tensor<2x5x4x4xf32>
  // CHECK: linalg.conv_3d_ncdhw_fcdhw {{.*}}tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1, d2, d3, d4) = init0[d0, d1, d2, d3, d4] + (sum(d5, d6, d7, d8) in0[d0, d5, d2 + d6, d3 + d7, d4 + d8] * in1[d1, d5, d6, d7, d8])>
  %2 = linalg.conv_3d_ncdhw_fcdhw ins(%x3, %w3 : tensor<1x2x6x6x6xf32>, tensor<4x2x3x3x3xf32>) outs(%o3 : tensor<1x4x4x4x4xf32>) -> tensor<1x4x4x4x4xf32>
  // CHECK: linalg.depthwise_conv_2d_nhwc_hwc {{.*}}tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1, d2, d3) = init0[d0, d1, d2, d3] + (sum(d4, d5) in0[d0, d1 + d4, d2 + d5, d3] * in1[d4, d5, d3])>
  %3 = linalg.depthwise_conv_2d_nhwc_hwc ins(%xd, %wd : tensor<2x9x9x3xf32>, tensor<3x3x3xf32>) outs(%od : tensor<2x7x7x3xf32>) -> tensor<2x7x7x3xf32>
  // CHECK: linalg.pooling_nchw_max {{.*}}tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1, d2, d3) = max(init0[d0, d1, d2, d3], max(d4 : 2, d5 : 2) in0[d0, d1, d2 * 2 + d4, d3 * 2 + d5])>
  %4 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x2, %win : tensor<2x3x9x9xf32>, tensor<2x2xf32>) outs(%op : tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  return %0, %1, %2, %3, %4 : tensor<4x8x8xf32>, tensor<2x5x4x4xf32>, tensor<1x4x4x4x4xf32>, tensor<2x7x7x3xf32>, tensor<2x3x4x4xf32>
}

// -----

// Tests the data-movement and reduction named ops.

// CHECK-LABEL: func.func @movement
func.func @movement(%a: tensor<8x6xf32>, %t: tensor<6x8xf32>, %v: tensor<6xf32>, %r: tensor<8xf32>,
                    %s: f32) -> (tensor<6x8xf32>, tensor<8x6xf32>, tensor<8xf32>, tensor<8x6xf32>, tensor<8x6xf32>) {
  // CHECK: linalg.transpose {{.*}}tdl.desc = #tdl.desc<(in0, init0) -> (d0, d1) = in0[d1, d0]>
  %0 = linalg.transpose ins(%a : tensor<8x6xf32>) outs(%t : tensor<6x8xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<8x6xf32>
  // CHECK: linalg.broadcast {{.*}}tdl.desc = #tdl.desc<(in0, init0) -> (d0, d1) = in0[d1]>
  %1 = linalg.broadcast ins(%v : tensor<6xf32>) outs(%e : tensor<8x6xf32>) dimensions = [0]
  // CHECK: linalg.reduce {{.*}}tdl.desc = #tdl.desc<(in0, init0) -> (d0) = init0[d0] + (sum(d1) in0[d0, d1])>
  %2 = linalg.reduce ins(%a : tensor<8x6xf32>) outs(%r : tensor<8xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %x = arith.addf %in, %acc : f32
      linalg.yield %x : f32
    }
  // CHECK: linalg.fill {tdl.desc = #tdl.desc<(in0, init0) -> (d0, d1) = in0>}
  %3 = linalg.fill ins(%s : f32) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  // CHECK: linalg.copy {tdl.desc = #tdl.desc<(in0, init0) -> (d0, d1) = in0[d0, d1]>}
  %4 = linalg.copy ins(%a : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0, %1, %2, %3, %4 : tensor<6x8xf32>, tensor<8x6xf32>, tensor<8xf32>, tensor<8x6xf32>, tensor<8x6xf32>
}

// -----

// Tests element-wise linalg ops, linalg.generic bodies and arith/math ops.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%a: tensor<8x6xf32>, %b: tensor<8x6xf32>, %m: tensor<8xf32>)
    -> (tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8xf32>, tensor<8x6xf32>) {
  %e = tensor.empty() : tensor<8x6xf32>
  // CHECK: linalg.add {tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1) = in0[d0, d1] + in1[d0, d1]>}
  %0 = linalg.add ins(%a, %b : tensor<8x6xf32>, tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  // CHECK: linalg.exp {tdl.desc = #tdl.desc<(in0, init0) -> (d0, d1) = exp(in0[d0, d1])>}
  %1 = linalg.exp ins(%a : tensor<8x6xf32>) outs(%e : tensor<8x6xf32>) -> tensor<8x6xf32>
  // CHECK: linalg.generic {{.*}}tdl.desc = #tdl.desc<(in0, in1, init0) -> (d0, d1) = exp(in0[d0, d1] - in1[d0]) * 2.0>
  %2 = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%a, %m : tensor<8x6xf32>, tensor<8xf32>) outs(%e : tensor<8x6xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %two = arith.constant 2.0 : f32
    %d = arith.subf %x, %y : f32
    %x2 = math.exp %d : f32
    %p = arith.mulf %x2, %two : f32
    linalg.yield %p : f32
  } -> tensor<8x6xf32>
  // CHECK: linalg.generic {{.*}}tdl.desc = #tdl.desc<(in0, init0) -> (d0) = max(init0[d0], max(d1) in0[d0, d1])>
  %3 = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : tensor<8x6xf32>) outs(%m : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %mx = arith.maximumf %acc, %x : f32
    linalg.yield %mx : f32
  } -> tensor<8xf32>
  // CHECK: arith.addf {{.*}}tdl.desc = #tdl.desc<(in0, in1) -> (d0, d1) = in0[d0, d1] + in1[d0, d1]>
  %4 = arith.addf %0, %1 : tensor<8x6xf32>
  // CHECK: math.tanh {{.*}}tdl.desc = #tdl.desc<(in0) -> (d0, d1) = tanh(in0[d0, d1])>
  %5 = math.tanh %4 : tensor<8x6xf32>
  return %4, %5, %2, %3, %0 : tensor<8x6xf32>, tensor<8x6xf32>, tensor<8x6xf32>, tensor<8xf32>, tensor<8x6xf32>
}

// -----

// Tests the tensor data-movement ops.

// CHECK-LABEL: func.func @tensor_ops
func.func @tensor_ops(%a: tensor<4x6xf32>, %b: tensor<2x6xf32>, %flat: tensor<24xf32>)
    -> (tensor<6x8xf32>, tensor<2x3xf32>, tensor<4x6xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<6x6xf32>) {
  %z = arith.constant 0.0 : f32
  // CHECK: tdl.desc = #tdl.desc<(in0) -> (d0, d1) = pad(in0[d0 - 1, d1 - 2])>
  %0 = tensor.pad %a low[1, 2] high[1, 0] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f32
  } : tensor<4x6xf32> to tensor<6x8xf32>
  // CHECK: tensor.extract_slice {{.*}}tdl.desc = #tdl.desc<(in0) -> (d0, d1) = in0[d0 + 1, d1 * 2 + 0]>
  %1 = tensor.extract_slice %a[1, 0] [2, 3] [1, 2] : tensor<4x6xf32> to tensor<2x3xf32>
  // CHECK: tensor.insert_slice {{.*}}tdl.desc = #tdl.desc<(in0, in1) -> (d0, d1) = insert(in0[d0 - 2, d1 + 0], in1[d0, d1])>
  %2 = tensor.insert_slice %b into %a[2, 0] [2, 6] [1, 1] : tensor<2x6xf32> into tensor<4x6xf32>
  // CHECK: tensor.expand_shape {{.*}}tdl.desc = #tdl.desc<(in0) -> (d0, d1, d2) = in0[d0, d1 * 3 + d2]>
  %3 = tensor.expand_shape %a [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf32> into tensor<4x2x3xf32>
  // CHECK: tensor.collapse_shape {{.*}}tdl.desc = #tdl.desc<(in0) -> (d0) = in0[d0 floordiv 6, d0 mod 6]>
  %4 = tensor.collapse_shape %a [[0, 1]] : tensor<4x6xf32> into tensor<24xf32>
  // CHECK: tensor.concat {{.*}}tdl.desc = #tdl.desc<(in0, in1) -> (d0, d1) = concat(in0[d0 + 0, d1], in1[d0 - 4, d1])>
  %5 = tensor.concat dim(0) %a, %b : (tensor<4x6xf32>, tensor<2x6xf32>) -> tensor<6x6xf32>
  return %0, %1, %2, %3, %4, %5 : tensor<6x8xf32>, tensor<2x3xf32>, tensor<4x6xf32>, tensor<4x2x3xf32>, tensor<24xf32>, tensor<6x6xf32>
}

// -----

// Tests the TOSA ops that TDL describes.

// CHECK-LABEL: func.func @tosa
func.func @tosa(%a: tensor<2x8x6xf32>, %b: tensor<2x6x4xf32>, %v: tensor<1x1x6xf32>,
                %x: tensor<1x8x8x3xf32>, %w: tensor<4x3x3x3xf32>, %bias: tensor<4xf32>)
    -> (tensor<2x8x4xf32>, tensor<2x8x6xf32>, tensor<2x1x6xf32>, tensor<1x6x6x4xf32>) {
  %zp = "tosa.const"() <{values = dense<0.0> : tensor<1xf32>}> : () -> tensor<1xf32>
  // CHECK: tosa.matmul {{.*}}tdl.desc = #tdl.desc<(in0, in1, in2, in3) -> (d0, d1, d2) = sum(d3) (in0[d0, d1, d3] - in2[0]) * (in1[d0, d3, d2] - in3[0])>
  %0 = tosa.matmul %a, %b, %zp, %zp : (tensor<2x8x6xf32>, tensor<2x6x4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<2x8x4xf32>
  // CHECK: tosa.add {{.*}}tdl.desc = #tdl.desc<(in0, in1) -> (d0, d1, d2) = add(in0[d0, d1, d2], in1[0, 0, d2])>
  %1 = tosa.add %a, %v : (tensor<2x8x6xf32>, tensor<1x1x6xf32>) -> tensor<2x8x6xf32>
  // CHECK: tosa.reduce_sum {{.*}}tdl.desc = #tdl.desc<(in0) -> (d0, d1, d2) = sum(r) in0[d0, r, d2]>
  %2 = tosa.reduce_sum %a {axis = 1 : i32} : (tensor<2x8x6xf32>) -> tensor<2x1x6xf32>
  // CHECK: tosa.conv2d {{.*}}tdl.desc = #tdl.desc<(in0, in1, in2, in3, in4) -> (d0, d1, d2, d3) = in2[d3] + (sum(d4, d5, d6) (in0[d0, d1 * 1 + d4 * 1 - 0, d2 * 1 + d5 * 1 - 0, d6] - in3[0]) * (in1[d3, d4, d5, d6] - in4[0]))>
  %3 = tosa.conv2d %x, %w, %bias, %zp, %zp {acc_type = f32, dilation = array<i64: 1, 1>, pad = array<i64: 0, 0, 0, 0>, stride = array<i64: 1, 1>}
      : (tensor<1x8x8x3xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>, tensor<1xf32>, tensor<1xf32>) -> tensor<1x6x6x4xf32>
  return %0, %1, %2, %3 : tensor<2x8x4xf32>, tensor<2x8x6xf32>, tensor<2x1x6xf32>, tensor<1x6x6x4xf32>
}
