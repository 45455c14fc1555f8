// The two-layer MLP of models/torch-mlir-style/mlp.mlir with
// F.cross_entropy(logits, target) appended as torch-mlir's TorchToLinalg
// emits it: aten._log_softmax as max, subtract, exp-sum and log generics,
// and aten.nll_loss_forward as a generic over the batch that reads the
// log-probabilities with tensor.extract at each row's i64 class id, skips
// ignore_index (-100), and divides the sum by the number of counted rows.
// Batch 4, 6 features, 8 hidden units, 3 classes.

#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> (d1)>
#mapr = affine_map<(d0, d1) -> (d0, 0)>
#map1d = affine_map<(d0) -> (d0)>
#map0 = affine_map<(d0) -> ()>
#mapss = affine_map<() -> ()>
module attributes {torch.debug_module_name = "MLP"} {
  func.func @forward(%x: tensor<4x6xf32>, %w0: tensor<8x6xf32>, %b0: tensor<8xf32>,
                     %w1: tensor<3x8xf32>, %b1: tensor<3xf32>, %target: tensor<4xi64>) -> tensor<f32> {
    %cst = arith.constant 0.000000e+00 : f32
    %0 = tensor.empty() : tensor<6x8xf32>
    %transposed = linalg.transpose ins(%w0 : tensor<8x6xf32>) outs(%0 : tensor<6x8xf32>) permutation = [1, 0]
    %1 = tensor.empty() : tensor<4x8xf32>
    %2 = linalg.fill ins(%cst : f32) outs(%1 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %3 = linalg.matmul ins(%x, %transposed : tensor<4x6xf32>, tensor<6x8xf32>) outs(%2 : tensor<4x8xf32>) -> tensor<4x8xf32>
    %4 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%3, %b0 : tensor<4x8xf32>, tensor<8xf32>) outs(%1 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %20 = arith.addf %in, %in_0 : f32
      linalg.yield %20 : f32
    } -> tensor<4x8xf32>
    %5 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel", "parallel"]} ins(%4 : tensor<4x8xf32>) outs(%1 : tensor<4x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %20 = arith.cmpf ugt, %in, %cst : f32
      %21 = arith.select %20, %in, %cst : f32
      linalg.yield %21 : f32
    } -> tensor<4x8xf32>
    %6 = tensor.empty() : tensor<8x3xf32>
    %transposed_1 = linalg.transpose ins(%w1 : tensor<3x8xf32>) outs(%6 : tensor<8x3xf32>) permutation = [1, 0]
    %7 = tensor.empty() : tensor<4x3xf32>
    %8 = linalg.fill ins(%cst : f32) outs(%7 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %9 = linalg.matmul ins(%5, %transposed_1 : tensor<4x8xf32>, tensor<8x3xf32>) outs(%8 : tensor<4x3xf32>) -> tensor<4x3xf32>
    %10 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%9, %b1 : tensor<4x3xf32>, tensor<3xf32>) outs(%7 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %in_0: f32, %out: f32):
      %20 = arith.addf %in, %in_0 : f32
      linalg.yield %20 : f32
    } -> tensor<4x3xf32>
    // F.cross_entropy(logits, target) = nll_loss(log_softmax(logits)), as
    // torch-mlir's TorchToLinalg emits aten._log_softmax and
    // aten.nll_loss_forward (ignore_index -100, mean over the counted rows).
    %ninf = arith.constant -3.40282347E+38 : f32
    %c_1 = arith.constant 1.000000e+00 : f32
    %ign = arith.constant -100 : i64
    %er = tensor.empty() : tensor<4x1xf32>
    %mi = linalg.fill ins(%ninf : f32) outs(%er : tensor<4x1xf32>) -> tensor<4x1xf32>
    %mx = linalg.generic {indexing_maps = [#map, #mapr], iterator_types = ["parallel", "reduction"]} ins(%10 : tensor<4x3xf32>) outs(%mi : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.maximumf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<4x1xf32>
    %e43 = tensor.empty() : tensor<4x3xf32>
    %sh = linalg.generic {indexing_maps = [#map, #mapr, #map], iterator_types = ["parallel", "parallel"]} ins(%10, %mx : tensor<4x3xf32>, tensor<4x1xf32>) outs(%e43 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %r = arith.subf %in, %m : f32
      linalg.yield %r : f32
    } -> tensor<4x3xf32>
    %zr = linalg.fill ins(%cst : f32) outs(%er : tensor<4x1xf32>) -> tensor<4x1xf32>
    %se = linalg.generic {indexing_maps = [#map, #mapr], iterator_types = ["parallel", "reduction"]} ins(%sh : tensor<4x3xf32>) outs(%zr : tensor<4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %e = math.exp %in : f32
      %r = arith.addf %e, %out : f32
      linalg.yield %r : f32
    } -> tensor<4x1xf32>
    %logp = linalg.generic {indexing_maps = [#map, #mapr, #map], iterator_types = ["parallel", "parallel"]} ins(%sh, %se : tensor<4x3xf32>, tensor<4x1xf32>) outs(%e43 : tensor<4x3xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %l = math.log %s : f32
      %r = arith.subf %in, %l : f32
      linalg.yield %r : f32
    } -> tensor<4x3xf32>
    %e4 = tensor.empty() : tensor<4xf32>
    %picked = linalg.generic {indexing_maps = [#map1d, #map1d], iterator_types = ["parallel"]} ins(%target : tensor<4xi64>) outs(%e4 : tensor<4xf32>) {
    ^bb0(%t: i64, %out: f32):
      %b = linalg.index 0 : index
      %ti = arith.index_cast %t : i64 to index
      %keep = arith.cmpi ne, %t, %ign : i64
      %v = tensor.extract %logp[%b, %ti] : tensor<4x3xf32>
      %n = arith.negf %v : f32
      %r = arith.select %keep, %n, %cst : f32
      linalg.yield %r : f32
    } -> tensor<4xf32>
    %e0 = tensor.empty() : tensor<f32>
    %z0 = linalg.fill ins(%cst : f32) outs(%e0 : tensor<f32>) -> tensor<f32>
    %tot = linalg.generic {indexing_maps = [#map1d, #map0], iterator_types = ["reduction"]} ins(%picked : tensor<4xf32>) outs(%z0 : tensor<f32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %cnt = linalg.generic {indexing_maps = [#map1d, #map0], iterator_types = ["reduction"]} ins(%target : tensor<4xi64>) outs(%z0 : tensor<f32>) {
    ^bb0(%t: i64, %out: f32):
      %keep = arith.cmpi ne, %t, %ign : i64
      %one = arith.select %keep, %c_1, %cst : f32
      %r = arith.addf %one, %out : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    %loss = linalg.generic {indexing_maps = [#mapss, #mapss, #mapss], iterator_types = []} ins(%tot, %cnt : tensor<f32>, tensor<f32>) outs(%e0 : tensor<f32>) {
    ^bb0(%a: f32, %c: f32, %out: f32):
      %r = arith.divf %a, %c : f32
      linalg.yield %r : f32
    } -> tensor<f32>
    return %loss : tensor<f32>
  }
}
