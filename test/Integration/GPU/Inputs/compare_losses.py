"""Compares the losses of two runs within a relative tolerance: the
`TRAIN loss=X` lines of --test-tofu-train-loop or the `step N: loss X`
lines of tofu-train-driver (tofu-run).

Usage: compare_losses.py REFERENCE OTHER [RTOL]. Exits 1, naming the step,
when a loss differs (a NaN differs from everything) or the runs have
different numbers of steps.
"""
import re
import sys


def losses(path):
    with open(path) as f:
        return [float(m.group(1) or m.group(2)) for m in
                re.finditer(r"TRAIN loss=(\S+)|step \d+: loss (\S+)",
                            f.read())]


def main():
    ref, other = losses(sys.argv[1]), losses(sys.argv[2])
    rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-4
    if not ref or len(ref) != len(other):
        print("compare_losses: %d reference steps, %d steps" %
              (len(ref), len(other)))
        return 1
    for step, (a, b) in enumerate(zip(ref, other)):
        # Written so that a NaN on either side is a difference.
        if not abs(a - b) <= rtol * max(abs(a), abs(b), 1e-30):
            print("compare_losses: step %d: %r vs %r (rtol %g)" %
                  (step, a, b, rtol))
            return 1
    print("compare_losses: %d steps agree within rtol %g" % (len(ref), rtol))
    return 0


if __name__ == "__main__":
    sys.exit(main())
