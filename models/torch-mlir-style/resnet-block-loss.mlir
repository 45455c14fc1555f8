// The model below with torch.nn.functional.mse_loss(output, target) appended,
// in the form torch-mlir's TorchToLinalg emits for aten.mse_loss (sub, square,
// sum into a 0-d tensor, divide). Weights are marked by the tests' weights=...
// A ResNet basic block plus classifier head, written in the linalg-on-tensors
// form that torch-mlir's TorchToLinalg emits for torchvision ResNets:
// tensor.pad before each convolution, the bias broadcast into the
// convolution's init, batch norm as one element-wise linalg.generic, ReLU as
// cmpf + select, adaptive average pooling as pooling_nchw_sum + divf, flatten
// as collapse_shape and nn.Linear as a transposed-weight matmul. Batch 2,
// 16 channels, 8x8 feature maps, 10 classes.

#map = affine_map<(d0, d1, d2, d3) -> (d1)>
#map1 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#map2 = affine_map<(d0, d1) -> (d0, d1)>
#map3 = affine_map<(d0, d1) -> (d1, d0)>
#map4 = affine_map<(d0, d1) -> (d1)>
module attributes {torch.debug_module_name = "ResNetBlock"} {
  func.func @forward(%arg0: tensor<2x16x8x8xf32>, %w1: tensor<16x16x3x3xf32>, %b1: tensor<16xf32>,
                     %g1: tensor<16xf32>, %be1: tensor<16xf32>, %m1: tensor<16xf32>, %v1: tensor<16xf32>,
                     %w2: tensor<16x16x3x3xf32>, %b2: tensor<16xf32>,
                     %fcw: tensor<10x16xf32>, %fcb: tensor<10xf32>, %target: tensor<2x10xf32>) -> tensor<f32> {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant 1.000000e-05 : f32
    %cst_1 = arith.constant 6.400000e+01 : f32
    %padded = tensor.pad %arg0 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<2x16x8x8xf32> to tensor<2x16x10x10xf32>
    %0 = tensor.empty() : tensor<2x16x8x8xf32>
    %1 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b1 : tensor<16xf32>) outs(%0 : tensor<2x16x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x8x8xf32>
    %2 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded, %w1 : tensor<2x16x10x10xf32>, tensor<16x16x3x3xf32>) outs(%1 : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
    %3 = linalg.generic {indexing_maps = [#map1, #map, #map, #map, #map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%2, %m1, %v1, %g1, %be1 : tensor<2x16x8x8xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%0 : tensor<2x16x8x8xf32>) {
    ^bb0(%in: f32, %in_2: f32, %in_3: f32, %in_4: f32, %in_5: f32, %out: f32):
      %20 = arith.addf %in_3, %cst_0 : f32
      %21 = math.rsqrt %20 : f32
      %22 = arith.subf %in, %in_2 : f32
      %23 = arith.mulf %22, %21 : f32
      %24 = arith.mulf %23, %in_4 : f32
      %25 = arith.addf %24, %in_5 : f32
      linalg.yield %25 : f32
    } -> tensor<2x16x8x8xf32>
    %4 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%3 : tensor<2x16x8x8xf32>) outs(%0 : tensor<2x16x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.cmpf ugt, %in, %cst : f32
      %21 = arith.select %20, %in, %cst : f32
      linalg.yield %21 : f32
    } -> tensor<2x16x8x8xf32>
    %padded_2 = tensor.pad %4 low[0, 0, 1, 1] high[0, 0, 1, 1] {
    ^bb0(%arg1: index, %arg2: index, %arg3: index, %arg4: index):
      tensor.yield %cst : f32
    } : tensor<2x16x8x8xf32> to tensor<2x16x10x10xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%b2 : tensor<16xf32>) outs(%0 : tensor<2x16x8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x16x8x8xf32>
    %6 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%padded_2, %w2 : tensor<2x16x10x10xf32>, tensor<16x16x3x3xf32>) outs(%5 : tensor<2x16x8x8xf32>) -> tensor<2x16x8x8xf32>
    %7 = linalg.generic {indexing_maps = [#map1, #map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%6, %arg0 : tensor<2x16x8x8xf32>, tensor<2x16x8x8xf32>) outs(%0 : tensor<2x16x8x8xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %20 = arith.addf %in, %in_2 : f32
      %21 = arith.cmpf ugt, %20, %cst : f32
      %22 = arith.select %21, %20, %cst : f32
      linalg.yield %22 : f32
    } -> tensor<2x16x8x8xf32>
    %8 = tensor.empty() : tensor<8x8xf32>
    %9 = tensor.empty() : tensor<2x16x1x1xf32>
    %10 = linalg.fill ins(%cst : f32) outs(%9 : tensor<2x16x1x1xf32>) -> tensor<2x16x1x1xf32>
    %11 = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>} ins(%7, %8 : tensor<2x16x8x8xf32>, tensor<8x8xf32>) outs(%10 : tensor<2x16x1x1xf32>) -> tensor<2x16x1x1xf32>
    %12 = linalg.generic {indexing_maps = [#map1, #map1], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%11 : tensor<2x16x1x1xf32>) outs(%9 : tensor<2x16x1x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.divf %in, %cst_1 : f32
      linalg.yield %20 : f32
    } -> tensor<2x16x1x1xf32>
    %collapsed = tensor.collapse_shape %12 [[0], [1, 2, 3]] : tensor<2x16x1x1xf32> into tensor<2x16xf32>
    %13 = tensor.empty() : tensor<16x10xf32>
    %14 = linalg.generic {indexing_maps = [#map2, #map3], iterator_types = ["parallel", "parallel"]} ins(%fcw : tensor<10x16xf32>) outs(%13 : tensor<16x10xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<16x10xf32>
    %15 = tensor.empty() : tensor<2x10xf32>
    %16 = linalg.fill ins(%cst : f32) outs(%15 : tensor<2x10xf32>) -> tensor<2x10xf32>
    %17 = linalg.matmul ins(%collapsed, %14 : tensor<2x16xf32>, tensor<16x10xf32>) outs(%16 : tensor<2x10xf32>) -> tensor<2x10xf32>
    %18 = linalg.generic {indexing_maps = [#map2, #map4, #map2], iterator_types = ["parallel", "parallel"]} ins(%17, %fcb : tensor<2x10xf32>, tensor<10xf32>) outs(%15 : tensor<2x10xf32>) {
    ^bb0(%in: f32, %in_2: f32, %out: f32):
      %20 = arith.addf %in, %in_2 : f32
      linalg.yield %20 : f32
    } -> tensor<2x10xf32>
    %mse_e = tensor.empty() : tensor<2x10xf32>
    %mse_d = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%18, %target : tensor<2x10xf32>, tensor<2x10xf32>) outs(%mse_e : tensor<2x10xf32>) {
    ^bb0(%in: f32, %in_1: f32, %out: f32):
      %s = arith.subf %in, %in_1 : f32
      %q = arith.mulf %s, %s : f32
      linalg.yield %q : f32
    } -> tensor<2x10xf32>
    %mse_z = arith.constant 0.000000e+00 : f32
    %mse_e0 = tensor.empty() : tensor<f32>
    %mse_i = linalg.fill ins(%mse_z : f32) outs(%mse_e0 : tensor<f32>) -> tensor<f32>
    %mse_s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> ()>], iterator_types = ["reduction", "reduction"]} ins(%mse_d : tensor<2x10xf32>) outs(%mse_i : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %a = arith.addf %in, %out : f32
      linalg.yield %a : f32
    } -> tensor<f32>
    %mse_n = arith.constant 20.0 : f32
    %mse_e1 = tensor.empty() : tensor<f32>
    %loss = linalg.generic {indexing_maps = [affine_map<() -> ()>, affine_map<() -> ()>], iterator_types = []} ins(%mse_s : tensor<f32>) outs(%mse_e1 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.divf %in, %mse_n : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
