"""Runs the main function of a tofu module once for each argument list
given (a shell-quoted string each), all in this one process, and prints
for each the arguments, what it wrote to stderr, the first line it wrote
to stdout and its exit status, as `python3 -m MODULE ARGS` would end. An
exception prints its traceback and `exit exception`, and the next list
runs.

    python3 run-main.py MODULE 'ARGS' 'ARGS' ...
"""

import contextlib
import importlib
import io
import shlex
import sys
import traceback

name = sys.argv[1]
module = importlib.import_module(name)
for case in sys.argv[2:]:
    argv = shlex.split(case)
    # argparse names a parser without a prog after sys.argv[0].
    sys.argv = [f"python3 -m {name}"] + argv
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            status = module.main(argv)
        except SystemExit as e:
            # What Python does with a SystemExit that reaches the top.
            if isinstance(e.code, str):
                print(e.code, file=sys.stderr)
                status = 1
            else:
                status = e.code or 0
        except Exception:
            traceback.print_exc()
            status = "exception"
    print(f"$ {case}")
    sys.stdout.write(err.getvalue())
    if out.getvalue():
        print("stdout: " + out.getvalue().splitlines()[0])
    print(f"exit {status}")
