#!/usr/bin/env python3
"""Times one training step on an NVIDIA GPU: PyTorch eager against Tofu.

The issue's sizes: MLP (hidden 8192, 4 layers, batch 512, 784 features, 10
classes, softmax cross-entropy, SGD), WResNet-50-4 (batch 32, 224x224, no
batch norm, as the zoo's `wresnet`) and a 4-layer BERT-Large slice
(sequence 512, batch 8, MSE). PyTorch runs eager in FP32 (TF32 off); each
step is timed with CUDA events; the median of `--steps` steps after
`--warmup` is reported with the achieved TFLOP/s (analytic FLOPs: 3x the
forward FLOPs of the products and convolutions).

The Tofu side writes the same model with the zoo (`python3 -m tofu.models`),
adds the backward pass and the optimizer (`tofu-opt --tofu-autodiff
--tofu-optimizer`) and runs it with `tofu-run --gpu`, which lowers it with
tofu-gpu-pipeline, initialises it as the CPU path does (tofu-train-driver's
counter-based hash) and prints the median step time over the steps after
the warm-up (CUDA events around each step). The PyTorch MLP starts from
the same values (the hash is reproduced here); the Wide ResNet and the BERT
slice have the same shapes and FLOPs but PyTorch's own initial values.

Needs the standard library and, on the GPU machine only, PyTorch. Without
an NVIDIA GPU or without PyTorch it stops with a message and exit code 2:
nothing is estimated.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def fail(message, code=2):
    print("gpu_step: " + message, file=sys.stderr)
    sys.exit(code)


def require_gpu():
    smi = shutil.which("nvidia-smi")
    if not smi:
        fail("no NVIDIA GPU: nvidia-smi is not installed; nothing measured")
    listed = subprocess.run([smi, "-L"], capture_output=True, text=True)
    if listed.returncode != 0 or "GPU" not in listed.stdout:
        fail("no NVIDIA GPU: `nvidia-smi -L` lists none; nothing measured")
    driver = subprocess.run(
        [smi, "--query-gpu=driver_version", "--format=csv,noheader"],
        capture_output=True, text=True).stdout.strip().splitlines()
    try:
        import torch
    except ImportError:
        fail("PyTorch is not installed; nothing measured")
    if not torch.cuda.is_available():
        fail("PyTorch sees no CUDA device; nothing measured")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch, {"device": torch.cuda.get_device_name(0),
                   "driver": driver[0] if driver else "unknown",
                   "torch": torch.__version__,
                   "cuda": torch.version.cuda}


MASK64 = (1 << 64) - 1


def signed64(v):
    """A 64-bit pattern as the int64 that torch stores."""
    v &= MASK64
    return v - (1 << 64) if v >= (1 << 63) else v


def shift_right(x, k):
    """Logical right shift of int64 values (torch's >> is arithmetic)."""
    return (x >> k) & ((1 << (64 - k)) - 1)


def splitmix64(x):
    """runtime/cpu's hash, on Python ints (mod 2^64) or int64 tensors (whose
    products wrap mod 2^64)."""
    if isinstance(x, int):
        x = (x + 0x9e3779b97f4a7c15) & MASK64
        x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & MASK64
        x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & MASK64
        return x ^ (x >> 31)
    x = x + signed64(0x9e3779b97f4a7c15)
    x = (x ^ shift_right(x, 30)) * signed64(0xbf58476d1ce4e5b9)
    x = (x ^ shift_right(x, 27)) * signed64(0x94d049bb133111eb)
    return x ^ shift_right(x, 31)


def hash_uniform(torch, count, stream, device, seed=1):
    """tofu_fill_hash's uniform values in [0, 1) of argument `stream` - 1,
    by global row-major index (tofu-train-driver, seed 1)."""
    base = splitmix64((seed * 0x100000001b3 + stream) & MASK64)
    index = torch.arange(count, dtype=torch.int64, device=device)
    bits = shift_right(splitmix64(index ^ signed64(base)), 11)
    return bits.to(torch.float64) / float(1 << 53)


def weight(torch, shape, stream, device):
    """A weight as tofu-train-driver fills it: uniform in [-s, s] with
    s = 1 / sqrt(fan-in), the fan-in being the element count over the
    largest dimension."""
    count = 1
    for d in shape:
        count *= d
    largest = max(shape)
    scale = 1.0 / max(1.0, count / largest) ** 0.5
    u = hash_uniform(torch, count, stream, device)
    return ((2.0 * u - 1.0) * scale).to(torch.float32).reshape(shape)


def mlp(torch, device, hidden=8192, layers=4, batch=512, features=784,
        classes=10):
    widths = [features] + [hidden] * layers + [classes]
    params, seed = [], 3  # arguments 1 and 2 are the input and the labels
    for i in range(len(widths) - 1):
        params.append(weight(torch, (widths[i], widths[i + 1]), seed, device))
        params.append(weight(torch, (widths[i + 1],), seed + 1, device))
        seed += 2
    for p in params:
        p.requires_grad_(True)
    # Inputs are uniform in [0, 1), as tofu-train-driver fills them.
    x = hash_uniform(torch, batch * features, 1, device).float().reshape(
        batch, features)
    labels = torch.softmax(hash_uniform(torch, batch * classes, 2, device)
                           .float().reshape(batch, classes), dim=1)

    def step():
        h = x
        for i in range(0, len(params) - 2, 2):
            h = torch.relu(h @ params[i] + params[i + 1])
        logits = h @ params[-2] + params[-1]
        loss = -(labels * torch.log_softmax(logits, dim=1)).sum() / batch
        grads = torch.autograd.grad(loss, params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p.sub_(0.01 * g)
        return loss

    flops = 0
    for i in range(len(widths) - 1):
        flops += 3 * 2 * batch * widths[i] * widths[i + 1]
    return step, flops


def bert_slice(torch, device, layers=4, hidden=1024, heads=16, seq=512,
               batch=8):
    torch.manual_seed(0)
    model = torch.nn.Sequential(*[
        torch.nn.TransformerEncoderLayer(hidden, heads, 4 * hidden,
                                         dropout=0.0, activation="gelu",
                                         batch_first=True, norm_first=False)
        for _ in range(layers)]).to(device)
    opt = torch.optim.Adam(model.parameters(), lr=1e-4)
    x = torch.randn(batch, seq, hidden, device=device)
    target = torch.randn(batch, seq, hidden, device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.mse_loss(model(x), target)
        loss.backward()
        opt.step()
        return loss

    per_layer = (4 * 2 * seq * hidden * hidden        # projections
                 + 2 * 2 * seq * seq * hidden          # scores, context
                 + 2 * 2 * seq * hidden * 4 * hidden)  # feed-forward
    return step, 3 * batch * layers * per_layer


def wresnet_50_4(torch, device, batch=32, image=224, classes=1000):
    nn = torch.nn
    torch.manual_seed(0)

    class Bottleneck(nn.Module):
        def __init__(self, cin, mid, cout, stride):
            super().__init__()
            self.a = nn.Conv2d(cin, mid, 1)
            self.b = nn.Conv2d(mid, mid, 3, stride, 1)
            self.c = nn.Conv2d(mid, cout, 1)
            self.skip = (nn.Conv2d(cin, cout, 1, stride)
                         if stride != 1 or cin != cout else nn.Identity())

        def forward(self, x):
            y = torch.relu(self.a(x))
            y = torch.relu(self.b(y))
            return torch.relu(self.c(y) + self.skip(x))

    width, blocks = 4, [3, 4, 6, 3]
    layers = [nn.Conv2d(3, 64 * width, 7, 2, 3), nn.ReLU(),
              nn.MaxPool2d(3, 2, 1)]
    cin = 64 * width
    for stage, count in enumerate(blocks):
        mid = 64 * width * 2 ** stage
        for i in range(count):
            layers.append(Bottleneck(cin, mid, 4 * mid,
                                     2 if i == 0 and stage > 0 else 1))
            cin = 4 * mid
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(cin, classes)]
    model = nn.Sequential(*layers).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(batch, 3, image, image, device=device)
    y = torch.randint(0, classes, (batch,), device=device)

    def step():
        opt.zero_grad(set_to_none=True)
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss

    return step, None


MODELS = {"mlp": mlp, "wresnet-50-4": wresnet_50_4, "bert-slice": bert_slice}

# The same models from the zoo, with their optimizers.
ZOO = {
    "mlp": (["mlp", "--batch", "512", "--hidden", "8192", "--layers", "4"],
            "kind=sgd"),
    "wresnet-50-4": (["wresnet", "--depth", "50", "--width", "4",
                      "--batch", "32", "--image", "224"], "kind=sgd"),
    "bert-slice": (["transformer", "--layers", "4", "--seq", "512",
                    "--batch", "8"], "kind=adam lr=0.0001"),
}


def time_torch(torch, step, warmup, steps):
    for _ in range(warmup):
        step()
    torch.cuda.synchronize()
    times = []
    for _ in range(steps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        step()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def tofu_gpu_runner(tofu_run):
    """Whether tofu-run can run a step on the GPU."""
    if not os.path.exists(tofu_run):
        return False
    shown = subprocess.run([tofu_run, "--help"], capture_output=True,
                           text=True)
    return "--gpu" in shown.stdout


def time_tofu(name, args, workdir):
    """The median step time (ms) of `tofu-run --gpu` on the zoo's model, or
    None with the reason printed."""
    zoo, optimizer = ZOO[name]
    step = os.path.join(workdir, name + ".mlir")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    forward = subprocess.run([sys.executable, "-m", "tofu.models"] + zoo,
                             capture_output=True, text=True, env=env)
    if forward.returncode != 0:
        print("tofu: %s: the zoo failed: %s" % (name, forward.stderr))
        return None
    lowered = subprocess.run(
        [args.tofu_opt, "--tofu-autodiff", "--tofu-optimizer=" + optimizer,
         "-o", step], input=forward.stdout, capture_output=True, text=True)
    if lowered.returncode != 0:
        print("tofu: %s: tofu-opt failed: %s" % (name, lowered.stderr))
        return None
    run = subprocess.run(
        [args.tofu_run, "--gpu", step, "--steps",
         str(args.warmup + args.steps), "--warmup", str(args.warmup)],
        capture_output=True, text=True)
    match = re.search(r"gpu step time: median ([0-9.]+) ms", run.stdout)
    if run.returncode != 0 or not match:
        print("tofu: %s: tofu-run --gpu failed (exit %d): %s" % (
            name, run.returncode, run.stderr.strip()[-2000:]))
        return None
    return float(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="all",
                        choices=["all"] + sorted(MODELS))
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--tofu-run",
                        default=os.path.join(ROOT, "build/bin/tofu-run"))
    parser.add_argument("--tofu-opt",
                        default=os.path.join(ROOT, "build/bin/tofu-opt"))
    parser.add_argument("--json", help="write the results to this file")
    parser.add_argument("--torch-only", action="store_true",
                        help="time PyTorch only (the GPU bundle times its "
                        "own executables)")
    args = parser.parse_args()

    torch, machine = require_gpu()
    device = torch.device("cuda")
    print("machine: " + json.dumps(machine))
    have_tofu = not args.torch_only and tofu_gpu_runner(args.tofu_run)
    if args.torch_only:
        pass
    elif not have_tofu:
        print("tofu: not measured: %s has no --gpu (build the project "
              "first)" % args.tofu_run)
    results = []
    names = sorted(MODELS) if args.model == "all" else [args.model]
    failed = not have_tofu and not args.torch_only
    with tempfile.TemporaryDirectory() as workdir:
        for name in names:
            torch.cuda.empty_cache()
            torch.cuda.reset_peak_memory_stats()
            step, flops = MODELS[name](torch, device)
            ms = time_torch(torch, step, args.warmup, args.steps)
            peak = torch.cuda.max_memory_allocated()
            del step
            torch.cuda.empty_cache()
            tofu_ms = time_tofu(name, args, workdir) if have_tofu else None
            failed |= have_tofu and tofu_ms is None

            def rate(t):
                return flops / (t * 1e-3) / 1e12 if flops and t else None

            row = {"model": name, "torch_ms": ms, "torch_tflops": rate(ms),
                   "torch_max_memory_allocated": peak,
                   "tofu_ms": tofu_ms, "tofu_tflops": rate(tofu_ms),
                   "ratio": tofu_ms / ms if tofu_ms else None}
            results.append(row)
            print("%-14s torch %9.2f ms/step%s   tofu %s" % (
                name, ms,
                "  %6.1f TFLOP/s" % row["torch_tflops"] if flops else "",
                "%9.2f ms/step  %.2fx torch" % (tofu_ms, row["ratio"])
                if tofu_ms else "not measured"))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": machine, "results": results}, f, indent=2)
    return 3 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
