"""Differential test of a partitioned training step under MPI.

Builds the training step of a model (a zoo name with options, or an .mlir
file with a forward function and a loss), searches a plan, generates the
SPMD program with tofu-partition, wraps it in tofu-train-driver with the
unpartitioned reference, lowers it, runs it under `mpiexec -n RANKS
mlir-runner`, and checks that the losses and every final weight match the
reference within `--rtol`.

    python3 -m tofu.difftest --model "mlp --batch 8 --hidden 16" \
        --devices 2x2 --tofu-opt build/bin/tofu-opt \
        --runtime build/lib/libtofu_runtime_cpu.so

or, with the tools of the build, `build/bin/tofu difftest --model "mlp
--batch 8 --hidden 16" --devices 2x2`.

A forward export that returns logits takes its loss from
`--tofu-train-pipeline` (inline, unroll loops, tofu-loss, autodiff,
optimizer, attach, search), as users build their steps:

    python3 -m tofu.difftest --model models/torch-mlir-style/mlp.mlir \
        --loss softmax-cross-entropy --devices 8 ...

`--autodiff` then holds the pipeline's `weights=` and `inputs=`; arguments
keep the names they have in the file (`--autodiff inputs=x,cos,sin`).

`--f64` converts the model from f32 to f64 with
`--tofu-convert-float-type=from=f32 to=f64` before anything else, so that
the partitioned and the unpartitioned step compare in f64 (use a small
`--rtol` such as 1e-10 with it).

It prints the program's output and one summary line:

    difftest: PASS max relative difference 2.4e-07 <= 1e-05, measured
    2944 B/step (generated 2944), program bytes 2944 B/step (cost-model
    bytes 2232)

The bytes the runtime counts must equal what tofu-partition reports for
the program it generated (`--tofu-partition=report=-`), and both must equal
the plan's `program_bytes`: what the search's program model
(`include/tofu/Partition/ProgramCost.h`) says the program moves.

and exits with 1 when the check fails. `--workers` runs the ranks as
in-process workers of one `tofu-run --workers RANKS` (runtime/cpu/Workers.h)
instead of MPI processes of mlir-runner: the same program, the same checks.

It exits with 1 when the check fails. `--perturb-fetch` moves the first
`tofu.fetch` of the partitioned program by one element,
`--perturb-collective` runs its first all-gather or all-to-all over other
grid axes of the same size, and `--drop-reduction` removes its first
reduction; the check must then fail, which shows that it can catch a wrong
program.
"""

import argparse
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tofu import cli

# The CPU lowering of tofu-run (docs/cpu.md): matrix products as OpenBLAS
# calls into the runtime, the rest as loops.
LOWER = ["--tofu-cpu-pipeline"]


def ranks_of(devices):
    n = 1
    for part in devices.split("x"):
        n *= int(part)
    return n


def options_problem(args):
    """What is wrong with the options, found before anything runs, or
    None."""
    grid = args.devices.split("x")
    if not all(n.isdigit() and int(n) >= 1 for n in grid):
        return (f"--devices takes a number of devices or a grid such as 2x2, "
                f"not '{args.devices}'")
    if args.steps < 1:
        return "--steps must be at least 1"
    if args.int_bound < 1:
        return "--int-bound must be at least 1"
    if not args.rtol > 0:
        return "--rtol must be positive"
    if args.model.endswith(".mlir") and not os.path.isfile(args.model):
        return f"--model: no such file {args.model}"
    if args.workers and args.rewrite:
        return "--workers runs tofu-run, which takes no --rewrite"
    if args.workers and not args.combine:
        return ("--workers runs tofu-run, which always runs "
                "tofu-combine-collectives")
    tools = [("--tofu-opt", args.tofu_opt)]
    tools.append(("--tofu-run", args.tofu_run) if args.workers else
                 ("--mlir-runner", args.mlir_runner))
    for option, tool in tools:
        problem = cli.tool_problem(option, tool)
        if problem:
            return problem
    if not os.path.isfile(args.runtime):
        return (f"--runtime: no such file {args.runtime}; it must name "
                "libtofu_runtime_cpu.so (in build/lib)")
    for lib in args.runner_libs.split(","):
        if lib and not os.path.isfile(lib):
            return f"--runner-libs: no such file {lib}"
    if args.runner_preload and not os.path.isfile(args.runner_preload):
        return f"--runner-preload: no such file {args.runner_preload}"
    if shutil.which("mpiexec") is None and not args.workers:
        return "no mpiexec on PATH; the ranks run under MPI (MPICH: apt install mpich)"
    return None


def run(cmd, stdin=None, what=""):
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        sys.stdout.write(p.stdout)
        sys.stderr.write(p.stderr)
        print(f"difftest: FAIL {what} exited with {p.returncode}")
        sys.exit(1)
    return p


def perturb_fetch(ir):
    """Swaps two different rows (ranks) of the requested regions of the first
    tofu.fetch of an argument (else of any value) that has such rows, or else
    of its held regions: the fetch stays valid, but two ranks receive or
    describe each other's data."""
    # Fetches of arguments first: others may move constants (zero inits).
    pattern = (r"tofu\.fetch (?:%arg)?.*? shape \[([0-9, ]+)\] "
               r"from \[([-0-9, ]+)\] to \[([-0-9, ]+)\]")
    matches = list(re.finditer(pattern, ir))
    matches.sort(key=lambda m: not m.group(0).startswith("tofu.fetch %arg"))
    for group in (3, 2):
        for m in matches:
            rank = len(m.group(1).split(","))
            offs = [x.strip() for x in m.group(group).split(",")]
            rows = [offs[i:i + rank] for i in range(0, len(offs), rank)]
            other = next((i for i, r in enumerate(rows) if r != rows[0]),
                         None)
            if other is None:
                continue
            rows[0], rows[other] = rows[other], rows[0]
            text = ", ".join(x for r in rows for x in r)
            return ir[:m.start(group)] + text + ir[m.end(group):]
    raise SystemExit("difftest: no tofu.fetch to perturb")


def perturb_collective(ir):
    """Runs the first shard.all_gather or shard.all_to_all that has them
    over other grid axes with the same number of ranks: the program stays
    valid, but the ranks exchange tiles with the wrong group."""
    grids = {m.group(1): [int(k) for k in m.group(2).split("x")]
             for m in re.finditer(r"shard\.grid @([\w.$]+)\(shape = "
                                  r"([0-9x]+)\)", ir)}
    pattern = (r"shard\.(?:all_gather|all_to_all) %[\w.#]+ on @([\w.$]+) "
               r"grid_axes = \[([0-9, ]+)\]")
    for m in re.finditer(pattern, ir):
        shape = grids.get(m.group(1), [])
        axes = [int(a) for a in m.group(2).split(",")]
        size = math.prod(shape[a] for a in axes if a < len(shape))
        for other in itertools.combinations(range(len(shape)), len(axes)):
            if (list(other) != axes and
                    math.prod(shape[a] for a in other) == size):
                text = ", ".join(str(a) for a in other)
                return ir[:m.start(2)] + text + ir[m.end(2):]
    raise SystemExit("difftest: no all_gather or all_to_all to perturb")


def drop_reduction(ir):
    """Replaces the first shard.all_reduce or shard.reduce_scatter result
    that keeps the shape by its input: one partial sum is never reduced."""
    m = re.search(r"(%[\w.#]+) = shard\.all_reduce (%[\w.#]+) .*\n", ir)
    if not m:
        raise SystemExit("difftest: no shard.all_reduce to drop")
    rest = re.sub(re.escape(m.group(1)) + r"(?![\w.#])", m.group(2),
                  ir[m.end():])
    return ir[:m.start()] + rest


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", required=True,
                    help="zoo model with options, or an .mlir file")
    ap.add_argument("--devices", required=True, help="e.g. 4 or 2x2")
    ap.add_argument("--search", default="", help="extra tofu-search options")
    ap.add_argument("--optimizer", default="sgd")
    ap.add_argument("--autodiff", default="", help="tofu-autodiff options")
    ap.add_argument("--batch-products", action="store_true",
                    help="run tofu-batch-products before tofu-autodiff "
                         "(tofu-train-pipeline, with --loss, always does)")
    ap.add_argument("--stack-sums", action="store_true",
                    help="run tofu-stack-product-sums after tofu-autodiff "
                         "(tofu-train-pipeline, with --loss, always does)")
    ap.add_argument("--loss", default=None,
                    help="build the step with --tofu-train-pipeline (inline, "
                    "unroll loops, this loss, autodiff, optimizer, attach, "
                    "search): softmax-cross-entropy, mse, sum, or none for a "
                    "model that returns its loss; --autodiff then gives the "
                    "pipeline's weights= and inputs=")
    ap.add_argument("--labels", default="probabilities",
                    help="with --loss softmax-cross-entropy: probabilities, "
                    "or i64 or i32 class ids (drawn like token ids, in "
                    "[0, INT_BOUND))")
    ap.add_argument("--f64", action="store_true",
                    help="convert the model from f32 to f64 "
                    "(tofu-convert-float-type) before building the step")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--int-bound", type=int, default=2,
                    help="integer inputs (token ids) take values in "
                    "[0, INT_BOUND)")
    ap.add_argument("--rtol", type=float, default=1e-5)
    # build/bin/tofu sets the TOFU_* defaults to its build's tools.
    env = os.environ.get
    ap.add_argument("--tofu-opt", default=env("TOFU_OPT", "tofu-opt"),
                    help="default: $TOFU_OPT or tofu-opt")
    ap.add_argument("--mlir-runner",
                    default=env("TOFU_MLIR_RUNNER", "mlir-runner"),
                    help="default: $TOFU_MLIR_RUNNER or mlir-runner")
    ap.add_argument("--workers", action="store_true",
                    help="run the ranks as in-process workers of tofu-run "
                    "instead of under mpiexec")
    ap.add_argument("--tofu-run", default=env("TOFU_RUN"),
                    help="with --workers (default: $TOFU_RUN, or tofu-run "
                    "beside --tofu-opt)")
    ap.add_argument("--runtime", default=env("TOFU_RUNTIME"),
                    required=not env("TOFU_RUNTIME"),
                    help="the CPU runtime, libtofu_runtime_cpu.so of the "
                    "build (build/lib; default: $TOFU_RUNTIME)")
    ap.add_argument("--runner-libs", default=env("TOFU_RUNNER_LIBS", ""),
                    help="comma-separated mlir-runner support libraries "
                         "(default: $TOFU_RUNNER_LIBS)")
    ap.add_argument("--runner-preload",
                    default=env("TOFU_RUNNER_PRELOAD", ""),
                    help="library that mpiexec preloads into each "
                    "mlir-runner (LD_PRELOAD), such as the shared "
                    "AddressSanitizer runtime that an instrumented "
                    "--runtime needs (default: $TOFU_RUNNER_PRELOAD)")
    ap.add_argument("--report", action="store_true",
                    help="print the plan's report first")
    ap.add_argument("--rewrite", default="",
                    help="comma-separated tofu-opt passes run between "
                    "convert-tofu-to-mpi and tofu-cpu-pipeline, as an "
                    "embedding compiler might (e.g. cse,canonicalize)")
    ap.add_argument("--no-combine", dest="combine", action="store_false",
                    help="lower every collective on its own (no "
                    "tofu-combine-collectives, which tofu-run runs)")
    ap.add_argument("--perturb-fetch", action="store_true")
    ap.add_argument("--perturb-collective", action="store_true")
    ap.add_argument("--drop-reduction", action="store_true")
    ap.add_argument("--plan-bytes", choices=["exact", "report"],
                    default="exact",
                    help="whether the plan's program_bytes must equal what "
                    "the program moves ('report' only prints a difference)")
    args = ap.parse_args(argv)
    if args.tofu_run is None:
        beside = os.path.join(os.path.dirname(args.tofu_opt), "tofu-run")
        args.tofu_run = beside if os.path.dirname(args.tofu_opt) else "tofu-run"
    problem = options_problem(args)
    if problem:
        ap.error(problem)

    # A file is read by tofu-opt itself, so that arguments keep the names
    # they have in it (`inputs=x` in --autodiff).
    source, model = "-", None
    if args.model.endswith(".mlir"):
        source = args.model
    else:
        model = run([sys.executable, "-m", "tofu.models"] + args.model.split(),
                    what="tofu.models").stdout
    with tempfile.TemporaryDirectory() as tmp:
        plan_json = os.path.join(tmp, "plan.json")
        autodiff = "--tofu-autodiff" + (f"={args.autodiff}"
                                        if args.autodiff else "")
        report = "-" if args.report else "none"
        search = (f"devices={args.devices} report={report} svg=none "
                  f"plan-out={plan_json} {args.search}")
        if args.loss is not None:
            passes = [f"--tofu-train-pipeline=loss={args.loss} "
                      f"labels={args.labels} optimizer={args.optimizer} "
                      f"{args.autodiff} {search}"]
        else:
            passes = [autodiff, f"--tofu-optimizer=kind={args.optimizer}",
                     "--tdl-attach", f"--tofu-search={search}"]
            if args.stack_sums:
                passes.insert(1, "--tofu-stack-product-sums")
            if args.batch_products:
                passes = ["--tofu-batch-products"] + passes
        if args.f64:
            passes = ["--tofu-convert-float-type=from=f32 to=f64"] + passes
        spmd = run([args.tofu_opt, source] + passes +
                   ["--tofu-partition=report=-"], model,
                   "tofu-opt (search and partition)")
        if args.report:
            sys.stdout.write("".join(
                l for l in spmd.stderr.splitlines(True)
                if not l.startswith(("remark", "<stdin>", "func.func", "^"))))
        generated = re.search(r"generated (\d+) B/step", spmd.stderr)
        spmd = spmd.stdout
        if args.perturb_fetch:
            spmd = perturb_fetch(spmd)
        if args.perturb_collective:
            spmd = perturb_collective(spmd)
        if args.drop_reduction:
            spmd = drop_reduction(spmd)
        if args.workers:
            spmd_file = os.path.join(tmp, "spmd.mlir")
            with open(spmd_file, "w") as f:
                f.write(spmd)
            out = run([args.tofu_run, spmd_file, "--steps", str(args.steps),
                       "--reference", "--int-bound", str(args.int_bound),
                       "--workers", str(ranks_of(args.devices))],
                      what="tofu-run --workers").stdout
        else:
            out = run_mpi(args, spmd, tmp)
        with open(plan_json) as f:
            text = f.read()
        model = re.search(r'"total_bytes"\s*:\s*([0-9.e+]+)', text)
        plan = re.search(r'"program_bytes"\s*:\s*([0-9.e+]+)', text)
    return check(args, out, generated, model, plan)


def run_mpi(args, spmd, tmp):
    """The output of the driver and the lowering of `spmd` under mpiexec
    mlir-runner."""
    low = run([args.tofu_opt, "-",
               f"--tofu-train-driver=steps={args.steps} reference=1 "
               f"int-bound={args.int_bound}"] +
              (["--tofu-combine-collectives"] if args.combine else []) +
              ["--convert-tofu-to-mpi"] +
              [f"--{p}" for p in args.rewrite.split(",") if p] + LOWER,
              spmd,
              "tofu-opt (driver and lowering)").stdout
    low_file = os.path.join(tmp, "step.mlir")
    with open(low_file, "w") as f:
        f.write(low)
    libs = [l for l in args.runner_libs.split(",") if l] + [args.runtime]
    preload = (["-genv", "LD_PRELOAD", args.runner_preload]
               if args.runner_preload else [])
    out = run(["mpiexec", "-n", str(ranks_of(args.devices))] + preload +
              [args.mlir_runner, low_file, "-e", "main",
               "-entry-point-result=void",
               "-shared-libs=" + ",".join(libs)], what="mpiexec").stdout
    return out


def check(args, out, generated, model, plan):
    """Prints the run's output and the verdict; 0 when it passes."""
    sys.stdout.write(out)
    steps = re.findall(r"^step (\d+): loss", out, re.M)
    diff = re.search(r"^max relative difference: (\S+)", out, re.M)
    measured = re.search(r"^measured bytes per step: (\d+)", out, re.M)
    ok = (diff is not None and len(steps) == args.steps and
          float(diff.group(1)) <= args.rtol)
    # NaN or infinite reference losses compare as an infinite difference;
    # say that the model itself overflows, not the partition.
    reference = re.findall(r"^step \d+: loss \S+ reference (\S+)", out, re.M)
    if any(not math.isfinite(float(r)) for r in reference):
        print("difftest: the unpartitioned step's loss is not finite: the "
              "model overflows on the generated inputs")
        ok = False
    # The runtime must count exactly what tofu-partition generated.
    counted = (measured is not None and generated is not None and
               measured.group(1) == generated.group(1))
    perturbed = (args.perturb_fetch or args.perturb_collective or
                 args.drop_reduction)
    if not counted and not perturbed:
        print("difftest: the runtime counted "
              f"{measured.group(1) if measured else '?'} B/step but the "
              f"program moves {generated.group(1) if generated else '?'}")
        ok = False
    # And the plan must state what the program moves (ProgramCost.h).
    plan_bytes = f"{float(plan.group(1)):.0f}" if plan else "?"
    if (generated is not None and plan_bytes != generated.group(1) and
            not perturbed):
        print(f"difftest: the plan's program bytes are {plan_bytes} B/step "
              f"but the program moves {generated.group(1)}; compare them per "
              "tensor with "
              "--tofu-partition=report=-")
        ok = ok and args.plan_bytes == "report"
    verdict = "PASS" if ok else "FAIL"
    print(f"difftest: {verdict} max relative difference "
          f"{diff.group(1) if diff else 'missing'} "
          f"{'<=' if ok else 'vs'} {args.rtol:g}, "
          f"measured {measured.group(1) if measured else '?'} B/step "
          f"(generated {generated.group(1) if generated else '?'}), "
          f"program bytes {plan_bytes} B/step (cost-model bytes "
          f"{float(model.group(1)) if model else 0:.0f})")
    return 0 if ok else 1


if __name__ == "__main__":
    cli.run_main(main)
