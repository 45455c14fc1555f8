"""Measured communication of partitioned training steps against the plan.

For each tiny zoo model at 4 and 8 ranks, runs the differential test
(python -m tofu.difftest: search, tofu-partition, 3 steps under mpiexec next
to the unpartitioned step) and prints a Markdown table of the plan's bytes
per step, the bytes the runtime counted per step (summed over ranks), their
ratio, the largest relative difference and the peak live bytes per rank.

    python3 benchmarks/partition_bytes.py [--build build]
"""

import argparse
import os
import re
import subprocess
import sys

MODELS = [
    ("mlp", "mlp --batch 16 --hidden 32 --layers 2"),
    ("lstm", "rnn --layers 2 --steps 4 --hidden 16 --batch 8 --embed 16"),
    ("transformer",
     "transformer --layers 1 --hidden 16 --heads 2 --seq 8 --batch 2 --ffn 32"),
    ("conv1d", "conv1d --batch 8 --channels 8 --length 32 --filters 16"),
    ("wresnet",
     "wresnet --depth 10 --width 1 --batch 8 --image 8 --classes 4 "
     "--stages 1,1"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--devices", default="4,8")
    args = ap.parse_args()
    llvm = "/usr/lib/llvm-22"
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"))
    print("| model | ranks | step model B/step | plan (program) B/step "
          "| measured B/step | measured/plan | max rel. diff "
          "| peak live B/rank |")
    print("|---|---|---|---|---|---|---|---|")
    for name, model in MODELS:
        for k in args.devices.split(","):
            cmd = [sys.executable, "-m", "tofu.difftest", "--model", model,
                   "--devices", k,
                   "--tofu-opt", os.path.join(args.build, "bin", "tofu-opt"),
                   "--mlir-runner", llvm + "/bin/mlir-runner",
                   "--runtime",
                   os.path.join(args.build, "lib", "libtofu_runtime_cpu.so"),
                   "--runner-libs",
                   llvm + "/lib/libmlir_runner_utils.so," + llvm +
                   "/lib/libmlir_c_runner_utils.so"]
            out = subprocess.run(cmd, capture_output=True, text=True,
                                 env=env).stdout
            s = re.search(r"difftest: (\w+) max relative difference (\S+) "
                          r"\S+ \S+, measured (\d+) B/step \(generated "
                          r"\d+\), plan (\d+) B/step \(step model (\d+)\)",
                          out)
            peak = re.search(r"peak live bytes per rank: (\d+)", out)
            if not s:
                print(f"| {name} | {k} | failed | | | | | |")
                continue
            plan, measured = int(s.group(4)), int(s.group(3))
            ratio = measured / plan if plan else float("nan")
            print(f"| {name} | {k} | {s.group(5)} | {plan} | {measured} | "
                  f"{ratio:.2f} | "
                  f"{s.group(2)} | {peak.group(1) if peak else '?'} |",
                  flush=True)


if __name__ == "__main__":
    main()
