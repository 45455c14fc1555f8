#!/usr/bin/env python3
"""Training steps of torch-mlir-style exports: tofu-run next to PyTorch.

    python3 benchmarks/export_step.py [--exports mlp,bert,bert-seq12]
        [--steps 20] [--warmup 3] [--ranks2] [--tofu-run PATH]

What a user with a forward export does, timed against the PyTorch module
the export came from. Each export is written by `tofu.exports` in the form
torch-mlir's TorchToLinalg emits (parameters as named arguments, nn.Linear
as a transposed weight and a matmul, the decomposed softmax, LayerNorm and
GELU), made a training step with

    tofu-opt fwd.mlir --tofu-train-pipeline="loss=mse optimizer=adam lr=0.001 devices=2"

and trained by `tofu-run --init init.safetensors --data data.safetensors
--timing`; PyTorch (one thread) trains the module with F.mse_loss and
torch.optim.Adam from the same files (weights drawn as PyTorch draws
them, `tofu.torchcheck`), so the step-0 losses agree to f32 rounding.
With --ranks2, the step partitioned for 2 devices runs under `mpiexec -n 2`
against PyTorch DDP (gloo) on 2 processes, the same global batch.

Exports (issue 18's first measurements were of the MLP and of a BERT-tiny
export with sequence length 12):
  mlp          3 x Linear(1024, 1024) with ReLU between, batch 256
  bert         BERT-tiny encoder: 2 layers, hidden 128, 2 heads, FFN 512,
               sequence 128, batch 8
  bert-seq12   the same at sequence length 12
  llama        a LLaMA decoder stack (RMSNorm, rotary embeddings, causal
               attention, SiLU-gated MLP): 2 layers, hidden 256, 4 heads,
               MLP 688, sequence 128, batch 8
  gpt2         a GPT-2 decoder stack (learned positions, pre-LayerNorm,
               fused q/k/v Conv1D, causal mask buffer, GELU's tanh form):
               2 layers, hidden 256, 4 heads, sequence 128, batch 8
  resnet       torchvision's ResNet-18 (BasicBlocks, batch norm in training
               mode), 32 x 32 images, batch 16, 10 classes
  mobilenet    torchvision's MobileNetV2 (depthwise convolutions, ReLU6,
               batch norm in training mode), 64 x 64 images, batch 16
  resnext      torchvision's ResNeXt-50 32x4d (Bottleneck blocks with
               grouped 3x3 convolutions, batch norm), 32 x 32, batch 16

The step time is the median over --steps steps after --warmup warm-up steps;
the compile time is tofu-run's JIT (and, apart, tofu-opt's pipeline).
The machinery (subprocesses, timing, OpenBLAS's kernels) is
benchmarks/cpu_step.py's.
"""

import argparse
import json
import os
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(REPO, "python"))
sys.path.insert(0, HERE)

import cpu_step  # noqa: E402
from cpu_step import Failed, fmt, run  # noqa: E402
from tofu import exports, safetensors, torchcheck, twins  # noqa: E402

LR = 1e-3

# name: (generated export, sizes, what it is)
CASES = {
    "mlp": ("mlp", [], "MLP 3 x Linear(1024, 1024), batch 256"),
    "bert": ("bert", [], "BERT-tiny encoder, seq 128, batch 8"),
    "bert-seq12": ("bert", ["seq=12"], "BERT-tiny encoder, seq 12, batch 8"),
    "llama": ("llama", [], "LLaMA decoder, 2 layers, hidden 256, 4 heads, "
                           "MLP 688, seq 128, batch 8"),
    "gpt2": ("gpt2", [], "GPT-2 decoder, 2 layers, hidden 256, 4 heads, "
                         "seq 128, batch 8"),
    "resnet": ("resnet", [], "ResNet-18 (BasicBlocks, batch norm), 32 x 32, "
                             "batch 16"),
    "mobilenet": ("mobilenet", [], "MobileNetV2 (depthwise convolutions, "
                                   "batch norm), 64 x 64, batch 16"),
    "resnext": ("resnext", [], "ResNeXt-50 32x4d (grouped convolutions, "
                               "batch norm), 32 x 32, batch 16"),
}


def matmul_flops(name, sizes):
    """FLOPs of forward and backward's matrix products (the first layer's
    input gradient left out: neither side computes it)."""
    if name == "resnet":
        return resnet_flops(sizes)
    if name == "mobilenet":
        return mobilenet_flops(sizes)
    if name == "resnext":
        return resnext_flops(sizes)
    if name == "mlp":
        w = [int(x) for x in str(sizes["widths"]).split(",")]
        return sum(2 * sizes["batch"] * a * b * (2 if i == 0 else 3)
                   for i, (a, b) in enumerate(zip(w, w[1:])))
    tokens, h = sizes["batch"] * sizes["seq"], sizes["hidden"]
    f = 4 * h if name == "gpt2" else sizes["ffn"]
    # BERT's MLP has two matrices, LLaMA's gated one three.
    mlp = 3 if name == "llama" else 2
    per_layer = 4 * tokens * h * h + mlp * tokens * h * f + \
        2 * sizes["batch"] * sizes["seq"] * sizes["seq"] * h
    return 2 * 3 * per_layer * sizes["layers"]


def resnet_flops(sizes):
    """FLOPs of the ResNet's convolutions and classifier, forward and
    backward (the stem's input gradient left out)."""
    widths = [int(w) for w in str(sizes["widths"]).split(",")]
    blocks = [int(n) for n in str(sizes["blocks"]).split(",")]
    n, side = sizes["batch"], sizes["image"]
    big = side >= 64
    total, shrink = 0, lambda s: (s - 1) // 2 + 1

    def conv(cin, cout, k, out_side, first=False):
        return 2 * n * cout * out_side ** 2 * cin * k * k * (2 if first else 3)
    side = shrink(side) if big else side
    total += conv(3, widths[0], 7 if big else 3, side, first=True)
    side = shrink(side) if big else side
    cin = widths[0]
    for i, (cout, count) in enumerate(zip(widths, blocks)):
        for j in range(count):
            stride = 2 if i and not j else 1
            if stride == 2:
                side = shrink(side)
            total += conv(cin, cout, 3, side) + conv(cout, cout, 3, side)
            if stride != 1 or cin != cout:
                total += conv(cin, cout, 1, side)
            cin = cout
    return total + 2 * 3 * n * cin * sizes["classes"]


def mobilenet_flops(sizes):
    """FLOPs of MobileNetV2's convolutions (the depthwise ones too) and
    classifier, forward and backward (the stem's input gradient left
    out)."""
    stem, plan, last = exports.mobilenet_plan(sizes["width"], sizes["stages"])
    n, side = sizes["batch"], (sizes["image"] - 1) // 2 + 1

    def conv(cin_per_group, cout, k, first=False):
        return 2 * n * cout * side ** 2 * cin_per_group * k * k * \
            (2 if first else 3)
    total = conv(3, stem, 3, first=True)
    for cin, hidden, cout, stride in plan:
        if hidden != cin:
            total += conv(cin, hidden, 1)
        side = (side - 1) // stride + 1
        total += conv(1, hidden, 3) + conv(hidden, cout, 1)
    total += conv(plan[-1][2], last, 1)
    return total + 2 * 3 * n * last * sizes["classes"]


def resnext_flops(sizes):
    """FLOPs of the ResNeXt's convolutions (the grouped ones at their
    channels per group) and classifier, forward and backward (the stem's
    input gradient left out)."""
    widths = [int(w) for w in str(sizes["widths"]).split(",")]
    blocks = [int(n) for n in str(sizes["blocks"]).split(",")]
    groups, n, side = sizes["groups"], sizes["batch"], sizes["image"]
    big = side >= 64
    shrink = lambda s: (s - 1) // 2 + 1

    def conv(cin, cout, k, out_side, first=False):
        return 2 * n * cout * out_side ** 2 * cin * k * k * (2 if first else 3)
    side = shrink(side) if big else side
    total = conv(3, 64, 7 if big else 3, side, first=True)
    side = shrink(side) if big else side
    cin = 64
    for i, (planes, count) in enumerate(zip(widths, blocks)):
        for j in range(count):
            stride = 2 if i and not j else 1
            width = exports._resnext_width(planes, groups, sizes["group_width"])
            total += conv(cin, width, 1, side)
            if stride == 2:
                side = shrink(side)
            total += conv(width // groups, width, 3, side)
            total += conv(width, planes * 4, 1, side)
            if stride != 1 or cin != planes * 4:
                total += conv(cin, planes * 4, 1, side)
            cin = planes * 4
    return total + 2 * 3 * n * cin * sizes["classes"]


# -- the PyTorch side ---------------------------------------------------------------
def torch_env():
    return dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
                MKL_NUM_THREADS="1", PYTHONPATH=os.path.join(REPO, "python"))


def torch_job(job, timeout):
    out = run([cpu_step.torch_python(), os.path.abspath(__file__),
               "--torch-worker", json.dumps(job)], timeout, env=torch_env())
    lines = [l for l in out.splitlines() if l.startswith("{")]
    if not lines:
        raise Failed("the PyTorch worker printed no result")
    return json.loads(lines[-1])


def _twin(torch, job):
    _, _, builder = exports.prepare(job["export"], "f32", job["sizes"])
    return builder(torch, "f32")


def _make_files(job):
    """Draws the weights and data as tofu.torchcheck does and writes them."""
    import torch
    inputs = [(n, s, k) for n, s, k in job["inputs"]]
    torchcheck.make_files(torch, _twin(torch, job), inputs, job["fans"], "f32",
                          3, job["init"], job["data"])
    return {}


def _load(torch, path):
    return {n: torch.tensor(values, dtype=torch.float32).reshape(shape)
            for n, (_, shape, values) in safetensors.load(path).items()}


def _torch_rank(rank, job, port, queue):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    ranks = job["ranks"]
    if ranks > 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=rank, world_size=ranks)
    twin = _twin(torch, job).load(_load(torch, job["init"]))
    data = _load(torch, job["data"])
    batch = []
    for name in twin.data_names:
        # The first b of the file's 2b samples: tofu-run's step 0.
        t = data[name]
        b = t.shape[0] // 2
        part = b // ranks
        batch.append(t[rank * part:(rank + 1) * part].contiguous())
    net = twin
    if ranks > 1:
        from torch.nn.parallel import DistributedDataParallel
        net = DistributedDataParallel(twin)
    opt = torch.optim.Adam(twin.parameters(), lr=LR)
    return cpu_step.train_and_report(torch, net, opt, batch, job, ranks, rank,
                                     queue)


def torch_worker(job_text):
    if json.loads(job_text).get("files"):
        print(json.dumps(_make_files(json.loads(job_text))))
        return 0
    return cpu_step.torch_worker(job_text, _torch_rank)


# -- one export ----------------------------------------------------------------------
def measure(case, args, tofu_opt, setups):
    """[(setup, tofu result or None, torch result or None, why)] and the
    pipeline's wall time."""
    export, overrides, _ = CASES[case]
    sizes = exports.sizes_of(export, overrides)
    rows = []
    with tempfile.TemporaryDirectory(prefix="export_step-") as tmp:
        path = lambda f: os.path.join(tmp, f)
        text, _, _ = exports.prepare(export, "f32", overrides)
        with open(path("fwd.mlir"), "w") as f:
            f.write(text)
        start = time.perf_counter()
        run([tofu_opt, path("fwd.mlir"),
             f"--tofu-train-pipeline=loss=mse optimizer=adam lr={LR!r} "
             "devices=2 report=none plan-out=none svg=none",
             "-o", path("step.mlir")], args.timeout)
        pipeline_s = time.perf_counter() - start
        inputs = torchcheck.list_inputs(args.tofu_run, path("step.mlir"),
                                        args.timeout)
        fans = twins.fan_ins(tofu_opt, path("step.mlir"), args.timeout)
        names = [n for n, _, _ in inputs]
        fans = {names[i]: f for i, f in fans.items()} \
            if isinstance(fans, dict) else {}
        job = dict(export=export, sizes=overrides, inputs=inputs, fans=fans,
                   init=path("init.safetensors"), data=path("data.safetensors"),
                   steps=args.steps, warmup=args.warmup)
        torch_job(dict(job, files=True), args.timeout)
        files = ["--init", job["init"], "--data", job["data"]]
        for ranks in setups:
            tofu, torch, why = None, None, []
            try:
                program = path("step.mlir")
                if ranks > 1:
                    program = path(f"spmd{ranks}.mlir")
                    run([tofu_opt, path("step.mlir"), "--tofu-partition", "-o",
                         program], args.timeout)
                tofu = cpu_step.tofu_time(program, ranks, args.steps,
                                          args.warmup, args.tofu_run,
                                          args.timeout, extra=files)
                print(f"{case} x{ranks}: tofu-run {tofu['ms']:.1f} ms "
                      f"(compile {fmt(tofu['compile_s'], '.2f')} s)",
                      flush=True)
            except Failed as err:
                print(f"{case} x{ranks}: tofu-run FAILED: {err}", flush=True)
                why.append("tofu FAILED: " + str(err)[:160])
            if not args.skip_torch:
                try:
                    torch = torch_job(dict(job, ranks=ranks), args.timeout)
                    print(f"{case} x{ranks}: torch {torch['ms']:.1f} ms",
                          flush=True)
                except Failed as err:
                    print(f"{case} x{ranks}: torch FAILED: {err}", flush=True)
                    why.append("torch FAILED: " + str(err)[:160])
            rows.append((ranks, tofu, torch, "; ".join(why)))
    return rows, pipeline_s, matmul_flops(export, sizes)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--torch-worker"]:
        return torch_worker(argv[1])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--exports", default=",".join(CASES),
                        help="comma-separated, of: " + ", ".join(CASES))
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--tofu-run",
                        default=os.path.join(REPO, "build", "bin", "tofu-run"))
    parser.add_argument("--tofu-opt", default=None,
                        help="default: tofu-opt beside --tofu-run")
    parser.add_argument("--skip-torch", action="store_true")
    parser.add_argument("--ranks2", action="store_true",
                        help="also 2 ranks against PyTorch DDP")
    parser.add_argument("--timeout", type=int, default=1800)
    args = parser.parse_args(argv)
    tofu_opt = args.tofu_opt or os.path.join(
        os.path.dirname(os.path.abspath(args.tofu_run)), "tofu-opt")
    cases = [c.strip() for c in args.exports.split(",") if c.strip()]
    unknown = [c for c in cases if c not in CASES]
    if unknown:
        parser.error(f"unknown exports {unknown}; choose from {list(CASES)}")
    setups = [1, 2] if args.ranks2 else [1]
    print(f"CPU: {cpu_step.cpu_model()}; load average "
          f"{cpu_step.load_average()}", flush=True)
    table = []
    for case in cases:
        try:
            rows, pipeline_s, flops = measure(case, args, tofu_opt, setups)
        except Failed as err:
            print(f"{case}: FAILED: {err}", flush=True)
            table.append((case, None, None, None, None, None, str(err)[:160]))
            continue
        for ranks, tofu, torch, why in rows:
            table.append((case, ranks, tofu, torch, pipeline_s, flops, why))
    print()
    print(f"CPU: {cpu_step.cpu_model()}; Adam lr {LR}; median of "
          f"{args.steps} steps after {args.warmup} warm-up; f32; load "
          f"average {cpu_step.load_average()} at the end; OPENBLAS_CORETYPE "
          f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')} on both sides")
    print()
    print("| export | ranks | tofu ms | torch ms | tofu/torch | tofu GFLOP/s "
          "| JIT compile s | tofu-train-pipeline s | step-0 loss rel. diff "
          "| notes |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for case, ranks, tofu, torch, pipeline_s, flops, why in table:
        t_ms = tofu and tofu["ms"]
        p_ms = torch and torch["ms"]
        diff = None
        if tofu and torch and tofu.get("loss0") and torch.get("loss0"):
            diff = abs(tofu["loss0"] - torch["loss0"]) / abs(torch["loss0"])
        ranks_text = "-" if ranks is None else \
            ("1" if ranks == 1 else f"{ranks} (DDP)")
        print(f"| {CASES[case][2]} | {ranks_text} | {fmt(t_ms, '.1f')} "
              f"| {fmt(p_ms, '.1f')} "
              f"| {fmt(t_ms and p_ms and t_ms / p_ms, '.2f')} "
              f"| {fmt(t_ms and flops and flops / t_ms / 1e6, '.1f')} "
              f"| {fmt(tofu and tofu.get('compile_s'), '.2f')} "
              f"| {fmt(pipeline_s, '.2f')} | {fmt(diff, '.1e')} | {why} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
