// Two grouped convolutions (4 groups; the second strided) with a ReLU
// between, in the form torch-mlir writes a convolution with groups: the
// image split into groups by tensor.expand_shape after its zero pad, the
// filter likewise, linalg.conv_2d_ngchw_gfchw, the output's groups
// collapsed again (library-calls.test trains it with tofu-loss,
// tofu-autodiff and tofu-optimizer: the forward convolutions, the second
// one's data gradient and both filter gradients are grouped calls).
func.func @forward(%x: tensor<2x8x8x8xf32> loc("input"), %w1: tensor<8x2x3x3xf32> loc("conv1.weight"),
                   %w2: tensor<8x2x3x3xf32> loc("conv2.weight")) -> tensor<2x8x4x4xf32> {
  %zero = arith.constant 0.0 : f32
  %xp = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x8x8x8xf32> to tensor<2x8x10x10xf32>
  %xg = tensor.expand_shape %xp [[0], [1, 2], [3], [4]] output_shape [2, 4, 2, 10, 10]
      : tensor<2x8x10x10xf32> into tensor<2x4x2x10x10xf32>
  %w1g = tensor.expand_shape %w1 [[0, 1], [2], [3], [4]] output_shape [4, 2, 2, 3, 3]
      : tensor<8x2x3x3xf32> into tensor<4x2x2x3x3xf32>
  %e1 = tensor.empty() : tensor<2x4x2x8x8xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x4x2x8x8xf32>) -> tensor<2x4x2x8x8xf32>
  %y1 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%xg, %w1g : tensor<2x4x2x10x10xf32>, tensor<4x2x2x3x3xf32>) outs(%z1 : tensor<2x4x2x8x8xf32>) -> tensor<2x4x2x8x8xf32>
  %y1c = tensor.collapse_shape %y1 [[0], [1, 2], [3], [4]] : tensor<2x4x2x8x8xf32> into tensor<2x8x8x8xf32>
  %e2 = tensor.empty() : tensor<2x8x8x8xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(a, b, c, d) -> (a, b, c, d)>, affine_map<(a, b, c, d) -> (a, b, c, d)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%y1c : tensor<2x8x8x8xf32>) outs(%e2 : tensor<2x8x8x8xf32>) {
  ^bb0(%v: f32, %o: f32):
    %gt = arith.cmpf ugt, %v, %zero : f32
    %s = arith.select %gt, %v, %zero : f32
    linalg.yield %s : f32
  } -> tensor<2x8x8x8xf32>
  %rp = tensor.pad %r low[0, 0, 1, 1] high[0, 0, 1, 1] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<2x8x8x8xf32> to tensor<2x8x10x10xf32>
  %rg = tensor.expand_shape %rp [[0], [1, 2], [3], [4]] output_shape [2, 4, 2, 10, 10]
      : tensor<2x8x10x10xf32> into tensor<2x4x2x10x10xf32>
  %w2g = tensor.expand_shape %w2 [[0, 1], [2], [3], [4]] output_shape [4, 2, 2, 3, 3]
      : tensor<8x2x3x3xf32> into tensor<4x2x2x3x3xf32>
  %e3 = tensor.empty() : tensor<2x4x2x4x4xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x4x2x4x4xf32>) -> tensor<2x4x2x4x4xf32>
  %y2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%rg, %w2g : tensor<2x4x2x10x10xf32>, tensor<4x2x2x3x3xf32>) outs(%z3 : tensor<2x4x2x4x4xf32>) -> tensor<2x4x2x4x4xf32>
  %y2c = tensor.collapse_shape %y2 [[0], [1, 2], [3], [4]] : tensor<2x4x2x4x4xf32> into tensor<2x8x4x4xf32>
  return %y2c : tensor<2x8x4x4xf32>
}
