#!/usr/bin/env python3
"""Writes a LLaMA-2-7B-style prefill model as linalg-on-tensors, every layer
op a linalg.generic as torch-mlir's TorchToLinalg emits them: an embedding
lookup, RMSNorm, matmuls, rotary embeddings read from cos/sin tables,
attention with a causal mask and softmax, SwiGLU and residual adds.

    python3 benchmarks/llama_prefill.py [--generics 1650] [--seq 128] > m.mlir

Standard library only. The model has exactly --generics linalg.generic ops
(whole layers of 53 generics, element-wise scalings up to the count, then
the final norm and the LM head).
"""

import argparse
import sys

PAR, RED = '"parallel"', '"reduction"'


class Model:
    def __init__(self, seq, hidden, heads, ffn, vocab, dtype="f32"):
        self.seq, self.hidden, self.heads, self.ffn = seq, hidden, heads, ffn
        self.head_dim = hidden // heads
        self.vocab, self.dtype = vocab, dtype
        self.lines, self.args, self.count, self.next = [], [], 0, 0
        self.maps = {}

    def value(self):
        self.next += 1
        return "%%v%d" % self.next

    def ty(self, shape, dtype=None):
        return "tensor<%s%s>" % ("".join("%dx" % d for d in shape),
                                 dtype or self.dtype)

    def arg(self, name, shape, dtype=None):
        self.args.append("%%%s: %s" % (name, self.ty(shape, dtype)))
        return "%" + name

    def amap(self, rank, dims):
        key = (rank, tuple(dims))
        if key not in self.maps:
            self.maps[key] = "#map%d" % len(self.maps)
        return self.maps[key]

    def generic(self, ins, shape, maps, iters, body, init=None):
        """ins: [(value, shape, dims)], maps over `len(iters)` loops; body:
        lines using %a0.. for inputs, %acc for the init; yields %r."""
        rank = len(iters)
        if init is None:
            empty = self.value()
            self.lines.append("    %s = tensor.empty() : %s"
                              % (empty, self.ty(shape)))
            init = empty
        out = self.value()
        in_maps = [self.amap(rank, d) for (_, _, d) in ins]
        self.lines.append(
            "    %s = linalg.generic {indexing_maps = [%s], iterator_types = "
            "[%s]} ins(%s : %s) outs(%s : %s) {"
            % (out, ", ".join(in_maps + [self.amap(rank, maps)]),
               ", ".join(iters), ", ".join(v for v, _, _ in ins),
               ", ".join(self.ty(s, dt) for _, s, _, dt in
                         [(v, s, d, self.dtype if not v.startswith("%ids")
                           else "i64") for v, s, d in ins]),
               init, self.ty(shape)))
        args = ", ".join(["%%a%d: %s" % (i, "i64" if v.startswith("%ids")
                                         else self.dtype)
                          for i, (v, _, _) in enumerate(ins)]
                         + ["%%acc: %s" % self.dtype])
        self.lines.append("    ^bb0(%s):" % args)
        for line in body:
            self.lines.append("      " + line)
        self.lines.append("      linalg.yield %r : " + self.dtype)
        self.lines.append("    } -> " + self.ty(shape))
        self.count += 1
        return out

    def zeros(self, shape):
        empty, out = self.value(), self.value()
        self.lines.append("    %s = tensor.empty() : %s"
                          % (empty, self.ty(shape)))
        self.lines.append("    %s = linalg.fill ins(%%zero : %s) outs(%s : %s)"
                          " -> %s" % (out, self.dtype, empty, self.ty(shape),
                                      self.ty(shape)))
        return out

    # Building blocks -------------------------------------------------------

    def elementwise(self, xs, shape, body):
        dims = list(range(len(shape)))
        return self.generic([(x, shape, dims) for x in xs], shape, dims,
                            [PAR] * len(shape), body)

    def linear(self, x, w, m, k, n):
        """torch's linear: the weight [n, k] transposed, then a matmul."""
        wt = self.generic([(w, [n, k], [1, 0])], [k, n], [0, 1], [PAR, PAR],
                          ["%r = arith.addf %a0, %fzero : " + self.dtype])
        return self.matmul(x, wt, m, k, n)

    def matmul(self, x, w, m, k, n):
        acc = self.zeros([m, n])
        return self.generic([(x, [m, k], [0, 2]), (w, [k, n], [2, 1])],
                            [m, n], [0, 1], [PAR, PAR, RED],
                            ["%p = arith.mulf %a0, %a1 : " + self.dtype,
                             "%r = arith.addf %acc, %p : " + self.dtype],
                            init=acc)

    def rmsnorm(self, x, w):
        """pow, sum, div, add eps, rsqrt, mul, mul weight: torch's RMSNorm."""
        s, h = self.seq, self.hidden
        sq = self.elementwise([x], [s, h], [
            "%r = arith.mulf %a0, %a0 : " + self.dtype])
        acc = self.zeros([s])
        total = self.generic([(sq, [s, h], [0, 1])], [s], [0], [PAR, RED],
                             ["%r = arith.addf %acc, %a0 : " + self.dtype],
                             init=acc)
        mean = self.elementwise([total], [s], [
            "%r = arith.divf %a0, %hsize : " + self.dtype])
        eps = self.elementwise([mean], [s], [
            "%r = arith.addf %a0, %eps : " + self.dtype])
        inv = self.elementwise([eps], [s], [
            "%r = math.rsqrt %a0 : " + self.dtype])
        n = self.generic([(x, [s, h], [0, 1]), (inv, [s], [0])], [s, h],
                         [0, 1], [PAR, PAR],
                         ["%r = arith.mulf %a0, %a1 : " + self.dtype])
        return self.generic([(n, [s, h], [0, 1]), (w, [h], [1])], [s, h],
                            [0, 1], [PAR, PAR],
                            ["%r = arith.mulf %a0, %a1 : " + self.dtype])

    def heads_view(self, x):
        """[s, h] -> [heads, s, d] (a transpose as torch-mlir emits it)."""
        s, nh, d = self.seq, self.heads, self.head_dim
        view = self.value()
        self.lines.append("    %s = tensor.expand_shape %s [[0], [1, 2]] "
                          "output_shape [%d, %d, %d] : %s into %s"
                          % (view, x, s, nh, d, self.ty([s, nh * d]),
                             self.ty([s, nh, d])))
        return self.generic([(view, [s, nh, d], [1, 0, 2])], [nh, s, d],
                            [0, 1, 2], [PAR] * 3,
                            ["%r = arith.addf %a0, %fzero : " + self.dtype])

    def rotary(self, x):
        """x[n, s, d] * cos[s, d] + rotate_half(x) * sin[s, d], with the
        tables read through linalg.index."""
        nh, s, d = self.heads, self.seq, self.head_dim
        half = d // 2
        shape = [nh, s, d]
        x = self.elementwise([x], shape, [
            "%r = arith.addf %a0, %fzero : " + self.dtype])
        cos = self.elementwise([x], shape, [
            "%i1 = linalg.index 1 : index",
            "%i2 = linalg.index 2 : index",
            "%c = tensor.extract %cos[%i1, %i2] : " + self.ty([s, d]),
            "%r = arith.mulf %a0, %c : " + self.dtype])
        rot = self.generic([(x, shape, [0, 1, 2])], shape, [0, 1, 2],
                           [PAR] * 3, [
            "%i2 = linalg.index 2 : index",
            "%ip = arith.addi %i2, %chalf : index",
            "%im = arith.remui %ip, %chd : index",
            "%i0 = linalg.index 0 : index",
            "%i1 = linalg.index 1 : index",
            "%r = arith.negf %a0 : " + self.dtype])
        sin = self.elementwise([rot], shape, [
            "%i1 = linalg.index 1 : index",
            "%i2 = linalg.index 2 : index",
            "%c = tensor.extract %sin[%i1, %i2] : " + self.ty([s, d]),
            "%r = arith.mulf %a0, %c : " + self.dtype])
        del half
        return self.elementwise([cos, sin], shape, [
            "%r = arith.addf %a0, %a1 : " + self.dtype])

    def attention(self, q, k, v):
        nh, s, d = self.heads, self.seq, self.head_dim
        acc = self.zeros([nh, s, s])
        scores = self.generic(
            [(q, [nh, s, d], [0, 1, 3]), (k, [nh, s, d], [0, 2, 3])],
            [nh, s, s], [0, 1, 2], [PAR, PAR, PAR, RED],
            ["%p = arith.mulf %a0, %a1 : " + self.dtype,
             "%r = arith.addf %acc, %p : " + self.dtype], init=acc)
        shape = [nh, s, s]
        scaled = self.elementwise([scores], shape, [
            "%r = arith.mulf %a0, %scale : " + self.dtype])
        masked = self.elementwise([scaled], shape, [
            "%i1 = linalg.index 1 : index",
            "%i2 = linalg.index 2 : index",
            "%future = arith.cmpi ugt, %i2, %i1 : index",
            "%r = arith.select %future, %ninf, %a0 : " + self.dtype])
        mx0 = self.zeros([nh, s])
        mx = self.generic([(masked, shape, [0, 1, 2])], [nh, s], [0, 1],
                          [PAR, PAR, RED],
                          ["%r = arith.maximumf %acc, %a0 : " + self.dtype],
                          init=mx0)
        ex = self.generic([(masked, shape, [0, 1, 2]), (mx, [nh, s], [0, 1])],
                          shape, [0, 1, 2], [PAR] * 3,
                          ["%t = arith.subf %a0, %a1 : " + self.dtype,
                           "%r = math.exp %t : " + self.dtype])
        sm0 = self.zeros([nh, s])
        sm = self.generic([(ex, shape, [0, 1, 2])], [nh, s], [0, 1],
                          [PAR, PAR, RED],
                          ["%r = arith.addf %acc, %a0 : " + self.dtype],
                          init=sm0)
        probs = self.generic([(ex, shape, [0, 1, 2]), (sm, [nh, s], [0, 1])],
                             shape, [0, 1, 2], [PAR] * 3,
                             ["%r = arith.divf %a0, %a1 : " + self.dtype])
        acc2 = self.zeros([nh, s, d])
        ctx = self.generic(
            [(probs, shape, [0, 1, 3]), (v, [nh, s, d], [0, 3, 2])],
            [nh, s, d], [0, 1, 2], [PAR, PAR, PAR, RED],
            ["%p = arith.mulf %a0, %a1 : " + self.dtype,
             "%r = arith.addf %acc, %p : " + self.dtype], init=acc2)
        # [heads, s, d] -> [s, heads * d]
        return self.generic([(ctx, [nh, s, d], [1, 0, 2])],
                            [s, nh, d], [0, 1, 2], [PAR] * 3,
                            ["%r = arith.addf %a0, %fzero : " + self.dtype])

    def flatten(self, x):
        s, nh, d = self.seq, self.heads, self.head_dim
        out = self.value()
        self.lines.append("    %s = tensor.collapse_shape %s [[0], [1, 2]] : "
                          "%s into %s" % (out, x, self.ty([s, nh, d]),
                                          self.ty([s, nh * d])))
        return out

    def layer(self, i, x):
        """Appends one decoder layer (53 generics)."""
        s, h, f = self.seq, self.hidden, self.ffn
        w = {n: self.arg("l%d_%s" % (i, n), shape) for n, shape in [
            ("attn_norm", [h]), ("wq", [h, h]), ("wk", [h, h]),
            ("wv", [h, h]), ("wo", [h, h]), ("ffn_norm", [h]),
            ("w1", [f, h]), ("w3", [f, h]), ("w2", [h, f])]}
        n1 = self.rmsnorm(x, w["attn_norm"])
        q = self.heads_view(self.linear(n1, w["wq"], s, h, h))
        k = self.heads_view(self.linear(n1, w["wk"], s, h, h))
        v = self.heads_view(self.linear(n1, w["wv"], s, h, h))
        ctx = self.flatten(self.attention(self.rotary(q), self.rotary(k), v))
        o = self.linear(ctx, w["wo"], s, h, h)
        h1 = self.elementwise([x, o], [s, h], [
            "%r = arith.addf %a0, %a1 : " + self.dtype])
        n2 = self.rmsnorm(h1, w["ffn_norm"])
        g = self.linear(n2, w["w1"], s, h, f)
        u = self.linear(n2, w["w3"], s, h, f)
        act = self.elementwise([g, u], [s, f], [
            "%ng = arith.negf %a0 : " + self.dtype,
            "%e = math.exp %ng : " + self.dtype,
            "%d = arith.addf %e, %fone : " + self.dtype,
            "%sg = arith.divf %a0, %d : " + self.dtype,
            "%r = arith.mulf %sg, %a1 : " + self.dtype])
        dn = self.linear(act, w["w2"], s, f, h)
        return self.elementwise([h1, dn], [s, h], [
            "%r = arith.addf %a0, %a1 : " + self.dtype])

    def build(self, generics):
        s, h = self.seq, self.hidden
        ids = self.arg("ids", [s], "i64")
        self.arg("table", [self.vocab, h])
        self.arg("cos", [s, self.head_dim])
        self.arg("sin", [s, self.head_dim])
        x = self.generic([(ids, [s], [0])], [s, h], [0, 1], [PAR, PAR], [
            "%row = arith.index_cast %a0 : i64 to index",
            "%col = linalg.index 1 : index",
            "%r = tensor.extract %table[%row, %col] : "
            + self.ty([self.vocab, h])])
        head = self.arg("lm_head", [self.vocab, h])
        norm = self.arg("final_norm", [h])
        per_layer, tail = 53, 9  # final RMSNorm (7), LM head (2)
        layers = max(0, (generics - self.count - tail) // per_layer)
        for i in range(layers):
            x = self.layer(i, x)
        # Top up with element-wise scalings to reach the exact count.
        while self.count < generics - tail:
            x = self.elementwise([x], [s, h], [
                "%r = arith.mulf %a0, %fone : " + self.dtype])
        x = self.rmsnorm(x, norm)
        x = self.linear(x, head, s, h, self.vocab)
        return x, layers

    def text(self, result):
        out = []
        for (rank, dims), name in self.maps.items():
            dlist = ", ".join("d%d" % i for i in range(rank))
            out.append("%s = affine_map<(%s) -> (%s)>"
                       % (name, dlist, ", ".join("d%d" % d for d in dims)))
        out.append("func.func @llama_prefill(%s) -> %s {"
                   % (", ".join(self.args),
                      self.ty([self.seq, self.vocab])))
        dt = self.dtype
        out += ["    %%zero = arith.constant 0.0 : %s" % dt,
                "    %%fzero = arith.constant 0.0 : %s" % dt,
                "    %%fone = arith.constant 1.0 : %s" % dt,
                "    %%eps = arith.constant 1.0e-05 : %s" % dt,
                "    %%hsize = arith.constant %d.0 : %s" % (self.hidden, dt),
                "    %%scale = arith.constant 0.08838834764 : %s" % dt,
                "    %%ninf = arith.constant -1.0e+30 : %s" % dt,
                "    %%chalf = arith.constant %d : index" % (self.head_dim // 2),
                "    %%chd = arith.constant %d : index" % self.head_dim]
        out += self.lines
        out.append("    return %s : %s" % (result,
                                          self.ty([self.seq, self.vocab])))
        out.append("}")
        return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--generics", type=int, default=1650,
                   help="number of linalg.generic ops (default 1650)")
    p.add_argument("--seq", type=int, default=128,
                   help="sequence length (default 128)")
    p.add_argument("--hidden", type=int, default=4096,
                   help="hidden size (default 4096)")
    p.add_argument("--heads", type=int, default=32,
                   help="attention heads (default 32)")
    p.add_argument("--ffn", type=int, default=11008,
                   help="SwiGLU inner size (default 11008)")
    p.add_argument("--vocab", type=int, default=32000,
                   help="vocabulary size (default 32000)")
    a = p.parse_args()
    if a.generics < 8:
        p.error("--generics must be at least 8")
    m = Model(a.seq, a.hidden, a.heads, a.ffn, a.vocab)
    result, layers = m.build(a.generics)
    sys.stdout.write("// LLaMA-style prefill: %d layers, %d linalg.generic\n"
                     % (layers, m.count))
    sys.stdout.write(m.text(result))


if __name__ == "__main__":
    main()
