// RUN: tofu-opt %s --tofu-gpu-parallel-loops | %run_bufferized_on_cpu | grep -v base@ | tr -s ' ' > %t.plain
// RUN: tofu-opt %s --tofu-gpu-parallel-loops="vector-loads=true" > %t.vector.mlir
// RUN: grep -c "vector.load" %t.vector.mlir | FileCheck %s --check-prefix=LOADS
// RUN: cat %t.vector.mlir | %run_bufferized_on_cpu | grep -v base@ | tr -s ' ' > %t.vector
// RUN: diff %t.plain %t.vector
// RUN: FileCheck %s < %t.vector

// Tests both ways a group of vector-loads reads and writes, run on the
// CPU: the same element-wise op (y = 2 x + b) on buffers whose groups
// start at multiples of 16 bytes (64-byte aligned allocations: the vector
// accesses) and on views that start one element later (the address test
// fails: an access per element) computes what the op computes one element
// per thread.

// The op's two vector loads (x and b); the fill in @main stores groups
// and loads nothing.
// LOADS: {{^}}2{{$}}

// The aligned op, then the shifted one: element (i, j) is
// 2 (16 i + j) + j, and 3 more when x and b start one element later.
// CHECK: {{^\[\[}}0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45],
// CHECK-NEXT: {{^}} [32, 35, 38, 41, 44, 47, 50, 53, 56, 59, 62, 65, 68, 71, 74, 77]]
// CHECK: {{^\[\[}}3, 6, 9, 12, 15, 18, 21, 24, 27, 30, 33, 36, 39, 42, 45, 48],
// CHECK-NEXT: {{^}} [35, 38, 41, 44, 47, 50, 53, 56, 59, 62, 65, 68, 71, 74, 77, 80]]

#id = affine_map<(i, j) -> (i, j)>
#col = affine_map<(i, j) -> (j)>
#lin = affine_map<(i) -> (i)>

func.func private @printMemrefF32(memref<*xf32>)

func.func @affine(%x: memref<2x16xf32, strided<[16, 1], offset: ?>>,
                  %b: memref<16xf32, strided<[1], offset: ?>>,
                  %y: memref<2x16xf32, strided<[16, 1], offset: ?>>) {
  %two = arith.constant 2.0 : f32
  linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%x, %b : memref<2x16xf32, strided<[16, 1], offset: ?>>, memref<16xf32, strided<[1], offset: ?>>)
      outs(%y : memref<2x16xf32, strided<[16, 1], offset: ?>>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %two : f32
    %s = arith.addf %m, %c : f32
    linalg.yield %s : f32
  }
  return
}

func.func @main() {
  // 0, 1, 2, ... in each buffer.
  %xs = memref.alloc() {alignment = 64 : i64} : memref<40xf32>
  %bs = memref.alloc() {alignment = 64 : i64} : memref<40xf32>
  %ys = memref.alloc() {alignment = 64 : i64} : memref<40xf32>
  linalg.generic {indexing_maps = [#lin, #lin], iterator_types = ["parallel"]}
      ins(%xs : memref<40xf32>) outs(%bs : memref<40xf32>) {
  ^bb0(%in: f32, %out: f32):
    %i = linalg.index 0 : index
    %n = arith.index_cast %i : index to i32
    %f = arith.sitofp %n : i32 to f32
    linalg.yield %f : f32
  }
  memref.copy %bs, %xs : memref<40xf32> to memref<40xf32>
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  scf.for %shift = %c0 to %c2 step %c1 {
    // At shift 0 x, b and y start at their allocations; at shift 1 one
    // element later.
    %x1 = memref.subview %xs[%shift] [32] [1] : memref<40xf32> to memref<32xf32, strided<[1], offset: ?>>
    %x = memref.expand_shape %x1 [[0, 1]] output_shape [2, 16] : memref<32xf32, strided<[1], offset: ?>> into memref<2x16xf32, strided<[16, 1], offset: ?>>
    %b = memref.subview %bs[%shift] [16] [1] : memref<40xf32> to memref<16xf32, strided<[1], offset: ?>>
    %y1 = memref.subview %ys[%shift] [32] [1] : memref<40xf32> to memref<32xf32, strided<[1], offset: ?>>
    %y = memref.expand_shape %y1 [[0, 1]] output_shape [2, 16] : memref<32xf32, strided<[1], offset: ?>> into memref<2x16xf32, strided<[16, 1], offset: ?>>
    func.call @affine(%x, %b, %y) : (memref<2x16xf32, strided<[16, 1], offset: ?>>, memref<16xf32, strided<[1], offset: ?>>, memref<2x16xf32, strided<[16, 1], offset: ?>>) -> ()
    %print = memref.cast %y : memref<2x16xf32, strided<[16, 1], offset: ?>> to memref<*xf32>
    func.call @printMemrefF32(%print) : (memref<*xf32>) -> ()
  }
  memref.dealloc %xs : memref<40xf32>
  memref.dealloc %bs : memref<40xf32>
  memref.dealloc %ys : memref<40xf32>
  return
}
