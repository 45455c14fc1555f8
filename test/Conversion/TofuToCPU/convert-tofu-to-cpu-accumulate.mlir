// RUN: tofu-opt %s --convert-tofu-to-cpu -split-input-file | FileCheck %s

// Tests that a product summed over an outer loop that both inputs lead
// with and the output does not hold (the filter gradient of a 1x1
// convolution, `nchw,nfhw->fc`) becomes one OpenBLAS call per image: the
// inputs advance by their image strides, the output stays, and the first
// call overwrites the output that the dropped zero fill cleared (beta 0)
// while the others add into it (beta 1). K is the pixels, M and N the
// channels.

// CHECK-LABEL: func.func @filter_gradient
// CHECK-NOT:     linalg.fill
// CHECK:         %[[X:.*]], %{{.*}}, %[[XS:.*]]:4, %[[XT:.*]]:4 = memref.extract_strided_metadata %arg0
// CHECK:         scf.for %[[N:.*]] = %{{.*}} to %[[XS]]#0 step
// CHECK:           arith.muli %[[N]], %[[XT]]#0
// CHECK:           %[[FIRST:.*]] = arith.cmpi eq, %[[N]], %{{.*}} : index
// CHECK:           %[[BETA:.*]] = arith.select %[[FIRST]], %{{.*}}, %{{.*}} : f32
// CHECK:           func.call @tofu_cpu_sgemm({{.*}}, %[[BETA]]) {tofu.flops = 3200 : i64, tofu.library = "openblas"}
// CHECK-NOT:     linalg.generic
func.func @filter_gradient(%x: memref<2x4x5x5xf32>, %dy: memref<2x8x5x5xf32>, %dw: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, f, c, h, w) -> (n, c, h, w)>, affine_map<(n, f, c, h, w) -> (n, f, h, w)>, affine_map<(n, f, c, h, w) -> (f, c)>], iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %dy : memref<2x4x5x5xf32>, memref<2x8x5x5xf32>) outs(%dw : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that without a zero fill every call adds into the output.

// CHECK-LABEL: func.func @accumulating
// CHECK:         %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:    func.call @tofu_cpu_sgemm({{.*}}, %[[ONE]])
func.func @accumulating(%x: memref<2x4x5x5xf32>, %dy: memref<2x8x5x5xf32>, %dw: memref<8x4xf32>) {
  linalg.generic {indexing_maps = [affine_map<(n, f, c, h, w) -> (n, c, h, w)>, affine_map<(n, f, c, h, w) -> (n, f, h, w)>, affine_map<(n, f, c, h, w) -> (f, c)>], iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %dy : memref<2x4x5x5xf32>, memref<2x8x5x5xf32>) outs(%dw : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Tests that where the images may be none (a dynamic extent, possibly 0),
// the zero fill stays and every call adds into the output: no first call
// would clear it.

// CHECK-LABEL: func.func @maybe_no_images
// CHECK:         linalg.fill
// CHECK:         scf.for
// CHECK-NOT:       arith.select
// CHECK:           %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:      func.call @tofu_cpu_sgemm({{.*}}, %[[ONE]])
func.func @maybe_no_images(%x: memref<?x4x5x5xf32>, %dy: memref<?x8x5x5xf32>, %dw: memref<8x4xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dw : memref<8x4xf32>)
  linalg.generic {indexing_maps = [affine_map<(n, f, c, h, w) -> (n, c, h, w)>, affine_map<(n, f, c, h, w) -> (n, f, h, w)>, affine_map<(n, f, c, h, w) -> (f, c)>], iterator_types = ["reduction", "parallel", "parallel", "reduction", "reduction"]} ins(%x, %dy : memref<?x4x5x5xf32>, memref<?x8x5x5xf32>) outs(%dw : memref<8x4xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %m = arith.mulf %a, %b : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  }
  return
}
