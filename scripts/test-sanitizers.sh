#!/usr/bin/env bash
# The sanitizer gate of CI. Builds Tofu-MLIR in build-asan/ with assertions,
# AddressSanitizer, UndefinedBehaviorSanitizer and the libFuzzer targets,
# then runs, in that build:
#   1. the whole lit suite (check-tofu) and the gtest unit tests (ctest);
#   2. each libFuzzer target for FUZZ_SECONDS (default 60) from a corpus
#      seeded by the test inputs;
#   3. the mutated-IR fuzzer (scripts/fuzz_ir.py) on FUZZ_IR_MUTANTS
#      (default 1000) mutants with a fixed seed.
# Expects scripts/setup.sh to have run (packages installed).
set -euo pipefail
cd "$(dirname "$0")/.."

build=build-asan
fuzz_seconds=${FUZZ_SECONDS:-60}
fuzz_ir_mutants=${FUZZ_IR_MUTANTS:-1000}
jobs=${JOBS:-$(nproc)}

# -O1, as LLVM's own sanitizer builds use: -O3 with ASan and UBSan costs
# several times the compile time for little speed.
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S . -B "$build" \
    -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1 \
    -DLLVM_ENABLE_ASSERTIONS=ON \
    -DTOFU_ENABLE_SANITIZERS=ON \
    -DTOFU_ENABLE_FUZZERS=ON \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DLLVM_USE_LINKER=lld \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22
fi
ninja -C "$build" -j "$jobs"

# Only the project's code is instrumented; libMLIR.so, libLLVM.so and
# libgtest are not. Two checks would report false errors across that
# boundary, and only those two are turned off:
#  - detect_container_overflow=0: the uninstrumented libraries' inline
#    std::vector code does not keep the container annotations that
#    instrumented code checks;
#  - allow_user_poisoning=0: LLVM's allocators (BumpPtrAllocator) poison and
#    unpoison memory by hand only where they are compiled with ASan, so memory
#    that our inlined copy poisons is later reused by libMLIR.so's copy
#    without unpoisoning (use-after-poison in MLIR's printer).
# Every other check, leaks included, stays on, and any report fails the run.
# test/lit.cfg.py adds what the MPI tests need to run instrumented.
# docs/testing.md describes the whole gate.
export ASAN_OPTIONS=detect_container_overflow=0:allow_user_poisoning=0:strict_string_checks=1:check_initialization_order=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-22/bin/llvm-symbolizer

status=0
echo "== lit (asan+ubsan): check-tofu"
/usr/lib/llvm-22/bin/lit -sv "$build/test" || status=1
echo "== ctest (asan+ubsan): unit tests"
(cd "$build" && ctest --output-on-failure -j "$jobs") || status=1

echo "== libFuzzer targets, ${fuzz_seconds} s each"
corpus="$build/fuzz-corpus"
artifacts="$build/fuzz-artifacts"
rm -rf "$corpus" "$artifacts"
mkdir -p "$artifacts"
python3 fuzz/collect-seeds.py --build "$build" "$corpus"
for fuzzer in tdl-parse-fuzzer tdl-library-fuzzer plan-json-fuzzer \
    safetensors-fuzzer; do
  echo "-- $fuzzer"
  if "$build/bin/$fuzzer" "$corpus/$fuzzer" \
       -max_total_time="$fuzz_seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=8192 -artifact_prefix="$artifacts/$fuzzer-" \
       -print_final_stats=1 > "$artifacts/$fuzzer.log" 2>&1; then
    grep -E "^stat::number_of_executed_units|^Done" "$artifacts/$fuzzer.log" || true
  else
    tail -n 60 "$artifacts/$fuzzer.log"
    echo "$fuzzer: FAILED (inputs in $artifacts)"
    status=1
  fi
done

echo "== mutated IR fuzzer (asan+ubsan tofu-opt)"
python3 scripts/fuzz_ir.py --tofu-opt "$build/bin/tofu-opt" \
  --mutants "$fuzz_ir_mutants" --seed 1 --jobs "$jobs" \
  --crash-dir "$build/fuzz-ir-crashes" || status=1

exit $status
