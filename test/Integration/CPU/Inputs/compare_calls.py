"""Prints how many OpenBLAS calls fewer the second tofu-cpu-report counts
than the first, and whether their library FLOPs agree."""
import re
import sys

calls, flops = zip(*(map(int, re.search(r"openblas: (\d+) calls, (\d+) FLOP",
                                        open(p).read()).groups())
                     for p in sys.argv[1:3]))
print(f"{calls[0] - calls[1]} calls fewer, "
      f"{'the same' if flops[0] == flops[1] else 'different'} FLOPs")
