// RUN: tofu-opt %s --tofu-gpu-pipeline --mlir-print-ir-after=tofu-early-dealloc -o %t.mlir 2>&1 | FileCheck %s --check-prefix=BUFFERS
// RUN: FileCheck %s < %t.mlir

// Tests that tofu-gpu-pipeline writes the results of ops that are inserted
// into slices of another tensor in place, as tofu-cpu-pipeline does
// (tofu-insert-slices-in-place and eliminate-empty-tensors before
// bufferization): an LSTM cell's gates into their tensor. Without it each
// result had a buffer of its own and a copy into the slice, a kernel of
// its own (the zoo LSTM's lowered step launched 767 kernels, 254 of them
// copies; 626 and 113 with it).

// BUFFERS-LABEL: func.func @gates
// BUFFERS-COUNT-1: memref.alloc()
// BUFFERS-NOT: memref.alloc()
// BUFFERS-NOT: memref.copy
// BUFFERS: return

// Two kernels, none of them a copy.
// CHECK-LABEL: llvm.func @gates
// CHECK-NOT: copy
// CHECK-COUNT-2: gpu.launch_func
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.return

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
