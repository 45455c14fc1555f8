"""The Tofu-MLIR Python tools behind one command.

    python3 -m tofu COMMAND [options]      (build/bin/tofu COMMAND [options])

`COMMAND --help` lists a command's options.
"""

import importlib
import os
import sys

from tofu import cli

# name: (module, what it does)
COMMANDS = {
    "models": ("tofu.models",
               "write a zoo model as linalg-on-tensors MLIR ('models list')"),
    "plan": ("tofu.plan",
             "check, summarise or compare tofu-search plans (JSON)"),
    "exports": ("tofu.exports",
                "write a forward export in torch-mlir's form (MLP, BERT)"),
    "difftest": ("tofu.difftest",
                 "train a partitioned step under MPI and compare it with "
                 "the unpartitioned one"),
}


def usage(prog, out):
    out.write(f"usage: {prog} COMMAND [options]\n\n"
              "The Tofu-MLIR Python tools. Commands:\n")
    for name, (_, what) in COMMANDS.items():
        out.write(f"  {name:<9} {what}\n")
    out.write(f"\n'{prog} COMMAND --help' lists a command's options.\n")


def main(argv=None, prog="python3 -m tofu"):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        usage(prog, sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    command, rest = argv[0], argv[1:]
    if command not in COMMANDS:
        sys.stderr.write(f"{prog}: error: unknown command '{command}'; "
                         f"one of: {', '.join(COMMANDS)}\n")
        return 2
    module = importlib.import_module(COMMANDS[command][0])
    if command == "models":
        return module.main(rest, prog=f"{prog} models")
    # The other commands' parsers name themselves after sys.argv[0].
    sys.argv = [f"{prog} {command}"] + rest
    return module.main(rest)


if __name__ == "__main__":
    # build/bin/tofu names itself with TOFU_PROG.
    cli.run_main(lambda: main(prog=os.environ.get("TOFU_PROG",
                                                  "python3 -m tofu")))
