#!/usr/bin/env python3
"""Times tdl-attach on a generated LLaMA-style prefill model.

    python3 benchmarks/tdl_attach.py [--generics 1650] [--repeat 5]
        [--tofu-opt build/bin/tofu-opt] [--baseline PATH]

The model comes from benchmarks/llama_prefill.py (1,650 linalg.generic by
default). For each binary the pass time is read from -mlir-timing (the
"TDLAttach" line), the minimum over --repeat runs; the parse and print times
of the same run are shown next to it. --baseline names another tofu-opt
(for example a build of an earlier commit) to time side by side. Standard
library only; nothing is asserted.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def timings(tofu_opt, model):
    out = subprocess.run(
        [tofu_opt, model, "--tdl-attach", "-o", os.devnull, "-mlir-timing"],
        check=True, capture_output=True, text=True).stderr
    times = {}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(\S+)\s*$", line)
        if m:
            times[m.group(2)] = float(m.group(1))
    return times


def measure(tofu_opt, model, repeat):
    runs = [timings(tofu_opt, model) for _ in range(repeat)]
    return {k: min(r.get(k, 0.0) for r in runs)
            for k in ("Parser", "TDLAttach", "Output", "Total")}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--generics", type=int, default=1650,
                   help="linalg.generic ops in the model (default 1650)")
    p.add_argument("--repeat", type=int, default=5,
                   help="runs per binary; the minimum is kept (default 5)")
    p.add_argument("--tofu-opt", default=os.path.join(ROOT, "build", "bin",
                                                      "tofu-opt"),
                   help="tofu-opt to time (default build/bin/tofu-opt)")
    p.add_argument("--baseline", help="another tofu-opt to time beside it")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = os.path.join(tmp, "llama.mlir")
        with open(model, "w") as f:
            subprocess.run([sys.executable,
                            os.path.join(HERE, "llama_prefill.py"),
                            "--generics", str(a.generics)],
                           check=True, stdout=f)
        size = os.path.getsize(model)
        print("model: %d linalg.generic, %.2f MB of IR" % (a.generics,
                                                          size / 1e6))
        print("%-10s %10s %10s %10s %10s" % ("binary", "tdl-attach",
                                             "parse", "print", "total"))
        binaries = [("current", a.tofu_opt)]
        if a.baseline:
            binaries.append(("baseline", a.baseline))
        for name, exe in binaries:
            t = measure(exe, model, a.repeat)
            print("%-10s %9.3fs %9.3fs %9.3fs %9.3fs" % (
                name, t["TDLAttach"], t["Parser"], t["Output"], t["Total"]))


if __name__ == "__main__":
    main()
