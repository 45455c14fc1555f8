#!/bin/sh
# On a machine with an NVIDIA GPU and PyTorch: build, run the GPU
# correctness tests (k = 1 training steps against the CPU reference, rtol
# 1e-4; lit feature `cuda`) and the PyTorch comparison
# (benchmarks/gpu_step.py). Stops with a message where there is no GPU.
set -eu
cd "$(dirname "$0")/.."

if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "gpu-check: no NVIDIA GPU (nvidia-smi -L fails); nothing to run" >&2
  exit 2
fi
nvidia-smi -L

export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit -DLLVM_USE_LINKER=lld \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
ninja -C build

echo "== (a) correctness: GPU training steps against the CPU reference"
/usr/lib/llvm-22/bin/lit -v build/test/Integration/GPU
if /usr/lib/llvm-22/bin/lit build/test/Integration/GPU 2>&1 | grep -q UNSUPPORTED; then
  echo "gpu-check: the cuda lit feature is off (is build/lib/libtofu_runtime_cuda.so built?)" >&2
  exit 1
fi

echo "== (b) speed: PyTorch eager against Tofu"
python3 benchmarks/gpu_step.py --json build/gpu_step.json
