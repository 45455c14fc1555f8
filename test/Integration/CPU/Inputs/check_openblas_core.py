"""Reads tofu-run --timing output with TOFU_CPU_PROFILE=1 and checks that
the OpenBLAS core the step ran with is the one tofu-run announced, when it
chose one (on a CPU that OpenBLAS does not know); prints the core."""
import re
import sys

text = sys.stdin.read()
ran = re.search(r"^cpu profile: OpenBLAS core (\S+)$", text, re.M)
if not ran:
    sys.exit("no 'cpu profile: OpenBLAS core' line")
chosen = re.search(r"OPENBLAS_CORETYPE=(\w+)", text)
if chosen and chosen.group(1) != ran.group(1):
    sys.exit(f"tofu-run chose {chosen.group(1)} but OpenBLAS ran "
             f"{ran.group(1)}")
if ran.group(1) == "Prescott" and not chosen:
    print("note: OpenBLAS runs its SSE3 kernels and tofu-run chose none")
print(f"openblas core: consistent ({ran.group(1)}"
      f"{', chosen by tofu-run' if chosen else ''})")
