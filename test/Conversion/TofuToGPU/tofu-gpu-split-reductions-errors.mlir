// RUN: tofu-opt %s --tofu-gpu-split-reductions="ratio=1" -verify-diagnostics

// Tests that a split ratio below 2 is rejected.
// expected-error @+1 {{tofu-gpu-split-reductions: min-length and ratio must be at least 2}}
module {
}
