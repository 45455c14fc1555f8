#!/usr/bin/env bash
# Sets up and builds Tofu-MLIR, then runs the demo:
#  1. the partition-n-reduce strategies of the bundled CNN for 2 workers;
#  2. the whole flow on a zoo Wide ResNet (WResNet-50-2, 32x32 images):
#     training step (autodiff + Adam), TDL descriptions, and the search for
#     the partition with the least communication over 8 devices in a 2x4
#     hierarchy. The plan goes to build/demo/tofu-plan.{json,svg} and is
#     re-checked by the independent checker.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh > /dev/null
model=${1:-models/cnn.mlir}
echo "== Strategies of $model for 2 workers"
./build/bin/tofu-opt --tdl-attach --test-tdl-strategies="details=false" \
  "$model" -o /dev/null
mkdir -p build/demo
echo
echo "== WResNet-50-2 training step partitioned over 2x4 devices"
PYTHONPATH=python python3 -m tofu.models WResNet-50-2 --batch 8 --image 32 |
  ./build/bin/tofu-opt --tofu-autodiff --tofu-optimizer=kind=adam --tdl-attach \
    --tofu-search="devices=2x4 bandwidth=12.5,300 plan-out=build/demo/tofu-plan.json svg=build/demo/tofu-plan.svg" \
    -o build/demo/step.mlir 2>&1 | grep -v '^ *^\|^<stdin>\|func.func'
PYTHONPATH=python python3 -m tofu.plan check build/demo/tofu-plan.json
echo "plan: build/demo/tofu-plan.json, picture: build/demo/tofu-plan.svg, IR: build/demo/step.mlir"
