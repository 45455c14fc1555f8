// RUN: tofu-opt %s -allow-unregistered-dialect -split-input-file --tdl-attach --test-tdl-strategies -o /dev/null | FileCheck %s
// RUN: tofu-opt %s -allow-unregistered-dialect -split-input-file --tdl-attach --test-tdl-strategies="workers=3 details=false" -o /dev/null | FileCheck %s --check-prefix=K3

// Tests the paper's shift_two (section 4.2): with i in [0, 9] the two workers
// read A over [2, 6] and [7, 11].

// CHECK-LABEL: op test.shift_two (workers = 2)
// CHECK:         i        output  cut(0)         cut(0)
// CHECK:         A 12: w0 [2:6] w1 [7:11]
// CHECK-NEXT:      symbolic w0: [2, N_i/2 + 1]
// K3-LABEL: op test.shift_two (workers = 3)
func.func @shift_two(%a: tensor<12xf32>) -> tensor<10xf32> {
  %0 = "test.shift_two"(%a) {tdl.desc = #tdl.desc<(A) -> (i) = A[i + 2]>} : (tensor<12xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// Tests conv1d as in Figures 1-3: b, co and x (with a halo) are output cuts,
// ci and dx are reductions whose outputs are partial sums.

// CHECK-LABEL: op test.conv1d (workers = 2)
// CHECK:         loops: b=4 co=8 x=8 ci=4 dx=3
// CHECK:         b        output  cut(0)         whole          cut(0)
// CHECK-NEXT:    co       output  whole          cut(1)         cut(1)
// CHECK-NEXT:    x        output  cut(2)+halo 1  whole          cut(2)
// CHECK-NEXT:    ci       reduce  cut(1)         cut(0)         partial
// CHECK-NEXT:    dx       reduce  cut(2)+halo 4  cut(2)         partial    (uneven)
// CHECK:       strategy x:
// CHECK-NEXT:    data 4x4x10: w0 [0:3, 0:3, 0:5] w1 [0:3, 0:3, 4:9]
// CHECK-NEXT:      symbolic w0: [0, N_b - 1] [0, N_ci - 1] [0, N_x/2 + N_dx - 2]
// K3-LABEL: op test.conv1d (workers = 3)
// K3:         x        output  cut(2)+halo 2  whole          cut(2)     (uneven)
func.func @conv1d(%data: tensor<4x4x10xf32>, %filters: tensor<4x8x3xf32>) -> tensor<4x8x8xf32> {
  %0 = "test.conv1d"(%data, %filters) {tdl.desc = #tdl.desc<(data, filters) -> (b, co, x) = sum(ci, dx) data[b, ci, x + dx] * filters[ci, co, dx]>}
      : (tensor<4x4x10xf32>, tensor<4x8x3xf32>) -> tensor<4x8x8xf32>
  return %0 : tensor<4x8x8xf32>
}

// -----

// Tests batch_cholesky (Figure 3): the opaque function leaves only b.

// CHECK-LABEL: op mxnet.linalg_potrf (workers = 2)
// CHECK-NEXT:    desc: (a) -> (b, i, j) = opaque(a[b, :, :])
// CHECK:         b        output  cut(0)         cut(0)
// CHECK-NEXT:    no strategy for i: produced whole by an opaque function
// CHECK-NEXT:    no strategy for j: produced whole by an opaque function
func.func @batch_cholesky(%m: tensor<4x5x5xf32>) -> tensor<4x5x5xf32> {
  %0 = "mxnet.linalg_potrf"(%m) : (tensor<4x5x5xf32>) -> tensor<4x5x5xf32>
  return %0 : tensor<4x5x5xf32>
}

// -----

// Tests matmul's three strategies (row, column, and the reduction).

// CHECK-LABEL: op linalg.matmul (workers = 2)
// CHECK:         d0       output  cut(0)         whole          cut(0)         cut(0)
// CHECK-NEXT:    d1       output  whole          cut(1)         cut(1)         cut(1)
// CHECK-NEXT:    d2       reduce  cut(1)         cut(0)         whole          partial
// CHECK-NOT:     no strategy
// CHECK:       strategy d1:
// CHECK-NEXT:    in0 8x6: w0 [0:7, 0:5] w1 [0:7, 0:5]
// CHECK-NEXT:      symbolic w0: [0, N_d0 - 1] [0, N_d2 - 1]
// CHECK-NEXT:      fetch: cut(0)=48 cut(1)=48 rep=0 partial=96
func.func @matmul(%a: tensor<8x6xf32>, %b: tensor<6x4xf32>, %c: tensor<8x4xf32>) -> tensor<8x4xf32> {
  %0 = linalg.matmul ins(%a, %b : tensor<8x6xf32>, tensor<6x4xf32>) outs(%c : tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Tests batch_matmul: batch, rows, columns and the reduction.

// CHECK-LABEL: op linalg.batch_matmul (workers = 2)
// CHECK:         d0       output  cut(0)         cut(0)         cut(0)         cut(0)
// CHECK-NEXT:    d1       output  cut(1)         whole          cut(1)         cut(1)
// CHECK-NEXT:    d2       output  whole          cut(2)         cut(2)         cut(2)
// CHECK-NEXT:    d3       reduce  cut(2)         cut(1)         whole          partial
func.func @batch_matmul(%a: tensor<2x8x6xf32>, %b: tensor<2x6x4xf32>, %c: tensor<2x8x4xf32>) -> tensor<2x8x4xf32> {
  %0 = linalg.batch_matmul ins(%a, %b : tensor<2x8x6xf32>, tensor<2x6x4xf32>) outs(%c : tensor<2x8x4xf32>) -> tensor<2x8x4xf32>
  return %0 : tensor<2x8x4xf32>
}

// -----

// Tests a strided conv2d: spatial cuts need halos, the channel and window
// reductions give partial sums.

// CHECK-LABEL: op linalg.conv_2d_nchw_fchw (workers = 2)
// CHECK:         loops: d0=2 d1=4 d2=4 d3=4 d4=2 d5=3 d6=3
// CHECK:         d0       output  cut(0)         whole          cut(0)         cut(0)
// CHECK-NEXT:    d1       output  whole          cut(0)         cut(1)         cut(1)
// CHECK-NEXT:    d2       output  cut(2)+halo 1  whole          cut(2)         cut(2)
// CHECK-NEXT:    d3       output  cut(3)+halo 1  whole          cut(3)         cut(3)
// CHECK-NEXT:    d4       reduce  cut(1)         cut(1)         whole          partial
// CHECK-NEXT:    d5       reduce  cut(2)+halo 3  cut(2)         whole          partial    (uneven)
func.func @conv2d(%x: tensor<2x2x9x9xf32>, %w: tensor<4x2x3x3xf32>, %o: tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<2x2x9x9xf32>, tensor<4x2x3x3xf32>) outs(%o : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// Tests max pooling: the window dimensions reduce with max.

// CHECK-LABEL: op linalg.pooling_nchw_max (workers = 2)
// CHECK:         d2       output  cut(2)         unread         cut(2)         cut(2)
// CHECK:         d4       reduce  cut(2)+halo 3  unread         whole          partial
func.func @pooling(%x: tensor<2x4x8x8xf32>, %win: tensor<2x2xf32>, %o: tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32> {
  %0 = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %win : tensor<2x4x8x8xf32>, tensor<2x2xf32>) outs(%o : tensor<2x4x4x4xf32>) -> tensor<2x4x4x4xf32>
  return %0 : tensor<2x4x4x4xf32>
}

// -----

// Tests softmax: rows cut freely; cutting the class dimension needs every
// worker to read the whole row for the normalising sum.

// CHECK-LABEL: op mxnet.softmax (workers = 2)
// CHECK:         b        output  cut(0)         cut(0)
// CHECK-NEXT:    c        output  whole          cut(1)
// CHECK-NEXT:    no strategy for c2: reduced inside an expression
func.func @softmax(%x: tensor<8x10xf32>) -> tensor<8x10xf32> {
  %0 = "mxnet.softmax"(%x) : (tensor<8x10xf32>) -> tensor<8x10xf32>
  return %0 : tensor<8x10xf32>
}

// -----

// Tests element-wise inputs: every dimension cuts, and each input is read in
// the output's own tiling.

// CHECK-LABEL: op arith.mulf (workers = 2)
// CHECK:         d0       output  cut(0)         cut(0)         cut(0)
// CHECK-NEXT:    d1       output  cut(1)         cut(1)         cut(1)
// CHECK:         strategy d0:
// CHECK-NEXT:    in0 8x6: w0 [0:3, 0:5] w1 [4:7, 0:5]
// CHECK-NEXT:      symbolic w0: [0, N_d0/2 - 1] [0, N_d1 - 1]
// CHECK-NEXT:      fetch: cut(0)=0 cut(1)=24 rep=0 partial=48
func.func @elementwise(%a: tensor<8x6xf32>, %b: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %0 = arith.mulf %a, %b : tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}
