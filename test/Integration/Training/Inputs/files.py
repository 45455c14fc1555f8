"""Writes and compares the safetensors files of tofu-run's tests.

    files.py init INPUTS OUT [SEED]     weights for every `weight` line of
                                        `tofu-run --list-inputs` (INPUTS),
                                        uniform in +-0.3
    files.py data INPUTS SAMPLES OUT [SEED] [REPEAT]
                                        SAMPLES samples of every `data`
                                        input (labels as one-hot rows);
                                        REPEAT > 0 repeats the first REPEAT
                                        samples
    files.py compare A B RTOL           the same tensors, each within RTOL
                                        in relative norm ||a - b|| / ||b||
    files.py drop FILE NAME OUT         FILE without tensor NAME
    files.py rename FILE NAME NEW OUT   FILE with tensor NAME renamed
    files.py reshape FILE NAME OUT      FILE with tensor NAME flattened
    files.py head FILE NAME N OUT       FILE with the first N samples of
                                        tensor NAME only

Standard library only.
"""
import math
import random
import re
import sys

from tofu import safetensors

DTYPES = {"f32": "F32", "f64": "F64", "i32": "I32", "i64": "I64"}


def inputs(path):
    """[(name, shape, dtype, kind)] of a --list-inputs listing."""
    out = []
    with open(path) as f:
        for line in f:
            name, dims, dtype, kind = re.fullmatch(
                r"(\S+) \[([0-9, ]*)\] (\w+) (\w+)", line.strip()).groups()
            shape = [int(d) for d in dims.split(", ")] if dims else []
            out.append((name, shape, DTYPES[dtype], kind))
    return out


def count(shape):
    return math.prod(shape) if shape else 1


def main(argv):
    command = argv[1]
    if command == "init":
        rng = random.Random(int(argv[4]) if len(argv) > 4 else 7)
        tensors = {name: (dtype, shape,
                          [rng.uniform(-0.3, 0.3) for _ in range(count(shape))])
                   for name, shape, dtype, kind in inputs(argv[2])
                   if kind == "weight"}
        safetensors.save(argv[3], tensors)
    elif command == "data":
        samples = int(argv[3])
        seed = int(argv[5]) if len(argv) > 5 else 11
        repeat = int(argv[6]) if len(argv) > 6 else 0
        tensors = {}
        for name, shape, dtype, kind in inputs(argv[2]):
            if kind != "data":
                continue
            row = count(shape[1:])
            # Sample i of a tensor does not depend on the number of samples.
            rng = random.Random(f"{seed}:{name}")
            values = []
            for _ in range(samples):
                if name == "labels":
                    hot = rng.randrange(row)
                    values += [1.0 if i == hot else 0.0 for i in range(row)]
                else:
                    values += [rng.uniform(-1, 1) for _ in range(row)]
            if repeat:
                values = [values[i % (repeat * row)] for i in range(len(values))]
            tensors[name] = (dtype, [samples] + shape[1:], values)
        safetensors.save(argv[4], tensors)
    elif command == "compare":
        a, b = safetensors.load(argv[2]), safetensors.load(argv[3])
        rtol = float(argv[4])
        if sorted(a) != sorted(b):
            print(f"files: the tensors differ: {sorted(a)} vs {sorted(b)}")
            return 1
        worst = 0.0
        for name in a:
            x, y = a[name][2], b[name][2]
            if a[name][:2] != b[name][:2]:
                print(f"files: '{name}' differs in dtype or shape")
                return 1
            diff = math.sqrt(sum((p - q) ** 2 for p, q in zip(x, y)))
            norm = math.sqrt(sum(q * q for q in y))
            rel = diff / norm if norm else diff
            worst = max(worst, rel)
            if not rel <= rtol:
                print(f"files: '{name}' differs by {rel:.3g} in relative norm")
                return 1
        print(f"files: {len(a)} tensors agree within {rtol:g} "
              f"(largest relative norm {worst:.3g})")
    elif command == "head":
        # head FILE NAME N OUT: NAME keeps its first N samples.
        tensors = safetensors.load(argv[2])
        dtype, shape, values = tensors[argv[3]]
        n = int(argv[4])
        tensors[argv[3]] = (dtype, [n] + shape[1:],
                            values[:n * count(shape[1:])])
        safetensors.save(argv[5], tensors)
    elif command in ("drop", "rename", "reshape"):
        tensors = safetensors.load(argv[2])
        name = argv[3]
        dtype, shape, values = tensors.pop(name)
        if command == "rename":
            tensors[argv[4]] = (dtype, shape, values)
        elif command == "reshape":
            tensors[name] = (dtype, [count(shape)], values)
        safetensors.save(argv[-1], tensors)
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
