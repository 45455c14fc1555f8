"""A Python DSL for TDL descriptions, in the style of the Tofu paper (§4).

An operator is a Python function of its inputs that returns a lambda over
the output's index variables; reductions are `Sum/Max/Min/Prod(lambda ...)`:

    @op("mxnet.dot")
    def dot(a, b):
        return lambda i, j: Sum(lambda k: a[i, k] * b[k, j])

    print(dot.tdl)            # (a, b) -> (i, j) = sum(k) a[i, k] * b[k, j]
    print(library([dot]))     # a .tdl library, as tofu-opt --tdl-attach reads

Index arithmetic allows `+`, `-`, `*` by integers and `//` (floordiv);
`Opaque("name", ...)` is an opaque function of tensor regions (`x[i, :]`).
"""

import inspect


def _wrap(value):
    return value if isinstance(value, Expr) else Const(value)


class Expr:
    """A node of a TDL expression; prints in TDL syntax."""

    prec = 3

    def _bin(self, op, other, prec, swap=False):
        lhs, rhs = (_wrap(other), self) if swap else (self, _wrap(other))
        return Binary(op, lhs, rhs, prec)

    def __add__(self, o): return self._bin("+", o, 1)
    def __radd__(self, o): return self._bin("+", o, 1, True)
    def __sub__(self, o): return self._bin("-", o, 1)
    def __rsub__(self, o): return self._bin("-", o, 1, True)
    def __mul__(self, o): return self._bin("*", o, 2)
    def __rmul__(self, o): return self._bin("*", o, 2, True)
    def __truediv__(self, o): return self._bin("/", o, 2)
    def __floordiv__(self, o): return self._bin("floordiv", o, 2)
    def __mod__(self, o): return self._bin("mod", o, 2)
    def __neg__(self): return Call("-", [self], prefix=True)


class Const(Expr):
    def __init__(self, value):
        self.value = value

    def __str__(self):
        return str(self.value)


class Var(Expr):
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return self.name


class Binary(Expr):
    def __init__(self, op, lhs, rhs, prec):
        self.op, self.lhs, self.rhs, self.prec = op, lhs, rhs, prec

    def __str__(self):
        def side(e, right):
            text = str(e)
            if e.prec < self.prec or (right and e.prec == self.prec and
                                      self.op in "-/"):
                return f"({text})"
            return text
        return f"{side(self.lhs, False)} {self.op} {side(self.rhs, True)}"


class Call(Expr):
    def __init__(self, name, args, prefix=False):
        self.name, self.args, self.prefix = name, args, prefix

    def __str__(self):
        if self.prefix:
            arg = self.args[0]
            return f"-({arg})" if arg.prec < 3 else f"-{arg}"
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


class Access(Expr):
    def __init__(self, tensor, indices):
        self.tensor, self.indices = tensor, indices

    def __str__(self):
        parts = [":" if isinstance(i, slice) else str(_wrap(i)) for i in self.indices]
        return f"{self.tensor}[{', '.join(parts)}]"


class Tensor:
    """An input of the operator; indexing it is an access."""

    def __init__(self, name):
        self.name = name

    def __getitem__(self, index):
        index = index if isinstance(index, tuple) else (index,)
        return Access(self.name, index)

    def __str__(self):
        return self.name


def _params(fn):
    return list(inspect.signature(fn).parameters)


class Reduce(Expr):
    prec = 0  # always parenthesised inside a larger expression

    def __init__(self, kind, fn):
        self.kind = kind
        self.vars = _params(fn)
        self.body = fn(*[Var(v) for v in self.vars])

    def __str__(self):
        return f"{self.kind}({', '.join(self.vars)}) {_wrap(self.body)}"


def Sum(fn): return Reduce("sum", fn)
def Max(fn): return Reduce("max", fn)
def Min(fn): return Reduce("min", fn)
def Prod(fn): return Reduce("prod", fn)


def Opaque(name, *args):
    return Call(name, list(args))


class Op:
    """A described operator: `.tdl` is its description in TDL syntax."""

    def __init__(self, name, fn):
        self.name = name
        inputs = _params(fn)
        outputs = fn(*[Tensor(n) for n in inputs])
        outputs = outputs if isinstance(outputs, (tuple, list)) else [outputs]
        parts = []
        for lam in outputs:
            out_vars = _params(lam)
            body = _wrap(lam(*[Var(v) for v in out_vars]))
            parts.append(f"({', '.join(out_vars)}) = {body}")
        self.tdl = f"({', '.join(inputs)}) -> " + "; ".join(parts)


def op(name):
    """Decorator: `@op("mxnet.dot")` turns a function into an `Op`."""
    return lambda fn: Op(name, fn)


def library(ops, header=None):
    """The `.tdl` library text of `ops`."""
    lines = [f"# {line}" for line in (header or "").splitlines()]
    for o in ops:
        lines += [f"op {o.name} {{", f"  {o.tdl}", "}", ""]
    return "\n".join(lines)
