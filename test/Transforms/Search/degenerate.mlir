// RUN: tofu-opt %s --tdl-attach --tofu-search="devices=6 plan-out=none svg=none report=%t.report" -verify-diagnostics | FileCheck %s
// RUN: FileCheck %s --check-prefix=REPORT < %t.report

// Tests that a step on which no tensor can be cut is reported as degenerate,
// not as an optimum: six devices are steps of 3 then 2, and no dimension of
// these power-of-two shapes divides by 3. The first step replicates every
// tensor at 0 bytes; the warning names the memory that costs
// (4 x 64 floats, the result's tensor.empty included: 1024 bytes on each
// device, 683 more than a 3-way split).

// expected-warning@+1 {{tofu-search: step 0 (k=3) is degenerate: no tensor has a dimension divisible by 3, so every tensor is replicated on the 3 workers of each group; it communicates 0 bytes but leaves 1024 bytes of tensors on each device, 683 bytes more than an even 3-way split}}
func.func @f(%x: tensor<8x8xf32>, %w: tensor<8x8xf32>) -> tensor<8x8xf32> {
  %e = tensor.empty() : tensor<8x8xf32>
  %y = linalg.matmul ins(%x, %w : tensor<8x8xf32>, tensor<8x8xf32>)
                     outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
  return %y : tensor<8x8xf32>
}
// CHECK-LABEL: func.func @f
// CHECK-SAME: tofu.tiling = ["rep", "cut(0)"]

// REPORT: step      k  level   groups            bytes  exact
// REPORT-NEXT: 0      3      0        1                0  degenerate
// REPORT-NEXT: 1      2      0        3       {{[0-9]+}}  yes
// REPORT: warning: step 0 (k=3) is degenerate
// REPORT: remark: step of 3: 4 tensor(s) have no dimension divisible by 3 and are replicated
// REPORT: remark: step of 3: 1 operator(s) have no even strategy and run replicated
