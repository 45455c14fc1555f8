// Grouped convolutions (2 groups of 3 channels and 2 filters) in the
// form torch-mlir writes them, the image and the filter split into groups
// by tensor.expand_shape and linalg.conv_2d_ngchw_gfchw, with strides 1
// and 2, and tofu-autodiff's data gradient (into a zero fill) and filter
// gradient (accumulating into a filter of ones: beta = 1) as generics, all
// in f32 on small integers, so that every sum is exact and the oneDNN calls
// must print what the naive loops print (library-calls.test).
func.func private @printMemrefF32(memref<*xf32>)

// n, g, f, oh, ow, c, kh, kw
#x = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, c, oh * 2 + kh, ow * 2 + kw)>
#w = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (g, f, c, kh, kw)>
#y = affine_map<(n, g, f, oh, ow, c, kh, kw) -> (n, g, f, oh, ow)>

func.func @fill(%t: tensor<?x?x?x?xf32>, %a: index, %b: index, %c: index,
                %d: index, %m: index, %o: index) -> tensor<?x?x?x?xf32> {
  %r = linalg.generic {indexing_maps = [affine_map<(i, j, k, l) -> (i, j, k, l)>],
                       iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
      outs(%t : tensor<?x?x?x?xf32>) {
  ^bb0(%out: f32):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %k = linalg.index 2 : index
    %l = linalg.index 3 : index
    %ia = arith.muli %i, %a : index
    %jb = arith.muli %j, %b : index
    %kc = arith.muli %k, %c : index
    %ld = arith.muli %l, %d : index
    %s0 = arith.addi %ia, %jb : index
    %s1 = arith.addi %s0, %kc : index
    %s2 = arith.addi %s1, %ld : index
    %big = arith.constant 60 : index
    %s3 = arith.addi %s2, %big : index
    %r0 = arith.remsi %s3, %m : index
    %r1 = arith.subi %r0, %o : index
    %v = arith.index_cast %r1 : index to i64
    %f = arith.sitofp %v : i64 to f32
    linalg.yield %f : f32
  } -> tensor<?x?x?x?xf32>
  return %r : tensor<?x?x?x?xf32>
}

func.func @print(%t: tensor<?x?x?x?xf32>) {
  %m = bufferization.to_buffer %t : tensor<?x?x?x?xf32> to memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>>
  %u = memref.cast %m : memref<?x?x?x?xf32, strided<[?, ?, ?, ?], offset: ?>> to memref<*xf32>
  func.call @printMemrefF32(%u) : (memref<*xf32>) -> ()
  return
}

func.func @main() {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %c4 = arith.constant 4 : index
  %c5 = arith.constant 5 : index
  %c6 = arith.constant 6 : index
  %m2 = arith.constant -2 : index
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %ex = tensor.empty(%c2, %c6, %c5, %c5) : tensor<?x?x?x?xf32>
  %xd = func.call @fill(%ex, %c1, %c2, %c1, %c3, %c5, %c2)
      : (tensor<?x?x?x?xf32>, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %x4 = tensor.cast %xd : tensor<?x?x?x?xf32> to tensor<2x6x5x5xf32>
  %x = tensor.expand_shape %x4 [[0], [1, 2], [3], [4]] output_shape [2, 2, 3, 5, 5]
      : tensor<2x6x5x5xf32> into tensor<2x2x3x5x5xf32>
  %ew = tensor.empty(%c4, %c3, %c3, %c3) : tensor<?x?x?x?xf32>
  %wd = func.call @fill(%ew, %c1, %c1, %c1, %m2, %c3, %c1)
      : (tensor<?x?x?x?xf32>, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %w4 = tensor.cast %wd : tensor<?x?x?x?xf32> to tensor<4x3x3x3xf32>
  %w = tensor.expand_shape %w4 [[0, 1], [2], [3], [4]] output_shape [2, 2, 3, 3, 3]
      : tensor<4x3x3x3xf32> into tensor<2x2x3x3x3xf32>

  // Stride 1: 3 x 3 outputs; stride 2: 2 x 2.
  %e1 = tensor.empty() : tensor<2x2x2x3x3xf32>
  %z1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x3x3xf32>
  %y1 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %w : tensor<2x2x3x5x5xf32>, tensor<2x2x3x3x3xf32>) outs(%z1 : tensor<2x2x2x3x3xf32>) -> tensor<2x2x2x3x3xf32>
  %y1c = tensor.collapse_shape %y1 [[0], [1, 2], [3], [4]] : tensor<2x2x2x3x3xf32> into tensor<2x4x3x3xf32>
  %p1 = tensor.cast %y1c : tensor<2x4x3x3xf32> to tensor<?x?x?x?xf32>
  func.call @print(%p1) : (tensor<?x?x?x?xf32>) -> ()
  %e2 = tensor.empty() : tensor<2x2x2x2x2xf32>
  %z2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<2x2x2x2x2xf32>) -> tensor<2x2x2x2x2xf32>
  %y2 = linalg.conv_2d_ngchw_gfchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<2x2x3x5x5xf32>, tensor<2x2x3x3x3xf32>) outs(%z2 : tensor<2x2x2x2x2xf32>) -> tensor<2x2x2x2x2xf32>
  %y2c = tensor.collapse_shape %y2 [[0], [1, 2], [3], [4]] : tensor<2x2x2x2x2xf32> into tensor<2x4x2x2xf32>
  %p2 = tensor.cast %y2c : tensor<2x4x2x2xf32> to tensor<?x?x?x?xf32>
  func.call @print(%p2) : (tensor<?x?x?x?xf32>) -> ()

  // The stride-2 convolution's gradients for dy.
  %edy = tensor.empty(%c2, %c4, %c2, %c2) : tensor<?x?x?x?xf32>
  %dyd = func.call @fill(%edy, %c1, %c1, %c2, %c1, %c4, %c2)
      : (tensor<?x?x?x?xf32>, index, index, index, index, index, index) -> tensor<?x?x?x?xf32>
  %dy4 = tensor.cast %dyd : tensor<?x?x?x?xf32> to tensor<2x4x2x2xf32>
  %dy = tensor.expand_shape %dy4 [[0], [1, 2], [3], [4]] output_shape [2, 2, 2, 2, 2]
      : tensor<2x4x2x2xf32> into tensor<2x2x2x2x2xf32>
  %e3 = tensor.empty() : tensor<2x2x3x5x5xf32>
  %z3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<2x2x3x5x5xf32>) -> tensor<2x2x3x5x5xf32>
  %dx = linalg.generic {indexing_maps = [#w, #y, #x],
                        iterator_types = ["parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel", "parallel"]}
      ins(%w, %dy : tensor<2x2x3x3x3xf32>, tensor<2x2x2x2x2xf32>) outs(%z3 : tensor<2x2x3x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x2x3x5x5xf32>
  %dxc = tensor.collapse_shape %dx [[0], [1, 2], [3], [4]] : tensor<2x2x3x5x5xf32> into tensor<2x6x5x5xf32>
  %p3 = tensor.cast %dxc : tensor<2x6x5x5xf32> to tensor<?x?x?x?xf32>
  func.call @print(%p3) : (tensor<?x?x?x?xf32>) -> ()
  %e4 = tensor.empty() : tensor<2x2x3x3x3xf32>
  %ones = linalg.fill ins(%one : f32) outs(%e4 : tensor<2x2x3x3x3xf32>) -> tensor<2x2x3x3x3xf32>
  %dw = linalg.generic {indexing_maps = [#x, #y, #w],
                        iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
      ins(%x, %dy : tensor<2x2x3x5x5xf32>, tensor<2x2x2x2x2xf32>) outs(%ones : tensor<2x2x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %o, %p : f32
    linalg.yield %s : f32
  } -> tensor<2x2x3x3x3xf32>
  %dwc = tensor.collapse_shape %dw [[0, 1], [2], [3], [4]] : tensor<2x2x3x3x3xf32> into tensor<4x3x3x3xf32>
  %p4 = tensor.cast %dwc : tensor<4x3x3x3xf32> to tensor<?x?x?x?xf32>
  func.call @print(%p4) : (tensor<?x?x?x?xf32>) -> ()
  return
}
