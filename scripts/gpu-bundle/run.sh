#!/bin/bash
# Runs the Tofu GPU bundle on a machine with an NVIDIA GPU, the driver and
# PyTorch (as python3): usage `run.sh LOGDIR`. Every run is wrapped in
# `timeout`, and the whole run has a budget of TOFU_BUNDLE_BUDGET seconds
# (default 300): a run that would start after it is skipped and reported.
# A check may take TOFU_BUNDLE_CHECK_LIMIT seconds (default 60).
#
#  (a) correctness: each check-* executable twice; both must exit 0, print
#      the CPU losses of ref/ within rtol 1e-4, and print bit-identical
#      losses; a partitioned one (check-part-*: K in-process workers on
#      the GPU) must also print the CPU's measured bytes per step. A check that fails is run once more with
#      TOFU_GPU_MEMORY=managed (every buffer in managed memory), which says
#      whether device memory was the cause.
#  (b) speed: each speed-* executable once (median of 20 steps after 5
#      warm-up), then PyTorch eager (FP32, TF32 off) on the same models
#      (torch/gpu_step.py --torch-only), and bench-multifetch (the copy
#      kernel's bandwidth against cuMemcpyPeerAsync).
#  (c) profile: each speed-* executable again with TOFU_GPU_PROFILE=1, which
#      prints the GPU time of every kernel and library call per step
#      (LOG/speed-*.profile.txt; not counted in the status).
#  (d) trace: check-wrn and speed-wresnet twice each with TOFU_GPU_TRACE,
#      which writes the checksums of every cuBLAS and cuDNN call's
#      operands (LOG/NAME.trace.1, .2); calltrace.py says whether the two
#      runs' calls are equal, or the first call where they part and
#      whether its inputs or its result differ (not counted in the status).
#
# The stages run in the order a, b, d, c (the profile last: when the
# budget runs out, it is what is left out). TOFU_BUNDLE_STAGES (default
# abcd) picks the stages, e.g. c for the profile alone. Logs go to LOGDIR; summarize.py prints the table at the end. Exit
# status:
# 0 when every check passed and every speed run measured its step, 1
# otherwise, 2 without a GPU.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
if [ $# -ne 1 ]; then
  echo "usage: run.sh LOGDIR" >&2
  exit 2
fi
mkdir -p "$1"
LOG=$(cd "$1" && pwd)
BUDGET=${TOFU_BUNDLE_BUDGET:-300}
STAGES=${TOFU_BUNDLE_STAGES:-abcd}
CHECK_LIMIT=${TOFU_BUNDLE_CHECK_LIMIT:-60}
START=$(date +%s)
PYTHON=${PYTHON:-python3}

echo "tofu gpu bundle: $(tr '\n' ' ' < "$HERE/VERSION")"
if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "run.sh: no NVIDIA GPU: nvidia-smi is not installed (no NVIDIA" \
    "driver); nothing was run"
  exit 2
fi
if ! nvidia-smi -L > "$LOG/nvidia-smi-L.txt" 2>&1 \
    || ! grep -q "^GPU" "$LOG/nvidia-smi-L.txt"; then
  echo "run.sh: no NVIDIA GPU: \`nvidia-smi -L\` lists none; nothing was run"
  exit 2
fi
exec > >(tee "$LOG/run.txt") 2>&1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
  | head -1 > "$LOG/device.txt"
echo "device: $(cat "$LOG/device.txt")"

# The CUDA libraries come with PyTorch (site-packages/nvidia/*/lib), the
# driver's libcuda.so.1 from the system or /usr/local/nvidia/lib64.
libs=$HERE/lib
for dir in $("$PYTHON" -c 'import nvidia; print(" ".join(nvidia.__path__))' \
    2>/dev/null); do
  for sub in cu13/lib cudnn/lib cublas/lib cuda_runtime/lib nccl/lib; do
    if [ -d "$dir/$sub" ]; then libs=$libs:$dir/$sub; fi
  done
done
if [ -d /usr/local/nvidia/lib64 ]; then libs=$libs:/usr/local/nvidia/lib64; fi
export LD_LIBRARY_PATH=$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"

# run NAME TAG LIMIT [VAR=VALUE...]: runs bin/NAME with at most LIMIT
# seconds (less when the budget is nearly spent) into LOG/NAME.TAG.txt and
# its exit status into LOG/NAME.TAG.rc (124: timed out; "skipped").
run() {
  local name=$1 tag=$2 limit=$3
  shift 3
  local left=$((BUDGET - ($(date +%s) - START)))
  if [ "$left" -lt 10 ]; then
    echo "skipped" > "$LOG/$name.$tag.rc"
    echo "$name ($tag): skipped, the ${BUDGET} s budget is spent"
    return 1
  fi
  if [ "$limit" -gt "$left" ]; then limit=$left; fi
  local t0
  t0=$(date +%s)
  env "$@" timeout -k 5 "$limit" "$HERE/bin/$name" > "$LOG/$name.$tag.txt" 2>&1
  local rc=$?
  echo "$rc" > "$LOG/$name.$tag.rc"
  echo "$name ($tag): exit $rc in $(($(date +%s) - t0)) s"
  tail -n 3 "$LOG/$name.$tag.txt" | sed 's/^/  | /'
  return "$rc"
}

# The losses without the throughput that follows them.
losses() { grep -oE '^step [0-9]+: loss [^ ]+' "$1"; }

failed=0
# stage X: whether TOFU_BUNDLE_STAGES holds X.
stage() { case "$STAGES" in *"$1"*) return 0 ;; *) return 1 ;; esac; }

stage a && echo "== (a) correctness: 3 steps against the CPU losses, twice"
for exe in "$HERE"/bin/check-*; do
  stage a || break
  name=$(basename "$exe")
  ok=1
  # A run that timed out is not repeated: a hang would only spend the
  # budget again.
  run "$name" 1 "$CHECK_LIMIT" || ok=0
  if [ "$(cat "$LOG/$name.1.rc")" = 124 ]; then
    echo "$name: FAILED: timed out after $CHECK_LIMIT s; not run again"
    echo "FAIL" > "$LOG/$name.result"
    failed=1
    continue
  fi
  run "$name" 2 "$CHECK_LIMIT" || ok=0
  if [ "$ok" = 1 ]; then
    if "$PYTHON" "$HERE/compare_losses.py" "$HERE/ref/$name.cpu" \
        "$LOG/$name.1.txt" 1e-4 > "$LOG/$name.compare.txt"; then
      echo "$name: $(cat "$LOG/$name.compare.txt")"
    else
      echo "$name: FAILED: $(cat "$LOG/$name.compare.txt")"
      ok=0
    fi
    bytes=$(grep "^measured bytes" "$HERE/ref/$name.cpu")
    if [ -n "$bytes" ]; then
      if [ "$(grep "^measured bytes" "$LOG/$name.1.txt")" = "$bytes" ]; then
        echo "$name: the CPU's $bytes"
      else
        echo "$name: FAILED: the measured bytes differ from the CPU's" \
          "($bytes)"
        ok=0
      fi
    fi
    if diff <(losses "$LOG/$name.1.txt") <(losses "$LOG/$name.2.txt") \
        > "$LOG/$name.determinism.txt"; then
      echo "$name: two runs print bit-identical losses"
    else
      echo "$name: FAILED: the two runs' losses differ" \
        "($LOG/$name.determinism.txt)"
      ok=0
    fi
  else
    run "$name" managed "$CHECK_LIMIT" TOFU_GPU_MEMORY=managed \
      && echo "$name: runs with TOFU_GPU_MEMORY=managed (every buffer managed)"
  fi
  if [ "$ok" = 1 ]; then echo "pass" > "$LOG/$name.result"; else
    echo "FAIL" > "$LOG/$name.result"; failed=1; fi
done

# The GPU collectives on one rank (NCCL, the copy kernel): a gtest binary
# that loads the bundle's CUDA runtime; a skipped test is a failure here.
if stage a && [ -e "$HERE/bin/collectives" ]; then
  echo "== (a) the GPU collectives on one rank"
  if run collectives 1 60 TOFU_CUDA_RUNTIME="$HERE/lib/libtofu_runtime_cuda.so" \
      && ! grep -q SKIPPED "$LOG/collectives.1.txt"; then
    echo "collectives: pass"
  else
    echo "collectives: FAILED ($LOG/collectives.1.txt)"
    failed=1
  fi
fi

stage b && echo "== (b) speed: median of 20 steps after 5 warm-up"
for exe in "$HERE"/bin/speed-*; do
  stage b || break
  [ -e "$exe" ] || continue
  name=$(basename "$exe")
  run "$name" 1 150 || failed=1
done
if stage b && [ -e "$HERE/bin/bench-multifetch" ]; then
  run bench-multifetch 1 60 || failed=1
  grep -E "GB/s" "$LOG/bench-multifetch.1.txt" | sed 's/^/  | /'
fi
left=$((BUDGET - ($(date +%s) - START)))
if ! stage b; then
  :
elif [ "$left" -ge 30 ]; then
  echo "PyTorch eager (FP32, TF32 off), ${left} s left"
  timeout -k 5 "$left" "$PYTHON" "$HERE/torch/gpu_step.py" --torch-only \
    --steps 20 --warmup 5 --json "$LOG/torch.json" > "$LOG/torch.txt" 2>&1
  echo "torch: exit $?"
  tail -n 4 "$LOG/torch.txt" | sed 's/^/  | /'
else
  echo "PyTorch: skipped, the ${BUDGET} s budget is spent"
fi

stage d && echo "== (d) trace: two runs' library calls, checksum by checksum"
for name in check-wrn speed-wresnet; do
  stage d || break
  [ -e "$HERE/bin/$name" ] || continue
  run "$name" trace1 150 TOFU_GPU_TRACE="$LOG/$name.trace.1" || continue
  run "$name" trace2 150 TOFU_GPU_TRACE="$LOG/$name.trace.2" || continue
  "$PYTHON" "$HERE/calltrace.py" "$LOG/$name.trace.1" "$LOG/$name.trace.2" \
    > "$LOG/$name.calltrace.txt" 2>&1
  echo "$name: $(cat "$LOG/$name.calltrace.txt")"
  if diff <(losses "$LOG/$name.trace1.txt") <(losses "$LOG/$name.trace2.txt") \
      > /dev/null; then
    echo "$name: the traced runs print bit-identical losses"
  else
    echo "$name: the traced runs' losses differ"
  fi
done

stage c && echo "== (c) profile: the time of each kernel and library call" \
  "(CUDA events)"
for exe in "$HERE"/bin/speed-*; do
  stage c || break
  [ -e "$exe" ] || continue
  name=$(basename "$exe")
  if run "$name" profile 150 TOFU_GPU_PROFILE=1; then
    grep -E '^gpu profile:   [a-zA-Z]' "$LOG/$name.profile.txt" \
      | sed 's/^/  | /'
  fi
done

"$PYTHON" "$HERE/summarize.py" "$LOG" | tee "$LOG/summary.txt"
[ "${PIPESTATUS[0]}" = 0 ] || failed=1
echo "run.sh: $(( $(date +%s) - START )) s; exit $failed"
exit "$failed"
