// The pieces of a LLaMA decoder block that differ from BERT, in the
// linalg-on-tensors form torch-mlir emits for HuggingFace LLaMA: RMSNorm with
// math.powf and math.rsqrt, rotary embeddings built from extract_slice,
// negation and tensor.concat, a causal mask from linalg.index, softmax, and
// the SiLU gated MLP. One head of dimension 8, sequence 8, hidden 8, MLP 16.

#m2 = affine_map<(d0, d1) -> (d0, d1)>
#m2r = affine_map<(d0, d1) -> (d0, 0)>
#m2c = affine_map<(d0, d1) -> (d1)>
module attributes {torch.debug_module_name = "LlamaBlock"} {
  func.func @forward(%x: tensor<8x8xf32>, %norm_w: tensor<8xf32>, %wq: tensor<8x8xf32>,
                     %wk: tensor<8x8xf32>, %cos: tensor<8x8xf32>, %sin: tensor<8x8xf32>,
                     %wg: tensor<8x16xf32>, %wu: tensor<8x16xf32>, %wd: tensor<16x8xf32>) -> tensor<8x8xf32> {
    %cst = arith.constant 0.000000e+00 : f32
    %two = arith.constant 2.000000e+00 : f32
    %n = arith.constant 8.000000e+00 : f32
    %eps = arith.constant 9.99999997E-7 : f32
    %one = arith.constant 1.000000e+00 : f32
    %ninf = arith.constant -3.40282347E+38 : f32
    // RMSNorm: x * rsqrt(mean(x^2) + eps) * w.
    %e1 = tensor.empty() : tensor<8x1xf32>
    %z1 = linalg.fill ins(%cst : f32) outs(%e1 : tensor<8x1xf32>) -> tensor<8x1xf32>
    %ss = linalg.generic {indexing_maps = [#m2, #m2r], iterator_types = ["parallel", "reduction"]} ins(%x : tensor<8x8xf32>) outs(%z1 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %p = math.powf %in, %two : f32
      %r = arith.addf %p, %out : f32
      linalg.yield %r : f32
    } -> tensor<8x1xf32>
    %e8 = tensor.empty() : tensor<8x8xf32>
    %xn = linalg.generic {indexing_maps = [#m2, #m2r, #m2c, #m2], iterator_types = ["parallel", "parallel"]} ins(%x, %ss, %norm_w : tensor<8x8xf32>, tensor<8x1xf32>, tensor<8xf32>) outs(%e8 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %s: f32, %w: f32, %out: f32):
      %m = arith.divf %s, %n : f32
      %a = arith.addf %m, %eps : f32
      %r = math.rsqrt %a : f32
      %y = arith.mulf %in, %r : f32
      %yw = arith.mulf %y, %w : f32
      linalg.yield %yw : f32
    } -> tensor<8x8xf32>
    // Projections.
    %z8 = linalg.fill ins(%cst : f32) outs(%e8 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %q = linalg.matmul ins(%xn, %wq : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %k = linalg.matmul ins(%xn, %wk : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<8x8xf32>) -> tensor<8x8xf32>
    // Rotary embedding: q * cos + rotate_half(q) * sin.
    %q1 = tensor.extract_slice %q[0, 0] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
    %q2 = tensor.extract_slice %q[0, 4] [8, 4] [1, 1] : tensor<8x8xf32> to tensor<8x4xf32>
    %e4 = tensor.empty() : tensor<8x4xf32>
    %nq2 = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%q2 : tensor<8x4xf32>) outs(%e4 : tensor<8x4xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.negf %in : f32
      linalg.yield %r : f32
    } -> tensor<8x4xf32>
    %rot = tensor.concat dim(1) %nq2, %q1 : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x8xf32>
    %qr = linalg.generic {indexing_maps = [#m2, #m2, #m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%q, %cos, %rot, %sin : tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>, tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
    ^bb0(%a: f32, %c: f32, %b: f32, %s: f32, %out: f32):
      %ac = arith.mulf %a, %c : f32
      %bs = arith.mulf %b, %s : f32
      %r = arith.addf %ac, %bs : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    // Causal scores: q k^T with positions j > i masked.
    %kt = linalg.transpose ins(%k : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) permutation = [1, 0]
    %s0 = linalg.matmul ins(%qr, %kt : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<8x8xf32>) -> tensor<8x8xf32>
    %masked = linalg.generic {indexing_maps = [#m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%s0 : tensor<8x8xf32>) outs(%e8 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %out: f32):
      %i = linalg.index 0 : index
      %j = linalg.index 1 : index
      %c = arith.cmpi ugt, %j, %i : index
      %r = arith.select %c, %ninf, %in : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    // Softmax over the keys (masked scores become exact zeros), then the
    // weighted sum of values; the keys serve as values to keep the block
    // small.
    %mi = linalg.fill ins(%ninf : f32) outs(%e1 : tensor<8x1xf32>) -> tensor<8x1xf32>
    %mx = linalg.generic {indexing_maps = [#m2, #m2r], iterator_types = ["parallel", "reduction"]} ins(%masked : tensor<8x8xf32>) outs(%mi : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.maximumf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<8x1xf32>
    %ex0 = linalg.generic {indexing_maps = [#m2, #m2r, #m2], iterator_types = ["parallel", "parallel"]} ins(%masked, %mx : tensor<8x8xf32>, tensor<8x1xf32>) outs(%e8 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %m: f32, %out: f32):
      %d = arith.subf %in, %m : f32
      %r = math.exp %d : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    %se = linalg.generic {indexing_maps = [#m2, #m2r], iterator_types = ["parallel", "reduction"]} ins(%ex0 : tensor<8x8xf32>) outs(%z1 : tensor<8x1xf32>) {
    ^bb0(%in: f32, %out: f32):
      %r = arith.addf %in, %out : f32
      linalg.yield %r : f32
    } -> tensor<8x1xf32>
    %probs = linalg.generic {indexing_maps = [#m2, #m2r, #m2], iterator_types = ["parallel", "parallel"]} ins(%ex0, %se : tensor<8x8xf32>, tensor<8x1xf32>) outs(%e8 : tensor<8x8xf32>) {
    ^bb0(%in: f32, %s: f32, %out: f32):
      %r = arith.divf %in, %s : f32
      linalg.yield %r : f32
    } -> tensor<8x8xf32>
    %attn = linalg.matmul ins(%probs, %k : tensor<8x8xf32>, tensor<8x8xf32>) outs(%z8 : tensor<8x8xf32>) -> tensor<8x8xf32>
    // SiLU-gated MLP: (silu(x Wg) * (x Wu)) Wd.
    %e16 = tensor.empty() : tensor<8x16xf32>
    %z16 = linalg.fill ins(%cst : f32) outs(%e16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %g = linalg.matmul ins(%attn, %wg : tensor<8x8xf32>, tensor<8x16xf32>) outs(%z16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %u = linalg.matmul ins(%attn, %wu : tensor<8x8xf32>, tensor<8x16xf32>) outs(%z16 : tensor<8x16xf32>) -> tensor<8x16xf32>
    %h = linalg.generic {indexing_maps = [#m2, #m2, #m2], iterator_types = ["parallel", "parallel"]} ins(%g, %u : tensor<8x16xf32>, tensor<8x16xf32>) outs(%e16 : tensor<8x16xf32>) {
    ^bb0(%a: f32, %b: f32, %out: f32):
      %na = arith.negf %a : f32
      %ex = math.exp %na : f32
      %den = arith.addf %ex, %one : f32
      %sig = arith.divf %a, %den : f32
      %r = arith.mulf %sig, %b : f32
      linalg.yield %r : f32
    } -> tensor<8x16xf32>
    %o = linalg.matmul ins(%h, %wd : tensor<8x16xf32>, tensor<16x8xf32>) outs(%z8 : tensor<8x8xf32>) -> tensor<8x8xf32>
    return %o : tensor<8x8xf32>
  }
}
