#!/usr/bin/env python3
"""A plan that cuts the batch wherever there is one, next to Tofu's.

    python3 benchmarks/batch_plan.py STEP.mlir --devices 2 --batch 8 \\
        --keep-extent 1024 -o OUT.mlir [--plan-out PLAN.json] [--tofu-opt PATH]

Measures what Tofu's search leaves out on a step of many small operators.
From the step's own Tofu plan (`tofu-search plan-out`, one recursion step)
it builds a plan of the same search space (no tensor replicated but where
Tofu's plan replicates it): every tensor with a dimension of extent
--batch is cut along the first such dimension, and every operator that
writes such a tensor cuts the loop of that dimension, or, writing none,
the reduction loop that reads an input's batch dimension. Tensors with a
dimension of extent --keep-extent (the zoo LSTM's embedding, whose input
product Tofu cuts along the embedding), the operators that read or write
them, and everything else keep Tofu's choice. `tofu-search plan-in`
re-evaluates the plan and `tofu-partition` makes OUT.mlir of it; the
script prints both plans' cost-model and program bytes.

docs/search.md, *Limits of the model*, runs it on the zoo LSTM. Standard
library only.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(command):
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"batch_plan: {' '.join(command[:2])} ... failed:\n"
                 f"{done.stderr[-2000:]}")
    return done.stdout


def descriptions(attached):
    """The TDL description of every described operator, in program order
    (the order of the plan's operators)."""
    return re.findall(r"tdl\.desc = #tdl\.desc<(.*?)>(?:,|\})", attached)


def batch_loop(desc, output_shape, input_shapes, batch):
    """The loop that `desc` would cut to split the batch: the variable of
    the output's batch dimension, else a reduction variable that indexes
    an input's batch dimension; None if there is none."""
    head = re.match(r"\(([^)]*)\)\s*->\s*\(([^)]*)\)", desc)
    if not head:
        return None
    outputs = [v.strip() for v in head.group(2).split(",")]
    if output_shape and batch in output_shape:
        position = output_shape.index(batch)
        if position < len(outputs) and re.fullmatch(r"d\d+", outputs[position]):
            return outputs[position]
    reduced = {v.strip() for group in re.findall(r"sum\(([^)]*)\)", desc)
               for v in group.split(",")}
    for number, access in re.findall(r"in(\d+)\[([^\]]*)\]", desc):
        shape = input_shapes.get(int(number))
        if not shape or batch not in shape:
            continue
        indices = [v.strip() for v in access.split(",")]
        position = shape.index(batch)
        if position < len(indices) and indices[position] in reduced:
            return indices[position]
    return None


def batch_plan(tofu, descs, batch, keep_extent):
    plan = json.loads(json.dumps(tofu))
    shapes = {t["id"]: t["shape"] for t in plan["tensors"]}
    kept = {t["id"] for t in plan["tensors"] if keep_extent in t["shape"]}
    for t in plan["tensors"]:
        if t["id"] not in kept and batch in t["shape"]:
            t["tilings"] = [f"cut({t['shape'].index(batch)})"]
    cut = 0
    for op, desc in zip(plan["ops"], descs):
        inputs = [i for i in op["inputs"] if i >= 0]
        if kept & set(inputs + op["outputs"]):
            continue
        loop = batch_loop(
            desc, shapes[op["outputs"][0]] if op["outputs"] else None,
            {n: shapes[i] for n, i in enumerate(op["inputs"]) if i >= 0},
            batch)
        if loop:
            op["steps"] = [dict(op["steps"][0], strategy=loop)]
            cut += 1
    return plan, cut


def evaluate(tofu_opt, attached, devices, plan_file, out):
    """(cost-model bytes, program bytes) of the imported plan."""
    run([tofu_opt, attached, f"--tofu-search=devices={devices} "
         f"plan-in={plan_file} report=none svg=none", "--tofu-partition",
         "-o", out])
    with open(out) as f:
        text = f.read()
    found = re.search(r"bytes = (\d+) : i64, devices = \"[^\"]*\", "
                      r"program_bytes = (\d+)", text)
    return (int(found.group(1)), int(found.group(2))) if found else None


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("step")
    parser.add_argument("--devices", required=True,
                        help="a device count (one recursion step)")
    parser.add_argument("--batch", type=int, required=True,
                        help="the batch's extent")
    parser.add_argument("--keep-extent", type=int, default=0,
                        help="tensors with a dimension of this extent keep "
                        "Tofu's tiling, and their operators its strategy")
    parser.add_argument("-o", "--output", required=True,
                        help="the step partitioned by the batch plan")
    parser.add_argument("--plan-out", help="write the batch plan here")
    parser.add_argument("--tofu-opt",
                        default=os.path.join(REPO, "build", "bin", "tofu-opt"))
    args = parser.parse_args()
    if not args.devices.isdigit():
        parser.error("--devices takes one count: the plan has one step")
    with tempfile.TemporaryDirectory(prefix="batch_plan-") as tmp:
        attached = os.path.join(tmp, "attached.mlir")
        tofu_file = os.path.join(tmp, "tofu.json")
        run([args.tofu_opt, args.step, "--tdl-attach", "-o", attached])
        run([args.tofu_opt, attached, f"--tofu-search=devices={args.devices} "
             f"plan-out={tofu_file} report=none svg=none", "-o", os.devnull])
        with open(tofu_file) as f:
            tofu = json.load(f)
        with open(attached) as f:
            descs = descriptions(f.read())
        if len(descs) != len(tofu["ops"]):
            sys.exit(f"batch_plan: {len(descs)} descriptions for "
                     f"{len(tofu['ops'])} operators")
        plan, cut = batch_plan(tofu, descs, args.batch, args.keep_extent)
        plan_file = args.plan_out or os.path.join(tmp, "batch.json")
        with open(plan_file, "w") as f:
            json.dump(plan, f)
        mine = evaluate(args.tofu_opt, attached, args.devices, plan_file,
                        args.output)
        theirs = evaluate(args.tofu_opt, attached, args.devices, tofu_file,
                          os.path.join(tmp, "tofu.mlir"))
    print(f"operators cutting the batch: {cut} of {len(plan['ops'])}")
    for name, result in (("tofu", theirs), ("batch", mine)):
        print(f"{name} plan: cost-model bytes {result[0]}, program bytes "
              f"{result[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
