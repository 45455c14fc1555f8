"""PyTorch twins of zoo models: the same function as the MLIR the zoo writes.

    /usr/bin/python3 -m tofu.twins check mlp --layers 2 --hidden 16 \\
        --tofu-opt build/bin/tofu-opt --tofu-run build/bin/tofu-run

A twin of `mlp`, `rnn` (`lstm`), `rnn-stacked`, `wresnet` or `transformer` takes the
weights in the zoo's layouts (a dense weight is (in, out) and is applied as
`x @ w + b`; a convolution weight is (out, in, kh, kw)) and computes the
zoo's loss with the zoo's constants: softmax cross-entropy
`-sum(labels * log_softmax(logits)) / batch` against the labels as given
(class probabilities, not class ids), or the mean squared error.

`build(name, options)` returns `(module, args)`: a `torch.nn.Module` whose
parameters are the zoo's weights under their argument names, and the
arguments of the zoo's `@forward` in order as `(name, shape)`. The module
is called with the non-weight arguments (input batch, then labels or
targets) in that order and returns the 0-d loss.

`initial_values(name, options)` reproduces the values that `tofu-run`'s
driver fills every argument with (the runtime's `tofu_fill_hash`), so that
a twin starts from exactly the weights and data of a `tofu-run` job; the
`check` command compares their losses step by step under SGD.

This module imports torch (and numpy) only inside its functions: the
`tofu` package itself stays standard-library only.
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

from tofu import cli, models

TWIN_MODELS = ("mlp", "rnn", "rnn-stacked", "wresnet", "transformer")


# -- the zoo side (standard library only) ----------------------------------
def resolve(name, options=None):
    """(canonical zoo name, every option of the builder with its value) for
    a zoo name such as `lstm` or `WResNet-50-4` and explicit `options`."""
    found = models.find_model(name)
    if found is None:
        raise ValueError(f"unknown zoo model '{name}'")
    model, name_defaults = found
    values = models.option_defaults(model, name_defaults)
    for key, value in (options or {}).items():
        if key not in values:
            raise ValueError(f"{model.name} has no option '{key}'")
        if value is not None:
            values[key] = value
    if model.name == "wresnet" and values.get("stages") is None:
        values["stages"] = list(models.WRESNET_STAGES[values["depth"]])
    if model.name == "transformer" and values.get("ffn") is None:
        values["ffn"] = 4 * values["hidden"]
    return model.name, values


def zoo_builder(name, options=None, dtype="f32"):
    """The zoo's FuncBuilder and loss for `name` with `options`."""
    canonical, values = resolve(name, options)
    return models.build(canonical, dtype, **values)


def zoo_args(name, options=None):
    """The arguments of the zoo's `@forward` in order: (name, shape)."""
    b, _ = zoo_builder(name, options)
    return [(v.name[1:], v.shape) for v, _ in b.args]


def zoo_roles(name, options=None):
    """The role of each argument of `@forward`: weight, input or label."""
    b, _ = zoo_builder(name, options)
    return {v.name[1:]: role for v, role in b.args}


# -- the values tofu-run starts from ------------------------------------------
_MASK = (1 << 64) - 1


def _splitmix(x):
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def weight_scale(shape):
    """The driver's range of a weight that no contraction reads:
    1/sqrt(fan-in), the fan-in being the number of elements over the
    largest dimension."""
    largest = max([1, *shape])
    return 1.0 / math.sqrt(max(1.0, float(math.prod(shape)) / float(largest)))


def hash_fill(shape, stream, scale, non_negative, seed=1, dtype="f64"):
    """The runtime's tofu_fill_hash of a whole tensor as a numpy array:
    element i (row-major) is u = splitmix64(base ^ i) >> 11 over 2^53,
    base = splitmix64(seed * 0x100000001b3 + stream); the value is u * scale
    or (2u - 1) * scale, rounded to f32 for an f32 tensor."""
    import numpy as np
    base = _splitmix((seed * 0x100000001B3 + stream) & _MASK)
    n = math.prod(shape)
    with np.errstate(over="ignore"):
        x = np.arange(n, dtype=np.uint64) ^ np.uint64(base)
        x = x + np.uint64(0x9E3779B97F4A7C15)
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    u = (x >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    values = u * scale if non_negative else (2.0 * u - 1.0) * scale
    values = values.reshape(shape)
    return values.astype(np.float32) if dtype == "f32" else values


def fan_ins(tofu_opt, step, timeout=600):
    """{argument index: fan-in} of the weights of the training step in the
    file `step`, as tofu-train-driver computes them (`--test-tofu-fan-in`);
    a weight without one is absent (the driver then uses weight_scale)."""
    proc = subprocess.run([tofu_opt, step, "--test-tofu-fan-in", "-o", os.devnull],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"{tofu_opt} --test-tofu-fan-in failed:\n{proc.stderr}")
    return {int(i): int(n) for i, n in
            re.findall(r"remark: argument (\d+): fan-in (\d+)", proc.stderr)}


def initial_values(name, options=None, dtype="f64", seed=1, fans=None):
    """{argument name: torch tensor} as tofu-run's driver fills the training
    step of the zoo model: argument i (its position in @forward, which
    tofu-autodiff and tofu-optimizer keep) is stream i + 1; weights are
    signed, in +-1/sqrt(fan-in) with the fan-ins `fans` of the driver
    (fan_ins) or weight_scale where it has none, inputs and labels in
    [0, 1)."""
    import torch
    roles = zoo_roles(name, options)
    values = {}
    for i, (arg, shape) in enumerate(zoo_args(name, options)):
        weight = roles[arg] == "weight"
        if not weight:
            scale = 1.0
        elif fans and i in fans:
            scale = 1.0 / math.sqrt(max(1.0, float(fans[i])))
        else:
            scale = weight_scale(shape)
        array = hash_fill(shape, i + 1, scale, not weight, seed, dtype)
        values[arg] = torch.from_numpy(array.copy())
    return values


# -- the twins ------------------------------------------------------------------
def _softmax_cross_entropy(torch, logits, labels):
    # The zoo: -sum(labels * (logsumexp - z)) with the row maximum
    # subtracted, times 1/batch.
    log_p = torch.log_softmax(logits, dim=1)
    return -(labels * log_p).sum() * (1.0 / logits.shape[0])


def _mse(pred, target):
    diff = pred - target
    return (diff * diff).sum() * (1.0 / pred.numel())


def mlp_logits(torch, p, o, x):
    """The logits of the zoo's MLP with weights `p` and options `o`."""
    layers = o["layers"]
    for i in range(layers):
        x = x @ p[f"w{i}"] + p[f"b{i}"]
        if i != layers - 1:
            x = torch.relu(x)
    return x


def _mlp(torch, p, o, x, labels):
    return _softmax_cross_entropy(torch, mlp_logits(torch, p, o, x), labels)


def _mlp_weights(o):
    shapes, width = [], o["features"]
    for i in range(o["layers"]):
        out = o["classes"] if i == o["layers"] - 1 else o["hidden"]
        shapes += [(f"w{i}", (width, out)), (f"b{i}", (out,))]
        width = out
    return shapes


def _rnn(torch, p, o, xs, ys):
    hidden, steps = o["hidden"], o["steps"]
    zeros = xs.new_zeros((o["batch"], hidden))
    state = [(zeros, zeros) for _ in range(o["layers"])]
    loss = None
    for t in range(steps):
        x = xs[t]
        for layer in range(o["layers"]):
            h, c = state[layer]
            gates = x @ p[f"wx{layer}"] + h @ p[f"wh{layer}"] + p[f"b{layer}"]
            i_g, f_g, g_g, o_g = gates.split(hidden, dim=1)
            c = torch.sigmoid(f_g) * c + torch.sigmoid(i_g) * torch.tanh(g_g)
            h = torch.sigmoid(o_g) * torch.tanh(c)
            state[layer] = (h, c)
            x = h
        step_loss = _mse(x, ys[t]) * (1.0 / steps)
        loss = step_loss if loss is None else loss + step_loss
    return loss


def _rnn_stacked(torch, p, o, xs, ys):
    # The zoo's (width, 4, H) weights are the (width, 4H) ones of `rnn`.
    flat = {k: v.reshape(v.shape[0], -1) if k[:2] in ("wx", "wh") else
            v.reshape(-1) for k, v in p.items()}
    return _rnn(torch, flat, o, xs, ys)


def _rnn_stacked_weights(o):
    return [(name, shape[:-1] + (4, o["hidden"])) for name, shape in
            _rnn_weights(o)]


def _rnn_weights(o):
    shapes = []
    for layer in range(o["layers"]):
        width = o["embed"] if layer == 0 else o["hidden"]
        shapes += [(f"wx{layer}", (width, 4 * o["hidden"])),
                   (f"wh{layer}", (o["hidden"], 4 * o["hidden"])),
                   (f"b{layer}", (4 * o["hidden"],))]
    return shapes


def _wresnet_plan(o):
    """The convolutions of the zoo's Wide ResNet in the order it creates
    them: (name, shape, stride, padding), plus the stem kind and the
    classifier's input channels."""
    convs = []

    def conv(cin, out, k, stride=1, pad=0):
        convs.append((f"conv{len(convs) + 1}", (out, cin, k, k), stride, pad))

    base = 64 * o["width"]
    conv(3, base, 7, 2, 3) if o["image"] >= 64 else conv(3, base, 3, 1, 1)
    channels = base
    for stage, n in enumerate(o["stages"]):
        mid, out = base * 2 ** stage, 4 * base * 2 ** stage
        for i in range(n):
            stride = 2 if stage > 0 and i == 0 else 1
            conv(channels, mid, 1)
            conv(mid, mid, 3, stride, 1)
            conv(mid, out, 1)
            if stride != 1 or channels != out:
                conv(channels, out, 1, stride)
            channels = out
    return convs, channels


def _wresnet_weights(o):
    convs, channels = _wresnet_plan(o)
    return [(n, s) for n, s, _, _ in convs] + [
        ("fc_w", (channels, o["classes"])), ("fc_b", (o["classes"],))]


def _wresnet(torch, p, o, x, labels):
    F = torch.nn.functional
    convs, _ = _wresnet_plan(o)
    it = iter(convs)

    def conv(x):
        name, _, stride, pad = next(it)
        return F.conv2d(x, p[name], stride=stride, padding=pad)

    x = torch.relu(conv(x))
    if o["image"] >= 64:
        # The zoo pads with zeros, which never win after the ReLU.
        x = F.max_pool2d(F.pad(x, (1, 1, 1, 1)), 3, 2)
    base, channels = 64 * o["width"], 64 * o["width"]
    for stage, n in enumerate(o["stages"]):
        out = 4 * base * 2 ** stage
        for i in range(n):
            stride = 2 if stage > 0 and i == 0 else 1
            h = torch.relu(conv(x))
            h = torch.relu(conv(h))
            h = conv(h)
            shortcut = conv(x) if (stride != 1 or channels != out) else x
            x = torch.relu(h + shortcut)
            channels = out
    x = x.sum(dim=(2, 3)) * (1.0 / (x.shape[2] * x.shape[3]))
    return _softmax_cross_entropy(torch, x @ p["fc_w"] + p["fc_b"], labels)


_TRANSFORMER_PARAMS = ["wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "ln1_g",
                       "ln1_b", "w1", "b1", "w2", "b2", "ln2_g", "ln2_b"]


def _transformer_weights(o):
    hidden, ffn = o["hidden"], o["ffn"]
    shape = {"w1": (hidden, ffn), "b1": (ffn,), "w2": (ffn, hidden)}
    for n in ("wq", "wk", "wv", "wo"):
        shape[n] = (hidden, hidden)
    return [(f"l{l}_{n}", shape.get(n, (hidden,)))
            for l in range(o["layers"]) for n in _TRANSFORMER_PARAMS]


def _layernorm(torch, x, gamma, beta, eps=1e-5):
    d = x.shape[1]
    centered = x - x.sum(dim=1, keepdim=True) * (1.0 / d)
    var = (centered * centered).sum(dim=1, keepdim=True) * (1.0 / d)
    return centered * torch.rsqrt(var + eps) * gamma + beta


def _gelu_tanh(torch, v):
    inner = 0.7978845608028654 * (v + 0.044715 * (v * v * v))
    return 0.5 * v * (1.0 + torch.tanh(inner))


def _transformer(torch, p, o, x, target):
    batch, seq, heads, hidden = o["batch"], o["seq"], o["heads"], o["hidden"]
    dh, tokens = hidden // heads, batch * seq

    def split_heads(t):
        return t.reshape(batch, seq, heads, dh).permute(0, 2, 1, 3)

    for l in range(o["layers"]):
        w = {n: p[f"l{l}_{n}"] for n in _TRANSFORMER_PARAMS}
        q = split_heads(x @ w["wq"] + w["bq"])
        k = split_heads(x @ w["wk"] + w["bk"])
        v = split_heads(x @ w["wv"] + w["bv"])
        scores = (q @ k.transpose(2, 3)) * dh ** -0.5
        ctx = torch.softmax(scores, dim=-1) @ v
        ctx = ctx.permute(0, 2, 1, 3).reshape(tokens, hidden)
        x = _layernorm(torch, x + (ctx @ w["wo"] + w["bo"]), w["ln1_g"], w["ln1_b"])
        h = _gelu_tanh(torch, x @ w["w1"] + w["b1"]) @ w["w2"] + w["b2"]
        x = _layernorm(torch, x + h, w["ln2_g"], w["ln2_b"])
    return _mse(x, target)


_TWINS = {"mlp": (_mlp, _mlp_weights), "rnn": (_rnn, _rnn_weights),
          "rnn-stacked": (_rnn_stacked, _rnn_stacked_weights),
          "wresnet": (_wresnet, _wresnet_weights),
          "transformer": (_transformer, _transformer_weights)}


def twin_weights(name, options=None):
    """The twin's weights in order, (name, shape): those of the zoo."""
    canonical, values = resolve(name, options)
    if canonical not in _TWINS:
        raise ValueError(f"no PyTorch twin of '{canonical}'; twins: "
                         + ", ".join(TWIN_MODELS))
    return _TWINS[canonical][1](values)


def build(name, options=None, dtype="f32"):
    """(module, args): the twin of zoo model `name` with `options` as a
    torch.nn.Module whose parameters (uninitialized; see initial_values
    and load) are named and shaped as the zoo's weights, and the zoo's
    `@forward` arguments in order as (name, shape). The module's forward
    takes the non-weight arguments in that order and returns the loss."""
    import torch
    canonical, values = resolve(name, options)
    weights = twin_weights(canonical, values)
    args = zoo_args(canonical, values)
    roles = zoo_roles(canonical, values)
    zoo_weights = [(n, s) for n, s in args if roles[n] == "weight"]
    if zoo_weights != weights:
        raise AssertionError(f"the twin of {canonical} has weights {weights}, "
                             f"the zoo {zoo_weights}")
    forward = _TWINS[canonical][0]
    torch_dtype = torch.float64 if dtype == "f64" else torch.float32

    class Twin(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.model = canonical
            self.options = values
            self.weight_names = [n for n, _ in weights]
            self.data_names = [n for n, _ in args if roles[n] != "weight"]
            self.params = torch.nn.ParameterDict({
                n: torch.nn.Parameter(torch.empty(s, dtype=torch_dtype))
                for n, s in weights})

        def forward(self, *data):
            return forward(torch, self.params, self.options, *data)

        def load(self, values):
            """Copies {name: tensor} into the weights of the same name."""
            with torch.no_grad():
                for n in self.weight_names:
                    self.params[n].copy_(values[n])
            return self

    return Twin(), args


# -- the check against tofu-run --------------------------------------------------
def _run(cmd, timeout):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n"
                           f"{done.stderr[-3000:]}")
    return done.stdout


def _signature_shapes(step_text, func):
    """The tensor shapes of @func's arguments in a printed module."""
    start = step_text.find(f"func.func @{func}(")
    if start < 0:
        raise RuntimeError(f"no @{func} in the training step")
    depth, i = 0, start + len(f"func.func @{func}")
    for j in range(i, len(step_text)):
        depth += {"(": 1, ")": -1}.get(step_text[j], 0)
        if depth == 0:
            signature = step_text[i:j + 1]
            break
    return [tuple(int(d) for d in dims.split("x") if d) for dims in
            re.findall(r"%[\w.]+: tensor<((?:\d+x)*)f(?:32|64)>", signature)]


def check(name, options, tofu_opt, tofu_run, steps=4, lr=0.01, rtol=1e-8,
          timeout=600, out=sys.stdout):
    """Trains the f64 zoo model with SGD for `steps` steps in tofu-run and
    the twin from the same initial values in PyTorch; prints the losses and
    returns the largest relative difference."""
    import torch
    canonical, values = resolve(name, options)
    b, loss = models.build(canonical, "f64", **values)
    with tempfile.TemporaryDirectory() as tmp:
        fwd = os.path.join(tmp, "fwd.mlir")
        step = os.path.join(tmp, "step.mlir")
        with open(fwd, "w") as f:
            f.write(b.finish(loss))
        _run([tofu_opt, fwd, "--tofu-autodiff",
              f"--tofu-optimizer=kind=sgd lr={lr!r}", "-o", step], timeout)
        with open(step) as f:
            step_text = f.read()
        fans = fan_ins(tofu_opt, step, timeout)
        printed = _run([tofu_run, step, "--steps", str(steps)], timeout)
    # The driver fills argument i with stream i + 1: the step must keep the
    # forward's arguments first and in order.
    args = zoo_args(canonical, values)
    shapes = _signature_shapes(step_text, "forward_train")
    if shapes[:len(args)] != [s for _, s in args]:
        raise RuntimeError("the training step does not start with the "
                           "forward's arguments in order")
    tofu_losses = [float(v) for v in
                   re.findall(r"^step \d+: loss (\S+)", printed, re.M)]
    if len(tofu_losses) != steps:
        raise RuntimeError(f"tofu-run printed {len(tofu_losses)} losses:\n"
                           + printed)

    twin, _ = build(canonical, values, "f64")
    init = initial_values(canonical, values, "f64", fans=fans)
    twin.load(init)
    data = [init[n] for n in twin.data_names]
    worst = 0.0
    for s in range(steps):
        twin.zero_grad(set_to_none=True)
        value = twin(*data)
        value.backward()
        with torch.no_grad():
            for p in twin.parameters():
                p -= lr * p.grad
        ours, theirs = value.item(), tofu_losses[s]
        rel = abs(ours - theirs) / max(abs(theirs), 1e-300)
        if math.isnan(rel):
            rel = math.inf  # max() would drop a NaN
        worst = max(worst, rel)
        out.write(f"{canonical} step {s}: tofu-run {theirs:.9g} "
                  f"twin {ours:.17g} rel {rel:.2e}\n")
    verdict = "MATCH" if worst <= rtol else "MISMATCH"
    out.write(f"{canonical}: {verdict} over {steps} SGD steps "
              f"(largest relative difference {worst:.2e}, tolerance "
              f"{rtol:.0e})\n")
    return worst


def _parse_model_options(prog, name, rest, extra):
    """Parses the zoo options of model `name` (as `tofu.models NAME` takes
    them) and the options that `extra(parser)` adds."""
    found = models.find_model(name)
    if found is None:
        raise SystemExit(f"{prog}: unknown model '{name}'")
    model, name_defaults = found
    parser = models.model_parser(prog, name, model, name_defaults)
    extra(parser)
    args = parser.parse_args(rest)
    options = {k: getattr(args, k) for k in model.options
               if getattr(args, k, None) is not None}
    if isinstance(options.get("stages"), str):
        options["stages"] = [int(s) for s in options["stages"].split(",")]
    problem = models.options_problem(model, name_defaults, options)
    if problem:
        raise SystemExit(f"{prog} {name}: error: {problem}")
    return name, options, args


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = "python3 -m tofu.twins"
    if len(argv) < 2 or argv[0] != "check":
        sys.stderr.write(f"usage: {prog} check MODEL [model options] "
                         "--tofu-opt PATH --tofu-run PATH [--train-steps N]\n"
                         f"twins: {', '.join(TWIN_MODELS)}\n")
        return 2

    def extra(parser):
        group = parser.add_argument_group("check")
        group.add_argument("--tofu-opt", default="tofu-opt")
        group.add_argument("--tofu-run", default="tofu-run")
        group.add_argument("--train-steps", type=int, default=4,
                           help="losses compared: the initial one, then one "
                                "per SGD step (default 4)")
        group.add_argument("--lr", type=float, default=0.01)
        group.add_argument("--rtol", type=float, default=1e-8,
                           help="largest relative difference (tofu-run "
                                "prints 9 significant digits; default 1e-8)")

    name, options, args = _parse_model_options(f"{prog} check", argv[1],
                                               argv[2:], extra)
    worst = check(name, options, args.tofu_opt, args.tofu_run, args.train_steps,
                  args.lr, args.rtol)
    return 0 if worst <= args.rtol else 1


if __name__ == "__main__":
    cli.run_main(main)
