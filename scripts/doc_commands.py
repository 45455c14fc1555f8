#!/usr/bin/env python3
"""Runs the shell blocks of README.md and docs/*.md, so that docs cannot rot.

Every ```sh block runs with `bash -e -o pipefail` in a scratch directory
that links to the repository's top-level entries (build/, python/,
models/, scripts/, ...), so that the blocks' relative paths work and what
they write stays out of the checkout. The blocks of one file run in order
in one scratch directory (a later block may read what an earlier one
wrote), with a clean environment: PATH, HOME and LANG only, so that a
block must set PYTHONPATH itself as a reader would, and tofu-run's compile
cache in the scratch directory (TOFU_COMPILE_CACHE), where the file's
blocks share it as a reader's runs share theirs. A block preceded by

    <!-- doc-test: skip REASON -->

is not run (REASON says why: gpu, long, illustrative, ...), and a block
preceded by

    <!-- doc-test: requires PATH -->

runs only where PATH exists (e.g. the CUDA toolkit's ptxas).

  doc_commands.py [--root DIR] [--list] [--timeout S] [FILE...]

Prints `PASS`, `FAIL` or `SKIP (REASON)` and FILE:LINE for each block, the
output of each failure, and a summary line `doc_commands: blocks N, passed
N, failed N, skipped N`; exits 1 if a block failed.
"""

import argparse
import os
import pathlib
import re
import subprocess
import sys
import tempfile

SKIP = re.compile(r"<!--\s*doc-test:\s*skip\s*(.*?)\s*-->")
REQUIRES = re.compile(r"<!--\s*doc-test:\s*requires\s+(\S+)\s*-->")


def blocks(path):
    """(line, text, skip reason or None) of each ```sh block of `path`."""
    lines = path.read_text().split("\n")
    found = []
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```sh":
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            previous = lines[i - 1] if i > 0 else ""
            skip = None
            if match := SKIP.search(previous):
                skip = match.group(1) or "unspecified"
            elif match := REQUIRES.search(previous):
                if not os.path.exists(match.group(1)):
                    skip = "no " + match.group(1)
            found.append((i + 1, "\n".join(lines[i + 1:j]), skip))
            i = j
        i += 1
    return found


def scratch_dir(root):
    """A temporary directory with a link to each top-level entry of root."""
    scratch = tempfile.TemporaryDirectory(prefix="doc-commands-")
    for entry in root.iterdir():
        if entry.name != ".git":
            os.symlink(entry, os.path.join(scratch.name, entry.name))
    return scratch


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--root",
                        default=pathlib.Path(__file__).resolve().parent.parent)
    parser.add_argument("--list", action="store_true",
                        help="list the blocks without running them")
    parser.add_argument("--timeout", type=int, default=300)
    parser.add_argument("files", nargs="*")
    options = parser.parse_args()
    root = pathlib.Path(options.root).resolve()
    files = ([pathlib.Path(f).resolve() for f in options.files] or
             [root / "README.md"] + sorted((root / "docs").glob("*.md")))
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "HOME": os.environ.get("HOME", "/tmp"), "LANG": "C.UTF-8"}
    counts = {"passed": 0, "failed": 0, "skipped": 0, "listed": 0}
    for path in files:
        name = os.path.relpath(path, root)
        scratch = None
        for line, text, skip in blocks(path):
            where = f"{name}:{line}"
            if skip is not None:
                counts["skipped"] += 1
                print(f"SKIP ({skip}) {where}")
                continue
            if options.list:
                counts["listed"] += 1
                print(f"RUN {where}")
                continue
            if scratch is None:
                scratch = scratch_dir(root)
            block_env = dict(env, TOFU_COMPILE_CACHE=os.path.join(
                scratch.name, ".tofu-compile-cache"))
            try:
                p = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", text],
                                   cwd=scratch.name, env=block_env,
                                   capture_output=True, text=True,
                                   errors="replace", timeout=options.timeout)
                ok, output = p.returncode == 0, p.stdout + p.stderr
                why = f"exit {p.returncode}"
            except subprocess.TimeoutExpired:
                ok, output, why = False, "", f"over {options.timeout} s"
            if ok:
                counts["passed"] += 1
                print(f"PASS {where}")
            else:
                counts["failed"] += 1
                print(f"FAIL {where} ({why})")
                print("\n".join("  | " + l for l in output.splitlines()[-15:]))
        if scratch is not None:
            scratch.cleanup()
    total = sum(counts.values())
    if options.list:
        print(f"doc_commands: blocks {total}, to run {counts['listed']}, "
              f"skipped {counts['skipped']}")
        return 0
    print(f"doc_commands: blocks {total}, passed {counts['passed']}, failed "
          f"{counts['failed']}, skipped {counts['skipped']}")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
