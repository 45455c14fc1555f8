// RUN: not tofu-opt %s --tofu-gpu-parallel-loops="block-size=2048" 2>&1 | FileCheck %s

// Tests that a block size beyond the GPU's 1024 threads is rejected.
// CHECK: tofu-gpu-parallel-loops: block-size must be in [1, 1024]
module {
}
