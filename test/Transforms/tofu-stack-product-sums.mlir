// RUN: tofu-opt %s --tofu-stack-product-sums -split-input-file | FileCheck %s

// Tests the gradient of a weight shared by 3 time steps: the 3 products
// (contractions over the batch, each into a zero fill) and the 2 sums that
// add them become one product over a new outer reduction loop, whose
// operands are the per-step operands stacked along a new first dimension,
// in the order the sums read them. The old products, fills and sums are
// gone.

#bk = affine_map<(b, k, n) -> (b, k)>
#bn = affine_map<(b, k, n) -> (b, n)>
#kn = affine_map<(b, k, n) -> (k, n)>
#id = affine_map<(k, n) -> (k, n)>
// CHECK-DAG: #[[SH:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[SG:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[OUT:.*]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @weight_gradient(
// CHECK-SAME:      %[[H0:[^:]*]]: tensor<2x8xf32>, %[[H1:[^:]*]]: tensor<2x8xf32>, %[[H2:[^:]*]]: tensor<2x8xf32>, %[[G0:[^:]*]]: tensor<2x10xf32>, %[[G1:[^:]*]]: tensor<2x10xf32>, %[[G2:[^:]*]]: tensor<2x10xf32>
// CHECK-DAG:     %[[E0:.*]] = tensor.expand_shape %[[H0]] {{\[\[}}0, 1], [2]] output_shape [1, 2, 8]
// CHECK-DAG:     %[[E1:.*]] = tensor.expand_shape %[[H1]]
// CHECK-DAG:     %[[E2:.*]] = tensor.expand_shape %[[H2]]
// CHECK-DAG:     %[[HS:.*]] = tensor.concat dim(0) %[[E0]], %[[E1]], %[[E2]] : {{.*}} -> tensor<3x2x8xf32>
// CHECK-DAG:     %[[GS:.*]] = tensor.concat dim(0) {{.*}} -> tensor<3x2x10xf32>
// CHECK:         %[[FILL:.*]] = linalg.fill {{.*}} -> tensor<8x10xf32>
// CHECK-NOT:     linalg.fill
// CHECK:         %[[P:.*]] = linalg.generic {indexing_maps = [#[[SH]], #[[SG]], #[[OUT]]], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[HS]], %[[GS]] : tensor<3x2x8xf32>, tensor<3x2x10xf32>) outs(%[[FILL]] : tensor<8x10xf32>)
// CHECK:           arith.mulf
// CHECK:           arith.addf
// CHECK-NOT:     linalg.generic
// CHECK:         return %[[P]]
func.func @weight_gradient(%h0: tensor<2x8xf32>, %h1: tensor<2x8xf32>, %h2: tensor<2x8xf32>, %g0: tensor<2x10xf32>, %g1: tensor<2x10xf32>, %g2: tensor<2x10xf32>) -> tensor<8x10xf32> {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x10xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p0 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h0, %g0 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f0 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e1 = tensor.empty() : tensor<8x10xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p1 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h1, %g1 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f1 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p2 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h2, %g2 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f2 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses01 = tensor.empty() : tensor<8x10xf32>
  %s01 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p0, %p1 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses01 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses012 = tensor.empty() : tensor<8x10xf32>
  %s012 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%s01, %p2 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses012 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  return %s012 : tensor<8x10xf32>
}

// -----

// Tests a sum with a term of another form (%w) and a sum that something
// else reads (%s01, returned): the tree stops there, so only %p0 and %p1
// stack, under %s01; the outer sum adds %w and %p2 as before.

#bk = affine_map<(b, k, n) -> (b, k)>
#bn = affine_map<(b, k, n) -> (b, n)>
#kn = affine_map<(b, k, n) -> (k, n)>
#id = affine_map<(k, n) -> (k, n)>
// CHECK-LABEL: func.func @partial_tree(
// CHECK-SAME:      %[[W:[^:]*]]: tensor<8x10xf32>)
// CHECK:         %[[P2:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<2x8xf32>, tensor<2x10xf32>)
// CHECK:         %[[P:.*]] = linalg.generic {{.*}}iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%{{.*}}, %{{.*}} : tensor<2x2x8xf32>, tensor<2x2x10xf32>)
// CHECK:         %[[A:.*]] = linalg.generic {{.*}} ins(%[[P]], %[[P2]] :
// CHECK:         %[[B:.*]] = linalg.generic {{.*}} ins(%[[A]], %[[W]] :
// CHECK:         return %[[P]], %[[B]]
func.func @partial_tree(%h0: tensor<2x8xf32>, %h1: tensor<2x8xf32>, %h2: tensor<2x8xf32>, %g0: tensor<2x10xf32>, %g1: tensor<2x10xf32>, %g2: tensor<2x10xf32>, %w: tensor<8x10xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>) {
  %zero = arith.constant 0.0 : f32
  %e0 = tensor.empty() : tensor<8x10xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p0 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h0, %g0 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f0 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e1 = tensor.empty() : tensor<8x10xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p1 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h1, %g1 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f1 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p2 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h2, %g2 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f2 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses01 = tensor.empty() : tensor<8x10xf32>
  %s01 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p0, %p1 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses01 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses2 = tensor.empty() : tensor<8x10xf32>
  %s2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%s01, %p2 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses2 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses = tensor.empty() : tensor<8x10xf32>
  %s = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%s2, %w : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  return %s01, %s : tensor<8x10xf32>, tensor<8x10xf32>
}

// -----

// Tests sums that stay: a term into a fill of 1.0 (the stacked product
// would add it once, not twice), terms with different bodies, and terms
// whose stacks would copy more bytes than the sums they remove (two
// products by two 8x8 weights for a 2x8 sum).

#bk = affine_map<(b, k, n) -> (b, k)>
#bn = affine_map<(b, k, n) -> (b, n)>
#kn = affine_map<(b, k, n) -> (k, n)>
#id = affine_map<(k, n) -> (k, n)>
#bnk = affine_map<(b, n, k) -> (b, k)>
#nk = affine_map<(b, n, k) -> (n, k)>
#bn2 = affine_map<(b, n, k) -> (b, n)>
#id2 = affine_map<(b, n) -> (b, n)>
// CHECK-LABEL: func.func @kept(
// CHECK-NOT:     tensor.concat
// CHECK:         return
func.func @kept(%h0: tensor<2x8xf32>, %h1: tensor<2x8xf32>, %h2: tensor<2x8xf32>, %g0: tensor<2x10xf32>, %g1: tensor<2x10xf32>, %g2: tensor<2x10xf32>, %w0: tensor<8x8xf32>, %w1: tensor<8x8xf32>, %d0: tensor<2x8xf32>, %d1: tensor<2x8xf32>) -> (tensor<8x10xf32>, tensor<8x10xf32>, tensor<2x8xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %e0 = tensor.empty() : tensor<8x10xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p0 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h0, %g0 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f0 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e1 = tensor.empty() : tensor<8x10xf32>
  %f1 = linalg.fill ins(%one : f32) outs(%e1 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p1 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h1, %g1 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f1 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %seka = tensor.empty() : tensor<8x10xf32>
  %ka = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p0, %p1 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%seka : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p2 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h2, %g2 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f2 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e3 = tensor.empty() : tensor<8x10xf32>
  %f3 = linalg.fill ins(%zero : f32) outs(%e3 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p3 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h0, %g1 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f3 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.subf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %sekb = tensor.empty() : tensor<8x10xf32>
  %kb = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p2, %p3 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%sekb : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %x0 = tensor.empty() : tensor<2x8xf32>
  %y0 = linalg.fill ins(%zero : f32) outs(%x0 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %q0 = linalg.generic {indexing_maps = [#bnk, #nk, #bn2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%d0, %w0 : tensor<2x8xf32>, tensor<8x8xf32>) outs(%y0 : tensor<2x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  %x1 = tensor.empty() : tensor<2x8xf32>
  %y1 = linalg.fill ins(%zero : f32) outs(%x1 : tensor<2x8xf32>) -> tensor<2x8xf32>
  %q1 = linalg.generic {indexing_maps = [#bnk, #nk, #bn2], iterator_types = ["parallel", "parallel", "reduction"]} ins(%d1, %w1 : tensor<2x8xf32>, tensor<8x8xf32>) outs(%y1 : tensor<2x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  %x2 = tensor.empty() : tensor<2x8xf32>
  %c = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]} ins(%q0, %q1 : tensor<2x8xf32>, tensor<2x8xf32>) outs(%x2 : tensor<2x8xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<2x8xf32>
  return %ka, %kb, %c : tensor<8x10xf32>, tensor<8x10xf32>, tensor<2x8xf32>
}

// -----

// Tests the bias's gradient of an RNN: per time step, the batch sum of the
// gate gradient %g_t, which the weight's gradient product reads through a
// copy (tofu-autodiff's adjoint of an addition: 1.0 * x added to a zero
// fill). Stacking the bias's terms alone would copy 3 gate gradients to
// remove 2 bias-sized sums; once the weight's gradient has stacked the
// gate gradients (looking through the copies), the bias's sum reads that
// stack: one concat of the %g_t for both.

#bk = affine_map<(b, k, n) -> (b, k)>
#bn = affine_map<(b, k, n) -> (b, n)>
#kn = affine_map<(b, k, n) -> (k, n)>
#id = affine_map<(b, n) -> (b, n)>
#col = affine_map<(b, n) -> (n)>
#v = affine_map<(n) -> (n)>
// CHECK-DAG: #[[SG:.*]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[TBN:.*]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[N:.*]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @bias_gradient(
// CHECK-SAME:      %[[H0:[^:]*]]: tensor<2x8xf32>, %[[H1:[^:]*]]: tensor<2x8xf32>, %[[H2:[^:]*]]: tensor<2x8xf32>, %[[G0:[^:]*]]: tensor<2x10xf32>, %[[G1:[^:]*]]: tensor<2x10xf32>, %[[G2:[^:]*]]: tensor<2x10xf32>
// CHECK-DAG:     %[[X0:.*]] = tensor.expand_shape %[[G0]]
// CHECK-DAG:     %[[X1:.*]] = tensor.expand_shape %[[G1]]
// CHECK-DAG:     %[[X2:.*]] = tensor.expand_shape %[[G2]]
// CHECK-DAG:     %[[GS:.*]] = tensor.concat dim(0) %[[X0]], %[[X1]], %[[X2]] : {{.*}} -> tensor<3x2x10xf32>
// CHECK-DAG:     %[[HS:.*]] = tensor.concat dim(0) {{.*}} -> tensor<3x2x8xf32>
// CHECK-DAG:     %[[W:.*]] = linalg.generic {indexing_maps = [#{{.*}}, #[[SG]], #{{.*}}], {{.*}} ins(%[[HS]], %[[GS]] : tensor<3x2x8xf32>, tensor<3x2x10xf32>)
// CHECK-DAG:     %[[B:.*]] = linalg.generic {indexing_maps = [#[[TBN]], #[[N]]], iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[GS]] : tensor<3x2x10xf32>)
// CHECK-NOT:     tensor.concat
// CHECK:         return %[[W]], %[[B]]
func.func @bias_gradient(%h0: tensor<2x8xf32>, %h1: tensor<2x8xf32>, %h2: tensor<2x8xf32>, %g0: tensor<2x10xf32>, %g1: tensor<2x10xf32>, %g2: tensor<2x10xf32>) -> (tensor<8x10xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  // The copies of the gate gradients.
  %ce0 = tensor.empty() : tensor<2x10xf32>
  %cf0 = linalg.fill ins(%zero : f32) outs(%ce0 : tensor<2x10xf32>) -> tensor<2x10xf32>
  %c0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g0 : tensor<2x10xf32>) outs(%cf0 : tensor<2x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %one, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x10xf32>
  %ce1 = tensor.empty() : tensor<2x10xf32>
  %cf1 = linalg.fill ins(%zero : f32) outs(%ce1 : tensor<2x10xf32>) -> tensor<2x10xf32>
  %c1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1 : tensor<2x10xf32>) outs(%cf1 : tensor<2x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %one, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x10xf32>
  %ce2 = tensor.empty() : tensor<2x10xf32>
  %cf2 = linalg.fill ins(%zero : f32) outs(%ce2 : tensor<2x10xf32>) -> tensor<2x10xf32>
  %c2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2 : tensor<2x10xf32>) outs(%cf2 : tensor<2x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %one, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x10xf32>
  // The bias's gradient: per time step, the batch sum of %g_t.
  %be0 = tensor.empty() : tensor<10xf32>
  %bf0 = linalg.fill ins(%zero : f32) outs(%be0 : tensor<10xf32>) -> tensor<10xf32>
  %b0 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%g0 : tensor<2x10xf32>) outs(%bf0 : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %be1 = tensor.empty() : tensor<10xf32>
  %bf1 = linalg.fill ins(%zero : f32) outs(%be1 : tensor<10xf32>) -> tensor<10xf32>
  %b1 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%g1 : tensor<2x10xf32>) outs(%bf1 : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %be2 = tensor.empty() : tensor<10xf32>
  %bf2 = linalg.fill ins(%zero : f32) outs(%be2 : tensor<10xf32>) -> tensor<10xf32>
  %b2 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%g2 : tensor<2x10xf32>) outs(%bf2 : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %bse01 = tensor.empty() : tensor<10xf32>
  %bs01 = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%b0, %b1 : tensor<10xf32>, tensor<10xf32>) outs(%bse01 : tensor<10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %bse = tensor.empty() : tensor<10xf32>
  %bs = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%bs01, %b2 : tensor<10xf32>, tensor<10xf32>) outs(%bse : tensor<10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  // The weight's gradient, over the copies.
  %e0 = tensor.empty() : tensor<8x10xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p0 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h0, %c0 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f0 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e1 = tensor.empty() : tensor<8x10xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p1 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h1, %c1 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f1 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p2 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h2, %c2 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f2 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses01 = tensor.empty() : tensor<8x10xf32>
  %s01 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p0, %p1 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses01 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses012 = tensor.empty() : tensor<8x10xf32>
  %s012 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%s01, %p2 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses012 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  return %s012, %bs : tensor<8x10xf32>, tensor<10xf32>
}

// -----

// Tests the same sums where the weight's product reads twice the gate
// gradients: those are not copies of %g_t, so the bias's sum has no stack
// to read and stays a sum of 3 reductions (its own stack would copy more
// than it saves).

#bk = affine_map<(b, k, n) -> (b, k)>
#bn = affine_map<(b, k, n) -> (b, n)>
#kn = affine_map<(b, k, n) -> (k, n)>
#id = affine_map<(b, n) -> (b, n)>
#col = affine_map<(b, n) -> (n)>
#v = affine_map<(n) -> (n)>
// CHECK-LABEL: func.func @bias_gradient_scaled(
// CHECK-COUNT-2: tensor.concat
// CHECK-NOT:     tensor.concat
// CHECK-COUNT-3: iterator_types = ["reduction", "parallel"]
// CHECK:         return
func.func @bias_gradient_scaled(%h0: tensor<2x8xf32>, %h1: tensor<2x8xf32>, %h2: tensor<2x8xf32>, %g0: tensor<2x10xf32>, %g1: tensor<2x10xf32>, %g2: tensor<2x10xf32>) -> (tensor<8x10xf32>, tensor<10xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 2.0 : f32
  // Twice the gate gradients: not copies.
  %ce0 = tensor.empty() : tensor<2x10xf32>
  %cf0 = linalg.fill ins(%zero : f32) outs(%ce0 : tensor<2x10xf32>) -> tensor<2x10xf32>
  %c0 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g0 : tensor<2x10xf32>) outs(%cf0 : tensor<2x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %one, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x10xf32>
  %ce1 = tensor.empty() : tensor<2x10xf32>
  %cf1 = linalg.fill ins(%zero : f32) outs(%ce1 : tensor<2x10xf32>) -> tensor<2x10xf32>
  %c1 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g1 : tensor<2x10xf32>) outs(%cf1 : tensor<2x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %one, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x10xf32>
  %ce2 = tensor.empty() : tensor<2x10xf32>
  %cf2 = linalg.fill ins(%zero : f32) outs(%ce2 : tensor<2x10xf32>) -> tensor<2x10xf32>
  %c2 = linalg.generic {indexing_maps = [#id, #id], iterator_types = ["parallel", "parallel"]} ins(%g2 : tensor<2x10xf32>) outs(%cf2 : tensor<2x10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %m = arith.mulf %one, %a : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<2x10xf32>
  // The bias's gradient: per time step, the batch sum of %g_t.
  %be0 = tensor.empty() : tensor<10xf32>
  %bf0 = linalg.fill ins(%zero : f32) outs(%be0 : tensor<10xf32>) -> tensor<10xf32>
  %b0 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%g0 : tensor<2x10xf32>) outs(%bf0 : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %be1 = tensor.empty() : tensor<10xf32>
  %bf1 = linalg.fill ins(%zero : f32) outs(%be1 : tensor<10xf32>) -> tensor<10xf32>
  %b1 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%g1 : tensor<2x10xf32>) outs(%bf1 : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %be2 = tensor.empty() : tensor<10xf32>
  %bf2 = linalg.fill ins(%zero : f32) outs(%be2 : tensor<10xf32>) -> tensor<10xf32>
  %b2 = linalg.generic {indexing_maps = [#id, #col], iterator_types = ["reduction", "parallel"]} ins(%g2 : tensor<2x10xf32>) outs(%bf2 : tensor<10xf32>) {
  ^bb0(%a: f32, %o: f32):
    %s = arith.addf %o, %a : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %bse01 = tensor.empty() : tensor<10xf32>
  %bs01 = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%b0, %b1 : tensor<10xf32>, tensor<10xf32>) outs(%bse01 : tensor<10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  %bse = tensor.empty() : tensor<10xf32>
  %bs = linalg.generic {indexing_maps = [#v, #v, #v], iterator_types = ["parallel"]} ins(%bs01, %b2 : tensor<10xf32>, tensor<10xf32>) outs(%bse : tensor<10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<10xf32>
  // The weight's gradient, over the copies.
  %e0 = tensor.empty() : tensor<8x10xf32>
  %f0 = linalg.fill ins(%zero : f32) outs(%e0 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p0 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h0, %c0 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f0 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e1 = tensor.empty() : tensor<8x10xf32>
  %f1 = linalg.fill ins(%zero : f32) outs(%e1 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p1 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h1, %c1 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f1 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %e2 = tensor.empty() : tensor<8x10xf32>
  %f2 = linalg.fill ins(%zero : f32) outs(%e2 : tensor<8x10xf32>) -> tensor<8x10xf32>
  %p2 = linalg.generic {indexing_maps = [#bk, #bn, #kn], iterator_types = ["reduction", "parallel", "parallel"]} ins(%h2, %c2 : tensor<2x8xf32>, tensor<2x10xf32>) outs(%f2 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %m = arith.mulf %a, %c : f32
    %s = arith.addf %o, %m : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses01 = tensor.empty() : tensor<8x10xf32>
  %s01 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%p0, %p1 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses01 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  %ses012 = tensor.empty() : tensor<8x10xf32>
  %s012 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%s01, %p2 : tensor<8x10xf32>, tensor<8x10xf32>) outs(%ses012 : tensor<8x10xf32>) {
  ^bb0(%a: f32, %c: f32, %o: f32):
    %s = arith.addf %a, %c : f32
    linalg.yield %s : f32
  } -> tensor<8x10xf32>
  return %s012, %bs : tensor<8x10xf32>, tensor<10xf32>
}

