"""The Tofu-MLIR model zoo: forward models as linalg-on-tensors MLIR.

    python3 -m tofu.models NAME [options] [-o FILE]
    python3 -m tofu.models NAME --help     # the options of model NAME
    python3 -m tofu.models list            # the models, one line each
    python3 -m tofu.models table2          # weight sizes next to Tofu's Table 2

Every model is one `func.func @forward` whose arguments are the weights
(marked `{tofu.weight}`), the input batch and the labels, and whose result is
a scalar loss (`tensor<f32>`): softmax cross-entropy for classifiers, mean
squared error for the RNN and the Transformer.  Names such as `RNN-10-8K` and
`WResNet-152-10` select the configurations of the Tofu paper.
"""

import argparse
import difflib
import inspect
import re
import sys
from math import prod

from tofu import cli
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
    return _lstm_state(b, part, c)


def lstm_cell_stacked(b, x, h, c, wx, wh, bias, hidden):
    """The cell with its gates as a dimension: (batch, 4, hidden) products
    of weights (width, 4, hidden)."""
    batch = x.shape[0]
    gates = b.add(b.add(b.einsum("bk,kgh->bgh", x, wx),
                        b.einsum("bk,kgh->bgh", h, wh)),
                  b.broadcast_to(bias, (batch, 4, hidden), [0]))
    part = [b.reshape(b.slice(gates, (0, i, 0), (batch, 1, hidden)),
                      (batch, hidden), [[0], [1, 2]]) for i in range(4)]
    return _lstm_state(b, part, c)


def _lstm_state(b, part, c):
    i_gate, f_gate = b.sigmoid(part[0]), b.sigmoid(part[1])
    g_gate, o_gate = b.tanh(part[2]), b.sigmoid(part[3])
    c_next = b.add(b.mul(f_gate, c), b.mul(i_gate, g_gate))
    h_next = b.mul(o_gate, b.tanh(c_next))
    return h_next, c_next


def rnn(b, layers=2, hidden=64, steps=20, batch=8, embed=1024):
    """L LSTM layers of hidden size H over `steps` embedded inputs; MSE loss
    of the top layer's outputs.  No embedding table and no classifier head."""
    return _lstm(b, layers, hidden, steps, batch, embed, stacked=False)


def rnn_stacked(b, layers=2, hidden=64, steps=20, batch=8, embed=1024):
    """`rnn` with each layer's four gates as a dimension of its own:
    weights (width, 4, H), (H, 4, H) and (4, H) instead of (width, 4H),
    (H, 4H) and (4H,).  The same function; a cut of H gives every device
    all four gates of its hidden units."""
    return _lstm(b, layers, hidden, steps, batch, embed, stacked=True)


def _lstm(b, layers, hidden, steps, batch, embed, stacked):
    xs = b.input("x", (steps, batch, embed))
    ys = b.label("targets", (steps, batch, hidden))
    gates = (4, hidden) if stacked else (4 * hidden,)
    cell = lstm_cell_stacked if stacked else lstm_cell
    params = []
    for layer in range(layers):
        width = embed if layer == 0 else hidden
        params.append((b.weight(f"wx{layer}", (width, *gates)),
                       b.weight(f"wh{layer}", (hidden, *gates)),
                       b.weight(f"b{layer}", gates)))
    zeros = b.full((batch, hidden), 0.0)
    state = [(zeros, zeros) for _ in range(layers)]
    loss = None
    for t in range(steps):
        x = b.reshape(b.slice(xs, (t, 0, 0), (1, batch, embed)), (batch, embed), [[0, 1], [2]])
        for layer, (wx, wh, bias) in enumerate(params):
            h, c = cell(b, x, *state[layer], wx, wh, bias, hidden)
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
class Model:
    """A zoo entry: its builder, the names that select it, a one-line summary,
    and the help text of each of the builder's options (the keyword arguments
    after `b`).  `defaults` gives the text shown for an option whose default
    is computed from the others (None in the builder's signature): a
    function of the other defaults."""

    def __init__(self, name, builder, summary, options, aliases=(),
                 pattern=None, defaults=None):
        self.name = name
        self.builder = builder
        self.summary = summary
        self.options = options
        self.aliases = aliases
        self.pattern = pattern
        self.defaults = defaults or {}

    def names(self):
        return [self.name, *self.aliases] + ([self.pattern] if self.pattern else [])


_BATCH = "batch size"
_IMAGE = "image height and width"
_CLASSES = "classes of the classifier"
_RNN_OPTIONS = {"layers": "LSTM layers",
                "hidden": "hidden size of every layer",
                "steps": "time steps, unrolled",
                "batch": _BATCH,
                "embed": "size of each step's input (an embedded token)"}

MODELS = [
    Model("mlp", mlp,
          "multi-layer perceptron: dense layers with ReLU on flat features, "
          "softmax cross-entropy",
          {"layers": "dense layers, the last one the classifier",
           "hidden": "units of each hidden layer",
           "batch": _BATCH,
           "features": "input features",
           "classes": _CLASSES}),
    Model("rnn", rnn,
          "stacked LSTM unrolled over time steps, MSE loss; RNN-L-H has L "
          "layers of hidden size H (K = 1024), e.g. RNN-10-8K",
          _RNN_OPTIONS,
          aliases=("lstm",), pattern="RNN-L-H"),
    Model("wresnet", wresnet,
          "bottleneck Wide ResNet, softmax cross-entropy; WResNet-D-W has "
          "depth D (50, 101, 152) and width W, e.g. WResNet-152-10",
          {"depth": "50, 101 or 152: the blocks of each stage",
           "width": "channel multiplier of every convolution",
           "batch": _BATCH,
           "image": _IMAGE + " (64 and more add the 7x7 stem and a max pool)",
           "classes": _CLASSES,
           "stages": "blocks of each stage, comma-separated (e.g. 1,1): "
                     "fewer, smaller stages than --depth's"},
          pattern="WResNet-D-W",
          defaults={"stages": lambda d: "those of --depth, " + ",".join(
              map(str, WRESNET_STAGES.get(d["depth"], []))) + f" for {d['depth']}"}),
    Model("conv1d", conv1d_net,
          "small 1-D CNN: convolutions with ReLU, mean pool and a dense "
          "classifier, softmax cross-entropy",
          {"batch": _BATCH,
           "channels": "input channels",
           "length": "sequence length",
           "filters": "filters of each convolution",
           "layers": "convolution layers",
           "kernel": "kernel width (padded to keep the length)",
           "classes": _CLASSES}),
    Model("transformer", transformer,
          "post-LN Transformer encoder (BERT-Large by default) on embedded "
          "tokens, MSE loss",
          {"layers": "encoder layers",
           "hidden": "hidden size",
           "heads": "attention heads (must divide --hidden)",
           "seq": "sequence length",
           "batch": _BATCH,
           "ffn": "feed-forward size"},
          aliases=("bert-large",),
          defaults={"ffn": lambda d: f"4 x --hidden, {4 * d['hidden']}"}),
    Model("alexnet", alexnet,
          "AlexNet: five convolutions with max pools and three dense layers, "
          "softmax cross-entropy",
          {"batch": _BATCH,
           "image": _IMAGE + " (at least 63)",
           "classes": _CLASSES,
           "width": "multiplies the channels of every convolution",
           "narrow": "divides the channels of every convolution",
           "fc": "units of the two hidden dense layers"}),
    Model("vgg16", vgg16,
          "VGG-16: thirteen 3x3 convolutions with max pools and three dense "
          "layers, softmax cross-entropy",
          {"batch": _BATCH,
           "image": _IMAGE + " (at least 32)",
           "classes": _CLASSES,
           "width": "multiplies the channels of every convolution",
           "narrow": "divides the channels of every convolution",
           "fc": "units of the two hidden dense layers"},
          aliases=("vgg-16",)),
    Model("rnn-stacked", rnn_stacked,
          "rnn with each layer's four gates as a dimension of their own "
          "(weights K x 4 x H): the same LSTM, whose products are einsums "
          "that a cut of H splits by whole gates",
          _RNN_OPTIONS,
          aliases=("lstm-stacked",)),
]


def _size(text):
    text = text.upper()
    return int(text[:-1]) * 1024 if text.endswith("K") else int(text)


def find_model(name):
    """Maps a model name to (Model, defaults the name sets), or None."""
    lower = name.lower()
    by_name = {model.name: model for model in MODELS}
    m = re.fullmatch(r"rnn-(\d+)-(\d+k?)", lower)
    if m:
        return by_name["rnn"], {"layers": int(m.group(1)),
                                "hidden": _size(m.group(2))}
    m = re.fullmatch(r"wresnet-(\d+)-(\d+)", lower)
    if m:
        return by_name["wresnet"], {"depth": int(m.group(1)),
                                    "width": int(m.group(2))}
    for model in MODELS:
        if lower == model.name or lower in model.aliases:
            return model, {}
    return None


def parse_name(name):
    """Maps a model name to (builder, defaults)."""
    found = find_model(name)
    if found is None:
        raise SystemExit(f"unknown model '{name}'; try: python3 -m tofu.models list")
    model, defaults = found
    return model.builder, defaults


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


def list_lines():
    """One line per model: its names and what it is."""
    rows = [(", ".join(m.names()), m.summary) for m in MODELS]
    width = max(len(names) for names, _ in rows)
    return [f"{names:<{width}}  {summary}" for names, summary in rows]


def option_defaults(model, name_defaults):
    """The default of each option of `model` when selected by a name that
    sets `name_defaults` (RNN-10-8K sets layers and hidden)."""
    params = inspect.signature(model.builder).parameters
    values = {k: p.default for k, p in params.items() if k != "b"}
    values.update(name_defaults)
    return values


def model_parser(prog, name, model, name_defaults):
    """The parser of one model: only its own options, each with its help
    and its default."""
    parser = argparse.ArgumentParser(
        prog=f"{prog} {name}",
        description=f"{name}: {model.summary}.",
        epilog="Writes one func.func @forward whose arguments are the weights "
               "(tofu.weight), the input batch and the labels, and whose "
               "result is the scalar loss.")
    group = parser.add_argument_group("model options")
    values = option_defaults(model, name_defaults)
    for opt, value in values.items():
        default = model.defaults[opt](values) if value is None else value
        if opt == "stages":
            group.add_argument("--stages", metavar="N,N,...",
                               help=f"{model.options[opt]} (default: {default})")
        else:
            group.add_argument(f"--{opt}", type=int, metavar="N",
                               help=f"{model.options[opt]} (default: {default})")
    output = parser.add_argument_group("output")
    output.add_argument("-o", "--output", metavar="FILE",
                        help="output file (default: stdout)")
    output.add_argument("--dtype", default="f32", choices=["f32", "f64"],
                        help="element type (default: f32)")
    return parser


# The smallest image whose last max pool still keeps a pixel.
SMALLEST_IMAGE = {alexnet: 63, vgg16: 32}


def options_problem(model, name_defaults, options):
    """What is wrong with the sizes of `model`, selected by a name that sets
    `name_defaults` and given `options`, or None. Every option is a size of
    at least 1."""
    if model.pattern:
        # find_model gives the sizes of a name in the order of the letters.
        letters = model.pattern.split("-")[1:]
        for letter, (opt, value) in zip(letters, name_defaults.items()):
            if value < 1:
                return (f"{letter} in {model.pattern} (--{opt}) must be at "
                        "least 1")
    for opt, value in options.items():
        if opt == "stages":
            if min(value) < 1:
                return "--stages: every stage needs at least 1 block"
        elif value < 1:
            return f"--{opt} must be at least 1"
    values = {**option_defaults(model, name_defaults), **options}
    if model.builder is transformer and values["hidden"] % values["heads"]:
        return (f"--heads ({values['heads']}) must divide --hidden "
                f"({values['hidden']})")
    smallest = SMALLEST_IMAGE.get(model.builder)
    if smallest and values["image"] < smallest:
        return f"--image must be at least {smallest} for {model.name}"
    # The narrowest convolution of AlexNet and VGG-16 has 64 x width / narrow
    # channels.
    if smallest and values["narrow"] > 64 * values["width"]:
        return (f"--narrow must be at most 64 x --width "
                f"({64 * values['width']})")
    return None


def print_usage(prog, out):
    out.write(f"usage: {prog} NAME [options] [-o FILE]\n"
              f"       {prog} NAME --help      the options of model NAME\n"
              f"       {prog} list             the models, one line each\n"
              f"       {prog} table2           weight sizes next to Tofu's Table 2\n"
              "\n" + __doc__.split("\n\n")[0] + "\n\nmodels:\n")
    for line in list_lines():
        out.write(f"  {line}\n")


def main(argv=None, prog="python3 -m tofu.models"):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print_usage(prog, sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name in ("list", "table2"):
        extra = argparse.ArgumentParser(
            prog=f"{prog} {name}",
            description="The models, one line each." if name == "list" else
            "Weight + gradient + optimizer history of every Table 2 model "
            "(3 x fp32), next to the Tofu paper's.")
        extra.parse_args(rest)
        if name == "list":
            print("\n".join(list_lines()))
        else:
            print_table2(sys.stdout)
        return 0
    found = find_model(name)
    if found is None:
        close = difflib.get_close_matches(
            name.lower(), [n for m in MODELS for n in (m.name, *m.aliases)], 1)
        hint = f"did you mean '{close[0]}'? " if close else ""
        raise SystemExit(f"{prog}: error: unknown model '{name}'; {hint}"
                         f"'{prog} list' lists the models")
    model, name_defaults = found
    args = model_parser(prog, name, model, name_defaults).parse_args(rest)
    stages = getattr(args, "stages", None)
    options = {k: v for k, v in vars(args).items()
               if k not in ("output", "dtype", "stages") and v is not None}
    if stages:
        try:
            options["stages"] = [int(s) for s in stages.split(",")]
        except ValueError:
            raise SystemExit(f"{prog} {name}: error: --stages takes "
                             f"comma-separated integers, not '{stages}'")
    problem = options_problem(model, name_defaults, options)
    if problem is None and args.output:
        problem = cli.output_problem(args.output)
    if problem:
        raise SystemExit(f"{prog} {name}: error: {problem}")
    depth = options.get("depth", name_defaults.get("depth", 50))
    if model.builder is wresnet and not stages and depth not in WRESNET_STAGES:
        raise SystemExit(f"{prog} {name}: error: depth {depth} has no stages; "
                         f"use 50, 101 or 152, or give --stages")
    try:
        b, loss = build(name, args.dtype, **options)
    except TypeError as err:
        raise SystemExit(f"error: {err}")
    text = b.finish(loss)
    if args.output:
        try:
            with open(args.output, "w") as f:
                f.write(text)
        except OSError as err:
            raise SystemExit(f"{prog} {name}: error: cannot write "
                             f"{args.output}: {err.strerror}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    cli.run_main(main)
