#!/usr/bin/env bash
# Sets up and builds Tofu-MLIR, then runs every test: the lit suite
# (check-tofu), the gtest unit tests (ctest), and the install check
# (scripts/test-install.sh: cmake --install, then examples/standalone-opt
# built against the installed tree with find_package(Tofu)).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
status=0
echo "== lit: check-tofu"
/usr/lib/llvm-22/bin/lit -sv build/test || status=1
echo "== ctest: unit tests"
(cd build && ctest --output-on-failure) || status=1
echo "== install: examples/standalone-opt against the installed tree"
./scripts/test-install.sh build || status=1
exit $status
