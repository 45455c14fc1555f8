// A one-layer LSTM written by hand with its time loop as an scf.for whose
// iter_args carry the hidden and cell states, as a user writes it (or as
// IREE and buddy-mlir keep a recurrence). Each step reads x[t] with a
// rank-reducing slice, computes the four gates with two matmuls and a bias,
// and updates c and h; the model returns the last hidden state.
// tofu-unroll-loops turns it into straight-line code. Sequence 4, batch 8,
// input 8, hidden 8 (gates 32).

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
module {
  func.func @forward(%x: tensor<4x8x8xf32>, %wx: tensor<8x32xf32>,
                     %wh: tensor<8x32xf32>, %b: tensor<32xf32>) -> tensor<8x8xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c4 = arith.constant 4 : index
    %zero = arith.constant 0.000000e+00 : f32
    %e = tensor.empty() : tensor<8x8xf32>
    %h0 = linalg.fill ins(%zero : f32) outs(%e : tensor<8x8xf32>) -> tensor<8x8xf32>
    %r:2 = scf.for %t = %c0 to %c4 step %c1 iter_args(%h = %h0, %c = %h0) -> (tensor<8x8xf32>, tensor<8x8xf32>) {
      %xt = tensor.extract_slice %x[%t, 0, 0] [1, 8, 8] [1, 1, 1] : tensor<4x8x8xf32> to tensor<8x8xf32>
      %eg = tensor.empty() : tensor<8x32xf32>
      %zg = linalg.fill ins(%zero : f32) outs(%eg : tensor<8x32xf32>) -> tensor<8x32xf32>
      %gx = linalg.matmul ins(%xt, %wx : tensor<8x8xf32>, tensor<8x32xf32>) outs(%zg : tensor<8x32xf32>) -> tensor<8x32xf32>
      %gh = linalg.matmul ins(%h, %wh : tensor<8x8xf32>, tensor<8x32xf32>) outs(%gx : tensor<8x32xf32>) -> tensor<8x32xf32>
      %g = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%gh, %b : tensor<8x32xf32>, tensor<32xf32>) outs(%eg : tensor<8x32xf32>) {
      ^bb0(%in: f32, %bias: f32, %out: f32):
        %s = arith.addf %in, %bias : f32
        linalg.yield %s : f32
      } -> tensor<8x32xf32>
      %gi = tensor.extract_slice %g[0, 0] [8, 8] [1, 1] : tensor<8x32xf32> to tensor<8x8xf32>
      %gf = tensor.extract_slice %g[0, 8] [8, 8] [1, 1] : tensor<8x32xf32> to tensor<8x8xf32>
      %gg = tensor.extract_slice %g[0, 16] [8, 8] [1, 1] : tensor<8x32xf32> to tensor<8x8xf32>
      %go = tensor.extract_slice %g[0, 24] [8, 8] [1, 1] : tensor<8x32xf32> to tensor<8x8xf32>
      // c' = sigmoid(f) * c + sigmoid(i) * tanh(g)
      %cn = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%gi, %gf, %gg, %c : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
      ^bb0(%i: f32, %f: f32, %gv: f32, %cv: f32, %out: f32):
        %one = arith.constant 1.000000e+00 : f32
        %ni = arith.negf %i : f32
        %ei = math.exp %ni : f32
        %di = arith.addf %one, %ei : f32
        %si = arith.divf %one, %di : f32
        %nf = arith.negf %f : f32
        %ef = math.exp %nf : f32
        %df = arith.addf %one, %ef : f32
        %sf = arith.divf %one, %df : f32
        %tg = math.tanh %gv : f32
        %keep = arith.mulf %sf, %cv : f32
        %add = arith.mulf %si, %tg : f32
        %res = arith.addf %keep, %add : f32
        linalg.yield %res : f32
      } -> tensor<8x8xf32>
      // h' = sigmoid(o) * tanh(c')
      %hn = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%go, %cn : tensor<8x8xf32>, tensor<8x8xf32>) outs(%e : tensor<8x8xf32>) {
      ^bb0(%o: f32, %cv: f32, %out: f32):
        %one = arith.constant 1.000000e+00 : f32
        %no = arith.negf %o : f32
        %eo = math.exp %no : f32
        %do = arith.addf %one, %eo : f32
        %so = arith.divf %one, %do : f32
        %tc = math.tanh %cv : f32
        %res = arith.mulf %so, %tc : f32
        linalg.yield %res : f32
      } -> tensor<8x8xf32>
      scf.yield %hn, %cn : tensor<8x8xf32>, tensor<8x8xf32>
    }
    return %r#0 : tensor<8x8xf32>
  }
}
