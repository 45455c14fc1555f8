// RUN: tofu-opt %s --convert-tofu-to-gpu=fold-strided-data-gradients=true --split-input-file -verify-diagnostics | FileCheck %s

// Tests that a zero pad of the image (as bufferization leaves tensor.pad:
// a zero-filled buffer with the image copied into its interior) read by a
// forward convolution and a filter gradient becomes cuDNN's padding of
// both calls: they read the unpadded image with padding 1, and the padded
// buffer, its fill and its copy are gone. (The forward convolution writes
// a buffer of the function's own, which cannot alias the image.)

#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
// CHECK-LABEL: func.func @forward_and_filter_gradient
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x3x8x8xf32>
// CHECK-NEXT: memref.alloc() : memref<2x4x8x8xf32>
// CHECK-NOT: memref.alloc
// CHECK-NOT: linalg.map
// CHECK-NOT: memref.copy
// CHECK: %{{.*}}, %{{.*}}, %[[XS:.*]]:4, %{{.*}}:4 = memref.extract_strided_metadata %[[X]]
// CHECK: call @tofu_gpu_conv2d_forward(%[[XS]]#0, %[[XS]]#1, %[[XS]]#2, %[[XS]]#3, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}},
// CHECK: %{{.*}}, %{{.*}}, %[[XS2:.*]]:4, %{{.*}}:4 = memref.extract_strided_metadata %[[X]]
// CHECK: call @tofu_gpu_conv2d_backward_filter(%[[XS2]]#0, %[[XS2]]#1, %[[XS2]]#2, %[[XS2]]#3, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}},
// CHECK-NOT: memref.dealloc
// CHECK: return
func.func @forward_and_filter_gradient(%x: memref<2x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %dy: memref<2x4x8x8xf32>, %dw: memref<4x3x3x3xf32>) -> memref<2x4x8x8xf32> {
  %y = memref.alloc() : memref<2x4x8x8xf32>
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x3x10x10xf32>
  linalg.map outs(%padded : memref<2x3x10x10xf32>)
    (%init: f32) {
      linalg.yield %zero : f32
    }
  %interior = memref.subview %padded[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<2x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x8x8xf32>)
  linalg.generic {indexing_maps = [#x, #y, #w],
                  iterator_types = ["reduction", "parallel", "reduction", "reduction", "parallel", "parallel", "parallel"]}
    ins(%padded, %dy : memref<2x3x10x10xf32>, memref<2x4x8x8xf32>) outs(%dw : memref<4x3x3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  memref.dealloc %padded : memref<2x3x10x10xf32>
  return %y : memref<2x4x8x8xf32>
}

// -----

// Tests that the data gradient of a padded image, written onto a padded
// buffer of which only the interior is read (tofu-autodiff's slice),
// writes that interior alone: the image's address is 11 elements (one row
// and one column) into the buffer, its extents 8x8, its padding 1 and its
// strides the buffer's.

#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 * 2 + d5, d3 * 2 + d6)>
// CHECK-LABEL: func.func @data_gradient_interior
// CHECK: %[[G:.*]] = memref.alloc() : memref<2x3x10x10xf32>
// CHECK-NOT: linalg.fill
// CHECK: %{{.*}}, %{{.*}}, %[[GS:.*]]:4, %[[GST:.*]]:4 = memref.extract_strided_metadata %[[G]]
// CHECK: %[[BASE:.*]] = arith.addi
// CHECK: %[[ROW:.*]] = arith.muli %[[GST]]#2, %c1
// CHECK: %[[ROWB:.*]] = arith.muli %[[ROW]], %c4
// CHECK: %[[A1:.*]] = arith.addi %[[BASE]], %[[ROWB]]
// CHECK: %[[COL:.*]] = arith.muli %[[GST]]#3, %c1
// CHECK: %[[COLB:.*]] = arith.muli %[[COL]], %c4
// CHECK: %[[A2:.*]] = arith.addi %[[A1]], %[[COLB]]
// CHECK: call @tofu_gpu_conv2d_backward_data(%[[GS]]#0, %[[GS]]#1, %c8{{(_[0-9]+)?}}, %c8{{(_[0-9]+)?}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %[[A2]], %[[GST]]#0, %[[GST]]#1, %[[GST]]#2, %[[GST]]#3,
// CHECK: memref.subview %[[G]][0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1]
func.func @data_gradient_interior(%w: memref<4x3x3x3xf32>, %dy: memref<2x4x4x4xf32>, %dx: memref<2x3x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %g = memref.alloc() : memref<2x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<2x3x10x10xf32>)
  linalg.generic {indexing_maps = [#w, #y, #x],
                  iterator_types = ["parallel", "reduction", "parallel", "parallel", "parallel", "parallel", "parallel"]}
    ins(%w, %dy : memref<4x3x3x3xf32>, memref<2x4x4x4xf32>) outs(%g : memref<2x3x10x10xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %interior = memref.subview %g[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %interior, %dx : memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>> to memref<2x3x8x8xf32>
  memref.dealloc %g : memref<2x3x10x10xf32>
  return
}

// -----

// Tests that a pad whose high side the stride never reaches folds: 3x3,
// stride 2, an 8x8 image padded by 1 before and 0 after gives 4 outputs, as
// cuDNN's padding 1 on both sides does.

// CHECK-LABEL: func.func @high_pad_not_reached
// CHECK-NOT: memref.copy
// CHECK: call @tofu_gpu_conv2d_forward(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c2{{(_[0-9]+)?}}, %c2{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}},
func.func @high_pad_not_reached(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x4x4xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x9x9xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x9x9xf32> to memref<1x3x8x8xf32, strided<[243, 81, 9, 1], offset: 10>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[243, 81, 9, 1], offset: 10>>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x9x9xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x4x4xf32>)
  return
}

// -----

// Tests a padded 1-D convolution (the zoo's conv1d with padding 1): the
// padding goes to the columns, the rows get none.

#x = affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 + d4)>
#w = affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>
#y = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @conv1d_padded
// CHECK-NOT: memref.copy
// CHECK: call @tofu_gpu_conv2d_forward(%{{.*}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %{{.*}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}},
func.func @conv1d_padded(%x: memref<2x3x8xf32>, %w: memref<4x3x3xf32>, %y: memref<2x4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x3x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x3x10xf32>)
  %interior = memref.subview %padded[0, 0, 1] [2, 3, 8] [1, 1, 1] : memref<2x3x10xf32> to memref<2x3x8xf32, strided<[30, 10, 1], offset: 1>>
  memref.copy %x, %interior : memref<2x3x8xf32> to memref<2x3x8xf32, strided<[30, 10, 1], offset: 1>>
  linalg.generic {indexing_maps = [#x, #w, #y],
                  iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]}
    ins(%padded, %w : memref<2x3x10xf32>, memref<4x3x3xf32>) outs(%y : memref<2x4x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that an asymmetric pad ('same' padding of a 2x2 kernel: nothing
// before, one after) stays a copy: cuDNN pads both sides alike.

// CHECK-LABEL: func.func @asymmetric
// CHECK: memref.copy
// CHECK: call @tofu_gpu_conv2d_forward(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}},
func.func @asymmetric(%x: memref<1x3x8x8xf32>, %w: memref<4x3x2x2xf32>, %y: memref<1x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x9x9xf32>)
  %interior = memref.subview %padded[0, 0, 0, 0] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x9x9xf32> to memref<1x3x8x8xf32, strided<[243, 81, 9, 1]>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[243, 81, 9, 1]>>
  // expected-remark @+1 {{convert-tofu-to-gpu: the zero pad stays a copy (the pad is asymmetric (cuDNN pads both sides alike))}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x9x9xf32>, memref<4x3x2x2xf32>) outs(%y : memref<1x4x8x8xf32>)
  return
}

// -----

// Tests that a pad with a reader that is no convolution (here a copy out
// of the padded buffer) stays a copy.

// CHECK-LABEL: func.func @other_reader
// CHECK: memref.copy %{{.*}}, %{{.*}} : memref<1x3x8x8xf32> to
// CHECK: call @tofu_gpu_conv2d_forward
func.func @other_reader(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>, %out: memref<1x3x10x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  // expected-remark @+1 {{convert-tofu-to-gpu: the zero pad stays a copy (the padded image has other readers)}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
  memref.copy %padded, %out : memref<1x3x10x10xf32> to memref<1x3x10x10xf32>
  return
}

// -----

// Tests that a pad stays a copy when the image may change between the pad
// and the convolution (the copy holds the old values): here an op writes
// the image in place.

#id = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-LABEL: func.func @image_written_after_pad
// CHECK: memref.copy
// CHECK: call @tofu_gpu_conv2d_forward
func.func @image_written_after_pad(%w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %x = memref.alloc() : memref<1x3x8x8xf32>
  linalg.fill ins(%one : f32) outs(%x : memref<1x3x8x8xf32>)
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.generic {indexing_maps = [#id], iterator_types = ["parallel", "parallel", "parallel", "parallel"]}
    outs(%x : memref<1x3x8x8xf32>) {
  ^bb0(%v: f32):
    %d = arith.addf %v, %v : f32
    linalg.yield %d : f32
  }
  // expected-remark @+1 {{convert-tofu-to-gpu: the zero pad stays a copy (the image may change between the pad and the convolution)}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
  memref.dealloc %x : memref<1x3x8x8xf32>
  return
}

// -----

// Tests that a pad of a function argument stays a copy when some op in
// between writes through another argument, which may alias the image.

// CHECK-LABEL: func.func @argument_may_alias
// CHECK: memref.copy
// CHECK: call @tofu_gpu_conv2d_forward
func.func @argument_may_alias(%x: memref<1x3x8x8xf32>, %other: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.fill ins(%zero : f32) outs(%other : memref<1x3x8x8xf32>)
  // expected-remark @+1 {{convert-tofu-to-gpu: the zero pad stays a copy (the image may change between the pad and the convolution)}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
  return
}

// -----

// Tests that a pad of a non-zero value is no padding: nothing is folded
// and nothing is remarked.

// CHECK-LABEL: func.func @pad_of_one
// CHECK: memref.copy
// CHECK: call @tofu_gpu_conv2d_forward(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}},
func.func @pad_of_one(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>) {
  %one = arith.constant 1.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%one : f32) outs(%padded : memref<1x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
  return
}

// -----

// Tests that the data gradient of an asymmetric pad stays on the whole
// padded buffer: the interior of an 8x8 image padded by 1 before and 0
// after, for a 3x3 kernel at stride 1, is no cuDNN padding.

#w = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d1, d4, d5, d6)>
#y = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d1, d2, d3)>
#x = affine_map<(d0, d1, d2, d3, d4, d5, d6) -> (d0, d4, d2 + d5, d3 + d6)>
// CHECK-LABEL: func.func @data_gradient_asymmetric
// CHECK: call @tofu_gpu_conv2d_backward_data(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}},
func.func @data_gradient_asymmetric(%w: memref<4x3x3x3xf32>, %dy: memref<1x4x7x7xf32>, %dx: memref<1x3x8x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %g = memref.alloc() : memref<1x3x9x9xf32>
  linalg.fill ins(%zero : f32) outs(%g : memref<1x3x9x9xf32>)
  // expected-remark @+1 {{convert-tofu-to-gpu: the data gradient stays on the whole padded image (the pad is asymmetric (cuDNN pads both sides alike))}}
  linalg.generic {indexing_maps = [#w, #y, #x],
                  iterator_types = ["parallel", "reduction", "parallel", "parallel", "parallel", "parallel", "parallel"]}
    ins(%w, %dy : memref<4x3x3x3xf32>, memref<1x4x7x7xf32>) outs(%g : memref<1x3x9x9xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  %interior = memref.subview %g[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x9x9xf32> to memref<1x3x8x8xf32, strided<[243, 81, 9, 1], offset: 10>>
  memref.copy %interior, %dx : memref<1x3x8x8xf32, strided<[243, 81, 9, 1], offset: 10>> to memref<1x3x8x8xf32>
  return
}

// -----

// Tests that an image freed right after the pad's copy (its last use,
// where tofu-early-dealloc puts the deallocation) still folds: the
// convolution now reads the image, so its deallocation moves after the
// convolution.

// CHECK-LABEL: func.func @image_freed_after_the_copy
// CHECK: %[[X:.*]] = memref.alloc() : memref<2x3x8x8xf32>
// CHECK-NOT: memref.dealloc
// CHECK: %{{.*}}, %{{.*}}, %[[XS:.*]]:4, %{{.*}}:4 = memref.extract_strided_metadata %[[X]]
// CHECK-NOT: memref.dealloc
// CHECK: call @tofu_gpu_conv2d_forward(%[[XS]]#0,
// CHECK-NEXT: memref.dealloc %[[X]]
// CHECK-NEXT: return
func.func @image_freed_after_the_copy(%w: memref<4x3x3x3xf32>, %c: f32) -> memref<2x4x8x8xf32> {
  %x = memref.alloc() : memref<2x3x8x8xf32>
  linalg.fill ins(%c : f32) outs(%x : memref<2x3x8x8xf32>)
  %y = memref.alloc() : memref<2x4x8x8xf32>
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<2x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<2x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [2, 3, 8, 8] [1, 1, 1, 1] : memref<2x3x10x10xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<2x3x8x8xf32> to memref<2x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.dealloc %x : memref<2x3x8x8xf32>
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<2x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<2x4x8x8xf32>)
  memref.dealloc %padded : memref<2x3x10x10xf32>
  return %y : memref<2x4x8x8xf32>
}

// -----

// Tests that a runtime call between the pad and the convolution keeps the
// pad a copy unless it is tagged with the one operand it writes
// (convert-tofu-to-mpi tags its collectives so): the tagged call writes a
// fresh buffer and the pad folds; the untagged one, or a tagged one that
// writes the image, may change the image.

// CHECK-LABEL: func.func @call_between_pad_and_conv
// CHECK-NOT: memref.copy
// CHECK: call @collective(%{{.*}}, %{{.*}}) {tofu.writes_operand = 1 : i64}
// CHECK: call @tofu_gpu_conv2d_forward(
// CHECK-SAME: %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}}, %c1{{(_[0-9]+)?}},
func.func private @collective(memref<*xf32>, memref<*xf32>)
func.func @call_between_pad_and_conv(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>, %in: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  %out = memref.alloc() : memref<8xf32>
  %a = memref.cast %in : memref<4xf32> to memref<*xf32>
  %b = memref.cast %out : memref<8xf32> to memref<*xf32>
  func.call @collective(%a, %b) {tofu.writes_operand = 1 : i64} : (memref<*xf32>, memref<*xf32>) -> ()
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
  memref.dealloc %out : memref<8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @untagged_call_between_pad_and_conv
// CHECK: memref.copy
// CHECK: call @tofu_gpu_conv2d_forward
func.func private @collective(memref<*xf32>, memref<*xf32>)
func.func @untagged_call_between_pad_and_conv(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>, %in: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  %out = memref.alloc() : memref<8xf32>
  %a = memref.cast %in : memref<4xf32> to memref<*xf32>
  %b = memref.cast %out : memref<8xf32> to memref<*xf32>
  func.call @collective(%a, %b) : (memref<*xf32>, memref<*xf32>) -> ()
  // expected-remark @+1 {{convert-tofu-to-gpu: the zero pad stays a copy (the image may change between the pad and the convolution)}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
  memref.dealloc %out : memref<8xf32>
  return
}

// -----

// CHECK-LABEL: func.func @tagged_call_writes_the_image
// CHECK: memref.copy
// CHECK: call @tofu_gpu_conv2d_forward
func.func private @collective(memref<*xf32>, memref<*xf32>)
func.func @tagged_call_writes_the_image(%x: memref<1x3x8x8xf32>, %w: memref<4x3x3x3xf32>, %y: memref<1x4x8x8xf32>, %in: memref<4xf32>) {
  %zero = arith.constant 0.0 : f32
  %padded = memref.alloc() : memref<1x3x10x10xf32>
  linalg.fill ins(%zero : f32) outs(%padded : memref<1x3x10x10xf32>)
  %interior = memref.subview %padded[0, 0, 1, 1] [1, 3, 8, 8] [1, 1, 1, 1] : memref<1x3x10x10xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  memref.copy %x, %interior : memref<1x3x8x8xf32> to memref<1x3x8x8xf32, strided<[300, 100, 10, 1], offset: 11>>
  %a = memref.cast %in : memref<4xf32> to memref<*xf32>
  %b = memref.cast %x : memref<1x3x8x8xf32> to memref<*xf32>
  func.call @collective(%a, %b) {tofu.writes_operand = 1 : i64} : (memref<*xf32>, memref<*xf32>) -> ()
  // expected-remark @+1 {{convert-tofu-to-gpu: the zero pad stays a copy (the image may change between the pad and the convolution)}}
  linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
    ins(%padded, %w : memref<1x3x10x10xf32>, memref<4x3x3x3xf32>) outs(%y : memref<1x4x8x8xf32>)
  return
}
