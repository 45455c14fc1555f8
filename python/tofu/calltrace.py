"""Compares two call traces of the GPU runtime (TOFU_GPU_TRACE=FILE).

    python3 -m tofu.calltrace RUN1.trace RUN2.trace

Each line of a trace is one cuBLAS or cuDNN call of one worker: its number,
its problem, the checksum of each operand before the call and of the
written operand after it (include/tofu/Runtime/CallTrace.h). Two runs of
the same program should write the same lines. The first line where they do
not tells where the runs part:

- an operand differs before the call: what ran before the call (generated
  kernels, copies, or an earlier call of another worker) differs;
- the operands are the same and the result differs: the call itself does
  not repeat.

With several in-process workers the first difference in the order of the
first trace's lines is reported. Prints one line and exits 0 when the
traces are equal, 1 when they differ, 2 when a trace cannot be read or the
arguments are not two files.
"""

import re
import sys

LINE = re.compile(r"^call (\d+) worker (\d+) \| (.*) \|(.*)->(.*)$")


def parse_operands(text):
    """'a 00ff.. b 11ee..' as a list of (role, checksum)."""
    words = text.split()
    return [(words[i], words[i + 1]) for i in range(0, len(words) - 1, 2)]


def read(path):
    """The calls of each worker, in order: {worker: [call, ...]}."""
    calls = {}
    with open(path) as f:
        for number, line in enumerate(f, 1):
            m = LINE.match(line.rstrip("\n"))
            if not m:
                raise ValueError("%s:%d: not a trace line" % (path, number))
            calls.setdefault(int(m.group(2)), []).append({
                "line": number,
                "index": int(m.group(1)),
                "what": m.group(3),
                "before": parse_operands(m.group(4)),
                "after": parse_operands(m.group(5)),
            })
    return calls


def compare_worker(worker, first, second):
    """None when the calls are equal, else (line, sentence): where in the
    first trace the runs part, and what the sentence says of it."""
    for a, b in zip(first, second):
        where = "worker %d, call %d (%s)" % (worker, a["index"], a["what"])
        if a["what"] != b["what"]:
            return a["line"], ("%s: the other run made another call here "
                               "(%s)" % (where, b["what"]))
        before = [role for (role, x), (_, y) in zip(a["before"], b["before"])
                  if x != y]
        if before:
            return a["line"], (
                "%s: %s differ%s before the call: the work before it "
                "differs (generated kernels, copies or earlier calls)" %
                (where, ", ".join(before), "s" if len(before) == 1 else ""))
        after = [role for (role, x), (_, y) in zip(a["after"], b["after"])
                 if x != y]
        if after:
            return a["line"], ("%s: the same operands, a different %s: the "
                               "call does not repeat" %
                               (where, ", ".join(after)))
    if len(first) != len(second):
        line = first[len(second)]["line"] if len(first) > len(second) else (
            first[-1]["line"] + 1 if first else 1)
        return line, ("worker %d: one run made %d calls, the other %d" %
                      (worker, len(first), len(second)))
    return None


def compare(first, second):
    """(equal, message) for two parsed traces."""
    if sorted(first) != sorted(second):
        return False, "the runs' workers differ: %s and %s" % (
            sorted(first), sorted(second))
    # The workers' calls interleave in a trace: the difference that comes
    # first in the first trace is the one to look at.
    parts = [part for part in (compare_worker(w, first[w], second[w])
                               for w in sorted(first)) if part]
    if parts:
        line, message = min(parts)
        if len(parts) > 1:
            message += " (and %d other workers part later)" % (len(parts) - 1)
        return False, message
    total = sum(len(calls) for calls in first.values())
    return True, "the traces are equal (%d call%s)" % (
        total, "" if total == 1 else "s")


def main(argv):
    if len(argv) != 3:
        print("usage: python3 -m tofu.calltrace RUN1.trace RUN2.trace",
              file=sys.stderr)
        return 2
    try:
        first, second = read(argv[1]), read(argv[2])
    except (OSError, ValueError) as e:
        print("calltrace: %s" % e, file=sys.stderr)
        return 2
    equal, message = compare(first, second)
    print("calltrace: " + message)
    return 0 if equal else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
