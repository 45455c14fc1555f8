#!/bin/sh
# Stands in for tofu-run in fuzz-run.test: misbehaves on some options.
for arg in "$@"; do
  case "$arg" in
    --seed=0) kill -ABRT $$ ;;
    --threads=0) echo "tofu-run: something" >&2; exit 2 ;;
    --warmup=5) exit 1 ;;
    --int-bound=0) echo "LLVM ERROR: out of memory" >&2; exit 1 ;;
  esac
done
echo "tofu-run: a message" >&2
exit 1
