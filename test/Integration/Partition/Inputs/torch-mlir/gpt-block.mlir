// A GPT-2 style decoder (token and position embeddings, one pre-LayerNorm
// block with causal self-attention and a tanh-GELU MLP, a final LayerNorm
// and an untied LM head), in the linalg-on-tensors form torch-mlir emits:
// the token embedding is a linalg.generic whose body reads the table with
// tensor.extract at an id from the input, linear layers collapse the batch,
// transpose the weight and add a broadcast bias, heads are split with
// expand_shape and permuted with linalg.generic, attention uses
// batch_matmul over (batch x heads), softmax is max/sub/exp/sum/div and
// LayerNorm is mean, variance and rsqrt. Returns logits. Batch 2, sequence
// 4, hidden 8, 2 heads of 4, MLP 16, vocabulary 16.

#e2 = affine_map<(d0, d1, d2) -> (d0, d1)>
#e3 = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#pos = affine_map<(d0, d1, d2) -> (d1, d2)>
#r3 = affine_map<(d0, d1, d2) -> (d0, d1, 0)>
#c3 = affine_map<(d0, d1, d2) -> (d2)>
#m2 = affine_map<(d0, d1) -> (d0, d1)>
#b2 = affine_map<(d0, d1) -> (d1)>
#m4 = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
#p4 = affine_map<(d0, d1, d2, d3) -> (d0, d2, d1, d3)>
module attributes {torch.debug_module_name = "GPTBlock"} {
  func.func @forward(%ids: tensor<2x4xi64>, %wte: tensor<16x8xf32>, %wpe: tensor<4x8xf32>,
                     %ln1_w: tensor<8xf32>, %ln1_b: tensor<8xf32>,
                     %attn_w: tensor<24x8xf32>, %attn_b: tensor<24xf32>,
                     %proj_w: tensor<8x8xf32>, %proj_b: tensor<8xf32>,
                     %ln2_w: tensor<8xf32>, %ln2_b: tensor<8xf32>,
                     %fc_w: tensor<16x8xf32>, %fc_b: tensor<16xf32>,
                     %out_w: tensor<8x16xf32>, %out_b: tensor<8xf32>,
                     %lnf_w: tensor<8xf32>, %lnf_b: tensor<8xf32>,
                     %head_w: tensor<16x8xf32>) -> tensor<2x4x16xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %ninf = arith.constant -3.40282347E+38 : f32
    %n8 = arith.constant 8.000000e+00 : f32
    %eps = arith.constant 9.99999974E-6 : f32
    %scale = arith.constant 5.000000e-01 : f32
    %half = arith.constant 5.000000e-01 : f32
    %one = arith.constant 1.000000e+00 : f32
    %c0044 = arith.constant 4.471500e-02 : f32
    %c0797 = arith.constant 0.797884583 : f32
    %e3 = tensor.empty() : tensor<2x4x8xf32>
    %er = tensor.empty() : tensor<2x4x1xf32>
    %zr = linalg.fill ins(%cst : f32) outs(%er : tensor<2x4x1xf32>) -> tensor<2x4x1xf32>
    // Embeddings: wte[ids[b, s], h] + wpe[s, h].
    %tok = linalg.generic {indexing_maps = [#e2, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ids : tensor<2x4xi64>) outs(%e3 : tensor<2x4x8xf32>) {
    ^bb0(%in: i64, %out: f32):
      %i = arith.index_cast %in : i64 to index
      %h = linalg.index 2 : index
      %v = tensor.extract %wte[%i, %h] : tensor<16x8xf32>
      linalg.yield %v : f32
    } -> tensor<2x4x8xf32>
    %x0 = linalg.generic {indexing_maps = [#e3, #pos, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%tok, %wpe : tensor<2x4x8xf32>, tensor<4x8xf32>) outs(%e3 : tensor<2x4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x4x8xf32>
    // LayerNorm 1.
    %s1 = linalg.generic {indexing_maps = [#e3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x0 : tensor<2x4x8xf32>) outs(%zr : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %mu1 = linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s1 : tensor<2x4x1xf32>) outs(%er : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.divf %in, %n8 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %v1 = linalg.generic {indexing_maps = [#e3, #r3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x0, %mu1 : tensor<2x4x8xf32>, tensor<2x4x1xf32>) outs(%zr : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %d = arith.subf %in, %m : f32
      %q = arith.mulf %d, %d : f32
      %r = arith.addf %q, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %h1 = linalg.generic {indexing_maps = [#e3, #r3, #r3, #c3, #c3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x0, %mu1, %v1, %ln1_w, %ln1_b : tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<2x4x8xf32>) {
    ^bb0(%in: f32, %m: f32, %v: f32, %w: f32, %b: f32, %out: f32):
      %var = arith.divf %v, %n8 : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %d = arith.subf %in, %m : f32
      %nrm = arith.mulf %d, %rs : f32
      %sc = arith.mulf %nrm, %w : f32
      %r = arith.addf %sc, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x4x8xf32>
    // QKV projection: (x W^T + b), split into q, k, v.
    %h1c = tensor.collapse_shape %h1 [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
    %eat = tensor.empty() : tensor<8x24xf32>
    %awt = linalg.transpose ins(%attn_w : tensor<24x8xf32>) outs(%eat : tensor<8x24xf32>) permutation = [1, 0]
    %za = linalg.fill ins(%cst : f32) outs(%eat : tensor<8x24xf32>) -> tensor<8x24xf32>
    %qkv0 = linalg.matmul ins(%h1c, %awt : tensor<8x8xf32>, tensor<8x24xf32>) outs(%za : tensor<8x24xf32>) -> tensor<8x24xf32>
    %qkv1 = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]} ins(%qkv0, %attn_b : tensor<8x24xf32>, tensor<24xf32>) outs(%eat : tensor<8x24xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<8x24xf32>
    %qkv = tensor.expand_shape %qkv1 [[0, 1], [2]] output_shape [2, 4, 24] : tensor<8x24xf32> into tensor<2x4x24xf32>
    %q = tensor.extract_slice %qkv[0, 0, 0] [2, 4, 8] [1, 1, 1] : tensor<2x4x24xf32> to tensor<2x4x8xf32>
    %k = tensor.extract_slice %qkv[0, 0, 8] [2, 4, 8] [1, 1, 1] : tensor<2x4x24xf32> to tensor<2x4x8xf32>
    %v = tensor.extract_slice %qkv[0, 0, 16] [2, 4, 8] [1, 1, 1] : tensor<2x4x24xf32> to tensor<2x4x8xf32>
    // Heads: [b, s, nh, hd] -> [b, nh, s, hd] -> [b * nh, s, hd].
    %e4 = tensor.empty() : tensor<2x2x4x4xf32>
    %q4 = tensor.expand_shape %q [[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
    %qp = linalg.generic {indexing_maps = [#p4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%q4 : tensor<2x4x2x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x4x4xf32>
    %qh = tensor.collapse_shape %qp [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
    %k4 = tensor.expand_shape %k [[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
    %kp = linalg.generic {indexing_maps = [#p4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%k4 : tensor<2x4x2x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x4x4xf32>
    %kh = tensor.collapse_shape %kp [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
    %v4 = tensor.expand_shape %v [[0], [1], [2, 3]] output_shape [2, 4, 2, 4] : tensor<2x4x8xf32> into tensor<2x4x2x4xf32>
    %vp = linalg.generic {indexing_maps = [#p4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%v4 : tensor<2x4x2x4xf32>) outs(%e4 : tensor<2x2x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x2x4x4xf32>
    %vh = tensor.collapse_shape %vp [[0, 1], [2], [3]] : tensor<2x2x4x4xf32> into tensor<4x4x4xf32>
    // Scores q k^T * 1/sqrt(hd), causal mask, softmax.
    %eh = tensor.empty() : tensor<4x4x4xf32>
    %kt = linalg.transpose ins(%kh : tensor<4x4x4xf32>) outs(%eh : tensor<4x4x4xf32>) permutation = [0, 2, 1]
    %zh = linalg.fill ins(%cst : f32) outs(%eh : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
    %sc0 = linalg.batch_matmul ins(%qh, %kt : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%zh : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
    %sc1 = linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sc0 : tensor<4x4x4xf32>) outs(%eh : tensor<4x4x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 1 : index
      %j = linalg.index 2 : index
      %s = arith.mulf %in, %scale : f32
      %c = arith.cmpi ugt, %j, %i : index
      %r = arith.select %c, %ninf, %s : f32
      linalg.yield %r : f32
    } -> tensor<4x4x4xf32>
    %em = tensor.empty() : tensor<4x4x1xf32>
    %mi = linalg.fill ins(%ninf : f32) outs(%em : tensor<4x4x1xf32>) -> tensor<4x4x1xf32>
    %mx = linalg.generic {indexing_maps = [#e3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%sc1 : tensor<4x4x4xf32>) outs(%mi : tensor<4x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.maximumf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<4x4x1xf32>
    %ex = linalg.generic {indexing_maps = [#e3, #r3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%sc1, %mx : tensor<4x4x4xf32>, tensor<4x4x1xf32>) outs(%eh : tensor<4x4x4xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %d = arith.subf %in, %m : f32
      %r = math.exp %d : f32
      linalg.yield %r : f32
    } -> tensor<4x4x4xf32>
    %zm = linalg.fill ins(%cst : f32) outs(%em : tensor<4x4x1xf32>) -> tensor<4x4x1xf32>
    %se = linalg.generic {indexing_maps = [#e3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%ex : tensor<4x4x4xf32>) outs(%zm : tensor<4x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<4x4x1xf32>
    %pr = linalg.generic {indexing_maps = [#e3, #r3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%ex, %se : tensor<4x4x4xf32>, tensor<4x4x1xf32>) outs(%eh : tensor<4x4x4xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %r = arith.divf %in, %s : f32
      linalg.yield %r : f32
    } -> tensor<4x4x4xf32>
    %ctx = linalg.batch_matmul ins(%pr, %vh : tensor<4x4x4xf32>, tensor<4x4x4xf32>) outs(%zh : tensor<4x4x4xf32>) -> tensor<4x4x4xf32>
    // Merge heads: [b * nh, s, hd] -> [b, s, nh * hd].
    %c4 = tensor.expand_shape %ctx [[0, 1], [2], [3]] output_shape [2, 2, 4, 4] : tensor<4x4x4xf32> into tensor<2x2x4x4xf32>
    %e4b = tensor.empty() : tensor<2x4x2x4xf32>
    %cp = linalg.generic {indexing_maps = [#p4, #m4], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%c4 : tensor<2x2x4x4xf32>) outs(%e4b : tensor<2x4x2x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<2x4x2x4xf32>
    %cc = tensor.collapse_shape %cp [[0, 1], [2, 3]] : tensor<2x4x2x4xf32> into tensor<8x8xf32>
    // Output projection and residual.
    %e2 = tensor.empty() : tensor<8x8xf32>
    %pwt = linalg.transpose ins(%proj_w : tensor<8x8xf32>) outs(%e2 : tensor<8x8xf32>) permutation = [1, 0]
    %z2 = linalg.fill ins(%cst : f32) outs(%e2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %ao0 = linalg.matmul ins(%cc, %pwt : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %ao1 = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]} ins(%ao0, %proj_b : tensor<8x8xf32>, tensor<8xf32>) outs(%e2 : tensor<8x8xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    %ao = tensor.expand_shape %ao1 [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
    %x1 = linalg.generic {indexing_maps = [#e3, #e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x0, %ao : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e3 : tensor<2x4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x4x8xf32>
    // LayerNorm 2.
    %s2 = linalg.generic {indexing_maps = [#e3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x1 : tensor<2x4x8xf32>) outs(%zr : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %mu2 = linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s2 : tensor<2x4x1xf32>) outs(%er : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.divf %in, %n8 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %v2 = linalg.generic {indexing_maps = [#e3, #r3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x1, %mu2 : tensor<2x4x8xf32>, tensor<2x4x1xf32>) outs(%zr : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %d = arith.subf %in, %m : f32
      %q2 = arith.mulf %d, %d : f32
      %r = arith.addf %q2, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %h2 = linalg.generic {indexing_maps = [#e3, #r3, #r3, #c3, #c3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x1, %mu2, %v2, %ln2_w, %ln2_b : tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<2x4x8xf32>) {
    ^bb0(%in: f32, %m: f32, %var0: f32, %w: f32, %b: f32, %out: f32):
      %var = arith.divf %var0, %n8 : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %d = arith.subf %in, %m : f32
      %nrm = arith.mulf %d, %rs : f32
      %sc = arith.mulf %nrm, %w : f32
      %r = arith.addf %sc, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x4x8xf32>
    // MLP: fc, GELU (tanh approximation), projection, residual.
    %h2c = tensor.collapse_shape %h2 [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
    %ef = tensor.empty() : tensor<8x16xf32>
    %fwt = linalg.transpose ins(%fc_w : tensor<16x8xf32>) outs(%ef : tensor<8x16xf32>) permutation = [1, 0]
    %zf = linalg.fill ins(%cst : f32) outs(%ef : tensor<8x16xf32>) -> tensor<8x16xf32>
    %f0 = linalg.matmul ins(%h2c, %fwt : tensor<8x8xf32>, tensor<8x16xf32>) outs(%zf : tensor<8x16xf32>) -> tensor<8x16xf32>
    %f1 = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]} ins(%f0, %fc_b : tensor<8x16xf32>, tensor<16xf32>) outs(%ef : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %x = arith.addf %a, %b : f32
      %x2 = arith.mulf %x, %x : f32
      %x3 = arith.mulf %x2, %x : f32
      %t0 = arith.mulf %x3, %c0044 : f32
      %t1 = arith.addf %x, %t0 : f32
      %t2 = arith.mulf %t1, %c0797 : f32
      %t3 = math.tanh %t2 : f32
      %t4 = arith.addf %t3, %one : f32
      %t5 = arith.mulf %x, %half : f32
      %r = arith.mulf %t5, %t4 : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32>
    %eo = tensor.empty() : tensor<16x8xf32>
    %owt = linalg.transpose ins(%out_w : tensor<8x16xf32>) outs(%eo : tensor<16x8xf32>) permutation = [1, 0]
    %o0 = linalg.matmul ins(%f1, %owt : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z2 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %o1 = linalg.generic {indexing_maps = [#m2, #b2, #m2], iterator_types = ["parallel", "parallel"]} ins(%o0, %out_b : tensor<8x8xf32>, tensor<8xf32>) outs(%e2 : tensor<8x8xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    %o = tensor.expand_shape %o1 [[0, 1], [2]] output_shape [2, 4, 8] : tensor<8x8xf32> into tensor<2x4x8xf32>
    %x2 = linalg.generic {indexing_maps = [#e3, #e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x1, %o : tensor<2x4x8xf32>, tensor<2x4x8xf32>) outs(%e3 : tensor<2x4x8xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %r = arith.addf %a, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x4x8xf32>
    // Final LayerNorm and the LM head.
    %s3 = linalg.generic {indexing_maps = [#e3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x2 : tensor<2x4x8xf32>) outs(%zr : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %mu3 = linalg.generic {indexing_maps = [#e3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%s3 : tensor<2x4x1xf32>) outs(%er : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.divf %in, %n8 : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %v3 = linalg.generic {indexing_maps = [#e3, #r3, #r3], iterator_types = ["parallel", "parallel", "reduction"]} ins(%x2, %mu3 : tensor<2x4x8xf32>, tensor<2x4x1xf32>) outs(%zr : tensor<2x4x1xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %d = arith.subf %in, %m : f32
      %q3 = arith.mulf %d, %d : f32
      %r = arith.addf %q3, %out : f32
      linalg.yield %r : f32
    } -> tensor<2x4x1xf32>
    %h3 = linalg.generic {indexing_maps = [#e3, #r3, #r3, #c3, #c3, #e3], iterator_types = ["parallel", "parallel", "parallel"]} ins(%x2, %mu3, %v3, %lnf_w, %lnf_b : tensor<2x4x8xf32>, tensor<2x4x1xf32>, tensor<2x4x1xf32>, tensor<8xf32>, tensor<8xf32>) outs(%e3 : tensor<2x4x8xf32>) {
    ^bb0(%in: f32, %m: f32, %var0: f32, %w: f32, %b: f32, %out: f32):
      %var = arith.divf %var0, %n8 : f32
      %ve = arith.addf %var, %eps : f32
      %rs = math.rsqrt %ve : f32
      %d = arith.subf %in, %m : f32
      %nrm = arith.mulf %d, %rs : f32
      %sc = arith.mulf %nrm, %w : f32
      %r = arith.addf %sc, %b : f32
      linalg.yield %r : f32
    } -> tensor<2x4x8xf32>
    %h3c = tensor.collapse_shape %h3 [[0, 1], [2]] : tensor<2x4x8xf32> into tensor<8x8xf32>
    %hwt = linalg.transpose ins(%head_w : tensor<16x8xf32>) outs(%ef : tensor<8x16xf32>) permutation = [1, 0]
    %lg0 = linalg.matmul ins(%h3c, %hwt : tensor<8x8xf32>, tensor<8x16xf32>) outs(%zf : tensor<8x16xf32>) -> tensor<8x16xf32>
    %lg = tensor.expand_shape %lg0 [[0, 1], [2]] output_shape [2, 4, 16] : tensor<8x16xf32> into tensor<2x4x16xf32>
    return %lg : tensor<2x4x16xf32>
  }
}
