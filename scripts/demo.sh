#!/usr/bin/env bash
# Sets up and builds Tofu-MLIR, then runs the demo: attach TDL descriptions
# to the bundled CNN and print every operation's partition-n-reduce
# strategies for a split into two workers.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh > /dev/null
model=${1:-models/cnn.mlir}
echo "== Strategies of $model for 2 workers"
./build/bin/tofu-opt --tdl-attach --test-tdl-strategies="details=false" \
  "$model" -o /dev/null
