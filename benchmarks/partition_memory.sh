#!/usr/bin/env bash
# Peak live bytes per rank of a partitioned training step (tofu-run, no
# reference) at 4 and 8 ranks, next to the unpartitioned step on one rank.
# The runtime counts allocations through finalize-memref-to-llvm's generic
# allocation functions; its own communication buffers are not included.
#   benchmarks/partition_memory.sh [build]
set -euo pipefail
build=${1:-build}
export PYTHONPATH=python
models=("wresnet --depth 10 --width 1 --batch 8 --image 8 --classes 4 --stages 1,1"
        "rnn --layers 2 --steps 4 --hidden 16 --batch 8 --embed 16")
echo "| model | ranks | peak live B/rank | single-rank peak / ranks | ratio |"
echo "|---|---|---|---|---|"
for m in "${models[@]}"; do
  python3 -m tofu.models $m | $build/bin/tofu-opt --tofu-autodiff \
    --tofu-optimizer=kind=sgd -o /tmp/tofu-mem-step.mlir
  single=$(mpiexec -n 1 $build/bin/tofu-run /tmp/tofu-mem-step.mlir --steps 2 |
           sed -n 's/peak live bytes per rank: //p')
  for k in 4 8; do
    $build/bin/tofu-opt /tmp/tofu-mem-step.mlir --tdl-attach \
      --tofu-search="devices=$k report=none plan-out=none svg=none" \
      --tofu-partition -o /tmp/tofu-mem-spmd.mlir 2>/dev/null
    peak=$(mpiexec -n $k $build/bin/tofu-run /tmp/tofu-mem-spmd.mlir --steps 2 |
           sed -n 's/peak live bytes per rank: //p')
    python3 -c "print('| ${m%% *} | $k | $peak | %d | %.2f |' % ($single / $k, $peak / ($single / $k)))"
  done
done
