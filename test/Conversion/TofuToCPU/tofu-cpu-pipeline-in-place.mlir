// RUN: tofu-opt %s --tofu-cpu-pipeline | FileCheck %s
// RUN: tofu-opt %s --tofu-cpu-pipeline --mlir-print-ir-after=tofu-early-dealloc -o /dev/null 2>&1 | FileCheck %s --check-prefix=BUFFERS

// Tests that tofu-cpu-pipeline writes the results of ops that are inserted
// into slices of another tensor in place (eliminate-empty-tensors before
// bufferization): an LSTM cell's four gate gradients into their tensor.
// Without it each result had a buffer of its own and a memref.copy into
// the slice.

// CHECK-LABEL: llvm.func @gates
// CHECK-NOT: memrefCopy
// BUFFERS-LABEL: func.func @gates
// BUFFERS-COUNT-1: memref.alloc()
// BUFFERS-NOT: memref.alloc()
// BUFFERS-NOT: memref.copy
// BUFFERS: return

#id = affine_map<(d0, d1) -> (d0, d1)>
func.func @gates(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<4x6xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %all = tensor.empty() : tensor<4x6xf32>
  %ta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = math.tanh %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %tb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.negf %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %0 = tensor.insert_slice %ta into %all[0, 0] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  %1 = tensor.insert_slice %tb into %0[0, 3] [4, 3] [1, 1] : tensor<4x3xf32> into tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}

// Tests that the time steps stacked by a concat (tofu-stack-product-sums)
// are written into the stack where they are made
// (tofu-insert-slices-in-place first): one buffer, no copy.

// CHECK-LABEL: llvm.func @steps
// CHECK-NOT: memrefCopy
// BUFFERS-LABEL: func.func @steps
// BUFFERS-COUNT-1: memref.alloc()
// BUFFERS-NOT: memref.alloc()
// BUFFERS-NOT: memref.copy
// BUFFERS: return
func.func @steps(%a: tensor<4x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x4x3xf32> {
  %e = tensor.empty() : tensor<4x3xf32>
  %ta = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%a : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = math.tanh %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %tb = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%b : tensor<4x3xf32>) outs(%e : tensor<4x3xf32>) {
  ^bb0(%i: f32, %o: f32):
    %t = arith.negf %i : f32
    linalg.yield %t : f32
  } -> tensor<4x3xf32>
  %xa = tensor.expand_shape %ta [[0, 1], [2]] output_shape [1, 4, 3] : tensor<4x3xf32> into tensor<1x4x3xf32>
  %xb = tensor.expand_shape %tb [[0, 1], [2]] output_shape [1, 4, 3] : tensor<4x3xf32> into tensor<1x4x3xf32>
  %c = tensor.concat dim(0) %xa, %xb : (tensor<1x4x3xf32>, tensor<1x4x3xf32>) -> tensor<2x4x3xf32>
  return %c : tensor<2x4x3xf32>
}
