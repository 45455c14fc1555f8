#!/usr/bin/env python3
"""Times tofu-autodiff + tofu-optimizer on the paper-size models.

    python3 benchmarks/training_step.py [--repeat N] [--tofu-opt PATH]

For each model the zoo writes the forward program, then `tofu-opt
--tofu-autodiff --tofu-optimizer=kind=adam --mlir-timing` builds the
training step. The table gives the forward and training-step operation
counts (top level, excluding constants), the time of the two passes (from
--mlir-timing, best of N) and the whole tofu-opt wall time (parse + passes +
print, best of N). Target: under 2 s for WResNet-152-10 and RNN-10-8K.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = [("WResNet-152-10", ["--batch", "8"]), ("RNN-10-8K", ["--batch", "64"]),
          ("bert-large", ["--batch", "1"]), ("vgg16", ["--batch", "8"])]


def count_ops(path):
    ops = 0
    with open(path) as f:
        for line in f:
            if re.match(r"\s+%\S+ = (linalg|tensor)\.", line):
                ops += 1
    return ops


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--tofu-opt", default=os.path.join(ROOT, "build/bin/tofu-opt"))
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    print("| model | forward ops | training-step ops | autodiff + adam passes (s) | tofu-opt wall (s) |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, options in MODELS:
            fwd = os.path.join(tmp, "fwd.mlir")
            out = os.path.join(tmp, "step.mlir")
            with open(fwd, "w") as f:
                subprocess.run([sys.executable, "-m", "tofu.models", name] + options,
                               stdout=f, env=env, check=True)
            best_pass, best_wall = float("inf"), float("inf")
            for _ in range(args.repeat):
                start = time.perf_counter()
                run = subprocess.run([args.tofu_opt, fwd, "--tofu-autodiff",
                                      "--tofu-optimizer=kind=adam", "--mlir-timing",
                                      "-o", out], capture_output=True, text=True, check=True)
                best_wall = min(best_wall, time.perf_counter() - start)
                passes = sum(float(m.group(1)) for m in re.finditer(
                    r"^\s+([0-9.]+) \(\s*[0-9.]+%\)\s+Tofu(Autodiff|Optimizer)",
                    run.stderr, re.M))
                best_pass = min(best_pass, passes)
            print(f"| {name} {' '.join(options)} | {count_ops(fwd)} | {count_ops(out)} | "
                  f"{best_pass:.3f} | {best_wall:.3f} |")


if __name__ == "__main__":
    main()
