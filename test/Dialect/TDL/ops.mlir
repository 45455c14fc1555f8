// RUN: tofu-opt %s | tofu-opt | FileCheck %s

// Tests that TDL descriptions round-trip in their canonical text form.

// CHECK-LABEL: func.func @descriptions
func.func @descriptions() attributes {
  // CHECK-SAME: cholesky = #tdl.desc<(m) -> (b, i, j) = opaque(m[b, :, :])>
  cholesky = #tdl.desc<(m) -> (b, i, j) = opaque(m[b, :, :])>,
  // CHECK-SAME: collapse = #tdl.desc<(a) -> (i) = a[i floordiv 6, i mod 6]>
  collapse = #tdl.desc<(i) = a[i floordiv 6, i mod 6]>,
  // CHECK-SAME: conv1d = #tdl.desc<(data, filters) -> (b, co, x) = sum(ci, dx) data[b, ci, x + dx] * filters[ci, co, dx]>
  conv1d = #tdl.desc<(b, co, x) = sum(ci, dx) data[b, ci, x + dx] * filters[ci, co, dx]>,
  // CHECK-SAME: fc = #tdl.desc<(x, w, bias) -> (b, o) = bias[o] + (sum(i) x[b, i] * w[o, i])>
  fc = #tdl.desc<(x, w, bias) -> (b, o) = bias[o] + sum(i) x[b, i] * w[o, i]>,
  // CHECK-SAME: moments = #tdl.desc<(x) -> mean(c) = sum(b) x[b, c] / 4; sq(c) = sum(b) x[b, c] * x[b, c]>
  moments = #tdl.desc<(x) -> mean(c) = sum(b) x[b, c] / 4; sq(c) = sum(b) x[b, c] * x[b, c]>,
  // CHECK-SAME: pool = #tdl.desc<(x) -> (b, y) = max(k) x[b, y * 2 + k - 1]>
  pool = #tdl.desc<(x) -> (b, y) = max(k) x[b, y * 2 + k - 1]>,
  // CHECK-SAME: relu = #tdl.desc<(x) -> (i, j) = max(x[i, j], 0.0)>
  relu = #tdl.desc<(i, j) = max(x[i, j], 0.0)>,
  // CHECK-SAME: scalar = #tdl.desc<(alpha, x) -> (i) = alpha * x[i]>
  scalar = #tdl.desc<(i) = alpha * x[i]>
} {
  return
}
