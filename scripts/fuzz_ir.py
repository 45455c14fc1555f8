#!/usr/bin/env python3
"""A mutation fuzzer of the training-step pipeline.

Mutates the lit-test models and small zoo models (tensor shapes, element
types, deleted ops, swapped operands, dropped attributes, arguments marked
as weights) and runs

  tofu-opt --tofu-autodiff --tofu-optimizer --tdl-attach \
           --tofu-search=devices=4

on each mutant. Every run must either succeed (exit 0) or fail with a
diagnostic (exit 1 and an `error:` on stderr). Anything else is a crash: a
signal, another exit code, a crash report (LLVM ERROR, stack dump, sanitizer
report), an exit 1 without a diagnostic, or a run over the time limit.
Crashing mutants are saved to --crash-dir.

A crash whose stack dump shows it inside MLIR's parser (a `MLIR Parser:`
entry and no pass running) happens before any of the project's code runs:
upstream's parser of some linalg named ops crashes on operands of mixed
element types (docs/testing.md). Such mutants are saved and counted as
upstream parser crashes; they do not fail the run.

  fuzz_ir.py --tofu-opt build/bin/tofu-opt --mutants 1000 --seed 1
  fuzz_ir.py --tofu-opt build/bin/tofu-opt --replay DIR   # saved inputs

Prints one summary line, `fuzz_ir: mutants N, ok N, diagnosed N, crashes N`,
and exits 1 if there was a crash. Mutants depend only on the seed and the
model files, so a run is reproducible.
"""

import argparse
import concurrent.futures
import os
import pathlib
import random
import re
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent
PIPELINE = ["--tofu-autodiff", "--tofu-optimizer", "--tdl-attach",
            "--tofu-search=devices=4"]
# Small zoo configurations (as in test/Python/zoo.test).
ZOO = [
    ["mlp"],
    ["RNN-2-16", "--steps", "2", "--batch", "2"],
    ["WResNet-50-1", "--image", "8", "--batch", "1", "--classes", "4"],
    ["conv1d"],
    ["transformer", "--layers", "1", "--hidden", "16", "--heads", "2",
     "--seq", "4"],
]
CRASH_MARKERS = ["LLVM ERROR", "Stack dump", "PLEASE submit a bug report",
                 "AddressSanitizer", "LeakSanitizer", "runtime error:",
                 "UndefinedBehaviorSanitizer", "Assertion", "UNREACHABLE"]

TENSOR = re.compile(r"tensor<((?:[0-9?]+x)*)([a-z][a-z0-9<>]*)>")
SSA_DEF = re.compile(r"^\s*(%[\w.#:]+)\s*=")
OPERANDS = re.compile(r"(%[\w.#]+), (%[\w.#]+)")
ATTR = re.compile(r"\s*\{?tofu\.[\w]+(?: = [^,}]+)?\}?")


def split_top_level(text):
    """Splits at the commas outside brackets."""
    parts, depth, start = [], 0, 0
    for i, c in enumerate(text):
        depth += {"(": 1, "<": 1, "[": 1, "{": 1,
                  ")": -1, ">": -1, "]": -1, "}": -1}.get(c, 0)
        if c == "," and depth == 0:
            parts.append((start, i))
            start = i + 1
    parts.append((start, len(text)))
    return parts


SIGNATURE = re.compile(r"func\.func\s+(?:private\s+)?@[\w.$]+\(", re.S)


def arguments(text):
    """(start, end) of each argument of each function signature."""
    args = []
    for m in SIGNATURE.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        inner = text[m.end():i - 1]
        for a, b in split_top_level(inner):
            if "%" in inner[a:b]:
                args.append((m.end() + a, m.end() + b))
    return args


def mark_weights(text, spans):
    """Adds {tofu.weight} to the arguments at `spans` (in any order)."""
    for a, b in sorted(spans, reverse=True):
        arg = text[a:b].rstrip()
        if "{" in arg:
            continue
        text = text[:a] + arg + " {tofu.weight}" + text[a + len(arg):]
    return text


def load_models():
    """(name, text) of every model: split lit tests and zoo models."""
    models = []
    paths = sorted(ROOT.glob("test/**/*.mlir")) + \
        sorted(ROOT.glob("models/**/*.mlir"))
    for path in paths:
        text = path.read_text()
        for i, chunk in enumerate(re.split(r"^// -----$", text, flags=re.M)):
            if "func.func" in chunk:
                rel = path.relative_to(ROOT)
                # Forward models without weights (the torch-mlir-style
                # ones) train every argument but the first.
                if "tofu.weight" not in chunk and "tofu.loss" not in chunk:
                    chunk = mark_weights(chunk, arguments(chunk)[1:])
                models.append((f"{rel}#{i}", chunk))
    env = dict(os.environ, PYTHONPATH=str(ROOT / "python"))
    for args in ZOO:
        out = subprocess.run([sys.executable, "-m", "tofu.models"] + args,
                             capture_output=True, text=True, env=env,
                             check=True).stdout
        models.append((f"zoo:{' '.join(args)}", out))
    return models


def mutate_shape(text, rng):
    matches = [m for m in TENSOR.finditer(text) if m.group(1)]
    if not matches:
        return None
    m = rng.choice(matches)
    dims = m.group(1)[:-1].split("x")
    d = rng.randrange(len(dims))
    dims[d] = str(rng.choice([0, 1, 2, 3, 5, 7, 64, 4096, "?",
                              4294967296]))
    if rng.random() < 0.2 and len(dims) > 1:
        dims.pop(rng.randrange(len(dims)))
    new = f"tensor<{'x'.join(dims)}x{m.group(2)}>"
    if rng.random() < 0.5:
        # Every occurrence of the type, which keeps more of the IR valid.
        return text.replace(m.group(0), new)
    return text[:m.start()] + new + text[m.end():]


def mutate_element_type(text, rng):
    matches = list(TENSOR.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    new_type = rng.choice(["i32", "i64", "i1", "index", "f16", "bf16", "f64",
                           "complex<f32>", "i8"])
    new = f"tensor<{m.group(1)}{new_type}>"
    if rng.random() < 0.5:
        return text.replace(m.group(0), new)
    return text[:m.start()] + new + text[m.end():]


def mutate_delete_op(text, rng):
    lines = text.split("\n")
    defs = [i for i, l in enumerate(lines) if SSA_DEF.match(l)]
    if not defs:
        return None
    i = rng.choice(defs)
    name = SSA_DEF.match(lines[i]).group(1).split(":")[0].split("#")[0]
    # Delete the op and, half the time, read an earlier value instead of
    # its result so that the module still parses.
    earlier = [SSA_DEF.match(lines[j]).group(1).split(":")[0].split("#")[0]
               for j in defs if j < i]
    args = re.findall(r"%arg\d+", text)
    candidates = earlier + args
    del lines[i]
    out = "\n".join(lines)
    if candidates and rng.random() < 0.5:
        out = re.sub(re.escape(name) + r"\b", rng.choice(candidates), out)
    return out


def mutate_swap_operands(text, rng):
    matches = list(OPERANDS.finditer(text))
    if not matches:
        return None
    m = rng.choice(matches)
    return text[:m.start()] + f"{m.group(2)}, {m.group(1)}" + text[m.end():]


def mutate_weight(text, rng):
    args = arguments(text)
    if not args:
        return None
    return mark_weights(text, [rng.choice(args)])


def mutate_attribute(text, rng):
    matches = [m for m in ATTR.finditer(text)]
    if not matches:
        return None
    m = rng.choice(matches)
    return text[:m.start()] + text[m.end():]


MUTATIONS = [mutate_shape, mutate_element_type, mutate_delete_op,
             mutate_swap_operands, mutate_attribute, mutate_weight]


def make_mutants(models, count, seed):
    rng = random.Random(seed)
    # Whole models reach every pass; the lit-test cases cover the corners.
    whole = [m for m in models
             if m[0].startswith(("zoo:", "models/", "test/Models"))]
    mutants = []
    while len(mutants) < count:
        name, text = rng.choice(whole if rng.random() < 0.4 else models)
        applied = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            fn = rng.choice(MUTATIONS)
            out = fn(text, rng)
            if out is not None and out != text:
                text = out
                applied.append(fn.__name__[len("mutate_"):])
        if applied:
            mutants.append((f"{len(mutants):04d} {name} "
                            f"[{', '.join(applied)}]", text))
    return mutants


def run(tofu_opt, text, timeout):
    """'ok', 'diagnosed' or ('crash', why, stderr). `tofu_opt` is absolute."""
    try:
        # tofu-search writes its picture to the working directory.
        with tempfile.TemporaryDirectory() as cwd:
            p = subprocess.run([tofu_opt] + PIPELINE + ["-o", os.devnull],
                               input=text, capture_output=True, text=True,
                               timeout=timeout, errors="replace", cwd=cwd)
    except subprocess.TimeoutExpired:
        return ("crash", f"no result within {timeout} s", "")
    marker = next((m for m in CRASH_MARKERS if m in p.stderr), None)
    if p.returncode < 0 or marker:
        why = f"signal {-p.returncode}" if p.returncode < 0 else marker
        in_parser = ("MLIR Parser:" in p.stderr and
                     "Running pass" not in p.stderr)
        return ("upstream" if in_parser else "crash", why, p.stderr)
    if p.returncode == 0:
        return "ok"
    if p.returncode != 1:
        return ("crash", f"exit code {p.returncode}", p.stderr)
    if "error:" in p.stderr:
        return "diagnosed"
    return ("crash", "exit 1 without a diagnostic", p.stderr)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tofu-opt", default=str(ROOT / "build/bin/tofu-opt"))
    parser.add_argument("--show", type=int, metavar="N",
                        help="print mutant N and stop")
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--timeout", type=int, default=120)
    parser.add_argument("--crash-dir", default="fuzz-ir-crashes")
    parser.add_argument("--replay", metavar="DIR",
                        help="run the saved .mlir inputs in DIR instead")
    parser.add_argument("--list", action="store_true",
                        help="print the mutants' names and stop")
    args = parser.parse_args()
    args.tofu_opt = os.path.abspath(args.tofu_opt)

    if args.replay:
        inputs = [(p.name, p.read_text())
                  for p in sorted(pathlib.Path(args.replay).glob("*.mlir"))]
    else:
        inputs = make_mutants(load_models(), args.mutants, args.seed)
    if args.show is not None:
        print(inputs[args.show][1])
        return 0
    if args.list:
        for name, _ in inputs:
            print(name)
        return 0

    counts = {"ok": 0, "diagnosed": 0, "crash": 0, "upstream": 0}
    crash_dir = pathlib.Path(args.crash_dir)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = pool.map(lambda i: run(args.tofu_opt, i[1], args.timeout),
                           inputs)
        for (name, text), result in zip(inputs, results):
            if isinstance(result, str):
                counts[result] += 1
                continue
            kind, why, stderr = result
            counts[kind] += 1
            if kind == "upstream":
                print(f"UPSTREAM PARSER CRASH ({why}): {name}")
            else:
                print(f"CRASH ({why}): {name}")
            crash_dir.mkdir(parents=True, exist_ok=True)
            stem = f"{kind}-{counts[kind]:03d}"
            (crash_dir / f"{stem}.mlir").write_text(
                f"// {name}\n// {why}\n{text}")
            (crash_dir / f"{stem}.stderr").write_text(stderr)
    print(f"fuzz_ir: mutants {len(inputs)}, ok {counts['ok']}, "
          f"diagnosed {counts['diagnosed']}, crashes {counts['crash']}, "
          f"upstream parser crashes {counts['upstream']}")
    return 1 if counts["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
