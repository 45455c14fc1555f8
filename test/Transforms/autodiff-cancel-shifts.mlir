// RUN: tofu-opt %s --tofu-autodiff | FileCheck %s
// RUN: tofu-opt %s --tofu-autodiff=cancel-shifts=false | FileCheck %s --check-prefix=OFF

// tofu-autodiff holds constant a row maximum that is only subtracted and
// that a normalisation cancels (softmax, log-softmax): its gradient is zero,
// so the backward pass has no max mask (arith.cmpf) and no reduction for it.
// Any other use of the maximum keeps it differentiated.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
#col = affine_map<(d0, d1) -> (d1)>
#keep = affine_map<(d0, d1) -> (d0, 0)>
#all = affine_map<(d0, d1) -> ()>

// softmax: exp(w - m) / sum(exp(w - m)).
// CHECK-LABEL: func.func @softmax_train(
// CHECK-NOT: arith.cmpf
// CHECK: return
// OFF-LABEL: func.func @softmax_train(
// OFF: arith.cmpf
func.func @softmax(%w: tensor<3x3xf32> {tofu.weight}, %t: tensor<3x3xf32>) -> tensor<f32> {
  %ninf = arith.constant -1.0e+30 : f32
  %zero = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<3xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<3x3xf32>) outs(%mi : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %e0 = tensor.empty() : tensor<3x3xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %m : tensor<3x3xf32>, tensor<3xf32>) outs(%e0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<3x3xf32>
  %s0 = tensor.empty() : tensor<3xf32>
  %si = linalg.fill ins(%zero : f32) outs(%s0 : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<3x3xf32>) outs(%si : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %p0 = tensor.empty() : tensor<3x3xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<3x3xf32>, tensor<3xf32>) outs(%p0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<3x3xf32>
  %l0 = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%p, %t : tensor<3x3xf32>, tensor<3x3xf32>) outs(%li : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// log-softmax with the maximum kept as a 3x1 column (as torch-mlir writes
// it): (w - m) - log(sum(exp(w - m))).
// CHECK-LABEL: func.func @log_softmax_train(
// CHECK-NOT: arith.cmpf
// CHECK: return
// OFF-LABEL: func.func @log_softmax_train(
// OFF: arith.cmpf
func.func @log_softmax(%w: tensor<3x3xf32> {tofu.weight}, %t: tensor<3x3xf32>) -> tensor<f32> {
  %ninf = arith.constant -1.0e+30 : f32
  %zero = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<3x1xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<3x1xf32>) -> tensor<3x1xf32>
  %m = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<3x3xf32>) outs(%mi : tensor<3x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3x1xf32>
  %z0 = tensor.empty() : tensor<3x3xf32>
  %z = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %m : tensor<3x3xf32>, tensor<3x1xf32>) outs(%z0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x3xf32>
  %s0 = tensor.empty() : tensor<3x1xf32>
  %si = linalg.fill ins(%zero : f32) outs(%s0 : tensor<3x1xf32>) -> tensor<3x1xf32>
  %s = linalg.generic {indexing_maps = [#id, #keep], iterator_types = ["parallel", "reduction"]}
      ins(%z : tensor<3x3xf32>) outs(%si : tensor<3x1xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %x = math.exp %a : f32
    %r = arith.addf %acc, %x : f32
    linalg.yield %r : f32
  } -> tensor<3x1xf32>
  %y0 = tensor.empty() : tensor<3x3xf32>
  %y = linalg.generic {indexing_maps = [#id, #keep, #id], iterator_types = ["parallel", "parallel"]}
      ins(%z, %s : tensor<3x3xf32>, tensor<3x1xf32>) outs(%y0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %g = math.log %b : f32
    %d = arith.subf %a, %g : f32
    linalg.yield %d : f32
  } -> tensor<3x3xf32>
  %l0 = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%y, %t : tensor<3x3xf32>, tensor<3x3xf32>) outs(%li : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// exp(w - m) without the normalisation depends on m.
// CHECK-LABEL: func.func @unnormalised_train(
// CHECK: arith.cmpf
func.func @unnormalised(%w: tensor<3x3xf32> {tofu.weight}, %t: tensor<3x3xf32>) -> tensor<f32> {
  %ninf = arith.constant -1.0e+30 : f32
  %zero = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<3xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<3x3xf32>) outs(%mi : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %e0 = tensor.empty() : tensor<3x3xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %m : tensor<3x3xf32>, tensor<3xf32>) outs(%e0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<3x3xf32>
  %l0 = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%e, %t : tensor<3x3xf32>, tensor<3x3xf32>) outs(%li : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// Each row divided by the sum of another row (s indexed by the column)
// mixes the maxima of different rows: it depends on m.
// CHECK-LABEL: func.func @other_rows_train(
// CHECK: arith.cmpf
func.func @other_rows(%w: tensor<3x3xf32> {tofu.weight}, %t: tensor<3x3xf32>) -> tensor<f32> {
  %ninf = arith.constant -1.0e+30 : f32
  %zero = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<3xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<3x3xf32>) outs(%mi : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %e0 = tensor.empty() : tensor<3x3xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %m : tensor<3x3xf32>, tensor<3xf32>) outs(%e0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<3x3xf32>
  %s0 = tensor.empty() : tensor<3xf32>
  %si = linalg.fill ins(%zero : f32) outs(%s0 : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<3x3xf32>) outs(%si : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %p0 = tensor.empty() : tensor<3x3xf32>
  %p = linalg.generic {indexing_maps = [#id, #col, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<3x3xf32>, tensor<3xf32>) outs(%p0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<3x3xf32>
  %l0 = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%p, %t : tensor<3x3xf32>, tensor<3x3xf32>) outs(%li : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// The maximum itself reaches the loss.
// CHECK-LABEL: func.func @max_in_loss_train(
// CHECK: arith.cmpf
func.func @max_in_loss(%w: tensor<3x3xf32> {tofu.weight}, %t: tensor<3x3xf32>) -> tensor<f32> {
  %ninf = arith.constant -1.0e+30 : f32
  %zero = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<3xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<3x3xf32>) outs(%mi : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %e0 = tensor.empty() : tensor<3x3xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %m : tensor<3x3xf32>, tensor<3xf32>) outs(%e0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<3x3xf32>
  %s0 = tensor.empty() : tensor<3xf32>
  %si = linalg.fill ins(%zero : f32) outs(%s0 : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<3x3xf32>) outs(%si : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %p0 = tensor.empty() : tensor<3x3xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<3x3xf32>, tensor<3xf32>) outs(%p0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<3x3xf32>
  %q0 = tensor.empty() : tensor<3x3xf32>
  %q = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %m : tensor<3x3xf32>, tensor<3xf32>) outs(%q0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.addf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<3x3xf32>
  %l0 = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%q, %t : tensor<3x3xf32>, tensor<3x3xf32>) outs(%li : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// The softmax times the unnormalised exp(w - m) still depends on m.
// CHECK-LABEL: func.func @leftover_train(
// CHECK: arith.cmpf
func.func @leftover(%w: tensor<3x3xf32> {tofu.weight}, %t: tensor<3x3xf32>) -> tensor<f32> {
  %ninf = arith.constant -1.0e+30 : f32
  %zero = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<3xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<3x3xf32>) outs(%mi : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %e0 = tensor.empty() : tensor<3x3xf32>
  %e = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%w, %m : tensor<3x3xf32>, tensor<3xf32>) outs(%e0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    %e = math.exp %s : f32
    linalg.yield %e : f32
  } -> tensor<3x3xf32>
  %s0 = tensor.empty() : tensor<3xf32>
  %si = linalg.fill ins(%zero : f32) outs(%s0 : tensor<3xf32>) -> tensor<3xf32>
  %s = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%e : tensor<3x3xf32>) outs(%si : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %p0 = tensor.empty() : tensor<3x3xf32>
  %p = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%e, %s : tensor<3x3xf32>, tensor<3xf32>) outs(%p0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.divf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<3x3xf32>
  %q0 = tensor.empty() : tensor<3x3xf32>
  %q = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
      ins(%p, %e : tensor<3x3xf32>, tensor<3x3xf32>) outs(%q0 : tensor<3x3xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %d = arith.mulf %a, %b : f32
    linalg.yield %d : f32
  } -> tensor<3x3xf32>
  %l0 = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%q, %t : tensor<3x3xf32>, tensor<3x3xf32>) outs(%li : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %pr = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %pr : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}

// m broadcast into the first column of a zero 3x2 tensor, then m
// subtracted from every column: the second column is -m, so the loss
// depends on m (the unwritten column keeps the zero it started with).
// CHECK-LABEL: func.func @partial_write_train(
// CHECK: arith.cmpf
func.func @partial_write(%w: tensor<3x3xf32> {tofu.weight}, %t: tensor<3x3xf32>) -> tensor<f32> {
  %ninf = arith.constant -1.0e+30 : f32
  %zero = arith.constant 0.0 : f32
  %m0 = tensor.empty() : tensor<3xf32>
  %mi = linalg.fill ins(%ninf : f32) outs(%m0 : tensor<3xf32>) -> tensor<3xf32>
  %m = linalg.generic {indexing_maps = [#id, #row], iterator_types = ["parallel", "reduction"]}
      ins(%w : tensor<3x3xf32>) outs(%mi : tensor<3xf32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.maximumf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<3xf32>
  %c0 = tensor.empty() : tensor<3x2xf32>
  %ci = linalg.fill ins(%zero : f32) outs(%c0 : tensor<3x2xf32>) -> tensor<3x2xf32>
  %col = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0, 0)>], iterator_types = ["parallel"]}
      ins(%m : tensor<3xf32>) outs(%ci : tensor<3x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    linalg.yield %a : f32
  } -> tensor<3x2xf32>
  %d0 = tensor.empty() : tensor<3x2xf32>
  %d = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]}
      ins(%col, %m : tensor<3x2xf32>, tensor<3xf32>) outs(%d0 : tensor<3x2xf32>) {
  ^bb0(%a: f32, %b: f32, %o: f32):
    %s = arith.subf %a, %b : f32
    linalg.yield %s : f32
  } -> tensor<3x2xf32>
  %l0 = tensor.empty() : tensor<f32>
  %li = linalg.fill ins(%zero : f32) outs(%l0 : tensor<f32>) -> tensor<f32>
  %l = linalg.generic {indexing_maps = [#id, #all], iterator_types = ["reduction", "reduction"]}
      ins(%d : tensor<3x2xf32>) outs(%li : tensor<f32>) {
  ^bb0(%a: f32, %acc: f32):
    %r = arith.addf %acc, %a : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
