#!/usr/bin/env python3
"""CPU training step: tofu-run next to PyTorch on the same models.

    python3 benchmarks/cpu_step.py [--models mlp,wresnet,transformer,lstm,lstm-stacked,mlp300]
        [--steps 20] [--warmup 3] [--tofu-run PATH] [--skip-torch] [--ranks2]
        [--workers2] [--repeat N] [--tofu-run-arg ARG ...]

Every model is a zoo model (python/tofu/models.py) trained with Adam
(lr 1e-3) at the same sizes and batch on both sides: the zoo's MLIR through
`tofu-opt --tofu-batch-products --tofu-autodiff --tofu-stack-product-sums
--tofu-optimizer=kind=adam`
and `tofu-run --timing`, and its PyTorch twin (python/tofu/twins.py: the
same weights, layouts, activations and loss) with torch.optim.Adam. Both start from the
same values (tofu-run's hash fill, reproduced by tofu.twins), so their
first losses agree; the table shows the relative difference.

Setup (a): one tofu-run rank against PyTorch with one thread
(torch.set_num_threads(1), OMP_NUM_THREADS=OPENBLAS_NUM_THREADS=1).
Where OpenBLAS does not know the CPU and falls back to its SSE3 kernels,
tofu-run sets OPENBLAS_CORETYPE to the kernels the CPU runs (it prints
so); the PyTorch side then gets the same OPENBLAS_CORETYPE, so both sides
run the same OpenBLAS kernels.
Setup (b) (--ranks2): the step partitioned for 2 devices under
`mpiexec -n 2 tofu-run`, against PyTorch DDP (gloo) on 2 processes of one
thread each, with the same global batch.
Setup (c) (--workers2): the same partitioned step as 2 in-process workers
(`tofu-run --workers 2`: 2 threads of one process whose collectives read
each other's tiles, runtime/cpu/Workers.h), against the same DDP run.

The step time is the median over --steps steps after --warmup warm-up
steps; with --repeat N, every setup of a model runs N times in turn and
the table shows the median of the N medians (each run's are listed below
it). The column "tofu / tofu 1 rank" is the partitioned step's time over
the 1-rank step's, the median over the repetitions of the two measured in
the same repetition. GFLOP/s counts the FLOPs of the matrix products and convolutions
of forward and backward (2 per multiply-add; the input gradient of a layer
that reads the data is not computed by either side and not counted);
element-wise work and the optimizer are left out. With a tofu-run that has
--report, the FLOPs tofu-cpu-report counts in the step (library calls and
generated loops) are shown below the table.

This script runs under any python3: the tofu side needs only the standard
library; the PyTorch side runs in a subprocess under /usr/bin/python3 (or
$TOFU_TORCH_PYTHON), an interpreter that imports torch.
"""

import argparse
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO, "python"))

from tofu import twins  # noqa: E402  (standard library part only)


LR = 1e-3

# name: (zoo model, options, what it is)
MODELS = {
    "mlp": ("mlp", dict(layers=3, hidden=1024, features=1024, classes=1024,
                        batch=256), "MLP 3x1024, batch 256"),
    "wresnet": ("wresnet", dict(stages=[2, 1], width=1, image=32, batch=16,
                                classes=10),
                "WResNet stages 2,1 (12 conv), 32x32, batch 16"),
    "transformer": ("transformer", dict(layers=2, hidden=256, heads=4, seq=128,
                                        batch=8),
                    "Transformer 2 layers, h256, 4 heads, seq 128, batch 8"),
    "lstm": ("rnn", {}, "LSTM zoo defaults: 2x64, 20 steps, batch 8, "
                        "embed 1024"),
    # The same LSTM with its gates as a dimension (weights K x 4 x H).
    "lstm-stacked": ("rnn-stacked", {}, "LSTM, gates stacked: 2x64, 20 "
                                        "steps, batch 8, embed 1024"),
    # The third row of issue 18's table: SOYBEAN's MLP, small GEMMs.
    "mlp300": ("mlp", dict(layers=5, hidden=300, features=300, classes=300,
                           batch=400), "MLP 5x300, batch 400"),
}


# The zoo's LSTMs: their data is (steps, batch, ...).
RNN_MODELS = ("rnn", "rnn-stacked")


# -- FLOPs ------------------------------------------------------------------------
def matmul_macs(name, options):
    """[(multiply-adds, input gradient needed)] of the forward's matrix
    products and convolutions."""
    model, o = twins.resolve(name, options)
    ops = []
    if model == "mlp":
        width = o["features"]
        for i in range(o["layers"]):
            out = o["classes"] if i == o["layers"] - 1 else o["hidden"]
            ops.append((o["batch"] * width * out, i > 0))
            width = out
    elif model in RNN_MODELS:
        h4 = 4 * o["hidden"]
        for t in range(o["steps"]):
            for layer in range(o["layers"]):
                width = o["embed"] if layer == 0 else o["hidden"]
                ops.append((o["batch"] * width * h4, layer > 0))
                ops.append((o["batch"] * o["hidden"] * h4, t > 0))
    elif model == "wresnet":
        convs, channels = twins._wresnet_plan(o)
        it = iter(convs)

        def conv(size, dx):
            _, (out, cin, k, _), stride, pad = next(it)
            osize = (size + 2 * pad - k) // stride + 1
            ops.append((o["batch"] * out * osize * osize * cin * k * k, dx))
            return osize

        size = conv(o["image"], False)
        if o["image"] >= 64:
            size = (size + 2 - 3) // 2 + 1
        channels_in = 64 * o["width"]
        for stage, n in enumerate(o["stages"]):
            out = 4 * 64 * o["width"] * 2 ** stage
            for i in range(n):
                stride = 2 if stage > 0 and i == 0 else 1
                conv(size, True)
                osize = conv(size, True)
                conv(osize, True)
                if stride != 1 or channels_in != out:
                    conv(size, True)
                size, channels_in = osize, out
        ops.append((o["batch"] * channels * o["classes"], True))
    elif model == "transformer":
        tokens, h, f = o["batch"] * o["seq"], o["hidden"], o["ffn"]
        for layer in range(o["layers"]):
            ops += [(tokens * h * h, layer > 0)] * 3 + [(tokens * h * h, True)]
            ops += [(o["batch"] * o["seq"] * o["seq"] * h, True)] * 2
            ops += [(tokens * h * f, True), (tokens * f * h, True)]
    return ops


def train_flops(name, options):
    return sum(2 * macs * (3 if dx else 2)
               for macs, dx in matmul_macs(name, options))


# -- the tofu side -----------------------------------------------------------------
class Failed(Exception):
    pass


def run(cmd, timeout, both=False, **kw):
    # In a session of its own, so that a timeout ends the whole group: a
    # hung DDP process spawned by the PyTorch worker would otherwise keep a
    # core busy through the measurements that follow.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True,
                            start_new_session=True, **kw)
    try:
        out, err_text = proc.communicate(timeout=timeout)
        done = subprocess.CompletedProcess(cmd, proc.returncode, out, err_text)
    except subprocess.TimeoutExpired as err:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.communicate()
        partial = err.stdout or ""
        if isinstance(partial, bytes):
            partial = partial.decode(errors="replace")
        m = re.search(r"compile time: [0-9.]+ s", partial)
        stage = f" ({m.group(0)}, then running)" if m else \
            " (before any output)"
        raise Failed(f"timed out after {timeout} s{stage}: "
                     f"{os.path.basename(cmd[0])} {os.path.basename(cmd[1])}"
                     if len(cmd) > 1 else f"timed out after {timeout} s")
    except OSError as err:
        raise Failed(f"cannot run {cmd[0]}: {err}")
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-6:]
        raise Failed(f"{os.path.basename(cmd[0])} exited {done.returncode}: "
                     + " | ".join(tail))
    return done.stdout + done.stderr if both else done.stdout


def tofu_step(name, options, tmp, tofu_opt, timeout):
    b, loss = twins.zoo_builder(name, options)
    fwd = os.path.join(tmp, "fwd.mlir")
    step = os.path.join(tmp, "step.mlir")
    with open(fwd, "w") as f:
        f.write(b.finish(loss))
    # tofu-batch-products and tofu-stack-product-sums as tofu-train-pipeline
    # runs them: the LSTMs' input products become one per layer, and each
    # shared weight's per-time-step gradient products one product (the
    # other models have none).
    run([tofu_opt, fwd, "--tofu-batch-products", "--tofu-autodiff",
         "--tofu-stack-product-sums",
         f"--tofu-optimizer=kind=adam lr={LR!r}", "-o", step], timeout)
    return step


def tofu_partition(step, tmp, tofu_opt, devices, timeout):
    spmd = os.path.join(tmp, f"spmd{devices}.mlir")
    run([tofu_opt, step, "--tdl-attach",
         f"--tofu-search=devices={devices} report=none plan-out=none svg=none",
         "--tofu-partition", "-o", spmd], timeout)
    return spmd


def parse_report(text):
    """{function: FLOPs} from tofu-cpu-report's lines."""
    flops, current = {}, None
    for line in text.splitlines():
        m = re.match(r"tofu-cpu-report: (\S+)", line)
        if m:
            current = m.group(1)
            flops[current] = 0
            continue
        m = re.match(r"\s+(\S.*?): .*?(\d+) FLOP$", line)
        if m and current:
            flops[current] += int(m.group(2))
    return flops


def tofu_time(step, ranks, steps, warmup, tofu_run, timeout, workers=False,
              extra=()):
    """{ms, compile_s, loss0, report_flops, how} of tofu-run on `step`: its
    ranks under mpiexec, or as in-process workers (`--workers`); `extra`
    are more tofu-run arguments."""
    launcher = ["mpiexec", "-n", str(ranks)] if ranks > 1 and not workers \
        else []
    base = launcher + [tofu_run, step] + list(extra)
    if workers:
        base += ["--workers", str(ranks)]
    if ranks > 1:
        # tofu-partition keeps @forward_train_reference, which also returns
        # a tofu.loss: name the step that the driver calls and the timer
        # brackets.
        base += ["--func", "forward_train"]
    total = steps + warmup
    # The compile time is a first run's: an empty compile cache, so that
    # the ranks of the node compile the step once (TOFU_COMPILE_CACHE set:
    # that cache, or `off` to have every rank compile).
    cache = None
    env = dict(os.environ)
    if "TOFU_COMPILE_CACHE" not in os.environ:
        cache = tempfile.TemporaryDirectory(prefix="tofu-cache-")
        env["TOFU_COMPILE_CACHE"] = cache.name
    try:
        # tofu-cpu-report writes to stderr.
        out = run(base + ["--steps", str(total), "--timing", "--warmup",
                          str(warmup), "--report"], timeout, both=True,
                  env=env)
    except Failed as err:
        if "Unknown command line argument" not in str(err):
            raise
        out = None
    finally:
        if cache:
            cache.cleanup()
    result = {}
    if out is not None:
        m = re.search(r"step time: median ([0-9.]+) ms", out)
        if not m:
            raise Failed("tofu-run --timing printed no step time")
        result["ms"] = float(m.group(1))
        result["how"] = "median (--timing)"
        m = re.search(r"compile time: ([0-9.]+) s", out)
        result["compile_s"] = float(m.group(1)) if m else None
        report = parse_report(out)
        train = [v for k, v in report.items() if k == "@forward_train"]
        result["report_flops"] = train[0] if train else None
    else:
        # A tofu-run without --timing: the mean from the wall time of runs
        # of `warmup` and `total` steps (compile time cancels out).
        def wall(n):
            start = time.perf_counter()
            text = run(base + ["--steps", str(n)], timeout)
            return time.perf_counter() - start, text
        short, _ = wall(max(warmup, 1))
        long_, out = wall(total)
        result["ms"] = 1e3 * (long_ - short) / (total - max(warmup, 1))
        result["how"] = "mean from wall time"
        result["compile_s"] = None
        result["report_flops"] = None
    m = re.search(r"^step 0: loss (\S+)", out, re.M)
    result["loss0"] = float(m.group(1)) if m else None
    # tofu-run names OpenBLAS's kernels where the library falls back to SSE3
    # on a CPU it does not know: PyTorch (and every later run) gets the same.
    m = re.search(r"OPENBLAS_CORETYPE=(\w+)", out)
    if m:
        os.environ.setdefault("OPENBLAS_CORETYPE", m.group(1))
    return result


# -- the PyTorch side ---------------------------------------------------------------
def torch_python():
    return os.environ.get("TOFU_TORCH_PYTHON", "/usr/bin/python3")


def torch_time(name, options, ranks, steps, warmup, timeout, fans=None):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               MKL_NUM_THREADS="1",
               PYTHONPATH=os.path.join(REPO, "python"))
    job = json.dumps(dict(name=name, options=options, ranks=ranks,
                          steps=steps, warmup=warmup, fans=fans or {}))
    out = run([torch_python(), os.path.abspath(__file__), "--torch-worker",
               job], timeout, env=env)
    lines = [l for l in out.splitlines() if l.startswith("{")]
    if not lines:
        raise Failed("the PyTorch worker printed no result")
    return json.loads(lines[-1])


def _torch_rank(rank, job, port, queue):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    ranks = job["ranks"]
    name, options = job["name"], dict(job["options"])
    model, values = twins.resolve(name, options)
    # The fan-ins of tofu-run's driver (keys come back from JSON as text).
    fans = {int(i): n for i, n in job.get("fans", {}).items()}
    init = twins.initial_values(model, values, "f32", fans=fans)
    local = dict(values)
    if ranks > 1:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
        dist.init_process_group("gloo", rank=rank, world_size=ranks)
        local["batch"] = values["batch"] // ranks
    twin, _ = twins.build(model, local, "f32")
    twin.load(init)
    data = []
    for n in twin.data_names:
        t = init[n]
        if ranks > 1:
            # The batch dimension: 1 for the RNN's (steps, batch, ...), 0
            # elsewhere (the Transformer's tokens are batch-major).
            dim = 1 if model in RNN_MODELS else 0
            part = t.shape[dim] // ranks
            t = t.narrow(dim, rank * part, part).contiguous()
        data.append(t)
    net = twin
    if ranks > 1:
        from torch.nn.parallel import DistributedDataParallel
        net = DistributedDataParallel(twin)
    opt = torch.optim.Adam(twin.parameters(), lr=LR)
    return train_and_report(torch, net, opt, data, job, ranks, rank, queue)


def train_and_report(torch, net, opt, data, job, ranks, rank, queue):
    """Times job["warmup"] + job["steps"] steps of `net` on `data` (the
    ranks in step, a barrier before each); the result, {ms: the median of
    the timed steps, loss0: the global loss of step 0}, is returned with
    one rank, else put on `queue` by rank 0 before the rank exits."""
    import torch.distributed as dist
    times, loss0 = [], None
    for s in range(job["warmup"] + job["steps"]):
        if ranks > 1:
            dist.barrier()
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        loss = net(*data)
        loss.backward()
        opt.step()
        elapsed = time.perf_counter() - start
        if s == 0:
            loss0 = loss.item()
        times.append(elapsed)
    if ranks > 1:
        # The global loss at step 0: the mean of the ranks' means.
        t = torch.tensor([loss0])
        dist.all_reduce(t)
        loss0 = t.item() / ranks
    timed = sorted(times[job["warmup"]:])
    n = len(timed)
    median = timed[n // 2] if n % 2 else 0.5 * (timed[n // 2 - 1] + timed[n // 2])
    result = dict(ms=1e3 * median, loss0=loss0, torch=torch.__version__,
                  threads=torch.get_num_threads())
    if queue is None:
        return result
    if rank == 0:
        queue.put(result)
    # Both ranks are past every collective; the gloo group's teardown (at
    # destroy_process_group or at the interpreter's exit) now and then left
    # one process spinning forever, so the ranks leave without it.
    sys.stdout.flush()
    os._exit(0)


def torch_worker(job_text, rank_main=None):
    """Runs a job of the PyTorch side: `rank_main(rank, job, port, queue)`
    (default this file's _torch_rank) on one rank, or on job["ranks"]
    spawned processes; prints its result as one JSON line."""
    rank_main = rank_main or _torch_rank
    job = json.loads(job_text)
    if job["ranks"] == 1:
        print(json.dumps(rank_main(0, job, None, None)))
        return 0
    import socket
    import torch.multiprocessing as mp
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ctx = mp.get_context("spawn")
    queue = ctx.SimpleQueue()
    mp.spawn(rank_main, args=(job, port, queue), nprocs=job["ranks"],
             join=True)
    print(json.dumps(queue.get()))
    return 0


# -- the table ---------------------------------------------------------------------
def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            names = re.findall(r"^model name\s*:\s*(.*)$", f.read(), re.M)
        return f"{names[0]} ({len(names)} logical CPUs)" if names else \
            platform.processor()
    except OSError:
        return platform.processor() or "unknown"


def load_average():
    """The 1-minute load average: other jobs on the machine skew times."""
    try:
        with open("/proc/loadavg") as f:
            return f.read().split()[0]
    except OSError:
        return "unknown"


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def fmt_ms(ms):
    """A step time to 3 significant digits down to 0.01 ms."""
    return fmt(ms, ".2f" if ms is not None and ms < 10 else ".1f")


def median(values):
    """The median of `values`, None for none."""
    values = sorted(values)
    if not values:
        return None
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] +
                                                values[mid]) / 2


def setup_label(setup):
    ranks, workers = setup
    return f"x{ranks}" + (" workers" if workers else "")


def run_setup(name, step, tmp, setup, repetition, args, tofu_opt, zoo,
              options, flops, programs, tofu_runs, torch_runs, why, notes):
    """One run of `setup` of model `name`: tofu-run, and its PyTorch peer
    unless --skip-torch (once per repetition, counted from 0: the workers'
    peer is the same DDP run as the ranks'). Appends to tofu_runs[setup],
    torch_runs[ranks], `why` and `notes`."""
    ranks, workers = setup
    label = setup_label(setup)
    first = not tofu_runs[setup]
    try:
        if ranks not in programs:
            programs[ranks] = step if ranks == 1 else tofu_partition(
                step, tmp, tofu_opt, ranks, args.timeout)
        tofu = tofu_time(programs[ranks], ranks, args.steps, args.warmup,
                         args.tofu_run, args.timeout, workers,
                         args.tofu_run_arg)
        tofu_runs[setup].append(tofu)
        print(f"{name} {label}: tofu-run {tofu['ms']:.1f} ms "
              f"({tofu['how']}, compile "
              f"{fmt(tofu['compile_s'], '.1f')} s)", flush=True)
        if first and tofu.get("report_flops"):
            notes.append(f"{name}, {label}: tofu-cpu-report counts "
                         f"{tofu['report_flops'] / 1e9:.2f} GFLOP per step "
                         f"(analytic: {flops / 1e9:.2f})")
    except Failed as err:
        print(f"{name} {label}: tofu-run FAILED: {err}", flush=True)
        why.append("tofu FAILED: " + str(err)[:160])
    if args.skip_torch or len(torch_runs.get(ranks, [])) > repetition:
        return
    try:
        torch = torch_time(zoo, options, ranks, args.steps, args.warmup,
                           args.timeout, fans=twins.fan_ins(tofu_opt, step))
        torch_runs.setdefault(ranks, []).append(torch)
        print(f"{name} x{ranks}: torch {torch['ms']:.1f} ms", flush=True)
    except Failed as err:
        print(f"{name} x{ranks}: torch FAILED: {err}", flush=True)
        why.append("torch FAILED: " + str(err)[:160])


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--torch-worker"]:
        return torch_worker(argv[1])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(MODELS),
                        help="comma-separated, of: " + ", ".join(MODELS))
    parser.add_argument("--steps", type=int, default=20,
                        help="timed steps (default 20)")
    parser.add_argument("--warmup", type=int, default=3,
                        help="warm-up steps left out (default 3)")
    bin_dir = os.path.join(REPO, "build", "bin")
    parser.add_argument("--tofu-run", default=os.path.join(bin_dir, "tofu-run"))
    parser.add_argument("--tofu-opt", default=None,
                        help="default: tofu-opt beside --tofu-run")
    parser.add_argument("--skip-torch", action="store_true")
    parser.add_argument("--ranks2", action="store_true",
                        help="also setup (b): 2 ranks against PyTorch DDP")
    parser.add_argument("--workers2", action="store_true",
                        help="also setup (c): 2 in-process workers "
                        "(tofu-run --workers 2) against the same DDP")
    parser.add_argument("--tofu-run-arg", action="append", default=[],
                        help="pass this argument to every tofu-run (e.g. "
                        "--tofu-run-arg=--combine-collectives=0)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="run every setup of a model this many times in "
                        "turn and report the medians (default 1)")
    parser.add_argument("--timeout", type=int, default=1800,
                        help="seconds per subprocess (default 1800)")
    args = parser.parse_args(argv)
    tofu_opt = args.tofu_opt or os.path.join(
        os.path.dirname(os.path.abspath(args.tofu_run)), "tofu-opt")
    names = [n.strip() for n in args.models.split(",") if n.strip()]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown models {unknown}; choose from {list(MODELS)}")

    # (ranks, in-process workers)
    setups = [(1, False)] + ([(2, False)] if args.ranks2 else []) + \
        ([(2, True)] if args.workers2 else [])
    rows, notes = [], []
    print(f"CPU: {cpu_model()}; load average {load_average()}", flush=True)
    for name in names:
        zoo, options, what = MODELS[name]
        flops = train_flops(zoo, options)
        with tempfile.TemporaryDirectory(prefix="cpu_step-") as tmp:
            try:
                step = tofu_step(zoo, options, tmp, tofu_opt, args.timeout)
            except Failed as err:
                print(f"{name}: FAILED (tofu-opt): {err}", flush=True)
                for ranks, workers in setups:
                    rows.append((name, what, (ranks, workers), None, None,
                                 flops, None, None,
                                 "FAILED: " + str(err)[:120]))
                continue
            # Each repetition runs every setup in turn, so that a slow
            # spell of a shared host slows all of them alike; the table
            # takes the median over the repetitions.
            tofu_runs = {setup: [] for setup in setups}
            torch_runs, why = {}, {setup: [] for setup in setups}
            programs = {}
            for repetition in range(args.repeat):
                for setup in setups:
                    run_setup(name, step, tmp, setup, repetition, args,
                              tofu_opt, zoo, options, flops, programs,
                              tofu_runs, torch_runs, why[setup], notes)
            ones = [r["ms"] for r in tofu_runs.get((1, False), [])]
            for setup in setups:
                tofu_ms = [r["ms"] for r in tofu_runs[setup]]
                torch_ms = [r["ms"] for r in torch_runs.get(setup[0], [])]
                first = tofu_runs[setup][0] if tofu_runs[setup] else None
                torch_first = torch_runs[setup[0]][0] \
                    if torch_runs.get(setup[0]) else None
                loss_diff = None
                if first and torch_first and first.get("loss0") and \
                        torch_first.get("loss0"):
                    loss_diff = abs(first["loss0"] - torch_first["loss0"]) / \
                        abs(first["loss0"])
                # The scaling: each repetition's step against the 1-rank
                # step of the same repetition.
                scaling = median([t / o for t, o in zip(tofu_ms, ones)]) \
                    if setup != (1, False) and len(ones) == len(tofu_ms) \
                    else None
                if args.repeat > 1 and tofu_ms:
                    notes.append(f"{name}, {setup_label(setup)}: tofu-run "
                                 "runs " + ", ".join(f"{t:.2f}" for t in
                                                     tofu_ms) + " ms" +
                                 ("; torch runs " + ", ".join(
                                     f"{t:.2f}" for t in torch_ms) + " ms"
                                  if torch_ms and not setup[1] else ""))
                rows.append((name, what, setup, median(tofu_ms),
                             median(torch_ms), flops, loss_diff, scaling,
                             "; ".join(dict.fromkeys(why[setup]))))

    print()
    print(f"CPU: {cpu_model()}; Adam lr {LR}; median of {args.steps} steps "
          f"after {args.warmup} warm-up"
          + (f", then the median of {args.repeat} runs in turn"
             if args.repeat > 1 else "") + "; f32; load average "
          f"{load_average()} at the end; OPENBLAS_CORETYPE "
          f"{os.environ.get('OPENBLAS_CORETYPE', 'unset')} on both sides")
    print("setup (a): 1 tofu-run rank vs PyTorch 1 thread; setup (b): "
          "mpiexec -n 2 tofu-run (devices=2) vs PyTorch DDP gloo x2, "
          "1 thread each, same global batch; setup (c): tofu-run --workers 2 "
          "(2 threads of one process) vs the same DDP run")
    print()
    print("| model | setup | tofu ms | torch ms | tofu/torch "
          "| tofu / tofu 1 rank | GFLOP/step "
          "| tofu GFLOP/s | torch GFLOP/s | step-0 loss rel. diff | notes |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for (name, what, (ranks, workers), t_ms, p_ms, flops, diff, scaling,
         why) in rows:
        setup = ("(a) 1 rank" if ranks == 1 else
                 f"(c) {ranks} workers" if workers else f"(b) {ranks} ranks")
        ratio = t_ms / p_ms if t_ms and p_ms else None
        print(f"| {what} | {setup} | {fmt_ms(t_ms)} | {fmt_ms(p_ms)} "
              f"| {fmt(ratio, '.2f')} | {fmt(scaling, '.2f')} "
              f"| {flops / 1e9:.2f} "
              f"| {fmt(t_ms and flops / t_ms / 1e6, '.2f')} "
              f"| {fmt(p_ms and flops / p_ms / 1e6, '.2f')} "
              f"| {fmt(diff, '.1e')} | {why} |")
    for note in notes:
        print(f"- {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
