"""Reads tofu-search plans (docs/plan-format.md) and recomputes their cost.

    python3 -m tofu.plan check PLAN.json     recompute every edge's bytes
    python3 -m tofu.plan summary PLAN.json   bytes per step and per tiling
    python3 -m tofu.plan compare A.json B.json ...   total bytes of each plan;
                                             whether A communicates least

`check` is an independent implementation of the cost model of
docs/plan-format.md: for every step, operator and operand it recomputes the
bytes from the tensor's tiling and local shape, the operator's local operand
shape and what the strategy needs or produces, and compares them with the
bytes the plan lists, then the listed bytes with the step and plan totals.
A "region" need (halos, strides, slices) lists the box each worker reads;
the fetch is then the part of each box that the worker's tile lacks.

The needs, regions and products, and the operand shapes, are taken from the
plan as given: they come from the strategy analysis of the TDL descriptions,
which the plan does not carry, so `check` verifies the arithmetic of the
cost model, not that analysis, and neither feasibility nor optimality.
"""

import argparse
import json
import re
import sys

from tofu import cli


def num_elements(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def chunk(n, k, w):
    """Inclusive [lo, hi] of worker w when n elements are split into k."""
    return n * w // k, n * (w + 1) // k - 1


def parse_tiling(text):
    if text in ("rep", "partial", "whole", "unread"):
        return (text, None)
    m = re.fullmatch(r"cut\((\d+)\)", text)
    if m:
        return ("cut", int(m.group(1)))
    return None


def cut_to_cut(shape, a, b, k):
    """Elements fetched to turn a cut along a into a cut along b."""
    if a == b:
        return 0
    na, nb = shape[a], shape[b]
    rest = num_elements(shape) // na // nb
    total = 0
    for w in range(k):
        alo, ahi = chunk(na, k, w)
        blo, bhi = chunk(nb, k, w)
        total += (bhi - blo + 1) * na * rest - (ahi - alo + 1) * (bhi - blo + 1) * rest
    return total


def convert(shape, frm, to, k):
    """Elements moved to convert a tensor between tilings (whole = rep)."""
    size = num_elements(shape)
    if to[0] in ("unread",) or to[0] == "partial" or frm[0] == "rep":
        return 0
    if frm == to or (frm[0] == to[0] == "cut" and frm[1] == to[1]):
        return 0
    if frm[0] == "partial":
        return (2 if to[0] in ("rep", "whole") else 1) * (k - 1) * size
    if to[0] in ("rep", "whole"):
        return (k - 1) * size
    return cut_to_cut(shape, frm[1], to[1], k)


def volume(lo, hi):
    v = 1
    for a, b in zip(lo, hi):
        if b < a:
            return 0
        v *= b - a + 1
    return v


def fetch_regions(shape, frm, regions, k):
    """Elements fetched so that worker w holds regions[w], tiled as frm."""
    total = 0
    for w, (lo, hi) in enumerate(regions):
        olo, ohi = [0] * len(shape), [d - 1 for d in shape]
        if frm[0] == "cut":
            olo[frm[1]], ohi[frm[1]] = chunk(shape[frm[1]], k, w)
        ilo = [max(a, b) for a, b in zip(lo, olo)]
        ihi = [min(a, b) for a, b in zip(hi, ohi)]
        total += volume(lo, hi) - volume(ilo, ihi)
    return total


def scale(tensor_shape, operand_shape):
    if tensor_shape == operand_shape:
        return 1.0
    q = num_elements(operand_shape)
    return num_elements(tensor_shape) / q if q else 0.0


def close(a, b):
    return abs(a - b) <= 1e-9 * max(1.0, abs(a) + abs(b))


def input_elements(s, j, tensor, i, k):
    """Elements fetched for input j, or None when the need is unknown."""
    operand = s["input_shapes"][j]
    frm = parse_tiling(tensor["tilings"][i])
    if s["needs"][j] == "region":
        return 0 if frm[0] == "rep" else fetch_regions(operand, frm, s["regions"][j], k)
    need = parse_tiling(s["needs"][j])
    return None if need is None else convert(operand, frm, need, k)


def output_elements(s, j, tensor, i, k):
    """Elements moved to give output j the tensor's tiling."""
    return convert(s["output_shapes"][j], parse_tiling(s["produces"][j]),
                   parse_tiling(tensor["tilings"][i]), k)


def check(plan):
    tensors = plan["tensors"]
    steps = plan["steps"]
    counts = {"edges": 0, "recomputed": 0, "trusted": 0, "mismatches": 0}
    total = 0.0
    for i, step in enumerate(steps):
        k, groups = step["k"], step["groups"]
        step_total = 0.0
        for op in plan["ops"]:
            s = op["steps"][i]
            for kind, ids, listed_key, shapes_key, elements_of in (
                    ("input", op["inputs"], "input_bytes", "input_shapes", input_elements),
                    ("output", op["outputs"], "output_bytes", "output_shapes", output_elements)):
                for j, t in enumerate(ids):
                    if t < 0:
                        continue
                    counts["edges"] += 1
                    listed = s[listed_key][j]
                    step_total += listed
                    tensor = tensors[t]
                    elements = elements_of(s, j, tensor, i, k)
                    if elements is None:
                        counts["trusted"] += 1
                        continue
                    counts["recomputed"] += 1
                    mine = (elements * scale(tensor["local_shapes"][i], s[shapes_key][j]) *
                            tensor["element_bytes"] * groups)
                    if not close(mine, listed):
                        counts["mismatches"] += 1
                        print(f"mismatch: step {i} op {op['id']} ({op['name']}) {kind} {j}: "
                              f"listed {listed} recomputed {mine}")
        if not close(step_total, step["bytes"]):
            counts["mismatches"] += 1
            print(f"mismatch: step {i} lists {step['bytes']} bytes, its edges sum to {step_total}")
        total += step_total
    match = close(total, plan["total_bytes"]) and counts["mismatches"] == 0
    print(f"PLAN CHECK steps={len(steps)} edges={counts['edges']} "
          f"recomputed={counts['recomputed']} trusted={counts['trusted']} "
          f"mismatches={counts['mismatches']}")
    print(f"PLAN CHECK total={total:.0f} reported={plan['total_bytes']:.0f} match={int(match)}")
    print("PLAN CHECK needs, regions, products and operand shapes taken as given")
    return match


def summary(plan):
    print(f"algorithm {plan['algorithm']} devices {plan['devices']} "
          f"total {plan['total_bytes']:.0f} bytes")
    for i, step in enumerate(plan["steps"]):
        counts = {}
        for t in plan["tensors"]:
            counts[t["tilings"][i]] = counts.get(t["tilings"][i], 0) + 1
        tilings = " ".join(f"{k}:{v}" for k, v in sorted(counts.items()))
        print(f"step {i} k={step['k']} level={step['level']} bytes={step['bytes']:.0f} {tilings}")


def compare(plans):
    """Compares what the generated programs move (`program_bytes`) when
    every plan states it, otherwise the step model's `total_bytes`."""
    key = ("program_bytes" if all("program_bytes" in p for _, p in plans)
           else "total_bytes")
    first = plans[0][1][key]
    for path, plan in plans:
        print(f"{plan['algorithm']:14} {plan[key]:20.0f}  {path}")
    best = all(first <= p[key] * (1 + 1e-12) for _, p in plans)
    print(f"PLAN COMPARE {key} first_is_best={int(best)}")
    return best


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["check", "summary", "compare"])
    parser.add_argument("plans", nargs="+")
    args = parser.parse_args(argv)
    plans = []
    for path in args.plans:
        try:
            with open(path) as f:
                plan = json.load(f)
        except OSError as e:
            print(f"tofu plan: cannot read {path}: {e.strerror}", file=sys.stderr)
            return 2
        except ValueError as e:
            print(f"tofu plan: {path} is not JSON: {e}", file=sys.stderr)
            return 2
        if not isinstance(plan, dict) or plan.get("format") != "tofu-plan":
            print(f"{path}: not a tofu plan", file=sys.stderr)
            return 2
        plans.append((path, plan))
    try:
        if args.command == "compare":
            return 0 if compare(plans) else 1
        ok = True
        for path, plan in plans:
            if args.command == "check":
                ok &= check(plan)
            else:
                summary(plan)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        # A file that claims the format but lacks or garbles a field.
        print(f"tofu plan: {path}: not a complete tofu plan "
              f"({type(e).__name__}: {e}); write it with tofu-search "
              "plan-out=FILE", file=sys.stderr)
        return 2
    return 0 if ok else 1


if __name__ == "__main__":
    cli.run_main(main)
