"""Forward exports in torch-mlir's form, and the PyTorch modules they came
from.

    python3 -m tofu.exports mlp|bert|llama|gpt2|resnet [--size KEY=VALUE ...] [--dtype f64] [-o FILE]

`models/torch-mlir-style/*.mlir` are written by hand in the form
torch-mlir's TorchToLinalg emits for a PyTorch module; EXPORTS names the
module of each one with a loss. GENERATED writes such exports at any size
(an MLP of nn.Linear and ReLU, a BERT encoder, LLaMA and GPT-2 decoder
stacks, a torchvision ResNet): every parameter an
argument with a name location that is its `state_dict` key, the output
the model's (no loss: `tofu-train-pipeline="loss=mse"` appends one).
`tofu-autodiff` records an argument's name (its name location, or its SSA
name in the source file: `%w0` is `w0`) as `tofu.name`, and `tofu-run`
names the tensors of weight, data and checkpoint files after it (an
argument without a name is `arg<N>`, N its position in `@forward`).
`python3 -m tofu.torchcheck --export NAME` trains the module in PyTorch and
the export in tofu-run from the same files and compares them;
`benchmarks/export_step.py` times both.

    EXPORTS[name] = (path of the export, weights= and inputs= of
                     tofu-autodiff, builder(torch, dtype) -> ExportTwin)
    GENERATED[name] = (text(dtype, **sizes), module(torch, **sizes),
                       default sizes)

This module imports torch only inside its functions.
"""

import math
import os
import sys

from tofu.ir import FuncBuilder, Value, affine_map, float_literal

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _twin_class(torch):
    class ExportTwin(torch.nn.Module):
        """A module with the interface of tofu.twins' twins: `params` maps
        the export's argument names (arg<N>) to the module's parameters,
        `data_names` lists the data arguments in `@forward` order, and
        calling it with the data returns the loss."""

        def __init__(self, model, module, weights, data_names, loss):
            super().__init__()
            self.model = model
            self.module = module
            self.weight_names = list(weights)
            self.data_names = data_names
            self._weights = weights
            self._loss = loss

        @property
        def params(self):
            named = dict(self.module.named_parameters())
            return {arg: named[p] for arg, p in self._weights.items()}

        def forward(self, *data):
            return self._loss(self.module, *data)

        def load(self, values):
            with torch.no_grad():
                for arg, param in self.params.items():
                    param.copy_(values[arg])
            return self
    return ExportTwin


def mlp_loss(torch, dtype):
    """models/torch-mlir-style/mlp-loss.mlir: Linear(6, 8), ReLU,
    Linear(8, 3) and F.mse_loss against the target (arguments: x, w0, b0,
    w1, b1, target)."""
    tdtype = torch.float64 if dtype == "f64" else torch.float32
    module = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.ReLU(),
                                 torch.nn.Linear(8, 3)).to(tdtype)
    weights = {"w0": "0.weight", "b0": "0.bias", "w1": "2.weight",
               "b1": "2.bias"}
    loss = lambda m, x, target: torch.nn.functional.mse_loss(m(x), target)
    return _twin_class(torch)("mlp-loss", module, weights, ["x", "target"],
                              loss)


def mlp_module(torch, widths):
    """The module of mlp_text."""
    layers = []
    for i, (fan_in, out) in enumerate(zip(widths, widths[1:])):
        layers.append(torch.nn.Linear(fan_in, out))
        if i + 2 < len(widths):
            layers.append(torch.nn.ReLU())
    return torch.nn.Sequential(*layers)


def bert_module(torch, hidden, heads, ffn, layers):
    """The module of bert_text: HuggingFace's BertLayer, written out."""
    nn, F = torch.nn, torch.nn.functional

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            for name in ("query", "key", "value", "out"):
                setattr(self, name, nn.Linear(hidden, hidden))
            self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
            self.ffn_in = nn.Linear(hidden, ffn)
            self.ffn_out = nn.Linear(ffn, hidden)
            self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

        def forward(self, h):
            b, s, _ = h.shape
            d = hidden // heads
            split = lambda t: t.view(b, s, heads, d).transpose(1, 2)
            q, k, v = split(self.query(h)), split(self.key(h)), split(self.value(h))
            p = torch.softmax(q @ k.transpose(-1, -2) / math.sqrt(d), dim=-1)
            ctx = (p @ v).transpose(1, 2).reshape(b, s, hidden)
            h = self.ln1(self.out(ctx) + h)
            return self.ln2(self.ffn_out(F.gelu(self.ffn_in(h))) + h)

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(layers))

        def forward(self, h):
            for layer in self.layers:
                h = layer(h)
            return h
    return Encoder()


def llama_module(torch, hidden, heads, ffn, layers, base=10000.0, eps=1e-6):
    """The module of llama_text: HuggingFace's LlamaModel without the
    embedding (rotary position embeddings computed from the sequence,
    decoder layers of RMSNorm, causal self-attention without biases and
    the SiLU-gated MLP, the final RMSNorm), written out."""
    nn, F = torch.nn, torch.nn.functional
    d = hidden // heads

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(hidden))

        def forward(self, x):
            ms = x.pow(2).mean(-1, keepdim=True)
            return x * torch.rsqrt(ms + eps) * self.weight

    def rotate(x):
        return torch.cat((-x[..., d // 2:], x[..., :d // 2]), dim=-1)

    class Layer(nn.Module):
        def __init__(self):
            super().__init__()
            self.input_layernorm = RMSNorm()
            self.self_attn = nn.Module()
            for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
                setattr(self.self_attn, name,
                        nn.Linear(hidden, hidden, bias=False))
            self.post_attention_layernorm = RMSNorm()
            self.mlp = nn.Module()
            self.mlp.gate_proj = nn.Linear(hidden, ffn, bias=False)
            self.mlp.up_proj = nn.Linear(hidden, ffn, bias=False)
            self.mlp.down_proj = nn.Linear(ffn, hidden, bias=False)

        def forward(self, h, cos, sin):
            b, s, _ = h.shape
            a = self.self_attn
            x = self.input_layernorm(h)
            split = lambda t: t.view(b, s, heads, d).transpose(1, 2)
            q, k, v = split(a.q_proj(x)), split(a.k_proj(x)), split(a.v_proj(x))
            q = q * cos + rotate(q) * sin
            k = k * cos + rotate(k) * sin
            scores = (q @ k.transpose(-1, -2)) * d ** -0.5
            causal = torch.ones(s, s, dtype=torch.bool).triu(1)
            scores = scores.masked_fill(causal, -3.4028234663852886e38)
            ctx = (torch.softmax(scores, dim=-1) @ v).transpose(1, 2)
            h = h + a.o_proj(ctx.reshape(b, s, hidden))
            x = self.post_attention_layernorm(h)
            m = self.mlp
            return h + m.down_proj(F.silu(m.gate_proj(x)) * m.up_proj(x))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer() for _ in range(layers))
            self.norm = RMSNorm()

        def forward(self, h):
            steps = torch.arange(0, d, 2, dtype=torch.int64).to(h.dtype)
            inv_freq = 1.0 / (base ** (steps / d))
            t = torch.arange(h.shape[1], dtype=torch.int64).to(h.dtype)
            freqs = torch.outer(t, inv_freq)
            angles = torch.cat((freqs, freqs), dim=-1)
            cos, sin = angles.cos(), angles.sin()
            for layer in self.layers:
                h = layer(h, cos, sin)
            return self.norm(h)
    return Model()


def _resnet_skeleton(torch, widths, blocks, image, classes, stem, expansion,
                     block):
    """torchvision's ResNet around `block(cin, planes, stride)` modules
    whose output has planes * `expansion` channels: the stem of `stem`
    channels (with `image` 64 or more its 7x7 convolution and max pool,
    else the 3x3 stem of CIFAR ResNets), the stages and the classifier."""
    nn, F = torch.nn, torch.nn.functional

    class ResNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = _torch_conv(nn, 3, stem, 7 if image >= 64 else 3,
                                     2 if image >= 64 else 1)
            self.bn1 = nn.BatchNorm2d(stem)
            cin = stem
            for i, (planes, n) in enumerate(zip(widths, blocks)):
                stage = []
                for j in range(n):
                    stage.append(block(cin, planes, 2 if i and not j else 1))
                    cin = planes * expansion
                setattr(self, f"layer{i + 1}", nn.Sequential(*stage))
            self.fc = nn.Linear(cin, classes)

        def forward(self, x):
            x = F.relu(self.bn1(self.conv1(x)))
            if image >= 64:
                x = F.max_pool2d(x, 3, 2, 1)
            for i in range(len(widths)):
                x = getattr(self, f"layer{i + 1}")(x)
            return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))
    return ResNet()


def _torch_conv(nn, cin, cout, k, stride, groups=1):
    """torchvision's convolution of a ResNet: padding k // 2, no bias."""
    return nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False)


def _torch_shortcut(nn, cin, cout, stride):
    """A block's downsampling shortcut where its shape changes, else None."""
    if stride == 1 and cin == cout:
        return None
    return nn.Sequential(_torch_conv(nn, cin, cout, 1, stride),
                         nn.BatchNorm2d(cout))


def resnet_module(torch, widths, blocks, image, classes):
    """The module of resnet_text: torchvision's ResNet of BasicBlocks,
    written out (its stem of widths[0] channels)."""
    nn, F = torch.nn, torch.nn.functional

    class BasicBlock(nn.Module):
        def __init__(self, cin, cout, stride):
            super().__init__()
            self.conv1 = _torch_conv(nn, cin, cout, 3, stride)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = _torch_conv(nn, cout, cout, 3, 1)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = _torch_shortcut(nn, cin, cout, stride)

        def forward(self, x):
            h = F.relu(self.bn1(self.conv1(x)))
            h = self.bn2(self.conv2(h))
            return F.relu(h + (self.downsample(x) if self.downsample else x))
    return _resnet_skeleton(torch, widths, blocks, image, classes, widths[0],
                            1, BasicBlock)


def gpt2_module(torch, seq, hidden, heads, layers):
    """The module of gpt2_text: HuggingFace's GPT2Model after the token
    embedding (learned positions, blocks of LayerNorm, attention through
    one Conv1D for q, k and v and a causal mask buffer, the MLP with
    GELU's tanh form, the final LayerNorm), written out."""
    nn = torch.nn
    d = hidden // heads

    class Conv1D(nn.Module):
        """HuggingFace's Conv1D: x @ weight + bias, weight (in, out)."""

        def __init__(self, fan_in, out):
            super().__init__()
            self.weight = nn.Parameter(torch.empty(fan_in, out))
            self.bias = nn.Parameter(torch.zeros(out))
            nn.init.normal_(self.weight, std=0.02)

        def forward(self, x):
            return torch.addmm(self.bias, x.reshape(-1, x.shape[-1]),
                               self.weight).view(x.shape[:-1] + (-1,))

    def gelu_new(x):
        return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) *
                                           (x + 0.044715 * torch.pow(x, 3.0))))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(hidden, eps=1e-5)
            self.attn = nn.Module()
            self.attn.c_attn = Conv1D(hidden, 3 * hidden)
            self.attn.c_proj = Conv1D(hidden, hidden)
            self.ln_2 = nn.LayerNorm(hidden, eps=1e-5)
            self.mlp = nn.Module()
            self.mlp.c_fc = Conv1D(hidden, 4 * hidden)
            self.mlp.c_proj = Conv1D(4 * hidden, hidden)

        def forward(self, h):
            b, s, _ = h.shape
            q, k, v = self.attn.c_attn(self.ln_1(h)).split(hidden, dim=2)
            split = lambda t: t.view(b, s, heads, d).transpose(1, 2)
            q, k, v = split(q), split(k), split(v)
            w = (q @ k.transpose(-1, -2)) / math.sqrt(d)
            # HuggingFace's `bias` buffer (a buffer of bools, which DDP's
            # gloo backend cannot broadcast), made here.
            causal = torch.tril(torch.ones(s, s, dtype=torch.bool))
            w = torch.where(causal.view(1, 1, s, s), w,
                            torch.tensor(torch.finfo(w.dtype).min, dtype=w.dtype))
            ctx = (torch.softmax(w, dim=-1) @ v).transpose(1, 2)
            h = h + self.attn.c_proj(ctx.reshape(b, s, hidden))
            m = self.mlp
            return h + m.c_proj(gelu_new(m.c_fc(self.ln_2(h))))

    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.wpe = nn.Embedding(seq, hidden)
            self.h = nn.ModuleList(Block() for _ in range(layers))
            self.ln_f = nn.LayerNorm(hidden, eps=1e-5)

        def forward(self, x):
            h = x + self.wpe.weight[:x.shape[1]]
            for block in self.h:
                h = block(h)
            return self.ln_f(h)
    return Model()


def _resnext_width(planes, groups, group_width):
    """torchvision's Bottleneck width: the 3x3 convolution's channels."""
    return int(planes * (group_width / 64.0)) * groups


def resnext_module(torch, widths, blocks, image, classes, groups, group_width):
    """The module of resnext_text: torchvision's ResNet of Bottleneck
    blocks (ResNeXt: grouped 3x3 convolutions), written out, with its stem
    of 64 channels."""
    nn, F = torch.nn, torch.nn.functional

    class Bottleneck(nn.Module):
        def __init__(self, cin, planes, stride):
            super().__init__()
            width = _resnext_width(planes, groups, group_width)
            self.conv1 = _torch_conv(nn, cin, width, 1, 1)
            self.bn1 = nn.BatchNorm2d(width)
            self.conv2 = _torch_conv(nn, width, width, 3, stride, groups)
            self.bn2 = nn.BatchNorm2d(width)
            self.conv3 = _torch_conv(nn, width, planes * 4, 1, 1)
            self.bn3 = nn.BatchNorm2d(planes * 4)
            self.downsample = _torch_shortcut(nn, cin, planes * 4, stride)

        def forward(self, x):
            h = F.relu(self.bn1(self.conv1(x)))
            h = F.relu(self.bn2(self.conv2(h)))
            h = self.bn3(self.conv3(h))
            return F.relu(h + (self.downsample(x) if self.downsample else x))
    return _resnet_skeleton(torch, widths, blocks, image, classes, 64, 4,
                            Bottleneck)


# MobileNetV2's inverted-residual stages (expansion t, channels c, blocks n,
# stride s of the first block), as torchvision lists them.
MOBILENET_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2),
                    (6, 96, 3, 1), (6, 160, 3, 2), (6, 320, 1, 1))


def _divisible(value, divisor=8):
    """torchvision's channel rounding: the nearest multiple of `divisor`,
    at least `divisor`, never more than 10% under `value`."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def mobilenet_plan(width, stages):
    """(stem channels, [(input channels, hidden, output channels, stride)]
    of each block, last channels) of MobileNetV2 with a width of `width`
    percent and its first `stages` stages."""
    if not 1 <= stages <= len(MOBILENET_STAGES) or width < 1:
        raise ValueError(f"mobilenet: stages takes 1 to "
                         f"{len(MOBILENET_STAGES)} and width a positive "
                         f"percentage, not {stages} and {width}")
    mult = width / 100.0
    cin = stem = _divisible(32 * mult)
    blocks = []
    for t, c, n, s in MOBILENET_STAGES[:stages]:
        cout = _divisible(c * mult)
        for i in range(n):
            blocks.append((cin, cin * t, cout, s if i == 0 else 1))
            cin = cout
    return stem, blocks, _divisible(1280 * max(1.0, mult))


def mobilenet_module(torch, width, stages, classes):
    """The module of mobilenet_text: torchvision's MobileNetV2 with its
    state_dict names (`features.N...`, `classifier.1`), without the
    classifier's dropout."""
    nn = torch.nn
    stem, plan, last = mobilenet_plan(width, stages)

    def conv_bn(cin, cout, k, stride, groups=1, act=True):
        layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups,
                            bias=False), nn.BatchNorm2d(cout)]
        return nn.Sequential(*(layers + [nn.ReLU6()] if act else layers))

    class InvertedResidual(nn.Module):
        def __init__(self, cin, hidden, cout, stride):
            super().__init__()
            self.residual = stride == 1 and cin == cout
            layers = [conv_bn(cin, hidden, 1, 1)] if hidden != cin else []
            layers.append(conv_bn(hidden, hidden, 3, stride, groups=hidden))
            layers += [nn.Conv2d(hidden, cout, 1, bias=False),
                       nn.BatchNorm2d(cout)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.residual else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(
                conv_bn(3, stem, 3, 2),
                *(InvertedResidual(*block) for block in plan),
                conv_bn(plan[-1][2] if plan else stem, last, 1, 1))
            self.classifier = nn.Sequential(nn.Identity(),
                                            nn.Linear(last, classes))

        def forward(self, x):
            x = nn.functional.adaptive_avg_pool2d(self.features(x), 1)
            return self.classifier(torch.flatten(x, 1))
    return MobileNetV2()


def _generated_twin(torch, dtype, name, module):
    """The twin of a generated export trained with `tofu-loss{kind=mse}`:
    its parameters have the export's argument names."""
    tdtype = torch.float64 if dtype == "f64" else torch.float32
    module = module.to(tdtype)
    weights = {n: n for n, _ in module.named_parameters()}
    loss = lambda m, x, target: torch.nn.functional.mse_loss(m(x), target)
    return _twin_class(torch)(name, module, weights, ["input", "targets"], loss)


def _widths(text):
    return tuple(int(w) for w in str(text).split(","))


# name: (text(dtype, **sizes), module(torch, **sizes), default sizes). The
# sizes are the benchmark's: issue 18's MLP (3 x Linear(1024, 1024), batch
# 256) and BERT-tiny (2 layers, hidden 128, 2 heads), and a small LLaMA
# (2 layers, hidden 256, 4 heads, MLP 688).
GENERATED = {
    "mlp": (lambda dtype, batch, widths: mlp_text(batch, _widths(widths), dtype),
            lambda torch, batch, widths: mlp_module(torch, _widths(widths)),
            dict(batch=256, widths="1024,1024,1024,1024")),
    "bert": (lambda dtype, **o: bert_text(dtype=dtype, **o),
             lambda torch, batch, seq, **o: bert_module(torch, **o),
             dict(batch=8, seq=128, hidden=128, heads=2, ffn=512, layers=2)),
    "llama": (lambda dtype, **o: llama_text(dtype=dtype, **o),
              lambda torch, batch, seq, **o: llama_module(torch, **o),
              dict(batch=8, seq=128, hidden=256, heads=4, ffn=688, layers=2)),
    "gpt2": (lambda dtype, **o: gpt2_text(dtype=dtype, **o),
             lambda torch, batch, **o: gpt2_module(torch, **o),
             dict(batch=8, seq=128, hidden=256, heads=4, layers=2)),
    "resnet": (lambda dtype, widths, blocks, **o: resnet_text(
                   widths=_widths(widths), blocks=_widths(blocks), dtype=dtype, **o),
               lambda torch, batch, widths, blocks, **o: resnet_module(
                   torch, _widths(widths), _widths(blocks), **o),
               dict(batch=16, image=32, classes=10, widths="64,128,256,512",
                    blocks="2,2,2,2")),
    "resnext": (lambda dtype, widths, blocks, **o: resnext_text(
                    widths=_widths(widths), blocks=_widths(blocks), dtype=dtype,
                    **o),
                lambda torch, batch, widths, blocks, **o: resnext_module(
                    torch, _widths(widths), _widths(blocks), **o),
                dict(batch=16, image=32, classes=10, widths="64,128,256,512",
                     blocks="3,4,6,3", groups=32, group_width=4)),
    "mobilenet": (lambda dtype, **o: mobilenet_text(dtype=dtype, **o),
                  lambda torch, batch, image, **o: mobilenet_module(torch, **o),
                  dict(batch=16, image=64, classes=10, width=100, stages=7)),
}


def sizes_of(name, overrides=()):
    """The sizes of generated export `name`: its defaults with `overrides`
    ("key=value" strings) applied; raises ValueError on an unknown key."""
    sizes = dict(GENERATED[name][2])
    for item in overrides:
        key, _, value = item.partition("=")
        if key not in sizes or not value:
            raise ValueError(f"{name}: no size '{item}' (sizes: "
                             f"{', '.join(f'{k}={v}' for k, v in sizes.items())})")
        listed = key in ("widths", "blocks")
        least = 2 if name == "mlp" else 1
        try:
            numbers = _widths(value) if listed else (int(value),)
        except ValueError:
            numbers = ()
        if not numbers or min(numbers) < 1 or (listed and len(numbers) < least):
            raise ValueError(f"{name}: {key} takes "
                             + (f"{'two' if least == 2 else 'one'} or more "
                                "positive integers, comma-separated"
                                if listed else "a positive integer")
                             + f", not '{value}'")
        sizes[key] = value if listed else numbers[0]
    if name in ("resnet", "resnext") and \
            len(_widths(sizes["widths"])) != len(_widths(sizes["blocks"])):
        raise ValueError(f"{name}: widths and blocks name the same stages: "
                         "give as many of each")
    if name == "resnext" and min(
            _resnext_width(p, sizes["groups"], sizes["group_width"])
            for p in _widths(sizes["widths"])) < sizes["groups"]:
        raise ValueError("resnext: every width times group_width / 64 must be "
                         "at least 1 (torchvision rounds the channels "
                         "per group down)")
    if name == "mobilenet" and sizes["stages"] > len(MOBILENET_STAGES):
        raise ValueError(f"mobilenet: stages takes 1 to {len(MOBILENET_STAGES)}"
                         f", not {sizes['stages']}")
    if name in ("bert", "llama", "gpt2") and sizes["hidden"] % sizes["heads"]:
        raise ValueError(f"{name}: hidden must be a multiple of heads")
    if name == "llama" and (sizes["hidden"] // sizes["heads"]) % 2:
        raise ValueError("llama: the head dimension (hidden / heads) must be "
                         "even: rotary embeddings rotate its two halves")
    return sizes


def prepare(name, dtype, overrides=()):
    """(forward export text, tofu-opt passes up to the optimizer,
    builder(torch, dtype) -> ExportTwin) of export `name`: a file of the
    repo (EXPORTS) or a generated one (GENERATED, at its sizes with
    `overrides`)."""
    if name in EXPORTS:
        source, autodiff, builder = EXPORTS[name]
        with open(source) as f:
            text = f.read()
        # The files are f32.
        passes = ([f"--tofu-convert-float-type=from=f32 to={dtype}"]
                  if dtype != "f32" else []) + [f"--tofu-autodiff={autodiff}"]
        return text, passes, builder
    text, module, _ = GENERATED[name]
    sizes = sizes_of(name, overrides)
    builder = lambda torch, dt: _generated_twin(torch, dt, name,
                                                module(torch, **sizes))
    return (text(dtype, **sizes),
            ["--tofu-loss=kind=mse",
             "--tofu-autodiff=weights=auto inputs=auto"], builder)


# -- exports at any size: what torch-mlir's TorchToLinalg emits ----------------------
class _Export(FuncBuilder):
    """Writes a forward export as torch-mlir does: one `@forward` in a
    module, the parameters as arguments named by a name location
    (`loc("0.weight")`, PyTorch's `state_dict` keys), the logits or hidden
    states as the result (no loss: `tofu-train-pipeline`'s `loss=` appends
    it), nn.Linear as a transposed weight, a matmul into a zero fill and a
    broadcast bias generic, permutes as linalg.transpose and the
    decompositions of ReLU, softmax, LayerNorm and GELU as generics."""

    def __init__(self, dtype="f32"):
        super().__init__("forward", dtype)
        self.locs = {}

    def arg(self, name, shape, role="weight"):
        value = self.argument(f"arg{len(self.args)}", shape, role)
        self.locs[value.name] = name
        return value

    def linear(self, x, w, b):
        return self.addmm(x, self.transpose(w, [1, 0]), b)

    def relu(self, x):
        rank = len(x.shape)

        def body(s, a, acc):
            zero = s.const(0.0)
            return s.op("arith.select", s.op("arith.cmpf ugt,", a[0], zero),
                        a[0], zero)
        idx = [f"d{i}" for i in range(rank)]
        return self.generic([x], [idx], x.shape, idx, ["parallel"] * rank, body)

    def batch_matmul(self, a, b):
        (n, m, k), (_, _, p) = a.shape, b.shape
        init = self.full((n, m, p), 0.0)
        out = Value(self._fresh(), (n, m, p), self.dtype)
        self.emit(f"{out.name} = linalg.batch_matmul ins({a.name}, {b.name} : "
                  f"{a.type}, {b.type}) outs({init.name} : {init.type}) -> "
                  f"{out.type}")
        return out

    def rows(self, x, fn, init, value=None):
        """A reduction over the last axis of a 2-D or 3-D x into a kept
        unit dimension (torch-mlir's keepdim=True); `value` maps each
        element before it is combined (it sees the row's kept values)."""
        rank = len(x.shape)
        idx = [f"d{i}" for i in range(rank)]
        kept = idx[:-1] + ["0"]
        shape = x.shape[:-1] + (1,)
        return self.generic(
            [x] + ([value[0]] if value else []), [idx] + ([kept] if value else []),
            shape, kept, ["parallel"] * (rank - 1) + ["reduction"],
            lambda s, a, acc: fn(s, value[1](s, *a) if value else a[0], acc),
            init=self.full(shape, init))

    def with_rows(self, fn, x, *kept_rows):
        rank = len(x.shape)
        idx = [f"d{i}" for i in range(rank)]
        kept = idx[:-1] + ["0"]
        return self.generic([x] + list(kept_rows), [idx] + [kept] * len(kept_rows),
                            x.shape, idx, ["parallel"] * rank,
                            lambda s, a, acc: fn(s, *a))

    def softmax(self, x):
        mx = self.rows(x, lambda s, v, acc: s.max(v, acc), -3.4028234663852886e38)
        e = self.with_rows(lambda s, v, m: s.exp(s.sub(v, m)), x, mx)
        total = self.rows(e, lambda s, v, acc: s.add(v, acc), 0.0)
        return self.with_rows(lambda s, v, t: s.div(v, t), e, total)

    def layernorm(self, x, g, b, eps):
        n = float(x.shape[-1])
        total = self.rows(x, lambda s, v, acc: s.add(v, acc), 0.0)

        def square(s, v, t):
            d = s.sub(v, s.div(t, s.const(n)))
            return s.mul(d, d)
        var = self.rows(x, lambda s, v, acc: s.add(v, acc), 0.0,
                        value=(total, square))
        rank = len(x.shape)
        idx = [f"d{i}" for i in range(rank)]
        kept = idx[:-1] + ["0"]

        def body(s, a, acc):
            v, t, q, gamma, beta = a
            rs = s.rsqrt(s.add(s.div(q, s.const(n)), s.const(eps)))
            y = s.mul(s.sub(v, s.div(t, s.const(n))), rs)
            return s.add(s.mul(y, gamma), beta)
        return self.generic([x, total, var, g, b],
                            [idx, kept, kept, [idx[-1]], [idx[-1]]], x.shape,
                            idx, ["parallel"] * rank, body)

    def gelu(self, x):
        def body(s, a, acc):
            v = a[0]
            e = s.op("math.erf", s.mul(v, s.const(1 / math.sqrt(2.0))))
            return s.mul(s.mul(v, s.const(0.5)), s.add(e, s.const(1.0)))
        idx = [f"d{i}" for i in range(len(x.shape))]
        return self.generic([x], [idx], x.shape, idx,
                            ["parallel"] * len(x.shape), body)

    def proj(self, x, w):
        """nn.Linear without a bias."""
        return self.matmul(x, self.transpose(w, [1, 0]))

    def rmsnorm(self, x, w, eps):
        """x * rsqrt(mean(x^2) + eps) * w, the square as math.powf (as
        torch-mlir emits x.pow(2))."""
        n = float(x.shape[-1])
        ss = self.rows(x, lambda s, v, acc: s.add(s.op("math.powf", v,
                                                           s.const(2.0)), acc),
                       0.0)

        def body(s, v, q, g):
            r = s.rsqrt(s.add(s.div(q, s.const(n)), s.const(eps)))
            return s.mul(s.mul(v, r), g)
        rank = len(x.shape)
        idx = [f"d{i}" for i in range(rank)]
        return self.generic([x, ss, w], [idx, idx[:-1] + ["0"], [idx[-1]]],
                            x.shape, idx, ["parallel"] * rank,
                            lambda s, a, acc: body(s, *a))

    def rotary(self, seq, d, base, fn):
        """cos or sin (`fn`) of the rotary angles, (seq, d): position i
        times 1 / base^(2j / d) for j = column mod d/2, from linalg.index."""
        def body(s, a, acc):
            def to_float(index):
                wide = s.line(f"arith.index_cast {index} : index to i64")
                return s.line(f"arith.sitofp {wide} : i64 to {self.dtype}")
            i = s.line("linalg.index 0 : index")
            j = s.line("linalg.index 1 : index")
            half = s.line(f"arith.constant {d // 2} : index")
            two = s.line("arith.constant 2 : index")
            column = s.line(f"arith.remui {j}, {half} : index")
            step = s.line(f"arith.muli {column}, {two} : index")
            exponent = s.div(to_float(step), s.const(float(d)))
            inv = s.div(s.const(1.0), s.op("math.powf", s.const(base), exponent))
            return s.op(fn, s.mul(to_float(i), inv))
        return self.generic([], [], (seq, d), ["d0", "d1"], ["parallel"] * 2,
                            body)

    def concat(self, dim, *parts):
        shape = list(parts[0].shape)
        shape[dim] = sum(p.shape[dim] for p in parts)
        out = Value(self._fresh(), tuple(shape), self.dtype)
        self.emit(f"{out.name} = tensor.concat dim({dim}) "
                  f"{', '.join(p.name for p in parts)} : "
                  f"({', '.join(p.type for p in parts)}) -> {out.type}")
        return out

    def rope(self, x, cos, sin):
        """x * cos + rotate_half(x) * sin over the last two dimensions of
        (batch x heads, seq, d), rotate_half(x) = cat(-x2, x1)."""
        n, seq, d = x.shape
        first = self.slice(x, [0, 0, 0], [n, seq, d // 2])
        second = self.slice(x, [0, 0, d // 2], [n, seq, d // 2])
        idx = ["d0", "d1", "d2"]
        negated = self.generic([second], [idx], second.shape, idx,
                               ["parallel"] * 3,
                               lambda s, a, acc: s.neg(a[0]))
        rotated = self.concat(2, negated, first)
        return self.generic([x, cos, rotated, sin],
                            [idx, ["d1", "d2"], idx, ["d1", "d2"]], x.shape,
                            idx, ["parallel"] * 3,
                            lambda s, a, acc: s.add(s.mul(a[0], a[1]),
                                                    s.mul(a[2], a[3])))

    def causal(self, scores, scale):
        """scores * scale, with key positions after the query's set to the
        lowest f32 (linalg.index, as torch-mlir lowers masked_fill)."""
        def body(s, a, acc):
            i = s.line("linalg.index 1 : index")
            j = s.line("linalg.index 2 : index")
            later = s.line(f"arith.cmpi ugt, {j}, {i} : index")
            lowest = s.const(-3.4028234663852886e38)
            scaled = s.mul(a[0], s.const(scale))
            return s.line(f"arith.select {later}, {lowest}, {scaled} : "
                          f"{self.dtype}")
        idx = ["d0", "d1", "d2"]
        return self.generic([scores], [idx], scores.shape, idx,
                            ["parallel"] * 3, body)

    def silu_gate(self, gate, up):
        """silu(gate) * up, silu(x) = x / (1 + exp(-x))."""
        idx = [f"d{i}" for i in range(len(gate.shape))]

        def body(s, a, acc):
            den = s.add(s.exp(s.neg(a[0])), s.const(1.0))
            return s.mul(s.div(a[0], den), a[1])
        return self.generic([gate, up], [idx, idx], gate.shape, idx,
                            ["parallel"] * len(idx), body)

    def batchnorm(self, x, g, b, eps):
        """BatchNorm2d in training mode as torch-mlir decomposes it: the
        mean and the biased variance over (N, H, W) as keepdim
        reductions, then (x - mean) * rsqrt(var + eps) * weight + bias."""
        n, c, h, w = x.shape
        count = float(n * h * w)
        idx = ["d0", "d1", "d2", "d3"]
        kept = ["0", "d1", "0", "0"]
        iters = ["reduction", "parallel", "reduction", "reduction"]
        total = self.generic([x], [idx], (1, c, 1, 1), kept, iters,
                             lambda s, a, acc: s.add(a[0], acc),
                             init=self.full((1, c, 1, 1), 0.0))

        def square(s, a, acc):
            d = s.sub(a[0], s.div(a[1], s.const(count)))
            return s.add(s.mul(d, d), acc)
        var = self.generic([x, total], [idx, kept], (1, c, 1, 1), kept, iters,
                           square, init=self.full((1, c, 1, 1), 0.0))

        def body(s, a, acc):
            v, t, q, gamma, beta = a
            rs = s.rsqrt(s.add(s.div(q, s.const(count)), s.const(eps)))
            y = s.mul(s.sub(v, s.div(t, s.const(count))), rs)
            return s.add(s.mul(y, gamma), beta)
        return self.generic([x, total, var, g, b], [idx, kept, kept, ["d1"], ["d1"]],
                            x.shape, idx, ["parallel"] * 4, body)

    def relu6(self, x):
        """ReLU6 as torch-mlir's clamp(0, 6): two compare-and-selects."""
        rank = len(x.shape)

        def body(s, a, acc):
            low, high = s.const(0.0), s.const(6.0)
            v = s.op("arith.select", s.op("arith.cmpf ult,", a[0], low),
                     low, a[0])
            return s.op("arith.select", s.op("arith.cmpf ugt,", v, high),
                        high, v)
        idx = [f"d{i}" for i in range(rank)]
        return self.generic([x], [idx], x.shape, idx, ["parallel"] * rank, body)

    def grouped_conv2d(self, x, w, stride, padding, groups):
        """A convolution with `groups` groups, as torch-mlir writes it: a
        zero pad, the image's channels, the filter's filters and the zero
        output's channels split into (groups, per group) by
        tensor.expand_shape, linalg.conv_2d_ngchw_gfchw, and the output's
        groups collapsed again."""
        if groups == 1:
            return self.conv2d(x, w, stride, padding)
        if padding:
            x = self.pad(x, [0, 0, padding, padding], [0, 0, padding, padding])
        n, c, h, wd = x.shape
        f, cg, kh, kw = w.shape
        shape = (n, f, (h - kh) // stride + 1, (wd - kw) // stride + 1)
        x5 = self.reshape(x, (n, groups, c // groups, h, wd),
                          [[0], [1, 2], [3], [4]])
        w5 = self.reshape(w, (groups, f // groups, cg, kh, kw),
                          [[0, 1], [2], [3], [4]])
        init = self.reshape(self.full(shape, 0.0),
                            (n, groups, f // groups) + shape[2:],
                            [[0], [1, 2], [3], [4]])
        out = Value(self._fresh(), init.shape, self.dtype)
        self.emit(f"{out.name} = linalg.conv_2d_ngchw_gfchw {{dilations = "
                  f"dense<1> : vector<2xi64>, strides = dense<{stride}> : "
                  f"vector<2xi64>}} ins({x5.name}, {w5.name} : {x5.type}, "
                  f"{w5.type}) outs({init.name} : {init.type}) -> {out.type}")
        return self.reshape(out, shape, [[0], [1, 2], [3], [4]])

    def depthwise_conv2d(self, x, w, stride, padding):
        """A convolution with groups = channels and one filter per group, as
        torch-mlir writes it: the (C, 1, KH, KW) weight collapsed to
        (C, KH, KW), a zero pad, linalg.depthwise_conv_2d_nchw_chw into a
        zero fill."""
        c, _, kh, kw = w.shape
        w = self.reshape(w, (c, kh, kw), [[0, 1], [2], [3]])
        if padding:
            x = self.pad(x, [0, 0, padding, padding], [0, 0, padding, padding])
        n, _, h, wd = x.shape
        shape = (n, c, (h - kh) // stride + 1, (wd - kw) // stride + 1)
        init = self.full(shape, 0.0)
        out = Value(self._fresh(), shape, self.dtype)
        self.emit(f"{out.name} = linalg.depthwise_conv_2d_nchw_chw {{dilations "
                  f"= dense<1> : vector<2xi64>, strides = dense<{stride}> : "
                  f"vector<2xi64>}} ins({x.name}, {w.name} : {x.type}, "
                  f"{w.type}) outs({init.name} : {init.type}) -> {out.type}")
        return out

    def maxpool(self, x, kernel, stride, padding):
        """max_pool2d: a pad with the lowest float, then pooling_nchw_max
        into a fill of it."""
        lowest = -3.4028234663852886e38
        x = self.pad(x, [0, 0, padding, padding], [0, 0, padding, padding],
                     lowest)
        n, c, h, w = x.shape
        shape = (n, c, (h - kernel) // stride + 1, (w - kernel) // stride + 1)
        return self._pooling("max", x, (kernel, kernel), stride,
                             self.full(shape, lowest))

    def avgpool(self, x):
        """adaptive_avg_pool2d(x, 1): pooling_nchw_sum over the whole map,
        divided by its size."""
        n, c, h, w = x.shape
        total = self._pooling("sum", x, (h, w), 1, self.full((n, c, 1, 1), 0.0))
        idx = ["d0", "d1", "d2", "d3"]
        return self.generic([total], [idx], total.shape, idx, ["parallel"] * 4,
                            lambda s, a, acc: s.div(a[0], s.const(float(h * w))))

    def _pooling(self, kind, x, window, stride, init):
        shape = self.empty(window)
        out = Value(self._fresh(), init.shape, self.dtype)
        self.emit(f"{out.name} = linalg.pooling_nchw_{kind} {{dilations = "
                  f"dense<1> : vector<2xi64>, strides = dense<{stride}> : "
                  f"vector<2xi64>}} ins({x.name}, {shape.name} : {x.type}, "
                  f"{shape.type}) outs({init.name} : {init.type}) -> {out.type}")
        return out

    def addmm(self, x, w, bias):
        """HuggingFace's Conv1D, torch.addmm(bias, x, w) with w (in, out):
        a matmul into a zero fill and the broadcast bias added."""
        y = self.matmul(x, w)
        return self.generic([y, bias], [["d0", "d1"], ["d1"]], y.shape,
                            ["d0", "d1"], ["parallel"] * 2,
                            lambda s, a, acc: s.add(a[0], a[1]))

    def gelu_tanh(self, x):
        """GELU's tanh form (HuggingFace's gelu_new), x^3 as math.powf."""
        def body(s, a, acc):
            v = a[0]
            cube = s.op("math.powf", v, s.const(3.0))
            inner = s.mul(s.add(v, s.mul(cube, s.const(0.044715))),
                          s.const(math.sqrt(2.0 / math.pi)))
            return s.mul(s.mul(v, s.const(0.5)), s.add(s.tanh(inner), s.const(1.0)))
        idx = [f"d{i}" for i in range(len(x.shape))]
        return self.generic([x], [idx], x.shape, idx,
                            ["parallel"] * len(x.shape), body)

    def causal_buffer(self, seq):
        """The causal mask as the module's bool buffer: a dense i1 constant
        (seq, seq), true on and below the diagonal."""
        rows = ", ".join("[" + ", ".join("true" if j <= i else "false"
                                         for j in range(seq)) + "]"
                         for i in range(seq))
        name = self._fresh("mask")
        self.emit(f"{name} = arith.constant dense<[{rows}]> : "
                  f"tensor<{seq}x{seq}xi1>")
        return Value(name, (seq, seq), "i1")

    def masked(self, scores, mask, scale):
        """torch.where(mask, scores / scale, lowest f32) over (batch x
        heads, seq, seq), the mask broadcast over the first dimension."""
        out = Value(self._fresh(), scores.shape, self.dtype)
        init = self.empty(scores.shape)
        maps = [affine_map(3, m) for m in (["d0", "d1", "d2"], ["d1", "d2"],
                                           ["d0", "d1", "d2"])]
        t = self.dtype
        self.emit(f"{out.name} = linalg.generic {{indexing_maps = "
                  f"[{', '.join(maps)}], iterator_types = [\"parallel\", "
                  f"\"parallel\", \"parallel\"]}} ins({scores.name}, "
                  f"{mask.name} : {scores.type}, tensor<{mask.shape[0]}x"
                  f"{mask.shape[1]}xi1>) outs({init.name} : {init.type}) {{")
        self.body.append(f"  ^bb0(%a0: {t}, %a1: i1, %acc: {t}):")
        self.body.append(f"      %s1 = arith.constant {float_literal(scale)} : {t}")
        self.body.append(f"      %s2 = arith.divf %a0, %s1 : {t}")
        self.body.append(f"      %s3 = arith.constant -3.4028234663852886e+38 : {t}")
        self.body.append(f"      %s4 = arith.select %a1, %s2, %s3 : {t}")
        self.body.append(f"    linalg.yield %s4 : {t}")
        self.body.append(f"  }} -> {out.type}")
        return out

    def text(self, result, module_name):
        args = ", ".join(f'{v.name}: {v.type} loc("{self.locs[v.name]}")'
                         for v, _ in self.args)
        lines = [f"// Written by tofu.exports in the form torch-mlir's "
                 f"TorchToLinalg emits for {module_name}.",
                 f'module attributes {{torch.debug_module_name = '
                 f'"{module_name}"}} {{',
                 f"  func.func @forward({args}) -> {result.type} {{"]
        lines += ["  " + line for line in self.body]
        lines += [f"    return {result.name} : {result.type}", "  }", "}"]
        return "\n".join(lines) + "\n"


def mlp_text(batch=256, widths=(1024, 1024, 1024, 1024), dtype="f32"):
    """nn.Sequential(Linear, ReLU, ..., Linear) over `widths` as a
    forward export (returns the last layer's output)."""
    b = _Export(dtype)
    x = b.arg("input", (batch, widths[0]), "input")
    for i, (fan_in, out) in enumerate(zip(widths, widths[1:])):
        w = b.arg(f"{2 * i}.weight", (out, fan_in))
        bias = b.arg(f"{2 * i}.bias", (out,))
        x = b.linear(x, w, bias)
        if i + 2 < len(widths):
            x = b.relu(x)
    return b.text(x, "Sequential")


def bert_text(batch=8, seq=128, hidden=128, heads=2, ffn=512, layers=2,
              dtype="f32"):
    """A BERT encoder (HuggingFace's BertLayer: self-attention with biases,
    post-LayerNorm with eps 1e-12, GELU with erf) as a forward export of
    the hidden states; the input is the embedded sequence."""
    b = _Export(dtype)
    d = hidden // heads
    x = b.arg("input", (batch, seq, hidden), "input")
    h = b.reshape(x, (batch * seq, hidden), [[0, 1], [2]])
    for layer in range(layers):
        p = f"layers.{layer}."
        lin = lambda name, out, fan_in: (b.arg(p + name + ".weight", (out, fan_in)),
                                         b.arg(p + name + ".bias", (out,)))
        wq, wk, wv, wo = (lin(n, hidden, hidden) for n in ("query", "key", "value", "out"))
        ln1 = (b.arg(p + "ln1.weight", (hidden,)), b.arg(p + "ln1.bias", (hidden,)))
        w1, w2 = lin("ffn_in", ffn, hidden), lin("ffn_out", hidden, ffn)
        ln2 = (b.arg(p + "ln2.weight", (hidden,)), b.arg(p + "ln2.bias", (hidden,)))

        def split(t, perm):
            t = b.reshape(t, (batch, seq, heads, d), [[0, 1], [2, 3]])
            t = b.transpose(t, perm)
            return b.reshape(t, (batch * heads,) + t.shape[2:], [[0, 1], [2], [3]])
        q = split(b.linear(h, *wq), [0, 2, 1, 3])
        k = split(b.linear(h, *wk), [0, 2, 3, 1])
        v = split(b.linear(h, *wv), [0, 2, 1, 3])
        scale = math.sqrt(d)
        scores = b.batch_matmul(q, k)
        idx = ["d0", "d1", "d2"]
        scores = b.generic([scores], [idx], scores.shape, idx, ["parallel"] * 3,
                           lambda s, a, acc: s.div(a[0], s.const(scale)))
        ctx = b.batch_matmul(b.softmax(scores), v)
        ctx = b.reshape(ctx, (batch, heads, seq, d), [[0, 1], [2], [3]])
        ctx = b.transpose(ctx, [0, 2, 1, 3])
        ctx = b.reshape(ctx, (batch * seq, hidden), [[0, 1], [2, 3]])
        h = b.layernorm(b.add(b.linear(ctx, *wo), h), *ln1, 1e-12)
        f = b.linear(b.gelu(b.linear(h, *w1)), *w2)
        h = b.layernorm(b.add(f, h), *ln2, 1e-12)
    return b.text(b.reshape(h, (batch, seq, hidden), [[0, 1], [2]]), "BertEncoder")


def llama_text(batch=8, seq=128, hidden=256, heads=4, ffn=688, layers=2,
               dtype="f32", base=10000.0, eps=1e-6):
    """A LLaMA decoder stack (HuggingFace's LlamaModel after the embedding:
    rotary embeddings from the positions, RMSNorm with eps 1e-6, causal
    self-attention without biases, the SiLU-gated MLP, the final RMSNorm)
    as a forward export of the hidden states; the input is the embedded
    sequence."""
    b = _Export(dtype)
    d = hidden // heads
    x = b.arg("input", (batch, seq, hidden), "input")
    h = b.reshape(x, (batch * seq, hidden), [[0, 1], [2]])
    cos, sin = (b.rotary(seq, d, base, fn) for fn in ("math.cos", "math.sin"))
    for layer in range(layers):
        p = f"layers.{layer}."
        norm_in = b.arg(p + "input_layernorm.weight", (hidden,))
        wq, wk, wv, wo = (b.arg(p + f"self_attn.{n}_proj.weight", (hidden, hidden))
                          for n in ("q", "k", "v", "o"))
        norm_post = b.arg(p + "post_attention_layernorm.weight", (hidden,))
        wg, wu = (b.arg(p + f"mlp.{n}_proj.weight", (ffn, hidden))
                  for n in ("gate", "up"))
        wd = b.arg(p + "mlp.down_proj.weight", (hidden, ffn))

        def split(t, perm):
            t = b.reshape(t, (batch, seq, heads, d), [[0, 1], [2, 3]])
            t = b.transpose(t, perm)
            return b.reshape(t, (batch * heads,) + t.shape[2:], [[0, 1], [2], [3]])
        xn = b.rmsnorm(h, norm_in, eps)
        q = b.rope(split(b.proj(xn, wq), [0, 2, 1, 3]), cos, sin)
        k = b.rope(split(b.proj(xn, wk), [0, 2, 1, 3]), cos, sin)
        v = split(b.proj(xn, wv), [0, 2, 1, 3])
        kt = b.transpose(k, [0, 2, 1])
        scores = b.causal(b.batch_matmul(q, kt), d ** -0.5)
        ctx = b.batch_matmul(b.softmax(scores), v)
        ctx = b.reshape(ctx, (batch, heads, seq, d), [[0, 1], [2], [3]])
        ctx = b.transpose(ctx, [0, 2, 1, 3])
        ctx = b.reshape(ctx, (batch * seq, hidden), [[0, 1], [2, 3]])
        h = b.add(h, b.proj(ctx, wo))
        xn = b.rmsnorm(h, norm_post, eps)
        gated = b.silu_gate(b.proj(xn, wg), b.proj(xn, wu))
        h = b.add(h, b.proj(gated, wd))
    h = b.rmsnorm(h, b.arg("norm.weight", (hidden,)), eps)
    return b.text(b.reshape(h, (batch, seq, hidden), [[0, 1], [2]]), "LlamaModel")


def gpt2_text(batch=8, seq=128, hidden=256, heads=4, layers=2, dtype="f32"):
    """A GPT-2 decoder stack (HuggingFace's GPT2Model after the token
    embedding: learned position embeddings added, pre-LayerNorm blocks with
    eps 1e-5, q, k and v from one Conv1D (an addmm with an (in, out)
    weight) split by slices, the causal mask a constant bool buffer read
    by a select with the lowest f32, GELU's tanh form with x^3 as
    math.powf, the final LayerNorm) as a forward export of the hidden
    states; the input is the embedded tokens."""
    b = _Export(dtype)
    d = hidden // heads
    x = b.arg("input", (batch, seq, hidden), "input")
    wpe = b.arg("wpe.weight", (seq, hidden))
    idx3 = ["d0", "d1", "d2"]
    h = b.generic([x, wpe], [idx3, ["d1", "d2"]], x.shape, idx3,
                  ["parallel"] * 3, lambda s, a, acc: s.add(a[0], a[1]))
    h = b.reshape(h, (batch * seq, hidden), [[0, 1], [2]])
    mask = b.causal_buffer(seq)
    for layer in range(layers):
        p = f"h.{layer}."
        conv1d = lambda name, fan_in, out: (b.arg(p + name + ".weight", (fan_in, out)),
                                            b.arg(p + name + ".bias", (out,)))
        ln1 = (b.arg(p + "ln_1.weight", (hidden,)), b.arg(p + "ln_1.bias", (hidden,)))
        c_attn = conv1d("attn.c_attn", hidden, 3 * hidden)
        c_proj = conv1d("attn.c_proj", hidden, hidden)
        ln2 = (b.arg(p + "ln_2.weight", (hidden,)), b.arg(p + "ln_2.bias", (hidden,)))
        c_fc = conv1d("mlp.c_fc", hidden, 4 * hidden)
        c_out = conv1d("mlp.c_proj", 4 * hidden, hidden)

        def split(t, perm):
            t = b.reshape(t, (batch, seq, heads, d), [[0, 1], [2, 3]])
            t = b.transpose(t, perm)
            return b.reshape(t, (batch * heads,) + t.shape[2:], [[0, 1], [2], [3]])
        qkv = b.addmm(b.layernorm(h, *ln1, 1e-5), *c_attn)
        q, k, v = (b.slice(qkv, [0, i * hidden], [batch * seq, hidden])
                   for i in range(3))
        scores = b.batch_matmul(split(q, [0, 2, 1, 3]), split(k, [0, 2, 3, 1]))
        scores = b.masked(scores, mask, math.sqrt(d))
        ctx = b.batch_matmul(b.softmax(scores), split(v, [0, 2, 1, 3]))
        ctx = b.reshape(ctx, (batch, heads, seq, d), [[0, 1], [2], [3]])
        ctx = b.transpose(ctx, [0, 2, 1, 3])
        ctx = b.reshape(ctx, (batch * seq, hidden), [[0, 1], [2, 3]])
        h = b.add(h, b.addmm(ctx, *c_proj))
        f = b.addmm(b.gelu_tanh(b.addmm(b.layernorm(h, *ln2, 1e-5), *c_fc)), *c_out)
        h = b.add(h, f)
    ln_f = (b.arg("ln_f.weight", (hidden,)), b.arg("ln_f.bias", (hidden,)))
    h = b.layernorm(h, *ln_f, 1e-5)
    return b.text(b.reshape(h, (batch, seq, hidden), [[0, 1], [2]]), "GPT2Model")


def _resnet_export(dtype, batch, image, classes, widths, blocks, stem,
                   block, name):
    """A ResNet as a forward export of the logits around `block(b, conv,
    bn, x, prefix, planes, stride)`, which writes a block's convolutions and
    batch norms but its shortcut and returns its residual branch:
    convolutions without bias after a tensor.pad, batch norm in training
    mode (the batch's mean and biased variance as keepdim reductions),
    ReLU, the stem of `stem` channels (with `image` 64 or more the 7x7
    convolution and the max pool after a pad with the lowest float), the
    downsampling shortcuts, the adaptive average pool as a pooling sum and
    a division, flatten and nn.Linear."""
    b = _Export(dtype)
    x = b.arg("input", (batch, 3, image, image), "input")
    big = image >= 64

    def bn(x, prefix):
        return b.batchnorm(x, b.arg(prefix + ".weight", (x.shape[1],)),
                           b.arg(prefix + ".bias", (x.shape[1],)), 1e-5)

    def conv(x, name, cout, k, stride, groups=1):
        w = b.arg(name, (cout, x.shape[1] // groups, k, k))
        return b.grouped_conv2d(x, w, stride, k // 2, groups)
    x = b.relu(bn(conv(x, "conv1.weight", stem, 7 if big else 3,
                       2 if big else 1), "bn1"))
    if big:
        x = b.maxpool(x, 3, 2, 1)
    for i, (planes, n) in enumerate(zip(widths, blocks)):
        for j in range(n):
            p = f"layer{i + 1}.{j}."
            stride = 2 if i and not j else 1
            h = block(b, conv, bn, x, p, planes, stride)
            if stride != 1 or x.shape[1] != h.shape[1]:
                x = bn(conv(x, p + "downsample.0.weight", h.shape[1], 1, stride),
                       p + "downsample.1")
            x = b.relu(b.add(h, x))
    n, c = x.shape[:2]
    pooled = b.reshape(b.avgpool(x), (n, c), [[0], [1, 2, 3]])
    logits = b.linear(pooled, b.arg("fc.weight", (classes, c)),
                      b.arg("fc.bias", (classes,)))
    return b.text(logits, name)


def resnet_text(batch=16, image=32, classes=10, widths=(64, 128, 256, 512),
                blocks=(2, 2, 2, 2), dtype="f32"):
    """torchvision's ResNet of BasicBlocks (ResNet-18 at its default
    sizes) as a forward export of the logits (_resnet_export), its stem of
    widths[0] channels."""
    def basic(b, conv, bn, x, p, cout, stride):
        h = b.relu(bn(conv(x, p + "conv1.weight", cout, 3, stride), p + "bn1"))
        return bn(conv(h, p + "conv2.weight", cout, 3, 1), p + "bn2")
    return _resnet_export(dtype, batch, image, classes, widths, blocks,
                          widths[0], basic, "ResNet")


def resnext_text(batch=16, image=32, classes=10, widths=(64, 128, 256, 512),
                 blocks=(3, 4, 6, 3), groups=32, group_width=4, dtype="f32"):
    """torchvision's ResNeXt (ResNeXt-50 32x4d at its default sizes) as a
    forward export of the logits (_resnet_export, its stem of 64
    channels): Bottleneck blocks whose 3x3 convolution has `groups` groups
    (grouped_conv2d: linalg.conv_2d_ngchw_gfchw between expand_shapes, as
    torch-mlir writes it)."""
    def bottleneck(b, conv, bn, x, p, planes, stride):
        width = _resnext_width(planes, groups, group_width)
        h = b.relu(bn(conv(x, p + "conv1.weight", width, 1, 1), p + "bn1"))
        h = b.relu(bn(conv(h, p + "conv2.weight", width, 3, stride, groups),
                    p + "bn2"))
        return bn(conv(h, p + "conv3.weight", planes * 4, 1, 1), p + "bn3")
    return _resnet_export(dtype, batch, image, classes, widths, blocks, 64,
                          bottleneck, "ResNeXt")


def mobilenet_text(batch=16, image=64, classes=10, width=100, stages=7,
                   dtype="f32"):
    """torchvision's MobileNetV2 (`width` percent of its channels, its first
    `stages` of 7 stages) as a forward export of the logits: convolutions
    without bias, the depthwise ones as linalg.depthwise_conv_2d_nchw_chw,
    batch norm in training mode, ReLU6 as a clamp, the residual sums, the
    adaptive average pool, flatten and nn.Linear (the classifier's dropout
    left out)."""
    b = _Export(dtype)
    x = b.arg("input", (batch, 3, image, image), "input")
    stem, plan, last = mobilenet_plan(width, stages)

    def conv_bn(x, conv, bn, cout, k, stride, depthwise=False, act=True):
        cin = x.shape[1]
        w = b.arg(conv + ".weight", (cout, 1 if depthwise else cin, k, k))
        x = (b.depthwise_conv2d(x, w, stride, k // 2) if depthwise
             else b.conv2d(x, w, stride, k // 2))
        x = b.batchnorm(x, b.arg(bn + ".weight", (cout,)),
                        b.arg(bn + ".bias", (cout,)), 1e-5)
        return b.relu6(x) if act else x
    x = conv_bn(x, "features.0.0", "features.0.1", stem, 3, 2)
    for i, (cin, hidden, cout, stride) in enumerate(plan):
        p, j, h = f"features.{i + 1}.conv.", 0, x
        if hidden != cin:
            h, j = conv_bn(h, f"{p}0.0", f"{p}0.1", hidden, 1, 1), 1
        h = conv_bn(h, f"{p}{j}.0", f"{p}{j}.1", hidden, 3, stride,
                    depthwise=True)
        h = conv_bn(h, f"{p}{j + 1}", f"{p}{j + 2}", cout, 1, 1, act=False)
        x = b.add(x, h) if stride == 1 and cin == cout else h
    n = len(plan) + 1
    x = conv_bn(x, f"features.{n}.0", f"features.{n}.1", last, 1, 1)
    n, c = x.shape[:2]
    pooled = b.reshape(b.avgpool(x), (n, c), [[0], [1, 2, 3]])
    logits = b.linear(pooled, b.arg("classifier.1.weight", (classes, c)),
                      b.arg("classifier.1.bias", (classes,)))
    return b.text(logits, "MobileNetV2")


EXPORTS = {
    "mlp-loss": (os.path.join(REPO, "models", "torch-mlir-style",
                              "mlp-loss.mlir"), "weights=all inputs=0",
                 mlp_loss),
}


def main(argv=None):
    import argparse
    from tofu import cli
    parser = argparse.ArgumentParser(
        description="Write a forward export in torch-mlir's form.")
    parser.add_argument("name", choices=sorted(GENERATED))
    parser.add_argument("--size", action="append", default=[],
                        metavar="KEY=VALUE",
                        help="a size other than the default (mlp: batch, "
                        "widths=IN,H,...,OUT; bert and llama: batch, seq, "
                        "hidden, heads, ffn, layers; gpt2: batch, seq, "
                        "hidden, heads, layers; resnet: batch, image, "
                        "classes, widths=W1,W2,..., blocks=N1,N2,...; "
                        "mobilenet: batch, image, classes, width (percent), "
                        "stages (1 to 7); resnext: those of resnet, groups, "
                        "group_width)")
    parser.add_argument("--dtype", choices=("f32", "f64"), default="f32")
    parser.add_argument("-o", "--output", default="-")
    args = parser.parse_args(argv)
    try:
        sizes = sizes_of(args.name, args.size)
    except ValueError as err:
        parser.error(str(err))
    text = GENERATED[args.name][0](args.dtype, **sizes)
    if args.output == "-":
        sys.stdout.write(text)
        return 0
    problem = cli.output_problem(args.output)
    if problem:
        parser.error(problem)
    with open(args.output, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    from tofu import cli as _cli
    _cli.run_main(main)
