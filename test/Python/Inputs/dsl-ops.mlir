func.func @f(%d: tensor<4x3x10xf32>, %w: tensor<3x8x3xf32>, %x: tensor<8xf32>) -> (tensor<4x8x8xf32>, tensor<4xf32>) {
  %0 = "py.conv1d"(%d, %w) : (tensor<4x3x10xf32>, tensor<3x8x3xf32>) -> tensor<4x8x8xf32>
  %1 = "py.pool2"(%x) : (tensor<8xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4x8x8xf32>, tensor<4xf32>
}
