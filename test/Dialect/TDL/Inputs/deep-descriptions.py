"""Writes test inputs with very deeply nested TDL descriptions.

`mlir` prints a -split-input-file module whose #tdl.desc attributes nest far
beyond the parser's limit, each with its expected diagnostic; `library`
prints a .tdl library with one such entry. The inputs are generated because
they are hundreds of kilobytes long.
"""

import sys

LIMIT = "nesting deeper than 1024 levels"


def case(comment, desc, error=LIMIT):
    return (f"// {comment}\n\n"
            f"// expected-error@+1 {{{{invalid TDL description: {error}}}}}\n"
            f"func.func @f() attributes {{d = #tdl.desc<{desc}>}} {{\n"
            f"  return\n}}\n")


def mlir():
    cases = [
        case("Tests that 10,000 nested parentheses are rejected.",
             "(i) = " + "(" * 10000 + "a[i]" + ")" * 10000),
        case("Tests that 10,000 nested calls are rejected.",
             "(i) = " + "exp(" * 10000 + "a[i]" + ")" * 10000),
        case("Tests that 10,000 nested negations are rejected.",
             "(i) = " + "-" * 10000 + "a[i]"),
        case("Tests that 10,000 nested parentheses in an index are rejected.",
             "(i) = a[" + "(" * 10000 + "i" + ")" * 10000 + "]"),
        case("Tests that a 30,000-term index chain is rejected.",
             "(i) = a[i" + " + 0" * 30000 + "]"),
        case("Tests that a 30,000-term value chain is rejected.",
             "(i) = a[i]" + " + 0.0" * 30000),
        case("Tests that 10,000 nested reductions are rejected.",
             "(i) = " + "sum(k) " * 10000 + "a[i]"),
    ]
    # A chain just within the limit is accepted and printed back.
    ok = ("// Tests that nesting up to the limit is accepted.\n\n"
          "// CHECK-LABEL: func.func @within_limit\n"
          "// CHECK-SAME: #tdl.desc<(a) -> (i) = a[i] + a[i]\n"
          "func.func @within_limit() attributes {d = #tdl.desc<(i) = a[i]"
          + " + a[i]" * 1000 + ">} {\n  return\n}\n")
    print("\n// -----\n\n".join(cases + [ok]))


def library():
    print("# A library entry nested beyond the limit.\n"
          "op my.deep {\n  (i) = " + "(" * 5000 + "a[i]" + ")" * 5000 +
          "\n}")


{"mlir": mlir, "library": library}[sys.argv[1]]()
