#!/usr/bin/env bash
# Peak live bytes per rank of a partitioned training step (tofu-run, no
# reference) at 4 and 8 ranks, next to the unpartitioned step on one rank,
# the plan's own per-device estimate, and the target of
# 1.2 x (single-rank peak / ranks) + the plan's communication buffers.
# The runtime counts allocations through finalize-memref-to-llvm's generic
# allocation functions; its own communication buffers are not included.
#   benchmarks/partition_memory.sh [build]
set -euo pipefail
build=${1:-build}
export PYTHONPATH=python
models=("wresnet --depth 10 --width 1 --batch 8 --image 8 --classes 4 --stages 1,1"
        "rnn --layers 2 --steps 4 --hidden 16 --batch 8 --embed 16")
# Bytes of a report figure such as "2.02 MB" (decimal units).
bytes() {
  python3 -c "import sys; v, u = sys.argv[1], sys.argv[2]; \
print(int(float(v) * {'B': 1, 'KB': 1e3, 'MB': 1e6, 'GB': 1e9}[u]))" "$@"
}
echo "| model | ranks | peak live B/rank | single-rank peak / ranks | ratio | plan estimate B/rank | plan comm. buffers B | target B/rank | peak/target |"
echo "|---|---|---|---|---|---|---|---|---|"
for m in "${models[@]}"; do
  python3 -m tofu.models $m | $build/bin/tofu-opt --tofu-autodiff \
    --tofu-optimizer=kind=sgd -o /tmp/tofu-mem-step.mlir
  single=$(mpiexec -n 1 $build/bin/tofu-run /tmp/tofu-mem-step.mlir --steps 2 |
           sed -n 's/peak live bytes per rank: //p')
  for k in 4 8; do
    line=$($build/bin/tofu-opt /tmp/tofu-mem-step.mlir --tdl-attach \
      --tofu-search="devices=$k report=- plan-out=none svg=none" \
      --tofu-partition -o /tmp/tofu-mem-spmd.mlir 2>&1 |
      grep "memory per device")
    comm=$(echo "$line" | sed -E 's/.*communication buffers ([0-9.]+) ([KMG]?B).*/\1 \2/')
    total=$(echo "$line" | sed -E 's/.*total ([0-9.]+) ([KMG]?B).*/\1 \2/')
    peak=$(mpiexec -n $k $build/bin/tofu-run /tmp/tofu-mem-spmd.mlir --steps 2 |
           sed -n 's/peak live bytes per rank: //p')
    python3 -c "
single, k, peak = $single, $k, $peak
comm, total = $(bytes $comm), $(bytes $total)
target = 1.2 * single / k + comm
print('| ${m%% *} | %d | %d | %d | %.2f | %d | %d | %d | %.2f |' % (
    k, peak, single / k, peak / (single / k), total, comm, target,
    peak / target))"
  done
done
