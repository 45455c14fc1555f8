#!/usr/bin/env bash
# Sets up and builds Tofu-MLIR (with the demo's Debian packages: PyTorch,
# scikit-learn, matplotlib), then runs the demo:
#  1. real training: an MLP on scikit-learn's handwritten digits, its step
#     searched and partitioned for 4 devices, trained on 4 MPI ranks from a
#     safetensors file, its checkpoint loaded into the PyTorch twin for the
#     test accuracy, its loss curve drawn (python/tofu/digits.py);
#  2. the search on a zoo Wide ResNet (WResNet-50-2, 32x32 images): training
#     step (autodiff + Adam), TDL descriptions, and the partition with the
#     least communication over 8 devices in a 2x4 hierarchy, re-checked by
#     the independent checker.
# --verbose adds the strategies of the bundled CNN, the search's whole
# report, and a tiny Wide ResNet trained on 4 ranks against the
# unpartitioned step.
set -euo pipefail
cd "$(dirname "$0")/.."
verbose=0
[ "${1:-}" = "--verbose" ] && verbose=1
./scripts/setup.sh --demo > /dev/null
# Debian's Python, which has the packages above.
py=/usr/bin/python3
mkdir -p build/demo
echo "== Handwritten digits: an MLP trained on 4 MPI ranks"
PYTHONPATH=python $py -m tofu.digits --build build --out build/demo
echo
echo "== WResNet-50-2 training step partitioned over 2x4 devices"
report=build/demo/wresnet-search.txt
PYTHONPATH=python $py -m tofu.models WResNet-50-2 --batch 8 --image 32 |
  ./build/bin/tofu-opt --tofu-autodiff --tofu-optimizer=kind=adam --tdl-attach \
    --tofu-search="devices=2x4 bandwidth=12.5,300 plan-out=build/demo/tofu-plan.json svg=build/demo/tofu-plan.svg" \
    -o build/demo/step.mlir 2> "$report"
if [ $verbose -eq 1 ]; then
  grep -v '^ *^\|^<stdin>\|func.func' "$report"
else
  sed -n '/^tofu plan:/,/^memory per device/p' "$report"
fi
PYTHONPATH=python $py -m tofu.plan check build/demo/tofu-plan.json
echo "plan: build/demo/tofu-plan.json, picture: build/demo/tofu-plan.svg, IR: build/demo/step.mlir"
[ $verbose -eq 1 ] || exit 0

model=models/cnn.mlir
echo
echo "== Strategies of $model for 2 workers"
./build/bin/tofu-opt --tdl-attach --test-tdl-strategies="details=false" \
  "$model" -o /dev/null
echo
echo "== A tiny Wide ResNet trained on 4 MPI ranks (momentum), against the unpartitioned step"
llvm=/usr/lib/llvm-22
PYTHONPATH=python $py -m tofu.difftest --report --steps 5 --optimizer momentum \
  --model "wresnet --depth 10 --width 1 --batch 4 --image 8 --classes 4 --stages 1,1" \
  --devices 4 --tofu-opt build/bin/tofu-opt --mlir-runner $llvm/bin/mlir-runner \
  --runtime build/lib/libtofu_runtime_cpu.so \
  --runner-libs $llvm/lib/libmlir_runner_utils.so,$llvm/lib/libmlir_c_runner_utils.so
