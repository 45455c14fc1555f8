#!/usr/bin/env python3
"""A fuzzer of tofu-run's command line.

Draws random sets of tofu-run's options, with valid, boundary and wrong
values (0 and negative steps, a warm-up longer than the run, NaN learning
rates, unwritable and garbage files, unknown step names, stdin, missing
inputs, ...), and runs `tofu-run` with each on a small training step in a
scratch directory. Every run must either succeed (exit 0) or fail with a
message (exit 1 and `tofu-run:`, `tofu runtime:` or `error:` on
stderr). Anything else is a
crash: a signal, another exit code, a crash report (LLVM ERROR, stack dump,
sanitizer report), an exit 1 without a message, or a run over the time
limit. The command lines of crashes are printed and written to
--crash-dir.

  fuzz_run.py --tofu-run build/bin/tofu-run --step step.mlir --runs 100 --seed 1

Prints one summary line, `fuzz_run: runs N, ok N, diagnosed N, crashes N`,
and exits 1 if there was a crash. The option sets depend only on the seed.
"""

import argparse
import os
import pathlib
import random
import shlex
import subprocess
import sys
import tempfile

CRASH_MARKERS = ["LLVM ERROR", "Stack dump", "PLEASE submit a bug report",
                 "AddressSanitizer", "LeakSanitizer", "runtime error:",
                 "UndefinedBehaviorSanitizer", "Assertion", "UNREACHABLE"]

# How tofu-run, its runtime and MLIR's diagnostics start a message.
MESSAGE_MARKERS = ["tofu-run:", "tofu runtime:", "error:"]

# Option -> values; "{dir}" is the scratch directory, "{step}" the step.
OPTIONS = {
    "--steps": ["0", "1", "2", "3", "-1", "4294967296", "x"],
    "--warmup": ["0", "1", "2", "5", "-1"],
    "--seed": ["0", "1", "18446744073709551615", "-3"],
    "--int-bound": ["0", "1", "2", "1000"],
    "--lr": ["0", "-1", "0.001", "nan", "inf", "1e309", "x"],
    "--log-every": ["0", "1", "2", "100"],
    "--save-every": ["0", "1", "2"],
    "--save": ["{dir}/ckpt.safetensors", "/nonexistent/dir/ckpt.safetensors",
               "{dir}"],
    "--init": ["{dir}/missing.safetensors", "{dir}/empty",
               "{dir}/garbage", "{dir}/ckpt.safetensors"],
    "--data": ["{dir}/missing.safetensors", "{dir}/garbage", "{dir}/empty"],
    "--resume": ["{dir}/missing.safetensors", "{dir}/garbage",
                 "{dir}/ckpt.safetensors"],
    "--log": ["{dir}/log.jsonl", "/nonexistent/dir/log.jsonl"],
    "--threads": ["0", "1", "2", "2000"],
    "--func": ["", "nosuch", "forward_train"],
    "--emit-executable": ["{dir}/train", "/nonexistent/dir/train"],
    "--cpu-pipeline": ["fuse-keep-results=false", "no-such=1", "{", "}",
                       "fuse-keep-results=maybe", "outline-min-loops=0"],
}
FLAGS = ["--list-inputs", "--reference", "--timing", "--report",
         "--library-calls=false", "--gpu-lower-only", "--gpu"]
INPUTS = ["{step}", "{step}", "{step}", "-", "{dir}/missing.mlir",
          "{dir}/empty"]


def draw(rng):
    """One command line (without the program) as a list of strings."""
    args = []
    for option in rng.sample(sorted(OPTIONS), rng.randint(0, 4)):
        args.append(option + "=" + rng.choice(OPTIONS[option]))
    for flag in rng.sample(FLAGS, rng.randint(0, 2)):
        args.append(flag)
    args.append(rng.choice(INPUTS))
    rng.shuffle(args)
    return args


def run(tofu_run, args, step, timeout):
    """'ok', 'diagnosed' or ('crash', why, stderr)."""
    with tempfile.TemporaryDirectory() as scratch:
        (pathlib.Path(scratch) / "empty").write_bytes(b"")
        (pathlib.Path(scratch) / "garbage").write_bytes(
            bytes(range(256)) * 4)
        argv = [a.replace("{dir}", scratch).replace("{step}", step)
                for a in args]
        stdin = pathlib.Path(step).read_text() if "-" in argv else ""
        try:
            p = subprocess.run([tofu_run] + argv, input=stdin,
                               capture_output=True, text=True,
                               timeout=timeout, errors="replace",
                               cwd=scratch)
        except subprocess.TimeoutExpired:
            return ("crash", f"no result within {timeout} s", "")
    marker = next((m for m in CRASH_MARKERS if m in p.stderr), None)
    if p.returncode < 0 or marker:
        why = f"signal {-p.returncode}" if p.returncode < 0 else marker
        return ("crash", why, p.stderr)
    if p.returncode == 0:
        return "ok"
    if p.returncode != 1:
        return ("crash", f"exit code {p.returncode}", p.stderr)
    if any(m in p.stderr for m in MESSAGE_MARKERS):
        return "diagnosed"
    return ("crash", "exit 1 without a message", p.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tofu-run", required=True)
    parser.add_argument("--step", required=True,
                        help="a training step (tofu-opt's output)")
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--crash-dir")
    options = parser.parse_args()
    tofu_run = os.path.abspath(options.tofu_run)
    step = os.path.abspath(options.step)
    rng = random.Random(options.seed)
    counts = {"ok": 0, "diagnosed": 0, "crash": 0}
    for i in range(options.runs):
        args = draw(rng)
        result = run(tofu_run, args, step, options.timeout)
        if isinstance(result, str):
            counts[result] += 1
            continue
        _, why, stderr = result
        counts["crash"] += 1
        line = "tofu-run " + " ".join(shlex.quote(a) for a in args)
        print(f"CRASH ({why}): {line}")
        if options.crash_dir:
            os.makedirs(options.crash_dir, exist_ok=True)
            with open(os.path.join(options.crash_dir,
                                   f"crash-{counts['crash']:03d}.txt"),
                      "w") as f:
                f.write(line + "\n" + stderr)
    print(f"fuzz_run: runs {options.runs}, ok {counts['ok']}, diagnosed "
          f"{counts['diagnosed']}, crashes {counts['crash']}")
    return 1 if counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
