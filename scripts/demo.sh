#!/usr/bin/env bash
# Sets up and builds Tofu-MLIR, then runs the demo:
#  1. the partition-n-reduce strategies of the bundled CNN for 2 workers;
#  2. the search on a zoo Wide ResNet (WResNet-50-2, 32x32 images): training
#     step (autodiff + Adam), TDL descriptions, and the partition with the
#     least communication over 8 devices in a 2x4 hierarchy, re-checked by
#     the independent checker;
#  3. partitioned training: a Wide ResNet training step searched for 4
#     devices, turned into an SPMD program (tofu-partition), and trained for
#     5 steps on 4 MPI ranks next to the unpartitioned reference, with the
#     measured communication beside the plan's estimate.
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
echo
echo "== A tiny Wide ResNet trained on 4 MPI ranks (momentum), against the unpartitioned step"
llvm=/usr/lib/llvm-22
PYTHONPATH=python python3 -m tofu.difftest --report --steps 5 --optimizer momentum \
  --model "wresnet --depth 10 --width 1 --batch 4 --image 8 --classes 4 --stages 1,1" \
  --devices 4 --tofu-opt build/bin/tofu-opt --mlir-runner $llvm/bin/mlir-runner \
  --runtime build/lib/libtofu_runtime_cpu.so \
  --runner-libs $llvm/lib/libmlir_runner_utils.so,$llvm/lib/libmlir_c_runner_utils.so
