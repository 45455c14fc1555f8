"""Runs commands whose standard output is a pipe that nobody reads any
more, as `COMMAND | head -1` leaves it once head has exited: the read end
is closed before each command starts, so that its first write fails, every
time. Prints each command, its exit status and what it wrote to stderr.

    python3 broken-pipe.py 'COMMAND' 'COMMAND' ...
"""

import os
import shlex
import subprocess
import sys

for command in sys.argv[1:]:
    read_end, write_end = os.pipe()
    os.close(read_end)
    done = subprocess.run(shlex.split(command), stdout=write_end,
                          stderr=subprocess.PIPE, text=True)
    os.close(write_end)
    print(f"$ {command}")
    sys.stdout.write(done.stderr)
    print(f"exit {done.returncode}")
