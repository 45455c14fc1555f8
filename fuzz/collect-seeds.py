"""Builds the seed corpora of the libFuzzer targets from the test inputs.

  python3 fuzz/collect-seeds.py --build BUILD_DIR CORPUS_DIR

writes CORPUS_DIR/<target>/ for each target:
  tdl-parse-fuzzer    every #tdl.desc<...> of the lit tests and models, and
                      every entry of the .tdl libraries;
  tdl-library-fuzzer  the .tdl libraries, whole and one entry at a time;
  plan-json-fuzzer    plans of the fuzzer's own graph (BUILD_DIR/bin/
                      plan-json-seeds) and the plans the lit tests wrote;
  safetensors-fuzzer  the files kept in fuzz/seeds/safetensors-fuzzer/
                      (written by python/tofu/safetensors.py);
and adds the inputs kept in fuzz/regressions/<target>/.
"""

import argparse
import pathlib
import re
import shutil
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent


def tdl_descs(text):
    """The bodies of #tdl.desc<...> in MLIR text (`->` is not a bracket)."""
    for m in re.finditer(r"#tdl\.desc<", text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            if text.startswith("->", i):
                i += 2
                continue
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            i += 1
        if depth == 0:
            yield text[m.end():i - 1]


def library_entries(text):
    """(name, whole entry, body) of each `op name<...> { body }`."""
    for m in re.finditer(r"^op\s+([\w.]+)[^{]*\{(.*?)^\}", text, re.M | re.S):
        yield m.group(1), m.group(0), m.group(2)


def write(dir, name, data):
    dir.mkdir(parents=True, exist_ok=True)
    (dir / name).write_text(data)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--build", required=True)
    parser.add_argument("corpus")
    args = parser.parse_args()
    corpus = pathlib.Path(args.corpus)
    build = pathlib.Path(args.build)
    parse_dir = corpus / "tdl-parse-fuzzer"
    lib_dir = corpus / "tdl-library-fuzzer"
    plan_dir = corpus / "plan-json-fuzzer"

    descs = set()
    for path in sorted(ROOT.glob("test/**/*.mlir")) + \
            sorted(ROOT.glob("models/**/*.mlir")):
        descs.update(tdl_descs(path.read_text()))
    libraries = sorted(ROOT.glob("tdl/*.tdl")) + \
        sorted(ROOT.glob("test/**/*.tdl"))
    for path in libraries:
        text = path.read_text()
        write(lib_dir, path.name, text)
        for name, entry, body in library_entries(text):
            write(lib_dir, f"{path.stem}-{name}", entry)
            # Parameters read as 2 in a standalone description.
            descs.add(re.sub(r"\$\w+", "2", body.strip()))
    for i, desc in enumerate(sorted(descs)):
        write(parse_dir, f"desc-{i:04d}", desc)

    plan_dir.mkdir(parents=True, exist_ok=True)
    subprocess.run([str(build / "bin" / "plan-json-seeds"), str(plan_dir)],
                   check=True)
    for i, path in enumerate(sorted((build / "test").glob("**/*.json"))):
        shutil.copy(path, plan_dir / f"lit-{i:04d}.json")

    for path in sorted((ROOT / "fuzz" / "seeds" / "safetensors-fuzzer")
                       .glob("*")):
        (corpus / "safetensors-fuzzer").mkdir(parents=True, exist_ok=True)
        shutil.copy(path, corpus / "safetensors-fuzzer" / path.name)

    for target in ("tdl-parse-fuzzer", "tdl-library-fuzzer",
                   "plan-json-fuzzer", "safetensors-fuzzer"):
        for path in sorted((ROOT / "fuzz" / "regressions" / target).glob("*")):
            (corpus / target).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, corpus / target / f"regression-{path.name}")
    for target in sorted(corpus.iterdir()):
        print(f"{target.name}: {len(list(target.iterdir()))} seeds")
    return 0


if __name__ == "__main__":
    sys.exit(main())
