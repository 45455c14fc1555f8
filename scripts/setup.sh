#!/usr/bin/env bash
# Installs the Debian packages Tofu-MLIR needs (only the missing ones), then
# configures and builds the project incrementally in build/.
#   scripts/setup.sh [--demo]
set -euo pipefail
cd "$(dirname "$0")/.."

# libclang-rt-22-dev holds the sanitizer and libFuzzer runtimes and llvm-22
# the symbolizer, for scripts/test-sanitizers.sh. OpenBLAS (the pthread
# build) runs the CPU runtime's matrix products and oneDNN its convolutions.
# PyTorch and NumPy are the oracle of the tests that need them (which are
# unsupported without); librsvg's rsvg-convert renders the plan pictures
# of the tests. --demo adds what scripts/demo.sh uses: the digits of
# scikit-learn and matplotlib for the loss curve.
packages=(cmake ninja-build clang-22 lld-22 llvm-22 llvm-22-dev llvm-22-tools
          libclang-rt-22-dev libmlir-22-dev mlir-22-tools libgtest-dev python3
          mpich libmpich-dev libopenblas-dev libopenblas0-pthread libdnnl-dev
          python3-torch python3-numpy librsvg2-bin)
if [ "${1:-}" = "--demo" ]; then
  packages+=(python3-sklearn python3-matplotlib)
fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "Installing: ${missing[*]}"
  sudo=""
  [ "$(id -u)" -ne 0 ] && sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
fi

if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build \
    -DCMAKE_BUILD_TYPE=Release \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
ninja -C build
