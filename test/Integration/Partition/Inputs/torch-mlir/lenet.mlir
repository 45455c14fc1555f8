// A LeNet-style CNN in the linalg-on-tensors form torch-mlir emits for
// nn.Conv2d, nn.ReLU, nn.MaxPool2d, torch.flatten and nn.Linear: each
// convolution pads its input with tensor.pad, starts from the bias
// broadcast by a linalg.generic and runs linalg.conv_2d_nchw_fchw; max
// pooling is linalg.pooling_nchw_max from a -inf fill; the second
// convolution has stride 2; flatten is collapse_shape and the linear layers
// transpose their weights. Returns logits. Batch 2, 1x8x8 images, 4 and 8
// channels, 10 classes.

#bias4 = affine_map<(d0, d1, d2, d3) -> (d1)>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#bias2 = affine_map<(d0, d1) -> (d1)>
module attributes {torch.debug_module_name = "LeNet"} {
  func.func @forward(%x: tensor<2x1x8x8xf32>, %c1_w: tensor<4x1x3x3xf32>, %c1_b: tensor<4xf32>,
                     %c2_w: tensor<8x4x3x3xf32>, %c2_b: tensor<8xf32>,
                     %f1_w: tensor<16x8xf32>, %f1_b: tensor<16xf32>,
                     %f2_w: tensor<10x16xf32>, %f2_b: tensor<10xf32>) -> tensor<2x10xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %ninf = arith.constant 0xFF800000 : f32
    // conv1: 1 -> 4 channels, 3x3, padding 1; ReLU; max pool 2x2.
    %p0 = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%a: index, %b: index, %c: index, %d: index):
      tensor.yield %cst : f32
    } : tensor<2x1x8x8xf32> to tensor<2x1x10x10xf32>
    %e1 = tensor.empty() : tensor<2x4x8x8xf32>
    %b1 = linalg.generic {indexing_maps = [#bias4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c1_b : tensor<4xf32>) outs(%e1 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x8x8xf32>
    %y1 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%p0, %c1_w : tensor<2x1x10x10xf32>, tensor<4x1x3x3xf32>) outs(%b1 : tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    %r1 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y1 : tensor<2x4x8x8xf32>) outs(%e1 : tensor<2x4x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %c = arith.cmpf ugt, %in, %cst : f32
      %s = arith.select %c, %in, %cst : f32
      linalg.yield %s : f32
    } -> tensor<2x4x8x8xf32>
    %ep1 = tensor.empty() : tensor<2x4x4x4xf32>
    %mi1 = linalg.fill ins(%ninf : f32) outs(%ep1 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    %k2 = tensor.empty() : tensor<2x2xf32>
    %m1 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%r1, %k2 : tensor<2x4x8x8xf32>, tensor<2x2xf32>) outs(%mi1 : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
    // conv2: 4 -> 8 channels, 3x3, stride 2, padding 1; ReLU; max pool 2x2.
    %p1 = tensor.pad %m1 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%a: index, %b: index, %c: index, %d: index):
      tensor.yield %cst : f32
    } : tensor<2x4x4x4xf32> to tensor<2x4x6x6xf32>
    %e2 = tensor.empty() : tensor<2x8x2x2xf32>
    %b2 = linalg.generic {indexing_maps = [#bias4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c2_b : tensor<8xf32>) outs(%e2 : tensor<2x8x2x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x8x2x2xf32>
    %y2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%p1, %c2_w : tensor<2x4x6x6xf32>, tensor<8x4x3x3xf32>) outs(%b2 : tensor<2x8x2x2xf32>) -> tensor<2x8x2x2xf32>
    %r2 = linalg.generic {indexing_maps = [#id4, #id4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%y2 : tensor<2x8x2x2xf32>) outs(%e2 : tensor<2x8x2x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      %c = arith.cmpf ugt, %in, %cst : f32
      %s = arith.select %c, %in, %cst : f32
      linalg.yield %s : f32
    } -> tensor<2x8x2x2xf32>
    %ep2 = tensor.empty() : tensor<2x8x1x1xf32>
    %mi2 = linalg.fill ins(%ninf : f32) outs(%ep2 : tensor<2x8x1x1xf32>) -> tensor<2x8x1x1xf32>
    %m2 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>} ins(%r2, %k2 : tensor<2x8x2x2xf32>, tensor<2x2xf32>) outs(%mi2 : tensor<2x8x1x1xf32>) -> tensor<2x8x1x1xf32>
    // Flatten, fc1 + ReLU, fc2.
    %fl = tensor.collapse_shape %m2 [[0], [1, 2, 3]] : tensor<2x8x1x1xf32> into tensor<2x8xf32>
    %et1 = tensor.empty() : tensor<8x16xf32>
    %w1t = linalg.transpose ins(%f1_w : tensor<16x8xf32>) outs(%et1 : tensor<8x16xf32>) permutation = [1, 0]
    %eh = tensor.empty() : tensor<2x16xf32>
    %zh = linalg.fill ins(%cst : f32) outs(%eh : tensor<2x16xf32>) -> tensor<2x16xf32>
    %h0 = linalg.matmul ins(%fl, %w1t : tensor<2x8xf32>, tensor<8x16xf32>) outs(%zh : tensor<2x16xf32>) -> tensor<2x16xf32>
    %h = linalg.generic {indexing_maps = [#id2, #bias2, #id2], iterator_types = ["parallel", "parallel"]} ins(%h0, %f1_b : tensor<2x16xf32>, tensor<16xf32>) outs(%eh : tensor<2x16xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %s = arith.addf %a, %b : f32
      %c = arith.cmpf ugt, %s, %cst : f32
      %r = arith.select %c, %s, %cst : f32
      linalg.yield %r : f32
    } -> tensor<2x16xf32>
    %et2 = tensor.empty() : tensor<16x10xf32>
    %w2t = linalg.transpose ins(%f2_w : tensor<10x16xf32>) outs(%et2 : tensor<16x10xf32>) permutation = [1, 0]
    %eo = tensor.empty() : tensor<2x10xf32>
    %zo = linalg.fill ins(%cst : f32) outs(%eo : tensor<2x10xf32>) -> tensor<2x10xf32>
    %o0 = linalg.matmul ins(%h, %w2t : tensor<2x16xf32>, tensor<16x10xf32>) outs(%zo : tensor<2x10xf32>) -> tensor<2x10xf32>
    %o = linalg.generic {indexing_maps = [#id2, #bias2, #id2], iterator_types = ["parallel", "parallel"]} ins(%o0, %f2_b : tensor<2x10xf32>, tensor<10xf32>) outs(%eo : tensor<2x10xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<2x10xf32>
    return %o : tensor<2x10xf32>
  }
}
