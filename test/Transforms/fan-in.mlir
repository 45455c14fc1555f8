// RUN: tofu-opt %s -split-input-file --test-tofu-fan-in -verify-diagnostics

// Tests the fan-in of PyTorch's default initialization on a dense layer
// stored (in, out), as the zoo writes it: the input features, 6; its bias
// takes the fan-in of the product it is added to.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
func.func @dense(%x: tensor<4x6xf32>,
                 // expected-remark @+1 {{argument 1: fan-in 6}}
                 %w: tensor<6x10xf32> {tofu.weight},
                 // expected-remark @+1 {{argument 2: fan-in 6}}
                 %b: tensor<10xf32> {tofu.weight}) -> tensor<4x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x10xf32>) -> tensor<4x10xf32>
  %y = linalg.matmul ins(%x, %w : tensor<4x6xf32>, tensor<6x10xf32>) outs(%f : tensor<4x10xf32>) -> tensor<4x10xf32>
  %z = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%y, %b : tensor<4x10xf32>, tensor<10xf32>) outs(%e : tensor<4x10xf32>) {
  ^bb0(%in: f32, %bias: f32, %out: f32):
    %s = arith.addf %in, %bias : f32
    linalg.yield %s : f32
  } -> tensor<4x10xf32>
  return %z : tensor<4x10xf32>
}

// -----

// Tests a weight stored (out, in), as torch-mlir exports nn.Linear, and
// transposed before the product: the fan-in is still the input features.

func.func @transposed(%x: tensor<4x6xf32>,
                      // expected-remark @+1 {{argument 1: fan-in 6}}
                      %w: tensor<10x6xf32> {tofu.weight}) -> tensor<4x10xf32> {
  %zero = arith.constant 0.0 : f32
  %t = tensor.empty() : tensor<6x10xf32>
  %wt = linalg.transpose ins(%w : tensor<10x6xf32>) outs(%t : tensor<6x10xf32>) permutation = [1, 0]
  %e = tensor.empty() : tensor<4x10xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x10xf32>) -> tensor<4x10xf32>
  %y = linalg.matmul ins(%x, %wt : tensor<4x6xf32>, tensor<6x10xf32>) outs(%f : tensor<4x10xf32>) -> tensor<4x10xf32>
  return %y : tensor<4x10xf32>
}

// -----

// Tests a convolution filter (F, C, KH, KW) = (8, 3, 5, 5): the channels
// times the window, 75.

func.func @conv(%x: tensor<2x3x12x12xf32>,
                // expected-remark @+1 {{argument 1: fan-in 75}}
                %w: tensor<8x3x5x5xf32> {tofu.weight}) -> tensor<2x8x8x8xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x8x8x8xf32>
  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  %y = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<2x3x12x12xf32>, tensor<8x3x5x5xf32>) outs(%f : tensor<2x8x8x8xf32>) -> tensor<2x8x8x8xf32>
  return %y : tensor<2x8x8x8xf32>
}

// -----

// Tests a weight that no contraction reads (a scale multiplied in
// element-wise and summed): no fan-in, so the driver falls back to its
// shape rule.

#id1 = affine_map<(d0) -> (d0)>
#sum = affine_map<(d0) -> ()>
func.func @scale(%x: tensor<4xf32>,
                 // expected-remark @+1 {{argument 1: no fan-in}}
                 %g: tensor<4xf32> {tofu.weight}) -> tensor<f32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4xf32>
  %m = linalg.generic {indexing_maps = [#id1, #id1, #id1], iterator_types = ["parallel"]} ins(%x, %g : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %p = arith.mulf %a, %b : f32
    linalg.yield %p : f32
  } -> tensor<4xf32>
  %s0 = tensor.empty() : tensor<f32>
  %s1 = linalg.fill ins(%zero : f32) outs(%s0 : tensor<f32>) -> tensor<f32>
  %s = linalg.generic {indexing_maps = [#id1, #sum], iterator_types = ["reduction"]} ins(%m : tensor<4xf32>) outs(%s1 : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %t = arith.addf %a, %acc : f32
    linalg.yield %t : f32
  } -> tensor<f32>
  return %s : tensor<f32>
}
