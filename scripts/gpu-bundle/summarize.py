#!/usr/bin/env python3
"""Summarizes a run of the GPU bundle: usage summarize.py LOGDIR.

Prints the device, the correctness results, and for each speed model the
median step time of Tofu and of PyTorch eager, their ratio, Tofu's peak
live and held device bytes against torch.cuda.max_memory_allocated, and the
driver allocations Tofu made after its first step; then the partitioned
steps run as in-process workers on the one GPU against the same step at
k = 1, and the comparison of two runs' call traces. Exits 1 when a check
failed or a model was not measured.
"""
import json
import os
import re
import sys

SPEED = [("speed-mlp", "mlp", "MLP 4x8192, batch 512, SGD"),
         ("speed-bert", "bert-slice", "BERT-Large slice, 4 layers, Adam"),
         ("speed-wresnet", "wresnet-50-4", "WResNet-50-4, batch 32, SGD")]
# A partitioned step as in-process workers on one GPU, and its k = 1 step.
PARTITIONED = [("speed-part-mlp-w2", "speed-mlp",
                "MLP 4x8192, batch 512, SGD, 2 workers")]
# A step lowered with other tofu-gpu-pipeline options, and the default's.
VARIANTS = [("speed-bert-keep", "speed-bert",
             "BERT-Large slice, Adam, fuse-keep-results=true"),
            ("speed-bert-vector", "speed-bert",
             "BERT-Large slice, Adam, vector-loads=true"),
            ("speed-bert-all", "speed-bert",
             "BERT-Large slice, Adam, warp reductions, fused updates, "
             "vector loads")]


def read(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def tofu_run(log, name):
    text = read(os.path.join(log, name + ".1.txt"))
    rc = read(os.path.join(log, name + ".1.rc")).strip() or "not run"
    row = {"rc": rc}
    m = re.search(r"gpu step time: median ([0-9.]+) ms", text)
    row["ms"] = float(m.group(1)) if m else None
    m = re.search(r"peak live bytes (\d+), peak held bytes (\d+), "
                  r"workspace bytes (\d+)", text)
    if m:
        row["live"], row["held"], row["workspace"] = map(int, m.groups())
    m = re.search(r"driver allocations (\d+), driver allocations after the "
                  r"first step: (\d+)", text)
    if m:
        row["allocs"], row["allocs_after"] = map(int, m.groups())
    return row


def mib(n):
    return "%.0f MiB" % (n / 2.0**20) if n is not None else "-"


def main():
    log = sys.argv[1]
    failed = False
    print("device (name, driver, memory): %s" %
          (read(os.path.join(log, "device.txt")).strip() or "unknown"))
    print("\ncorrectness (3 steps, rtol 1e-4 against the CPU, two runs "
          "bit-identical):")
    for name in sorted(f[:-len(".result")] for f in os.listdir(log)
                       if f.endswith(".result")):
        result = read(os.path.join(log, name + ".result")).strip()
        failed |= result != "pass"
        row = tofu_run(log, name)
        print("  %-16s %-5s exit %s, driver allocations after step 1: %s" % (
            name, result, row["rc"], row.get("allocs_after", "-")))

    torch = {}
    data = read(os.path.join(log, "torch.json"))
    if data:
        for r in json.loads(data)["results"]:
            torch[r["model"]] = r
    print("\nspeed (median of 20 steps after 5 warm-up; PyTorch eager FP32, "
          "TF32 off):")
    header = ("model", "tofu ms", "torch ms", "ratio", "tofu peak live",
              "tofu peak held", "torch max alloc", "allocs after step 1")
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for exe, key, label in SPEED:
        if not os.path.exists(os.path.join(log, exe + ".1.rc")):
            continue
        row = tofu_run(log, exe)
        t = torch.get(key, {})
        tofu_ms, torch_ms = row.get("ms"), t.get("torch_ms")
        failed |= tofu_ms is None or row["rc"] != "0"
        print("| " + " | ".join([
            label,
            "%.2f" % tofu_ms if tofu_ms else "exit %s" % row["rc"],
            "%.2f" % torch_ms if torch_ms else "-",
            "%.2fx" % (tofu_ms / torch_ms) if tofu_ms and torch_ms else "-",
            mib(row.get("live")), mib(row.get("held")),
            mib(t.get("torch_max_memory_allocated")),
            str(row.get("allocs_after", "-"))]) + " |")
    for pairs, title, columns in (
            (PARTITIONED, "partitioned steps as in-process workers on the "
             "one GPU against the step at k = 1", ("k workers ms", "k = 1 ms")),
            (VARIANTS, "steps lowered with other tofu-gpu-pipeline options "
             "against the default lowering", ("variant ms", "default ms"))):
        failed |= compare(log, pairs, title, columns)
    traces = sorted(f[:-len(".calltrace.txt")] for f in os.listdir(log)
                    if f.endswith(".calltrace.txt"))
    if traces:
        print("\ncall traces of two runs (TOFU_GPU_TRACE; not counted):")
    for name in traces:
        print("  %-16s %s" % (name, read(os.path.join(
            log, name + ".calltrace.txt")).strip()))
    with open(os.path.join(log, "summary.json"), "w") as f:
        json.dump({"speed": {exe: tofu_run(log, exe) for exe, _, _ in
                             SPEED + PARTITIONED + VARIANTS},
                   "torch": torch}, f, indent=2)
    return 1 if failed else 0


def compare(log, pairs, title, columns):
    """Prints each measured (exe, base) pair's times and their ratio;
    returns whether one of them was not measured."""
    failed = False
    rows = [(exe, base, label) for exe, base, label in pairs
            if os.path.exists(os.path.join(log, exe + ".1.rc"))]
    if rows:
        print("\n%s:" % title)
        print("| model | %s | %s | ratio |" % columns)
        print("|---|---|---|---|")
    for exe, one, label in rows:
        row, base = tofu_run(log, exe), tofu_run(log, one)
        failed |= row.get("ms") is None or row["rc"] != "0"
        ms, base_ms = row.get("ms"), base.get("ms")
        print("| %s | %s | %s | %s |" % (
            label, "%.2f" % ms if ms else "exit %s" % row["rc"],
            "%.2f" % base_ms if base_ms else "-",
            "%.2f" % (ms / base_ms) if ms and base_ms else "-"))
    return failed


if __name__ == "__main__":
    sys.exit(main())
