#!/usr/bin/env bash
# Sets up and builds Tofu-MLIR, then runs every test: the lit suite
# (check-tofu) and the gtest unit tests (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
status=0
echo "== lit: check-tofu"
/usr/lib/llvm-22/bin/lit -sv build/test || status=1
echo "== ctest: unit tests"
(cd build && ctest --output-on-failure) || status=1
exit $status
