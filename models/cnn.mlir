// A small convolutional classifier, forward pass, in linalg on tensors:
// conv 3x3 -> relu -> 2x2 max-pool -> flatten -> fully connected -> softmax.
// Batch 8, 3 input channels, 16x16 images, 16 filters, 10 classes.

#relu_map = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#row = affine_map<(d0, d1) -> (d0, d1)>
#bcast_col = affine_map<(d0, d1) -> (d1)>
#per_row = affine_map<(d0, d1) -> (d0)>

func.func @forward(%image: tensor<8x3x16x16xf32>, %filters: tensor<16x3x3x3xf32>,
                   %weights: tensor<1024x10xf32>, %bias: tensor<10xf32>)
    -> tensor<8x10xf32> {
  %zero = arith.constant 0.0 : f32
  %ninf = arith.constant -3.40282347E+38 : f32

  // Convolution (valid padding): 16x16 -> 14x14.
  %conv_init = tensor.empty() : tensor<8x16x14x14xf32>
  %conv_zero = linalg.fill ins(%zero : f32) outs(%conv_init : tensor<8x16x14x14xf32>) -> tensor<8x16x14x14xf32>
  %conv = linalg.conv_2d_nchw_fchw
      ins(%image, %filters : tensor<8x3x16x16xf32>, tensor<16x3x3x3xf32>)
      outs(%conv_zero : tensor<8x16x14x14xf32>) -> tensor<8x16x14x14xf32>

  // ReLU.
  %relu = linalg.generic {indexing_maps = [#relu_map, #relu_map],
                          iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      ins(%conv : tensor<8x16x14x14xf32>) outs(%conv_init : tensor<8x16x14x14xf32>) {
  ^bb0(%x: f32, %out: f32):
    %m = arith.maximumf %x, %zero : f32
    linalg.yield %m : f32
  } -> tensor<8x16x14x14xf32>

  // 2x2 max-pool with stride 2 after padding 14x14 to 16x16: 8x8.
  %padded = tensor.pad %relu low[0, 0, 0, 0] high[0, 0, 2, 2] {
  ^bb0(%i0: index, %i1: index, %i2: index, %i3: index):
    tensor.yield %zero : f32
  } : tensor<8x16x14x14xf32> to tensor<8x16x16x16xf32>
  %window = tensor.empty() : tensor<2x2xf32>
  %pool_init = tensor.empty() : tensor<8x16x8x8xf32>
  %pool_ninf = linalg.fill ins(%ninf : f32) outs(%pool_init : tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>
  %pool = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%padded, %window : tensor<8x16x16x16xf32>, tensor<2x2xf32>)
      outs(%pool_ninf : tensor<8x16x8x8xf32>) -> tensor<8x16x8x8xf32>

  // Flatten and classify.
  %flat = tensor.collapse_shape %pool [[0], [1, 2, 3]] : tensor<8x16x8x8xf32> into tensor<8x1024xf32>
  %fc_init = tensor.empty() : tensor<8x10xf32>
  %fc_zero = linalg.fill ins(%zero : f32) outs(%fc_init : tensor<8x10xf32>) -> tensor<8x10xf32>
  %fc = linalg.matmul ins(%flat, %weights : tensor<8x1024xf32>, tensor<1024x10xf32>)
                      outs(%fc_zero : tensor<8x10xf32>) -> tensor<8x10xf32>
  %logits = linalg.generic {indexing_maps = [#row, #bcast_col, #row],
                            iterator_types = ["parallel", "parallel"]}
      ins(%fc, %bias : tensor<8x10xf32>, tensor<10xf32>) outs(%fc_init : tensor<8x10xf32>) {
  ^bb0(%a: f32, %b: f32, %out: f32):
    %s = arith.addf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>

  // Softmax over the classes.
  %max_init = tensor.empty() : tensor<8xf32>
  %max_ninf = linalg.fill ins(%ninf : f32) outs(%max_init : tensor<8xf32>) -> tensor<8xf32>
  %max = linalg.generic {indexing_maps = [#row, #per_row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%logits : tensor<8x10xf32>) outs(%max_ninf : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %m = arith.maximumf %acc, %x : f32
    linalg.yield %m : f32
  } -> tensor<8xf32>
  %exp = linalg.generic {indexing_maps = [#row, #per_row, #row],
                         iterator_types = ["parallel", "parallel"]}
      ins(%logits, %max : tensor<8x10xf32>, tensor<8xf32>) outs(%fc_init : tensor<8x10xf32>) {
  ^bb0(%x: f32, %m: f32, %out: f32):
    %d = arith.subf %x, %m : f32
    %e = math.exp %d : f32
    linalg.yield %e : f32
  } -> tensor<8x10xf32>
  %sum_zero = linalg.fill ins(%zero : f32) outs(%max_init : tensor<8xf32>) -> tensor<8xf32>
  %sum = linalg.generic {indexing_maps = [#row, #per_row],
                         iterator_types = ["parallel", "reduction"]}
      ins(%exp : tensor<8x10xf32>) outs(%sum_zero : tensor<8xf32>) {
  ^bb0(%x: f32, %acc: f32):
    %s = arith.addf %acc, %x : f32
    linalg.yield %s : f32
  } -> tensor<8xf32>
  %probs = linalg.generic {indexing_maps = [#row, #per_row, #row],
                           iterator_types = ["parallel", "parallel"]}
      ins(%exp, %sum : tensor<8x10xf32>, tensor<8xf32>) outs(%fc_init : tensor<8x10xf32>) {
  ^bb0(%x: f32, %s: f32, %out: f32):
    %p = arith.divf %x, %s : f32
    linalg.yield %p : f32
  } -> tensor<8x10xf32>
  return %probs : tensor<8x10xf32>
}
