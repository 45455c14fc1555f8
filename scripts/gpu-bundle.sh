#!/bin/bash
# Builds the self-contained GPU bundle: training steps lowered and linked
# here, ahead of time, for a GPU machine that has the NVIDIA driver and
# PyTorch but no LLVM/MLIR, no MPI and no compilers (docs/gpu.md, *The GPU
# bundle*).
#
#   scripts/gpu-bundle.sh [--checks-only] OUTDIR
#
# writes OUTDIR/tofu-gpu-bundle/ and OUTDIR/bundle.tar.xz with
#   bin/check-{mlp,wrn,tf,lstm}   the four small models of
#                                 tofu-run-gpu.test, 3 steps;
#   bin/check-tf-warp             a Transformer whose rows are reduced by
#                                 warps (--gpu-pipeline=warp-reductions=true),
#                                 3 steps;
#   bin/check-tf-keep             check-tf with Adam's updates fused
#                                 (--gpu-pipeline=fuse-keep-results=true);
#   bin/check-tf-vector           check-tf-warp's Transformer with 16-byte
#                                 accesses (--gpu-pipeline=vector-loads=true);
#   bin/check-tf-all              the same with all three options;
#   bin/check-{mobilenet,resnext} small MobileNetV2 and ResNeXt exports
#                                 (depthwise and grouped convolutions),
#                                 3 steps;
#   bin/check-part-{mlp,wrn,tf}-wK
#                                 the MLP, the tiny Wide ResNet and the tiny
#                                 Transformer partitioned for K = 2, 4, 8
#                                 devices, run as K in-process workers on
#                                 one GPU (tofu-run --gpu --workers K);
#   ref/check-*.cpu               their CPU losses (tofu-run, same driver;
#                                 the partitioned ones on K CPU workers,
#                                 with their measured bytes);
#   bin/collectives               the GPU collectives on one rank (gtest);
#   bin/speed-{mlp,bert,wresnet}  benchmarks/gpu_step.py's three models,
#                                 5 warm-up + 20 timed steps (not with
#                                 --checks-only);
#   bin/speed-bert-keep           speed-bert with fuse-keep-results=true
#                                 (not with --checks-only);
#   bin/speed-bert-vector         speed-bert with vector-loads=true (not with
#                                 --checks-only);
#   bin/speed-bert-all            speed-bert with warp-reductions,
#                                 fuse-keep-results and vector-loads (not
#                                 with --checks-only);
#   bin/speed-part-mlp-w2         speed-mlp's step partitioned for 2
#                                 devices, as 2 workers on the one GPU
#                                 (not with --checks-only);
#   bin/bench-multifetch          the copy kernel's bandwidth against
#                                 cuMemcpyPeerAsync (not with --checks-only);
#   lib/                          the CPU and CUDA runtimes and the MPICH
#                                 libraries they load;
#   torch/gpu_step.py             the PyTorch side of the benchmark;
#   run.sh LOGDIR                 runs it all and prints the summary;
#   calltrace.py                  compares two runs' call traces
#                                 (TOFU_GPU_TRACE).
#
# Each step is compiled into an executable by `tofu-run --gpu
# --emit-executable` (linked by $TOFU_CC, default clang, against the two
# runtimes with the run path $ORIGIN/../lib), and lowered once more by
# `--gpu-lower-only` to count its launches and host waits. The time each
# stage takes is printed.
set -euo pipefail

checksOnly=0
if [ "${1:-}" = "--checks-only" ]; then
  checksOnly=1
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: scripts/gpu-bundle.sh [--checks-only] OUTDIR" >&2
  exit 2
fi
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${TOFU_BUILD_DIR:-$ROOT/build}
CLANG=${CLANG:-clang-22}
PYTHON=${PYTHON:-python3}
export CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}

mkdir -p "$1"
OUT=$(cd "$1" && pwd)
STAGE=$OUT/tofu-gpu-bundle
WORK=$OUT/work
for tool in "$BUILD/bin/tofu-run" "$BUILD/bin/tofu-opt" \
    "$BUILD/lib/libtofu_runtime_cpu.so" "$BUILD/lib/libtofu_runtime_cuda.so"; do
  if [ ! -e "$tool" ]; then
    echo "gpu-bundle: $tool is missing (build the project with the CUDA" \
      "runtime first)" >&2
    exit 1
  fi
done

# The GPU machine has no sanitizer runtimes for instrumented libraries.
if grep -q '^TOFU_ENABLE_SANITIZERS:BOOL=ON' "$BUILD/CMakeCache.txt" \
    2>/dev/null; then
  echo "gpu-bundle: $BUILD is a sanitizer build; bundle a Release build" >&2
  exit 1
fi

rm -rf "$STAGE" "$WORK"
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/ref" "$STAGE/torch" "$WORK"

# now: seconds since the epoch, for the stage times.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# zoo_step NAME OPTIMIZER ZOO-ARGUMENTS...: WORK/NAME.mlir, the training
# step of a zoo model.
zoo_step() {
  local name=$1 optimizer=$2
  shift 2
  PYTHONPATH="$ROOT/python" "$PYTHON" -m tofu.models "$@" \
    | "$BUILD/bin/tofu-opt" --tofu-autodiff --tofu-optimizer="$optimizer" \
        -o "$WORK/$name.mlir"
}

# export_step NAME EXPORT SIZES...: WORK/NAME.mlir, the training step (MSE
# loss, SGD) of a torch-mlir-style export, its sizes as `--size k=v`.
export_step() {
  local name=$1
  shift
  PYTHONPATH="$ROOT/python" "$PYTHON" -m tofu exports "$@" \
    -o "$WORK/$name.fwd.mlir"
  "$BUILD/bin/tofu-opt" "$WORK/$name.fwd.mlir" \
    --tofu-train-pipeline="loss=mse optimizer=sgd lr=0.01 devices=1 \
report=none plan-out=none svg=none" -o "$WORK/$name.mlir" 2> /dev/null
}

# model NAME STEPS WARMUP OPTIMIZER ZOO-ARGUMENTS...
model() {
  local name=$1 steps=$2 warmup=$3 optimizer=$4
  shift 4
  local t
  t=$(now)
  zoo_step "$name" "$optimizer" "$@"
  compile "$name" "$steps" "$warmup" "$t"
}

# compile NAME STEPS WARMUP START: WORK/NAME.mlir lowered (to count its
# launch sites and host waits), then compiled and linked into bin/NAME;
# START is when building its step began. GPU_PIPELINE, if set, holds
# options of tofu-gpu-pipeline.
compile() {
  local name=$1 steps=$2 warmup=$3 t=$4
  local options=()
  if [ -n "${GPU_PIPELINE:-}" ]; then
    options=(--gpu-pipeline="$GPU_PIPELINE")
  fi
  "$BUILD/bin/tofu-run" --gpu --gpu-lower-only "$WORK/$name.mlir" \
    "${options[@]}" --steps "$steps" --warmup "$warmup" \
    > "$WORK/$name.low.mlir"
  local lowered
  lowered=$(elapsed "$t")
  t=$(now)
  TOFU_CC=${TOFU_CC:-$CLANG} "$BUILD/bin/tofu-run" --gpu "$WORK/$name.mlir" \
    "${options[@]}" --steps "$steps" --warmup "$warmup" \
    --emit-executable "$STAGE/bin/$name" --executable-rpath '$ORIGIN/../lib'
  local launches syncs
  launches=$(grep -c 'gpu.launch_func' "$WORK/$name.low.mlir" \
    || true)
  syncs=$(grep -c 'llvm.call @mgpuStreamSynchronize' "$WORK/$name.low.mlir" \
    || true)
  echo "gpu-bundle: $name: lowered in ${lowered} s, lowered again, compiled" \
    "and linked by tofu-run --emit-executable in" \
    "$(elapsed "$t") s; $launches launch sites, $syncs stream" \
    "synchronizations in the host code"
}

# check NAME OPTIMIZER ZOO-ARGUMENTS...: a correctness model, with the CPU
# losses of the same driver (3 steps).
check() {
  local name=$1 optimizer=$2
  shift 2
  model "check-$name" 3 1 "$optimizer" "$@"
  "$BUILD/bin/tofu-run" "$WORK/check-$name.mlir" --steps 3 \
    > "$STAGE/ref/check-$name.cpu"
}

# exportcheck NAME EXPORT SIZES...: check of an export's step.
exportcheck() {
  local name=check-$1 t
  shift
  t=$(now)
  export_step "$name" "$@"
  compile "$name" 3 1 "$t"
  "$BUILD/bin/tofu-run" "$WORK/$name.mlir" --steps 3 \
    > "$STAGE/ref/$name.cpu"
}

check mlp "kind=sgd lr=0.05" \
  mlp --layers 2 --hidden 64 --batch 16 --features 32 --classes 10
check wrn "kind=sgd lr=0.05" \
  wresnet --stages 1,1 --image 8 --batch 2 --classes 3
check tf "kind=adam lr=0.01" \
  transformer --layers 1 --hidden 32 --heads 2 --seq 16 --batch 2
check lstm "kind=sgd lr=0.05" \
  rnn --layers 1 --hidden 16 --steps 4 --batch 4 --embed 8
# Rows of 128 (softmax, layer norm) reduced by warps.
GPU_PIPELINE="warp-reductions=true" check tf-warp "kind=adam lr=0.01" \
  transformer --layers 1 --hidden 64 --heads 2 --seq 128 --batch 2
# Adam's update of each weight as one kernel (fusion that keeps results).
GPU_PIPELINE="fuse-keep-results=true" check tf-keep "kind=adam lr=0.01" \
  transformer --layers 1 --hidden 32 --heads 2 --seq 16 --batch 2
# Element-wise kernels with 16-byte loads and stores, then all three
# options that are not yet the default together.
ALL_OPTIONS="warp-reductions=true fuse-keep-results=true vector-loads=true"
GPU_PIPELINE="vector-loads=true" check tf-vector "kind=adam lr=0.01" \
  transformer --layers 1 --hidden 64 --heads 2 --seq 128 --batch 2
GPU_PIPELINE="$ALL_OPTIONS" check tf-all "kind=adam lr=0.01" \
  transformer --layers 1 --hidden 64 --heads 2 --seq 128 --batch 2
# Depthwise and grouped convolutions (cuDNN's group count).
exportcheck mobilenet mobilenet --size batch=2 --size image=16 \
  --size width=25 --size stages=3
exportcheck resnext resnext --size batch=2 --size image=16 \
  --size widths=16,32 --size blocks=1,1 --size groups=2 --size group_width=4

# partition NAME K OPTIMIZER ZOO-ARGUMENTS...: WORK/NAME.mlir, the model's
# step partitioned for K devices.
partition() {
  local name=$1 k=$2 optimizer=$3
  shift 3
  PYTHONPATH="$ROOT/python" "$PYTHON" -m tofu.models "$@" \
    | "$BUILD/bin/tofu-opt" --tofu-autodiff --tofu-optimizer="$optimizer" \
        --tdl-attach \
        --tofu-search="devices=$k report=none plan-out=none svg=none" \
        --tofu-partition -o "$WORK/$name.mlir"
}

# partcheck NAME K OPTIMIZER ZOO-ARGUMENTS...: the model partitioned for K
# devices, as K in-process workers on one GPU, with the CPU workers' losses
# and measured bytes of the same program (3 steps).
partcheck() {
  local name=check-part-$1-w$2 k=$2
  local t
  t=$(now)
  shift 2
  partition "$name" "$k" "$@"
  # The lowering's remarks (zero pads kept as copies) go to a log.
  TOFU_CC=${TOFU_CC:-$CLANG} "$BUILD/bin/tofu-run" --gpu "$WORK/$name.mlir" \
    --steps 3 --workers "$k" --emit-executable "$STAGE/bin/$name" \
    --executable-rpath '$ORIGIN/../lib' 2> "$WORK/$name.gpu.remarks" \
    || { cat "$WORK/$name.gpu.remarks" >&2; exit 1; }
  "$BUILD/bin/tofu-run" "$WORK/$name.mlir" --steps 3 --workers "$k" \
    > "$STAGE/ref/$name.cpu" 2> "$WORK/$name.cpu.remarks"
  echo "gpu-bundle: $name: partitioned, compiled and linked for $k GPU" \
    "workers in $(elapsed "$t") s"
}

for k in 2 4 8; do
  partcheck mlp "$k" "kind=sgd lr=0.05" \
    mlp --layers 2 --hidden 64 --batch 16 --features 32 --classes 10
  partcheck wrn "$k" "kind=sgd lr=0.05" \
    wresnet --stages 1,1 --image 8 --batch 4 --classes 3
  partcheck tf "$k" "kind=adam lr=0.01" \
    transformer --layers 1 --hidden 32 --heads 2 --seq 16 --batch 4
done

if [ "$checksOnly" = 0 ]; then
  # benchmarks/gpu_step.py's ZOO table: 5 warm-up and 20 timed steps.
  model speed-mlp 25 5 "kind=sgd" \
    mlp --batch 512 --hidden 8192 --layers 4
  model speed-bert 25 5 "kind=adam lr=0.0001" \
    transformer --layers 4 --seq 512 --batch 8
  # The BERT slice with Adam's updates fused (one kernel per weight),
  # against speed-bert.
  GPU_PIPELINE="fuse-keep-results=true" model speed-bert-keep 25 5 \
    "kind=adam lr=0.0001" transformer --layers 4 --seq 512 --batch 8
  GPU_PIPELINE="vector-loads=true" model speed-bert-vector 25 5 \
    "kind=adam lr=0.0001" transformer --layers 4 --seq 512 --batch 8
  GPU_PIPELINE="$ALL_OPTIONS" model speed-bert-all 25 5 \
    "kind=adam lr=0.0001" transformer --layers 4 --seq 512 --batch 8
  model speed-wresnet 25 5 "kind=sgd" \
    wresnet --depth 50 --width 4 --batch 32 --image 224
  # The MLP's step as 2 workers on the one GPU, against speed-mlp (k = 1).
  partition speed-part-mlp-w2 2 "kind=sgd" \
    mlp --batch 512 --hidden 8192 --layers 4
  TOFU_CC=${TOFU_CC:-$CLANG} "$BUILD/bin/tofu-run" --gpu \
    "$WORK/speed-part-mlp-w2.mlir" --steps 25 --warmup 5 --workers 2 \
    --emit-executable "$STAGE/bin/speed-part-mlp-w2" \
    --executable-rpath '$ORIGIN/../lib'
  if [ -x "$BUILD/benchmarks/tofu-multifetch-bandwidth" ]; then
    cp "$BUILD/benchmarks/tofu-multifetch-bandwidth" "$STAGE/bin/bench-multifetch"
  fi
fi

# The GPU collectives' test on one rank (unittests/Runtime/GpuCollectivesTest.cpp).
if [ -x "$BUILD/unittests/TofuGpuCollectivesTests" ]; then
  cp "$BUILD/unittests/TofuGpuCollectivesTests" "$STAGE/bin/collectives"
fi

# The runtimes and what they load, except the C library, the compiler's
# libraries and the CUDA libraries (the driver's and PyTorch's there).
cp -L "$BUILD/lib/libtofu_runtime_cpu.so" "$BUILD/lib/libtofu_runtime_cuda.so" \
  "$STAGE/lib/"
for lib in "$BUILD/lib/libtofu_runtime_cpu.so" \
    "$BUILD/lib/libtofu_runtime_cuda.so"; do
  ldd "$lib" | awk '$3 ~ /^\// { print $1, $3 }'
done | sort -u | while read -r soname path; do
  case "$soname" in
    libc.so.*|libm.so.*|libdl.so.*|libpthread.so.*|librt.so.*|ld-linux*) ;;
    libstdc++.so.*|libgcc_s.so.*) ;;
    libcuda.so.*|libcudart.so.*|libcublas*.so.*|libcudnn*.so.*) ;;
    libnccl.so.*) ;;
    *) cp -L "$path" "$STAGE/lib/$soname" ;;
  esac
done

cp "$ROOT/scripts/gpu-bundle/run.sh" "$ROOT/scripts/gpu-bundle/summarize.py" \
  "$ROOT/test/Integration/GPU/Inputs/compare_losses.py" \
  "$ROOT/python/tofu/calltrace.py" "$STAGE/"
cp "$ROOT/benchmarks/gpu_step.py" "$STAGE/torch/"
chmod +x "$STAGE/run.sh"
{
  echo "commit $(git -C "$ROOT" rev-parse HEAD 2>/dev/null || echo unknown)"
  echo "built $(date -u +%Y-%m-%dT%H:%M:%SZ)"
} > "$STAGE/VERSION"

tar -C "$OUT" -cJf "$OUT/bundle.tar.xz" tofu-gpu-bundle
echo "gpu-bundle: $OUT/bundle.tar.xz ($(du -h "$OUT/bundle.tar.xz" | cut -f1))"
