// RUN: tofu-opt %s --tdl-attach="library=%S/Inputs/malformed.tdl" -verify-diagnostics
// RUN: not tofu-opt %s --tdl-attach="library=%S/Inputs/no-such-file.tdl" 2>&1 | FileCheck %s --check-prefix=MISSING

// Tests that a malformed .tdl library is reported with its line and column,
// and that a missing library is reported.

// expected-error-re@+2 {{malformed TDL library '{{.*}}malformed.tdl': 3:13: invalid description of 'my.bad': non-affine access 'i * i'{{.*}}}}
// MISSING: error: cannot read TDL library '{{.*}}no-such-file.tdl'
module {
}
