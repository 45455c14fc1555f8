// A MobileNetV3-style block with a classifier, written with the named and
// structured linalg ops that torch-mlir and its linalg cleanups leave in
// exports: a depthwise 3x3 convolution (linalg.depthwise_conv_2d_nchw_chw,
// padded with tensor.pad) whose bias comes from linalg.broadcast, ReLU as
// linalg.map, a pointwise linalg.conv_2d_nchw_fchw, hard-swish with
// minimumf/maximumf, squeeze-and-excitation (linalg.reduce over the spatial
// dimensions, a linalg.matmul whose indexing maps transpose the weight, a
// sigmoid and a broadcast multiply), a skip path concatenated on channels
// with tensor.concat, 2x2 average pooling (pooling_nchw_sum and linalg.mul
// by a filled 1/4) and a linear head with linalg.add. Returns logits.
// Batch 2, 4 channels expanded to 8, 6x6 images, 10 classes.

#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#nc4 = affine_map<(d0, d1, d2, d3) -> (d0, d1)>
#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#nk = affine_map<(d0, d1, d2) -> (d1, d2)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
module attributes {torch.debug_module_name = "MobileBlock"} {
  func.func @forward(%x: tensor<2x4x6x6xf32>, %dw_w: tensor<4x3x3xf32>, %dw_b: tensor<4xf32>,
                     %pw_w: tensor<8x4x1x1xf32>, %se_w: tensor<8x8xf32>, %se_b: tensor<8xf32>,
                     %fc_w: tensor<10x108xf32>, %fc_b: tensor<10xf32>) -> tensor<2x10xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %three = arith.constant 3.000000e+00 : f32
    %six = arith.constant 6.000000e+00 : f32
    %inv36 = arith.constant 0.027777778 : f32
    %quarter = arith.constant 2.500000e-01 : f32
    // Depthwise 3x3, padding 1, bias by broadcast; ReLU.
    %pad = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%a: index, %b: index, %c: index, %d: index):
      tensor.yield %cst : f32
    } : tensor<2x4x6x6xf32> to tensor<2x4x8x8xf32>
    %e4 = tensor.empty() : tensor<2x4x6x6xf32>
    %bias = linalg.broadcast ins(%dw_b : tensor<4xf32>) outs(%e4 : tensor<2x4x6x6xf32>) dimensions = [0, 2, 3]
    %dw = linalg.depthwise_conv_2d_nchw_chw {dilations = dense<1> : tensor<2xi64>, strides = dense<1> : tensor<2xi64>} ins(%pad, %dw_w : tensor<2x4x8x8xf32>, tensor<4x3x3xf32>) outs(%bias : tensor<2x4x6x6xf32>) -> tensor<2x4x6x6xf32>
    %relu = linalg.map ins(%dw : tensor<2x4x6x6xf32>) outs(%e4 : tensor<2x4x6x6xf32>)
      (%in: f32, %init: f32) {
        %r = arith.maximumf %in, %cst : f32
        linalg.yield %r : f32
      }
    // Pointwise 1x1 to 8 channels; hard-swish x * min(max(x + 3, 0), 6) / 6.
    %e8 = tensor.empty() : tensor<2x8x6x6xf32>
    %z8 = linalg.fill ins(%cst : f32) outs(%e8 : tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
    %pw = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%relu, %pw_w : tensor<2x4x6x6xf32>, tensor<8x4x1x1xf32>) outs(%z8 : tensor<2x8x6x6xf32>) -> tensor<2x8x6x6xf32>
    %hs = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%pw : tensor<2x8x6x6xf32>) outs(%e8 : tensor<2x8x6x6xf32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %in, %three : f32
      %b = arith.maximumf %a, %cst : f32
      %c = arith.minimumf %b, %six : f32
      %d = arith.mulf %in, %c : f32
      %r = arith.divf %d, %six : f32
      linalg.yield %r : f32
    } -> tensor<2x8x6x6xf32>
    // Squeeze-and-excitation: spatial mean, x W^T + b, sigmoid, scale.
    %e2 = tensor.empty() : tensor<2x8xf32>
    %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %sum = linalg.reduce ins(%hs : tensor<2x8x6x6xf32>) outs(%z2 : tensor<2x8xf32>) dimensions = [2, 3]
      (%in: f32, %acc: f32) {
        %s = arith.addf %in, %acc : f32
        linalg.yield %s : f32
      }
    %mean = linalg.map ins(%sum : tensor<2x8xf32>) outs(%e2 : tensor<2x8xf32>)
      (%in: f32, %init: f32) {
        %r = arith.mulf %in, %inv36 : f32
        linalg.yield %r : f32
      }
    %se0 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%mean, %se_w : tensor<2x8xf32>, tensor<8x8xf32>) outs(%z2 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %seb = linalg.broadcast ins(%se_b : tensor<8xf32>) outs(%e2 : tensor<2x8xf32>) dimensions = [0]
    %se1 = linalg.add ins(%se0, %seb : tensor<2x8xf32>, tensor<2x8xf32>) outs(%e2 : tensor<2x8xf32>) -> tensor<2x8xf32>
    %gate = linalg.map ins(%se1 : tensor<2x8xf32>) outs(%e2 : tensor<2x8xf32>)
      (%in: f32, %init: f32) {
        %n = arith.negf %in : f32
        %e = math.exp %n : f32
        %d = arith.addf %e, %one : f32
        %r = arith.divf %one, %d : f32
        linalg.yield %r : f32
      }
    %sc = linalg.generic {indexing_maps = [#id4, #nc4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%hs, %gate : tensor<2x8x6x6xf32>, tensor<2x8xf32>) outs(%e8 : tensor<2x8x6x6xf32>) {
    ^bb0(%in: f32, %g: f32, %out: f32):
      %r = arith.mulf %in, %g : f32
      linalg.yield %r : f32
    } -> tensor<2x8x6x6xf32>
    // Skip path on channels, 2x2 average pooling.
    %cat = tensor.concat dim(1) %x, %sc : (tensor<2x4x6x6xf32>, tensor<2x8x6x6xf32>) -> tensor<2x12x6x6xf32>
    %ep = tensor.empty() : tensor<2x12x3x3xf32>
    %zp = linalg.fill ins(%cst : f32) outs(%ep : tensor<2x12x3x3xf32>) -> tensor<2x12x3x3xf32>
    %k = tensor.empty() : tensor<2x2xf32>
    %ps = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%cat, %k : tensor<2x12x6x6xf32>, tensor<2x2xf32>) outs(%zp : tensor<2x12x3x3xf32>) -> tensor<2x12x3x3xf32>
    %q = linalg.fill ins(%quarter : f32) outs(%ep : tensor<2x12x3x3xf32>) -> tensor<2x12x3x3xf32>
    %avg = linalg.mul ins(%ps, %q : tensor<2x12x3x3xf32>, tensor<2x12x3x3xf32>) outs(%ep : tensor<2x12x3x3xf32>) -> tensor<2x12x3x3xf32>
    // Flatten and the linear head.
    %fl = tensor.collapse_shape %avg [[0], [1, 2, 3]] : tensor<2x12x3x3xf32> into tensor<2x108xf32>
    %eo = tensor.empty() : tensor<2x10xf32>
    %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x10xf32>) -> tensor<2x10xf32>
    %o0 = linalg.matmul indexing_maps = [#mk, #nk, #mn] ins(%fl, %fc_w : tensor<2x108xf32>, tensor<10x108xf32>) outs(%zo : tensor<2x10xf32>) -> tensor<2x10xf32>
    %ob = linalg.broadcast ins(%fc_b : tensor<10xf32>) outs(%eo : tensor<2x10xf32>) dimensions = [0]
    %o = linalg.add ins(%o0, %ob : tensor<2x10xf32>, tensor<2x10xf32>) outs(%eo : tensor<2x10xf32>) -> tensor<2x10xf32>
    return %o : tensor<2x10xf32>
  }
}
