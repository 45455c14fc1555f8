// RUN: tofu-opt %s --tofu-inline-execute-regions | FileCheck %s

// Tests that single-block execute_regions, no_inline ones too, are
// replaced by their ops and their results by what they yield, nested ones
// included, and that a region of several blocks stays.

// CHECK-LABEL: func.func @regions
// CHECK-NEXT: %[[A:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: call @use(%[[A]])
// CHECK-NEXT: %[[B:.*]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: %[[M:.*]] = scf.execute_region -> memref<4xf32> {
// CHECK: cf.br ^bb1
// CHECK: ^bb1:
// CHECK: scf.yield
// CHECK: return %[[A]], %[[B]], %[[M]]
func.func private @use(memref<4xf32>)
func.func @regions() -> (memref<4xf32>, memref<4xf32>, memref<4xf32>) {
  %a = scf.execute_region -> memref<4xf32> no_inline {
    %m = memref.alloc() : memref<4xf32>
    func.call @use(%m) : (memref<4xf32>) -> ()
    scf.yield %m : memref<4xf32>
  }
  %b = scf.execute_region -> memref<4xf32> {
    %inner = scf.execute_region -> memref<4xf32> no_inline {
      %m = memref.alloc() : memref<4xf32>
      scf.yield %m : memref<4xf32>
    }
    scf.yield %inner : memref<4xf32>
  }
  %c = scf.execute_region -> memref<4xf32> {
    %m = memref.alloc() : memref<4xf32>
    cf.br ^bb1
  ^bb1:
    scf.yield %m : memref<4xf32>
  }
  return %a, %b, %c : memref<4xf32>, memref<4xf32>, memref<4xf32>
}
