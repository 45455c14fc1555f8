#!/usr/bin/env bash
# Checks that compilers can embed Tofu-MLIR: installs the build with
# `cmake --install` into a fresh prefix, configures examples/standalone-opt
# against it with find_package(Tofu), builds it, and runs it from forward
# model to training-step plan on a bundled model, and trains a partitioned
# step with the installed tofu-run when MPI is there; checks that the CUDA
# runtime is installed next to the CPU runtime when it was built (without
# loading it). Prints one line,
# `test-install: PASS ...` or `test-install: FAIL ...` (then the log's tail),
# and exits with 1 on failure.
#
#   scripts/test-install.sh [BUILD_DIR]     # default: build (already built)
#
# The prefix and the example's build live in BUILD_DIR/test-install and are
# wiped first, so that nothing from an earlier run is used; their paths stay
# the same between runs, so the compiler cache (ccache, when the build uses
# it) makes reruns fast.
set -uo pipefail
cd "$(dirname "$0")/.."
src=$PWD
build=$(cd "${1:-build}" && pwd) || {
  echo "test-install: FAIL: no build directory ${1:-build}"
  exit 1
}
work=$build/test-install
prefix=$work/prefix
example=$work/standalone-opt
log=$work/test-install.log
model=models/torch-mlir-style/mlp-loss.mlir

rm -rf "$work"
mkdir -p "$work"
: > "$log"

# The end of the log, then the verdict as the last line.
fail() {
  tail -n 30 "$log"
  echo "test-install: FAIL: $1 (log: $log)"
  exit 1
}

# The compiler, launcher and linker of the main build.
cache_value() {
  sed -n "s/^$1:[A-Z]*=//p" "$build/CMakeCache.txt"
}
cxx=$(cache_value CMAKE_CXX_COMPILER)
launcher=$(cache_value CMAKE_CXX_COMPILER_LAUNCHER)
linker=$(cache_value LLVM_USE_LINKER)
build_type=$(cache_value CMAKE_BUILD_TYPE)
[ -n "$cxx" ] || fail "$build/CMakeCache.txt has no CMAKE_CXX_COMPILER"
options=(-DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_BUILD_TYPE="${build_type:-Release}")
[ -n "$launcher" ] && options+=(-DCMAKE_CXX_COMPILER_LAUNCHER="$launcher")
[ -n "$linker" ] && options+=(-DCMAKE_EXE_LINKER_FLAGS=-fuse-ld="$linker")

echo "== cmake --install $build --prefix $prefix" >> "$log"
cmake --install "$build" --prefix "$prefix" >> "$log" 2>&1 ||
  fail "cmake --install"

# What an embedding compiler needs: the CMake package, the registration
# entry points, generated and TableGen files, and the libraries.
for f in lib/cmake/tofu/TofuConfig.cmake lib/cmake/tofu/TofuConfigVersion.cmake \
    lib/cmake/tofu/TofuTargets.cmake include/tofu/InitAllDialects.h \
    include/tofu/InitAllPasses.h include/tofu/Transforms/Passes.h.inc \
    include/tofu/Dialect/TDL/IR/TDLBase.td \
    include/tofu/Dialect/TDL/Interfaces/TDLOpInterface.h.inc \
    include/tofu/Dialect/Tofu/IR/TofuOps.td \
    lib/libTofuRegisterAll.a lib/libTofuTDL.a lib/libTofuPartition.a \
    lib/libTofuPlanIO.a lib/libTofuTransforms.a \
    bin/tofu-opt bin/tofu share/tofu/python/tofu/models.py; do
  [ -f "$prefix/$f" ] || fail "not installed: $f"
done

echo "== configure examples/standalone-opt against $prefix" >> "$log"
cmake -G Ninja -S "$src/examples/standalone-opt" -B "$example" \
  -DCMAKE_PREFIX_PATH="$prefix" "${options[@]}" >> "$log" 2>&1 ||
  fail "configuring examples/standalone-opt with find_package(Tofu)"
grep -q "Using TofuConfig.cmake in: $prefix/lib/cmake/tofu" "$log" ||
  fail "find_package(Tofu) did not find the installed package"

echo "== build examples/standalone-opt" >> "$log"
ninja -C "$example" -j "${JOBS:-2}" >> "$log" 2>&1 ||
  fail "building examples/standalone-opt"

# From the forward model to a training-step plan over 4 devices, with the
# passes linked into the example's own driver.
echo "== standalone-opt on $model" >> "$log"
"$example/standalone-opt" "$model" --tofu-autodiff=weights=1,2,3,4 \
  --tofu-optimizer=kind=adam --tdl-attach \
  --tofu-search="devices=4 plan-out=$work/plan.json svg=none" \
  -o "$work/step.mlir" >> "$log" 2>&1 ||
  fail "standalone-opt on $model"
filecheck=/usr/lib/llvm-22/bin/FileCheck
command -v FileCheck > /dev/null && filecheck=FileCheck
"$filecheck" --input-file "$work/step.mlir" --check-prefix=STEP \
  "$src/examples/standalone-opt/mlp-plan.check" >> "$log" 2>&1 ||
  fail "the training step standalone-opt wrote"
"$filecheck" --input-file "$work/plan.json" --check-prefix=PLAN \
  "$src/examples/standalone-opt/mlp-plan.check" >> "$log" 2>&1 ||
  fail "the plan standalone-opt wrote"
# The installed launcher, with the installed Python package.
env -u PYTHONPATH "$prefix/bin/tofu" plan check "$work/plan.json" >> "$log" 2>&1 ||
  fail "the installed tofu plan check on the plan"

# The CUDA runtime (built when the CUDA toolkit and cuDNN were found) next
# to the CPU runtime, where the installed tofu-run --gpu looks for it; it
# is not loaded here (that needs the NVIDIA driver), but every library it
# needs other than the driver's libcuda.so.1 must resolve.
cuda_runtime=
if [ -f "$build/lib/libtofu_runtime_cuda.so" ]; then
  installed=$prefix/lib/libtofu_runtime_cuda.so
  [ -f "$installed" ] || fail "not installed: lib/libtofu_runtime_cuda.so"
  [ -f "$prefix/lib/libtofu_runtime_cpu.so" ] ||
    [ ! -f "$build/lib/libtofu_runtime_cpu.so" ] ||
    fail "not installed: lib/libtofu_runtime_cpu.so"
  echo "== ldd $installed" >> "$log"
  ldd "$installed" >> "$log" 2>&1
  missing=$(ldd "$installed" 2> /dev/null | grep 'not found' |
    grep -v 'libcuda\.so\.1' | awk '{print $1}' | tr '\n' ' ')
  [ -z "$missing" ] ||
    fail "the installed CUDA runtime cannot find: $missing"
  cuda_runtime=", installed the CUDA runtime"
fi

# The installed in-process runner, with the installed runtime (built only
# with MPI): a step partitioned for 2 ranks by the installed tofu-opt
# trains and matches the unpartitioned one.
runner=
if [ -x "$build/bin/tofu-run" ]; then
  [ -x "$prefix/bin/tofu-run" ] || fail "not installed: bin/tofu-run"
  echo "== installed tofu-run under mpiexec -n 2" >> "$log"
  "$prefix/bin/tofu-opt" "$model" --tofu-autodiff=weights=1,2,3,4 \
    --tofu-optimizer --tdl-attach \
    --tofu-search="devices=2 plan-out=none svg=none report=none" \
    --tofu-partition -o "$work/spmd.mlir" >> "$log" 2>&1 ||
    fail "the installed tofu-opt partitioning $model"
  mpiexec -n 2 "$prefix/bin/tofu-run" "$work/spmd.mlir" --steps 2 \
    --reference > "$work/run.out" 2>> "$log" ||
    fail "the installed tofu-run on the partitioned step"
  cat "$work/run.out" >> "$log"
  diff=$(sed -n 's/^max relative difference: //p' "$work/run.out")
  python3 -c "import sys; sys.exit(not float('$diff') <= 1e-5)" 2> /dev/null ||
    fail "the installed tofu-run: max relative difference '$diff'"
  runner=", trained it on 2 ranks with the installed tofu-run"
fi

libs=$(ls "$prefix"/lib/*.a "$prefix"/lib/*.so 2> /dev/null | wc -l)
echo "test-install: PASS: installed $libs libraries, built examples/standalone-opt with find_package(Tofu), planned $model on 4 devices$runner$cuda_runtime"
