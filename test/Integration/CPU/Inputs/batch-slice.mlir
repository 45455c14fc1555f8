// Products batched over time steps and the batch, as an LSTM's input
// products are, on a slice of the batch (what a rank of a plan that cuts
// the batch reads): the time steps and the batch are the M group, which the
// slice's strides do not make one dimension. The call reads a contiguous
// copy of the slice (library-calls.test): in @product, whose argument's
// strides only the run time knows, where they rule the call on the view
// out; in @main, where the types do.
//
// x[t][b][e] = t + b + e and W[e][n] = e - n; A = x[:, 1:3, :], so
// C[0][0][0] = sum over e < 5 of (1 + e) e = 10 + 30 = 40.
func.func private @printMemrefF64(memref<*xf64>)

#a = affine_map<(t, b, n, e) -> (t, b, e)>
#w = affine_map<(t, b, n, e) -> (e, n)>
#c = affine_map<(t, b, n, e) -> (t, b, n)>

func.func @product(%a: tensor<3x2x5xf64>, %w: tensor<5x6xf64>) -> tensor<3x2x6xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<3x2x6xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<3x2x6xf64>) -> tensor<3x2x6xf64>
  %c = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<3x2x5xf64>, tensor<5x6xf64>) outs(%z : tensor<3x2x6xf64>) {
  ^bb0(%x: f64, %y: f64, %o: f64):
    %p = arith.mulf %x, %y : f64
    %s = arith.addf %o, %p : f64
    linalg.yield %s : f64
  } -> tensor<3x2x6xf64>
  return %c : tensor<3x2x6xf64>
}

func.func @main() {
  %ex = tensor.empty() : tensor<3x4x5xf64>
  %x = linalg.generic {indexing_maps = [affine_map<(t, b, e) -> (t, b, e)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%ex : tensor<3x4x5xf64>) {
  ^bb0(%o: f64):
    %t = linalg.index 0 : index
    %b = linalg.index 1 : index
    %e = linalg.index 2 : index
    %tb = arith.addi %t, %b : index
    %s = arith.addi %tb, %e : index
    %i = arith.index_cast %s : index to i64
    %f = arith.sitofp %i : i64 to f64
    linalg.yield %f : f64
  } -> tensor<3x4x5xf64>
  %ew = tensor.empty() : tensor<5x6xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(e, n) -> (e, n)>], iterator_types = ["parallel", "parallel"]} outs(%ew : tensor<5x6xf64>) {
  ^bb0(%o: f64):
    %e = linalg.index 0 : index
    %n = linalg.index 1 : index
    %s = arith.subi %e, %n : index
    %i = arith.index_cast %s : index to i64
    %f = arith.sitofp %i : i64 to f64
    linalg.yield %f : f64
  } -> tensor<5x6xf64>
  %a = tensor.extract_slice %x[0, 1, 0] [3, 2, 5] [1, 1, 1] : tensor<3x4x5xf64> to tensor<3x2x5xf64>
  %c = func.call @product(%a, %w) : (tensor<3x2x5xf64>, tensor<5x6xf64>) -> tensor<3x2x6xf64>
  %m = bufferization.to_buffer %c : tensor<3x2x6xf64> to memref<3x2x6xf64, strided<[?, ?, ?], offset: ?>>
  %u = memref.cast %m : memref<3x2x6xf64, strided<[?, ?, ?], offset: ?>> to memref<*xf64>
  func.call @printMemrefF64(%u) : (memref<*xf64>) -> ()
  // The same product inline: the slice's strides are static.
  %zero = arith.constant 0.0 : f64
  %e2 = tensor.empty() : tensor<3x2x6xf64>
  %z2 = linalg.fill ins(%zero : f64) outs(%e2 : tensor<3x2x6xf64>) -> tensor<3x2x6xf64>
  %c2 = linalg.generic {indexing_maps = [#a, #w, #c], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%a, %w : tensor<3x2x5xf64>, tensor<5x6xf64>) outs(%z2 : tensor<3x2x6xf64>) {
  ^bb0(%xa: f64, %wa: f64, %o: f64):
    %p = arith.mulf %xa, %wa : f64
    %s = arith.addf %o, %p : f64
    linalg.yield %s : f64
  } -> tensor<3x2x6xf64>
  %m2 = bufferization.to_buffer %c2 : tensor<3x2x6xf64> to memref<3x2x6xf64, strided<[?, ?, ?], offset: ?>>
  %u2 = memref.cast %m2 : memref<3x2x6xf64, strided<[?, ?, ?], offset: ?>> to memref<*xf64>
  func.call @printMemrefF64(%u2) : (memref<*xf64>) -> ()
  return
}
