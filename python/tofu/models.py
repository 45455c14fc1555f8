"""The Tofu-MLIR model zoo: forward models as linalg-on-tensors MLIR.

    python3 -m tofu.models NAME [options] [-o FILE]
    python3 -m tofu.models table2          # weight sizes next to Tofu's Table 2
    python3 -m tofu.models list

Every model is one `func.func @forward` whose arguments are the weights
(marked `{tofu.weight}`), the input batch and the labels, and whose result is
a scalar loss (`tensor<f32>`): softmax cross-entropy for classifiers, mean
squared error for the RNN and the Transformer.  Names such as `RNN-10-8K` and
`WResNet-152-10` select the configurations of the Tofu paper.
"""

import argparse
import re
import sys
from math import prod

from tofu.ir import FuncBuilder


# -- MLP ----------------------------------------------------------------------
def mlp(b, layers=3, hidden=256, batch=32, features=784, classes=10):
    x = b.input("x", (batch, features))
    y = b.label("labels", (batch, classes))
    width = features
    for i in range(layers):
        out = classes if i == layers - 1 else hidden
        w = b.weight(f"w{i}", (width, out))
        bias = b.weight(f"b{i}", (out,))
        x = b.dense(x, w, bias)
        if i != layers - 1:
            x = b.relu(x)
        width = out
    return b.softmax_cross_entropy(x, y)


# -- RNN (stacked LSTM, unrolled) -----------------------------------------------
def lstm_cell(b, x, h, c, wx, wh, bias, hidden):
    gates = b.add(b.add(b.matmul(x, wx), b.matmul(h, wh)), bias)
    batch = x.shape[0]
    part = [b.slice(gates, (0, i * hidden), (batch, hidden)) for i in range(4)]
    i_gate, f_gate = b.sigmoid(part[0]), b.sigmoid(part[1])
    g_gate, o_gate = b.tanh(part[2]), b.sigmoid(part[3])
    c_next = b.add(b.mul(f_gate, c), b.mul(i_gate, g_gate))
    h_next = b.mul(o_gate, b.tanh(c_next))
    return h_next, c_next


def rnn(b, layers=2, hidden=64, steps=20, batch=8, embed=1024):
    """L LSTM layers of hidden size H over `steps` embedded inputs; MSE loss
    of the top layer's outputs.  No embedding table and no classifier head."""
    xs = b.input("x", (steps, batch, embed))
    ys = b.label("targets", (steps, batch, hidden))
    params = []
    for layer in range(layers):
        width = embed if layer == 0 else hidden
        params.append((b.weight(f"wx{layer}", (width, 4 * hidden)),
                       b.weight(f"wh{layer}", (hidden, 4 * hidden)),
                       b.weight(f"b{layer}", (4 * hidden,))))
    zeros = b.full((batch, hidden), 0.0)
    state = [(zeros, zeros) for _ in range(layers)]
    loss = None
    for t in range(steps):
        x = b.reshape(b.slice(xs, (t, 0, 0), (1, batch, embed)), (batch, embed), [[0, 1], [2]])
        for layer, (wx, wh, bias) in enumerate(params):
            h, c = lstm_cell(b, x, *state[layer], wx, wh, bias, hidden)
            state[layer] = (h, c)
            x = h
        y = b.reshape(b.slice(ys, (t, 0, 0), (1, batch, hidden)), (batch, hidden), [[0, 1], [2]])
        step_loss = b.scale(b.mse(x, y), 1.0 / steps)
        loss = step_loss if loss is None else b.add(loss, step_loss)
    return loss


# -- Wide ResNet ------------------------------------------------------------------
WRESNET_STAGES = {50: [3, 4, 6, 3], 101: [3, 4, 23, 3], 152: [3, 8, 36, 3]}


def wresnet(b, depth=50, width=1, batch=8, image=224, classes=1000, stages=None):
    """Bottleneck ResNet whose every convolution has W times the channels."""
    blocks = stages or WRESNET_STAGES[depth]
    x = b.input("x", (batch, 3, image, image))
    y = b.label("labels", (batch, classes))
    count = [0]

    def conv(x, out, k, stride=1, pad=0):
        count[0] += 1
        w = b.weight(f"conv{count[0]}", (out, x.shape[1], k, k))
        return b.conv2d(x, w, stride, pad)

    base = 64 * width
    if image >= 64:
        x = b.relu(conv(x, base, 7, 2, 3))
        x = b.maxpool2d(x, 3, 2, 1)
    else:
        x = b.relu(conv(x, base, 3, 1, 1))
    channels = base
    for stage, n in enumerate(blocks):
        mid = base * 2 ** stage
        out = 4 * mid
        for i in range(n):
            stride = 2 if stage > 0 and i == 0 else 1
            h = b.relu(conv(x, mid, 1))
            h = b.relu(conv(h, mid, 3, stride, 1))
            h = conv(h, out, 1)
            shortcut = conv(x, out, 1, stride) if (stride != 1 or channels != out) else x
            x = b.relu(b.add(h, shortcut))
            channels = out
    x = b.global_avgpool(x)
    logits = b.dense(x, b.weight("fc_w", (channels, classes)), b.weight("fc_b", (classes,)))
    return b.softmax_cross_entropy(logits, y)


# -- small conv1d network ---------------------------------------------------------
def conv1d_net(b, batch=4, channels=8, length=32, filters=16, layers=2, kernel=3, classes=4):
    x = b.input("x", (batch, channels, length))
    y = b.label("labels", (batch, classes))
    for i in range(layers):
        w = b.weight(f"conv{i}", (filters, x.shape[1], kernel))
        x = b.relu(b.conv1d(x, w, padding=kernel // 2))
    pooled = b.scale(b.reduce(x, [2]), 1.0 / x.shape[2])
    logits = b.dense(pooled, b.weight("fc_w", (filters, classes)), b.weight("fc_b", (classes,)))
    return b.softmax_cross_entropy(logits, y)


# -- Transformer encoder (BERT) ---------------------------------------------------
def transformer(b, layers=24, hidden=1024, heads=16, seq=512, batch=1, ffn=None):
    """Post-LN encoder layers on an embedded input; MSE loss of the output."""
    ffn = ffn or 4 * hidden
    tokens = batch * seq
    dh = hidden // heads
    x = b.input("x", (tokens, hidden))
    target = b.label("target", (tokens, hidden))

    def split_heads(t):
        t = b.reshape(t, (batch, seq, heads, dh), [[0, 1], [2, 3]])
        return b.transpose(t, [0, 2, 1, 3])

    for l in range(layers):
        p = {name: b.weight(f"l{l}_{name}", shape) for name, shape in [
            ("wq", (hidden, hidden)), ("bq", (hidden,)), ("wk", (hidden, hidden)),
            ("bk", (hidden,)), ("wv", (hidden, hidden)), ("bv", (hidden,)),
            ("wo", (hidden, hidden)), ("bo", (hidden,)), ("ln1_g", (hidden,)),
            ("ln1_b", (hidden,)), ("w1", (hidden, ffn)), ("b1", (ffn,)),
            ("w2", (ffn, hidden)), ("b2", (hidden,)), ("ln2_g", (hidden,)),
            ("ln2_b", (hidden,))]}
        q = split_heads(b.dense(x, p["wq"], p["bq"]))
        k = split_heads(b.dense(x, p["wk"], p["bk"]))
        v = split_heads(b.dense(x, p["wv"], p["bv"]))
        scores = b.scale(b.einsum("bhsd,bhtd->bhst", q, k), dh ** -0.5)
        ctx = b.einsum("bhst,bhtd->bhsd", b.softmax(scores), v)
        ctx = b.reshape(b.transpose(ctx, [0, 2, 1, 3]), (tokens, hidden), [[0, 1], [2, 3]])
        x = b.layernorm(b.add(x, b.dense(ctx, p["wo"], p["bo"])), p["ln1_g"], p["ln1_b"])
        h = b.dense(b.gelu(b.dense(x, p["w1"], p["b1"])), p["w2"], p["b2"])
        x = b.layernorm(b.add(x, h), p["ln2_g"], p["ln2_b"])
    return b.mse(x, target)


# -- AlexNet and VGG-16 (the SOYBEAN models) --------------------------------------
def _classifier(b, x, sizes, classes):
    x = b.reshape(x, (x.shape[0], prod(x.shape[1:])), [[0], [1, 2, 3]])
    for i, out in enumerate(sizes + [classes]):
        x = b.dense(x, b.weight(f"fc{i}_w", (x.shape[1], out)), b.weight(f"fc{i}_b", (out,)))
        if i != len(sizes):
            x = b.relu(x)
    return x


def alexnet(b, batch=8, image=224, classes=1000, width=1, narrow=1, fc=4096):
    x = b.input("x", (batch, 3, image, image))
    y = b.label("labels", (batch, classes))
    cfg = [(64, 11, 4, 2, True), (192, 5, 1, 2, True), (384, 3, 1, 1, False),
           (256, 3, 1, 1, False), (256, 3, 1, 1, True)]
    for i, (out, k, stride, pad, pool) in enumerate(cfg):
        w = b.weight(f"conv{i}", (out * width // narrow, x.shape[1], k, k))
        x = b.relu(b.conv2d(x, w, stride, pad))
        if pool:
            x = b.maxpool2d(x, 3, 2)
    return b.softmax_cross_entropy(_classifier(b, x, [fc, fc], classes), y)


def vgg16(b, batch=8, image=224, classes=1000, width=1, narrow=1, fc=4096):
    x = b.input("x", (batch, 3, image, image))
    y = b.label("labels", (batch, classes))
    cfg = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M",
           512, 512, 512, "M"]
    count = 0
    for item in cfg:
        if item == "M":
            x = b.maxpool2d(x, 2, 2)
            continue
        w = b.weight(f"conv{count}", (item * width // narrow, x.shape[1], 3, 3))
        count += 1
        x = b.relu(b.conv2d(x, w, 1, 1))
    return b.softmax_cross_entropy(_classifier(b, x, [fc, fc], classes), y)


# -- names and CLI ------------------------------------------------------------------
def _size(text):
    text = text.upper()
    return int(text[:-1]) * 1024 if text.endswith("K") else int(text)


def parse_name(name):
    """Maps a model name to (builder, defaults)."""
    lower = name.lower()
    m = re.fullmatch(r"rnn-(\d+)-(\d+k?)", lower)
    if m:
        return rnn, {"layers": int(m.group(1)), "hidden": _size(m.group(2))}
    m = re.fullmatch(r"wresnet-(\d+)-(\d+)", lower)
    if m:
        return wresnet, {"depth": int(m.group(1)), "width": int(m.group(2))}
    fixed = {"mlp": (mlp, {}), "rnn": (rnn, {}), "lstm": (rnn, {}),
             "wresnet": (wresnet, {}), "conv1d": (conv1d_net, {}),
             "transformer": (transformer, {}), "bert-large": (transformer, {}),
             "alexnet": (alexnet, {}), "vgg16": (vgg16, {}), "vgg-16": (vgg16, {})}
    if lower not in fixed:
        raise SystemExit(f"unknown model '{name}'; try: python3 -m tofu.models list")
    return fixed[lower]


def build(name, dtype="f32", **options):
    builder, defaults = parse_name(name)
    defaults.update({k: v for k, v in options.items() if v is not None})
    b = FuncBuilder("forward", dtype)
    loss = builder(b, **defaults)
    return b, loss


def weight_gib(b):
    """Weight + gradient + optimizer history, fp32, in GiB (Tofu §7.1)."""
    return 3 * 4 * sum(prod(w.shape) for w in b.weights()) / 2 ** 30


TABLE2 = {
    "RNN-6-4K": 8.4, "RNN-8-4K": 11.4, "RNN-10-4K": 14.4,
    "RNN-6-6K": 18.6, "RNN-8-6K": 28.5, "RNN-10-6K": 32.1,
    "RNN-6-8K": 33.0, "RNN-8-8K": 45.3, "RNN-10-8K": 57.0,
    "WResNet-50-4": 4.2, "WResNet-101-4": 7.8, "WResNet-152-4": 10.5,
    "WResNet-50-6": 9.6, "WResNet-101-6": 17.1, "WResNet-152-6": 23.4,
    "WResNet-50-8": 17.1, "WResNet-101-8": 30.6, "WResNet-152-8": 41.7,
    "WResNet-50-10": 26.7, "WResNet-101-10": 47.7, "WResNet-152-10": 65.1,
}


def table2_rows():
    """(name, ours GiB, paper GB, ratio) for every row of Table 2.  Weights do
    not depend on batch, steps or image size, so the smallest are used."""
    rows = []
    for name, paper in TABLE2.items():
        small = {"batch": 1, "steps": 1} if name.startswith("RNN") else \
            {"batch": 1, "image": 32}
        b, _ = build(name, **small)
        ours = weight_gib(b)
        rows.append((name, ours, paper, ours / paper))
    return rows


def print_table2(out):
    out.write("| model | ours (3 x fp32 weights, GiB) | Tofu Table 2 | ratio |\n")
    out.write("|---|---|---|---|\n")
    for name, ours, paper, ratio in table2_rows():
        flag = "  <- outside 5%: inconsistent with its row and column" if abs(ratio - 1) > 0.05 else ""
        out.write(f"| {name} | {ours:.2f} | {paper} | {ratio:.3f}{flag} |\n")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python3 -m tofu.models",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("name", help="model name, 'table2' or 'list'")
    parser.add_argument("-o", "--output", help="output file (default: stdout)")
    parser.add_argument("--dtype", default="f32", choices=["f32", "f64"])
    for opt in ["batch", "layers", "hidden", "steps", "embed", "depth", "width", "image",
                "classes", "heads", "seq", "ffn", "features", "channels", "length",
                "filters", "kernel", "narrow", "fc"]:
        parser.add_argument(f"--{opt}", type=int)
    parser.add_argument("--stages", help="WResNet blocks per stage, e.g. 1,1")
    args = parser.parse_args(argv)

    if args.name == "list":
        print("mlp rnn|RNN-L-H wresnet|WResNet-D-W conv1d transformer|bert-large "
              "alexnet vgg16")
        return 0
    if args.name == "table2":
        print_table2(sys.stdout)
        return 0
    options = {k: v for k, v in vars(args).items()
               if k not in ("name", "output", "dtype", "stages") and v is not None}
    if args.stages:
        options["stages"] = [int(s) for s in args.stages.split(",")]
    try:
        b, loss = build(args.name, args.dtype, **options)
    except TypeError as err:
        raise SystemExit(f"error: {err}")
    text = b.finish(loss)
    if args.output:
        with open(args.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
