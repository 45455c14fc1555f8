// Finite-difference check (f64, rtol 1e-4) of the adjoint of every supported
// operation kind: the scalar rules of arith/math bodies, linalg named ops
// (generalized), tensor data movement, gradient accumulation, and scalars
// taken from weights (tensor.extract, captured in a body, passed as a scalar
// operand, filled). Every element of every weight is checked.
// RUN: tofu-opt %s --tofu-autodiff=keep-forward --test-tofu-gradcheck="func=scalar" | %run_cpu | FileCheck %s --check-prefix=SCALAR
// RUN: tofu-opt %s --tofu-autodiff=keep-forward --test-tofu-gradcheck="func=named" | %run_cpu | FileCheck %s --check-prefix=NAMED
// RUN: tofu-opt %s --tofu-autodiff=keep-forward --test-tofu-gradcheck="func=movement" | %run_cpu | FileCheck %s --check-prefix=MOVEMENT
// RUN: tofu-opt %s --tofu-autodiff=keep-forward --test-tofu-gradcheck="func=reductions" | %run_cpu | FileCheck %s --check-prefix=REDUCTIONS
// RUN: tofu-opt %s --tofu-autodiff=keep-forward --test-tofu-gradcheck="func=scalars" | %run_cpu | FileCheck %s --check-prefix=SCALARS
// RUN: tofu-opt %s --tofu-autodiff=keep-forward --test-tofu-gradcheck="func=named max-elements=5" | %run_cpu | FileCheck %s --check-prefix=SAMPLED
// SCALAR: GRADCHECK checked=12
// SCALAR: GRADCHECK failures=0
// NAMED: GRADCHECK checked=122
// NAMED: GRADCHECK failures=0
// MOVEMENT: GRADCHECK checked=30
// MOVEMENT: GRADCHECK failures=0
// REDUCTIONS: GRADCHECK checked=12
// REDUCTIONS: GRADCHECK failures=0
// SCALARS: GRADCHECK checked=20
// SCALARS: GRADCHECK failures=0
// SAMPLED: GRADCHECK checked=20
// SAMPLED: GRADCHECK failures=0

#id2 = affine_map<(d0, d1) -> (d0, d1)>
#sum2 = affine_map<(d0, d1) -> ()>
#id3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#sum3 = affine_map<(d0, d1, d2) -> ()>
#id4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#sum4 = affine_map<(d0, d1, d2, d3) -> ()>

// add sub mul div neg exp log tanh sqrt rsqrt powf maximumf minimumf
// select/cmpf erf absf, each on the path from both weights.
func.func @scalar(%a: tensor<2x3xf64> {tofu.weight}, %b: tensor<2x3xf64> {tofu.weight}) -> tensor<f64> {
  %e = tensor.empty() : tensor<2x3xf64>
  %v = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<2x3xf64>, tensor<2x3xf64>) outs(%e : tensor<2x3xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %one = arith.constant 1.0 : f64
    %half = arith.constant 1.5 : f64
    %p = arith.addf %x, %y : f64
    %q = arith.subf %x, %y : f64
    %m = arith.mulf %p, %q : f64
    %ey = math.exp %y : f64
    %pos = arith.addf %ey, %one : f64
    %d = arith.divf %m, %pos : f64
    %n = arith.negf %d : f64
    %l = math.log %pos : f64
    %t = math.tanh %x : f64
    %s = math.sqrt %pos : f64
    %r = math.rsqrt %pos : f64
    %pw = math.powf %pos, %half : f64
    %mx = arith.maximumf %x, %y : f64
    %mn = arith.minimumf %x, %y : f64
    %c = arith.cmpf ogt, %x, %y : f64
    %sel = arith.select %c, %m, %t : f64
    %er = math.erf %x : f64
    %ab = math.absf %y : f64
    %s1 = arith.addf %n, %l : f64
    %s2 = arith.addf %s1, %s : f64
    %s3 = arith.addf %s2, %r : f64
    %s4 = arith.addf %s3, %pw : f64
    %s5 = arith.addf %s4, %mx : f64
    %s6 = arith.addf %s5, %mn : f64
    %s7 = arith.addf %s6, %sel : f64
    %s8 = arith.addf %s7, %er : f64
    %s9 = arith.addf %s8, %ab : f64
    linalg.yield %s9 : f64
  } -> tensor<2x3xf64>
  %z = arith.constant 0.0 : f64
  %e0 = tensor.empty() : tensor<f64>
  %i = linalg.fill ins(%z : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id2, #sum2], iterator_types = ["reduction", "reduction"]}
      ins(%v : tensor<2x3xf64>) outs(%i : tensor<f64>) {
  ^bb0(%x: f64, %o: f64):
    %sq = arith.mulf %x, %x : f64
    %acc = arith.addf %o, %sq : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}

// matmul, batch_matmul, transpose, broadcast, conv_2d (stride 2),
// pooling_nchw_sum and pooling_nchw_max, generalized by the pass.
func.func @named(%a: tensor<2x3xf64> {tofu.weight}, %b: tensor<3x4xf64> {tofu.weight},
                 %x: tensor<1x2x5x5xf64> {tofu.weight}, %w: tensor<3x2x3x3xf64> {tofu.weight}) -> tensor<f64> {
  %z = arith.constant 0.0 : f64
  %e24 = tensor.empty() : tensor<2x4xf64>
  %f24 = linalg.fill ins(%z : f64) outs(%e24 : tensor<2x4xf64>) -> tensor<2x4xf64>
  %mm = linalg.matmul ins(%a, %b : tensor<2x3xf64>, tensor<3x4xf64>) outs(%f24 : tensor<2x4xf64>) -> tensor<2x4xf64>
  %e42 = tensor.empty() : tensor<4x2xf64>
  %tr = linalg.transpose ins(%mm : tensor<2x4xf64>) outs(%e42 : tensor<4x2xf64>) permutation = [1, 0]
  %e342 = tensor.empty() : tensor<3x4x2xf64>
  %bc = linalg.broadcast ins(%tr : tensor<4x2xf64>) outs(%e342 : tensor<3x4x2xf64>) dimensions = [0]
  %e323 = tensor.empty() : tensor<3x2x3xf64>
  %bt = linalg.transpose ins(%bc : tensor<3x4x2xf64>) outs(%e342 : tensor<3x4x2xf64>) permutation = [0, 1, 2]
  %f33 = tensor.empty() : tensor<3x4x4xf64>
  %f334 = linalg.fill ins(%z : f64) outs(%f33 : tensor<3x4x4xf64>) -> tensor<3x4x4xf64>
  %e324 = tensor.empty() : tensor<3x2x4xf64>
  %bt2 = linalg.broadcast ins(%b : tensor<3x4xf64>) outs(%e324 : tensor<3x2x4xf64>) dimensions = [1]
  %bmm = linalg.batch_matmul ins(%bt, %bt2 : tensor<3x4x2xf64>, tensor<3x2x4xf64>) outs(%f334 : tensor<3x4x4xf64>) -> tensor<3x4x4xf64>
  %econv = tensor.empty() : tensor<1x3x2x2xf64>
  %fconv = linalg.fill ins(%z : f64) outs(%econv : tensor<1x3x2x2xf64>) -> tensor<1x3x2x2xf64>
  %conv = linalg.conv_2d_nchw_fchw {dilations = dense<1> : vector<2xi64>, strides = dense<2> : vector<2xi64>}
      ins(%x, %w : tensor<1x2x5x5xf64>, tensor<3x2x3x3xf64>) outs(%fconv : tensor<1x3x2x2xf64>) -> tensor<1x3x2x2xf64>
  %win = tensor.empty() : tensor<2x2xf64>
  %epool = tensor.empty() : tensor<1x2x4x4xf64>
  %fpool = linalg.fill ins(%z : f64) outs(%epool : tensor<1x2x4x4xf64>) -> tensor<1x2x4x4xf64>
  %psum = linalg.pooling_nchw_sum {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %win : tensor<1x2x5x5xf64>, tensor<2x2xf64>) outs(%fpool : tensor<1x2x4x4xf64>) -> tensor<1x2x4x4xf64>
  %ninf = arith.constant -1.0e30 : f64
  %mpool = linalg.fill ins(%ninf : f64) outs(%epool : tensor<1x2x4x4xf64>) -> tensor<1x2x4x4xf64>
  %pmax = linalg.pooling_nchw_max {dilations = dense<1> : vector<2xi64>, strides = dense<1> : vector<2xi64>}
      ins(%x, %win : tensor<1x2x5x5xf64>, tensor<2x2xf64>) outs(%mpool : tensor<1x2x4x4xf64>) -> tensor<1x2x4x4xf64>
  %e0 = tensor.empty() : tensor<f64>
  %i0 = linalg.fill ins(%z : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id3, #sum3], iterator_types = ["reduction", "reduction", "reduction"]}
      ins(%bmm : tensor<3x4x4xf64>) outs(%i0 : tensor<f64>) {
  ^bb0(%v: f64, %o: f64):
    %sq = arith.mulf %v, %v : f64
    %acc = arith.addf %o, %sq : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  %l2 = linalg.generic {indexing_maps = [#id4, #sum4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%conv : tensor<1x3x2x2xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%v: f64, %o: f64):
    %sq = arith.mulf %v, %v : f64
    %acc = arith.addf %o, %sq : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  %l3 = linalg.generic {indexing_maps = [#id4, #id4, #sum4], iterator_types = ["reduction", "reduction", "reduction", "reduction"]}
      ins(%psum, %pmax : tensor<1x2x4x4xf64>, tensor<1x2x4x4xf64>) outs(%l2 : tensor<f64>) {
  ^bb0(%v: f64, %u: f64, %o: f64):
    %sq = arith.mulf %v, %u : f64
    %acc = arith.addf %o, %sq : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  return %l3 : tensor<f64>
}

// pad, extract_slice (strided and rank-reducing), insert_slice,
// expand_shape, collapse_shape, concat; %x is used several times.
func.func @movement(%x: tensor<4x6xf64> {tofu.weight}, %y: tensor<2x3xf64> {tofu.weight}) -> tensor<f64> {
  %z = arith.constant 0.0 : f64
  %pad = tensor.pad %x low[1, 0] high[0, 2] {
  ^bb0(%i: index, %j: index):
    tensor.yield %z : f64
  } : tensor<4x6xf64> to tensor<5x8xf64>
  %s = tensor.extract_slice %pad[1, 1] [2, 3] [2, 2] : tensor<5x8xf64> to tensor<2x3xf64>
  %row = tensor.extract_slice %x[2, 0] [1, 6] [1, 1] : tensor<4x6xf64> to tensor<6xf64>
  %ins = tensor.insert_slice %y into %x[1, 2] [2, 3] [1, 1] : tensor<2x3xf64> into tensor<4x6xf64>
  %ex = tensor.expand_shape %ins [[0], [1, 2]] output_shape [4, 2, 3] : tensor<4x6xf64> into tensor<4x2x3xf64>
  %co = tensor.collapse_shape %ex [[0, 1], [2]] : tensor<4x2x3xf64> into tensor<8x3xf64>
  %cat = tensor.concat dim(0) %s, %co : (tensor<2x3xf64>, tensor<8x3xf64>) -> tensor<10x3xf64>
  %e0 = tensor.empty() : tensor<f64>
  %i0 = linalg.fill ins(%z : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %l1 = linalg.generic {indexing_maps = [#id2, #sum2], iterator_types = ["reduction", "reduction"]}
      ins(%cat : tensor<10x3xf64>) outs(%i0 : tensor<f64>) {
  ^bb0(%v: f64, %o: f64):
    %sq = arith.mulf %v, %v : f64
    %acc = arith.addf %o, %sq : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  %l2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%row : tensor<6xf64>) outs(%l1 : tensor<f64>) {
  ^bb0(%v: f64, %o: f64):
    %t = math.tanh %v : f64
    %acc = arith.addf %o, %t : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  return %l2 : tensor<f64>
}

// linalg.reduce with max and add combiners, a generic max reduction, and an
// operand passed twice (x * x).
func.func @reductions(%x: tensor<3x4xf64> {tofu.weight}) -> tensor<f64> {
  %z = arith.constant 0.0 : f64
  %ninf = arith.constant -1.0e30 : f64
  %e3 = tensor.empty() : tensor<3xf64>
  %m0 = linalg.fill ins(%ninf : f64) outs(%e3 : tensor<3xf64>) -> tensor<3xf64>
  %max = linalg.reduce ins(%x : tensor<3x4xf64>) outs(%m0 : tensor<3xf64>) dimensions = [1]
    (%in: f64, %acc: f64) {
      %r = arith.maximumf %in, %acc : f64
      linalg.yield %r : f64
    }
  %s0 = linalg.fill ins(%z : f64) outs(%e3 : tensor<3xf64>) -> tensor<3xf64>
  %sum = linalg.reduce ins(%x : tensor<3x4xf64>) outs(%s0 : tensor<3xf64>) dimensions = [1]
    (%in: f64, %acc: f64) {
      %r = arith.addf %in, %acc : f64
      linalg.yield %r : f64
    }
  %e34 = tensor.empty() : tensor<3x4xf64>
  %sq = linalg.generic {indexing_maps = [#id2, #id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%x, %x : tensor<3x4xf64>, tensor<3x4xf64>) outs(%e34 : tensor<3x4xf64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %p = arith.mulf %u, %v : f64
    linalg.yield %p : f64
  } -> tensor<3x4xf64>
  %e0 = tensor.empty() : tensor<f64>
  %i0 = linalg.fill ins(%ninf : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %gmax = linalg.generic {indexing_maps = [#id2, #sum2], iterator_types = ["reduction", "reduction"]}
      ins(%sq : tensor<3x4xf64>) outs(%i0 : tensor<f64>) {
  ^bb0(%v: f64, %o: f64):
    %r = arith.maximumf %o, %v : f64
    linalg.yield %r : f64
  } -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]}
      ins(%max, %sum : tensor<3xf64>, tensor<3xf64>) outs(%gmax : tensor<f64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %p = arith.mulf %u, %v : f64
    %acc = arith.addf %o, %p : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}

// Scalars from weights: a 0-d temperature extracted and captured by two
// bodies (its gradient is accumulated), an element of %g passed as a scalar
// operand, and another element of %g as the value of a linalg.fill.
func.func @scalars(%t: tensor<f64> {tofu.weight}, %g: tensor<3xf64> {tofu.weight},
                   %w: tensor<4x4xf64> {tofu.weight}) -> tensor<f64> {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %z = arith.constant 0.0 : f64
  %temp = tensor.extract %t[] : tensor<f64>
  %scale = tensor.extract %g[%c1] : tensor<3xf64>
  %fillv = tensor.extract %g[%c2] : tensor<3xf64>
  %e = tensor.empty() : tensor<4x4xf64>
  %a = linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%w : tensor<4x4xf64>) outs(%e : tensor<4x4xf64>) {
  ^bb0(%x: f64, %o: f64):
    %m = arith.mulf %x, %temp : f64
    %th = math.tanh %m : f64
    linalg.yield %th : f64
  } -> tensor<4x4xf64>
  %b = linalg.generic {indexing_maps = [#id2, affine_map<(d0, d1) -> ()>, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a, %scale : tensor<4x4xf64>, f64) outs(%e : tensor<4x4xf64>) {
  ^bb0(%x: f64, %s: f64, %o: f64):
    %m = arith.mulf %x, %s : f64
    %m2 = arith.mulf %m, %temp : f64
    linalg.yield %m2 : f64
  } -> tensor<4x4xf64>
  %f = linalg.fill ins(%fillv : f64) outs(%e : tensor<4x4xf64>) -> tensor<4x4xf64>
  %e0 = tensor.empty() : tensor<f64>
  %i0 = linalg.fill ins(%z : f64) outs(%e0 : tensor<f64>) -> tensor<f64>
  %loss = linalg.generic {indexing_maps = [#id2, #id2, #sum2], iterator_types = ["reduction", "reduction"]}
      ins(%b, %f : tensor<4x4xf64>, tensor<4x4xf64>) outs(%i0 : tensor<f64>) {
  ^bb0(%u: f64, %v: f64, %o: f64):
    %p = arith.mulf %u, %v : f64
    %q = arith.mulf %p, %v : f64
    %r = arith.addf %q, %u : f64
    %acc = arith.addf %o, %r : f64
    linalg.yield %acc : f64
  } -> tensor<f64>
  return %loss : tensor<f64>
}
