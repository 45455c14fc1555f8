// RUN: tofu-opt %s --tofu-gpu-warp-reductions="min-length=0" -verify-diagnostics

// Tests that a minimum row length below 1 is rejected.
// expected-error @+1 {{tofu-gpu-warp-reductions: min-length must be at least 1}}
module {
}
