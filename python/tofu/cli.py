"""What the command-line tools share: how they exit, and the checks of the
files and programs their options name."""

import os
import shutil
import sys


def run_main(main):
    """Exits with the status of `main()`. A reader that stops early
    (`| head -1`) ends the command quietly, with status 1."""
    try:
        try:
            status = main()
        finally:
            # Flush here, where a closed pipe is still caught, also when
            # main exits through SystemExit (argparse's --help).
            sys.stdout.flush()
    except BrokenPipeError:
        # Python flushes stdout once more when it exits: send what is left
        # to /dev/null so that this flush does not fail as well.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
    sys.exit(status)


def output_problem(path):
    """Why `path` cannot be written as a file, or None."""
    if os.path.isdir(path):
        return f"cannot write {path}: is a directory"
    if not os.path.isdir(os.path.dirname(path) or "."):
        return f"cannot write {path}: no such directory"
    return None


def tool_problem(option, path):
    """Why the program that `option` names cannot be run, or None. A name
    without a slash is looked up on PATH."""
    if os.sep not in path:
        if shutil.which(path) is None:
            return f"{option}: no '{path}' on PATH; give its path"
        return None
    if not os.path.isfile(path):
        return f"{option}: no such file {path}"
    if not os.access(path, os.X_OK):
        return f"{option}: {path} is not executable"
    return None
