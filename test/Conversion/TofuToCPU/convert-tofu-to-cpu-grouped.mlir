// RUN: tofu-opt %s --convert-tofu-to-cpu --canonicalize | FileCheck %s

// Tests that products whose N or K spans two loops (the einsum
// `bk,kgh->bgh` of an LSTM with stacked gates, and its data gradient
// `bgh,kgh->bk`) become one GEMM call with each group as one dimension:
// unconditionally where the buffers' static strides make each group
// contiguous, under a run-time check of the strides with the op (and its
// zero fill) as the other branch where they are dynamic, and not at all
// where the static strides leave a gap inside a group; and that a product
// whose operand the runtime's GEMM plan cannot take (a broadcast weight,
// strides 0) stays loops instead of a call that would abort.

#x = affine_map<(b, g, h, k) -> (b, k)>
#w = affine_map<(b, g, h, k) -> (k, g, h)>
#o = affine_map<(b, g, h, k) -> (b, g, h)>

// n = 4 * 5 = 20 with stride 1 in B and C; beta 0 (the fill is taken).
// CHECK-LABEL: func.func @static
// CHECK-NOT: scf.if
// CHECK-NOT: linalg.fill
// CHECK: call @tofu_cpu_sgemm(%c1, %c8, %c20, %c16, %{{.*}}, %c16, %c1, %c0, %{{.*}}, %c20, %c1, %c0, %{{.*}}, %c20, %c1, %c0, %cst)
// CHECK-NOT: linalg.generic
func.func @static(%x: memref<8x16xf32>, %w: memref<16x4x5xf32>, %o: memref<8x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<8x4x5xf32>)
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x16xf32>, memref<16x4x5xf32>) outs(%o : memref<8x4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// The weight's strides are only known at run time: the call runs when
// stride(g) = 5 * stride(h) and the weight, as the 16 x 20 matrix B, has a
// unit stride along one dimension and a stride of at least the other's
// extent along the other (as the runtime's plan needs); otherwise the call
// reads a contiguous copy of the weight (and the reports count the first
// call only). The zero fill goes: both calls write C with beta 0.
// CHECK-LABEL: func.func @dynamic
// CHECK: %[[BASE:.*]], %{{.*}}, %{{.*}}:3, %[[S:.*]]:3 = memref.extract_strided_metadata %arg1
// CHECK: %[[WANT:.*]] = arith.muli %[[S]]#2, %c5
// CHECK: %[[GROUP:.*]] = arith.cmpi eq, %[[S]]#1, %[[WANT]]
// CHECK: %[[UNITK:.*]] = arith.cmpi eq, %[[S]]#0, %c1
// CHECK: %[[LDN:.*]] = arith.cmpi sge, %[[S]]#2, %c16
// CHECK: %[[COLMAJOR:.*]] = arith.andi %[[UNITK]], %[[LDN]]
// CHECK: %[[UNITN:.*]] = arith.cmpi eq, %[[S]]#2, %c1
// CHECK: %[[LDK:.*]] = arith.cmpi sge, %[[S]]#0, %c20
// CHECK: %[[ROWMAJOR:.*]] = arith.andi %[[UNITN]], %[[LDK]]
// CHECK: %[[USABLE:.*]] = arith.ori %[[COLMAJOR]], %[[ROWMAJOR]]
// CHECK: %[[OK:.*]] = arith.andi %[[GROUP]], %[[USABLE]]
// CHECK: scf.if %[[OK]] {
// CHECK:   call @tofu_cpu_sgemm(%c1, %c8, %c20, %c16, %{{.*}}, %c16, %c1, %c0, %{{.*}}, %[[S]]#0, %[[S]]#2, %c0, %{{.*}}, %c20, %c1, %c0, %cst)
// CHECK: } else {
// CHECK:   %[[COPY:.*]] = memref.alloc() : memref<16x4x5xf32>
// CHECK:   linalg.copy {tofu.library_fallback} ins(%arg1 : {{.*}}) outs(%[[COPY]] : memref<16x4x5xf32>)
// CHECK:   %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[COPY]]
// CHECK:   call @tofu_cpu_sgemm(%c1, %c8, %c20, %c16, %{{.*}}, %c16, %c1, %c0, %[[P]], %c20, %c1, %c0, %{{.*}}, %c20, %c1, %c0, %cst) {{.*}}tofu.library_fallback
// CHECK:   memref.dealloc %[[COPY]]
// CHECK: }
// CHECK-NOT: linalg.fill
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @dynamic(%x: memref<8x16xf32>, %w: memref<16x4x5xf32, strided<[?, ?, ?], offset: ?>>, %o: memref<8x4x5xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%o : memref<8x4x5xf32>)
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x16xf32>, memref<16x4x5xf32, strided<[?, ?, ?], offset: ?>>) outs(%o : memref<8x4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// stride(g) = 10, not 5: the group is no dimension of the weight, which
// the call reads from a contiguous copy (beta 1: no zero fill here).
// CHECK-LABEL: func.func @gapped
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<16x4x5xf32>
// CHECK: linalg.copy ins(%arg1 : {{.*}}) outs(%[[COPY]] : memref<16x4x5xf32>)
// CHECK: %[[P:.*]] = memref.extract_aligned_pointer_as_index %[[COPY]]
// CHECK: call @tofu_cpu_sgemm(%c1, %c8, %c20, %c16, %{{.*}}, %c16, %c1, %c0, %[[P]], %c20, %c1, %c0, %{{.*}}, %c20, %c1, %c0, %cst)
// CHECK-NOT: tofu.library_fallback
// CHECK: memref.dealloc %[[COPY]]
// CHECK-NOT: linalg.generic
// CHECK: return
func.func @gapped(%x: memref<8x16xf32>, %w: memref<16x4x5xf32, strided<[40, 10, 1]>>, %o: memref<8x4x5xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #o], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<8x16xf32>, memref<16x4x5xf32, strided<[40, 10, 1]>>) outs(%o : memref<8x4x5xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// The data gradient: K = (g, h), 20 with stride 1 in A and B.
// CHECK-LABEL: func.func @grouped_k
// CHECK: call @tofu_cpu_sgemm(%c1, %c8, %c16, %c20, %{{.*}}, %c20, %c1, %c0, %{{.*}}, %c1, %c20, %c0, %{{.*}}, %c16, %c1, %c0, %cst)
func.func @grouped_k(%dy: memref<8x4x5xf32>, %w: memref<16x4x5xf32>, %dx: memref<8x16xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%dx : memref<8x16xf32>)
  linalg.generic {indexing_maps = [affine_map<(b, k, g, h) -> (b, g, h)>, affine_map<(b, k, g, h) -> (k, g, h)>, affine_map<(b, k, g, h) -> (b, k)>], iterator_types = ["parallel", "parallel", "reduction", "reduction"]}
      ins(%dy, %w : memref<8x4x5xf32>, memref<16x4x5xf32>) outs(%dx : memref<8x16xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}

// The weight broadcast along both of its dimensions: no unit stride; the
// call reads a contiguous copy.
// CHECK-LABEL: func.func @broadcast
// CHECK: %[[COPY:.*]] = memref.alloc() : memref<16x20xf32>
// CHECK: linalg.copy ins(%arg1 : memref<16x20xf32, strided<[0, 0]>>) outs(%[[COPY]] : memref<16x20xf32>)
// CHECK: call @tofu_cpu_sgemm
// CHECK-NOT: linalg.matmul
// CHECK: return
func.func @broadcast(%x: memref<8x16xf32>, %w: memref<16x20xf32, strided<[0, 0]>>, %o: memref<8x20xf32>) {
  linalg.matmul ins(%x, %w : memref<8x16xf32>, memref<16x20xf32, strided<[0, 0]>>) outs(%o : memref<8x20xf32>)
  return
}
