#!/usr/bin/env python3
"""Search time, scaling and plan quality of tofu-search.

    python3 benchmarks/search.py [--repeat N] [--quick] [--tofu-opt PATH]
    python3 benchmarks/search.py --refine [--devices 8,1024] [--against OTHER]

1. Search time at 8 devices (the paper's Table 1) for WResNet-152-10
   (batch 8) and RNN-10-8K (batch 512, 20 steps): the TofuSearch pass time
   from --mlir-timing (graph import, coarsening, every recursion step, the
   plan attributes; no JSON/SVG), best of N, and the peak memory of the
   whole tofu-opt process.
2. The same from 16 to 1024 devices.
3. Plan quality: total communication (GB) of every algorithm at 4, 8 and 16
   devices, under the same cost model, with each plan re-checked by the
   independent checker (python/tofu/plan.py). "tofu is best" compares Tofu
   with the baselines; tofu+replication (replicated tilings added, as in
   SOYBEAN) is a larger search space and is listed for reference.

With --refine, only the cost of the refinement (docs/search.md, 4b): the
TofuSearch time with refine=0 and with the default refine=2, at 8 and 1024
devices, and what each plan's program moves; --against times another build
side by side, run for run, so that the ratio holds on a loaded host.

Each training step is built once: zoo model -> tofu-autodiff ->
tofu-optimizer (Adam) -> tdl-attach. Targets: <= 0.3 s (WResNet-152-10) and
<= 1 s (RNN-10-8K) at 8 devices, <= 5 s at 1024 devices, < 2 GB.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))
from tofu import plan as planlib  # noqa: E402

TIMED = [("WResNet-152-10", ["--batch", "8"]), ("RNN-10-8K", ["--batch", "512"])]
QUALITY = TIMED + [("bert-large", ["--batch", "2"]), ("vgg16", ["--batch", "32"])]
ALGORITHMS = ["tofu", "icml18", "equalchop", "spartan", "allrow-greedy", "data-parallel",
              "tofu+replication"]


def run_measured(cmd):
    """Runs cmd; returns (stdout+stderr, its own peak RSS in MB)."""
    with tempfile.TemporaryFile(mode="w+") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        log.seek(0)
        out = log.read()
    if proc.returncode != 0:
        raise SystemExit(f"failed: {' '.join(cmd)}\n{out}")
    return out, usage.ru_maxrss / 1024.0


def build_step(tofu_opt, name, options, tmp):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    fwd = os.path.join(tmp, name + ".fwd.mlir")
    step = os.path.join(tmp, name + ".step.mlir")
    with open(fwd, "w") as f:
        subprocess.run([sys.executable, "-m", "tofu.models", name] + options,
                       stdout=f, env=env, check=True)
    subprocess.run([tofu_opt, fwd, "--tofu-autodiff", "--tofu-optimizer=kind=adam",
                    "--tdl-attach", "-o", step], check=True)
    ops = sum(1 for line in open(step) if re.match(r"\s+%\S+ = (linalg|tensor)\.", line))
    return step, ops


def search_time(tofu_opt, step, devices, repeat, extra=""):
    best, rss = None, 0.0
    plan_out = "" if "plan-out=" in extra else "plan-out=none "
    for _ in range(repeat):
        out, mem = run_measured([tofu_opt, step, "--mlir-timing", "-o", "/dev/null",
                                 f"--tofu-search=devices={devices} {plan_out}svg=none "
                                 f"report=none {extra}"])
        m = re.search(r"([0-9.]+) \(\s*[0-9.]+%\)\s+TofuSearch", out)
        t = float(m.group(1))
        best = t if best is None else min(best, t)
        rss = max(rss, mem)
    return best, rss


def refine_table(tofu_opt, against, steps, repeat, tmp, counts):
    """Times refine=0 and refine=2 side by side (and another build's)."""
    builds = [("this build", tofu_opt)] + ([("against", against)] if against else [])
    print("## The refinement's cost (best of %d, TofuSearch seconds)\n" % repeat)
    print("| model | devices | build | refine=0 (s) | refine=2 (s) | ratio "
          "| program moves, refine=0 | refine=2 |")
    print("|---|---|---|---|---|---|---|---|")
    for name, _ in TIMED:
        step, _ = steps[name]
        for devices in counts:
            for label, binary in builds:
                times, moved = [], []
                for refine in (0, 2):
                    path = os.path.join(tmp, f"refine.{refine}.json")
                    t, _ = search_time(binary, step, devices, repeat,
                                       f"refine={refine} plan-out={path}")
                    times.append(t)
                    with open(path) as f:
                        moved.append(json.load(f).get("program_bytes", -1))
                print(f"| {name} | {devices} | {label} | {times[0]:.3f} | "
                      f"{times[1]:.3f} | {times[1] / times[0]:.1f} | "
                      f"{moved[0] / 1e9:.2f} GB | {moved[1] / 1e9:.2f} GB |")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="skip the quality table")
    parser.add_argument("--tofu-opt", default=os.path.join(ROOT, "build/bin/tofu-opt"))
    parser.add_argument("--refine", action="store_true",
                        help="only the refinement's cost at 8 and 1024 devices")
    parser.add_argument("--against", help="another tofu-opt to time side by side")
    parser.add_argument("--devices", default="8,1024",
                        help="device counts of the --refine table")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        steps = {}
        for name, options in QUALITY if not (args.quick or args.refine) else TIMED:
            steps[name] = build_step(args.tofu_opt, name, options, tmp)
        if args.refine:
            refine_table(args.tofu_opt, args.against, steps, args.repeat, tmp,
                         [int(c) for c in args.devices.split(",")])
            return

        print("## Search time at 8 devices (best of %d)\n" % args.repeat)
        print("| model | training-step ops | tofu-search (s) | peak RSS (MB) | paper (s) |")
        print("|---|---|---|---|---|")
        paper = {"WResNet-152-10": "8.3", "RNN-10-8K": "66.6"}
        for name, _ in TIMED:
            step, ops = steps[name]
            t, rss = search_time(args.tofu_opt, step, 8, args.repeat)
            print(f"| {name} | {ops} | {t:.3f} | {rss:.0f} | {paper[name]} |")

        print("\n## Scaling (best of %d, seconds; peak RSS in MB)\n" % args.repeat)
        counts = [16, 32, 64, 128, 256, 512, 1024]
        print("| model | " + " | ".join(str(c) for c in counts) + " | peak RSS |")
        print("|---|" + "---|" * (len(counts) + 1))
        for name, _ in TIMED:
            step, _ = steps[name]
            cells, peak = [], 0.0
            for c in counts:
                t, rss = search_time(args.tofu_opt, step, c, args.repeat)
                cells.append(f"{t:.3f}")
                peak = max(peak, rss)
            print(f"| {name} | " + " | ".join(cells) + f" | {peak:.0f} |")

        if args.quick:
            return
        print("\n## Plan quality: total communication (GB) under one cost model\n")
        print("| model | devices | " + " | ".join(ALGORITHMS) + " | tofu is best | checked |")
        print("|---|---|" + "---|" * (len(ALGORITHMS) + 2))
        for name, _ in QUALITY:
            step, _ = steps[name]
            for devices in (4, 8, 16):
                totals, checked = [], True
                for algorithm in ALGORITHMS:
                    path = os.path.join(tmp, f"{name}.{devices}.{algorithm}.json")
                    options = (f"algorithm=tofu replication=1"
                               if algorithm == "tofu+replication"
                               else f"algorithm={algorithm}")
                    run_measured([args.tofu_opt, step, "-o", "/dev/null",
                                  f"--tofu-search=devices={devices} {options} "
                                  f"plan-out={path} svg=none report=none"])
                    with open(path) as f:
                        plan = json.load(f)
                    with open(os.devnull, "w") as null:
                        stdout, sys.stdout = sys.stdout, null
                        try:
                            checked &= planlib.check(plan)
                        finally:
                            sys.stdout = stdout
                    totals.append(plan["total_bytes"])
                    os.remove(path)
                # Tofu's search space has no replicas: compare it with the
                # baselines; tofu+replication is SOYBEAN's larger space.
                best = all(totals[0] <= t * (1 + 1e-12) for t in totals[:-1])
                cells = " | ".join(f"{t / 1e9:.3f}" for t in totals)
                print(f"| {name} | {devices} | {cells} | {'yes' if best else 'NO'} | "
                      f"{'yes' if checked else 'NO'} |")


if __name__ == "__main__":
    main()
