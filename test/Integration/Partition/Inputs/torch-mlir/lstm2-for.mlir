// A two-layer LSTM with PyTorch's parameter layout (weight_ih [4H, I],
// weight_hh [4H, H], two biases, gates i, f, g, o), its time loop written as
// an scf.for whose iter_args carry both layers' hidden and cell states,
// and a linear head on the last hidden state of the top layer. The weights
// are transposed once, before the loop, as torch-mlir emits them; each step
// reads x[t] with a rank-reducing slice and cuts the four gates out of the
// pre-activations with extract_slice. Returns predictions. Sequence 3,
// batch 4, input 4, hidden 4, 2 outputs.

#id = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d1)>
module {
  func.func @forward(%x: tensor<3x4x4xf32>,
                     %w_ih0: tensor<16x4xf32>, %w_hh0: tensor<16x4xf32>,
                     %b_ih0: tensor<16xf32>, %b_hh0: tensor<16xf32>,
                     %w_ih1: tensor<16x4xf32>, %w_hh1: tensor<16x4xf32>,
                     %b_ih1: tensor<16xf32>, %b_hh1: tensor<16xf32>,
                     %fc_w: tensor<2x4xf32>, %fc_b: tensor<2xf32>) -> tensor<4x2xf32> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    %zero = arith.constant 0.000000e+00 : f32
    %one = arith.constant 1.000000e+00 : f32
    %et = tensor.empty() : tensor<4x16xf32>
    %wi0 = linalg.transpose ins(%w_ih0 : tensor<16x4xf32>) outs(%et : tensor<4x16xf32>) permutation = [1, 0]
    %wh0 = linalg.transpose ins(%w_hh0 : tensor<16x4xf32>) outs(%et : tensor<4x16xf32>) permutation = [1, 0]
    %wi1 = linalg.transpose ins(%w_ih1 : tensor<16x4xf32>) outs(%et : tensor<4x16xf32>) permutation = [1, 0]
    %wh1 = linalg.transpose ins(%w_hh1 : tensor<16x4xf32>) outs(%et : tensor<4x16xf32>) permutation = [1, 0]
    %e = tensor.empty() : tensor<4x4xf32>
    %s0 = linalg.fill ins(%zero : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
    %eg = tensor.empty() : tensor<4x16xf32>
    %zg = linalg.fill ins(%zero : f32) outs(%eg : tensor<4x16xf32>) -> tensor<4x16xf32>
    %r:4 = scf.for %t = %c0 to %c3 step %c1 iter_args(%h0 = %s0, %cc0 = %s0, %h1 = %s0, %cc1 = %s0) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) {
      %xt = tensor.extract_slice %x[%t, 0, 0] [1, 4, 4] [1, 1, 1] : tensor<3x4x4xf32> to tensor<4x4xf32>
      // Layer 0.
      %gx0 = linalg.matmul ins(%xt, %wi0 : tensor<4x4xf32>, tensor<4x16xf32>) outs(%zg : tensor<4x16xf32>) -> tensor<4x16xf32>
      %gh0 = linalg.matmul ins(%h0, %wh0 : tensor<4x4xf32>, tensor<4x16xf32>) outs(%zg : tensor<4x16xf32>) -> tensor<4x16xf32>
      %g0 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%gx0, %gh0, %b_ih0, %b_hh0 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%eg : tensor<4x16xf32>) {
      ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %o: f32):
        %s1 = arith.addf %a, %c : f32
        %s2 = arith.addf %b, %d : f32
        %s = arith.addf %s1, %s2 : f32
        linalg.yield %s : f32
      } -> tensor<4x16xf32>
      %i0 = tensor.extract_slice %g0[0, 0] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
      %f0 = tensor.extract_slice %g0[0, 4] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
      %gg0 = tensor.extract_slice %g0[0, 8] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
      %o0 = tensor.extract_slice %g0[0, 12] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
      %nc0 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i0, %f0, %gg0, %cc0 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
      ^bb0(%ii: f32, %ff: f32, %gv: f32, %cv: f32, %o: f32):
        %ni = arith.negf %ii : f32
        %ei = math.exp %ni : f32
        %di = arith.addf %ei, %one : f32
        %si = arith.divf %one, %di : f32
        %nf = arith.negf %ff : f32
        %ef = math.exp %nf : f32
        %df = arith.addf %ef, %one : f32
        %sf = arith.divf %one, %df : f32
        %tg = math.tanh %gv : f32
        %fc = arith.mulf %sf, %cv : f32
        %ig = arith.mulf %si, %tg : f32
        %c = arith.addf %fc, %ig : f32
        linalg.yield %c : f32
      } -> tensor<4x4xf32>
      %nh0 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%o0, %nc0 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
      ^bb0(%ov: f32, %cv: f32, %o: f32):
        %no = arith.negf %ov : f32
        %eo = math.exp %no : f32
        %do = arith.addf %eo, %one : f32
        %so = arith.divf %one, %do : f32
        %tc = math.tanh %cv : f32
        %h = arith.mulf %so, %tc : f32
        linalg.yield %h : f32
      } -> tensor<4x4xf32>
      // Layer 1 reads layer 0's new hidden state.
      %gx1 = linalg.matmul ins(%nh0, %wi1 : tensor<4x4xf32>, tensor<4x16xf32>) outs(%zg : tensor<4x16xf32>) -> tensor<4x16xf32>
      %gh1 = linalg.matmul ins(%h1, %wh1 : tensor<4x4xf32>, tensor<4x16xf32>) outs(%zg : tensor<4x16xf32>) -> tensor<4x16xf32>
      %g1 = linalg.generic {indexing_maps = [#id, #id, #row, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%gx1, %gh1, %b_ih1, %b_hh1 : tensor<4x16xf32>, tensor<4x16xf32>, tensor<16xf32>, tensor<16xf32>) outs(%eg : tensor<4x16xf32>) {
      ^bb0(%a: f32, %b: f32, %c: f32, %d: f32, %o: f32):
        %s1 = arith.addf %a, %c : f32
        %s2 = arith.addf %b, %d : f32
        %s = arith.addf %s1, %s2 : f32
        linalg.yield %s : f32
      } -> tensor<4x16xf32>
      %i1 = tensor.extract_slice %g1[0, 0] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
      %f1 = tensor.extract_slice %g1[0, 4] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
      %gg1 = tensor.extract_slice %g1[0, 8] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
      %o1 = tensor.extract_slice %g1[0, 12] [4, 4] [1, 1] : tensor<4x16xf32> to tensor<4x4xf32>
      %nc1 = linalg.generic {indexing_maps = [#id, #id, #id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%i1, %f1, %gg1, %cc1 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
      ^bb0(%ii: f32, %ff: f32, %gv: f32, %cv: f32, %o: f32):
        %ni = arith.negf %ii : f32
        %ei = math.exp %ni : f32
        %di = arith.addf %ei, %one : f32
        %si = arith.divf %one, %di : f32
        %nf = arith.negf %ff : f32
        %ef = math.exp %nf : f32
        %df = arith.addf %ef, %one : f32
        %sf = arith.divf %one, %df : f32
        %tg = math.tanh %gv : f32
        %fc = arith.mulf %sf, %cv : f32
        %ig = arith.mulf %si, %tg : f32
        %c = arith.addf %fc, %ig : f32
        linalg.yield %c : f32
      } -> tensor<4x4xf32>
      %nh1 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]} ins(%o1, %nc1 : tensor<4x4xf32>, tensor<4x4xf32>) outs(%e : tensor<4x4xf32>) {
      ^bb0(%ov: f32, %cv: f32, %o: f32):
        %no = arith.negf %ov : f32
        %eo = math.exp %no : f32
        %do = arith.addf %eo, %one : f32
        %so = arith.divf %one, %do : f32
        %tc = math.tanh %cv : f32
        %h = arith.mulf %so, %tc : f32
        linalg.yield %h : f32
      } -> tensor<4x4xf32>
      scf.yield %nh0, %nc0, %nh1, %nc1 : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
    }
    // Head: h W^T + b.
    %ew = tensor.empty() : tensor<4x2xf32>
    %fwt = linalg.transpose ins(%fc_w : tensor<2x4xf32>) outs(%ew : tensor<4x2xf32>) permutation = [1, 0]
    %eo = tensor.empty() : tensor<4x2xf32>
    %zo = linalg.fill ins(%zero : f32) outs(%eo : tensor<4x2xf32>) -> tensor<4x2xf32>
    %y0 = linalg.matmul ins(%r#2, %fwt : tensor<4x4xf32>, tensor<4x2xf32>) outs(%zo : tensor<4x2xf32>) -> tensor<4x2xf32>
    %y = linalg.generic {indexing_maps = [#id, #row, #id], iterator_types = ["parallel", "parallel"]} ins(%y0, %fc_b : tensor<4x2xf32>, tensor<2xf32>) outs(%eo : tensor<4x2xf32>) {
    ^bb0(%a: f32, %b: f32, %o: f32):
      %s = arith.addf %a, %b : f32
      linalg.yield %s : f32
    } -> tensor<4x2xf32>
    return %y : tensor<4x2xf32>
  }
}
