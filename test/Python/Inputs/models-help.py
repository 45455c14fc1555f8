"""Checks, for every zoo model, that `NAME --help` lists exactly the
builder's options under "model options", each with a description and a
default. Prints one line per model, then a verdict."""

import contextlib
import inspect
import io
import os
import re
import sys

from tofu import models

os.environ["COLUMNS"] = "200"
bad = []
for model in models.MODELS:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        models.main([model.name, "--help"])
    section = out.getvalue().split("model options:\n")[1].split("\n\n")[0]
    listed = {}
    for line in section.splitlines():
        m = re.match(r"\s+--(\w+) \S+\s+(.*)$", line)
        if not m:
            bad.append(f"{model.name}: unexpected line '{line}'")
            continue
        listed[m.group(1)] = m.group(2)
    params = [p for p in inspect.signature(model.builder).parameters if p != "b"]
    if sorted(listed) != sorted(params):
        bad.append(f"{model.name}: lists {sorted(listed)}, builder takes {sorted(params)}")
    for opt, text in listed.items():
        m = re.fullmatch(r"(\S.*) \(default: (.+)\)", text)
        if not m or "None" in m.group(2):
            bad.append(f"{model.name}: --{opt} lacks a description or a default: '{text}'")
    print(f"{model.name}: {len(listed)} options")

if bad:
    print("\n".join(bad))
    sys.exit(1)
print("every option has a description and a default")
