// RUN: tofu-opt %s --convert-tofu-to-gpu --split-input-file -verify-diagnostics

// Tests that a matrix product on tensors is rejected: the library calls
// take buffers.
func.func @on_tensors(%a: tensor<4x6xf32>, %b: tensor<6x8xf32>, %c: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{convert-tofu-to-gpu: a matrix product on tensors; bufferize before the library calls}}
  %0 = linalg.matmul ins(%a, %b : tensor<4x6xf32>, tensor<6x8xf32>) outs(%c : tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Tests that a convolution on tensors is rejected: the library calls take
// buffers.
func.func @conv_on_tensors(%x: tensor<2x3x6x6xf32>, %w: tensor<4x3x3x3xf32>, %y: tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> {
  // expected-error @+1 {{convert-tofu-to-gpu: a convolution on tensors; bufferize before the library calls}}
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : tensor<2x3x6x6xf32>, tensor<4x3x3x3xf32>) outs(%y : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// Tests that a dilated convolution stays a generated kernel, with a remark.
func.func @dilated(%x: memref<2x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x4x4xf32>) {
  // expected-remark @+1 {{convert-tofu-to-gpu: not a library call (the dilation is not 1); the convolution stays generated code}}
  linalg.conv_2d_nchw_fchw {dilations = dense<2> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x4x4xf32>)
  return
}

// -----

// Tests that an NHWC convolution stays a generated kernel, with a remark.
func.func @nhwc(%x: memref<2x6x6x3xf32>, %w: memref<3x3x3x4xf32>, %y: memref<2x4x4x4xf32>) {
  // expected-remark @+1 {{convert-tofu-to-gpu: not a library call (the image is not in NCHW layout); the convolution stays generated code}}
  linalg.conv_2d_nhwc_hwcf {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x6x6x3xf32>, memref<3x3x3x4xf32>) outs(%y : memref<2x4x4x4xf32>)
  return
}

// -----

// Tests that a double-precision convolution stays a generated kernel, with
// a remark.
func.func @f64(%x: memref<2x3x6x6xf64>, %w: memref<4x3x3x3xf64>, %y: memref<2x4x4x4xf64>) {
  // expected-remark @+1 {{convert-tofu-to-gpu: not a library call (the convolution is not single precision); the convolution stays generated code}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x3x6x6xf64>, memref<4x3x3x3xf64>) outs(%y : memref<2x4x4x4xf64>)
  return
}

// -----

// Tests that a 3-D convolution stays a generated kernel, with a remark.
func.func @conv3d(%x: memref<1x2x4x4x4xf32>, %w: memref<2x2x3x3x3xf32>, %y: memref<1x2x2x2x2xf32>) {
  // expected-remark @+1 {{convert-tofu-to-gpu: not a library call (only 1-D and 2-D convolutions are library calls); the convolution stays generated code}}
  linalg.conv_3d_ncdhw_fcdhw {dilations = dense<1> : vector<3xi64>, strides = dense<1> : vector<3xi64>}
    ins(%x, %w : memref<1x2x4x4x4xf32>, memref<2x2x3x3x3xf32>) outs(%y : memref<1x2x2x2x2xf32>)
  return
}

// -----

// Tests that a convolution that computes fewer outputs than its image
// allows (3 where (8 - 3) / 1 + 1 = 6) stays a generated kernel, with a
// remark: cuDNN derives the output extent from the image.
func.func @short_output(%x: memref<2x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<2x4x3x3xf32>) {
  // expected-remark @+1 {{convert-tofu-to-gpu: not a library call (the output extent does not follow from the image extent, the kernel and the stride); the convolution stays generated code}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x3x8x8xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x3x3xf32>)
  return
}

// -----

// Tests that a grouped convolution whose group dimension does not stride
// over its channels (a view of every other group) stays a generated
// kernel, with a remark: cuDNN takes the groups and the channels as one
// dimension.
func.func @gapped_groups(%x: memref<2x2x3x5x5xf32, strided<[300, 150, 25, 5, 1]>>, %w: memref<2x2x3x3x3xf32>,
                         %y: memref<2x2x2x3x3xf32>) {
  // expected-remark @+1 {{convert-tofu-to-gpu: not a library call (the groups and the channels are not one dimension of the buffers); the convolution stays generated code}}
  linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%x, %w : memref<2x2x3x5x5xf32, strided<[300, 150, 25, 5, 1]>>, memref<2x2x3x3x3xf32>) outs(%y : memref<2x2x2x3x3xf32>)
  return
}
