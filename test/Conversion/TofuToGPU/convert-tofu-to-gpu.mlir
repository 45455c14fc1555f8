// RUN: tofu-opt %s --convert-tofu-to-gpu --split-input-file | FileCheck %s

// Tests that a matmul whose output was just zero-filled becomes one GEMM
// that overwrites it (beta = 0, the fill is dropped), with row-major
// strides and the sizes of its operands.

// CHECK-LABEL: func.func @matmul
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<4x6xf32>, %[[B:[a-z0-9]+]]: memref<6x8xf32>, %[[C:[a-z0-9]+]]: memref<4x8xf32>
// CHECK-NOT: linalg.fill
// CHECK-DAG: %[[ABASE:.*]], %[[AOFF:.*]], %[[ASIZES:.*]]:2, %[[ASTRIDES:.*]]:2 = memref.extract_strided_metadata %[[A]]
// CHECK-DAG: %[[BBASE:.*]], %[[BOFF:.*]], %[[BSIZES:.*]]:2, %[[BSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[B]]
// CHECK-DAG: %[[CBASE:.*]], %[[COFF:.*]], %[[CSIZES:.*]]:2, %[[CSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[C]]
// CHECK: %[[ONE:.*]] = arith.constant 1 : index
// CHECK: %[[BETA:.*]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: call @tofu_gpu_sgemm(%[[ONE]], %[[CSIZES]]#0, %[[CSIZES]]#1, %[[ASIZES]]#1, %{{[a-z0-9_#]+}}, %[[ASTRIDES]]#0, %[[ASTRIDES]]#1, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %[[BSTRIDES]]#0, %[[BSTRIDES]]#1, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %[[CSTRIDES]]#0, %[[CSTRIDES]]#1, %{{[a-z0-9_#]+}}, %[[BETA]])
// CHECK-SAME: tofu.flops = 384 : i64, tofu.library = "cublas"
// CHECK-NOT: linalg.matmul
// CHECK: func.func private @tofu_gpu_sgemm(index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, index, f32)
func.func @matmul(%a: memref<4x6xf32>, %b: memref<6x8xf32>, %c: memref<4x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%a, %b : memref<4x6xf32>, memref<6x8xf32>) outs(%c : memref<4x8xf32>)
  return
}

// -----

// Tests that a matmul accumulating into a buffer that was not just zeroed
// keeps it (beta = 1), and that a fill with another value is kept.

// CHECK-LABEL: func.func @accumulate
// CHECK: linalg.fill
// CHECK: %[[BETA:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: call @tofu_gpu_sgemm({{.*}}, %[[BETA]])
func.func @accumulate(%a: memref<4x6xf32>, %b: memref<6x8xf32>, %c: memref<4x8xf32>) {
  %one = arith.constant 1.0 : f32
  linalg.fill ins(%one : f32) outs(%c : memref<4x8xf32>)
  linalg.matmul ins(%a, %b : memref<4x6xf32>, memref<6x8xf32>) outs(%c : memref<4x8xf32>)
  return
}

// -----

// Tests the weight gradient of tofu-autodiff, dW = X^T dY as a generic
// (K is the outer loop of both inputs): A is read with its strides
// swapped (column-major view of X^T).

#xT = affine_map<(d0, d1, d2) -> (d0, d1)>
#dy = affine_map<(d0, d1, d2) -> (d0, d2)>
#dw = affine_map<(d0, d1, d2) -> (d1, d2)>
// CHECK-LABEL: func.func @weight_gradient
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<4x6xf32>, %[[DY:[a-z0-9]+]]: memref<4x8xf32>, %[[DW:[a-z0-9]+]]: memref<6x8xf32>
// CHECK-DAG: %[[XB:.*]], %[[XO:.*]], %[[XSIZES:.*]]:2, %[[XSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[X]]
// CHECK-DAG: %[[YB:.*]], %[[YO:.*]], %[[YSIZES:.*]]:2, %[[YSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[DY]]
// CHECK-DAG: %[[WB:.*]], %[[WO:.*]], %[[WSIZES:.*]]:2, %[[WSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[DW]]
// CHECK: call @tofu_gpu_sgemm(%{{[a-z0-9_#]+}}, %[[WSIZES]]#0, %[[WSIZES]]#1, %[[XSIZES]]#0, %{{[a-z0-9_#]+}}, %[[XSTRIDES]]#1, %[[XSTRIDES]]#0, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %[[YSTRIDES]]#0, %[[YSTRIDES]]#1, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %[[WSTRIDES]]#0, %[[WSTRIDES]]#1, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}})
// CHECK-SAME: tofu.flops = 384
func.func @weight_gradient(%x: memref<4x6xf32>, %dy: memref<4x8xf32>, %dw: memref<6x8xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<6x8xf32>)
  linalg.generic {indexing_maps = [#xT, #dy, #dw], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%x, %dy : memref<4x6xf32>, memref<4x8xf32>) outs(%dw : memref<6x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %p = arith.mulf %in, %in_1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests the data gradient dX = dY W^T with the weight as the first input
// and the output indexed (d0, d2): the input indexed by the output's row
// loop is A whatever its position, and B is W read transposed.

#w = affine_map<(d0, d1, d2) -> (d2, d1)>
#dy = affine_map<(d0, d1, d2) -> (d0, d1)>
#dx = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @data_gradient
// CHECK-SAME: %[[W:[a-z0-9]+]]: memref<8x3xf32>, %[[DY:[a-z0-9]+]]: memref<4x3xf32>, %[[DX:[a-z0-9]+]]: memref<4x8xf32>
// CHECK-DAG: %[[WB:.*]], %[[WO:.*]], %[[WSIZES:.*]]:2, %[[WSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[W]]
// CHECK-DAG: %[[YB:.*]], %[[YO:.*]], %[[YSIZES:.*]]:2, %[[YSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[DY]]
// CHECK-DAG: %[[XB:.*]], %[[XO:.*]], %[[XSIZES:.*]]:2, %[[XSTRIDES:.*]]:2 = memref.extract_strided_metadata %[[DX]]
// The output's rows are N here (the loop of dY), its columns M (of W).
// CHECK: call @tofu_gpu_sgemm(%{{[a-z0-9_#]+}}, %[[XSIZES]]#1, %[[XSIZES]]#0, %[[WSIZES]]#1, %{{[a-z0-9_#]+}}, %[[WSTRIDES]]#0, %[[WSTRIDES]]#1, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %[[YSTRIDES]]#1, %[[YSTRIDES]]#0, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %[[XSTRIDES]]#1, %[[XSTRIDES]]#0, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}})
func.func @data_gradient(%w: memref<8x3xf32>, %dy: memref<4x3xf32>, %dx: memref<4x8xf32>) {
  linalg.generic {indexing_maps = [#w, #dy, #dx], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%w, %dy : memref<8x3xf32>, memref<4x3xf32>) outs(%dx : memref<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %p = arith.mulf %in, %in_1 : f32
    %s = arith.addf %out, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that batch_matmul becomes one strided-batched call with the batch
// strides of its operands.

// CHECK-LABEL: func.func @batch_matmul
// CHECK-SAME: %[[A:[a-z0-9]+]]: memref<5x4x6xf32>, %[[B:[a-z0-9]+]]: memref<5x6x8xf32>, %[[C:[a-z0-9]+]]: memref<5x4x8xf32>
// CHECK-DAG: %[[AB:.*]], %[[AO:.*]], %[[ASIZES:.*]]:3, %[[ASTRIDES:.*]]:3 = memref.extract_strided_metadata %[[A]]
// CHECK-DAG: %[[BB:.*]], %[[BO:.*]], %[[BSIZES:.*]]:3, %[[BSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[B]]
// CHECK-DAG: %[[CB:.*]], %[[CO:.*]], %[[CSIZES:.*]]:3, %[[CSTRIDES:.*]]:3 = memref.extract_strided_metadata %[[C]]
// CHECK-NOT: scf.for
// CHECK: call @tofu_gpu_sgemm(%[[CSIZES]]#0, %[[CSIZES]]#1, %[[CSIZES]]#2, %[[ASIZES]]#2, %{{[a-z0-9_#]+}}, %[[ASTRIDES]]#1, %[[ASTRIDES]]#2, %[[ASTRIDES]]#0, %{{[a-z0-9_#]+}}, %[[BSTRIDES]]#1, %[[BSTRIDES]]#2, %[[BSTRIDES]]#0, %{{[a-z0-9_#]+}}, %[[CSTRIDES]]#1, %[[CSTRIDES]]#2, %[[CSTRIDES]]#0, %{{[a-z0-9_#]+}})
// CHECK-SAME: tofu.flops = 1920
func.func @batch_matmul(%a: memref<5x4x6xf32>, %b: memref<5x6x8xf32>, %c: memref<5x4x8xf32>) {
  linalg.batch_matmul ins(%a, %b : memref<5x4x6xf32>, memref<5x6x8xf32>) outs(%c : memref<5x4x8xf32>)
  return
}

// -----

// Tests a 1x1 convolution as tofu-cpu-unit-windows writes it,
// `nchw,fc->nfhw`: the images are the batch of the call, with a batch
// stride of 0 for the filter, which every image multiplies (the shared
// GEMM rule; both backends lower it alike).

#img = affine_map<(d0, d1, d2, d3, d4) -> (d0, d2, d3, d4)>
#fil = affine_map<(d0, d1, d2, d3, d4) -> (d1, d2)>
#out = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3, d4)>
// CHECK-LABEL: func.func @broadcast_batch
// CHECK-SAME: %[[X:[a-z0-9]+]]: memref<2x4x5x5xf32>
// CHECK-DAG: %{{.*}}, %{{.*}}, %{{.*}}:4, %[[XSTRIDES:.*]]:4 = memref.extract_strided_metadata %[[X]]
// CHECK-NOT: linalg.generic
// CHECK: call @tofu_gpu_sgemm({{.*}}, %[[XSTRIDES]]#0, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %c0{{(_[0-9]+)?}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}})
// CHECK-SAME: tofu.flops = 3200
func.func @broadcast_batch(%x: memref<2x4x5x5xf32>, %w: memref<8x4xf32>, %y: memref<2x8x5x5xf32>) {
  linalg.generic {indexing_maps = [#img, #fil, #out], iterator_types = ["parallel", "parallel", "reduction", "parallel", "parallel"]} ins(%x, %w : memref<2x4x5x5xf32>, memref<8x4xf32>) outs(%y : memref<2x8x5x5xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests the filter gradient of a 1x1 convolution as tofu-cpu-unit-windows
// writes it, `nchw,nfhw->fc`: the images are an accumulation loop around
// the call (the shared GEMM rule; both backends lower it alike), whose
// calls add into the same filter, the first with beta 0 where the zero
// fill is dropped.

#gimg = affine_map<(n, f, c, h, w) -> (n, c, h, w)>
#gdy = affine_map<(n, f, c, h, w) -> (n, f, h, w)>
#gdw = affine_map<(n, f, c, h, w) -> (f, c)>
// CHECK-LABEL: func.func @accumulation_loop
// CHECK-NOT: linalg.fill
// CHECK: scf.for %[[N:.*]] =
// CHECK:   %[[FIRST:.*]] = arith.cmpi eq, %[[N]]
// CHECK:   %[[BETA:.*]] = arith.select %[[FIRST]]
// CHECK:   call @tofu_gpu_sgemm({{.*}}, %[[BETA]])
// CHECK-SAME: tofu.flops = 3200
// CHECK-NOT: linalg.generic
func.func @accumulation_loop(%x: memref<2x4x5x5xf32>, %dy: memref<2x8x5x5xf32>, %dw: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x4xf32>)
  linalg.generic {indexing_maps = [#gimg, #gdy, #gdw], iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %dy : memref<2x4x5x5xf32>, memref<2x8x5x5xf32>) outs(%dw : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests attention scores Q K^T with two batch loops (batch, head): the
// inner one is the batch of the call, the outer one an scf.for that
// advances the three addresses.

#q = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d3)>
#k = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d4, d3)>
#s = affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2, d4)>
// CHECK-LABEL: func.func @attention_scores
// CHECK: scf.for %[[I:.*]] = %{{.*}} to %{{.*}} step %{{.*}} {
// CHECK-COUNT-3: arith.muli %[[I]]
// CHECK: call @tofu_gpu_sgemm
// CHECK-SAME: tofu.flops = 1536
// CHECK: }
func.func @attention_scores(%q: memref<2x3x4x8xf32>, %k: memref<2x3x4x8xf32>, %s: memref<2x3x4x4xf32>) {
  linalg.generic {indexing_maps = [#q, #k, #s], iterator_types = ["parallel", "parallel", "parallel", "reduction", "parallel"]}
      ins(%q, %k : memref<2x3x4x8xf32>, memref<2x3x4x8xf32>) outs(%s : memref<2x3x4x4xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %p = arith.mulf %in, %in_1 : f32
    %r = arith.addf %out, %p : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// Tests what is not a single-precision GEMM and stays for generated
// kernels: f64, a scaled product, a product of one input with itself, a
// reduction over one input (bias gradient), and an outer product without
// a K loop.

#mk = affine_map<(d0, d1, d2) -> (d0, d2)>
#kn = affine_map<(d0, d1, d2) -> (d2, d1)>
#mn = affine_map<(d0, d1, d2) -> (d0, d1)>
#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
#col = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @not_gemms
// CHECK-NOT: tofu_gpu_sgemm
// CHECK: linalg.matmul
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK: linalg.generic
// CHECK-NOT: tofu_gpu_sgemm
func.func @not_gemms(%a: memref<4x6xf64>, %b: memref<6x8xf64>, %c: memref<4x8xf64>,
                     %x: memref<4x6xf32>, %y: memref<6x8xf32>, %z: memref<4x8xf32>,
                     %g: memref<4x8xf32>, %bias: memref<8xf32>, %u: memref<4xf32>) {
  linalg.matmul ins(%a, %b : memref<4x6xf64>, memref<6x8xf64>) outs(%c : memref<4x8xf64>)
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<4x6xf32>, memref<6x8xf32>) outs(%z : memref<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %two = arith.constant 2.0 : f32
    %p = arith.mulf %in, %in_1 : f32
    %q = arith.mulf %p, %two : f32
    %r = arith.addf %out, %q : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#mk, #kn, #mn], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %y : memref<4x6xf32>, memref<6x8xf32>) outs(%z : memref<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %p = arith.mulf %in, %in : f32
    %r = arith.addf %out, %p : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#id, #row], iterator_types = ["reduction", "parallel"]}
      ins(%g : memref<4x8xf32>) outs(%bias : memref<8xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.addf %out, %in : f32
    linalg.yield %r : f32
  }
  linalg.generic {indexing_maps = [#col, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%u, %bias : memref<4xf32>, memref<8xf32>) outs(%g : memref<4x8xf32>) {
  ^bb0(%in: f32, %in_1: f32, %out: f32):
    %p = arith.mulf %in, %in_1 : f32
    %r = arith.addf %out, %p : f32
    linalg.yield %r : f32
  }
  return
}
