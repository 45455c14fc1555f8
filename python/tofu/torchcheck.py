"""PyTorch as the oracle of a whole training run, through files.

    /usr/bin/python3 -m tofu.torchcheck mlp --layers 2 --hidden 16 \\
        --optimizer adam --ranks 1,2,4 --dtype f64 \\
        --tofu-opt build/bin/tofu-opt --tofu-run build/bin/tofu-run

For a zoo model and its PyTorch twin (`tofu.twins`):

1. draws initial weights (PyTorch's default rule, uniform in
   +-1/sqrt(fan-in)) and 2b samples of data (b: the batch) with a seeded
   torch generator, and writes them to `init.safetensors` and
   `data.safetensors` under the names `tofu-run --list-inputs` prints;
2. trains the twin for S steps with PyTorch's autograd and `torch.optim`
   (SGD, SGD with momentum, or Adam, at tofu-optimizer's hyperparameters),
   step s on samples [s b, (s + 1) b) modulo 2b as `tofu-run --data` takes
   them;
3. trains the same model with `tofu-run --init --data --save`, unpartitioned
   on 1 rank and partitioned by `tofu-search` + `tofu-partition` on each k
   of --ranks under mpiexec;
4. compares the loss of every step (relative difference) and every final
   weight (relative norm ||ours - torch|| / ||torch||) with PyTorch's.

In f64 the run passes when every figure is within --rtol (default 1e-9);
in f32 the figures are reported and checked against --rtol (default 1e-4).
Exits 1 on a mismatch.

This module imports torch only inside its functions.
"""

import argparse
import math
import os
import re
import subprocess
import sys
import tempfile

from tofu import cli, exports, models, safetensors, twins

OPTIMIZERS = ("sgd", "momentum", "adam")


def _run(cmd, timeout):
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({done.returncode}):\n"
                           f"{done.stdout[-2000:]}{done.stderr[-3000:]}")
    return done.stdout


def list_inputs(tofu_run, step, timeout):
    """[(name, shape, kind)] of `tofu-run --list-inputs`."""
    out = []
    for line in _run([tofu_run, step, "--list-inputs"], timeout).splitlines():
        name, dims, _, kind = re.fullmatch(
            r"(\S+) \[([0-9, ]*)\] (\w+) (\w+)", line.strip()).groups()
        out.append((name, [int(d) for d in dims.split(", ")] if dims else [],
                    kind))
    return out


def torch_optimizer(torch, kind, params, lr, momentum, betas, eps):
    if kind == "sgd":
        return torch.optim.SGD(params, lr=lr)
    if kind == "momentum":
        return torch.optim.SGD(params, lr=lr, momentum=momentum)
    return torch.optim.Adam(params, lr=lr, betas=betas, eps=eps)


def make_files(torch, twin, inputs, fans, dtype, seed, init_path, data_path):
    """Draws the weights and 2b samples; writes both files; returns
    ({weight: tensor}, {data name: tensor of all samples})."""
    gen = torch.Generator().manual_seed(seed)
    tdtype = torch.float64 if dtype == "f64" else torch.float32
    st = "F64" if dtype == "f64" else "F32"
    weights, data = {}, {}
    for name, shape, kind in inputs:
        if kind == "weight":
            bound = 1.0 / math.sqrt(max(1, fans.get(name, 1)))
            weights[name] = ((torch.rand(shape, generator=gen, dtype=tdtype)
                              * 2 - 1) * bound)
        elif kind == "data":
            samples = [2 * shape[0]] + shape[1:]
            if name == "labels":
                # The zoo's classifiers take class probabilities: one-hot
                # rows. Other data (inputs, regression targets) is uniform.
                classes = shape[-1]
                hot = torch.randint(classes, samples[:-1], generator=gen)
                data[name] = torch.nn.functional.one_hot(hot, classes).to(tdtype)
                continue
            data[name] = torch.rand(samples, generator=gen, dtype=tdtype) * 2 - 1
    safetensors.save(init_path, {n: (st, list(t.shape), t.flatten().tolist())
                                 for n, t in weights.items()})
    safetensors.save(data_path, {n: (st, list(t.shape), t.flatten().tolist())
                                 for n, t in data.items()})
    return weights, data


def train_torch(torch, twin, weights, data, steps, optimizer):
    """The losses of `steps` steps and the final weights of the twin."""
    twin.load(weights)
    opt = optimizer(twin.parameters())
    losses = []
    for s in range(steps):
        batch = []
        for name in twin.data_names:
            whole = data[name]
            b = whole.shape[0] // 2
            rows = [(s * b + i) % whole.shape[0] for i in range(b)]
            batch.append(whole[rows])
        opt.zero_grad(set_to_none=True)
        loss = twin(*batch)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, {n: p.detach().clone() for n, p in twin.params.items()}


def relative_norm(ours, theirs):
    diff = math.sqrt(sum((a - b) ** 2 for a, b in zip(ours, theirs)))
    norm = math.sqrt(sum(b * b for b in theirs))
    return _no_nan(diff / norm if norm else diff)


def _no_nan(x):
    """`x`, with NaN as infinity (max() would drop a NaN)."""
    return math.inf if math.isnan(x) else x


def check(name, options, tofu_opt, tofu_run, ranks, optimizer="adam",
          dtype="f64", steps=5, lr=0.01, rtol=None, seed=3, mpiexec="mpiexec",
          timeout=900, out=sys.stdout, export=False):
    """Runs the comparison for zoo model `name` (or, with `export`, the
    export `name` of tofu.exports); returns True when every figure is
    within `rtol`."""
    import torch
    torch.use_deterministic_algorithms(True)
    rtol = rtol if rtol is not None else (1e-9 if dtype == "f64" else 1e-4)
    momentum, betas, eps = 0.9, (0.9, 0.999), 1e-8
    if export:
        # `options`: the sizes of a generated export (KEY=VALUE strings).
        forward, passes, builder = exports.prepare(name, dtype, options)
        canonical = name
        twin = builder(torch, dtype)
    else:
        canonical, values = twins.resolve(name, options)
        b, loss = models.build(canonical, dtype, **values)
        forward = b.finish(loss)
        twin, _ = twins.build(canonical, values, dtype)
        passes = ["--tofu-autodiff"]
    ok = True
    with tempfile.TemporaryDirectory() as tmp:
        path = lambda f: os.path.join(tmp, f)
        with open(path("fwd.mlir"), "w") as f:
            f.write(forward)
        _run([tofu_opt, path("fwd.mlir")] + passes +
             [f"--tofu-optimizer=kind={optimizer} lr={lr!r} "
              f"momentum={momentum!r} beta1={betas[0]!r} beta2={betas[1]!r} "
              f"eps={eps!r}", "-o", path("step.mlir")], timeout)
        inputs = list_inputs(tofu_run, path("step.mlir"), timeout)
        fans = twins.fan_ins(tofu_opt, path("step.mlir"), timeout)
        arg_names = [n for n, _, _ in inputs]
        fans = {arg_names[i]: f for i, f in fans.items()} \
            if isinstance(fans, dict) else {}
        weights, data = make_files(torch, twin, inputs, fans, dtype, seed,
                                   path("init.safetensors"),
                                   path("data.safetensors"))
        theirs, final = train_torch(
            torch, twin, weights, data, steps,
            lambda params: torch_optimizer(torch, optimizer, params, lr,
                                           momentum, betas, eps))
        for k in ranks:
            step = path("step.mlir")
            cmd = [tofu_run, step]
            if k > 1:
                step = path(f"spmd{k}.mlir")
                _run([tofu_opt, path("step.mlir"), "--tdl-attach",
                      f"--tofu-search=devices={k} report=none",
                      "--tofu-partition", "-o", step], timeout)
                cmd = [mpiexec, "-n", str(k), tofu_run, step]
            saved = path(f"out{k}.safetensors")
            printed = _run(cmd + ["--init", path("init.safetensors"),
                                  "--data", path("data.safetensors"),
                                  "--steps", str(steps), "--save", saved],
                           timeout)
            ours = [float(v) for v in
                    re.findall(r"^step \d+: loss (\S+)", printed, re.M)]
            loss_diff = max(_no_nan(abs(a - b) / max(abs(b), 1e-300))
                            for a, b in zip(ours, theirs))
            if len(ours) != steps:
                loss_diff = math.inf
            tensors = safetensors.load(saved)
            weight_diff = max(relative_norm(tensors[n][2],
                                            final[n].flatten().tolist())
                              for n in final)
            # tofu-run prints 9 significant digits of each loss.
            good = loss_diff <= max(rtol, 1e-8) and weight_diff <= rtol
            ok &= good
            out.write(f"{canonical} {optimizer} {dtype} k={k}: losses of "
                      f"{steps} steps within {loss_diff:.2e}, final weights "
                      f"within {weight_diff:.2e} (relative norm): "
                      f"{'MATCH' if good else 'MISMATCH'}\n")
            out.flush()
    return ok


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = "python3 -m tofu.torchcheck"
    if not argv or (argv[0].startswith("-") and argv[0] != "--export"):
        sys.stderr.write(f"usage: {prog} MODEL [model options] --optimizer "
                         "sgd|momentum|adam --ranks 1,2,4 --dtype f64|f32\n"
                         f"       {prog} --export NAME [same options]\n"
                         f"models: {', '.join(twins.TWIN_MODELS)}; exports: "
                         f"{', '.join(sorted(exports.EXPORTS))}, and at any "
                         f"size (--size KEY=VALUE) "
                         f"{', '.join(sorted(exports.GENERATED))}\n")
        return 2

    def extra(parser):
        group = parser.add_argument_group("torchcheck")
        group.add_argument("--tofu-opt", default="tofu-opt")
        group.add_argument("--tofu-run", default="tofu-run")
        group.add_argument("--mpiexec", default="mpiexec")
        group.add_argument("--optimizer", choices=OPTIMIZERS, default="adam")
        group.add_argument("--ranks", default="1,2,4",
                           help="rank counts to train on (1: unpartitioned)")
        group.add_argument("--train-steps", type=int, default=5)
        group.add_argument("--lr", type=float, default=0.01)
        group.add_argument("--rtol", type=float, default=None,
                           help="default 1e-9 in f64, 1e-4 in f32")
        group.add_argument("--seed", type=int, default=3)

    if argv[0] == "--export":
        parser = argparse.ArgumentParser(prog=f"{prog} --export")
        parser.add_argument("name", choices=sorted(exports.EXPORTS) +
                            sorted(exports.GENERATED))
        parser.add_argument("--size", action="append", default=[],
                            metavar="KEY=VALUE",
                            help="a size of a generated export "
                            "(python3 -m tofu.exports --help)")
        parser.add_argument("--dtype", choices=["f32", "f64"], default="f64")
        extra(parser)
        args = parser.parse_args(argv[1:])
        if args.size and args.name not in exports.GENERATED:
            parser.error(f"--size: {args.name} is a file of fixed sizes")
        try:
            if args.name in exports.GENERATED:
                exports.sizes_of(args.name, args.size)
        except ValueError as err:
            parser.error(str(err))
        ok = check(args.name, args.size, args.tofu_opt, args.tofu_run,
                   [int(k) for k in args.ranks.split(",")], args.optimizer,
                   args.dtype, args.train_steps, args.lr, args.rtol, args.seed,
                   args.mpiexec, export=True)
        return 0 if ok else 1
    name, options, args = twins._parse_model_options(prog, argv[0], argv[1:],
                                                     extra)
    options.pop("dtype", None)
    ranks = [int(k) for k in args.ranks.split(",")]
    ok = check(name, options, args.tofu_opt, args.tofu_run, ranks,
               args.optimizer, args.dtype if "--dtype" in argv else "f64",
               args.train_steps, args.lr, args.rtol, args.seed, args.mpiexec)
    return 0 if ok else 1


if __name__ == "__main__":
    cli.run_main(main)
