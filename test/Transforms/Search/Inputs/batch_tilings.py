"""Prints, for a plan of batch-parallel: each input's and weight's tiling,
and how many operators that read a cut tensor run replicated."""
import json
import sys

plan = json.load(open(sys.argv[1]))
tensors = plan["tensors"]
for t in tensors:
    if t["role"] in ("input", "weight"):
        print(f"{t['role']} {t['name']} {'x'.join(map(str, t['shape']))} "
              f"{t['tilings'][0]}")
replicated = sum(
    1 for op in plan["ops"]
    if op["steps"][0]["strategy"] == "replicated" and any(
        i >= 0 and tensors[i]["tilings"][0].startswith("cut")
        for i in op["inputs"]))
print(f"replicated operators reading a cut tensor: {replicated}")
