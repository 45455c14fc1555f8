// A product of a view with a step (every other column of %x): the callee's
// argument has a strided layout whose strides only the run time knows, so
// the lowering emits a GEMM call, and the view that reaches the runtime has
// no unit-stride dimension (library-calls.test). The runtime multiplies
// contiguous copies; it used to stop the step.
//
// A[i][k] = x[i][1 + 2k] = i + 1 + 2k and W[k][j] = k - j, so
// C[0][0] = sum over k < 8 of (1 + 2k) k = 28 + 2 * 140 = 308.
func.func private @printMemrefF64(memref<*xf64>)

// The product of a view whose K stride is 2 (every other column of %x).
func.func @product(%a: tensor<4x8xf64>, %b: tensor<8x3xf64>) -> tensor<4x3xf64> {
  %zero = arith.constant 0.0 : f64
  %e = tensor.empty() : tensor<4x3xf64>
  %z = linalg.fill ins(%zero : f64) outs(%e : tensor<4x3xf64>) -> tensor<4x3xf64>
  %c = linalg.matmul ins(%a, %b : tensor<4x8xf64>, tensor<8x3xf64>) outs(%z : tensor<4x3xf64>) -> tensor<4x3xf64>
  return %c : tensor<4x3xf64>
}

func.func @main() {
  %ex = tensor.empty() : tensor<4x16xf64>
  %x = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%ex : tensor<4x16xf64>) {
  ^bb0(%o: f64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.addi %i, %j : index
    %t = arith.index_cast %s : index to i64
    %f = arith.sitofp %t : i64 to f64
    linalg.yield %f : f64
  } -> tensor<4x16xf64>
  %ew = tensor.empty() : tensor<8x3xf64>
  %w = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>], iterator_types = ["parallel", "parallel"]} outs(%ew : tensor<8x3xf64>) {
  ^bb0(%o: f64):
    %i = linalg.index 0 : index
    %j = linalg.index 1 : index
    %s = arith.subi %i, %j : index
    %t = arith.index_cast %s : index to i64
    %f = arith.sitofp %t : i64 to f64
    linalg.yield %f : f64
  } -> tensor<8x3xf64>
  %a = tensor.extract_slice %x[0, 1] [4, 8] [1, 2] : tensor<4x16xf64> to tensor<4x8xf64>
  %c = func.call @product(%a, %w) : (tensor<4x8xf64>, tensor<8x3xf64>) -> tensor<4x3xf64>
  %m = bufferization.to_buffer %c : tensor<4x3xf64> to memref<4x3xf64, strided<[?, ?], offset: ?>>
  %u = memref.cast %m : memref<4x3xf64, strided<[?, ?], offset: ?>> to memref<*xf64>
  func.call @printMemrefF64(%u) : (memref<*xf64>) -> ()
  return
}
