"""A small text emitter for linalg-on-tensors MLIR (standard library only).

`FuncBuilder` writes one `func.func` whose arguments are the weights, the
input batch and the labels, and whose single result is a scalar loss
(a 0-d tensor).  Every value carries its static shape so that model builders
can compose layers without spelling out MLIR types.
"""

from math import prod


class Value:
    """An SSA value of ranked tensor type."""

    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)


def tensor_type(shape, dtype):
    dims = "".join(f"{d}x" for d in shape)
    return f"tensor<{dims}{dtype}>"


def float_literal(value):
    """An MLIR float literal (which needs a '.' before any exponent)."""
    text = repr(float(value))
    if "e" in text and "." not in text:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def affine_map(num_dims, results):
    dims = ", ".join(f"d{i}" for i in range(num_dims))
    return f"affine_map<({dims}) -> ({', '.join(results)})>"


class Scalar:
    """Emits the scalar body of a linalg.generic."""

    def __init__(self, dtype, lines):
        self.dtype = dtype
        self.lines = lines
        self.count = 0

    def _fresh(self):
        self.count += 1
        return f"%s{self.count}"

    def const(self, value):
        name = self._fresh()
        self.lines.append(f"    {name} = arith.constant {float_literal(value)} : {self.dtype}")
        return name

    def line(self, text):
        """`%name = text`, an op of any result type (index arithmetic,
        linalg.index, a select on an i1); returns the name."""
        name = self._fresh()
        self.lines.append(f"    {name} = {text}")
        return name

    def op(self, opname, *operands):
        name = self._fresh()
        self.lines.append(f"    {name} = {opname} {', '.join(operands)} : {self.dtype}")
        return name

    def add(self, a, b):
        return self.op("arith.addf", a, b)

    def sub(self, a, b):
        return self.op("arith.subf", a, b)

    def mul(self, a, b):
        return self.op("arith.mulf", a, b)

    def div(self, a, b):
        return self.op("arith.divf", a, b)

    def max(self, a, b):
        return self.op("arith.maximumf", a, b)

    def neg(self, a):
        return self.op("arith.negf", a)

    def exp(self, a):
        return self.op("math.exp", a)

    def log(self, a):
        return self.op("math.log", a)

    def tanh(self, a):
        return self.op("math.tanh", a)

    def sqrt(self, a):
        return self.op("math.sqrt", a)

    def rsqrt(self, a):
        return self.op("math.rsqrt", a)

    def sigmoid(self, a):
        one = self.const(1.0)
        return self.div(one, self.add(one, self.exp(self.neg(a))))


class FuncBuilder:
    """Builds one function returning a scalar loss."""

    def __init__(self, name, dtype="f32"):
        self.name = name
        self.dtype = dtype
        self.args = []  # (Value, role) with role in weight/input/label
        self.body = []
        self.count = 0

    # -- values ---------------------------------------------------------------
    def _fresh(self, hint="v"):
        self.count += 1
        return f"%{hint}{self.count}"

    def argument(self, name, shape, role):
        value = Value(f"%{name}", shape, self.dtype)
        self.args.append((value, role))
        return value

    def weight(self, name, shape):
        return self.argument(name, shape, "weight")

    def input(self, name, shape):
        return self.argument(name, shape, "input")

    def label(self, name, shape):
        return self.argument(name, shape, "label")

    def weights(self):
        return [v for v, role in self.args if role == "weight"]

    def emit(self, text):
        self.body.append("  " + text)

    def scalar_const(self, value):
        name = self._fresh("c")
        self.emit(f"{name} = arith.constant {float_literal(value)} : {self.dtype}")
        return name

    def full(self, shape, value):
        empty = self.empty(shape)
        cst = self.scalar_const(value)
        name = self._fresh()
        self.emit(f"{name} = linalg.fill ins({cst} : {self.dtype}) "
                  f"outs({empty.name} : {empty.type}) -> {empty.type}")
        return Value(name, shape, self.dtype)

    def empty(self, shape):
        name = self._fresh("e")
        value = Value(name, shape, self.dtype)
        self.emit(f"{name} = tensor.empty() : {value.type}")
        return value

    # -- structured ops -------------------------------------------------------
    def generic(self, inputs, in_maps, out_shape, out_map, iterators, body,
                init=None):
        """A linalg.generic with one result.

        `in_maps`/`out_map` are lists of result expressions over d0..dn,
        `body(s, args, acc)` returns the yielded scalar name.
        """
        num_dims = len(iterators)
        if init is None:
            init = self.empty(out_shape) if "reduction" not in iterators \
                else self.full(out_shape, 0.0)
        maps = [affine_map(num_dims, m) for m in in_maps + [out_map]]
        iters = ", ".join(f'"{it}"' for it in iterators)
        ins = ", ".join(v.name for v in inputs)
        in_types = ", ".join(v.type for v in inputs)
        lines = []
        s = Scalar(self.dtype, lines)
        args = [f"%a{i}" for i in range(len(inputs))]
        result = body(s, args, "%acc")
        name = self._fresh()
        out = Value(name, out_shape, self.dtype)
        ins_clause = f"ins({ins} : {in_types}) " if inputs else ""
        self.emit(f"{name} = linalg.generic {{indexing_maps = [{', '.join(maps)}], "
                  f"iterator_types = [{iters}]}} {ins_clause}"
                  f"outs({init.name} : {init.type}) {{")
        block_args = ", ".join(f"{a}: {self.dtype}" for a in args + ["%acc"])
        self.body.append(f"  ^bb0({block_args}):")
        self.body.extend("  " + line for line in lines)
        self.body.append(f"    linalg.yield {result} : {self.dtype}")
        self.body.append(f"  }} -> {out.type}")
        return out

    def elementwise(self, fn, *inputs):
        """Element-wise op; inputs of lower rank broadcast along leading dims."""
        shape = max((v.shape for v in inputs), key=len)
        rank = len(shape)
        maps = []
        for v in inputs:
            offset = rank - len(v.shape)
            maps.append([f"d{offset + i}" for i in range(len(v.shape))])
        return self.generic(list(inputs), maps, shape,
                            [f"d{i}" for i in range(rank)],
                            ["parallel"] * rank,
                            lambda s, a, acc: fn(s, *a))

    def add(self, a, b):
        return self.elementwise(lambda s, x, y: s.add(x, y), a, b)

    def mul(self, a, b):
        return self.elementwise(lambda s, x, y: s.mul(x, y), a, b)

    def relu(self, x):
        return self.elementwise(lambda s, v: s.max(v, s.const(0.0)), x)

    def sigmoid(self, x):
        return self.elementwise(lambda s, v: s.sigmoid(v), x)

    def tanh(self, x):
        return self.elementwise(lambda s, v: s.tanh(v), x)

    def gelu(self, x):
        # tanh approximation of GELU.
        def body(s, v):
            cube = s.mul(s.mul(v, v), v)
            inner = s.mul(s.const(0.7978845608028654),
                          s.add(v, s.mul(s.const(0.044715), cube)))
            return s.mul(s.mul(s.const(0.5), v), s.add(s.const(1.0), s.tanh(inner)))
        return self.elementwise(body, x)

    def matmul(self, a, b):
        (m, k), (k2, n) = a.shape, b.shape
        assert k == k2, (a.shape, b.shape)
        init = self.full((m, n), 0.0)
        name = self._fresh()
        out = Value(name, (m, n), self.dtype)
        self.emit(f"{name} = linalg.matmul ins({a.name}, {b.name} : {a.type}, {b.type}) "
                  f"outs({init.name} : {init.type}) -> {out.type}")
        return out

    def einsum(self, spec, a, b):
        """A contraction `ab,bc->ac` written as a linalg.generic."""
        lhs, out = spec.split("->")
        sa, sb = lhs.split(",")
        letters = []
        for ch in sa + sb:
            if ch not in letters:
                letters.append(ch)
        dims = {ch: f"d{i}" for i, ch in enumerate(letters)}
        sizes = dict(zip(sa, a.shape))
        sizes.update(zip(sb, b.shape))
        iterators = ["parallel" if ch in out else "reduction" for ch in letters]
        return self.generic([a, b], [[dims[c] for c in sa], [dims[c] for c in sb]],
                            tuple(sizes[c] for c in out), [dims[c] for c in out],
                            iterators, lambda s, x, acc: s.add(acc, s.mul(x[0], x[1])))

    def reduce(self, x, axes, kind="sum"):
        """Reduces `axes` of x (dropping them)."""
        rank = len(x.shape)
        keep = [i for i in range(rank) if i not in axes]
        out_shape = tuple(x.shape[i] for i in keep)
        iterators = ["reduction" if i in axes else "parallel" for i in range(rank)]
        init = self.full(out_shape, 0.0 if kind == "sum" else -1e30)
        combine = (lambda s, a, acc: s.add(acc, a[0])) if kind == "sum" else \
            (lambda s, a, acc: s.max(acc, a[0]))
        return self.generic([x], [[f"d{i}" for i in range(rank)]], out_shape,
                            [f"d{i}" for i in keep], iterators, combine, init=init)

    def broadcast_to(self, x, shape, axes):
        """Broadcasts x along the new dimensions `axes` of `shape`."""
        rank = len(shape)
        src = [f"d{i}" for i in range(rank) if i not in axes]
        return self.generic([x], [src], tuple(shape), [f"d{i}" for i in range(rank)],
                            ["parallel"] * rank, lambda s, a, acc: a[0])

    def transpose(self, x, perm):
        shape = tuple(x.shape[p] for p in perm)
        init = self.empty(shape)
        name = self._fresh()
        out = Value(name, shape, self.dtype)
        self.emit(f"{name} = linalg.transpose ins({x.name} : {x.type}) "
                  f"outs({init.name} : {init.type}) permutation = "
                  f"[{', '.join(map(str, perm))}]")
        return out

    def reshape(self, x, shape, groups):
        """collapse_shape (fewer dims) or expand_shape (more dims)."""
        name = self._fresh()
        out = Value(name, shape, self.dtype)
        reassoc = ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups)
        if len(shape) < len(x.shape):
            self.emit(f"{name} = tensor.collapse_shape {x.name} [{reassoc}] : "
                      f"{x.type} into {out.type}")
        else:
            dims = ", ".join(map(str, shape))
            self.emit(f"{name} = tensor.expand_shape {x.name} [{reassoc}] "
                      f"output_shape [{dims}] : {x.type} into {out.type}")
        return out

    def slice(self, x, offsets, sizes):
        name = self._fresh()
        out = Value(name, sizes, self.dtype)
        ones = ", ".join("1" for _ in sizes)
        self.emit(f"{name} = tensor.extract_slice {x.name}[{', '.join(map(str, offsets))}] "
                  f"[{', '.join(map(str, sizes))}] [{ones}] : {x.type} to {out.type}")
        return out

    def pad(self, x, low, high, value=0.0):
        shape = tuple(d + l + h for d, l, h in zip(x.shape, low, high))
        cst = self.scalar_const(value)
        name = self._fresh()
        out = Value(name, shape, self.dtype)
        self.emit(f"{name} = tensor.pad {x.name} low[{', '.join(map(str, low))}] "
                  f"high[{', '.join(map(str, high))}] {{")
        self.body.append("  ^bb0(" + ", ".join(f"%i{i}: index" for i in range(len(low))) + "):")
        self.body.append(f"    tensor.yield {cst} : {self.dtype}")
        self.body.append(f"  }} : {x.type} to {out.type}")
        return out

    def conv2d(self, x, w, stride=1, padding=0):
        """NCHW x FCHW convolution (linalg.conv_2d_nchw_fchw)."""
        if padding:
            x = self.pad(x, [0, 0, padding, padding], [0, 0, padding, padding])
        n, c, h, wd = x.shape
        f, c2, kh, kw = w.shape
        assert c == c2, (x.shape, w.shape)
        oh, ow = (h - kh) // stride + 1, (wd - kw) // stride + 1
        init = self.full((n, f, oh, ow), 0.0)
        name = self._fresh()
        out = Value(name, (n, f, oh, ow), self.dtype)
        self.emit(f"{name} = linalg.conv_2d_nchw_fchw {{dilations = dense<1> : vector<2xi64>, "
                  f"strides = dense<{stride}> : vector<2xi64>}} "
                  f"ins({x.name}, {w.name} : {x.type}, {w.type}) "
                  f"outs({init.name} : {init.type}) -> {out.type}")
        return out

    def conv1d(self, x, w, padding=0):
        """NCW x FCW convolution written as a linalg.generic (stride 1)."""
        if padding:
            x = self.pad(x, [0, 0, padding], [0, 0, padding])
        n, c, length = x.shape
        f, _, k = w.shape
        out_len = length - k + 1
        # dims: n, f, x, c, k
        return self.generic([x, w], [["d0", "d3", "d2 + d4"], ["d1", "d3", "d4"]],
                            (n, f, out_len), ["d0", "d1", "d2"],
                            ["parallel", "parallel", "parallel", "reduction", "reduction"],
                            lambda s, a, acc: s.add(acc, s.mul(a[0], a[1])))

    def maxpool2d(self, x, kernel, stride, padding=0):
        if padding:
            # Inputs are post-ReLU (>= 0), so zero padding never wins the max.
            x = self.pad(x, [0, 0, padding, padding], [0, 0, padding, padding])
        n, c, h, wd = x.shape
        oh, ow = (h - kernel) // stride + 1, (wd - kernel) // stride + 1
        window = self.empty((kernel, kernel))
        init = self.full((n, c, oh, ow), -1e30)
        name = self._fresh()
        out = Value(name, (n, c, oh, ow), self.dtype)
        self.emit(f"{name} = linalg.pooling_nchw_max {{dilations = dense<1> : vector<2xi64>, "
                  f"strides = dense<{stride}> : vector<2xi64>}} "
                  f"ins({x.name}, {window.name} : {x.type}, {window.type}) "
                  f"outs({init.name} : {init.type}) -> {out.type}")
        return out

    def global_avgpool(self, x):
        n, c, h, w = x.shape
        total = self.reduce(x, [2, 3])
        return self.scale(total, 1.0 / (h * w))

    def scale(self, x, factor):
        return self.elementwise(lambda s, v: s.mul(v, s.const(factor)), x)

    # -- layers ---------------------------------------------------------------
    def dense(self, x, w, b=None):
        y = self.matmul(x, w)
        return self.add(y, b) if b is not None else y

    def softmax(self, x):
        """Softmax along the last dimension."""
        rank = len(x.shape)
        last = rank - 1
        m = self.reduce(x, [last], "max")
        z = self.generic([x, m], [[f"d{i}" for i in range(rank)],
                                  [f"d{i}" for i in range(last)]], x.shape,
                         [f"d{i}" for i in range(rank)], ["parallel"] * rank,
                         lambda s, a, acc: s.exp(s.sub(a[0], a[1])))
        total = self.reduce(z, [last])
        return self.generic([z, total], [[f"d{i}" for i in range(rank)],
                                         [f"d{i}" for i in range(last)]], x.shape,
                            [f"d{i}" for i in range(rank)], ["parallel"] * rank,
                            lambda s, a, acc: s.div(a[0], a[1]))

    def layernorm(self, x, gamma, beta, eps=1e-5):
        """Layer normalisation over the last dimension of a 2-D x."""
        n, d = x.shape
        mean = self.scale(self.reduce(x, [1]), 1.0 / d)
        centered = self.generic([x, mean], [["d0", "d1"], ["d0"]], x.shape, ["d0", "d1"],
                                ["parallel"] * 2, lambda s, a, acc: s.sub(a[0], a[1]))
        sq = self.elementwise(lambda s, v: s.mul(v, v), centered)
        var = self.scale(self.reduce(sq, [1]), 1.0 / d)
        normed = self.generic([centered, var], [["d0", "d1"], ["d0"]], x.shape,
                              ["d0", "d1"], ["parallel"] * 2,
                              lambda s, a, acc: s.mul(a[0], s.rsqrt(s.add(a[1], s.const(eps)))))
        return self.add(self.mul(normed, gamma), beta)

    def softmax_cross_entropy(self, logits, labels):
        """Mean over rows of -sum(labels * log_softmax(logits)); 0-d result."""
        n, c = logits.shape
        m = self.reduce(logits, [1], "max")
        z = self.generic([logits, m], [["d0", "d1"], ["d0"]], logits.shape, ["d0", "d1"],
                         ["parallel"] * 2, lambda s, a, acc: s.sub(a[0], a[1]))
        e = self.elementwise(lambda s, v: s.exp(v), z)
        lse = self.elementwise(lambda s, v: s.log(v), self.reduce(e, [1]))
        nll = self.generic([labels, z, lse], [["d0", "d1"], ["d0", "d1"], ["d0"]], (),
                           [], ["reduction"] * 2,
                           lambda s, a, acc: s.add(acc, s.mul(a[0], s.sub(a[2], a[1]))))
        return self.scale(nll, 1.0 / n)

    def mse(self, pred, target):
        """Mean squared error; 0-d result."""
        rank = len(pred.shape)
        idx = [f"d{i}" for i in range(rank)]
        total = self.generic([pred, target], [idx, idx], (), [], ["reduction"] * rank,
                             lambda s, a, acc: s.add(acc, s.mul(s.sub(a[0], a[1]),
                                                                s.sub(a[0], a[1]))))
        return self.scale(total, 1.0 / prod(pred.shape))

    # -- output ---------------------------------------------------------------
    def finish(self, loss):
        args = []
        for value, role in self.args:
            # tofu.name is the argument's name in weight and data files.
            name = value.name.lstrip("%")
            weight = ", tofu.weight" if role == "weight" else ""
            args.append(f'{value.name}: {value.type} {{tofu.name = "{name}"{weight}}}')
        lines = [f"func.func @{self.name}({', '.join(args)}) -> {loss.type} {{"]
        lines.extend(self.body)
        lines.append(f"  return {loss.name} : {loss.type}")
        lines.append("}")
        return "\n".join(lines) + "\n"
